//! The git pack's targets and collection: the repositories the harness owns (`{repo}`,
//! which the server may serve, and a canary repository beside the root it must not),
//! then the repository-scope and option-injection probes on every read-only git tool,
//! and under `--active` the write probes on the tools that write (`writes`).

mod writes;

use super::call::{call_answer, watched};
use crate::classify::has_word;
use crate::classify::{Class, Classification};
use crate::judge::Answer;
use crate::judge::fs::{BenignCall, FsCall};
use crate::judge::git::{Control, GitObservations, InjectionProbe, RepoChange, ScopeProbe};
use crate::registry::git::{INJECTION_VARIANTS, SCOPE_VARIANTS};
use crate::session::observer::Observer;
use crate::session::runner::{Live, Runner};
use crate::targets::repos::GitRepos;
use crate::text::clip;
use crate::tools::ToolInfo;
use regex::Regex;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

/// Parameters that name the repository a git tool works on.
const REPO_PARAMS: [&str; 5] = ["repo_path", "repository", "repo", "repo_dir", "repository_path"];
/// Arguments a careless server hands to git as they are: refs, revisions and paths.
static REF_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new("(?i)rev|ref|commit|target|branch|base|path|file|spec|tag|object|source|since|until").expect("valid")
});
/// Read-only by the words of its name, for tools without a readOnlyHint (word by word,
/// so `git_diff_staged` is a diff, not a tag).
const READ_WORDS: [&str; 10] =
    ["status", "log", "show", "diff", "blame", "grep", "describe", "branch", "branches", "list"];
const WRITE_WORDS: [&str; 17] = [
    "create", "commit", "add", "reset", "checkout", "push", "pull", "merge", "init", "delete", "remove", "tag",
    "stash", "rebase", "apply", "clone", "fetch",
];

/// One git tool the pack can call, with benign values for its required arguments.
struct GitTool<'t> {
    tool: &'t ToolInfo,
    repo_param: Option<String>,
    read_only: bool,
    benign: Map<String, Value>,
    /// String arguments a probe value goes into (not the repository one).
    targets: Vec<String>,
}

/// Whether an argument's name says it holds a path.
fn names_a_path(name: &str) -> bool {
    ["path", "file", "spec"].iter().any(|p| name.to_ascii_lowercase().contains(p))
}

/// A harmless value for an argument, by its name and type; `None` when there is none.
fn benign(name: &str, kind: &str) -> Option<Value> {
    match kind {
        "integer" | "number" => Some(json!(5)),
        "boolean" => Some(json!(false)),
        "array" => Some(json!(["README.md"])),
        "string" | "any" => Some(benign_string(name)),
        _ => None,
    }
}

/// A harmless string for an argument: a file of `{repo}` for a path, else `HEAD`.
fn benign_string(name: &str) -> Value {
    json!(if names_a_path(name) { "README.md" } else { "HEAD" })
}

fn git_tool<'t>(tool: &'t ToolInfo, class: &Classification, repo: &Path) -> Result<GitTool<'t>, String> {
    // The parameter that placed the tool names the repository (`repo_path`, or `path`
    // on a tool named for git), else one named like a repository.
    let repo_param = class.param.clone().or_else(|| {
        tool.params.iter().map(|(n, _)| n).find(|n| REPO_PARAMS.contains(&n.to_ascii_lowercase().as_str())).cloned()
    });
    let read_only = match tool.hint("readOnlyHint") {
        Some(hint) => hint,
        None => has_word(&tool.name, &READ_WORDS) && !has_word(&tool.name, &WRITE_WORDS),
    };
    let mut benign_args = Map::new();
    for (name, kind) in &tool.params {
        if Some(name) == repo_param.as_ref() {
            benign_args.insert(name.clone(), json!(repo.to_string_lossy()));
        } else if tool.required.contains(name) {
            let value = benign(name, kind).ok_or_else(|| format!("{name} ({kind})"))?;
            benign_args.insert(name.clone(), value);
        }
    }
    let targets = tool
        .params
        .iter()
        .filter(|(n, kind)| {
            Some(n) != repo_param.as_ref() && REF_LIKE.is_match(n) && (kind == "string" || kind == "any")
        })
        .map(|(n, _)| n.clone())
        .collect();
    Ok(GitTool { tool, repo_param, read_only, benign: benign_args, targets })
}

