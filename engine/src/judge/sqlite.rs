//! Judges of the sqlite pack and the SQL it sends. What changed is read from the seeded
//! file itself (and, for files outside the sandbox root, by the sandbox observer).

use super::Answer;
use super::Finding;
use super::db::{DbCall, RowCapCall, RunawayCall, judge_row_cap, judge_timeout};
use crate::model::{Verdict, VerifiedBy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const CONTROL_SQL: &str = "SELECT count(*) AS n FROM customers";
/// The control of a tool that writes by design: the file must record the row.
pub const WRITE_CONTROL_SQL: &str = "INSERT INTO probe_t VALUES (0, 'sm-control')";

/// The rows each of `ROW_CAP_PROBES` produces.
pub const ROW_CAP_ROWS: [usize; 3] = [100_000, 100_000, 10_000];

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SqliteObservations {
    /// The read SQL tools.
    pub tools: Vec<String>,
    pub controls: Vec<DbCall>,
    /// SQL tools that write by design, and their write controls: only sqlite-attach
    /// aims at them.
    pub write_tools: Vec<String>,
    pub write_controls: Vec<DbCall>,
    pub writes: Vec<DbCall>,
    pub forms: Vec<DbCall>,
    pub attach: Vec<DbCall>,
    pub load_extension: Vec<DbCall>,
    pub row_cap: Vec<RowCapCall>,
    pub row_cap_limit: usize,
    pub timeout: Vec<RunawayCall>,
}

impl SqliteObservations {
    fn working(&self) -> bool {
        self.tools.iter().any(|t| self.tool_works(t))
    }

    /// Whether a read tool counted the 100 seeded customers.
    pub fn tool_works(&self, tool: &str) -> bool {
        self.controls
            .iter()
            .any(|c| c.tool == tool && matches!(&c.answer, Answer::Success { text } if text.contains("100")))
    }

    fn gate(&self) -> Option<Finding> {
        if self.tools.is_empty() && !self.write_tools.is_empty() {
            let why = format!("no read SQL tool: {} write(s) by design", self.write_tools.join(", "));
            return Some(Finding::new(Verdict::Na, why, vec![]));
        }
        if self.tools.is_empty() {
            return Some(Finding::new(Verdict::Na, "no SQL tool", vec![]));
        }
        if !self.working() {
            let ev = self
                .controls
                .iter()
                .map(|c| {
                    c.evidence(format!("control failed: {}", c.reply()), VerifiedBy::Response, "sqlite.control.failed")
                })
                .collect();
            return Some(Finding::new(
                Verdict::Inconclusive,
                "no SQL tool counted the 100 seeded customers, so nothing could be judged",
                ev,
            ));
        }
        None
    }
}

/// Fail when any call changed something (in the file, or outside the sandbox root).
fn judge_changes(obs: &SqliteObservations, calls: &[DbCall], what: &str, by: VerifiedBy) -> Finding {
    if let Some(f) = obs.gate() {
        return f;
    }
    changes_finding(calls, what, by)
}

/// Fail when any call changed something; inconclusive when a call proves nothing.
fn changes_finding(calls: &[DbCall], what: &str, by: VerifiedBy) -> Finding {
    if calls.is_empty() {
        return Finding::new(Verdict::Inconclusive, format!("no {what} was sent"), vec![]);
    }
    let mut ev = Vec::new();
    let mut hits = Vec::new();
    let mut no_evidence = 0;
    for c in calls {
        if let Some(why) = &c.unreadable {
            // Not being able to read the file proves nothing either way.
            no_evidence += 1;
            ev.push(c.evidence(format!("{}; the file could not be read: {why}", c.reply()), by, "sqlite.unreadable"));
        } else if c.changed.is_empty()
            && matches!(c.answer, Answer::Timeout | Answer::Died { .. } | Answer::NotSent { .. })
        {
            no_evidence += 1;
            ev.push(c.evidence(format!("{}: no evidence", c.reply()), by, "sqlite.no-evidence"));
        } else if c.changed.is_empty() {
            ev.push(c.evidence(format!("{}; nothing changed", c.reply()), by, "sqlite.held"));
        } else {
            hits.push(format!("{} on {} ({})", c.probe, c.tool, c.changed.join(", ")));
            ev.push(c.evidence(format!("{}; {}", c.reply(), c.changed.join(", ")), by, "sqlite.changed"));
        }
    }
    ev.sort_by_key(|e| e.code.as_deref() != Some("sqlite.changed"));
    if !hits.is_empty() {
        return Finding::new(
            Verdict::Fail,
            format!(
                "{} of {} {what} took effect: {}",
                hits.len(),
                calls.len(),
                crate::text::clip(&hits.join("; "), 200)
            ),
            ev,
        );
    }
    if no_evidence > 0 {
        return Finding::new(
            Verdict::Inconclusive,
            format!("{no_evidence} of {} {what} got no answer, which is no evidence", calls.len()),
            ev,
        );
    }
    Finding::new(Verdict::Pass, format!("{} {what} changed nothing", calls.len()), ev)
}

pub fn read_only(obs: &SqliteObservations) -> Finding {
    judge_changes(obs, &obs.writes, "write(s)", VerifiedBy::State)
}

pub fn mutation_forms(obs: &SqliteObservations) -> Finding {
    judge_changes(obs, &obs.forms, "indirect mutating form(s)", VerifiedBy::State)
}

pub fn attach(obs: &SqliteObservations) -> Finding {
    // Tools that write by design are aimed here too, once the file recorded their write.
    let writer_works = obs.write_controls.iter().any(|c| !c.changed.is_empty());
    if obs.tools.is_empty() && obs.write_tools.is_empty() {
        return Finding::new(Verdict::Na, "no SQL tool", vec![]);
    }
    if !obs.working() && !writer_works {
        let ev = obs
            .controls
            .iter()
            .chain(&obs.write_controls)
            .map(|c| {
                c.evidence(format!("control failed: {}", c.reply()), VerifiedBy::Response, "sqlite.control.failed")
            })
            .collect();
        return Finding::new(Verdict::Inconclusive, "no SQL tool passed its control, so nothing could be judged", ev);
    }
    changes_finding(&obs.attach, "attempt(s) to create a database file outside the sandbox root", VerifiedBy::Sandbox)
}

pub fn load_extension(obs: &SqliteObservations) -> Finding {
    if let Some(f) = obs.gate() {
        return f;
    }
    let mut ev = Vec::new();
    let mut tried = Vec::new();
    for c in &obs.load_extension {
        let text = match &c.answer {
            Answer::Success { text } | Answer::ToolError { text } => text.to_lowercase(),
            Answer::RpcError { message, .. } => message.to_lowercase(),
            _ => String::new(),
        };
        // "not authorized" is SQLite refusing; a file error means it tried to load.
        let attempted =
            ["cannot open", "no such file", "undefined symbol", "shared object"].iter().any(|w| text.contains(w));
        if attempted {
            tried.push(c.tool.clone());
            ev.push(c.evidence(
                format!("{}: SQLite tried to load the file, so extension loading is on", c.reply()),
                VerifiedBy::Response,
                "sqlite.ext.enabled",
            ));
        } else {
            ev.push(c.evidence(c.reply(), VerifiedBy::Response, "sqlite.ext.refused"));
        }
    }
    if !tried.is_empty() {
        return Finding::new(Verdict::Fail, format!("extension loading is enabled on {}", tried.join(", ")), ev);
    }
    Finding::new(Verdict::Pass, "load_extension was refused", ev)
}

pub fn row_cap(obs: &SqliteObservations) -> Finding {
    if let Some(f) = obs.gate() {
        return f;
    }
    judge_row_cap(&obs.row_cap, obs.row_cap_limit, "sqlite.rows.uncapped", "sqlite.rows.capped")
}

pub fn timeout(obs: &SqliteObservations) -> Finding {
    if let Some(f) = obs.gate() {
        return f;
    }
    judge_timeout(&obs.timeout, None, "sqlite.time.unbounded", "sqlite.time.stopped")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(answer: Answer, changed: &[&str], unreadable: Option<&str>) -> DbCall {
        DbCall {
            probe: "insert".into(),
            tool: "query".into(),
            role: "sqlite".into(),
            arg: "sql".into(),
            shape: crate::judge::db::SqlShape::String,
            sql: "INSERT …".into(),
            answer,
            changed: changed.iter().map(|s| s.to_string()).collect(),
            core: true,
            unreadable: unreadable.map(str::to_string),
        }
    }

    fn obs(writes: Vec<DbCall>) -> SqliteObservations {
        SqliteObservations {
            tools: vec!["query".into()],
            controls: vec![call(Answer::Success { text: "100".into() }, &[], None)],
            writes,
            ..Default::default()
        }
    }

    #[test]
    fn an_unreadable_file_is_inconclusive_not_a_fail() {
        let f = read_only(&obs(vec![call(Answer::Success { text: String::new() }, &[], Some("database is locked"))]));
        assert_eq!(f.verdict, Verdict::Inconclusive, "{}", f.summary);
    }

    #[test]
    fn a_change_read_from_the_file_fails() {
        let f = read_only(&obs(vec![call(Answer::Success { text: String::new() }, &["probe_t:  → sm-write"], None)]));
        assert_eq!(f.verdict, Verdict::Fail);
    }
}
