//! `sealmark run`.

use crate::args::{Format, Profile, RunArgs};
use crate::{exit, usage_error};
use sealmark_engine::compare::compare;
use sealmark_engine::config::{self, Config};
use sealmark_engine::grading::{Letter, meets_gate};
use sealmark_engine::model::Pack;
use sealmark_engine::record::{PackStatus, Record, SavedRecordError, read_baseline, read_saved};
use sealmark_engine::registry::did_you_mean;
use sealmark_engine::render;
use sealmark_engine::run::{RunOptions, run as run_server};
use sealmark_engine::text::visible;
use std::io::IsTerminal;
use std::path::Path;

pub fn run(args: RunArgs) -> u8 {
    let Some(gate) = Letter::parse(&args.fail_under) else {
        return usage_error(format!("--fail-under: expected A, B, C, D or F, found \"{}\"", args.fail_under));
    };
    if args.out.is_some() && args.format.len() > 1 {
        return usage_error("--out takes one format; with several, use --out-dir DIR");
    }
    if args.format.contains(&Format::Html) {
        if args.out.is_some() {
            return usage_error("--format html writes a folder: use --out-dir DIR instead of --out");
        }
        if let Some(why) = crate::publish::unavailable() {
            return usage_error(why);
        }
    }
    if let Some(out) = &args.out
        && let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return usage_error(format!("--out: the directory {} does not exist", parent.display()));
    }
    if let Some(out) = &args.out
        && out.is_dir()
    {
        return usage_error(format!("--out: {} is a directory; use --out-dir for a folder of reports", out.display()));
    }
    let baseline = match &args.baseline {
        Some(path) => match load_baseline(path) {
            Ok(r) => Some(r),
            Err(code) => return code,
        },
        None => None,
    };
    let record = match &args.replay {
        Some(path) => match load_record(path) {
            Ok(mut r) => {
                replay(&mut r);
                r
            }
            Err(code) => return code,
        },
        None => match live(&args) {
            Ok(r) => r,
            Err(code) => return code,
        },
    };
    if let Err(code) = write_reports(&args, &record) {
        return code;
    }
    let mut code = gate_code(&record, gate, args.profile == Some(Profile::Ci));
    if let Some(base) = &baseline {
        let comparison = compare(base, &record);
        eprint!("{}", comparison.render());
        if !comparison.regressions.is_empty() {
            eprintln!("sealmark: {} regression(s) against the baseline", comparison.regressions.len());
            code = code.max(exit::BELOW_GATE);
        }
    }
    code
}

/// A saved record judged again by this build: from its observations when it carries
/// them (saying on stderr which verdicts differ), else re-graded from its stored
/// verdicts. Either way the grades are this build's formula.
fn replay(record: &mut Record) {
    use sealmark_engine::rederive::{Agreement, rederive, rejudge};
    match rederive(record) {
        Ok(rederived) => {
            let differ: Vec<_> = rederived.iter().filter(|r| r.agreement != Agreement::Same).collect();
            eprintln!(
                "sealmark: replay re-judged {} check(s) from the record's observations; {} differ from the stored result",
                rederived.len(),
                differ.len()
            );
            for r in differ {
                eprintln!("  {}", visible(&r.describe()));
            }
            rejudge(record, &rederived);
        }
        Err(why) => {
            eprintln!("sealmark: replay re-graded the stored verdicts: {why}");
            sealmark_engine::assemble::regrade(record);
        }
    }
}

/// Starts the server, runs every pack, and returns the record.
fn live(args: &RunArgs) -> Result<Record, u8> {
    let mut config = load_config(args.config.as_deref(), &args.command)?;
    if !args.packs.is_empty() {
        let mut packs = Vec::new();
        for name in &args.packs {
            match Pack::from_id(name) {
                Some(p) => packs.push(p),
                None => {
                    let hint = did_you_mean(name, Pack::ALL.iter().map(|p| p.id()))
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    return Err(usage_error(format!("--pack: unknown pack \"{name}\"{hint}")));
                }
            }
        }
        config.packs = Some(packs);
    }
    if args.upstream {
        if !config.server_mentions("{upstream}") {
            return Err(usage_error(
                "--upstream: the stub would be unused; put {upstream} where the server reads its backend address",
            ));
        }
        config.upstream.kind = Some("http".to_string());
    }
    let (identity_a, identity_b) = identities(args, &config)?;
    let options = RunOptions {
        keep_sandbox: args.keep_sandbox,
        db: sealmark_engine::targets::db::DbOptions { pg: args.pg.clone(), no_embedded: args.no_embedded },
        identity_a,
        identity_b,
        active: args.active,
    };
    for warning in config.paths_outside_sandbox() {
        eprintln!("sealmark: warning: {warning}");
    }
    eprintln!("sealmark: running {}", describe_target(&config));
    let record = match crate::interrupt::run_to_end(run_server(&config, &options))? {
        Err(e) => return Err(usage_error(e)),
        Ok(out) => {
            if let Some(dir) = &out.kept_sandbox {
                eprintln!("sealmark: the sandbox was kept at {}", dir.display());
            }
            out.record
        }
    };
    for c in record.checks.iter().filter(|c| c.critical && c.verdict == sealmark_engine::model::Verdict::Part) {
        eprintln!("sealmark: critical part: {} — {}", c.id, c.summary);
    }
    if !record.sandbox.leftover_processes.is_empty() {
        eprintln!("sealmark: the server left processes behind: {}", record.sandbox.leftover_processes.join(", "));
    }
    Ok(record)
}

