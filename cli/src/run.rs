//! `sealmark run`.

use crate::args::{Format, Profile, RunArgs};
use crate::several::Planned;
use crate::{exit, usage_error};
use sealmark_engine::combined::{Combined, Saved, Shard, read_any, read_any_baseline};
use sealmark_engine::compare::compare;
use sealmark_engine::config::{self, Config};
use sealmark_engine::grading::{Letter, meets_gate};
use sealmark_engine::model::Pack;
use sealmark_engine::record::{PackStatus, Record, SavedRecordError};
use sealmark_engine::registry::did_you_mean_hint;
use sealmark_engine::render;
use sealmark_engine::run::{RunOptions, run as run_server};
use std::io::IsTerminal;
use std::path::Path;

pub fn run(args: RunArgs) -> u8 {
    let Some(gate) = Letter::parse(&args.fail_under) else {
        return usage_error(format!("--fail-under: expected A, B, C, D or F, found \"{}\"", args.fail_under));
    };
    if args.out.is_some() && args.format.len() > 1 {
        return usage_error("--out takes one format; with several, use --out-dir DIR");
    }
    if args.format.contains(&Format::Html) && args.out.is_some() {
        return usage_error("--format html writes a folder: use --out-dir DIR instead of --out");
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
        Some(path) => match load_with(path, read_any_baseline) {
            Ok(r) => Some(r),
            Err(code) => return code,
        },
        None => None,
    };
    let mut distrusted = false;
    let saved = match &args.replay {
        Some(path) => match load_with(path, read_any) {
            Ok(mut saved) => {
                distrusted = replay(&mut saved);
                saved
            }
            Err(code) => return code,
        },
        None => match live(&args) {
            Ok(r) => r,
            Err(code) => return code,
        },
    };
    if let Err(code) = write_reports(&args, &saved) {
        return code;
    }
    let ci = args.profile == Some(Profile::Ci);
    let mut code = match &saved {
        Saved::One(record) => gate_code(record, gate, ci, ""),
        Saved::Several(c) => several_gate_code(c, gate, ci),
    };
    if distrusted && args.strict {
        say!("sealmark: --strict: the record's stored results are not all what its checks give");
        code = code.max(exit::BELOW_GATE);
    }
    if let Some(base) = &baseline {
        match compare_saved(base, &saved) {
            Ok(regressions) if regressions > 0 => {
                say!("sealmark: {regressions} regression(s) against the baseline");
                code = code.max(exit::BELOW_GATE);
            }
            Ok(_) => {}
            Err(why) => return usage_error(why),
        }
    }
    code
}

/// Prints the comparison with the baseline and returns how many verdicts got worse. A
/// run of several is compared server by server, by name.
fn compare_saved(base: &Saved, now: &Saved) -> Result<usize, String> {
    match (base, now) {
        (Saved::One(base), Saved::One(now)) => {
            let comparison = compare(base, now);
            eprint!("{}", comparison.render());
            Ok(comparison.regressions.len())
        }
        (Saved::Several(base), Saved::Several(now)) => {
            let mut regressions = 0;
            for (name, record) in now.records() {
                match base.entry(name).and_then(|e| e.record.as_ref()) {
                    Some(before) => {
                        let comparison = compare(before, record);
                        say!("== {name} ==");
                        eprint!("{}", comparison.render());
                        regressions += comparison.regressions.len();
                    }
                    None => say!("== {name} ==\nnot in the baseline: nothing to compare"),
                }
            }
            for (name, _) in base.records().filter(|(name, _)| now.entry(name).is_none()) {
                say!("== {name} ==\nin the baseline, not in this run");
            }
            Ok(regressions)
        }
        (Saved::One(_), Saved::Several(_)) => {
            Err("--baseline: this is a run of several servers and the baseline one server's record; give the combined record of an earlier run".to_string())
        }
        (Saved::Several(_), Saved::One(_)) => {
            Err("--baseline: the baseline is a combined record of several servers; compare one server with its own record (DIR/NAME/sealmark-report.json)".to_string())
        }
    }
}

