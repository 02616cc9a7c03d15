//! Benign calls for the effects pack on tools the path packs do not aim: each tool that
//! promises something (`readOnlyHint: true`, `openWorldHint: false`) or reads by its
//! name, called once with harmless values between two sandbox snapshots and with the
//! listener's count. Git tools get theirs from the git pack's controls.

use super::call::{SETTLE, call_answer, call_text, watched};
use crate::classify::has_word;
use crate::classify::{Class, Classification};
use crate::judge::Answer;
use crate::judge::fs::{BenignCall, FsCall, diff};
use crate::session::Reply;
use crate::session::observer::Observer;
use crate::session::runner::{Live, Runner};
use crate::tools::ToolInfo;
use serde_json::{Map, Value, json};

/// Name words of a tool that only reads, for tools without annotations.
const READ_WORDS: [&str; 12] =
    ["get", "list", "read", "search", "show", "describe", "find", "view", "open", "lookup", "info", "status"];
const WRITE_WORDS: [&str; 12] =
    ["create", "add", "delete", "remove", "update", "set", "write", "save", "put", "send", "post", "run"];

/// Whether the effects pack calls this tool: it makes a promise the pack can check,
/// or reads by its name and makes none.
fn wanted(tool: &ToolInfo, class: &Classification) -> bool {
    if !matches!(class.class, Class::Other | Class::Url) {
        return false;
    }
    let promises = tool.hint("readOnlyHint") == Some(true) || tool.hint("openWorldHint") == Some(false);
    let reads = tool.annotations.is_empty()
        && class.class == Class::Other
        && has_word(&tool.name, &READ_WORDS)
        && !has_word(&tool.name, &WRITE_WORDS);
    promises || reads
}

/// Harmless arguments for a tool's required parameters; `None` when one cannot be
/// filled (an object, say). A URL tool's target is the listener's control page.
fn harmless(tool: &ToolInfo, class: &Classification, control_url: &str) -> Option<Map<String, Value>> {
    let mut args = Map::new();
    for name in &tool.required {
        let value = if class.class == Class::Url && class.param.as_deref() == Some(name) {
            json!(control_url)
        } else {
            match tool.param_type(name).unwrap_or("any") {
                "string" | "any" => json!("sealmark"),
                "integer" | "number" => json!(1),
                "boolean" => json!(false),
                "array" => json!(["sealmark"]),
                _ => return None,
            }
        };
        args.insert(name.clone(), value);
    }
    Some(args)
}

/// The name of a tool no server has: a call to it can do nothing but be refused.
pub const NO_SUCH_TOOL: &str = "sealmark_no_such_tool";

/// The paths that change during a call to a tool that does not exist: a server's
/// per-call bookkeeping (a call log under HOME, say), never blamed on a probe.
pub async fn noise(runner: &mut Runner<'_>, live: &mut Live, observer: &mut Observer) -> Vec<String> {
    if runner.held(live).await.is_some() {
        return Vec::new();
    }
    let before = observer.snapshot();
    let _ = runner.send_call(live, NO_SUCH_TOOL, json!({}), "noise", true).await;
    diff(&before, &observer.snapshot())
        .iter()
        .filter_map(|c| c.rsplit_once(" was ").map(|(path, _)| path.to_string()))
        .collect()
}

/// One benign call to every wanted tool not in `done`, and the server's noise (see
/// `noise`) when there was a call to make.
pub async fn collect(
    runner: &mut Runner<'_>,
    live: &mut Live,
    tools: &[ToolInfo],
    classes: &[Classification],
    done: &[String],
) -> (Vec<BenignCall>, Vec<String>) {
    let (sandbox, listener) = (&runner.targets.sandbox, runner.targets.listener.as_ref());
    let mut observer = Observer::new(sandbox.observed());
    let control_url = listener.map(|l| format!("{}/control", l.url())).unwrap_or_default();
    let mut out = Vec::new();
    let todo: Vec<(&ToolInfo, &Classification)> =
        tools.iter().zip(classes).filter(|(t, c)| !done.contains(&t.name) && wanted(t, c)).collect();
    let noise = if todo.is_empty() { Vec::new() } else { noise(runner, live, &mut observer).await };
    for (tool, class) in todo {
        let Some(args) = harmless(tool, class, &control_url) else {
            runner.gaps.push(format!(
                "{}: a required argument cannot be filled with a harmless value; not called by the effects pack",
                tool.name
            ));
            continue;
        };
        let shown = Value::Object(args.clone());
        let mut call = FsCall {
            probe: "benign".into(),
            tool: tool.name.clone(),
            target: String::new(),
            shown_args: shown.clone(),
            answer: Answer::Silence,
            text_bytes: 0,
            leaked: None,
            changes: vec![],
            listener_hits: 0,
            late_hits: vec![],
        };
        let what = format!("benign on {}", tool.name);
        match watched(runner, live, &mut observer, &tool.name, shown, &what, SETTLE).await {
            Err(held) => call.answer = held.not_sent(),
            Ok(seen) => {
                call.listener_hits = seen.listener_hits;
                call.late_hits = seen.late_hits;
                call.changes = seen.changes;
                if let Reply::Result(r) = &seen.reply {
                    call.text_bytes = call_text(r).0.len();
                }
                call.answer = match call_answer(Ok(seen.reply)) {
                    Answer::Success { text } => Answer::Success { text: crate::text::clip(&text, 300) },
                    other => other,
                };
            }
        }
        let _ = sandbox.restore();
        // A slow call may still be running: a fresh server keeps what it goes on to do
        // out of the next call's window.
        if call.answer == Answer::Timeout && live.gone.is_none() && !runner.relaunch(live).await {
            runner.gaps.push(format!("effects: the server could not be restarted after {what} got no answer"));
        }
        out.push(BenignCall {
            call,
            writes: false,
            // A URL tool was pointed at the listener: its connection there is what it was asked.
            aimed_at_listener: class.class == Class::Url,
            read_only: tool.hint("readOnlyHint"),
            open_world: tool.hint("openWorldHint"),
            destructive: tool.hint("destructiveHint"),
        });
    }
    (out, noise)
}
