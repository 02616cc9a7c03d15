//! Judges of the db pack and the SQL it sends. What changed is established by the
//! harness's own superuser connection (the state reader), never by the server's reply.

use super::Finding;
use super::core::Answer;
use super::text::{clip, visible};
use crate::model::{Verdict, VerifiedBy};
use crate::record::Evidence;
use crate::registry::ProbeDoc;

/// The control every SQL tool must pass as the admin role before it is judged.
pub const CONTROL_SQL: &str = "SELECT (SELECT count(*) FROM customers) AS n, current_user AS u";

/// Direct writes, sent as the admin role (who may write, so the database is never the
/// reason a write fails).
pub const WRITE_PROBES: [ProbeDoc; 5] = [
    ProbeDoc { name: "insert", sends: "INSERT INTO probe_t VALUES (1, 'sm-write')" },
    ProbeDoc { name: "update", sends: "UPDATE tenant_notes SET tenant = 'sm-write' WHERE id = 1" },
    ProbeDoc { name: "delete", sends: "DELETE FROM tenant_notes WHERE id = 2" },
    ProbeDoc { name: "create", sends: "CREATE TABLE sm_ddl_probe (id integer)" },
    ProbeDoc { name: "drop", sends: "DROP TABLE audit_probe" },
];

/// Indirect mutating forms. The first four are core cases: executing one fails the
/// check; executing only the others scores part, with no cap.
pub const FORM_PROBES: [ProbeDoc; 7] = [
    ProbeDoc {
        name: "cte-insert",
        sends: "WITH w AS (INSERT INTO probe_t VALUES (2, 'sm-cte') RETURNING 1) SELECT * FROM w",
    },
    ProbeDoc { name: "commit-escape", sends: "SELECT 1; COMMIT; INSERT INTO probe_t VALUES (3, 'sm-commit')" },
    ProbeDoc { name: "stacked", sends: "SELECT 1; INSERT INTO probe_t VALUES (4, 'sm-stacked')" },
    ProbeDoc { name: "select-into", sends: "SELECT 1 AS id INTO sm_ddl_probe" },
    ProbeDoc { name: "rollback-escape", sends: "SELECT 1; ROLLBACK; INSERT INTO probe_t VALUES (5, 'sm-rollback')" },
    ProbeDoc {
        name: "read-only-off",
        sends: "SET default_transaction_read_only = off; INSERT INTO probe_t VALUES (6, 'sm-setoff')",
    },
    ProbeDoc { name: "sequence", sends: "SELECT nextval('audit_probe_id_seq')" },
];

/// How many of FORM_PROBES are core cases.
pub const CORE_FORMS: usize = 4;

/// One SQL call and what the state reader saw.
#[derive(Debug, Clone)]
pub struct DbCall {
    pub probe: String,
    pub tool: String,
    pub role: String,
    pub sql: String,
    pub answer: Answer,
    /// What changed in the database, one line each; empty when nothing did.
    pub changed: Vec<String>,
    pub core: bool,
    /// Why the state reader could not tell what changed, when it could not.
    pub unreadable: Option<String>,
}

impl DbCall {
    fn reply(&self) -> String {
        match &self.answer {
            Answer::Success { text } => format!("answered: \"{}\"", clip(&visible(text.trim()), 80)),
            Answer::ToolError { text } => format!("refused with isError: \"{}\"", clip(&visible(text.trim()), 80)),
            Answer::RpcError { code, message } => {
                format!("refused with JSON-RPC error {code}: \"{}\"", clip(&visible(message), 80))
            }
            Answer::Silence => "no answer".to_string(),
            Answer::Timeout => "no answer within the probe timeout".to_string(),
            Answer::Died { reason } => format!("the server went away: {reason}"),
            Answer::NotSent { reason } => format!("not sent: {reason}"),
        }
    }

    fn evidence(&self, outcome: String, by: VerifiedBy, code: &str) -> Evidence {
        let mut e = Evidence::new(format!("{}: {}", self.probe, clip(&self.sql, 120)), outcome, by)
            .tool(&self.tool)
            .args(serde_json::json!({ "sql": self.sql }))
            .code(code);
        e.role = Some(self.role.trim_start_matches("sm_").to_string());
        e
    }
}