/// Saved records judged again by this build (`rederive::replay`): re-judged from their
/// observations when they carry them, else re-graded from their stored verdicts, and
/// graded by this build's formula either way. What differs is said on stderr (and in
/// the record, so in every format); returns whether anything did.
fn replay(saved: &mut Saved) -> bool {
    let mut differs = false;
    let mut one = |record: &mut Record, label: &str| {
        *record = sealmark_engine::rederive::replay(record).record;
        let found = record.replay.as_ref().expect("a replay says what it found");
        differs |= found.differs();
        let mut lines = found.lines().into_iter();
        if let Some(head) = lines.next() {
            say!("sealmark: {label}{head}");
        }
        for line in lines {
            say!("  {line}");
        }
    };
    match saved {
        Saved::One(record) => one(record, ""),
        Saved::Several(c) => {
            for e in &mut c.servers {
                if let Some(record) = &mut e.record {
                    one(record, &format!("{}: ", e.name));
                }
            }
        }
    }
    differs
}

/// Starts the server (or, for a config with servers:, each of them), runs every pack,
/// and returns the record.
fn live(args: &RunArgs) -> Result<Saved, u8> {
    let config = match &args.from {
        Some(file) => load_from(file)?,
        None => load_config(args.config.as_deref(), &args.command)?,
    };
    if !config.servers.is_empty() && args.server.is_none() {
        return several(args, &config).map(Saved::Several);
    }
    if args.shard.is_some() {
        return Err(usage_error("--shard: this config declares one server (server:); shards split a servers: list"));
    }
    let config = match &args.server {
        Some(_) if config.file.is_none() => {
            return Err(usage_error("--server picks one of a config's servers:; the command after -- is one server"));
        }
        Some(name) => config.select(name).map_err(|why| usage_error(format!("--server: {why}")))?,
        None => config,
    };
    let (config, options) = prepare(args, config)?;
    for warning in config.paths_outside_sandbox() {
        say!("sealmark: warning: {warning}");
    }
    say!("sealmark: running {}", describe_target(&config));
    let progress = crate::terminal::Progress::of_run(args.quiet);
    let outcome = crate::interrupt::run_to_end(run_server(&config, &options));
    drop(progress);
    let record = match outcome? {
        Err(e) => return Err(usage_error(e)),
        Ok(out) => {
            if let Some(dir) = &out.kept_sandbox {
                say!("sealmark: the sandbox was kept at {}", dir.display());
            }
            out.record
        }
    };
    for c in record.checks.iter().filter(|c| c.critical && c.verdict == sealmark_engine::model::Verdict::Part) {
        say!("sealmark: critical part: {} — {}", c.id, c.summary);
    }
    if !record.sandbox.leftover_processes.is_empty() {
        say!("sealmark: the server left processes behind: {}", record.sandbox.leftover_processes.join(", "));
    }
    Ok(Saved::One(Box::new(record)))
}

/// The command line applied to one server's config: the pack list, the stub, the
/// callers' tokens. Problems are printed; the error is the exit code.
fn prepare(args: &RunArgs, mut config: Config) -> Result<(Config, RunOptions), u8> {
    if !args.packs.is_empty() {
        let mut packs = Vec::new();
        for name in &args.packs {
            match Pack::from_id(name) {
                Some(p) => packs.push(p),
                None => {
                    let hint = did_you_mean_hint(name, Pack::ALL.iter().map(|p| p.id()));
                    return Err(usage_error(format!("--pack: unknown pack \"{name}\"{hint}")));
                }
            }
        }
        config.packs = Some(packs);
    }
    if args.upstream {
        if !config.server_mentions("{upstream}") {
            return Err(usage_error(format!(
                "--upstream: the stub would be unused by {}; put {{upstream}} where the server reads its backend address",
                config.server.key()
            )));
        }
        config.upstream.kind = Some("http".to_string());
    }
    let file = config.file_name();
    for (key, name) in config.env_references() {
        if std::env::var(&name).map_or(true, |v| v.is_empty()) {
            return Err(usage_error(format!("{file}: {key}: the environment variable {name} is not set")));
        }
    }
    let (identity_a, identity_b) = identities(args, &config)?;
    let options = RunOptions {
        keep_sandbox: args.keep_sandbox,
        db: sealmark_engine::targets::db::DbOptions { pg: args.pg.clone(), no_embedded: args.no_embedded },
        identity_a,
        identity_b,
        active: args.active,
        no_package_caches: args.no_package_caches,
    };
    Ok((config, options))
}

