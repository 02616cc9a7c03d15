//! The git pack's write probes (`--active`): tools that create repositories, stage
//! files, or write while taking a ref. Every call starts from `{repo}` as built and is
//! judged by what the harness then finds on disk and reads from `{repo}` with git,
//! never by the reply; `{repo}` is put back as built after the last one.

use super::{Called, Caller, GitTool, WRITE_WORDS};
use crate::classify::{has_word, word_from};
use crate::judge::git::{WriteObservations, WriteProbe, WriteRun, WriteSkip};
use crate::registry::git::{
    ADD_CONTROL, ADD_VARIANTS, INIT_CONTROL, INIT_VARIANTS, OPTION_BRANCH, REF_OPTION_VARIANTS, UPSTREAM,
};
use crate::targets::Targets;
use crate::targets::repos::{GitRepos, read_small};
use serde_json::{Value, json};
use std::path::{Component, Path, PathBuf};

/// The line the harness adds to `{repo}/README.md` before each git-ref-options call:
/// an uncommitted change that `--force` or `--hard` would throw away.
const UNCOMMITTED: &str = "sm-uncommitted line\n";
/// The file the `output` value names, relative to `{sandbox}`.
const INJECTED: &str = "sm-injected.txt";

/// Which write check a tool is for.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Init,
    Stage,
    Refs,
}

/// A git tool that writes, the check it is for, and the argument the probes go into
/// (`None` for git-ref-options, which fills each of the tool's ref-like arguments).
pub(super) struct Writer<'t> {
    pub tool: GitTool<'t>,
    pub kind: Kind,
    pub decided_by: String,
    param: Option<(String, bool)>,
}

