//! How a pack sends a probe and reads the reply: the call between two looks at the
//! sandbox and the listener, the reply's text, and the answer a judge reads.

use crate::judge::Answer;
use crate::judge::fs::diff;
use crate::session::Reply;
use crate::session::observer::Observer;
use crate::session::runner::{Held, Live, Runner};
use crate::text::clip;
use serde_json::Value;
use std::time::Duration;

/// How long a connection the server makes as a call returns is given to be accepted.
pub const SETTLE: Duration = Duration::from_millis(5);

/// One call and what the harness's targets saw while it ran.
pub struct Watched {
    pub reply: Reply,
    /// What changed in the observed directories.
    pub changes: Vec<String>,
    /// Connections the loopback listener accepted during the call that no earlier
    /// probe explains.
    pub listener_hits: u32,
    /// Requests that arrived during the call but name an earlier probe's token: that
    /// probe's, arriving late, never charged to this call.
    pub late_hits: Vec<String>,
}

/// How long a connection accepted during a call is given to send its request, so that
/// the request says whose it is.
const HEAD_WAIT: Duration = Duration::from_millis(500);

/// Sends one counted call between two snapshots of `observer`'s directories and two
/// looks at the listener's record, unless the pack's calls are held. `settle`: how long
/// a connection made as the call returns is given to arrive.
pub async fn watched(
    runner: &mut Runner<'_>,
    live: &mut Live,
    observer: &mut Observer,
    tool: &str,
    args: Value,
    what: &str,
    settle: Duration,
) -> Result<Watched, Held> {
    if let Some(held) = runner.held(live).await {
        return Err(held);
    }
    let listener = runner.targets.listener.as_ref();
    let before = observer.snapshot();
    let (from, accepted) = listener.map_or((0, 0), |l| (l.recorded(), l.hits()));
    let reply = runner.send_call(live, tool, args, what, true).await;
    if listener.is_some() && !settle.is_zero() {
        tokio::time::sleep(settle).await;
    }
    let (mut listener_hits, mut late_hits) = (0, Vec::new());
    if let Some(l) = listener {
        let seen = l.headed_since(from, HEAD_WAIT).await;
        // Connections past the listener's record bound explain nothing: all are charged.
        let unrecorded = (l.hits() - accepted).saturating_sub(seen.len() as u32);
        listener_hits = unrecorded;
        for hit in &seen {
            match l.earlier_probe(hit) {
                Some(probe) => late_hits.push(format!("{} ({probe})", crate::text::clip(&hit.line, 120))),
                None => listener_hits += 1,
            }
        }
    }
    Ok(Watched { reply, changes: diff(&before, &observer.snapshot()), listener_hits, late_hits })
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

/// What a tools/call reply amounts to, for the packs that keep the answer text: an
/// error's text is clipped; a call that was held back is not sent.
pub fn call_answer(sent: Result<Reply, Held>) -> Answer {
    match sent {
        Err(held) => held.not_sent(),
        Ok(reply) => match plain_answer(reply) {
            Answer::ToolError { text } => Answer::ToolError { text: clip(&text, 2000) },
            other => other,
        },
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
        Reply::Timeout { .. } => Answer::Timeout,
        Reply::Silence => Answer::Silence,
        Reply::TooLarge { bytes } => Answer::TooLarge { bytes },
        Reply::Gone(why) => Answer::Died { reason: why },
    }
}