/// A run of several: the servers of `servers:` (one shard of them with --shard), each in
/// its own process, combined in the config's order.
fn several(args: &RunArgs, config: &Config) -> Result<Combined, u8> {
    refuse_badges(args)?;
    if args.pg.is_some() && args.jobs > 1 {
        return Err(usage_error(
            "--pg with --jobs above 1: every run seeds the same database (sealmark_seed) of that Postgres, so they would share it; use --jobs 1, or let each run start its own embedded Postgres",
        ));
    }
    let shard = match args.shard.as_deref().map(Shard::parse).transpose() {
        Ok(s) => s,
        Err(why) => return Err(usage_error(format!("--shard: {why}"))),
    };
    // Each run would refuse a bad flag alike; say it once, before any starts.
    for each in config.each() {
        prepare(args, each)?;
    }
    let plan: Vec<Planned> = config
        .servers
        .iter()
        .enumerate()
        .filter(|(i, _)| shard.is_none_or(|s| s.takes(*i)))
        .map(|(index, s)| Planned { index, name: s.name.clone() })
        .collect();
    let file = config.file_name();
    let declared = config.servers.len();
    match shard {
        Some(s) => say!("sealmark: shard {s} runs {} of the {declared} servers of {file}", plan.len()),
        None => say!("sealmark: running the {declared} servers of {file}"),
    }
    let path = args.config.clone().unwrap_or_else(|| "sealmark.yaml".into());
    let entries = crate::several::run_all(args, &path, &plan, usize::from(args.jobs))?;
    Ok(Combined::new(config.file.clone(), declared, shard.map(|s| s.to_string()), entries))
}

/// Badge and shields stand for one server's grade.
fn refuse_badges(args: &RunArgs) -> Result<(), u8> {
    if args.format.iter().any(|f| matches!(f, Format::Badge | Format::Shields)) {
        return Err(usage_error(format!("--format badge/shields: {}", render::combined::NO_BADGE)));
    }
    Ok(())
}

/// Writes the record in every format asked for: one to stdout or --out, several (or
/// any with --out-dir) as files, with the grades on the console. A run of several also
/// writes each server's record, and its report in each format, into DIR/NAME/.
fn write_reports(args: &RunArgs, saved: &Saved) -> Result<(), u8> {
    let mut formats: Vec<Format> = Vec::new();
    for f in &args.format {
        if !formats.contains(f) {
            formats.push(*f);
        }
    }
    if matches!(saved, Saved::Several(_)) {
        refuse_badges(args)?;
    }
    let to_files = formats.len() > 1 || args.out_dir.is_some() || formats.contains(&Format::Html);
    if !to_files {
        let report = render_format(formats[0], saved, args.verbose);
        match &args.out {
            Some(path) => {
                write_file(path, &report)?;
                say!("sealmark: report written to {}", path.display());
                print_grades(saved);
            }
            None => {
                if formats[0] == Format::Text && crate::terminal::colour_wanted(args.color) {
                    print!("{}", crate::terminal::coloured(&report));
                } else {
                    print!("{report}");
                }
                // A report that does not go to the console leaves the grades there.
                if !std::io::stdout().is_terminal() {
                    print_grades(saved);
                }
            }
        }
        return Ok(());
    }
    let dir = args.out_dir.clone().unwrap_or_else(|| "sealmark-report".into());
    create_dir(&dir)?;
    for f in &formats {
        let files = match (f, saved) {
            (Format::Html, Saved::One(record)) => crate::publish::files(record),
            (Format::Html, Saved::Several(c)) => crate::publish::combined_files(c),
            _ => vec![(f.file_name(), render_format(*f, saved, args.verbose).into_bytes())],
        };
        for (name, content) in files {
            write_file(&dir.join(name), &content)?;
        }
        say!("sealmark: wrote {}", dir.join(f.file_name()).display());
    }
    if let Saved::Several(c) = saved {
        for (name, record) in c.records() {
            let own = dir.join(name);
            create_dir(&own)?;
            let one = Saved::One(Box::new(record.clone()));
            let mut theirs: Vec<Format> = formats.iter().copied().filter(|f| *f != Format::Html).collect();
            if !theirs.contains(&Format::Json) {
                theirs.push(Format::Json);
            }
            for f in theirs {
                write_file(&own.join(f.file_name()), render_format(f, &one, args.verbose))?;
            }
        }
        say!("sealmark: wrote each server's record and reports into {}", dir.join("NAME").display());
    }
    print_grades(saved);
    Ok(())
}

fn create_dir(dir: &Path) -> Result<(), u8> {
    std::fs::create_dir_all(dir).map_err(|e| usage_error(format!("cannot create {}: {e}", dir.display())))
}

fn write_file(path: &Path, content: impl AsRef<[u8]>) -> Result<(), u8> {
    write_atomically(path, content).map_err(|e| usage_error(format!("cannot write {}: {e}", path.display())))
}

