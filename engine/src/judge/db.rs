//! Judges of the db pack and the SQL it sends. What changed is established by the
//! harness's own superuser connection (the state reader), never by the server's reply.

use super::Answer;
use super::Finding;
use crate::model::{Evidence, Verdict, VerifiedBy};
use crate::text::clip;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The version of the seed database the db pack's probes and judges are written for.
pub const SEED_VERSION: &str = "0.2";

/// The control every SQL tool must pass as the admin role before it is judged.
pub const CONTROL_SQL: &str = "SELECT (SELECT count(*) FROM customers) AS n, current_user AS u";

/// The per-role control: each instance must see the 100 rows of the masked view.
pub const ROLE_CONTROL_SQL: &str = "SELECT count(*) AS n FROM customers_masked";
/// The rows each of `ROW_CAP_PROBES` produces.
pub const ROW_CAP_ROWS: [usize; 3] = [100_000, 100_000, 10_000];
/// The marker every runaway-time probe carries.
pub const RUNAWAY_MARKER: &str = "sm_runaway";

pub const AUDIT_MARKER: &str = "sm-audit-marker";

/// How many of FORM_PROBES are core cases.
pub const CORE_FORMS: usize = 4;

/// How a SQL tool takes its statement: `arg` is one string, or a list of strings (the
/// packs then send a list of the one statement they mean). A SQL call records it, so its
/// evidence shows the statement as sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SqlShape {
    #[default]
    String,
    Array,
}

impl SqlShape {
    fn is_string(&self) -> bool {
        *self == SqlShape::String
    }

    /// The JSON type `arg` must have in the tool's schema.
    pub fn json_type(self) -> &'static str {
        match self {
            SqlShape::String => "string",
            SqlShape::Array => "array",
        }
    }

    /// `sql` as the tool takes it.
    pub fn wrap(self, sql: &str) -> serde_json::Value {
        match self {
            SqlShape::String => serde_json::Value::from(sql),
            SqlShape::Array => serde_json::Value::Array(vec![serde_json::Value::from(sql)]),
        }
    }
}

/// One SQL call and what the state reader saw.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DbCall {
    pub probe: String,
    pub tool: String,
    pub role: String,
    /// The argument the statement was sent in (`sql`, `query`, …).
    #[serde(default = "sql_arg")]
    pub arg: String,
    /// How `arg` took the statement: a string, or a list holding it (`sql_tools` shape: array).
    #[serde(default, skip_serializing_if = "SqlShape::is_string")]
    pub shape: SqlShape,
    pub sql: String,
    pub answer: Answer,
    /// What changed in the database, one line each; empty when nothing did.
    pub changed: Vec<String>,
    pub core: bool,
    /// Why the state reader could not tell what changed, when it could not.
    pub unreadable: Option<String>,
}

/// The argument name records made before `arg` was kept used.
fn sql_arg() -> String {
    "sql".to_string()
}

impl DbCall {
    pub(crate) fn reply(&self) -> String {
        self.answer.brief()
    }

    pub(crate) fn evidence(&self, outcome: String, by: VerifiedBy, code: &str) -> Evidence {
        let mut e = Evidence::new(format!("{}: {}", self.probe, clip(&self.sql, 120)), outcome, by)
            .tool(&self.tool)
            .args(serde_json::Value::Object([(self.arg.clone(), self.shape.wrap(&self.sql))].into_iter().collect()))
            .code(code);
        // Seed roles are named in evidence as analyst, support or admin.
        e.role = self.role.strip_prefix("sm_").map(str::to_string);
        e
    }
}

/// One runaway-result spelling and how many distinct marked rows its answer carried.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RowCapCall {
    pub call: DbCall,
    pub rows: usize,
    /// How many rows the statement produces.
    pub produces: usize,
}

impl RowCapCall {
    /// A row-cap call with the marked rows its answer holds, however the server put it
    /// (a result, a tool error, a JSON-RPC error message).
    pub fn counted(call: DbCall, sql: &str, produces: usize) -> RowCapCall {
        let rows = match &call.answer {
            Answer::Success { text } | Answer::ToolError { text } => marked_rows(text, sql),
            Answer::RpcError { message, .. } => marked_rows(message, sql),
            _ => 0,
        };
        RowCapCall { call, rows, produces }
    }
}

