//! Collects what the core pack judges: the handshake, the listed metadata, and the
//! server's answers to malformed input.

use super::session::{Reply, Session};
use super::{Live, Runner};
use crate::judge::core::{Answer, CoreObservations, HandshakeObs, RobustProbe};
use crate::judge::text::clip;
use crate::tools::ToolInfo;
use serde_json::{Value, json};

/// A server that died is restarted at most this many times during robust-input.
const MAX_RESTARTS: u32 = 3;
/// After this many calls that got no answer in time, the remaining calls are not
/// sent: the server evidently hangs on calls, and waiting out each would take minutes.
pub const MAX_TIMEOUTS: u32 = 3;

/// Runs the handshake and lists everything a session can list.
pub async fn open(session: &mut Session) -> (HandshakeObs, Option<Value>) {
    let offered = Session::offered_version();
    match session.request("initialize", Session::initialize_params(), "initialize").await {
        Reply::Result(result) => {
            let negotiated = result.get("protocolVersion").and_then(Value::as_str).unwrap_or(&offered).to_string();
            session.initialized(&negotiated).await;
            let caps = result.get("capabilities").cloned();
            (HandshakeObs::Answered { offered, result }, caps)
        }
        Reply::Error { code, message } => (HandshakeObs::Rejected { offered, code, message }, None),
        Reply::Timeout => {
            let mut reason = format!("no answer within {}s", session.timeout.as_secs());
            if let (n, Some(first)) = &session.garbage
                && *n > 0
            {
                reason
                    .push_str(&format!("; it wrote {n} line(s) that are not JSON, the first: \"{}\"", clip(first, 60)));
            }
            (HandshakeObs::NoAnswer { reason }, None)
        }
        Reply::Silence => (HandshakeObs::NoAnswer { reason: "the server answered nothing".to_string() }, None),
        Reply::TooLarge => (HandshakeObs::NoAnswer { reason: "its answer was longer than 8 MiB".to_string() }, None),
        Reply::Gone(why) => (HandshakeObs::NoAnswer { reason: format!("the server went away ({why})") }, None),
    }
}

/// The metadata: tools (every page), prompts and resources when declared.
pub async fn list_metadata(session: &mut Session, caps: &Value, obs: &mut CoreObservations) {
    let (tools, pages, error) = session.list_all("tools/list", "tools").await;
    obs.tools.tools = tools;
    obs.tools.pages = pages;
    obs.tools.error = error;
    if caps.get("prompts").is_some() {
        obs.prompts = session.list_all("prompts/list", "prompts").await.0;
    }
    if caps.get("resources").is_some() {
        obs.resources = session.list_all("resources/list", "resources").await.0;
        obs.resources.extend(session.list_all("resources/templates/list", "resourceTemplates").await.0);
    }
}

/// One malformed message to send.
struct Probe {
    tool: Option<String>,
    name: &'static str,
    detail: String,
    arg: Option<String>,
    shown_args: Option<Value>,
    must_reject: bool,
    send: Send,
}

enum Send {
    /// A tools/call with these arguments; the answer is awaited by id.
    Call { tool: String, args: Value },
    /// A raw message with no usable id (or none at all); a ping fences it.
    Raw { bytes: Vec<u8>, id: Option<u64> },
}