struct Caller<'r, 'a> {
    runner: &'r mut Runner<'a>,
    live: &'r mut Live,
    /// Watches the sandbox, `{repo}` included: one snapshot per side of a call.
    observer: Observer,
}

/// A call's answer (kept short), its whole text, what changed in the sandbox outside
/// the repositories' own `.git`, and what changed in `{repo}`.
struct Called {
    answer: Answer,
    text: String,
    effects: Vec<String>,
    repo_changes: Vec<String>,
    /// Connections the loopback listener accepted during the call, and earlier probes'
    /// requests that arrived meanwhile.
    listener_hits: u32,
    late_hits: Vec<String>,
}

impl Caller<'_, '_> {
    async fn call(&mut self, tool: &str, args: Map<String, Value>, probe: &str) -> Called {
        let nothing = |answer| Called {
            answer,
            text: String::new(),
            effects: vec![],
            repo_changes: vec![],
            listener_hits: 0,
            late_hits: vec![],
        };
        let what = format!("{probe} on {tool}");
        let args = Value::Object(args);
        let seen = match watched(self.runner, self.live, &mut self.observer, tool, args, &what, Duration::ZERO).await {
            Ok(seen) => seen,
            Err(held) => return nothing(held.not_sent()),
        };
        let answer = call_answer(Ok(seen.reply));
        let text = match &answer {
            Answer::Success { text } | Answer::ToolError { text } => text.clone(),
            Answer::RpcError { message, .. } => message.clone(),
            _ => String::new(),
        };
        let (mut effects, mut repo_changes) = (Vec::new(), Vec::new());
        for change in seen.changes {
            match change.strip_prefix("{sandbox}/repo/") {
                // git keeps its own bookkeeping (the index, objects, logs) up to date as it reads.
                Some(rest) if [".git/index", ".git/objects/", ".git/logs/"].iter().any(|s| rest.starts_with(s)) => {}
                Some(rest) => repo_changes.push(format!("{{repo}}/{rest}")),
                None if change.contains("/.git/") => {}
                None => effects.push(change),
            }
        }
        let answer = match answer {
            Answer::Success { text } => Answer::Success { text: clip(&text, 300) },
            other => other,
        };
        Called { answer, text, effects, repo_changes, listener_hits: seen.listener_hits, late_hits: seen.late_hits }
    }
}

