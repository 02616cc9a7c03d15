//! `sealmark doctor` and `sealmark init`: a first run that explains itself.

use crate::args::{InitArgs, TargetArgs};
use crate::run::{load_config, write_atomically};
use crate::{exit, usage_error};
use sealmark_engine::config::{self, Config, secrets};
use sealmark_engine::doctor::{Inspection, inspect, report, suggest};
use sealmark_engine::run::RunOptions;
use sealmark_engine::targets::db::DbOptions;
use std::io::IsTerminal;

/// Starts the server once, as `run` would, and reads what it declares.
fn inspected(config: &Config, pg: Option<String>, no_embedded: bool) -> Result<Inspection, u8> {
    let options = RunOptions { db: DbOptions { pg, no_embedded }, ..Default::default() };
    crate::interrupt::run_to_end(inspect(config, &options))?.map_err(usage_error)
}

pub fn doctor(args: TargetArgs) -> u8 {
    let config = match load_config(args.config.as_deref(), &args.command) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let configs = match &args.server {
        Some(_) if config.file.is_none() => {
            return usage_error("--server picks one of a config's servers:; the command after -- is one server");
        }
        Some(name) => match config.select(name) {
            Ok(c) => vec![c],
            Err(why) => return usage_error(format!("--server: {why}")),
        },
        None => config.each(),
    };
    let several = !config.servers.is_empty() && args.server.is_none();
    let mut code = exit::OK;
    for config in configs {
        if several {
            println!("=== {} ===\n", config.selected.as_deref().unwrap_or_default());
        }
        let inspection = match inspected(&config, args.pg.clone(), args.no_embedded) {
            Ok(i) => i,
            Err(code) => return code,
        };
        print!("{}", crate::hidden(&sealmark_engine::render::printable(report(&config, &inspection))));
        code = code.max(if !inspection.problems.is_empty() {
            exit::USAGE
        } else if inspection.unreachable.is_some() {
            exit::BELOW_GATE
        } else {
            exit::OK
        });
        if several {
            println!();
        }
    }
    code
}

pub fn init(args: InitArgs) -> u8 {
    if args.from.is_some() {
        init_from(args)
    } else if args.probes {
        init_probes(args)
    } else {
        init_config(args)
    }
}

/// The servers of an MCP client's config or a registry server.json, written as a
/// sealmark.yaml; never overwrites.
fn init_from(args: InitArgs) -> u8 {
    use sealmark_engine::config::import::{Secrets, import};
    let from = args.from.as_deref().expect("init_from has --from");
    let shown = from.display().to_string();
    if args.config.exists() {
        return usage_error(format!("{} exists; init never overwrites a config", args.config.display()));
    }
    let text = match std::fs::read_to_string(from) {
        Ok(t) => t,
        Err(e) => return usage_error(format!("cannot read {shown}: {e}")),
    };
    let imported = match import(&shown, &text, Secrets::Referenced) {
        Ok(i) => i,
        Err(why) => return usage_error(why),
    };
    let mut yaml = imported.yaml;
    if !imported.notes.is_empty() {
        yaml.push_str(
            "
# What the conversion changed:
",
        );
        for note in &imported.notes {
            yaml.push_str(&format!(
                "#   {note}
"
            ));
        }
    }
    if let Err(e) = sealmark_engine::config::parse(&args.config.display().to_string(), &yaml) {
        say!("{e}");
        return usage_error(format!("{shown} converts to a config sealmark refuses; nothing was written"));
    }
    if let Err(e) = write_atomically(&args.config, &yaml) {
        return usage_error(format!("cannot write {}: {e}", args.config.display()));
    }
    for note in &imported.notes {
        say!("sealmark: {note}");
    }
    say!("sealmark: wrote {}; next: sealmark doctor, then sealmark run", args.config.display());
    exit::OK
}

/// A commented starter config for the command after `--`; never overwrites.
fn init_config(args: InitArgs) -> u8 {
    let Some((cmd, rest)) = args.command.split_first() else {
        return usage_error("init needs the server command after --: sealmark init -- ./my-server --root {sandbox}");
    };
    if args.config.exists() {
        return usage_error(format!("{} exists; init never overwrites a config", args.config.display()));
    }
    let text = if rest.is_empty() && config::is_http_url(cmd) {
        // The password is read from the environment at run time, never written here.
        let found = secrets::in_urls(cmd);
        for f in &found {
            say!("sealmark: the URL's password is written as ${{{0}}}: set {0} in sealmark's environment", f.name);
        }
        let url = secrets::replaced(cmd, &found, |f| format!("${{{}}}", f.name));
        STARTER_URL.replace("{url}", &url)
    } else {
        let quoted: Vec<String> = rest.iter().map(|a| format!("\"{}\"", a.replace('"', "\\\""))).collect();
        STARTER.replace("{command}", cmd).replace("{args}", &quoted.join(", "))
    };
    if let Err(e) = write_atomically(&args.config, &text) {
        return usage_error(format!("cannot write {}: {e}", args.config.display()));
    }
    say!("sealmark: wrote {}; next: sealmark doctor, then sealmark run", args.config.display());
    exit::OK
}