/// The per-tool probes for one tool, from its schema.
fn tool_probes(tool: &ToolInfo, oversized: usize, depth: usize, next_id: &mut u64) -> Vec<Probe> {
    let schema = tool.raw.get("inputSchema");
    let prop = |name: &str| schema.and_then(|s| s.get("properties")).and_then(|p| p.get(name));
    let closed = schema.and_then(|s| s.get("additionalProperties")) == Some(&Value::Bool(false));
    let call = |args: Value| Send::Call { tool: tool.name.clone(), args };
    let mut out = Vec::new();
    let base = |name, detail: String, arg: Option<&str>, args: Value, must_reject| Probe {
        tool: Some(tool.name.clone()),
        name,
        detail,
        arg: arg.map(str::to_string),
        shown_args: Some(args.clone()),
        must_reject,
        send: call(args),
    };
    if let Some(first) = tool.required.first() {
        out.push(base("missing-required", format!("without \"{first}\""), Some(first), json!({}), true));
    }
    for (name, ty) in tool.params.iter().take(5) {
        if ty == "any" {
            continue;
        }
        let wrong = if ty == "string" { json!({"sealmark": "wrong-type"}) } else { json!("sealmark-wrong-type") };
        out.push(base(
            "wrong-type",
            format!("\"{name}\" given a value that is not {ty}"),
            Some(name),
            json!({ name: wrong }),
            true,
        ));
    }
    for name in &tool.required {
        let nullable = prop(name)
            .and_then(|p| p.get("type"))
            .and_then(Value::as_array)
            .is_some_and(|t| t.contains(&json!("null")));
        out.push(base("null", format!("\"{name}\" set to null"), Some(name), json!({ name: null }), !nullable));
    }
    out.push(base(
        "unknown-key",
        "an undeclared key \"sealmark_unknown_key\"".to_string(),
        None,
        json!({"sealmark_unknown_key": true}),
        closed || !tool.required.is_empty(),
    ));
    if let Some((name, _)) = tool.params.iter().find(|(_, t)| t == "string") {
        let max_len = prop(name).and_then(|p| p.get("maxLength")).and_then(Value::as_u64);
        let mut probe = base(
            "oversized",
            format!("\"{name}\" of {oversized} bytes"),
            Some(name),
            json!({ name: "x".repeat(oversized) }),
            max_len.is_some_and(|m| (m as usize) < oversized),
        );
        probe.shown_args = Some(json!({ name: format!("<{oversized} bytes>") }));
        out.push(probe);
    }
    if let Some((name, ty)) = tool.params.first() {
        let id = *next_id;
        *next_id += 1;
        let nested = format!("{}0{}", "[".repeat(depth), "]".repeat(depth));
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"sealmark-{id}\",\"method\":\"tools/call\",\"params\":{{\"name\":{},\"arguments\":{{{}:{nested}}}}}}}\n",
            json!(tool.name),
            json!(name)
        );
        out.push(Probe {
            tool: Some(tool.name.clone()),
            name: "deep-nesting",
            detail: format!("\"{name}\" nested {depth} arrays deep"),
            arg: Some(name.clone()),
            shown_args: Some(json!({ name: format!("<{depth} nested arrays>") })),
            must_reject: ty != "array" && ty != "any",
            send: Send::Raw { bytes: line.into_bytes(), id: Some(id) },
        });
    }
    out
}

/// The per-session probes: malformed requests and a line that is not JSON.
fn session_probes(first_tool: Option<&str>, next_id: &mut u64) -> Vec<Probe> {
    let mut raw = |name: &'static str, detail: &str, body: Option<Value>| {
        let id = *next_id;
        *next_id += 1;
        let (bytes, id) = match body {
            Some(mut v) => {
                v["id"] = json!(format!("sealmark-{id}"));
                (format!("{v}\n").into_bytes(), Some(id))
            }
            None => (b"{\"jsonrpc\": \"2.0\", \"method\": this is not json\n".to_vec(), None),
        };
        Probe {
            tool: None,
            name,
            detail: detail.to_string(),
            arg: None,
            shown_args: None,
            must_reject: true,
            send: Send::Raw { bytes, id },
        }
    };
    let tool = first_tool.unwrap_or("sealmark_probe");
    vec![
        raw(
            "name-not-string",
            "tools/call whose name is the number 12345",
            Some(json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": 12345, "arguments": {}}})),
        ),
        raw(
            "params-not-object",
            "tools/call whose params is an array",
            Some(json!({"jsonrpc": "2.0", "method": "tools/call", "params": [tool, {}]})),
        ),
        raw(
            "arguments-not-object",
            "tools/call whose arguments is a string",
            Some(json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": tool, "arguments": "sealmark"}})),
        ),
        raw("not-json", "a line that is not JSON", None),
    ]
}

/// The text of a tools/call result, and whether it reports an error.
pub fn call_text(result: &Value) -> (String, bool) {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let text = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        })
        .unwrap_or_default();
    (text, is_error)
}

/// What a tools/call reply amounts to, for the packs that keep the whole answer text:
/// an error's text is clipped, a timeout counts toward the run's budget of unanswered
/// calls when `count_timeout`, and a lost server is remembered on `live`.
pub fn call_answer(reply: Reply, runner: &mut Runner<'_>, live: &mut Live, count_timeout: bool) -> Answer {
    match plain_answer(reply) {
        Answer::ToolError { text } => Answer::ToolError { text: clip(&text, 2000) },
        Answer::Timeout => {
            runner.timeouts += u32::from(count_timeout);
            Answer::Timeout
        }
        Answer::Died { reason } => {
            live.gone = Some(reason.clone());
            Answer::Died { reason }
        }
        other => other,
    }
}

/// What a reply amounts to, its texts whole and nothing recorded about the run.
pub fn plain_answer(reply: Reply) -> Answer {
    match reply {
        Reply::Result(r) => {
            let (text, is_error) = call_text(&r);
            if is_error { Answer::ToolError { text } } else { Answer::Success { text } }
        }
        Reply::Error { code, message } => Answer::RpcError { code, message },
        Reply::Timeout => Answer::Timeout,
        Reply::Silence => Answer::Silence,
        Reply::TooLarge => Answer::TooLarge,
        Reply::Gone(why) => Answer::Died { reason: why },
    }
}