/// The write check a tool that writes is for, when one is: by its name, and for
/// git-ref-options by an argument the probes can fill.
pub(super) fn writer(mut tool: GitTool<'_>) -> Option<Writer<'_>> {
    let name = tool.tool.name.clone();
    let said = |words: &[&str]| word_from(&name, words).map(|w| format!("its name says {w}"));
    let files = tool
        .tool
        .params
        .iter()
        .filter(|(n, _)| Some(n) != tool.repo_param.as_ref())
        .find(|(n, kind)| kind == "array" || ((kind == "string" || kind == "any") && super::names_a_path(n)))
        .map(|(n, kind)| (n.clone(), kind == "array"));
    let creates_repo = has_word(&name, &["create", "new"]) && has_word(&name, &["repo", "repository"]);
    let (kind, decided_by, param) = if let Some(why) =
        said(&["init"]).or(creates_repo.then(|| "its name says it creates a repository".to_string()))
    {
        match &tool.repo_param {
            Some(p) => (Kind::Init, why, Some((p.clone(), false))),
            None => return None,
        }
    } else if let (Some(why), Some(files)) = (said(&["add", "stage"]), files) {
        (Kind::Stage, why, Some(files))
    } else if !tool.targets.is_empty() {
        let why = match tool.tool.hint("readOnlyHint") {
            Some(false) => "annotated readOnlyHint: false".to_string(),
            _ => said(&WRITE_WORDS).unwrap_or_else(|| "its name does not say it only reads".to_string()),
        };
        (Kind::Refs, why, None)
    } else {
        return None;
    };
    for (arg, value) in tool.benign.iter_mut() {
        if Some(arg) != tool.repo_param.as_ref()
            && let Some(branch) = branch_value(&name, arg)
        {
            *value = branch;
        }
    }
    Some(Writer { tool, kind, decided_by, param })
}

/// A branch argument of a tool that writes names a branch that exists (`main`), or
/// for a tool that makes one, a new one; `None` for an argument that is no branch.
fn branch_value(tool: &str, arg: &str) -> Option<Value> {
    let lower = arg.to_ascii_lowercase();
    if !lower.contains("branch") && lower != "name" {
        return None;
    }
    let base = ["base", "start", "from", "source"].iter().any(|w| lower.contains(w));
    let makes = has_word(tool, &["create", "new"]);
    Some(json!(if makes && !base { "sm-benign-branch" } else { "main" }))
}

/// What the write checks record when `--active` is off: the tools each would call, and
/// the gap line that names them.
pub(super) fn skipped(writers: &[Writer], gaps: &mut Vec<String>) -> WriteSkip {
    let names: Vec<&str> = writers.iter().map(|w| w.tool.tool.name.as_str()).collect();
    gaps.push(format!(
        "git: {} write to the repository; git-init-scope, git-add-scope and git-ref-options call them only with --active",
        names.join(", ")
    ));
    let of = |k: Kind| writers.iter().filter(|w| w.kind == k).map(|w| w.tool.tool.name.clone()).collect();
    WriteSkip {
        why: "runs only with --active: these probes make the server write".to_string(),
        init: of(Kind::Init),
        stage: of(Kind::Stage),
        refs: of(Kind::Refs),
    }
}

/// Runs every writer's probes and puts `{repo}` back as built.
pub(super) async fn probe(caller: &mut Caller<'_, '_>, writers: &[Writer<'_>], repos: &GitRepos) -> WriteObservations {
    let owned = caller.runner.targets;
    let mut obs = WriteObservations::default();
    for w in writers {
        match w.kind {
            Kind::Init => obs.init.push(init(caller, w, owned, repos).await),
            Kind::Stage => obs.stage.push(stage(caller, w, owned, repos).await),
            Kind::Refs => obs.refs.push(refs(caller, w, owned, repos).await),
        }
    }
    put_back(caller, repos);
    let _ = owned.sandbox.restore();
    obs
}

/// `{repo}` as built again, or a gap saying it could not be (once).
fn put_back(caller: &mut Caller<'_, '_>, repos: &GitRepos) {
    if let Err(e) = repos.reset() {
        let gap = format!("git: {e}; later calls saw {{repo}} as an earlier write probe left it");
        if !caller.runner.gaps.contains(&gap) {
            caller.runner.gaps.push(gap);
        }
    }
}

/// One probe call from `{repo}` as built (`prepare` adds what the call needs), then
/// `look`: what the harness saw afterwards, or why it could not look.
async fn call(
    caller: &mut Caller<'_, '_>,
    w: &Writer<'_>,
    repos: &GitRepos,
    (variant, param, shown, value): (&str, &str, &str, Value),
    prepare: impl FnOnce(),
    look: impl FnOnce() -> Result<Vec<String>, String>,
) -> WriteProbe {
    put_back(caller, repos);
    prepare();
    let mut args = w.tool.benign.clone();
    args.insert(param.to_string(), value);
    let name = &w.tool.tool.name;
    let called: Called = caller.call(name, args, &format!("{variant} in {param}")).await;
    let (seen, unread) = match look() {
        Ok(seen) => (seen, None),
        Err(why) => (Vec::new(), Some(why)),
    };
    WriteProbe {
        variant: variant.into(),
        param: param.into(),
        shown: shown.into(),
        answer: called.answer,
        seen,
        unread,
    }
}

fn run(w: &Writer, control: WriteProbe, probes: Vec<WriteProbe>, blind: Option<String>) -> WriteRun {
    WriteRun { tool: w.tool.tool.name.clone(), decided_by: w.decided_by.clone(), control, probes, blind }
}

/// A path with `.` and `..` taken out as written (no link followed).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Where a repository asked for at `sent` can land, as paths the harness built: against
/// the server's working directory or, for a relative path, against `{repo}`, with
/// `{repo}/sm-link` taken as the canary repository it points to.
fn landings(owned: &Targets, repos: &GitRepos, sent: &str) -> Vec<PathBuf> {
    let mut bases = vec![owned.sandbox.root()];
    if Path::new(sent).is_relative() {
        bases.push(repos.repo.clone());
    }
    let link = repos.repo.join("sm-link");
    bases
        .into_iter()
        .map(|b| lexical(&b.join(sent)))
        .map(|p| match p.strip_prefix(&link) {
            Ok(rest) => repos.canary_repo.join(rest),
            Err(_) => p,
        })
        .collect()
}

/// Whether a repository (a `.git` in it, or a bare one) is at `at`.
fn repository_at(at: &Path) -> bool {
    at.join(".git").exists() || (at.join("HEAD").is_file() && at.join("objects").is_dir())
}

/// Removes what a probe made at `at`, unless a link the server could have planted lies
/// between the sandbox and it (the harness deletes only inside its own trees).
fn clear(base: &Path, at: &Path) {
    let linked = at
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(base) && *a != base)
        .any(|a| std::fs::symlink_metadata(a).map(|m| m.file_type().is_symlink()).unwrap_or(false));
    if !linked && at.starts_with(base) {
        let _ = std::fs::remove_dir_all(at);
    }
}

async fn init(caller: &mut Caller<'_, '_>, w: &Writer<'_>, owned: &Targets, repos: &GitRepos) -> WriteRun {
    let Some((param, _)) = w.param.clone() else { unreachable!("an init writer carries its path argument") };
    let base = owned.sandbox.base();
    let mut done = Vec::new();
    let control = std::iter::once(("control", INIT_CONTROL));
    for (variant, shown) in control.chain(INIT_VARIANTS.iter().map(|v| (v.name, v.sends))) {
        let sent = owned.expand(shown);
        let places = landings(owned, repos, &sent);
        // Every path is fresh: nothing is there before the call.
        let prepare = || places.iter().for_each(|p| clear(base, p));
        let look = || match places.iter().any(|p| repository_at(p)) {
            true => Ok(vec![format!("a repository at {shown}")]),
            false => Ok(vec![]),
        };
        done.push(call(caller, w, repos, (variant, &param, shown, json!(sent)), prepare, look).await);
        places.iter().for_each(|p| clear(base, p));
    }
    let control = done.remove(0);
    run(w, control, done, None)
}

async fn stage(caller: &mut Caller<'_, '_>, w: &Writer<'_>, owned: &Targets, repos: &GitRepos) -> WriteRun {
    let Some((param, array)) = w.param.clone() else { unreachable!("a staging writer carries its files argument") };
    let wrap = |p: &str| if array { json!([p]) } else { json!(p) };
    // The outside files the probes name, and the blob ids their content has.
    let outside: Vec<(&str, Result<String, String>)> = [
        ("{canary}/secret.txt", owned.sandbox.canary_dir().join(crate::targets::sandbox::SECRET_FILE)),
        // The canary repository and {repo}-sibling hold the same secret.md.
        ("the canary repositories' secret.md", repos.canary_repo.join("secret.md")),
    ]
    .into_iter()
    .map(|(shown, path)| (shown, repos.blob_id(&path)))
    .collect();
    let control_file = repos.repo.join(ADD_CONTROL);
    let control = call(
        caller,
        w,
        repos,
        ("control", &param, ADD_CONTROL, wrap(ADD_CONTROL)),
        || {
            let _ = std::fs::write(&control_file, "sealmark staging control\n");
        },
        || match repos.index()?.iter().any(|e| e.path == ADD_CONTROL) {
            true => Ok(vec![format!("{ADD_CONTROL} staged")]),
            false => Ok(vec![]),
        },
    )
    .await;
    let mut probes = Vec::new();
    for v in &ADD_VARIANTS {
        let look = || {
            let mut seen = Vec::new();
            for e in repos.index()? {
                let named = outside.iter().find(|(_, blob)| blob.as_deref() == Ok(e.blob.as_str()));
                if let Some((shown, _)) = named {
                    seen.push(format!("the index holds {shown} as {}", e.path));
                } else if e.path.starts_with("../") || e.path.starts_with('/') || e.path.starts_with("sm-link/") {
                    seen.push(format!("the index names {}", e.path));
                }
            }
            for (shown, blob) in &outside {
                if repos.has_object(blob.as_deref().map_err(|e| e.clone())?)? {
                    seen.push(format!("the object database holds the content of {shown}"));
                }
            }
            Ok(seen)
        };
        let sent = owned.expand(v.sends);
        probes.push(call(caller, w, repos, (v.name, &param, v.sends, wrap(&sent)), || {}, look).await);
    }
    run(w, control, probes, None)
}

/// The git commands on which a probe value of git-ref-options has an effect to see.
const REACHED: [&str; 7] = ["checkout", "switch", "reset", "branch", "log", "show", "diff"];

async fn refs(caller: &mut Caller<'_, '_>, w: &Writer<'_>, owned: &Targets, repos: &GitRepos) -> WriteRun {
    let readme = repos.repo.join("README.md");
    let config = repos.repo.join(".git/config");
    let injected = owned.sandbox.root().join(INJECTED);
    let branch = format!("refs/heads/{OPTION_BRANCH}");
    let prepare = || {
        let _ = std::fs::remove_file(&injected);
        let mut text = read_small(&readme).unwrap_or_default();
        text.push_str(UNCOMMITTED);
        let _ = std::fs::write(&readme, text);
    };
    let look = || {
        let mut seen = Vec::new();
        match repos.head()? {
            None => seen.push("HEAD is detached".to_string()),
            Some(head) if head == branch => seen.push(format!("HEAD names {branch}")),
            Some(_) => {}
        }
        if repos.refs()?.contains(&branch) {
            seen.push(format!("the branch {OPTION_BRANCH} was created"));
        }
        let config = read_small(&config).ok_or("{repo}/.git/config is not a readable file")?;
        if config.contains(&format!("refs/heads/{UPSTREAM}")) {
            seen.push(format!("main's upstream was set to {UPSTREAM}"));
        }
        match (readme.exists(), read_small(&readme)) {
            (true, None) => return Err("{repo}/README.md is not a readable file".to_string()),
            (true, Some(text)) if text.contains(UNCOMMITTED) => {}
            _ => seen.push("README.md's uncommitted line was discarded".to_string()),
        }
        if injected.exists() {
            seen.push(format!("{{sandbox}}/{INJECTED} was created"));
            let _ = std::fs::remove_file(&injected);
        }
        Ok(seen)
    };
    // The control fills the first ref-like argument, also when it is optional.
    let first = &w.tool.targets[0];
    let benign = (w.tool.benign.get(first).cloned())
        .or_else(|| branch_value(&w.tool.tool.name, first))
        .unwrap_or_else(|| super::benign_string(first));
    let shown = benign.as_str().unwrap_or("").to_string();
    let control = call(caller, w, repos, ("control", first, &shown, benign), prepare, look).await;
    let mut probes = Vec::new();
    for param in &w.tool.targets {
        for v in &REF_OPTION_VARIANTS {
            let sent = owned.expand(v.sends);
            probes.push(call(caller, w, repos, (v.name, param, v.sends, json!(sent)), prepare, look).await);
        }
    }
    let blind = word_from(&w.tool.tool.name, &REACHED)
        .is_none()
        .then(|| format!("its name is none of {}, the git commands the values act on", REACHED.join(", ")));
    run(w, control, probes, blind)
}
