//! Collects what the fs and effects packs judge: control reads, escape attempts,
//! link probes, a large read and benign calls, each between two sandbox snapshots.

use super::call::{SETTLE, call_text, plain_answer, watched};
use crate::classify::{Class, Classification};
use crate::judge::Answer;
use crate::judge::fs::{BenignCall, FsCall, FsObservations, SandboxPaths, expand_variant};
use crate::registry::fs::{LINK_READS, LINK_WRITES, READ_VARIANTS, WRITE_VARIANTS};
use crate::session::Reply;
use crate::session::observer::Observer;
use crate::session::runner::{Live, Runner};
use crate::targets::sandbox::{CONTROL_FILE, LARGE_FILE};
use crate::tools::ToolInfo;
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::LazyLock;
use std::time::Duration;

static WRITER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new("(?i)write|save|create|put|append|edit|update|upload|mkdir|move|copy|rename|delete|remove|touch")
        .expect("valid")
});
static LISTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("(?i)list|\\bls\\b|dir|tree|glob|find|search|walk").expect("valid"));
static METADATA: LazyLock<Regex> = LazyLock::new(|| Regex::new("(?i)stat|info|exists|size|meta").expect("valid"));
static CONTENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("(?i)^(content|contents|text|data|body)$").expect("valid"));

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Returns file contents.
    Reader,
    /// Returns directory entries.
    Lister,
    /// Returns only metadata: its control passes on any answer, and no canary can come back.
    Metadata,
    Writer,
}

/// A path tool the packs can aim, with the arguments that make a call complete.
struct Target<'t> {
    tool: &'t ToolInfo,
    param: String,
    role: Role,
    /// The tool's other required arguments, filled with a marker.
    filler: Map<String, Value>,
    /// Whether the control worked with an absolute path (else relative).
    absolute: bool,
}

impl Target<'_> {
    fn args(&self, path: &str) -> Value {
        let mut args = self.filler.clone();
        args.insert(self.param.clone(), Value::String(path.to_string()));
        Value::Object(args)
    }
}

struct Probe<'r, 'a> {
    runner: &'r mut Runner<'a>,
    live: &'r mut Live,
    observer: Observer,
}

impl Probe<'_, '_> {
    async fn call(&mut self, probe: &str, t: &Target<'_>, target: &str, secrets: &[(&str, &str)]) -> FsCall {
        let tool = t.tool.name.as_str();
        let args = t.args(target);
        let unsent = |answer: Answer| FsCall {
            probe: probe.into(),
            tool: tool.into(),
            target: target.into(),
            shown_args: args.clone(),
            answer,
            text_bytes: 0,
            leaked: None,
            changes: vec![],
            listener_hits: 0,
            late_hits: vec![],
        };
        let what = format!("{probe} on {tool}");
        // Only benign calls are judged by the listener: only they wait for a late connection.
        let settle = if matches!(probe, "control" | "benign") { SETTLE } else { Duration::ZERO };
        let watched = match watched(self.runner, self.live, &mut self.observer, tool, args.clone(), &what, settle).await
        {
            Ok(w) => w,
            Err(held) => return unsent(held.not_sent()),
        };
        let (answer, whole, text_bytes) = match watched.reply {
            Reply::Result(r) => {
                let (text, is_error) = call_text(&r);
                let bytes = text.len();
                let whole = r.to_string();
                let shown = crate::text::clip(&text, 300);
                (
                    if is_error { Answer::ToolError { text: shown } } else { Answer::Success { text: shown } },
                    whole,
                    bytes,
                )
            }
            Reply::Error { code, message } => (Answer::RpcError { code, message: message.clone() }, message, 0),
            Reply::TooLarge { bytes } => (Answer::TooLarge { bytes }, String::new(), bytes as usize),
            other => (plain_answer(other), String::new(), 0),
        };
        let leaked = secrets.iter().find(|(_, token)| whole.contains(token)).map(|(name, _)| name.to_string());
        FsCall {
            probe: probe.into(),
            tool: tool.into(),
            target: target.into(),
            shown_args: args,
            answer,
            text_bytes,
            leaked,
            changes: watched.changes,
            listener_hits: watched.listener_hits,
            late_hits: watched.late_hits,
        }
    }
}

fn role_of(tool: &ToolInfo, param: &str) -> Role {
    let has_content = tool.params.iter().any(|(p, _)| p != param && CONTENT.is_match(p));
    if WRITER.is_match(&tool.name) || tool.hint("destructiveHint") == Some(true) || has_content {
        Role::Writer
    } else if LISTER.is_match(&tool.name) {
        Role::Lister
    } else if METADATA.is_match(&tool.name) {
        Role::Metadata
    } else {
        Role::Reader
    }
}

