//! Collects what the db pack judges: the control query and the write probes, sent to a
//! server instance started as sm_admin, with the state reader before and after each.

use super::call::call_answer;
use crate::classify::classify_declared;
use crate::judge::Answer;
use crate::judge::db::{
    AUDIT_MARKER, CONTROL_SQL, CORE_FORMS, DbCall, DbObservations, ROLE_CONTROL_SQL, ROW_CAP_ROWS, RUNAWAY_MARKER,
    RowCapCall, RunawayCall, row_cap_step, timeout_step,
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

/// Starts the server once per role and sends each role its probes: the control, writes,
/// indirect forms, a runaway result and a runaway query as sm_admin; the database
/// controls as sm_analyst and sm_support; and, for every instance, the privilege probe.
pub async fn collect(runner: &mut Runner<'_>, seed: &Seed) -> Result<DbObservations, RunError> {
    let mut obs = DbObservations {
        row_cap_limit: runner.config.setting_u64("db-row-cap", "row_cap") as usize,
        ..Default::default()
    };
    let saved = runner.vars.clone();
    let mut targets: Vec<Target> = Vec::new();
    // Admin first: it discovers the SQL tools and runs the control that gates the rest.
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
        if role == ROLE {
            targets = match discover(runner, &mut live, &mut obs).await {
                Ok(t) => t,
                Err(e) => {
                    runner.retire(&mut live).await;
                    runner.vars = saved;
                    return Err(e);
                }
            };
        }
        let caveats = &mut obs.caveats;
        for target in &targets {
            let tool = &target.tool;
            let mut c =
                Ctx { runner, live: &mut live, seed, tool, param: &target.param, extra: &target.extra, role, caveats };
            if role == ROLE {
                obs.controls.push(c.send("control", CONTROL_SQL, false).await);
            } else {
                obs.role_controls.push(c.send("control", ROLE_CONTROL_SQL, false).await);
            }
            let admin_ok = obs.controls.iter().any(|x| {
                &x.tool == tool
                    && matches!(&x.answer, Answer::Success { text } if text.contains("100") && text.contains(ROLE))
            });
            match role {
                ROLE if admin_ok => {
                    for p in &WRITE_PROBES {
                        obs.writes.push(c.send(p.name, p.sends, true).await);
                    }
                    for (i, p) in FORM_PROBES.iter().enumerate() {
                        let mut call = c.send(p.name, p.sends, true).await;
                        call.core = i < CORE_FORMS;
                        obs.forms.push(call);
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
                        let probe = c.runaway(p.name, p.sends).await;
                        let decided = timeout_step(&probe).decided();
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

/// A SQL tool to aim: its SQL argument and values for its other required arguments.
pub(super) struct Target {
    pub tool: String,
    pub param: String,
    pub extra: Map<String, Value>,
}

/// The db pack's SQL tools, with their annotations for write-gate when classification
/// found them.
async fn discover(runner: &mut Runner<'_>, live: &mut Live, obs: &mut DbObservations) -> Result<Vec<Target>, RunError> {
    let (raw, _, _) = live.session.list_all("tools/list", "tools").await;
    let tools: Vec<ToolInfo> =
        raw.iter().map(ToolInfo::from_value).filter(|t| runner.config.tools.keeps(&t.name)).collect();
    let targets = sql_targets(runner, &tools, "db")?;
    for target in &targets {
        obs.tools.push(target.tool.clone());
        if runner.config.sql_tools.is_empty()
            && let Some(t) = tools.iter().find(|t| t.name == target.tool)
        {
            obs.annotations.push((t.name.clone(), t.hint("readOnlyHint"), t.hint("destructiveHint")));
        }
    }
    Ok(targets)
}

/// What the tool list refutes in `sql_tools`: an entry naming a tool the server does not
/// declare, or an argument that is not one of its string arguments.
pub fn sql_tools_problems(config: &crate::config::Config, tools: &[ToolInfo]) -> Vec<String> {
    let file = config.file.clone().unwrap_or_else(|| "sealmark.yaml".to_string());
    let mut problems = Vec::new();
    for (i, entry) in config.sql_tools.iter().enumerate() {
        let Some(t) = tools.iter().find(|t| t.name == entry.tool) else {
            let hint = crate::registry::did_you_mean(&entry.tool, tools.iter().map(|t| t.name.as_str()))
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            problems.push(format!(
                "{file}:{}: sql_tools[{i}].tool: the server declares no tool \"{}\"{hint}",
                entry.line, entry.tool
            ));
            continue;
        };
        if t.param_type(&entry.arg) != Some("string") {
            let strings: Vec<&str> =
                t.params.iter().filter(|(_, ty)| ty == "string").map(|(n, _)| n.as_str()).collect();
            problems.push(format!(
                "{file}:{}: sql_tools[{i}].arg: {} has no string argument \"{}\" (its string arguments: {})",
                entry.arg_line,
                t.name,
                entry.arg,
                if strings.is_empty() { "none".to_string() } else { strings.join(", ") }
            ));
        }
    }
    problems
}

/// The SQL tools of the server: `sql_tools` when the config gives it (each entry checked
/// against what the server declares; a wrong one is a config error), else those the
/// classification places as sql with no other required argument. Tools left out are
/// named as gaps of `pack`.
pub(super) fn sql_targets(runner: &mut Runner<'_>, tools: &[ToolInfo], pack: &str) -> Result<Vec<Target>, RunError> {
    let mut targets = Vec::new();
    if !runner.config.sql_tools.is_empty() {
        let problems = sql_tools_problems(runner.config, tools);
        if !problems.is_empty() {
            return Err(RunError::Setup(problems.join("\n")));
        }
        for entry in &runner.config.sql_tools {
            if entry.writer {
                runner.gaps.push(format!(
                    "{}: a SQL tool that writes by design (sql_tools role: writer); the {pack} pack judges read tools only",
                    entry.tool
                ));
                continue;
            }
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
                extra: entry.args.clone().into_iter().collect(),
            });
        }
        return Ok(targets);
    }
    for t in tools {
        let class = classify_declared(t, &runner.config.classify);
        if class.class != "sql" {
            continue;
        }
        let Some(param) = class.param else { continue };
        if let Some(why) = crate::classify::sql_writes(t, &runner.config.classify) {
            runner.gaps.push(format!(
                "{}: a SQL tool that writes by design ({why}); the {pack} pack judges read tools only",
                t.name
            ));
            continue;
        }
        let others: Vec<&str> = t.required.iter().filter(|r| **r != param).map(String::as_str).collect();
        if others.is_empty() {
            targets.push(Target { tool: t.name.clone(), param, extra: Map::new() });
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
    tool: &'a str,
    param: &'a str,
    role: &'a str,
    extra: &'a Map<String, Value>,
    caveats: &'c mut Vec<String>,
}

impl Ctx<'_, '_, '_> {
    fn call(&self, probe: &str, sql: &str) -> DbCall {
        DbCall {
            probe: probe.to_string(),
            tool: self.tool.to_string(),
            role: self.role.to_string(),
            sql: sql.to_string(),
            answer: Answer::Silence,
            changed: vec![],
            core: false,
            unreadable: None,
        }
    }

    fn args(&self, sql: &str) -> Value {
        let mut args = self.extra.clone();
        args.insert(self.param.to_string(), Value::String(sql.to_string()));
        Value::Object(args)
    }

    async fn send(&mut self, probe: &str, sql: &str, reset: bool) -> DbCall {
        let mut call = self.call(probe, sql);
        if let Some(held) = self.runner.held(self.live).await {
            call.answer = held.not_sent();
            return call;
        }
        let before = self.seed.state().await;
        let what = format!("{probe} on {}", self.tool);
        let reply = self.runner.send_call(self.live, self.tool, self.args(sql), &what, true).await;
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

    /// A runaway-time spelling: a bounded server answers before the probe timeout. The
    /// state reader watches for the statement running meanwhile (a refusal for its form
    /// never runs), and cancels it afterwards. This expected timeout does not spend the
    /// pack's budget of unanswered calls.
    async fn runaway(&mut self, probe: &str, sql: &str) -> RunawayCall {
        let mut call = self.call(probe, sql);
        if let Some(held) = self.runner.held(self.live).await {
            call.answer = held.not_sent();
            return RunawayCall { call, ran: false };
        }
        let args = self.args(sql);
        // Both futures run in this task, so a Cell tells the watch the call is over.
        let done = std::cell::Cell::new(false);
        let request = async {
            let reply = self.runner.send_call(self.live, self.tool, args, probe, false).await;
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
        let _ = self.seed.cancel_runaways().await;
        RunawayCall { call, ran }
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
        let request = self.runner.send_call(self.live, self.tool, args, "privilege", true);
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
