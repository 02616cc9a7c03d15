//! `probes:`: the valid calls, made once in the core session (a missed `expect` is a
//! warning), and the custom checks, each probe observed through the sandbox, the
//! listener, the upstream stub and the server log.

use super::call::plain_answer;
use crate::classify::{Class, classify};
use crate::config::Problem;
use crate::config::probes::{DB_PLACEHOLDERS, schema_mismatch, strings_in, target_refusal};
use crate::judge::Answer;
use crate::judge::credential::Caller;
use crate::judge::custom::{FileSeen, ProbeObs, ProbeOutcome, RequestSeen, Seen, evaluate};
use crate::judge::custom::{Identity, Probe};
use crate::record::ProbeCall;
use crate::session::Reply;
use crate::session::runner::{Live, Runner};
use crate::targets::listener::Listener;
use crate::targets::sandbox::random_hex;
use crate::targets::stub::Stub;
use crate::tools::ToolInfo;
use crate::upstream::{Body, Reply as StubReply};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// The checks that need the server's tool list, made before any probe is sent: the
/// tool exists, a classified parameter holds a harness target, a command probe is
/// active, a valid call fits the schema, identity and upstream clauses have what they need.
pub fn validate(runner: &Runner<'_>, tools: &[ToolInfo], raw_tools: &[Value]) -> Vec<Problem> {
    let config = runner.config;
    let mut problems = Vec::new();
    let has_stub = config.upstream.kind.is_some();
    // A probe with no tool was refused as written; there is nothing to look up.
    for p in config.probes.iter().filter(|p| !p.tool.is_empty()) {
        let mut at = |key: &str, msg: String| problems.push(Problem::at(p.line, format!("{}{key}", p.key), msg));
        let Some(tool) = tools.iter().find(|t| t.name == p.tool) else {
            let hint = crate::registry::did_you_mean_hint(&p.tool, tools.iter().map(|t| t.name.as_str()));
            let filtered = if config.tools.keeps(&p.tool) { "" } else { "; tools.include/tools.exclude leave it out" };
            at(".tool", format!("the server declares no tool \"{}\"{hint}{filtered}", p.tool));
            continue;
        };
        let class = classify(tool);
        let class_kind =
            Some(class.class).filter(|c| matches!(c, Class::Sql | Class::Command | Class::Url | Class::Path));
        if let (Some(kind), Some(param)) = (class_kind, &class.param)
            && let Some(value) = p.args.get(param).and_then(Value::as_str)
            && let Some(why) = target_refusal(kind, value, has_stub)
        {
            at(&format!(".args.{param}"), why);
        }
        if class_kind == Some(Class::Command) && !p.active {
            at(".active", format!("{} runs commands, so the probe must say active: true", p.tool));
        }
        if !p.is_check()
            && let Some(schema) = raw_tools.iter().find(|t| t["name"] == p.tool.as_str()).map(|t| &t["inputSchema"])
        {
            for m in schema_mismatch(schema, &p.args) {
                at(".args", format!("a valid call must fit {}'s schema: {m}", p.tool));
            }
        }
        if p.identity.is_some() && !runner.uses_bearer() {
            at(".identity", "needs an HTTP server whose server.headers use {bearer}".to_string());
        }
        if (p.upstream_reply.is_some() || p.expect.reads_upstream()) && !has_stub {
            at(".upstream", "needs the upstream stub (upstream.kind: http)".to_string());
        }
    }
    problems
}

/// Makes every valid call once; returns what each did, and the tools that answered
/// without an error.
pub async fn valid_calls(runner: &mut Runner<'_>, live: &mut Live) -> (Vec<ProbeCall>, Vec<String>) {
    let probes: Vec<Probe> = runner.config.probes.iter().filter(|p| !p.is_check()).cloned().collect();
    let mut out = Vec::new();
    let mut answered = Vec::new();
    for p in &probes {
        let obs = observe(runner, live, p).await;
        if let ProbeOutcome::Observed(seen) = &obs.outcome
            && matches!(seen.answer, Answer::Success { .. })
        {
            answered.push(p.tool.clone());
        }
        let (outcome, elapsed_ms, warnings) = match &obs.outcome {
            ProbeOutcome::Observed(seen) => {
                let warnings = match evaluate(&p.expect, seen) {
                    Ok(missed) => missed,
                    Err(why) => vec![format!("expect could not be read: {why}")],
                };
                (seen.answer.brief(), seen.elapsed_ms, warnings)
            }
            ProbeOutcome::Na(why) | ProbeOutcome::Unjudged(why) => (format!("not made: {why}"), 0, Vec::new()),
        };
        out.push(ProbeCall { name: p.name.clone(), tool: p.tool.clone(), outcome, elapsed_ms, warnings });
    }
    (out, answered)
}