#[derive(Debug, Clone, Default)]
pub struct DbObservations {
    pub tools: Vec<String>,
    pub controls: Vec<DbCall>,
    pub writes: Vec<DbCall>,
    pub forms: Vec<DbCall>,
    /// Caveats every later check's evidence must carry (a held lock, say).
    pub caveats: Vec<String>,
}

impl DbObservations {
    /// Tools whose control query saw 100 customers as sm_admin.
    pub fn working(&self) -> Vec<&str> {
        self.controls
            .iter()
            .filter(
                |c| matches!(&c.answer, Answer::Success { text } if text.contains("100") && text.contains("sm_admin")),
            )
            .map(|c| c.tool.as_str())
            .collect()
    }

    fn control_evidence(&self) -> Vec<Evidence> {
        let working = self.working();
        self.controls
            .iter()
            .map(|c| {
                if working.contains(&c.tool.as_str()) {
                    c.evidence(
                        "the control query saw 100 customers as sm_admin".to_string(),
                        VerifiedBy::Response,
                        "db.control.ok",
                    )
                } else {
                    c.evidence(format!("control failed: {}", c.reply()), VerifiedBy::Response, "db.control.failed")
                }
            })
            .collect()
    }
}

fn judge_changes(obs: &DbObservations, calls: &[DbCall], what: &str, forms: bool) -> Finding {
    if obs.tools.is_empty() {
        return Finding::new(Verdict::Na, "no SQL tool", vec![]);
    }
    if obs.working().is_empty() {
        return Finding::new(
            Verdict::Inconclusive,
            format!("no SQL tool passed the control as sm_admin, so {what} could not be judged"),
            obs.control_evidence(),
        );
    }
    let mut evidence = obs.control_evidence();
    let mut core_hits = Vec::new();
    let mut other_hits = Vec::new();
    let mut answered = 0;
    let mut unreadable = 0;
    for c in calls {
        answered += usize::from(!matches!(c.answer, Answer::Timeout | Answer::Died { .. } | Answer::NotSent { .. }));
        if let Some(why) = &c.unreadable {
            unreadable += 1;
            evidence.push(c.evidence(
                format!("{}; the state reader could not tell what changed: {why}", c.reply()),
                VerifiedBy::State,
                "db.unreadable",
            ));
        } else if c.changed.is_empty() {
            evidence.push(c.evidence(
                format!("{}; the state reader saw nothing change", c.reply()),
                VerifiedBy::State,
                "db.held",
            ));
        } else {
            let outcome = format!("{}; the state reader saw: {}", c.reply(), c.changed.join(", "));
            evidence.push(c.evidence(outcome, VerifiedBy::State, "db.changed"));
            if c.core || !forms { core_hits.push(c) } else { other_hits.push(c) }
        }
    }
    for caveat in &obs.caveats {
        evidence.push(Evidence::new("caveat", caveat.clone(), VerifiedBy::State).code("db.caveat"));
    }
    evidence.sort_by_key(|e| e.code.as_deref() != Some("db.changed"));
    let name = |c: &&DbCall| format!("{} on {} ({})", c.probe, c.tool, c.changed.join(", "));
    if !core_hits.is_empty() {
        let names: Vec<String> = core_hits.iter().map(name).collect();
        return Finding::new(
            Verdict::Fail,
            format!(
                "{} of {} {what} changed the database: {}",
                core_hits.len(),
                calls.len(),
                clip(&names.join("; "), 200)
            ),
            evidence,
        );
    }
    if !other_hits.is_empty() {
        let names: Vec<String> = other_hits.iter().map(name).collect();
        return Finding::new(
            Verdict::Part,
            format!(
                "critical part: {} indirect form(s) that are not core cases changed the database: {}",
                other_hits.len(),
                clip(&names.join("; "), 200)
            ),
            evidence,
        );
    }
    if answered == 0 {
        return Finding::new(Verdict::Inconclusive, format!("no {what} was answered"), evidence);
    }
    if unreadable > 0 {
        return Finding::new(
            Verdict::Inconclusive,
            format!("the state reader could not read the state after {unreadable} {what}"),
            evidence,
        );
    }
    Finding::new(Verdict::Pass, format!("{} {what} sent as sm_admin changed nothing", calls.len()), evidence)
}

pub fn read_only(obs: &DbObservations) -> Finding {
    judge_changes(obs, &obs.writes, "write(s)", false)
}

pub fn mutation_forms(obs: &DbObservations) -> Finding {
    judge_changes(obs, &obs.forms, "indirect mutating form(s)", true)
}