/// Writes the record in every format asked for: one to stdout or --out, several (or
/// any with --out-dir) as files, with the grades on the console.
fn write_reports(args: &RunArgs, record: &Record) -> Result<(), u8> {
    let mut formats: Vec<Format> = Vec::new();
    for f in &args.format {
        if !formats.contains(f) {
            formats.push(*f);
        }
    }
    let to_files = formats.len() > 1 || args.out_dir.is_some() || formats.contains(&Format::Html);
    if !to_files {
        let report = render_format(formats[0], record, args.verbose);
        match &args.out {
            Some(path) => {
                if let Err(e) = write_atomically(path, &report) {
                    return Err(usage_error(format!("cannot write {}: {e}", path.display())));
                }
                eprintln!("sealmark: report written to {}", path.display());
                print_grades(record);
            }
            None => {
                print!("{report}");
                // A report that does not go to the console leaves the grades there.
                if !std::io::stdout().is_terminal() {
                    print_grades(record);
                }
            }
        }
    } else {
        let dir = args.out_dir.clone().unwrap_or_else(|| "sealmark-report".into());
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Err(usage_error(format!("cannot create {}: {e}", dir.display())));
        }
        for f in &formats {
            let files = match f {
                Format::Html => crate::publish::files(record),
                _ => vec![(f.file_name(), render_format(*f, record, args.verbose).into_bytes())],
            };
            for (name, content) in files {
                let path = dir.join(name);
                if let Err(e) = write_atomically(&path, &content) {
                    return Err(usage_error(format!("cannot write {}: {e}", path.display())));
                }
            }
            eprintln!("sealmark: wrote {}", dir.join(f.file_name()).display());
        }
        print_grades(record);
    }
    Ok(())
}

/// The config: the quick form from a command after `--`, else the file (default
/// ./sealmark.yaml). Problems are printed; the error is the exit code.
pub fn load_config(file: Option<&Path>, command: &[String]) -> Result<Config, u8> {
    if let Some((cmd, rest)) = command.split_first() {
        if file.is_some() {
            return Err(usage_error("give either --config or a command after --, not both"));
        }
        let config = Config::quick(cmd, rest);
        if let Some((key, message)) = config.placeholder_problems().into_iter().next() {
            return Err(usage_error(format!("the command after --: {key}: {message}")));
        }
        return Ok(config);
    }
    let path = file.map_or_else(|| std::path::PathBuf::from("sealmark.yaml"), Path::to_path_buf);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if file.is_none() && e.kind() == std::io::ErrorKind::NotFound => {
            return Err(usage_error(
                "no sealmark.yaml here; pass --config FILE, or the server after --: sealmark run -- ./my-server",
            ));
        }
        Err(e) => return Err(usage_error(format!("cannot read {}: {e}", path.display()))),
    };
    config::parse(&path.display().to_string(), &text).map_err(|e| {
        eprintln!("{e}");
        eprintln!("sealmark: error: {} problem(s) in {}; nothing was run", e.problems.len(), path.display());
        exit::USAGE
    })
}

