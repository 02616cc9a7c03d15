//! Collects what the db pack judges: the control query and the write probes, sent to a
//! server instance started as sm_admin, with the state reader before and after each.

use super::call::call_answer;
use crate::classify::{Class, Classification, classify_declared};
use crate::config::{Problem, SqlShape};
use crate::judge::Answer;
use crate::judge::db::{
    AUDIT_MARKER, CONTROL_SQL, CORE_FORMS, DbCall, DbObservations, ROLE_CONTROL_SQL, ROW_CAP_ROWS, RUNAWAY_GRACE_SEC,
    RUNAWAY_MARKER, RowCapCall, RunawayCall, row_cap_step, timeout_step,
};
use crate::registry::db::{
    AUDIT_PROBE, FORM_PROBES, MASKED_PROBES, PII_PROBES, PRIVILEGE_PROBE, RLS_PROBE, ROW_CAP_PROBES, TIMEOUT_PROBES,
    WRITE_PROBES,
};
use crate::session::runner::{Live, Runner};
use crate::targets::RunError;
use crate::targets::seed::Seed;
use crate::tools::ToolInfo;
use serde_json::{Map, Value};

const ROLE: &str = "sm_admin";

/// A control answer that is a query plan (`EXPLAIN`'s text or JSON), not rows.
static PLAN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#"(?i)query plan|"node type"|\bcost=\d|\bseq scan\b|\binitplan\b"#).expect("valid")
});

/// Starts the server once per role and sends each role its probes: the control, writes,
/// indirect forms, a runaway result and a runaway query as sm_admin; the database
/// controls as sm_analyst and sm_support; and, for every instance, the privilege probe.
/// The SQL tools are those of the main session's classification (`tools` as aimed, and
/// `classes`), so an instance that lists its tools in another order or other words
/// keeps them; only when the main session listed none does the first instance list them.
pub async fn collect(
    runner: &mut Runner<'_>,
    seed: &Seed,
    tools: &[ToolInfo],
    classes: &[Classification],
) -> Result<DbObservations, RunError> {
    let mut obs = DbObservations {
        row_cap_limit: runner.config.setting_u64("db-row-cap", "row_cap") as usize,
        timeout_limit: Some(runner.config.setting_u64("db-timeout", "limit_sec")),
        ..Default::default()
    };
    let mut targets = if tools.is_empty() { None } else { Some(sql_targets(runner, tools, classes, "db")?) };
    if let Some(t) = &targets {
        note_tools(&mut obs, tools, t, runner.config);
    }
    let saved = runner.vars.clone();
    for role in [ROLE, "sm_analyst", "sm_support"] {
        runner.vars = seed.placeholders(role);
        let Ok(mut live) = runner.launch().await else { continue };
        let (handshake, caps) = live.session.handshake().await;
        if caps.is_none() {
            if let crate::judge::core::HandshakeObs::NoAnswer { reason } = handshake {
                runner.gaps.push(format!("db: the server started as {role} did not complete the handshake ({reason})"));
            }
            runner.retire(&mut live).await;
            continue;
        }
        runner.begin_pack(&mut live, "db").await;
        if targets.is_none() {
            match discover(runner, &mut live, &mut obs).await {
                Ok(t) => targets = Some(t),
                Err(e) => {
                    runner.retire(&mut live).await;
                    runner.vars = saved;
                    return Err(e);
                }
            }
        }
        let all = targets.as_deref().unwrap_or_default();
        if role == ROLE {
            // Every control first: a tool that only explains SQL is set aside before any
            // probe, and the write tools are known to stand beside a read tool or not.
            for target in all {
                let mut c = Ctx { runner, live: &mut live, seed, target, role, caveats: &mut obs.caveats };
                let control = c.send("control", CONTROL_SQL, false).await;
                if explains(&control) {
                    runner.gaps.push(format!(
                        "{}: its control answered with a query plan, not rows: it explains SQL and runs none, so no db check judges it",
                        target.tool
                    ));
                    set_aside(&mut obs, control);
                } else {
                    obs.controls.push(control);
                }
            }
            for (tool, why) in obs.writers.iter().filter(|_| obs.has_read_tool()) {
                runner.gaps.push(format!(
                    "{tool}: a SQL tool that writes by design ({why}); db-read-only and db-mutation-forms judge the read tools and leave it out"
                ));
            }
        }
        let readers = obs.has_read_tool();
        let queried: Vec<&Target> = all.iter().filter(|t| obs.tools.contains(&t.tool)).collect();
        for target in queried {
            let tool = &target.tool;
            let caveats = &mut obs.caveats;
            let mut c = Ctx { runner, live: &mut live, seed, target, role, caveats };
            if role != ROLE {
                obs.role_controls.push(c.send("control", ROLE_CONTROL_SQL, false).await);
            }
            let admin_ok = obs.controls.iter().any(|x| {
                &x.tool == tool
                    && matches!(&x.answer, Answer::Success { text } if text.contains("100") && text.contains(ROLE))
            });
            match role {
                ROLE if admin_ok => {
                    // Writes go to every tool (write-gate reads what a writer did); the
                    // indirect forms only to the tools db-mutation-forms judges.
                    for p in &WRITE_PROBES {
                        obs.writes.push(c.send(p.name, p.sends, true).await);
                    }
                    if target.writer.is_none() || !readers {
                        for (i, p) in FORM_PROBES.iter().enumerate() {
                            let mut call = c.send(p.name, p.sends, true).await;
                            call.core = i < CORE_FORMS;
                            obs.forms.push(call);
                        }
                    }
                    let limit = obs.row_cap_limit;
                    for (p, produces) in ROW_CAP_PROBES.iter().zip(ROW_CAP_ROWS) {
                        let probe = RowCapCall::counted(c.send(p.name, p.sends, false).await, p.sends, produces);
                        let decided = row_cap_step(&probe, limit).decided();
                        obs.row_cap.push(probe);
                        if decided {
                            break;
                        }
                    }
                    for p in &TIMEOUT_PROBES {
                        let probe = c.runaway(p.name, p.sends, obs.timeout_limit.unwrap_or_default()).await;
                        let decided = timeout_step(&probe, obs.timeout_limit).decided();
                        obs.timeout.push(probe);
                        if decided {
                            break;
                        }
                    }
                    let call = c.send(AUDIT_PROBE.name, AUDIT_PROBE.sends, false).await;
                    let mut found = Vec::new();
                    if let Some(p) = &c.live.process
                        && String::from_utf8_lossy(&p.log_snapshot().0).contains(AUDIT_MARKER)
                    {
                        found.push("the server log".to_string());
                    }
                    if c.seed.audit_rows_with(AUDIT_MARKER).await.unwrap_or(0) > 0 {
                        found.push("audit_probe".to_string());
                    }
                    obs.audit.push((call, found));
                }
                "sm_analyst" => {
                    obs.rls.push(c.send(RLS_PROBE.name, RLS_PROBE.sends, false).await);
                    for p in &PII_PROBES {
                        obs.pii.push(c.send(p.name, p.sends, false).await);
                    }
                }
                "sm_support" => {
                    obs.rls.push(c.send(RLS_PROBE.name, RLS_PROBE.sends, false).await);
                    for p in &MASKED_PROBES {
                        obs.masked.push(c.send(p.name, p.sends, false).await);
                    }
                }
                _ => {}
            }
            let privilege = c.privilege().await;
            obs.privilege.push(privilege);
        }
        runner.retire(&mut live).await;
    }
    runner.vars = saved;
    Ok(obs)
}