/// The config: the quick form from a command after `--`, else the file (default
/// ./sealmark.yaml). Problems are printed; the error is the exit code.
pub fn load_config(file: Option<&Path>, command: &[String]) -> Result<Config, u8> {
    if let Some((cmd, rest)) = command.split_first() {
        if file.is_some() {
            return Err(usage_error("give either --config or a command after --, not both"));
        }
        let config = Config::quick(cmd, rest);
        hide_credentials(&config);
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
    let shown = path.display().to_string();
    let refuse = |e: config::ConfigError| {
        say!("{e}");
        say!("sealmark: error: {} problem(s) in {shown}; nothing was run", e.problems.len());
        exit::USAGE
    };
    let (config, mut problems) = config::parse_all(&shown, &text).map_err(refuse)?;
    hide_credentials(&config);
    if problems.is_empty() {
        return Ok(config);
    }
    // What the tool list refutes is reported with what the file refutes as written, so
    // one run shows every problem: the server is started and its tools listed, and no
    // tool is called.
    if config.has_tool_entries() {
        if config::only_tool_entries(&problems) {
            match tool_problems(&config) {
                Ok(more) => problems.extend(more),
                Err(why) => say!("sealmark: {why}"),
            }
        } else {
            say!(
                "sealmark: probes, sql_tools, classify and scope.tools are checked against the server's tools once the rest of {shown} is sound"
            );
        }
    }
    Err(refuse(config::ConfigError::new(&shown, problems)))
}

/// What the server's tools refute in a config whose other problems lie in entries they
/// check: each of its servers is started and its tools listed, as `doctor` does.
fn tool_problems(config: &Config) -> Result<Vec<config::Problem>, String> {
    let mut out = Vec::new();
    for each in config.each() {
        say!("sealmark: starting {} to check the config against its tools (no tool is called)", describe_target(&each));
        let inspection = crate::interrupt::run_to_end(sealmark_engine::doctor::inspect(&each, &RunOptions::default()))
            .map_err(|_| "the check against the server's tools was interrupted".to_string())?
            .map_err(|e| format!("the server's tools could not be listed to check the rest: {e}"))?;
        if let Some(why) = inspection.unreachable {
            return Err(format!("the server's tools could not be listed to check the rest: {why}"));
        }
        out.extend(inspection.problems);
    }
    Ok(out)
}

/// Keeps a config's credentials out of everything printed: its literal ones and the
/// values its `${VARIABLE}`s read from the environment.
fn hide_credentials(config: &Config) {
    crate::keep_hidden(&config.secrets);
    let read: Vec<String> =
        config.env_references().into_iter().filter_map(|(_, name)| std::env::var(name).ok()).collect();
    crate::keep_hidden(&read);
}

/// The servers of an MCP client's config or a registry server.json, converted as
/// `sealmark init --from` would write them but with their secrets kept in memory; what
/// the conversion changed is said on stderr.
pub fn load_from(file: &Path) -> Result<Config, u8> {
    use sealmark_engine::config::import::{Secrets, import};
    let shown = file.display().to_string();
    let text = std::fs::read_to_string(file).map_err(|e| usage_error(format!("cannot read {shown}: {e}")))?;
    let imported = import(&shown, &text, Secrets::Inline).map_err(usage_error)?;
    crate::keep_hidden(&imported.secrets);
    for note in &imported.notes {
        say!("sealmark: {shown}: {note}");
    }
    let mut config = config::parse(&shown, &imported.yaml).map_err(|e| {
        say!("{e}");
        usage_error(format!(
            "{shown} converts to a config sealmark refuses; `sealmark init --from {shown}` writes it, to edit"
        ))
    })?;
    config.secrets.extend(imported.secrets);
    hide_credentials(&config);
    Ok(config)
}

/// The callers' tokens: each `${VARIABLE}` of --identity-a/-b or identities.a/b read from
/// the environment. Both or neither: a server that refuses minted tokens refuses both.
fn identities(args: &RunArgs, config: &Config) -> Result<(Option<String>, Option<String>), u8> {
    let file = config.file_name();
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

/// One format of the record (or of the combined record).
fn render_format(format: Format, saved: &Saved, verbosity: u8) -> String {
    use render::combined;
    match (format, saved) {
        (Format::Text, Saved::One(r)) => render::text::render_with(r, verbosity),
        (Format::Json, Saved::One(r)) => render::json(r),
        (Format::Markdown, Saved::One(r)) => render::markdown::render(r),
        (Format::Junit, Saved::One(r)) => render::junit::render(r),
        (Format::Sarif, Saved::One(r)) => render::sarif::render(r),
        (Format::Summary, Saved::One(r)) => render::markdown::summary(r),
        (Format::Badge, Saved::One(r)) => render::badge::svg(r),
        (Format::Shields, Saved::One(r)) => render::badge::shields(r),
        (Format::Text, Saved::Several(c)) => combined::text(c, verbosity),
        (Format::Json, Saved::Several(c)) => combined::json(c),
        (Format::Markdown, Saved::Several(c)) => combined::markdown(c),
        (Format::Junit, Saved::Several(c)) => combined::junit(c),
        (Format::Sarif, Saved::Several(c)) => combined::sarif(c),
        (Format::Summary, Saved::Several(c)) => combined::summary(c),
        (Format::Badge | Format::Shields, Saved::Several(_)) => unreachable!("refused by refuse_badges"),
        (Format::Html, _) => unreachable!("html is a folder, written by publish"),
    }
}

fn describe_target(config: &Config) -> String {
    match (&config.server.url, &config.server.command) {
        (Some(url), _) => sealmark_engine::run::shown_url(url),
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

fn print_grades(saved: &Saved) {
    match saved {
        Saved::One(record) => {
            for pack in Pack::ALL {
                if let Some(p) = record.packs.get(pack.id())
                    && let Some(g) = &p.grade
                {
                    say!("  {:8} GRADE {}  ({})", pack.id(), g.display_letter(), g.fraction());
                }
            }
        }
        Saved::Several(c) => eprint!("{}", render::printable(render::combined::table(c))),
    }
}

/// A saved record or combined record: refused with the file, line and column when it
/// is not one, and (as `read` says) when it comes from another methodology or a newer
/// record version.
fn load_with<T>(path: &Path, read: fn(&str) -> Result<T, SavedRecordError>) -> Result<T, u8> {
    let text =
        std::fs::read_to_string(path).map_err(|e| usage_error(format!("cannot read {}: {e}", path.display())))?;
    read(&text).map_err(|e| match e {
        SavedRecordError::NotARecord { .. } => usage_error(format!("{}:{e}", path.display())),
        _ => usage_error(format!("{}: {e}", path.display())),
    })
}

/// The exit code: 1 when a graded pack is below the gate, or (profile ci) a pack that
/// ran could not be graded; else 0.
/// `label` names the server in a run of several.
fn gate_code(record: &Record, gate: Letter, ci: bool, label: &str) -> u8 {
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
        say!("sealmark: {label}no pack was graded; see the report for the reasons");
    }
    if below.is_empty() {
        exit::OK
    } else {
        say!("sealmark: {label}below the {gate} gate: {}", below.join(", "));
        exit::BELOW_GATE
    }
}

/// The exit code of a run of several: the worst of its servers', and 2 when a server
/// has no record.
fn several_gate_code(c: &Combined, gate: Letter, ci: bool) -> u8 {
    let mut code = exit::OK;
    // A whole run (not one shard) that holds fewer servers than its config declares lost
    // some: a shard that never wrote its record, say. That is not a pass.
    if c.combined.shard.is_none() && c.servers.len() < c.combined.declared {
        say!(
            "sealmark: the record holds {} of the {} servers its config declares; merge every shard",
            c.servers.len(),
            c.combined.declared
        );
        code = exit::USAGE;
    }
    for e in &c.servers {
        match &e.record {
            Some(record) => code = code.max(gate_code(record, gate, ci, &format!("{}: ", e.name))),
            None => {
                say!("sealmark: {}: no record: {}", e.name, e.why_none());
                code = exit::USAGE;
            }
        }
    }
    code
}

/// `sealmark merge`: the shards' records as one combined record, in the config's order.
pub fn merge(args: crate::args::MergeArgs) -> u8 {
    let mut parts = Vec::new();
    for path in &args.records {
        match load_with(path, read_any) {
            Ok(saved) => parts.push((path.display().to_string(), saved)),
            Err(code) => return code,
        }
    }
    let combined = match sealmark_engine::combined::merge(parts) {
        Ok(c) => c,
        Err(why) => return usage_error(why),
    };
    let json = render::combined::json(&combined);
    match &args.out {
        Some(path) => {
            if let Err(code) = write_file(path, &json) {
                return code;
            }
            say!("sealmark: merged {} server(s) into {}", combined.servers.len(), path.display());
        }
        None => print!("{json}"),
    }
    eprint!("{}", render::printable(render::combined::table(&combined)));
    exit::OK
}
