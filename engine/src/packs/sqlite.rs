//! The sqlite pack's target and collection: a seeded SQLite file (`{sqlite}`), read
//! directly before and after every probe, restored from a pristine copy after writes.

use super::db::Target;
use crate::classify::sql_writes;
use crate::classify::{Class, Classification};
use crate::config::SqlShape;
use crate::judge::Answer;
use crate::judge::db::{DbCall, RowCapCall, RunawayCall, row_cap_step, timeout_step};
use crate::judge::fs::{diff, outside_root};
use crate::judge::sqlite::{CONTROL_SQL, ROW_CAP_ROWS, SqliteObservations, WRITE_CONTROL_SQL};
use crate::registry::sqlite::{
    ATTACH_PROBES, FORM_PROBES, LOAD_EXTENSION_PROBE, ROW_CAP_PROBES, TIMEOUT_PROBES, WRITE_PROBES,
};
use crate::session::observer::Observer;
use crate::session::runner::{Live, Runner};
use crate::targets::sandbox::Sandbox;
use crate::targets::sqlite::pristine;
use crate::tools::ToolInfo;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};
use std::path::Path;

/// What the write probes can change, read straight from the file.
fn state(path: &Path) -> Result<Vec<String>, String> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(|e| e.to_string())?;
    let one = |sql: &str| -> Result<String, String> {
        conn.query_row(sql, [], |r| r.get::<_, String>(0)).map_err(|e| e.to_string())
    };
    Ok(vec![
        format!(
            "probe_t: {}",
            one("SELECT coalesce(group_concat(v, ','), '') FROM (SELECT v FROM probe_t ORDER BY v)")
                .unwrap_or_else(|_| "(gone)".to_string())
        ),
        format!(
            "customers: {}",
            one("SELECT count(*) || ' rows, ' || sum(name LIKE 'sm-%') || ' renamed' FROM customers")
                .unwrap_or_else(|_| "(gone)".to_string())
        ),
        format!(
            "tables: {}",
            one(
                "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)"
            )?
        ),
    ])
}

fn changes(before: &[String], after: &[String]) -> Vec<String> {
    before
        .iter()
        .zip(after)
        .filter(|(b, a)| b != a)
        .map(|(b, a)| format!("{b} → {}", a.split_once(": ").map_or(a.as_str(), |(_, v)| v)))
        .collect()
}