/// A robust-input answer: a success is kept short, a rejection whole for refusal-quality.
fn answer_of(reply: Reply) -> Answer {
    match plain_answer(reply) {
        Answer::Success { text } => Answer::Success { text: clip(&text, 500) },
        other => other,
    }
}

/// Sends every robust-input probe, restarting a server that died.
pub async fn robust(runner: &mut Runner<'_>, live: &mut Live, tools: &[ToolInfo], obs: &mut CoreObservations) {
    let max_tools = runner.config.setting_u64("robust-input", "max_tools") as usize;
    let oversized = runner.config.setting_u64("robust-input", "oversized_bytes") as usize;
    let depth = runner.config.setting_u64("robust-input", "nesting_depth") as usize;
    let mut next_id = 1u64;
    let mut probes = Vec::new();
    for tool in tools.iter().take(max_tools) {
        probes.extend(tool_probes(tool, oversized, depth, &mut next_id));
    }
    obs.robust.skipped_tools = tools.iter().skip(max_tools).map(|t| t.name.clone()).collect();
    probes.extend(session_probes(tools.first().map(|t| t.name.as_str()), &mut next_id));

    let mut restarts = 0;
    let mut not_sent = 0;
    let mut skipped_after_timeouts = 0;
    for probe in probes {
        if runner.timeouts >= MAX_TIMEOUTS && matches!(probe.send, Send::Call { .. }) {
            skipped_after_timeouts += 1;
            continue;
        }
        if live.gone.is_some() {
            if restarts >= MAX_RESTARTS || !runner.relaunch(live).await {
                not_sent += 1;
                continue;
            }
            restarts += 1;
        }
        let what = format!("{} on {}", probe.name, probe.tool.as_deref().unwrap_or("the session"));
        let answer = match &probe.send {
            Send::Call { tool, args } => {
                let reply = live.session.request("tools/call", json!({"name": tool, "arguments": args}), &what).await;
                answer_of(reply)
            }
            Send::Raw { bytes, id } => match live.session.send_raw(bytes).await {
                Err(why) => Answer::Died { reason: why },
                Ok(()) => {
                    let (arrived, ping) = live.session.fence().await;
                    let own = arrived.into_iter().find(|m| match (id, m.get("id")) {
                        (Some(n), Some(Value::String(s))) => *s == format!("sealmark-{n}"),
                        (_, Some(Value::Null)) | (_, None) => true,
                        _ => false,
                    });
                    match (own, &ping) {
                        (Some(m), _) if m.get("error").is_some() => answer_of(Reply::Error {
                            code: m["error"].get("code").and_then(Value::as_i64).unwrap_or(0),
                            message: m["error"].get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
                        }),
                        (Some(m), _) => answer_of(Reply::Result(m.get("result").cloned().unwrap_or(Value::Null))),
                        (None, Reply::Result(_)) => Answer::Silence,
                        (None, Reply::Gone(why)) => Answer::Died { reason: why.clone() },
                        (None, _) => Answer::Timeout,
                    }
                }
            },
        };
        let alive = match &answer {
            Answer::Died { .. } => false,
            _ => matches!(live.session.request("ping", Value::Null, "ping").await, Reply::Result(_)),
        };
        runner.timeouts += u32::from(answer == Answer::Timeout);
        if let Answer::Died { reason } = &answer {
            live.gone = Some(reason.clone());
        } else if !alive {
            live.gone = Some("it stopped answering ping".to_string());
        }
        obs.robust.probes.push(RobustProbe {
            tool: probe.tool,
            probe: probe.name.to_string(),
            detail: probe.detail,
            arg: probe.arg,
            shown_args: probe.shown_args,
            must_reject: probe.must_reject,
            answer,
            alive_after: alive,
        });
    }
    if not_sent > 0 {
        runner.gaps.push(format!(
            "robust-input: {not_sent} probe(s) not sent, because the server kept dying (restarted {restarts} time(s))"
        ));
    }
    if skipped_after_timeouts > 0 {
        runner.gaps.push(format!(
            "robust-input: {skipped_after_timeouts} call(s) not sent after {MAX_TIMEOUTS} calls went unanswered for {}s each",
            runner.config.timeout_probe_sec
        ));
    }
    if !obs.robust.skipped_tools.is_empty() {
        runner.gaps.push(format!(
            "robust-input probed the first {max_tools} of {} tools; not probed: {}",
            tools.len(),
            obs.robust.skipped_tools.join(", ")
        ));
    }
}
