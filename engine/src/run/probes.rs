//! `probes:` entries without a check: valid calls the author lists, made once in the
//! core session so a tool no pack can aim at still gets a real call. A call that does
//! not succeed is a line under Not covered, never a verdict.

use super::core::{MAX_TIMEOUTS, call_answer};
use super::{Live, RunError, Runner};
use crate::judge::core::Answer;
use crate::tools::ToolInfo;
use serde_json::{Map, Value, json};

/// Makes every valid call; returns the tools that answered without an error.
pub async fn valid_calls(
    runner: &mut Runner<'_>,
    live: &mut Live,
    tools: &[ToolInfo],
) -> Result<Vec<String>, RunError> {
    let config = runner.config;
    let file = config.file.clone().unwrap_or_else(|| "sealmark.yaml".to_string());
    let unknown: Vec<String> = config
        .probes
        .iter()
        .enumerate()
        .filter(|(_, p)| !tools.iter().any(|t| t.name == p.tool))
        .map(|(i, p)| {
            let hint = crate::registry::did_you_mean(&p.tool, tools.iter().map(|t| t.name.as_str()))
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            format!("{file}:{}: probes[{i}].tool: the server declares no tool \"{}\"{hint}", p.line, p.tool)
        })
        .collect();
    if !unknown.is_empty() {
        return Err(RunError::Setup(unknown.join("\n")));
    }
    let mut answered = Vec::new();
    for (i, p) in config.probes.iter().enumerate() {
        let name = p.id.clone().unwrap_or_else(|| format!("probes[{i}]"));
        if runner.timeouts >= MAX_TIMEOUTS || (live.gone.is_some() && !runner.relaunch(live).await) {
            runner.gaps.push(format!("{name} ({}): the valid call was not made", p.tool));
            continue;
        }
        let args: Map<String, Value> = p.args.iter().map(|(k, v)| (k.clone(), expand(runner, v))).collect();
        let reply = live
            .session
            .request("tools/call", json!({"name": p.tool, "arguments": args}), &format!("{name} on {}", p.tool))
            .await;
        match call_answer(reply, runner, live, true) {
            Answer::Success { .. } => answered.push(p.tool.clone()),
            other => {
                runner.gaps.push(format!("{name} ({}): the valid call did not succeed: {}", p.tool, other.brief()))
            }
        }
    }
    Ok(answered)
}

/// A value with the harness placeholders filled in, at any depth.
pub fn expand(runner: &Runner<'_>, v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(runner.expand(s)),
        Value::Array(items) => Value::Array(items.iter().map(|x| expand(runner, x)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), expand(runner, x))).collect()),
        other => other.clone(),
    }
}