/// Whether a control was answered with a query plan instead of its row.
fn explains(control: &DbCall) -> bool {
    matches!(&control.answer, Answer::Success { text } if !text.contains(ROLE) && PLAN.is_match(text))
}

/// Takes a tool whose control was answered with a plan out of every list a judge reads,
/// and keeps that control as the reason.
fn set_aside(obs: &mut DbObservations, control: DbCall) {
    obs.tools.retain(|t| t != &control.tool);
    obs.writers.retain(|(t, _)| t != &control.tool);
    obs.annotations.retain(|(t, _, _)| t != &control.tool);
    obs.explainers.push(control);
}

/// A SQL tool to aim: its SQL argument, values for its other required arguments, and
/// why it writes by design, when it does.
pub(super) struct Target {
    pub tool: String,
    pub param: String,
    /// Whether `param` takes one string or a list of statements.
    pub shape: SqlShape,
    pub extra: Map<String, Value>,
    pub writer: Option<String>,
}

impl Target {
    /// The arguments of a call that sends `sql`: the tool's other arguments, and `sql`
    /// in the form `param` takes.
    pub fn args(&self, sql: &str) -> Map<String, Value> {
        let mut args = self.extra.clone();
        args.insert(self.param.clone(), self.shape.wrap(sql));
        args
    }
}

/// Books the SQL tools in the observations: each one, the writers with why, and the
/// annotations write-gate reads (when classification found them).
fn note_tools(obs: &mut DbObservations, tools: &[ToolInfo], targets: &[Target], config: &crate::config::Config) {
    for target in targets {
        obs.tools.push(target.tool.clone());
        if let Some(why) = &target.writer {
            obs.writers.push((target.tool.clone(), why.clone()));
        }
        if config.sql_tools.is_empty()
            && let Some(t) = tools.iter().find(|t| t.name == target.tool)
        {
            obs.annotations.push((t.name.clone(), t.hint("readOnlyHint"), t.hint("destructiveHint")));
        }
    }
}

