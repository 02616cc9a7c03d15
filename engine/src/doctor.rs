//! `sealmark doctor` and `sealmark init --probes`: start the server the way `run`
//! would, read what it declares, and say what a run would do with it, without
//! sending a single probe.

use crate::applies::{Situation, applies};
use crate::classify::classify_declared;
use crate::classify::{Class, Classification};
use crate::config::{Config, Problem};
use crate::model::Pack;
use crate::registry::pack_doc;
use crate::run::RunOptions;
use crate::session::runner::Runner;
use crate::targets::{RunError, Targets, Wanted, db};
use crate::tools::ToolInfo;
use serde_json::{Map, Value, json};

/// What the server declared, and whether it could be reached.
pub struct Inspection {
    /// Why the server could not be reached, when it could not.
    pub unreachable: Option<String>,
    pub tools: Vec<ToolInfo>,
    pub classes: Vec<Classification>,
    /// What the tool list refutes in the config (`probes:`, `classify:`, `sql_tools`,
    /// `scope.tools`): each a problem a run would refuse.
    pub problems: Vec<Problem>,
    /// Processes the server left behind.
    pub leftovers: Vec<String>,
    /// Whether the database the config asks for is available.
    pub database: Option<Result<String, String>>,
}

/// Starts the server as `run` would, completes the handshake, lists its tools, stops it.
pub async fn inspect(config: &Config, options: &RunOptions) -> Result<Inspection, RunError> {
    // The listener and the stub stay up while the server runs: it may reach for them.
    let wanted = Wanted {
        db: &options.db,
        identity_a: options.identity_a.clone(),
        identity_b: options.identity_b.clone(),
        active: options.active,
        large_bytes: 1024,
        package_caches: !options.no_package_caches,
        strict_db: false,
    };
    let mut targets = Targets::start(config, wanted).await?;
    let mut runner = Runner::new(config, &targets, targets.db_placeholders(db::SESSION_ROLE));
    let mut live = runner.launch().await?;
    let (handshake, caps) = live.session.handshake().await;
    let mut inspection = Inspection {
        unreachable: None,
        tools: Vec::new(),
        classes: Vec::new(),
        problems: Vec::new(),
        leftovers: Vec::new(),
        database: targets.database.as_ref().map(|d| d.as_ref().map(|d| d.summary.clone()).map_err(Clone::clone)),
    };
    match caps {
        Some(_) => {
            let (raw, _, error) = live.session.list_all("tools/list", "tools").await;
            if let Some(e) = error {
                inspection.unreachable = Some(format!("tools/list failed: {e}"));
            }
            inspection.tools = raw.iter().map(ToolInfo::from_value).filter(|t| config.tools.keeps(&t.name)).collect();
            inspection.classes = inspection.tools.iter().map(|t| classify_declared(t, &config.classify)).collect();
            inspection.problems = crate::packs::tool_problems(&runner, &inspection.tools, &raw);
        }
        None => inspection.unreachable = Some(format!("no handshake: {}", handshake.why_not_open())),
    }
    runner.retire(&mut live).await;
    inspection.leftovers = std::mem::take(&mut runner.leftovers);
    drop(runner);
    targets.sandbox.clean_up();
    Ok(inspection)
}