/// The callers' tokens: each `${VARIABLE}` of --identity-a/-b or identities.a/b read from
/// the environment. Both or neither: a server that refuses minted tokens refuses both.
fn identities(args: &RunArgs, config: &Config) -> Result<(Option<String>, Option<String>), u8> {
    let file = config.file.clone().unwrap_or_else(|| "sealmark.yaml".to_string());
    let ids = &config.identities;
    let mut out = [None, None];
    let given = [
        (args.identity_a.as_ref(), ids.a.as_ref(), ids.lines.0, "a"),
        (args.identity_b.as_ref(), ids.b.as_ref(), ids.lines.1, "b"),
    ];
    for (slot, (flag, key, line, who)) in out.iter_mut().zip(given) {
        let (text, place) = match (flag, key) {
            (Some(f), _) => (f, format!("--identity-{who}")),
            (None, Some(k)) => (k, format!("{file}:{line}: identities.{who}")),
            (None, None) => continue,
        };
        let Some(name) = config::env_reference(text) else {
            return Err(usage_error(format!(
                "{place}: write the token as '${{VARIABLE}}' (single-quoted), so it is read from the environment, not from the command line"
            )));
        };
        match std::env::var(name) {
            Ok(v) if !v.is_empty() => *slot = Some(v),
            _ => return Err(usage_error(format!("{place}: the environment variable {name} is not set"))),
        }
    }
    let [a, b] = out;
    if a.is_some() != b.is_some() {
        return Err(usage_error("identities: give both a and b (each caller needs its own token), or neither"));
    }
    if a.is_some() && !config.server.headers.values().any(|h| h.contains("{bearer}")) {
        return Err(usage_error(
            "--identity-a/-b: no server.headers value holds {bearer}, so the tokens would be unused",
        ));
    }
    if a.is_some() && a == b {
        return Err(usage_error("identities: a and b hold the same token; the callers must differ"));
    }
    Ok((a, b))
}

/// One format of the record.
fn render_format(format: Format, record: &Record, verbosity: u8) -> String {
    match format {
        Format::Text => render::text::render_with(record, verbosity),
        Format::Json => render::json(record),
        Format::Markdown => render::markdown::render(record),
        Format::Junit => render::junit::render(record),
        Format::Sarif => render::sarif::render(record),
        Format::Summary => render::markdown::summary(record),
        Format::Badge => render::badge::svg(record),
        Format::Shields => render::badge::shields(record),
        Format::Html => unreachable!("html is a folder, written by publish::files"),
    }
}

fn describe_target(config: &Config) -> String {
    match (&config.server.url, &config.server.command) {
        (Some(url), _) => sealmark_engine::text::without_userinfo(url),
        (None, Some(cmd)) => cmd.clone(),
        (None, None) => String::new(),
    }
}

/// Writes a report or config without ever leaving half of it: a new path or a regular
/// file is replaced by renaming a finished temporary file over it. Anything else that
/// exists (a FIFO, a device, `/dev/stdout`, a symlink) is written in place, because
/// renaming over it would replace the device or link with a plain file. A directory is
/// refused.
pub fn write_atomically(path: &Path, text: impl AsRef<[u8]>) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Ok(_) => {
            if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                return Err(std::io::Error::other("it is a directory"));
            }
            let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(path)?;
            return f.write_all(text.as_ref()).and_then(|()| f.flush());
        }
        Err(e) => return Err(e),
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = dir.join(format!(".{}.sealmark-tmp", path.file_name().and_then(|n| n.to_str()).unwrap_or("report")));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn print_grades(record: &Record) {
    for pack in Pack::ALL {
        if let Some(p) = record.packs.get(pack.id())
            && let Some(g) = &p.grade
        {
            eprintln!("  {:8} GRADE {}  ({})", pack.id(), g.display_letter(), g.fraction());
        }
    }
}

/// A saved record: refused with the file, line and column when it is not one, and when
/// it comes from another methodology or a newer record version.
fn load_record(path: &Path) -> Result<Record, u8> {
    load_with(path, read_saved)
}

/// A baseline: read as a saved record is, but one of another methodology is compared
/// (with a note), not refused.
fn load_baseline(path: &Path) -> Result<Record, u8> {
    load_with(path, read_baseline)
}

fn load_with(path: &Path, read: fn(&str) -> Result<Record, SavedRecordError>) -> Result<Record, u8> {
    let text =
        std::fs::read_to_string(path).map_err(|e| usage_error(format!("cannot read {}: {e}", path.display())))?;
    read(&text).map_err(|e| match e {
        SavedRecordError::NotARecord { .. } => usage_error(format!("{}:{e}", path.display())),
        _ => usage_error(format!("{}: {e}", path.display())),
    })
}

/// The exit code: 1 when a graded pack is below the gate, or (profile ci) a pack that
/// ran could not be graded; else 0.
fn gate_code(record: &Record, gate: Letter, ci: bool) -> u8 {
    let mut graded = 0;
    let mut below = Vec::new();
    for (id, p) in &record.packs {
        if ci && p.status == PackStatus::Inconclusive {
            below.push(format!("{id} inconclusive (profile ci)"));
            continue;
        }
        if p.status != PackStatus::Graded {
            continue;
        }
        graded += 1;
        if let Some(g) = &p.grade
            && !meets_gate(g, gate)
        {
            below.push(format!("{id} {}", g.display_letter()));
        }
    }
    if graded == 0 {
        eprintln!("sealmark: no pack was graded; see the report for the reasons");
    }
    if below.is_empty() {
        exit::OK
    } else {
        eprintln!("sealmark: below the {gate} gate: {}", below.join(", "));
        exit::BELOW_GATE
    }
}