/// One runaway-time spelling, and whether the harness saw it run (the state reader's
/// pg_stat_activity; SQLite offers no such view).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunawayCall {
    pub call: DbCall,
    pub ran: bool,
    /// Whole seconds from sending the statement to its answer, when one came and the
    /// harness timed it (the db pack does; it states when a bounded server stopped it).
    #[serde(default)]
    pub seconds: Option<u64>,
}

/// The distinct marked rows (`sm-row-<n>`) in an answer, the statement's own text
/// removed first: an echo of the SQL is not a row, nor is a row printed twice.
pub fn marked_rows(text: &str, sql: &str) -> usize {
    static ROW: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"sm-row-(\d+)").expect("valid"));
    let text = text.replace(sql, "");
    ROW.captures_iter(&text).map(|c| c[1].to_string()).collect::<std::collections::BTreeSet<_>>().len()
}

/// The text of an answer with the statement removed, lower-cased, for wording rules.
fn answer_words(call: &DbCall) -> String {
    let text = match &call.answer {
        Answer::Success { text } | Answer::ToolError { text } => text.as_str(),
        Answer::RpcError { message, .. } => message.as_str(),
        _ => "",
    };
    text.replace(&call.sql, "").to_lowercase()
}

/// A refusal that names the size of the result, not the form of the statement.
static SIZE_WORDS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\brows?\b|\blimit|too (many|large|big|much)|exceed|maximum|truncat|result size|\bcap(ped)?\b")
        .expect("valid")
});
/// An answer that says the statement was stopped for running too long.
static TIME_WORDS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"time ?out|timed out|time limit|interrupt|cancel|too long|deadline|exceeded|abort")
        .expect("valid")
});

/// What one spelling of a runaway probe established.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// It decided the tool's verdict.
    Decided(Verdict, String),
    /// It was refused for its form (or did not run): the next spelling is tried.
    Refused(String),
}

impl Step {
    pub fn decided(&self) -> bool {
        matches!(self, Step::Decided(..))
    }
}

/// One runaway-result spelling: more than `limit` rows fails; some rows, no more than
/// `limit`, is a cap; no row at all decides only when the refusal names the size.
pub fn row_cap_step(c: &RowCapCall, limit: usize) -> Step {
    let call = &c.call;
    if let Answer::TooLarge { bytes } = call.answer {
        return Step::Decided(
            Verdict::Fail,
            format!("an answer of {bytes} bytes came back, too large to parse: no cap"),
        );
    }
    if !call.answer.was_answered() {
        return Step::Refused(format!("no evidence: {}", call.reply()));
    }
    match c.rows {
        n if n > limit => Step::Decided(Verdict::Fail, format!("{n} rows came back, over the {limit}-row cap")),
        _ if c.produces <= limit => Step::Refused(format!("it produces {} rows, no more than the cap", c.produces)),
        0 if SIZE_WORDS.is_match(&answer_words(call)) => {
            Step::Decided(Verdict::Pass, format!("refused for its size: {}", call.reply()))
        }
        0 => Step::Refused(format!("no row came back, and the answer does not name a size limit: {}", call.reply())),
        n => Step::Decided(Verdict::Pass, format!("{n} of {} rows came back, within the {limit}-row cap", c.produces)),
    }
}