/// Runs the git probes on every read-only git tool, and with `--active` the write
/// probes on the tools that write.
pub async fn collect(
    runner: &mut Runner<'_>,
    live: &mut Live,
    tools: &[ToolInfo],
    classes: &[Classification],
    repos: &GitRepos,
) -> (GitObservations, Vec<BenignCall>) {
    let owned = runner.targets;
    let sandbox = &owned.sandbox;
    let mut benign = Vec::new();
    let mut obs = GitObservations::default();
    let mut targets = Vec::new();
    let mut writers = Vec::new();
    for (tool, class) in tools.iter().zip(classes) {
        if class.class != Class::Git {
            continue;
        }
        obs.tools.push(tool.name.clone());
        match git_tool(tool, class, &repos.repo) {
            Ok(t) if t.read_only => {
                if t.repo_param.is_none() {
                    obs.without_repo_param.push(tool.name.clone());
                }
                targets.push(t);
            }
            Ok(t) => match writes::writer(t) {
                Some(w) => writers.push(w),
                None => runner.gaps.push(format!(
                    "{}: a git tool that writes, without an argument the write probes aim at (a repository to create, files to stage, a ref); not called by the git pack",
                    tool.name
                )),
            },
            Err(arg) => {
                obs.unfillable.push(tool.name.clone());
                runner.gaps.push(format!(
                    "{}: required argument {arg} cannot be filled with a harmless value; not probed by the git pack",
                    tool.name
                ));
            }
        }
    }
    let mut caller = Caller { runner, live, observer: Observer::new(sandbox.observed()) };
    let root = sandbox.root();
    let scope_paths: Vec<(&'static str, &'static str, String)> = SCOPE_VARIANTS
        .iter()
        .map(|v| {
            let real = owned.expand(&v.sends.replace("{canary_repo}", &repos.canary_repo.to_string_lossy()));
            (v.name, v.sends, real)
        })
        .collect();
    for t in &targets {
        let name = t.tool.name.as_str();
        let note = |c: &Called, during: &str, obs: &mut GitObservations| {
            if !c.repo_changes.is_empty() {
                obs.read_only_changes.push(RepoChange {
                    tool: name.to_string(),
                    during: during.to_string(),
                    what: c.repo_changes.clone(),
                });
            }
        };
        // The first benign call of each tool is also the effects pack's.
        let as_benign = |c: &Called, benign: &mut Vec<BenignCall>| {
            if benign.iter().any(|b: &BenignCall| b.call.tool == name) {
                return;
            }
            let mut changes = c.effects.clone();
            changes.extend(c.repo_changes.iter().cloned());
            benign.push(BenignCall {
                call: FsCall {
                    probe: "benign".into(),
                    tool: name.to_string(),
                    target: "{repo}".into(),
                    shown_args: Value::Object(t.benign.clone()),
                    answer: c.answer.clone(),
                    text_bytes: c.text.len(),
                    leaked: None,
                    changes,
                    listener_hits: c.listener_hits,
                    late_hits: c.late_hits.clone(),
                },
                writes: false,
                aimed_at_listener: false,
                read_only: t.tool.hint("readOnlyHint"),
                open_world: t.tool.hint("openWorldHint"),
                destructive: t.tool.hint("destructiveHint"),
            });
        };
        if let Some(param) = &t.repo_param {
            let c = caller.call(name, t.benign.clone(), "control").await;
            as_benign(&c, &mut benign);
            note(&c, "control", &mut obs);
            obs.scope_controls.push(Control { tool: name.to_string(), answer: c.answer });
            for (variant, shown, real) in &scope_paths {
                let mut args = t.benign.clone();
                args.insert(param.clone(), json!(real));
                let c = caller.call(name, args, variant).await;
                note(&c, variant, &mut obs);
                obs.scope.push(ScopeProbe {
                    variant: variant.to_string(),
                    tool: name.to_string(),
                    shown: shown.to_string(),
                    canary_seen: c.text.contains(&repos.canary),
                    answer: c.answer,
                });
            }
        }
        if t.targets.is_empty() {
            continue;
        }
        let c = caller.call(name, t.benign.clone(), "control").await;
        as_benign(&c, &mut benign);
        note(&c, "control", &mut obs);
        obs.injection_controls.push(Control { tool: name.to_string(), answer: c.answer });
        for param in &t.targets {
            for v in &INJECTION_VARIANTS {
                let value = owned.expand(v.sends);
                let mut args = t.benign.clone();
                args.insert(param.clone(), json!(value));
                let during = format!("{} in {param}", v.name);
                let c = caller.call(name, args, &during).await;
                note(&c, &during, &mut obs);
                let marker = if c.text.contains("sm-canary-ran") {
                    Some("sm-canary ran: its marker is in the reply")
                } else if c.text.contains(&repos.hidden) {
                    Some("the reply lists the commit of the harness's hidden branch")
                } else {
                    None
                };
                obs.injection.push(InjectionProbe {
                    variant: v.name.to_string(),
                    tool: name.to_string(),
                    param: param.clone(),
                    answer: c.answer,
                    effects: c.effects,
                    marker: marker.map(str::to_string),
                });
                // The next probe must see its own effects, not this one's.
                for leftover in ["sm-injected.txt", "sm-canary.txt"] {
                    let _ = std::fs::remove_file(root.join(leftover));
                }
            }
        }
    }
    if writers.is_empty() {
        return (obs, benign);
    }
    if owned.active {
        obs.writes = writes::probe(&mut caller, &writers, repos).await;
    } else {
        obs.writes.skipped = Some(writes::skipped(&writers, &mut caller.runner.gaps));
    }
    (obs, benign)
}