/// The db pack's SQL tools from the instance's own listing, when the main session had none.
async fn discover(runner: &mut Runner<'_>, live: &mut Live, obs: &mut DbObservations) -> Result<Vec<Target>, RunError> {
    let (raw, _, _) = live.session.list_all("tools/list", "tools").await;
    let tools: Vec<ToolInfo> =
        raw.iter().map(ToolInfo::from_value).filter(|t| runner.config.tools.keeps(&t.name)).collect();
    let classes: Vec<Classification> = tools.iter().map(|t| classify_declared(t, &runner.config.classify)).collect();
    let targets = sql_targets(runner, &tools, &classes, "db")?;
    note_tools(obs, &tools, &targets, runner.config);
    Ok(targets)
}

/// What the tool list refutes in `sql_tools`: an entry naming a tool the server does not
/// declare, or an argument that is not one of its arguments of the entry's shape.
pub fn sql_tools_problems(config: &crate::config::Config, tools: &[ToolInfo]) -> Vec<Problem> {
    let mut problems = Vec::new();
    // An entry without tool or arg was refused as written.
    for (i, entry) in config.sql_tools.iter().enumerate().filter(|(_, e)| !e.tool.is_empty() && !e.arg.is_empty()) {
        let Some(t) = tools.iter().find(|t| t.name == entry.tool) else {
            let hint = crate::registry::did_you_mean_hint(&entry.tool, tools.iter().map(|t| t.name.as_str()));
            let message = format!("the server declares no tool \"{}\"{hint}", entry.tool);
            problems.push(Problem::at(entry.line, format!("sql_tools[{i}].tool"), message));
            continue;
        };
        let ty = entry.shape.json_type();
        let found = t.param_type(&entry.arg);
        if found != Some(ty) {
            let fitting: Vec<&str> = t.params.iter().filter(|(_, p)| p == ty).map(|(n, _)| n.as_str()).collect();
            let shape = match found {
                Some("array") => " (it is an array: say shape: array)",
                Some("string") => " (it is a string: leave shape out, or say shape: string)",
                _ => "",
            };
            let message = format!(
                "{} has no {ty} argument \"{}\"{shape} (its {ty} arguments: {})",
                t.name,
                entry.arg,
                if fitting.is_empty() { "none".to_string() } else { fitting.join(", ") }
            );
            problems.push(Problem::at(entry.arg_line, format!("sql_tools[{i}].arg"), message));
        }
    }
    problems
}

/// The SQL tools of the server: `sql_tools` when the config gives it (each entry checked
/// against what the server declares; a wrong one is a config error), else those the
/// classification (`classes`, one per tool) places as sql with no other required
/// argument. Each says whether it writes by design; tools left out are named as gaps
/// of `pack`.
pub(super) fn sql_targets(
    runner: &mut Runner<'_>,
    tools: &[ToolInfo],
    classes: &[Classification],
    pack: &str,
) -> Result<Vec<Target>, RunError> {
    let mut targets = Vec::new();
    if !runner.config.sql_tools.is_empty() {
        let problems = sql_tools_problems(runner.config, tools);
        if !problems.is_empty() {
            return Err(super::refused(runner.config, problems));
        }
        for entry in &runner.config.sql_tools {
            let Some(t) = tools.iter().find(|t| t.name == entry.tool) else { continue };
            let missing: Vec<&str> = t
                .required
                .iter()
                .filter(|r| **r != entry.arg && !entry.args.contains_key(*r))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                runner.gaps.push(format!(
                    "{}: sql_tools gives no value for required {}; not probed by the {pack} pack",
                    t.name,
                    missing.join(", ")
                ));
                continue;
            }
            targets.push(Target {
                tool: t.name.clone(),
                param: entry.arg.clone(),
                shape: entry.shape,
                extra: entry.args.clone().into_iter().collect(),
                writer: entry.writer.then(|| "sql_tools role: writer".to_string()),
            });
        }
        return Ok(targets);
    }
    for (t, class) in tools.iter().zip(classes) {
        if class.class != Class::Sql {
            continue;
        }
        let Some(param) = class.param.clone() else { continue };
        let others: Vec<&str> = t.required.iter().filter(|r| **r != param).map(String::as_str).collect();
        if others.is_empty() {
            let writer = crate::classify::sql_writes(t, &runner.config.classify);
            targets.push(Target { tool: t.name.clone(), param, shape: SqlShape::String, extra: Map::new(), writer });
        } else {
            runner.gaps.push(format!(
                "{}: looks like SQL but requires {} too; not probed by the {pack} pack",
                t.name,
                others.join(", ")
            ));
        }
    }
    Ok(targets)
}