/// One runaway-time spelling. `limit` is the longest statement limit that passes, when
/// the harness waited that long (the db pack): no answer within it, or an answer after
/// it, fails; without one, no answer within the probe timeout fails. An answer in time
/// decides pass only when the statement was seen running or the answer says it was
/// stopped for its time.
pub fn timeout_step(c: &RunawayCall, limit: Option<u64>) -> Step {
    let call = &c.call;
    let when = match c.seconds {
        Some(s) => format!("after {s} s"),
        None => "before the probe timeout".to_string(),
    };
    match (&call.answer, limit, c.seconds) {
        (Answer::Timeout, Some(l), _) => Step::Decided(
            Verdict::Fail,
            format!("no answer within the {l} s limit (and {RUNAWAY_GRACE_SEC} s of grace): nothing stopped it"),
        ),
        (Answer::Timeout, None, _) => {
            Step::Decided(Verdict::Fail, "still running when the probe timeout ran out: nothing stopped it".to_string())
        }
        (a, _, _) if !a.was_answered() => Step::Refused(format!("no evidence: {}", call.reply())),
        (_, Some(l), Some(s)) if s > l => {
            Step::Decided(Verdict::Fail, format!("answered only after {s} s, over the {l} s limit: {}", call.reply()))
        }
        _ if TIME_WORDS.is_match(&answer_words(call)) => {
            Step::Decided(Verdict::Pass, format!("stopped {when}: {}", call.reply()))
        }
        _ if c.ran => Step::Decided(Verdict::Pass, format!("seen running, then answered {when}: {}", call.reply())),
        _ => Step::Refused(format!("answered at once, without running: {}", call.reply())),
    }
}

/// How long past `db-timeout`'s limit the harness still waits for the answer: the
/// server's cancellation and the answer's way back.
pub const RUNAWAY_GRACE_SEC: u64 = 2;

/// The verdict of a runaway check from every spelling sent: per tool, the first
/// spelling that decided, or inconclusive when every one was refused for its form or
/// went unanswered; over tools, the worst.
fn judge_runaway<'c>(
    steps: impl Iterator<Item = (&'c DbCall, Step, VerifiedBy)>,
    what: &str,
    fail_code: &str,
    ok_code: &str,
) -> Finding {
    /// One tool's spellings: the first that decided, and why the others did not.
    struct ToolSteps {
        tool: String,
        decided: Option<(Verdict, String)>,
        refused: Vec<String>,
    }
    let mut evidence = Vec::new();
    let mut per_tool: Vec<ToolSteps> = Vec::new();
    for (call, step, observer) in steps {
        let slot = match per_tool.iter().position(|t| t.tool == call.tool) {
            Some(i) => i,
            None => {
                per_tool.push(ToolSteps { tool: call.tool.clone(), decided: None, refused: Vec::new() });
                per_tool.len() - 1
            }
        };
        let (code, outcome) = match &step {
            Step::Decided(Verdict::Fail, why) => (fail_code, why.clone()),
            Step::Decided(_, why) => (ok_code, why.clone()),
            Step::Refused(why) => ("db.runaway.refused", format!("not judged: {why}")),
        };
        evidence.push(call.evidence(outcome, observer, code));
        let entry = &mut per_tool[slot];
        match step {
            Step::Decided(v, why) if entry.decided.is_none() => {
                entry.decided = Some((v, format!("{}: {why}", call.probe)))
            }
            Step::Refused(why) => entry.refused.push(format!("{}: {why}", call.probe)),
            Step::Decided(..) => {}
        }
    }
    if per_tool.is_empty() {
        return Finding::new(Verdict::Inconclusive, format!("no {what} probe was sent"), evidence);
    }
    let verdicts: Vec<(Verdict, String)> = per_tool
        .into_iter()
        .map(|ToolSteps { tool, decided, refused }| match decided {
            Some((v, why)) => (v, format!("{tool}: {why}")),
            None => (
                Verdict::Inconclusive,
                format!(
                    "{tool}: every spelling was refused for its form or went unanswered, so the {what} is untested ({})",
                    refused.first().cloned().unwrap_or_default()
                ),
            ),
        })
        .collect();
    evidence.sort_by_key(|e| e.code.as_deref() != Some(fail_code));
    let worst = verdicts.iter().map(|(v, _)| *v).min_by_key(|v| v.severity_rank()).unwrap_or(Verdict::Inconclusive);
    let summary = verdicts.iter().filter(|(v, _)| *v == worst).map(|(_, s)| s.as_str()).collect::<Vec<_>>().join("; ");
    Finding::new(worst, clip(&summary, 300), evidence)
}