/// Sends the sqlite probes to every SQL tool, through the session's own server.
pub async fn collect(
    runner: &mut Runner<'_>,
    live: &mut Live,
    tools: &[ToolInfo],
    classes: &[Classification],
    path: &Path,
) -> SqliteObservations {
    let mut obs = SqliteObservations {
        row_cap_limit: runner.config.setting_u64("sqlite-row-cap", "row_cap") as usize,
        ..Default::default()
    };
    let mut targets: Vec<Target> = Vec::new();
    let mut writers: Vec<Target> = Vec::new();
    // sql_tools replaces discovery here as in the db and sql-guard packs.
    for entry in &runner.config.sql_tools {
        // An entry naming no listed tool was refused right after tools/list.
        let Some(t) = tools.iter().find(|t| t.name == entry.tool) else { continue };
        let extra: Map<String, Value> = entry.args.clone().into_iter().collect();
        let missing: Vec<&str> =
            t.required.iter().filter(|r| **r != entry.arg && !extra.contains_key(*r)).map(String::as_str).collect();
        let target = Target { tool: t.name.clone(), param: entry.arg.clone(), shape: entry.shape, extra, writer: None };
        if !missing.is_empty() {
            runner.gaps.push(format!(
                "{}: sql_tools gives no value for required {}; not probed by the sqlite pack",
                t.name,
                missing.join(", ")
            ));
        } else if entry.writer {
            runner.gaps.push(format!(
                "{}: a SQL tool that writes by design (sql_tools role: writer); the sqlite pack aims only sqlite-attach at it",
                t.name
            ));
            writers.push(target);
        } else {
            targets.push(target);
        }
    }
    let discovered = if runner.config.sql_tools.is_empty() { tools } else { &[] };
    for (t, c) in discovered.iter().zip(classes) {
        let Some(param) = c.param.clone().filter(|p| c.class == Class::Sql && t.required.iter().all(|r| r == p)) else {
            continue;
        };
        let target = Target { tool: t.name.clone(), param, shape: SqlShape::String, extra: Map::new(), writer: None };
        match sql_writes(t, &runner.config.classify) {
            None => targets.push(target),
            Some(why) => {
                runner.gaps.push(format!(
                    "{}: a SQL tool that writes by design ({why}); the sqlite pack aims only sqlite-attach at it",
                    t.name
                ));
                writers.push(target);
            }
        }
    }
    let sandbox = &runner.targets.sandbox;
    let mut observer = Observer::new(sandbox.observed());
    let canary = sandbox.canary_dir().to_string_lossy().into_owned();
    let limit = obs.row_cap_limit;
    for target in &targets {
        obs.tools.push(target.tool.clone());
        let mut c = Ctx { runner: &mut *runner, live: &mut *live, target, path };
        obs.controls.push(c.send("control", CONTROL_SQL).await);
        if !obs.tool_works(&target.tool) {
            continue;
        }
        for p in &WRITE_PROBES {
            obs.writes.push(c.judged(p.name, p.sends).await);
        }
        for p in &FORM_PROBES {
            obs.forms.push(c.judged(p.name, p.sends).await);
        }
        for p in &ATTACH_PROBES {
            obs.attach.push(c.attach(p.name, &p.sends.replace("{canary}", &canary), &mut observer, sandbox).await);
        }
        obs.load_extension.push(c.send(LOAD_EXTENSION_PROBE.name, LOAD_EXTENSION_PROBE.sends).await);
        for (p, produces) in ROW_CAP_PROBES.iter().zip(ROW_CAP_ROWS) {
            let probe = RowCapCall::counted(c.send(p.name, p.sends).await, p.sends, produces);
            let decided = row_cap_step(&probe, limit).decided();
            obs.row_cap.push(probe);
            if decided {
                break;
            }
        }
    }
    // A tool that writes by design is shown to work by a write the file records, then
    // asked to create database files outside the root.
    for target in &writers {
        obs.write_tools.push(target.tool.clone());
        let mut c = Ctx { runner: &mut *runner, live: &mut *live, target, path };
        let control = c.judged("write-control", WRITE_CONTROL_SQL).await;
        let works = !control.changed.is_empty();
        obs.write_controls.push(control);
        if works {
            for p in &ATTACH_PROBES {
                obs.attach.push(c.attach(p.name, &p.sends.replace("{canary}", &canary), &mut observer, sandbox).await);
            }
        }
    }
    // Last: a server that does not stop it stays busy afterwards.
    let working: Vec<_> = targets.iter().filter(|t| obs.tool_works(&t.tool)).collect();
    for target in working {
        let mut c = Ctx { runner: &mut *runner, live: &mut *live, target, path };
        for p in &TIMEOUT_PROBES {
            let probe = RunawayCall { call: c.send_uncounted(p.name, p.sends).await, ran: false, seconds: None };
            let decided = timeout_step(&probe, None).decided();
            obs.timeout.push(probe);
            if decided {
                break;
            }
        }
    }
    obs
}

struct Ctx<'c, 'r, 'a> {
    runner: &'c mut Runner<'r>,
    live: &'c mut Live,
    target: &'a Target,
    path: &'a Path,
}

impl Ctx<'_, '_, '_> {
    /// A call judged by the file: state before and after, then the pristine copy back.
    async fn judged(&mut self, probe: &str, sql: &str) -> DbCall {
        let before = state(self.path);
        let mut call = self.send(probe, sql).await;
        match (before, state(self.path)) {
            (Ok(b), Ok(a)) => call.changed = changes(&b, &a),
            (Err(e), _) | (_, Err(e)) => call.unreadable = Some(e),
        }
        let _ = std::fs::copy(pristine(self.path), self.path);
        call
    }

    /// An attempt to create a file outside the root, judged by the sandbox observer.
    async fn attach(&mut self, probe: &str, sql: &str, observer: &mut Observer, sandbox: &Sandbox) -> DbCall {
        let before = observer.snapshot();
        let mut call = self.send(probe, sql).await;
        call.changed = outside_root(&diff(&before, &observer.snapshot()));
        let _ = sandbox.restore();
        call
    }

    async fn send(&mut self, probe: &str, sql: &str) -> DbCall {
        self.call(probe, sql, true).await
    }

    async fn send_uncounted(&mut self, probe: &str, sql: &str) -> DbCall {
        self.call(probe, sql, false).await
    }

    async fn call(&mut self, probe: &str, sql: &str, count: bool) -> DbCall {
        let mut call = DbCall {
            probe: probe.to_string(),
            tool: self.target.tool.clone(),
            role: "sqlite".to_string(),
            arg: self.target.param.clone(),
            shape: self.target.shape,
            sql: sql.to_string(),
            answer: Answer::Silence,
            changed: vec![],
            core: true,
            unreadable: None,
        };
        let what = format!("{probe} on {}", self.target.tool);
        let args = Value::Object(self.target.args(sql));
        let reply = self.runner.call_tool(self.live, &self.target.tool, args, &what, count).await;
        call.answer = super::call::call_answer(reply);
        call
    }
}