/// What one SQL call needs: the instance, the tool and the role it runs as.
struct Ctx<'c, 'r, 'a> {
    runner: &'c mut Runner<'r>,
    live: &'c mut Live,
    seed: &'c Seed,
    target: &'a Target,
    role: &'a str,
    caveats: &'c mut Vec<String>,
}

impl Ctx<'_, '_, '_> {
    fn call(&self, probe: &str, sql: &str) -> DbCall {
        DbCall {
            probe: probe.to_string(),
            tool: self.target.tool.clone(),
            role: self.role.to_string(),
            arg: self.target.param.clone(),
            shape: self.target.shape,
            sql: sql.to_string(),
            answer: Answer::Silence,
            changed: vec![],
            core: false,
            unreadable: None,
        }
    }

    fn args(&self, sql: &str) -> Value {
        Value::Object(self.target.args(sql))
    }

    async fn send(&mut self, probe: &str, sql: &str, reset: bool) -> DbCall {
        let mut call = self.call(probe, sql);
        if let Some(held) = self.runner.held(self.live).await {
            call.answer = held.not_sent();
            return call;
        }
        let before = self.seed.state().await;
        let what = format!("{probe} on {}", self.target.tool);
        let reply = self.runner.send_call(self.live, &self.target.tool, self.args(sql), &what, true).await;
        call.answer = call_answer(Ok(reply));
        match (before, self.seed.state().await) {
            (Ok(before), Ok(after)) => call.changed = after.changes_since(&before),
            (Err(e), _) | (_, Err(e)) => call.unreadable = Some(e),
        }
        if reset {
            match self.seed.reset().await {
                Ok(Some(caveat)) if !self.caveats.contains(&caveat) => self.caveats.push(caveat),
                Ok(_) => {}
                Err(e) => self.caveats.push(format!("the state reader could not reset the scratch state: {e}")),
            }
        }
        call
    }

    /// A runaway-time spelling: a bounded server stops it within `limit` seconds, so the
    /// harness waits that long and a little more (or the probe timeout, when longer),
    /// and times the answer. The state reader watches for the statement running
    /// meanwhile (a refusal for its form never runs), and cancels it afterwards. This
    /// expected timeout does not spend the pack's budget of unanswered calls.
    async fn runaway(&mut self, probe: &str, sql: &str, limit: u64) -> RunawayCall {
        let mut call = self.call(probe, sql);
        if let Some(held) = self.runner.held(self.live).await {
            call.answer = held.not_sent();
            return RunawayCall { call, ran: false, seconds: None };
        }
        let args = self.args(sql);
        let wait = self.runner.timeout.max(std::time::Duration::from_secs(limit + RUNAWAY_GRACE_SEC));
        // Both futures run in this task, so a Cell tells the watch the call is over.
        let done = std::cell::Cell::new(false);
        let sent = std::time::Instant::now();
        let request = async {
            let reply = self.runner.send_call_within(self.live, &self.target.tool, args, probe, false, wait).await;
            done.set(true);
            reply
        };
        let seed = self.seed;
        let watch = async {
            for _ in 0..20 {
                if done.get() {
                    break;
                }
                if !seed.roles_running(RUNAWAY_MARKER).await.unwrap_or_default().is_empty() {
                    return true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            false
        };
        let (reply, ran) = tokio::join!(request, watch);
        call.answer = call_answer(Ok(reply));
        let seconds = call.answer.was_answered().then(|| sent.elapsed().as_secs());
        let _ = self.seed.cancel_runaways().await;
        RunawayCall { call, ran, seconds }
    }

    /// Runs a short sleep through the tool while the state reader looks at which roles
    /// the server's connections use.
    async fn privilege(&mut self) -> (DbCall, Vec<(String, bool)>) {
        let mut call = self.call(PRIVILEGE_PROBE.name, PRIVILEGE_PROBE.sends);
        if let Some(held) = self.runner.held(self.live).await {
            call.answer = held.not_sent();
            return (call, vec![]);
        }
        let args = self.args(PRIVILEGE_PROBE.sends);
        let request = self.runner.send_call(self.live, &self.target.tool, args, "privilege", true);
        let seed = self.seed;
        let watch = async {
            let mut seen: Vec<(String, bool)> = Vec::new();
            for _ in 0..8 {
                tokio::time::sleep(std::time::Duration::from_millis(60)).await;
                for r in seed.roles_running("sm-privilege").await.unwrap_or_default() {
                    if !seen.contains(&r) {
                        seen.push(r);
                    }
                }
            }
            seen
        };
        let (reply, mut seen) = tokio::join!(request, watch);
        seen.sort();
        call.answer = call_answer(Ok(reply));
        (call, seen)
    }
}
