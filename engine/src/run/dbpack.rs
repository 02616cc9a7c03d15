//! Collects what the db pack judges: the control query and the write probes, sent to a
//! server instance started as sm_admin, with the state reader before and after each.

use super::core::{self as core_collect, MAX_TIMEOUTS, call_text};
use super::seed::Seed;
use super::session::Reply;
use super::{Live, Runner};
use crate::classify::classify;
use crate::judge::core::Answer;
use crate::judge::db::{CONTROL_SQL, CORE_FORMS, DbCall, DbObservations, FORM_PROBES, WRITE_PROBES};
use crate::tools::ToolInfo;
use serde_json::{Map, Value, json};

const ROLE: &str = "sm_admin";

/// Starts the server as sm_admin and sends the db probes to every SQL tool.
pub async fn collect(runner: &mut Runner<'_>, seed: &mut Seed) -> DbObservations {
    let mut obs = DbObservations::default();
    let saved = std::mem::replace(&mut runner.vars, seed.placeholders(ROLE));
    let Ok(mut live) = runner.launch().await else {
        runner.vars = saved;
        return obs;
    };
    let (handshake, caps) = core_collect::open(&mut live.session).await;
    if caps.is_some() {
        let (raw, _, _) = live.session.list_all("tools/list", "tools").await;
        let tools: Vec<ToolInfo> =
            raw.iter().map(ToolInfo::from_value).filter(|t| runner.config.tools.keeps(&t.name)).collect();
        let mut targets = Vec::new();
        for t in &tools {
            let class = classify(t);
            if class.class != "sql" {
                continue;
            }
            let Some(param) = class.param else { continue };
            let others: Vec<&str> = t.required.iter().filter(|r| **r != param).map(String::as_str).collect();
            if others.is_empty() {
                obs.tools.push(t.name.clone());
                targets.push((t.name.clone(), param));
            } else {
                runner.gaps.push(format!(
                    "{}: looks like SQL but requires {} too; not probed by the db pack",
                    t.name,
                    others.join(", ")
                ));
            }
        }
        for (tool, param) in &targets {
            obs.controls.push(
                send(runner, &mut live, seed, "control", tool, param, CONTROL_SQL, false, &mut obs.caveats).await,
            );
        }
        let working: Vec<String> = obs.working().iter().map(|s| s.to_string()).collect();
        for (tool, param) in targets.iter().filter(|(t, _)| working.contains(t)) {
            for p in &WRITE_PROBES {
                let call = send(runner, &mut live, seed, p.name, tool, param, p.sends, true, &mut obs.caveats).await;
                obs.writes.push(call);
            }
            for (i, p) in FORM_PROBES.iter().enumerate() {
                let mut call =
                    send(runner, &mut live, seed, p.name, tool, param, p.sends, true, &mut obs.caveats).await;
                call.core = i < CORE_FORMS;
                obs.forms.push(call);
            }
        }
    } else if let crate::judge::core::HandshakeObs::NoAnswer { reason } = handshake {
        runner.gaps.push(format!("db: the server started as {ROLE} did not complete the handshake ({reason})"));
    }
    runner.retire(&mut live).await;
    runner.vars = saved;
    obs
}

/// One SQL call between two readings of the state, then a reset.
#[expect(clippy::too_many_arguments, reason = "one call's context, used in three places")]
async fn send(
    runner: &mut Runner<'_>,
    live: &mut Live,
    seed: &mut Seed,
    probe: &str,
    tool: &str,
    param: &str,
    sql: &str,
    reset: bool,
    caveats: &mut Vec<String>,
) -> DbCall {
    let mut call = DbCall {
        probe: probe.to_string(),
        tool: tool.to_string(),
        role: ROLE.to_string(),
        sql: sql.to_string(),
        answer: Answer::NotSent { reason: format!("{MAX_TIMEOUTS} earlier calls went unanswered") },
        changed: vec![],
        core: false,
        unreadable: None,
    };
    if runner.timeouts >= MAX_TIMEOUTS {
        return call;
    }
    if live.gone.is_some() && !runner.relaunch(live).await {
        call.answer = Answer::Died { reason: live.gone.clone().unwrap_or_default() };
        return call;
    }
    let before = seed.state().await;
    let mut args = Map::new();
    args.insert(param.to_string(), Value::String(sql.to_string()));
    let reply = live
        .session
        .request("tools/call", json!({"name": tool, "arguments": args}), &format!("{probe} on {tool}"))
        .await;
    call.answer = match reply {
        Reply::Result(r) => {
            let (text, is_error) = call_text(&r);
            let text = crate::judge::text::clip(&text, 2000);
            if is_error { Answer::ToolError { text } } else { Answer::Success { text } }
        }
        Reply::Error { code, message } => Answer::RpcError { code, message },
        Reply::Timeout => {
            runner.timeouts += 1;
            Answer::Timeout
        }
        Reply::Silence => Answer::Silence,
        Reply::Gone(why) => {
            live.gone = Some(why.clone());
            Answer::Died { reason: why }
        }
    };
    match (before, seed.state().await) {
        (Ok(before), Ok(after)) => call.changed = after.changes_since(&before),
        (Err(e), _) | (_, Err(e)) => call.unreadable = Some(e),
    }
    if reset {
        match seed.reset().await {
            Ok(Some(caveat)) if !caveats.contains(&caveat) => caveats.push(caveat),
            Ok(_) => {}
            Err(e) => caveats.push(format!("the state reader could not reset the scratch state: {e}")),
        }
    }
    call
}