/// Runs the fs and effects probes on every path tool the classification found.
pub async fn collect(
    runner: &mut Runner<'_>,
    live: &mut Live,
    tools: &[ToolInfo],
    classes: &[Classification],
) -> FsObservations {
    let (sandbox, listener) = (&runner.targets.sandbox, runner.targets.listener.as_ref());
    let large_limit = runner.config.setting_u64("fs-large-read", "max_bytes") as usize;
    let mut obs = FsObservations { large_limit, listener: listener.is_some(), ..Default::default() };
    let mut targets = Vec::new();
    for (tool, class) in tools.iter().zip(classes) {
        if class.class != Class::Path {
            continue;
        }
        let Some(param) = class.param.clone() else { continue };
        let role = role_of(tool, &param);
        let mut filler = Map::new();
        let mut unfillable = Vec::new();
        for req in tool.required.iter().filter(|r| **r != param) {
            if CONTENT.is_match(req) && tool.param_type(req).is_none_or(|t| t == "string" || t == "any") {
                filler.insert(req.clone(), Value::String("sealmark write probe\n".to_string()));
            } else {
                unfillable.push(req.as_str());
            }
        }
        if !unfillable.is_empty() {
            runner.gaps.push(format!("{}: required argument(s) {} cannot be filled with a harness-owned value; not probed by the fs and effects packs", tool.name, unfillable.join(", ")));
            continue;
        }
        match role {
            Role::Writer => obs.writers.push(tool.name.clone()),
            _ => obs.readers.push(tool.name.clone()),
        }
        targets.push(Target { tool, param, role, filler, absolute: true });
    }
    if targets.is_empty() {
        return obs;
    }

    let root = sandbox.root().to_string_lossy().into_owned();
    let paths = SandboxPaths {
        root: root.clone(),
        canary: sandbox.canary_dir().to_string_lossy().into_owned(),
        dir_name: sandbox.base().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
    };
    let files = sandbox.files.clone();
    let secrets = [("canary", files.canary.as_str()), ("sibling root's canary", files.sibling.as_str())];
    let mut p = Probe { runner, live, observer: Observer::new(sandbox.observed()) };

    // The server's own noise: what changes on a call that cannot do anything.
    obs.noise = super::effects::noise(p.runner, p.live, &mut p.observer).await;
    // Controls, which double as the benign calls of the readers.
    for t in targets.iter_mut().filter(|t| t.role != Role::Writer) {
        let (abs, rel) = match t.role {
            Role::Lister => (root.clone(), ".".to_string()),
            _ => (format!("{root}/{CONTROL_FILE}"), CONTROL_FILE.to_string()),
        };
        let marker = if t.role == Role::Lister { CONTROL_FILE } else { files.control.as_str() };
        let mut call = p.call("control", t, &abs, &[("control", marker)]).await;
        if !control_ok(&call, t.role) {
            let retry = p.call("control", t, &rel, &[("control", marker)]).await;
            if control_ok(&retry, t.role) {
                t.absolute = false;
                call = retry;
            }
        }
        if t.role == Role::Metadata && control_ok(&call, t.role) {
            call.leaked = Some("control".to_string());
        }
        let _ = sandbox.restore();
        obs.benign.push(BenignCall {
            call: call.clone(),
            writes: false,
            aimed_at_listener: false,
            read_only: t.tool.hint("readOnlyHint"),
            open_world: t.tool.hint("openWorldHint"),
            destructive: t.tool.hint("destructiveHint"),
        });
        obs.controls.push(call);
    }
    let working: Vec<&Target> = targets
        .iter()
        .filter(|t| obs.controls.iter().any(|c| c.tool == t.tool.name && c.leaked.as_deref() == Some("control")))
        .collect();

    // Escapes by reading, and the large read.
    for t in &working {
        for v in &READ_VARIANTS {
            let path = expand_variant(v.sends, &paths, t.role == Role::Lister);
            let secrets: Vec<(&str, &str)> = if t.role == Role::Lister {
                vec![("canary", files.canary.as_str()), ("sibling root's canary", files.sibling.as_str())]
            } else {
                secrets.to_vec()
            };
            let call = p.call(v.name, t, &path, &secrets).await;
            obs.reads.push(call);
        }
        if t.role == Role::Reader {
            let path = if t.absolute { format!("{root}/{LARGE_FILE}") } else { LARGE_FILE.to_string() };
            obs.large.push(p.call("large-file", t, &path, &[]).await);
        }
    }

    // Links: reads with working readers, writes with every writer.
    let link_path = |t: &Target, rel: &str| if t.absolute { format!("{root}/{rel}") } else { rel.to_string() };
    for t in &working {
        for v in &LINK_READS {
            let rel = match t.role {
                Role::Lister => match std::path::Path::new(v.sends).parent().and_then(|d| d.to_str()) {
                    Some(dir) if !dir.is_empty() => dir,
                    _ => continue,
                },
                _ => v.sends,
            };
            let call = p.call(v.name, t, &link_path(t, rel), &secrets).await;
            obs.links.push(call);
        }
    }
    let writers: Vec<&Target> = targets.iter().filter(|t| t.role == Role::Writer).collect();
    for t in &writers {
        for v in &LINK_WRITES {
            let call = p.call(v.name, t, &format!("{root}/{}", v.sends), &secrets).await;
            let _ = sandbox.restore();
            obs.links.push(call);
        }
        for v in &WRITE_VARIANTS {
            let path = expand_variant(v.sends, &paths, false);
            let call = p.call(v.name, t, &path, &secrets).await;
            let _ = sandbox.restore();
            obs.writes.push(call);
        }
        // A benign write inside the root, for effects-closed-world.
        let call = p.call("benign", t, &format!("{root}/sealmark-benign.txt"), &[]).await;
        let _ = std::fs::remove_file(sandbox.root().join("sealmark-benign.txt"));
        obs.benign.push(BenignCall {
            call,
            writes: true,
            aimed_at_listener: false,
            read_only: t.tool.hint("readOnlyHint"),
            open_world: t.tool.hint("openWorldHint"),
            destructive: t.tool.hint("destructiveHint"),
        });
    }
    obs
}

fn control_ok(call: &FsCall, role: Role) -> bool {
    match role {
        Role::Metadata => matches!(call.answer, Answer::Success { .. }),
        _ => matches!(call.answer, Answer::Success { .. }) && call.leaked.as_deref() == Some("control"),
    }
}