/// `db-row-cap` and `sqlite-row-cap` once their gates passed.
pub fn judge_row_cap(calls: &[RowCapCall], limit: usize, fail_code: &str, ok_code: &str) -> Finding {
    judge_runaway(
        calls.iter().map(|c| (&c.call, row_cap_step(c, limit), VerifiedBy::Response)),
        "row cap",
        fail_code,
        ok_code,
    )
}

/// `db-timeout` and `sqlite-timeout` once their gates passed.
pub fn judge_timeout(calls: &[RunawayCall], limit: Option<u64>, fail_code: &str, ok_code: &str) -> Finding {
    // A pass the state reader saw running (pg_stat_activity) rests on the database's
    // state; the rest on the answer and when it came.
    judge_runaway(
        calls.iter().map(|c| {
            let step = timeout_step(c, limit);
            let by = match step {
                Step::Decided(Verdict::Pass, _) if c.ran => VerifiedBy::State,
                _ => VerifiedBy::Response,
            };
            (&c.call, step, by)
        }),
        "time limit",
        fail_code,
        ok_code,
    )
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DbObservations {
    /// The SQL tools judged: read tools and tools that write by design alike.
    pub tools: Vec<String>,
    /// The tools of `tools` that write by design, with why (their annotations, name or
    /// description, or `sql_tools`).
    #[serde(default)]
    pub writers: Vec<(String, String)>,
    /// The control of each tool that answered it with a query plan: it explains SQL and
    /// runs none, so it is not a query tool and no db check judges it.
    #[serde(default)]
    pub explainers: Vec<DbCall>,
    pub controls: Vec<DbCall>,
    /// The per-role controls of the analyst and support instances.
    pub role_controls: Vec<DbCall>,
    pub writes: Vec<DbCall>,
    pub forms: Vec<DbCall>,
    pub rls: Vec<DbCall>,
    pub pii: Vec<DbCall>,
    pub masked: Vec<DbCall>,
    /// The runaway-result spellings sent, in order, per tool.
    pub row_cap: Vec<RowCapCall>,
    pub row_cap_limit: usize,
    /// The runaway-time spellings sent, in order, per tool.
    pub timeout: Vec<RunawayCall>,
    /// `db-timeout`'s limit in seconds: the longest statement limit that passes (absent
    /// from records made when the probe timeout was the limit).
    #[serde(default)]
    pub timeout_limit: Option<u64>,
    /// Each SQL tool's readOnlyHint and destructiveHint, for write-gate.
    pub annotations: Vec<(String, Option<bool>, Option<bool>)>,
    /// The audit probe: the call, and where its marker was found afterwards.
    pub audit: Vec<(DbCall, Vec<String>)>,
    /// Per instance: the role it was given and the roles the state reader saw it use,
    /// with whether any is a superuser or bypasses RLS.
    pub privilege: Vec<(DbCall, Vec<(String, bool)>)>,
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

    /// The finding when the admin checks cannot run: no SQL tool (na), or none that
    /// passed the control as sm_admin (inconclusive, never pass).
    fn admin_gate(&self) -> Option<Finding> {
        if self.tools.is_empty() {
            return Some(Finding::new(Verdict::Na, "no SQL tool", vec![]));
        }
        if self.working().is_empty() {
            return Some(Finding::new(
                Verdict::Inconclusive,
                "no SQL tool passed the control as sm_admin",
                self.control_evidence(),
            ));
        }
        None
    }

    /// Whether `tool` writes by design.
    pub fn writes(&self, tool: &str) -> bool {
        self.writers.iter().any(|(w, _)| w == tool)
    }

    /// Whether a SQL tool that does not write by design is among the judged ones.
    pub fn has_read_tool(&self) -> bool {
        self.tools.iter().any(|t| !self.writes(t))
    }

    /// The tools db-read-only and db-mutation-forms judge, and what their check line says
    /// of the others: the read tools when the server has one, a tool that writes by
    /// design left out; when every SQL tool writes by design, all of them, since then
    /// nothing on the server stops a write.
    fn read_judged(&self) -> (Vec<&str>, Option<String>) {
        let readers: Vec<&str> = self.tools.iter().map(String::as_str).filter(|t| !self.writes(t)).collect();
        if self.writers.is_empty() {
            return (readers, None);
        }
        let named: Vec<String> = self.writers.iter().map(|(t, why)| format!("{t} ({why})")).collect();
        if readers.is_empty() {
            let all = self.tools.iter().map(String::as_str).collect();
            (
                all,
                Some(format!(
                    "judged on tools that write by design, as no SQL tool is read-only: {}",
                    named.join("; ")
                )),
            )
        } else {
            let why = if named.len() == 1 { "it writes" } else { "they write" };
            (readers, Some(format!("left out, as {why} by design beside a read tool: {}", named.join("; "))))
        }
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
    let (judged, note) = obs.read_judged();
    // The line names the tools left out (or judged although they write) whatever the verdict.
    let finding = |verdict, summary: String, evidence| match &note {
        Some(n) => Finding::new(verdict, format!("{summary}; {n}"), evidence),
        None => Finding::new(verdict, summary, evidence),
    };
    if !obs.working().iter().any(|t| judged.contains(t)) {
        let whom = if judged.len() < obs.tools.len() { "read tool" } else { "SQL tool" };
        return finding(
            Verdict::Inconclusive,
            format!("no {whom} passed the control as sm_admin, so {what} could not be judged"),
            obs.control_evidence(),
        );
    }
    let calls: Vec<&DbCall> = calls.iter().filter(|c| judged.contains(&c.tool.as_str())).collect();
    let mut evidence = obs.control_evidence();
    let mut core_hits = Vec::new();
    let mut other_hits = Vec::new();
    let mut answered = 0;
    let mut unreadable = 0;
    let mut no_evidence = 0;
    for &c in &calls {
        answered += usize::from(!matches!(c.answer, Answer::Timeout | Answer::Died { .. } | Answer::NotSent { .. }));
        if matches!(c.answer, Answer::Timeout | Answer::Died { .. } | Answer::NotSent { .. }) && c.changed.is_empty() {
            // A call that timed out or lost its connection is no evidence either way.
            no_evidence += 1;
            evidence.push(c.evidence(format!("{}: no evidence", c.reply()), VerifiedBy::State, "db.no-evidence"));
        } else if let Some(why) = &c.unreadable {
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
    evidence.sort_by_key(|e| e.code.as_deref() != Some("db.changed"));
    let name = |c: &&DbCall| format!("{} on {} ({})", c.probe, c.tool, c.changed.join(", "));
    if !core_hits.is_empty() {
        let names: Vec<String> = core_hits.iter().map(name).collect();
        return finding(
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
        return finding(
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
        return finding(Verdict::Inconclusive, format!("no {what} was answered"), evidence);
    }
    if unreadable > 0 {
        return finding(
            Verdict::Inconclusive,
            format!("the state reader could not read the state after {unreadable} {what}"),
            evidence,
        );
    }
    if no_evidence > 0 {
        return finding(
            Verdict::Inconclusive,
            format!("{no_evidence} of {} {what} got no answer, which is no evidence", calls.len()),
            evidence,
        );
    }
    finding(Verdict::Pass, format!("{} {what} sent as sm_admin changed nothing", calls.len()), evidence)
}

pub fn read_only(obs: &DbObservations) -> Finding {
    judge_changes(obs, &obs.writes, "write(s)", false)
}

pub fn mutation_forms(obs: &DbObservations) -> Finding {
    judge_changes(obs, &obs.forms, "indirect mutating form(s)", true)
}

/// Whether an instance of `role` passed its own control (saw the masked view's 100 rows).
fn role_working(obs: &DbObservations, role: &str) -> bool {
    obs.role_controls
        .iter()
        .any(|c| c.role == role && matches!(&c.answer, Answer::Success { text } if text.contains("100")))
}

/// A database control tested through the server: fail when `secret` came back.
fn control_through_server(obs: &DbObservations, calls: &[DbCall], secret: &str, what: &str, plural: &str) -> Finding {
    if obs.tools.is_empty() {
        return Finding::new(Verdict::Na, "no SQL tool", vec![]);
    }
    let mut evidence = Vec::new();
    let mut leaked = Vec::new();
    let mut judged = 0;
    for c in calls {
        if !role_working(obs, &c.role) {
            evidence.push(c.evidence(
                format!("not judged: the {} instance failed its control", c.role),
                VerifiedBy::Response,
                "db.control.failed",
            ));
            continue;
        }
        if matches!(c.answer, Answer::Timeout | Answer::Died { .. } | Answer::NotSent { .. } | Answer::Silence) {
            evidence.push(c.evidence(format!("{}: no evidence", c.reply()), VerifiedBy::Response, "db.no-evidence"));
            continue;
        }
        judged += 1;
        let text = match &c.answer {
            Answer::Success { text } | Answer::ToolError { text } => text.clone(),
            Answer::RpcError { message, .. } => message.clone(),
            _ => String::new(),
        };
        if text.contains(secret) {
            leaked.push(c);
            evidence.push(c.evidence(
                format!("{what} came back to {}: {}", c.role, c.reply()),
                VerifiedBy::Response,
                "db.control.defeated",
            ));
        } else {
            evidence.push(c.evidence(
                format!("{}; none of {plural} in it", c.reply()),
                VerifiedBy::Response,
                "db.control.held",
            ));
        }
    }
    evidence.sort_by_key(|e| e.code.as_deref() != Some("db.control.defeated"));
    if let Some(first) = leaked.first() {
        return Finding::new(
            Verdict::Fail,
            format!("{what} came back to {} through {} ({})", first.role, first.tool, first.probe),
            evidence,
        );
    }
    if judged == 0 {
        return Finding::new(Verdict::Inconclusive, "no instance of the role passed its control query", evidence);
    }
    Finding::new(
        Verdict::Pass,
        format!("the database's control held: {plural} came back in none of {judged} answer(s)"),
        evidence,
    )
}

pub fn rls(obs: &DbObservations) -> Finding {
    control_through_server(
        obs,
        &obs.rls,
        RLS_SENTINEL_TEXT,
        "a tenant_b row (hidden by row-level security)",
        "tenant_b's rows",
    )
}

pub fn pii(obs: &DbObservations) -> Finding {
    control_through_server(obs, &obs.pii, EMAIL_TEXT, "a customers.email value", "the email addresses")
}

pub fn pii_masked(obs: &DbObservations) -> Finding {
    control_through_server(obs, &obs.masked, EMAIL_TEXT, "an unmasked email", "the unmasked addresses")
}

/// Sentinels of seed 0.2 (kept here so the pure judges need no runtime).
pub const RLS_SENTINEL_TEXT: &str = "sm-rls-sentinel";
pub const EMAIL_TEXT: &str = "@seed.sealmark.invalid";

pub fn row_cap(obs: &DbObservations) -> Finding {
    if let Some(f) = obs.admin_gate() {
        return f;
    }
    judge_row_cap(&obs.row_cap, obs.row_cap_limit, "db.rows.uncapped", "db.rows.capped")
}

pub fn timeout(obs: &DbObservations) -> Finding {
    if let Some(f) = obs.admin_gate() {
        return f;
    }
    judge_timeout(&obs.timeout, obs.timeout_limit, "db.time.unbounded", "db.time.stopped")
}

pub fn privilege(obs: &DbObservations) -> Finding {
    if obs.tools.is_empty() {
        return Finding::new(Verdict::Na, "no SQL tool", vec![]);
    }
    let mut evidence = Vec::new();
    let mut wrong = Vec::new();
    let mut seen_any = false;
    for (c, used) in &obs.privilege {
        if used.is_empty() {
            evidence.push(c.evidence(
                "the state reader saw no connection of the server during the call".to_string(),
                VerifiedBy::State,
                "db.privilege.unseen",
            ));
            continue;
        }
        seen_any = true;
        let names: Vec<String> = used
            .iter()
            .map(|(r, p)| if *p { format!("{r} (superuser, BYPASSRLS or owner of an RLS table)") } else { r.clone() })
            .collect();
        let bad = used.iter().any(|(r, p)| *p || r != &c.role);
        if bad {
            wrong.push(format!("the {} instance connected as {}", c.role, names.join(", ")));
        }
        evidence.push(c.evidence(
            format!("the server connected as {}", names.join(", ")),
            VerifiedBy::State,
            if bad { "db.privilege.wrong" } else { "db.privilege.exact" },
        ));
    }
    if !wrong.is_empty() {
        return Finding::new(Verdict::Fail, wrong.join("; "), evidence);
    }
    if !seen_any {
        return Finding::new(Verdict::Inconclusive, "no connection of the server was seen during its calls", evidence);
    }
    Finding::new(Verdict::Pass, "each instance connected as exactly the role it was given, none privileged", evidence)
}

pub fn write_gate(obs: &DbObservations) -> Finding {
    if let Some(f) = obs.admin_gate() {
        return f;
    }
    let mut evidence = Vec::new();
    let mut ungated = Vec::new();
    for (tool, read_only, destructive) in &obs.annotations {
        let wrote: Vec<&DbCall> = obs.writes.iter().filter(|c| &c.tool == tool && !c.changed.is_empty()).collect();
        let declared = *read_only == Some(false) || *destructive == Some(true);
        let outcome = match (wrote.is_empty(), declared) {
            (true, _) => "every direct write was refused: writing is off".to_string(),
            (false, true) => format!(
                "{} write(s) executed; the tool declares that it writes (readOnlyHint false or destructiveHint true)",
                wrote.len()
            ),
            (false, false) => {
                ungated.push(tool.clone());
                format!("{} write(s) executed through a tool that does not declare it writes", wrote.len())
            }
        };
        let mut e =
            Evidence::new(format!("annotations of {tool}"), outcome, VerifiedBy::Metadata).tool(tool).code("db.gate");
        e.role = Some("admin".to_string());
        evidence.push(e);
    }
    if !ungated.is_empty() {
        return Finding::new(
            Verdict::Fail,
            format!("writes executed with no gate a client could see, through {}", ungated.join(", ")),
            evidence,
        );
    }
    Finding::new(Verdict::Pass, "writes are refused, or declared by the tool's annotations", evidence)
}

pub fn audit(obs: &DbObservations) -> Finding {
    if obs.tools.is_empty() {
        return Finding::new(Verdict::Na, "no SQL tool", vec![]);
    }
    let mut evidence = Vec::new();
    let mut audited = 0;
    for (c, found) in &obs.audit {
        if found.is_empty() {
            evidence.push(c.evidence(
                format!("{}; the statement appears neither in the server log nor in audit_probe", c.reply()),
                VerifiedBy::Log,
                "db.audit.none",
            ));
        } else {
            audited += 1;
            evidence.push(c.evidence(
                format!("{}; the statement was recorded in {}", c.reply(), found.join(" and ")),
                VerifiedBy::Log,
                "db.audit.found",
            ));
        }
    }
    if obs.audit.is_empty() {
        return Finding::new(Verdict::Inconclusive, "no audit probe was sent", evidence);
    }
    if audited == obs.audit.len() {
        Finding::new(Verdict::Pass, "the statement was recorded", evidence)
    } else {
        Finding::new(
            Verdict::Fail,
            "no audit trail of the statement: not in the server log, not in audit_probe",
            evidence,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::db::ROW_CAP_PROBES;

    fn call(answer: Answer, changed: &[&str]) -> DbCall {
        DbCall {
            probe: "insert".into(),
            tool: "query".into(),
            role: "sm_admin".into(),
            arg: "sql".into(),
            shape: SqlShape::String,
            sql: "INSERT …".into(),
            answer,
            changed: changed.iter().map(|s| s.to_string()).collect(),
            core: true,
            unreadable: None,
        }
    }

    fn obs(writes: Vec<DbCall>) -> DbObservations {
        DbObservations {
            tools: vec!["query".into()],
            controls: vec![call(Answer::Success { text: "100 sm_admin".into() }, &[])],
            writes,
            ..Default::default()
        }
    }

    #[test]
    fn a_call_that_timed_out_is_no_evidence() {
        let f = read_only(&obs(vec![
            call(Answer::ToolError { text: "read-only".into() }, &[]),
            call(Answer::Timeout, &[]),
        ]));
        assert_eq!(f.verdict, Verdict::Inconclusive, "{}", f.summary);
        let f = read_only(&obs(vec![call(Answer::Timeout, &["probe_t gained a row (x)"])]));
        assert_eq!(f.verdict, Verdict::Fail, "a change is proof even without an answer");
    }

    #[test]
    fn marked_rows_count_distinct_numbers_without_the_echoed_statement() {
        let sql = ROW_CAP_PROBES[0].sends;
        let text = format!("statement: {sql}\nr=sm-row-1\nr=sm-row-2\nsm-row-2");
        assert_eq!(marked_rows(&text, sql), 2);
    }

    fn rowcap(answer: Answer, rows: usize) -> RowCapCall {
        RowCapCall {
            call: DbCall { sql: ROW_CAP_PROBES[0].sends.into(), ..call(answer, &[]) },
            rows,
            produces: 100_000,
        }
    }

    #[test]
    fn a_runaway_refused_for_its_form_decides_nothing() {
        let refused = rowcap(Answer::Success { text: "Error: Only SELECT queries are allowed".into() }, 0);
        assert!(!row_cap_step(&refused, 1000).decided());
        let sized = rowcap(Answer::ToolError { text: "result exceeds the 1000-row limit".into() }, 0);
        assert_eq!(
            row_cap_step(&sized, 1000),
            Step::Decided(
                Verdict::Pass,
                "refused for its size: refused with isError: \"result exceeds the 1000-row limit\"".into()
            )
        );
        assert!(matches!(
            row_cap_step(&rowcap(Answer::Success { text: String::new() }, 1001), 1000),
            Step::Decided(Verdict::Fail, _)
        ));
        assert!(matches!(
            row_cap_step(&rowcap(Answer::Success { text: String::new() }, 1000), 1000),
            Step::Decided(Verdict::Pass, _)
        ));
        let f = judge_row_cap(&[refused.clone(), refused], 1000, "f", "ok");
        assert_eq!(f.verdict, Verdict::Inconclusive, "{}", f.summary);
    }

    #[test]
    fn a_runaway_answered_at_once_without_running_is_refused_for_its_form() {
        let at = |answer, ran| RunawayCall { call: call(answer, &[]), ran, seconds: None };
        assert!(
            !timeout_step(&at(Answer::ToolError { text: "function pg_sleep is not allowed".into() }, false), None)
                .decided()
        );
        assert!(matches!(
            timeout_step(&at(Answer::ToolError { text: "boom".into() }, true), None),
            Step::Decided(Verdict::Pass, _)
        ));
        let cancelled = at(Answer::ToolError { text: "canceling statement due to statement timeout".into() }, false);
        assert!(matches!(timeout_step(&cancelled, None), Step::Decided(Verdict::Pass, _)));
        assert!(matches!(timeout_step(&at(Answer::Timeout, false), None), Step::Decided(Verdict::Fail, _)));
        assert!(!timeout_step(&at(Answer::NotSent { reason: "x".into() }, false), None).decided());
    }

    #[test]
    fn a_json_rpc_error_is_a_refusal() {
        let f = read_only(&obs(vec![call(Answer::RpcError { code: -32000, message: "no".into() }, &[])]));
        assert_eq!(f.verdict, Verdict::Pass);
    }

    #[test]
    fn a_failed_control_is_never_a_pass() {
        let mut o = obs(vec![call(Answer::ToolError { text: "x".into() }, &[])]);
        o.controls = vec![call(Answer::ToolError { text: "cannot connect".into() }, &[])];
        assert_eq!(read_only(&o).verdict, Verdict::Inconclusive);
    }
}