/// Runs every probe of every custom check.
pub async fn custom_checks(runner: &mut Runner<'_>, live: &mut Live) -> Vec<(Probe, ProbeObs)> {
    let probes: Vec<Probe> = runner.config.probes.iter().filter(|p| p.is_check()).cloned().collect();
    let mut out = Vec::new();
    for p in probes {
        let obs = observe(runner, live, &p).await;
        let _ = runner.targets.sandbox.restore();
        out.push((p, obs));
    }
    out
}

/// One probe: its arguments filled, its call made (in its caller's session), and
/// everything its clauses may read, recorded.
async fn observe(runner: &mut Runner<'_>, live: &mut Live, p: &Probe) -> ProbeObs {
    let targets = runner.targets;
    let (listener, stub) = (targets.listener.as_ref(), targets.stub.as_ref());
    let token = format!("sm{}", random_hex(6));
    let mut obs = ProbeObs {
        name: p.name.clone(),
        tool: p.tool.clone(),
        args: Value::Object(p.args.clone()),
        outcome: ProbeOutcome::Unjudged(String::new()),
    };
    let texts = strings_in(&obs.args);
    if let Some(ph) = DB_PLACEHOLDERS.iter().find(|ph| texts.iter().any(|t| t.contains(*ph))) {
        obs.outcome = ProbeOutcome::Unjudged(format!("uses {ph}: the database belongs to the db pack"));
        return obs;
    }
    if p.active && !targets.active {
        obs.outcome = ProbeOutcome::Na("an active probe runs only with --active".to_string());
        return obs;
    }
    if let Some(held) = runner.held(live).await {
        obs.outcome = ProbeOutcome::Unjudged(format!("not sent: {}", held.reason()));
        return obs;
    }
    let args: Map<String, Value> = p.args.iter().map(|(k, v)| (k.clone(), fill(runner, v, &token))).collect();
    let mut minted = Vec::new();
    if let (Some(stub), Some(reply)) = (stub, &p.upstream_reply) {
        stub.script(Some(mint_markers(reply, &mut minted)));
    }
    let paths: Vec<(String, std::path::PathBuf)> =
        p.expect.paths().map(|path| (path.clone(), runner.expand(&path.replace("{token}", &token)).into())).collect();
    let before_files: Vec<Option<String>> = paths.iter().map(|(_, real)| file_state(real)).collect();
    let before_hits = listener.map(Listener::hits);
    let before_stub = stub.map(Stub::count);
    let before_log = live.process.as_ref().map(|proc| proc.log_snapshot());

    let started = Instant::now();
    let reply = match p.identity {
        None => {
            let saved = live.session.timeout;
            if let Some(ms) = p.timeout_ms {
                live.session.timeout = Duration::from_millis(ms);
            }
            let r = runner.send_call(live, &p.tool, Value::Object(args.clone()), &p.name, true).await;
            live.session.timeout = saved;
            r
        }
        Some(identity) => {
            let caller = match identity {
                Identity::A => Caller::A,
                Identity::B => Caller::B,
                Identity::Anonymous => Caller::Anonymous,
            };
            match call_as(runner, live, caller, p, &args).await {
                Ok(r) => r,
                Err(why) => {
                    obs.outcome = ProbeOutcome::Unjudged(why);
                    if let Some(stub) = stub {
                        stub.script(None);
                    }
                    return obs;
                }
            }
        }
    };
    let elapsed_ms = started.elapsed().as_millis() as u64;
    tokio::time::sleep(Duration::from_millis(20)).await;
    if let Some(stub) = stub {
        stub.script(None);
    }
    let response_bytes = match &reply {
        Reply::Result(r) => reply_bytes(r),
        Reply::TooLarge { bytes } => *bytes,
        _ => 0,
    };
    // Like call_answer, but the texts stay whole: expect clauses read them.
    let answer = plain_answer(reply);
    let reply_text = match &answer {
        Answer::Success { text } | Answer::ToolError { text } => text.clone(),
        Answer::RpcError { message, .. } => message.clone(),
        _ => String::new(),
    };
    let files = paths
        .iter()
        .zip(before_files)
        .map(|((shown, real), before)| FileSeen { path: shown.clone(), before, after: file_state(real) })
        .collect();
    let upstream = stub.zip(before_stub).map(|(stub, from)| {
        stub.since(from)
            .into_iter()
            .map(|r| {
                let query = if r.query.is_empty() { String::new() } else { format!("?{}", r.query) };
                RequestSeen { target: format!("{} {}{query}", r.method, r.path), headers: r.headers, body: r.body }
            })
            .collect()
    });
    let log = match (before_log, live.process.as_ref().map(|proc| proc.log_snapshot())) {
        // The kept head of the log holds everything printed so far only while it is not cut.
        (Some((head0, _)), Some((head1, total1))) if total1 as usize == head1.len() => {
            Some(String::from_utf8_lossy(&head1[head0.len().min(head1.len())..]).into_owned())
        }
        _ => None,
    };
    let seen = Seen {
        answer,
        elapsed_ms,
        response_bytes,
        files,
        listener_hits: listener.zip(before_hits).map(|(l, b)| l.hits().saturating_sub(b)),
        upstream,
        token_echoed: (!minted.is_empty()).then(|| minted.iter().any(|m| reply_text.contains(m.as_str()))),
        log,
    };
    obs.outcome = ProbeOutcome::Observed(Box::new(seen));
    obs
}