/// The starter for a server already running at a URL.
const STARTER_URL: &str = r#"# sealmark.yaml: how to reach the server and what to check. Every key but server is
# optional; `sealmark doctor` says what a run would do with this file.
server:
  url: "{url}"
  # headers: { Authorization: "Bearer ${TOKEN}" }   # read from sealmark's environment
  # For sealmark to start the server itself (and see its files, sockets and children),
  # give its command too: command: ./my-server, args: ["--port", "8080"]

# packs: [core, http]                      # default: every standard pack that applies

timeout_probe_sec: 10
"#;

const STARTER: &str = r#"# sealmark.yaml: how to start the server and what to check. Every key but server is
# optional; `sealmark doctor` says what a run would do with this file.
server:
  command: {command}
  args: [{args}]
  # {sandbox} is a fresh directory the server may use (also its working directory);
  # {sandbox_home} its HOME. Give the server {sandbox} wherever it takes a root.
  # env: { LOG_LEVEL: debug }
  # url: http://127.0.0.1:8080/mcp         # an HTTP server sealmark starts from command
  # headers: { Authorization: "Bearer {bearer}" }

# packs: [core, fs, effects, net]          # default: every standard pack that applies

# A Postgres- or SQLite-backed server: give it {dsn} (or {host}, {port}, {user},
# {password}, {db}) or {sqlite}, and the db or sqlite pack seeds a database for it.

# A server in front of a backend: point its backend address at {upstream}.
# upstream: { kind: http }
# scope:
#   tools: [{ tool: describe_table, param: table }]
#   allow: ["sales.public."]
#   deny: ["hr.private.salaries"]

# Valid calls and your own checks (`sealmark init --probes` writes the valid calls):
# probes:
#   - { tool: read_file, args: { path: "{sandbox}/ok.txt" } }

timeout_probe_sec: 10
"#;

/// One valid call per tool, printed as a probes: block (or JSON), optionally appended.
fn init_probes(args: InitArgs) -> u8 {
    let file = if args.command.is_empty() { Some(args.config.as_path()) } else { None };
    let config = match load_config(file, &args.command) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if !config.servers.is_empty() {
        return usage_error(format!(
            "init --probes reads one server's tools, and {} lists several under servers: (which share their probes); run it on a config of the one server whose calls you want",
            config.file.as_deref().unwrap_or("the config")
        ));
    }
    let inspection = match inspected(&config, None, false) {
        Ok(i) => i,
        Err(code) => return code,
    };
    if let Some(why) = &inspection.unreachable {
        return usage_error(format!("the server could not be reached: {why}"));
    }
    let calls = suggest(&config, &inspection);
    if args.json {
        let list: Vec<serde_json::Value> = calls
            .iter()
            .map(|(tool, call)| match call {
                Ok(a) => serde_json::json!({"tool": tool, "args": a}),
                Err(why) => serde_json::json!({"tool": tool, "skipped": why}),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&list).expect("serialises"));
        return exit::OK;
    }
    let mut block = String::from("probes:\n");
    for (tool, call) in &calls {
        match call {
            Ok(a) => {
                block.push_str(&format!("  - {{ tool: {tool}, args: {} }}\n", serde_json::Value::Object(a.clone())))
            }
            Err(why) => block.push_str(&format!("  # - {{ tool: {tool}, args: {{}} }}   # {why}\n")),
        }
    }
    print!("{block}");
    if !args.write {
        return exit::OK;
    }
    let existing = std::fs::read_to_string(&args.config).unwrap_or_default();
    if existing.lines().any(|l| l.starts_with("probes:")) {
        return usage_error(format!("{} already has a probes: key; add the calls by hand", args.config.display()));
    }
    if !args.yes {
        eprint!("Append this block to {}? [y/N] ", args.config.display());
        let mut answer = String::new();
        if !std::io::stdin().is_terminal() || std::io::stdin().read_line(&mut answer).is_err() || answer.trim() != "y" {
            say!("sealmark: nothing written (pass --yes to append without asking)");
            return exit::OK;
        }
    }
    let sep = if existing.is_empty() || existing.ends_with('\n') { "" } else { "\n" };
    if let Err(e) = write_atomically(&args.config, format!("{existing}{sep}{block}")) {
        return usage_error(format!("cannot write {}: {e}", args.config.display()));
    }
    say!("sealmark: appended {} call(s) to {}", calls.len(), args.config.display());
    exit::OK
}
