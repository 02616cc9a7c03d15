//! The sqlite pack's target and collection: a seeded SQLite file (`{sqlite}`), read
//! directly before and after every probe, restored from a pristine copy after writes.

use super::core::MAX_TIMEOUTS;
use super::observer::Observer;
use super::sandbox::Sandbox;
use super::{Live, Runner};
use crate::judge::core::Answer;
use crate::judge::db::DbCall;
use crate::judge::fs::{diff, outside_root};
use crate::judge::sqlite::{
    ATTACH_PROBES, CONTROL_SQL, FORM_PROBES, LOAD_EXTENSION_PROBE, ROW_CAP_PROBE, SqliteObservations, TIMEOUT_PROBE,
    WRITE_PROBES,
};
use crate::record::Classification;
use crate::tools::ToolInfo;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Creates the seeded file and its pristine copy under the sandbox directory (outside
/// the observed directories); returns the file's path.
pub fn seed(sandbox: &Sandbox) -> Result<PathBuf, String> {
    let dir = sandbox.base().join("sqlite");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join("seed.sqlite");
    let conn = Connection::open(&path).map_err(|e| e.to_string())?;
    conn.execute_batch(
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, tenant TEXT NOT NULL);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
         INSERT INTO customers SELECT i, 'Customer ' || i, 'customer' || i || '@seed.sealmark.invalid',
                CASE WHEN i % 2 = 0 THEN 'tenant_a' ELSE 'tenant_b' END FROM n;
         CREATE TABLE probe_t (id INTEGER, v TEXT);",
    )
    .map_err(|e| e.to_string())?;
    drop(conn);
    std::fs::copy(&path, pristine(&path)).map_err(|e| e.to_string())?;
    Ok(path)
}

fn pristine(path: &Path) -> PathBuf {
    path.with_extension("pristine")
}

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
    sandbox: &Sandbox,
    path: &Path,
) -> SqliteObservations {
    let mut obs = SqliteObservations {
        row_cap_limit: runner.config.setting_u64("sqlite-row-cap", "row_cap") as usize,
        ..Default::default()
    };
    let targets: Vec<(String, String)> = tools
        .iter()
        .zip(classes)
        .filter(|(t, c)| c.class == "sql" && c.param.as_ref().is_some_and(|p| t.required.iter().all(|r| r == p)))
        .filter_map(|(t, c)| c.param.clone().map(|p| (t.name.clone(), p)))
        .collect();
    let mut observer = Observer::new(sandbox.observed());
    let canary = sandbox.canary_dir().to_string_lossy().into_owned();
    for (tool, param) in &targets {
        obs.tools.push(tool.clone());
        let mut c = Ctx { runner: &mut *runner, live: &mut *live, tool, param, path };
        obs.controls.push(c.send("control", CONTROL_SQL).await);
        if !obs
            .controls
            .iter()
            .any(|x| &x.tool == tool && matches!(&x.answer, Answer::Success { text } if text.contains("100")))
        {
            continue;
        }
        for p in &WRITE_PROBES {
            obs.writes.push(c.judged(p.name, p.sends).await);
        }
        for p in &FORM_PROBES {
            obs.forms.push(c.judged(p.name, p.sends).await);
        }
        for p in &ATTACH_PROBES {
            let sql = p.sends.replace("{canary}", &canary);
            let before = observer.snapshot();
            let mut call = c.send(p.name, &sql).await;
            call.changed = outside_root(&diff(&before, &observer.snapshot()));
            let _ = sandbox.restore();
            obs.attach.push(call);
        }
        obs.load_extension.push(c.send(LOAD_EXTENSION_PROBE.name, LOAD_EXTENSION_PROBE.sends).await);
        let call = c.send(ROW_CAP_PROBE.name, ROW_CAP_PROBE.sends).await;
        let rows = match &call.answer {
            Answer::Success { text } => text.matches("sm-row-").count(),
            _ => 0,
        };
        obs.row_cap.push((call, rows));
    }
    // Last: a server that does not stop it stays busy afterwards.
    for (tool, param) in targets.iter().filter(|(t, _)| {
        obs.controls
            .iter()
            .any(|x| &x.tool == t && matches!(&x.answer, Answer::Success { text } if text.contains("100")))
    }) {
        let mut c = Ctx { runner: &mut *runner, live: &mut *live, tool, param, path };
        obs.timeout.push(c.send_uncounted(TIMEOUT_PROBE.name, TIMEOUT_PROBE.sends).await);
    }
    obs
}

struct Ctx<'c, 'r, 'a> {
    runner: &'c mut Runner<'r>,
    live: &'c mut Live,
    tool: &'a str,
    param: &'a str,
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

    async fn send(&mut self, probe: &str, sql: &str) -> DbCall {
        self.call(probe, sql, true).await
    }

    async fn send_uncounted(&mut self, probe: &str, sql: &str) -> DbCall {
        self.call(probe, sql, false).await
    }

    async fn call(&mut self, probe: &str, sql: &str, count: bool) -> DbCall {
        let mut call = DbCall {
            probe: probe.to_string(),
            tool: self.tool.to_string(),
            role: "sqlite".to_string(),
            sql: sql.to_string(),
            answer: Answer::NotSent { reason: format!("{MAX_TIMEOUTS} earlier calls went unanswered") },
            changed: vec![],
            core: true,
            unreadable: None,
        };
        if self.runner.timeouts >= MAX_TIMEOUTS {
            return call;
        }
        if self.live.gone.is_some() && !self.runner.relaunch(self.live).await {
            call.answer = Answer::Died { reason: self.live.gone.clone().unwrap_or_default() };
            return call;
        }
        let mut args = Map::new();
        args.insert(self.param.to_string(), Value::String(sql.to_string()));
        let reply = self
            .live
            .session
            .request("tools/call", json!({"name": self.tool, "arguments": args}), &format!("{probe} on {}", self.tool))
            .await;
        call.answer = super::core::call_answer(reply, self.runner, self.live, count);
        call
    }
}