/// A call in a fresh session opened as `caller`.
async fn call_as(
    runner: &mut Runner<'_>,
    live: &mut Live,
    caller: Caller,
    p: &Probe,
    args: &Map<String, Value>,
) -> Result<Reply, String> {
    let mut session =
        runner.open_as(live, caller).await.map_err(|why| format!("the session as {caller:?} did not open ({why})"))?;
    if let Some(ms) = p.timeout_ms {
        session.timeout = Duration::from_millis(ms);
    }
    let reply = session.request("tools/call", json!({"name": p.tool, "arguments": args}), &p.name).await;
    // Another session of the same server: its books are the run's.
    runner.note(live, &reply, &p.name, true);
    runner.absorb(&mut session);
    Ok(reply)
}

/// A probe value with `{token}` and the harness placeholders filled, at any depth.
pub(crate) fn fill(runner: &Runner<'_>, v: &Value, token: &str) -> Value {
    match v {
        Value::String(s) => Value::String(runner.expand(&s.replace("{token}", token))),
        Value::Array(items) => Value::Array(items.iter().map(|x| fill(runner, x, token)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), fill(runner, x, token))).collect()),
        other => other.clone(),
    }
}

/// The scripted reply with each `{upstream_token}` replaced by a fresh marker.
fn mint_markers(reply: &StubReply, minted: &mut Vec<String>) -> StubReply {
    let mut mint = |text: &str| {
        let mut out = String::new();
        let mut parts = text.split("{upstream_token}").peekable();
        while let Some(part) = parts.next() {
            out.push_str(part);
            if parts.peek().is_some() {
                let m = format!("smup{}", random_hex(6));
                out.push_str(&m);
                minted.push(m);
            }
        }
        out
    };
    let body = match &reply.body {
        Body::Text(t) => Body::Text(mint(t)),
        Body::Json(v) => Body::Json(serde_json::from_str(&mint(&v.to_string())).unwrap_or_else(|_| v.clone())),
        Body::Padded { size, start } => Body::Padded { size: *size, start: mint(start) },
    };
    StubReply { status: reply.status, headers: reply.headers.clone(), body }
}

/// A file's content hash, or `None` when it does not exist.
fn file_state(path: &std::path::Path) -> Option<String> {
    use sha2::{Digest, Sha256};
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => std::fs::read(path).ok().map(|bytes| format!("{:x}", Sha256::digest(&bytes))),
        Ok(meta) => Some(format!("{:?}", meta.file_type())),
        Err(_) => None,
    }
}

/// The reply's size: text in UTF-8 bytes plus binary blocks (base64 data decoded).
fn reply_bytes(result: &Value) -> u64 {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .map(|b| {
                    let text = b.get("text").and_then(Value::as_str).map_or(0, str::len);
                    let data = ["data", "blob"]
                        .iter()
                        .filter_map(|k| {
                            b.get(*k)
                                .and_then(Value::as_str)
                                .or_else(|| b.pointer(&format!("/resource/{k}")).and_then(Value::as_str))
                        })
                        .map(|d| d.len() * 3 / 4)
                        .sum::<usize>();
                    let resource_text = b.pointer("/resource/text").and_then(Value::as_str).map_or(0, str::len);
                    (text + data + resource_text) as u64
                })
                .sum()
        })
        .unwrap_or(0)
}