/// The doctor's report: what each pack would do, whether `custom` applies, and
/// warnings about paths the sandbox does not cover.
pub fn report(config: &Config, inspection: &Inspection) -> String {
    let mut out = String::new();
    match &inspection.unreachable {
        Some(why) => out.push_str(&format!("server: not reached: {why}\n")),
        None => out.push_str(&format!(
            "server: reached, {} tool(s): {}\n",
            inspection.tools.len(),
            inspection.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
    for c in &inspection.classes {
        out.push_str(&format!("  {}  {}  {}  ← {}\n", c.tool, c.class, c.confidence, c.reason));
    }
    out.push('\n');
    let known = Situation {
        config,
        classes: Some(&inspection.classes),
        database: inspection.database.as_ref().map(|d| d.as_ref().map(|_| ()).map_err(String::as_str)),
        // The listener is bound before the server starts; a run without it says so.
        listener: true,
    };
    for pack in Pack::ALL {
        let doc = pack_doc(pack);
        let line = if !config.runs_pack(pack) {
            if config.declares(pack).is_some() {
                "skipped: declared in the config, but not in the pack list you chose".to_string()
            } else if pack.is_candidate() || pack == Pack::Custom {
                format!("not declared (runs {})", doc.applies)
            } else {
                "not requested (packs: or --pack)".to_string()
            }
        } else {
            match applies(pack, &known) {
                Err(why) => format!("would not run: {why}"),
                Ok(tools) if !tools.is_empty() => format!("runs on {}", tools.join(", ")),
                Ok(_) => match (pack, &inspection.database) {
                    (Pack::Db, Some(Ok(summary))) => format!("runs ({summary})"),
                    (Pack::Upstream, _) if !config.server.headers.values().any(|h| h.contains("{bearer}")) => {
                        "runs; upstream-credential is n/a without {bearer} in server.headers".to_string()
                    }
                    (Pack::Custom, _) => {
                        let n = config.probes.iter().filter(|p| p.is_check()).count();
                        format!("runs {n} probe(s) with a check")
                    }
                    _ => "runs".to_string(),
                },
            }
        };
        out.push_str(&format!("{:10} {line}\n", pack.id()));
    }
    let valid = config.probes.iter().filter(|p| !p.is_check()).count();
    if valid > 0 {
        out.push_str(&format!("\nprobes: {valid} valid call(s) run with core\n"));
    }
    let warnings = config.paths_outside_sandbox();
    if !warnings.is_empty() {
        out.push('\n');
        for w in warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
    }
    if !inspection.problems.is_empty() {
        let file = config.file_name();
        let problems = crate::config::ConfigError::new(file, inspection.problems.clone());
        out.push_str(&format!("\nproblems a run would refuse (exit 2):\n{problems}\n"));
    }
    if !inspection.leftovers.is_empty() {
        out.push_str(&format!("\nthe server left processes behind: {}\n", inspection.leftovers.join(", ")));
    }
    out
}

/// A tool's suggested valid call: its arguments, or why they cannot be filled.
pub type Suggestion = (String, Result<Map<String, Value>, String>);

/// One valid call per tool, for `init --probes`.
pub fn suggest(config: &Config, inspection: &Inspection) -> Vec<Suggestion> {
    let exact_allow = config.scope.allow.iter().find(|e| !e.ends_with(config.scope.separator));
    inspection
        .tools
        .iter()
        .zip(&inspection.classes)
        .map(|(tool, class)| {
            let mut args = Map::new();
            if tool.hint("destructiveHint") == Some(true) {
                let why = "destructive: write this call yourself, aimed at a file it may change";
                return (tool.name.clone(), Err(why.to_string()));
            }
            let scoped = config.scope.tools.iter().find(|s| s.tool == tool.name);
            for name in &tool.required {
                let value = if scoped.is_some_and(|s| &s.param == name) {
                    match exact_allow {
                        Some(e) => json!(e),
                        None => return (tool.name.clone(), Err("scope.allow has no exact entry to send".to_string())),
                    }
                } else if class.param.as_deref() == Some(name.as_str()) {
                    match class.class {
                        Class::Path if tool.name.contains("dir") || tool.name.contains("list") => json!("{sandbox}"),
                        Class::Path => json!("{sandbox}/ok.txt"),
                        Class::Url => json!("{listener}/t/{token}"),
                        Class::Sql if config.upstream.kind.is_some() => json!("SELECT 1"),
                        Class::Sql => {
                            return (
                                tool.name.clone(),
                                Err("SQL is sent from probes only with an upstream stub (upstream.kind)".to_string()),
                            );
                        }
                        Class::Command => {
                            return (
                                tool.name.clone(),
                                Err("runs commands: write an active probe with a harness program (sm-echo …)"
                                    .to_string()),
                            );
                        }
                        _ => return (tool.name.clone(), Err(format!("cannot fill {name}"))),
                    }
                } else {
                    match tool.param_type(name) {
                        Some("boolean") => json!(false),
                        Some("integer" | "number") => json!(1),
                        _ => return (tool.name.clone(), Err(format!("cannot fill the required argument {name}"))),
                    }
                };
                args.insert(name.clone(), value);
            }
            (tool.name.clone(), Ok(args))
        })
        .collect()
}
