//! Collects what the core pack judges: the handshake, the listed metadata, and the
//! server's answers to malformed input.

use super::call::plain_answer;
use crate::judge::Answer;
use crate::judge::core::{CoreObservations, RobustProbe};
use crate::session::runner::{Live, Runner};
use crate::session::{Reply, Session};
use crate::text::clip;
use crate::tools::ToolInfo;
use serde_json::{Value, json};

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
    /// A raw message with no usable id (or none at all); a ping fences it. With `id`,
    /// the bytes hold `RAW_ID` where the id goes, minted when the probe is sent.
    Raw { bytes: Vec<u8>, id: bool },
}

/// Where a raw probe's id goes, replaced by an unpredictable one at send time.
const RAW_ID: &str = "\"sealmark-id\"";

/// The per-tool probes for one tool, from its schema.
fn tool_probes(tool: &ToolInfo, oversized: usize, depth: usize) -> Vec<Probe> {
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
        let nested = format!("{}0{}", "[".repeat(depth), "]".repeat(depth));
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{RAW_ID},\"method\":\"tools/call\",\"params\":{{\"name\":{},\"arguments\":{{{}:{nested}}}}}}}\n",
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
            send: Send::Raw { bytes: line.into_bytes(), id: true },
        });
    }
    out
}

/// The per-session probes: malformed requests and a line that is not JSON.
fn session_probes(first_tool: Option<&str>) -> Vec<Probe> {
    let raw = |name: &'static str, detail: &str, body: Option<Value>| {
        let (bytes, id) = match body {
            Some(mut v) => {
                v["id"] = json!("sealmark-id");
                (format!("{v}\n").into_bytes(), true)
            }
            None => (b"{\"jsonrpc\": \"2.0\", \"method\": this is not json\n".to_vec(), false),
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

/// A robust-input answer: a success is kept short, a rejection long enough for
/// refusal-quality (a server that echoes a megabyte of input back is not kept whole).
fn answer_of(reply: Reply) -> Answer {
    match plain_answer(reply) {
        Answer::Success { text } => Answer::Success { text: clip(&text, 500) },
        Answer::ToolError { text } => Answer::ToolError { text: clip(&text, 2000) },
        Answer::RpcError { code, message } => Answer::RpcError { code, message: clip(&message, 2000) },
        other => other,
    }
}

/// Sends every robust-input probe. A server that dies or stops answering is restarted
/// (`Runner::held`), so one wedging input costs one probe, not the rest of the run.
pub async fn robust(runner: &mut Runner<'_>, live: &mut Live, tools: &[ToolInfo], obs: &mut CoreObservations) {
    let max_tools = runner.config.setting_u64("robust-input", "max_tools") as usize;
    let oversized = runner.config.setting_u64("robust-input", "oversized_bytes") as usize;
    let depth = runner.config.setting_u64("robust-input", "nesting_depth") as usize;
    let mut probes = Vec::new();
    for tool in tools.iter().take(max_tools) {
        probes.extend(tool_probes(tool, oversized, depth));
    }
    obs.robust.skipped_tools = tools.iter().skip(max_tools).map(|t| t.name.clone()).collect();
    probes.extend(session_probes(tools.first().map(|t| t.name.as_str())));

    for probe in probes {
        let what = format!("{} on {}", probe.name, probe.tool.as_deref().unwrap_or("the session"));
        let (answer, alive) = match &probe.send {
            Send::Call { tool, args } => match runner.call_tool(live, tool, args.clone(), &what, true).await {
                Err(held) => (held.not_sent(), false),
                Ok(reply) => {
                    let known_wedged = matches!(reply, Reply::Timeout { alive: false });
                    let answer = answer_of(reply);
                    let alive = !matches!(answer, Answer::Died { .. }) && !known_wedged && pings(live).await;
                    (answer, alive)
                }
            },
            Send::Raw { bytes, id } => match runner.held(live).await {
                Some(held) => (held.not_sent(), false),
                None => raw_probe(runner, live, bytes, *id, &what).await,
            },
        };
        if !alive && live.gone.is_none() {
            runner.stopped_answering(live, format!("the server stopped answering ping after {what}"));
        }
        if matches!(answer, Answer::NotSent { .. }) {
            continue;
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
    if !obs.robust.skipped_tools.is_empty() {
        runner.gaps.push(format!(
            "robust-input probed the first {max_tools} of {} tools; not probed: {}",
            tools.len(),
            obs.robust.skipped_tools.join(", ")
        ));
    }
}

/// Whether the server answers a ping.
async fn pings(live: &mut Live) -> bool {
    matches!(live.session.request("ping", Value::Null, "ping").await, Reply::Result(_))
}

/// Sends a raw message and fences it with a ping: what arrived before the ping's
/// answer is the probe's answer. No answer to the ping means the server stopped
/// answering; it is then not pinged again.
async fn raw_probe(runner: &mut Runner<'_>, live: &mut Live, bytes: &[u8], has_id: bool, what: &str) -> (Answer, bool) {
    let id = has_id.then(|| live.session.fresh_tag());
    let bytes = match &id {
        Some(tag) => String::from_utf8_lossy(bytes).replacen(RAW_ID, &json!(tag).to_string(), 1).into_bytes(),
        None => bytes.to_vec(),
    };
    if let Err(why) = live.session.send_raw(&bytes).await {
        live.gone = Some(format!("the server went away after {what} ({why})"));
        return (Answer::Died { reason: why }, false);
    }
    let (arrived, ping) = live.session.fence().await;
    let own = arrived.into_iter().find(|m| match (&id, m.get("id")) {
        (Some(tag), Some(Value::String(s))) => s == tag,
        (_, Some(Value::Null)) | (_, None) => true,
        _ => false,
    });
    // A ping may overtake the probe's own answer: give it a moment to follow.
    let late = match (&own, &id, &ping) {
        (None, Some(tag), Reply::Result(_)) => {
            live.session.late_answer(&json!(tag), std::time::Duration::from_millis(50)).await
        }
        _ => None,
    };
    let own = own.or_else(|| {
        late.map(|r| match r {
            Reply::Error { code, message } => json!({"error": {"code": code, "message": message}}),
            Reply::Result(v) => json!({"result": v}),
            _ => Value::Null,
        })
    });
    if own.is_some() {
        runner.answered += 1;
    }
    match (own, ping) {
        (Some(m), ping) => {
            let answer = match m.get("error") {
                Some(err) => answer_of(Reply::Error {
                    code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: err.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
                }),
                None => answer_of(Reply::Result(m.get("result").cloned().unwrap_or(Value::Null))),
            };
            let alive = matches!(ping, Reply::Result(_));
            (answer, alive)
        }
        (None, Reply::Result(_)) => (Answer::Silence, true),
        (None, Reply::Gone(why)) => {
            live.gone = Some(format!("the server went away after {what} ({why})"));
            (Answer::Died { reason: why }, false)
        }
        (None, _) => {
            runner.stopped_answering(live, format!("the server stopped answering after {what}"));
            (Answer::Died { reason: format!("it stopped answering: no answer to a ping after {what}") }, false)
        }
    }
}
