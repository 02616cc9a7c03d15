//! Judges of the fs and effects packs, the probes they send, and the sandbox
//! observer's snapshots.

use super::Answer;
use super::Finding;
use crate::model::{Evidence, Verdict, VerifiedBy};
use crate::text::{clip, visible};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The value a read variant sends, with the sandbox's real paths filled in.
pub fn expand_variant(template: &str, paths: &SandboxPaths, directory: bool) -> String {
    let s = template
        .replace("{nul}", "\u{0}")
        .replace("{canary_noslash}", paths.canary.trim_start_matches('/'))
        .replace("{canary}", &paths.canary)
        .replace("{sandbox_dir_name}", &paths.dir_name)
        .replace("{sandbox}", &paths.root);
    if directory {
        if let Some(cut) = s.strip_suffix("secret.txt/") {
            return cut.to_string();
        }
        for sep in ["%252f", "%2f", "%2F", "%c0%af", "\\", "//", "/"] {
            if let Some(cut) = s.strip_suffix(&format!("{sep}secret.txt")) {
                return cut.to_string();
            }
        }
        s.replace("secret.txt", "")
    } else {
        s
    }
}

/// The sandbox's real paths, as the probes need them.
#[derive(Debug, Clone)]
pub struct SandboxPaths {
    pub root: String,
    pub canary: String,
    pub dir_name: String,
}

/// One entry of a snapshot: kind, size and content hash, or link target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File { size: u64, hash: String },
    Dir,
    Link { target: String },
}

/// A snapshot of the observed directories: `<observed name>/<relative path>` → entry.
pub type Snapshot = BTreeMap<String, Entry>;

/// What changed between two snapshots, one line each, in path order.
pub fn diff(before: &Snapshot, after: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for (path, entry) in after {
        match before.get(path) {
            None => out.push(format!("{path} was created")),
            Some(old) if old != entry => out.push(format!("{path} was changed")),
            _ => {}
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        out.push(format!("{path} was removed"));
    }
    out.sort();
    out
}

/// The changes outside the root: what an escape changed.
pub fn outside_root(changes: &[String]) -> Vec<String> {
    changes.iter().filter(|c| !c.starts_with("{sandbox}/")).cloned().collect()
}

/// The path a change line names (`{sandbox_home}/log was changed` → `{sandbox_home}/log`).
fn changed_path(change: &str) -> &str {
    change.rsplit_once(" was ").map_or(change, |(path, _)| path)
}

/// `changes` without the server's own noise: paths in `noise` that lie where no probe
/// aims (the root or the sandbox home). A change in the canary directory or the
/// sibling root, the targets of every escape, is never noise.
pub fn without_noise(changes: &[String], noise: &[String]) -> Vec<String> {
    changes
        .iter()
        .filter(|c| {
            let path = changed_path(c);
            let excusable = path.starts_with("{sandbox_home}/") || path.starts_with("{sandbox}/");
            !(excusable && noise.iter().any(|n| n == path))
        })
        .cloned()
        .collect()
}

/// One call the fs and effects packs made.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsCall {
    /// The variant or purpose (`traversal`, `control`, `benign`…).
    pub probe: String,
    pub tool: String,
    /// The path argument as sent.
    pub target: String,
    /// The arguments as sent, with placeholders for sandbox paths.
    pub shown_args: Value,
    pub answer: Answer,
    /// The full text of the answer, for canary and size checks.
    pub text_bytes: usize,
    /// Which secret came back in the answer, if any.
    pub leaked: Option<String>,
    /// What the observer saw change during the call.
    pub changes: Vec<String>,
    /// Connections to the loopback listener during the call that no earlier probe explains.
    pub listener_hits: u32,
    /// Requests during the call that belong to an earlier probe (arriving late).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub late_hits: Vec<String>,
}

impl FsCall {
    fn evidence(&self, outcome: String, by: VerifiedBy, code: &str) -> Evidence {
        Evidence::new(format!("{}: {} \"{}\"", self.probe, self.tool, visible(&self.target)), outcome, by)
            .tool(&self.tool)
            .args(self.shown_args.clone())
            .code(code)
    }

    fn reply(&self) -> String {
        match &self.answer {
            Answer::Success { text } => {
                format!("answered ({} bytes): \"{}\"", self.text_bytes, clip(&visible(text.trim()), 80))
            }
            other => other.brief(),
        }
    }

    fn answered(&self) -> bool {
        self.answer.was_answered()
    }
}

/// Everything the fs and effects packs observed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FsObservations {
    /// Path tools the packs could aim (with their path parameter), by role.
    pub readers: Vec<String>,
    pub writers: Vec<String>,
    /// The control read of `{sandbox}/ok.txt` per reader: whether it worked.
    pub controls: Vec<FsCall>,
    pub reads: Vec<FsCall>,
    pub writes: Vec<FsCall>,
    pub links: Vec<FsCall>,
    pub large: Vec<FsCall>,
    pub large_limit: usize,
    /// Benign control calls of annotated and unannotated tools, for the effects pack.
    pub benign: Vec<BenignCall>,
    /// Whether a loopback listener was running (for effects-closed-world).
    pub listener: bool,
    /// Paths the server changed during calls that cannot do anything (a call to a tool
    /// that does not exist): its own bookkeeping, never blamed on a probe.
    pub noise: Vec<String>,
}

impl FsObservations {
    /// The noise a write probe is judged without: what changes on a call that cannot do
    /// anything, what changed during the control reads, what any benign call changed in
    /// the sandbox home, and the server's bookkeeping there (a probe aims at nothing in
    /// the home).
    fn write_noise(&self) -> Vec<String> {
        let mut noise = self.noise.clone();
        noise.extend(self.controls.iter().flat_map(|c| c.changes.iter().map(|x| changed_path(x).to_string())));
        let benign = self.benign.iter().map(|b| &b.call);
        noise.extend(home_paths(benign, 1));
        noise.extend(self.bookkeeping());
        noise
    }

    /// The noise a benign call is judged without: what changes on a call that cannot do
    /// anything, and the server's bookkeeping in the sandbox home.
    fn effects_noise(&self) -> Vec<String> {
        let mut noise = self.noise.clone();
        noise.extend(self.bookkeeping());
        noise
    }

    /// The sandbox-home paths that changed during calls of two or more tools, any call
    /// the fs and effects packs made: a log or history of every call, not one tool's
    /// doing. Counting every call, not only the benign ones, catches a server that
    /// writes its books on a timer, whichever call is running then.
    fn bookkeeping(&self) -> Vec<String> {
        let probes = [&self.controls, &self.reads, &self.writes, &self.links, &self.large].into_iter().flatten();
        home_paths(probes.chain(self.benign.iter().map(|b| &b.call)), 2)
    }
    /// Evidence naming the noise left out, when there is some.
    fn noise_evidence(&self, noise: &[String]) -> Option<Evidence> {
        let shown: Vec<&String> =
            noise.iter().filter(|n| !n.starts_with("{canary}") && !n.contains("-sibling")).collect();
        (!shown.is_empty()).then(|| {
            let list: Vec<&str> = shown.iter().map(|s| s.as_str()).collect();
            Evidence::new(
                "noise",
                format!(
                    "the server's own bookkeeping, changed during calls that cannot do anything, during control reads or (in the sandbox home) during benign calls too, so not blamed on a probe: {}",
                    clip(&list.join(", "), 1000)
                ),
                VerifiedBy::Sandbox,
            )
            .code("fs.noise")
        })
    }
}

/// The paths under `{sandbox_home}` that changed during calls of at least `tools`
/// different tools.
fn home_paths<'c>(calls: impl Iterator<Item = &'c FsCall>, tools: usize) -> Vec<String> {
    let mut by_path: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> = Default::default();
    for c in calls {
        for change in &c.changes {
            let path = changed_path(change);
            if path.starts_with("{sandbox_home}/") {
                by_path.entry(path).or_default().insert(c.tool.as_str());
            }
        }
    }
    by_path.into_iter().filter(|(_, by)| by.len() >= tools).map(|(path, _)| path.to_string()).collect()
}

/// Probes that were sent but never answered (or not sent at all), named for a summary.
fn unanswered_names(calls: &[&FsCall]) -> Option<String> {
    let missing: Vec<String> =
        calls.iter().filter(|c| !c.answered()).map(|c| format!("{} on {}", c.probe, c.tool)).collect();
    missing.first().map(|first| {
        let reason = calls.iter().find(|c| !c.answered()).map(|c| c.answer.brief()).unwrap_or_default();
        format!("{} of {} probe(s) got no answer (first {first}: {reason})", missing.len(), calls.len())
    })
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BenignCall {
    pub call: FsCall,
    /// A benign write (inside the root): counted for closed-world only, and for
    /// read-only when the tool claims to be read-only.
    pub writes: bool,
    /// The call was given the listener's own URL (a URL tool): a connection there is
    /// what it was asked to do, so closed-world does not read it.
    pub aimed_at_listener: bool,
    pub read_only: Option<bool>,
    pub open_world: Option<bool>,
    pub destructive: Option<bool>,
}

/// The readers whose control read worked: only they are aimed outside the root.
fn working_readers(obs: &FsObservations) -> Vec<&str> {
    obs.controls
        .iter()
        .filter(|c| matches!(c.answer, Answer::Success { .. }) && c.leaked.as_deref() == Some("control"))
        .map(|c| c.tool.as_str())
        .collect()
}

fn control_evidence(obs: &FsObservations) -> Vec<Evidence> {
    obs.controls
        .iter()
        .map(|c| {
            let ok = matches!(c.answer, Answer::Success { .. }) && c.leaked.as_deref() == Some("control");
            let outcome = if ok {
                "the tool read the harness's control file".to_string()
            } else {
                format!("control read failed: {}", c.reply())
            };
            c.evidence(outcome, VerifiedBy::Response, if ok { "fs.control.read" } else { "fs.control.failed" })
        })
        .collect()
}

fn no_control(obs: &FsObservations, what: &str) -> Option<Finding> {
    if obs.readers.is_empty() && obs.writers.is_empty() {
        return Some(Finding::new(Verdict::Na, "no path tool to aim", vec![]));
    }
    if working_readers(obs).is_empty() {
        let summary = format!("no tool could read the control file {{sandbox}}/ok.txt, so {what} could not be judged");
        return Some(Finding::new(Verdict::Inconclusive, summary, control_evidence(obs)));
    }
    None
}

pub fn read_escape(obs: &FsObservations) -> Finding {
    if obs.readers.is_empty() {
        return Finding::new(Verdict::Na, "no read-class path tool", vec![]);
    }
    if let Some(f) = no_control(obs, "reads outside the root") {
        return f;
    }
    let mut evidence = control_evidence(obs);
    let leaks: Vec<&FsCall> = obs.reads.iter().filter(|c| c.leaked.is_some()).collect();
    let unanswered = obs.reads.iter().filter(|c| !c.answered()).count();
    for c in &obs.reads {
        let (outcome, code) = match &c.leaked {
            Some(which) => (format!("the {which} came back: {}", c.reply()), "fs.read.leak"),
            None => (c.reply(), "fs.read.held"),
        };
        evidence.push(c.evidence(outcome, VerifiedBy::Response, code));
    }
    evidence.sort_by_key(|e| e.code.as_deref() != Some("fs.read.leak"));
    let tools = working_readers(obs).join(", ");
    let variants = obs.reads.iter().map(|c| c.probe.as_str()).collect::<std::collections::BTreeSet<_>>().len();
    if !leaks.is_empty() {
        let names: Vec<String> = leaks.iter().map(|c| format!("{} on {}", c.probe, c.tool)).collect();
        return Finding::new(
            Verdict::Fail,
            format!(
                "{} of {} read(s) returned a secret from outside the root: {}",
                leaks.len(),
                obs.reads.len(),
                clip(&names.join(", "), 160)
            ),
            evidence,
        );
    }
    if unanswered == obs.reads.len() {
        return Finding::new(Verdict::Inconclusive, "no escape read was answered", evidence);
    }
    if let Some(why) = unanswered_names(&obs.reads.iter().collect::<Vec<_>>()) {
        return Finding::new(Verdict::Inconclusive, format!("no read brought a secret back, but {why}"), evidence);
    }
    Finding::new(
        Verdict::Pass,
        format!("{variants} path variants aimed outside the root were refused or returned nothing, on {tools}"),
        evidence,
    )
}

pub fn write_escape(obs: &FsObservations) -> Finding {
    if obs.writers.is_empty() {
        return Finding::new(Verdict::Na, "no write-class path tool", vec![]);
    }
    if obs.writes.is_empty() {
        return Finding::new(Verdict::Inconclusive, "no write could be sent", vec![]);
    }
    let noise = obs.write_noise();
    let mut evidence: Vec<Evidence> = obs.noise_evidence(&noise).into_iter().collect();
    let mut escaped = Vec::new();
    for c in &obs.writes {
        let outside = without_noise(&outside_root(&c.changes), &noise);
        if outside.is_empty() {
            evidence.push(c.evidence(
                format!("{}; the canary directory and the sibling root were unchanged", c.reply()),
                VerifiedBy::Sandbox,
                "fs.write.held",
            ));
        } else {
            escaped.push(c);
            evidence.push(c.evidence(
                format!("{}; {}", c.reply(), outside.join(", ")),
                VerifiedBy::Sandbox,
                "fs.write.escaped",
            ));
        }
    }
    evidence.sort_by_key(|e| e.code.as_deref() != Some("fs.write.escaped"));
    let unanswered = unanswered_names(&obs.writes.iter().collect::<Vec<_>>());
    match escaped.first() {
        Some(first) => Finding::new(
            Verdict::Fail,
            format!(
                "{} of {} write(s) changed files outside the root, first {} on {}: {}",
                escaped.len(),
                obs.writes.len(),
                first.probe,
                first.tool,
                without_noise(&outside_root(&first.changes), &noise).join(", ")
            ),
            evidence,
        ),
        None if unanswered.is_some() => Finding::new(
            Verdict::Inconclusive,
            format!("nothing outside the root changed, but {}", unanswered.unwrap_or_default()),
            evidence,
        ),
        None => Finding::new(
            Verdict::Pass,
            format!(
                "{} write attempts aimed outside the root left the canary directory and the sibling root unchanged",
                obs.writes.len()
            ),
            evidence,
        ),
    }
}

pub fn symlink_escape(obs: &FsObservations) -> Finding {
    if obs.links.is_empty() {
        return no_control(obs, "reads and writes through links")
            .unwrap_or_else(|| Finding::new(Verdict::Na, "no path tool could be aimed at the links", vec![]));
    }
    if let Some(f) = no_control(obs, "reads through links").filter(|_| obs.writers.is_empty()) {
        return f;
    }
    let noise = obs.write_noise();
    let mut evidence: Vec<Evidence> = obs.noise_evidence(&noise).into_iter().collect();
    let mut escaped = Vec::new();
    for c in &obs.links {
        let outside = without_noise(&outside_root(&c.changes), &noise);
        let (outcome, by, bad) = match (&c.leaked, outside.is_empty()) {
            (Some(which), _) => {
                (format!("the {which} came back through the link: {}", c.reply()), VerifiedBy::Response, true)
            }
            (None, false) => (format!("{}; {}", c.reply(), outside.join(", ")), VerifiedBy::Sandbox, true),
            (None, true) => (format!("{}; nothing outside the root changed", c.reply()), VerifiedBy::Sandbox, false),
        };
        if bad {
            escaped.push(c);
        }
        evidence.push(c.evidence(outcome, by, if bad { "fs.link.escaped" } else { "fs.link.held" }));
    }
    evidence.sort_by_key(|e| e.code.as_deref() != Some("fs.link.escaped"));
    let unanswered = unanswered_names(&obs.links.iter().collect::<Vec<_>>());
    if escaped.is_empty()
        && let Some(why) = unanswered
    {
        return Finding::new(Verdict::Inconclusive, format!("no link led out of the root, but {why}"), evidence);
    }
    match escaped.first() {
        Some(first) => Finding::new(
            Verdict::Fail,
            format!(
                "{} of {} link probe(s) led out of the root, first {} on {}",
                escaped.len(),
                obs.links.len(),
                first.probe,
                first.tool
            ),
            evidence,
        ),
        None => Finding::new(
            Verdict::Pass,
            format!(
                "{} reads and writes through a symbolic link that points out of the root were refused",
                obs.links.len()
            ),
            evidence,
        ),
    }
}

pub fn large_read(obs: &FsObservations) -> Finding {
    if obs.readers.is_empty() {
        return Finding::new(Verdict::Na, "no read-class path tool", vec![]);
    }
    if let Some(f) = no_control(obs, "a large read") {
        return f;
    }
    let limit = obs.large_limit;
    let mut evidence = Vec::new();
    let mut verdicts = Vec::new();
    for c in &obs.large {
        let (v, outcome) = match &c.answer {
            Answer::ToolError { .. } | Answer::RpcError { .. } => {
                (Verdict::Pass, format!("{}: the server refused the read", c.tool))
            }
            Answer::TooLarge { bytes } => (
                Verdict::Fail,
                format!("{}: an answer of {bytes} bytes came back, over the {limit}-byte limit", c.tool),
            ),
            Answer::Success { .. } if c.text_bytes <= limit => {
                (Verdict::Pass, format!("{}: the answer was capped at {} bytes", c.tool, c.text_bytes))
            }
            Answer::Success { .. } => {
                (Verdict::Fail, format!("{}: {} bytes came back, over the {limit}-byte limit", c.tool, c.text_bytes))
            }
            Answer::Silence | Answer::Timeout | Answer::Died { .. } | Answer::NotSent { .. } => {
                (Verdict::Inconclusive, format!("{}: {}", c.tool, c.reply()))
            }
        };
        verdicts.push((v, outcome.clone()));
        evidence.push(c.evidence(
            outcome,
            VerifiedBy::Response,
            if v == Verdict::Fail { "fs.large.uncapped" } else { "fs.large.read" },
        ));
    }
    let worst = verdicts.iter().map(|(v, _)| *v).min_by_key(|v| v.severity_rank());
    match worst {
        None => Finding::new(Verdict::Inconclusive, "no large read was sent", evidence),
        Some(v) => {
            let summary = verdicts.iter().find(|(x, _)| *x == v).map(|(_, s)| s.clone()).unwrap_or_default();
            let summary = if v == Verdict::Pass && verdicts.len() > 1 {
                verdicts.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>().join("; ")
            } else {
                summary
            };
            Finding::new(v, summary, evidence)
        }
    }
}

/// A benign call that got no answer in time: a slow tool. Unless it showed what the
/// check looks for while it ran, it proves nothing either way, and it is left out
/// while the other calls are judged.
fn slow(c: &FsCall) -> bool {
    c.answer == Answer::Timeout
}

/// The evidence line of a slow call, and the clause a verdict adds about the slow calls.
fn slow_evidence(c: &FsCall, by: VerifiedBy) -> Evidence {
    c.evidence(
        format!(
            "{}; left out: a call that did not finish in time proves nothing either way{}",
            c.reply(),
            late_clause(c)
        ),
        by,
        "effects.slow",
    )
}

/// The clause a verdict adds about the tools whose calls were left out as slow.
fn slow_clause(left_out: &[&str]) -> String {
    if left_out.is_empty() {
        String::new()
    } else {
        format!(" ({} left out: no answer within the probe timeout)", left_out.join(", "))
    }
}

/// What the listener saw during a call that an earlier probe explains, as a clause.
fn late_clause(c: &FsCall) -> String {
    if c.late_hits.is_empty() {
        return String::new();
    }
    format!(
        "; the listener also got {}, an earlier probe's request arriving late, not charged to this call",
        clip(&c.late_hits.join(", "), 160)
    )
}

fn benign_finding(obs: &FsObservations, calls: Vec<&BenignCall>, what: &str, none: &str) -> Finding {
    if calls.is_empty() {
        return Finding::new(Verdict::Na, none, vec![]);
    }
    let noise = obs.effects_noise();
    let mut evidence: Vec<Evidence> = obs.noise_evidence(&noise).into_iter().collect();
    let (mut changed, mut judged, mut left_out) = (Vec::new(), Vec::new(), Vec::new());
    let mut answered = 0;
    for b in &calls {
        let c = &b.call;
        answered += usize::from(c.answered());
        let changes = without_noise(&c.changes, &noise);
        if changes.is_empty() && slow(c) {
            evidence.push(slow_evidence(c, VerifiedBy::Sandbox));
            left_out.push(c.tool.as_str());
            continue;
        }
        judged.push(c);
        if changes.is_empty() {
            evidence.push(c.evidence(
                format!("{}; the sandbox was unchanged", c.reply()),
                VerifiedBy::Sandbox,
                "effects.unchanged",
            ));
        } else {
            evidence.push(c.evidence(
                format!("{}; {}", c.reply(), changes.join(", ")),
                VerifiedBy::Sandbox,
                "effects.changed",
            ));
            changed.push((c, changes));
        }
    }
    if let Some((first, changes)) = changed.first() {
        return Finding::new(
            Verdict::Fail,
            format!("{} {what} but changed the sandbox: {}", first.tool, changes.join(", ")),
            evidence,
        );
    }
    if answered == 0 {
        return Finding::new(
            Verdict::Inconclusive,
            format!("no benign call was answered{}", slow_clause(&left_out)),
            evidence,
        );
    }
    if let Some(why) = unanswered_names(&judged) {
        return Finding::new(Verdict::Inconclusive, format!("nothing changed, but {why}"), evidence);
    }
    let tools: Vec<&str> = judged.iter().map(|c| c.tool.as_str()).collect();
    Finding::new(
        Verdict::Pass,
        format!("{} {what} and changed nothing during a benign call{}", tools.join(", "), slow_clause(&left_out)),
        evidence,
    )
}

pub fn effects_read_only(obs: &FsObservations) -> Finding {
    let calls = obs.benign.iter().filter(|b| b.read_only == Some(true)).collect();
    benign_finding(
        obs,
        calls,
        "declared read-only",
        "no tool declared read-only could be called with a harness-owned or harmless argument",
    )
}

pub fn effects_unannotated(obs: &FsObservations) -> Finding {
    let calls = obs.benign.iter().filter(|b| !b.writes && b.read_only.is_none() && b.destructive.is_none()).collect();
    benign_finding(
        obs,
        calls,
        "carries no annotations",
        "no unannotated read-style tool could be called with a harness-owned or harmless argument",
    )
}

pub fn effects_closed_world(obs: &FsObservations) -> Finding {
    let calls: Vec<&FsCall> =
        obs.benign.iter().filter(|b| b.open_world == Some(false) && !b.aimed_at_listener).map(|b| &b.call).collect();
    if calls.is_empty() {
        return Finding::new(Verdict::Na, "no tool declared closed-world could be called", vec![]);
    }
    if !obs.listener {
        return Finding::new(Verdict::Inconclusive, "the loopback listener could not be started", vec![]);
    }
    let mut evidence = Vec::new();
    let mut hit = Vec::new();
    for c in &calls {
        if c.listener_hits > 0 {
            hit.push(c.tool.as_str());
            evidence.push(c.evidence(
                format!(
                    "{}; the loopback listener accepted {} connection(s) during the call that no earlier probe explains{}",
                    c.reply(),
                    c.listener_hits,
                    late_clause(c)
                ),
                VerifiedBy::Listener,
                "effects.listener.hit",
            ));
        } else if slow(c) {
            evidence.push(slow_evidence(c, VerifiedBy::Listener));
        } else {
            evidence.push(c.evidence(
                format!("{}; nothing connected to the loopback listener{}", c.reply(), late_clause(c)),
                VerifiedBy::Listener,
                "effects.listener.quiet",
            ));
        }
    }
    if !hit.is_empty() {
        return Finding::new(
            Verdict::Fail,
            format!(
                "{} declared closed-world but connected to the loopback listener during a benign call",
                hit.join(", ")
            ),
            evidence,
        );
    }
    let (left_out, judged): (Vec<&FsCall>, Vec<&FsCall>) = calls.iter().partition(|c| slow(c));
    let left_out: Vec<&str> = left_out.iter().map(|c| c.tool.as_str()).collect();
    if judged.is_empty() {
        return Finding::new(
            Verdict::Inconclusive,
            format!("no closed-world call finished{}", slow_clause(&left_out)),
            evidence,
        );
    }
    if let Some(why) = unanswered_names(&judged) {
        return Finding::new(Verdict::Inconclusive, format!("nothing connected, but {why}"), evidence);
    }
    Finding::new(
        Verdict::Pass,
        format!(
            "{} closed-world tool(s) called; nothing connected to the loopback listener during the calls{} (a tool not pointed at it can only show that it did not connect to it)",
            judged.len(),
            slow_clause(&left_out)
        ),
        evidence,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> SandboxPaths {
        SandboxPaths { root: "/t/sm/root".into(), canary: "/t/sm/canary".into(), dir_name: "sm".into() }
    }

    #[test]
    fn variants_expand_for_files_and_directories() {
        assert_eq!(expand_variant("{sandbox}-sibling/secret.txt", &paths(), false), "/t/sm/root-sibling/secret.txt");
        assert_eq!(
            expand_variant("../../../{canary_noslash}/secret.txt", &paths(), false),
            "../../../t/sm/canary/secret.txt"
        );
        assert_eq!(expand_variant("..%2fcanary%2fsecret.txt", &paths(), true), "..%2fcanary");
        assert_eq!(expand_variant("..\\canary\\secret.txt", &paths(), true), "..\\canary");
        assert_eq!(
            expand_variant("ok.txt{nul}/../../canary/secret.txt", &paths(), false),
            "ok.txt\u{0}/../../canary/secret.txt"
        );
        assert_eq!(expand_variant("../canary/secret.txt/", &paths(), true), "../canary/");
    }

    #[test]
    fn noise_is_excused_in_home_never_in_the_canary_directory() {
        let noise = vec!["{sandbox_home}/.log".to_string(), "{canary}/secret.txt".to_string()];
        let changes =
            vec!["{sandbox_home}/.log was changed".to_string(), "{canary}/secret.txt was changed".to_string()];
        assert_eq!(without_noise(&changes, &noise), vec!["{canary}/secret.txt was changed"]);
    }

    fn benign(tool: &str, changes: &[&str]) -> BenignCall {
        BenignCall {
            call: FsCall {
                probe: "benign".into(),
                tool: tool.into(),
                target: String::new(),
                shown_args: Value::Null,
                answer: Answer::Success { text: "ok".into() },
                text_bytes: 2,
                leaked: None,
                changes: changes.iter().map(|c| c.to_string()).collect(),
                listener_hits: 0,
                late_hits: vec![],
            },
            writes: false,
            aimed_at_listener: false,
            read_only: Some(true),
            open_world: None,
            destructive: None,
        }
    }

    /// A home path one benign call changed excuses a write probe (no probe aims there),
    /// but only one two tools changed alike excuses a benign call; a path outside the
    /// home never is either.
    #[test]
    fn the_home_baseline_is_what_benign_calls_change_there() {
        let log = "{sandbox_home}/.history was changed";
        let cache = "{sandbox}/.cache was changed";
        let mut obs = FsObservations { benign: vec![benign("get_status", &[log, cache])], ..Default::default() };
        assert_eq!(without_noise(&[log.to_string()], &obs.write_noise()), Vec::<String>::new());
        let probe_only = "{sandbox_home}/new.txt was created";
        assert_eq!(
            without_noise(&[probe_only.to_string()], &obs.write_noise()),
            vec![probe_only],
            "no benign call made it"
        );
        assert_eq!(without_noise(&[log.to_string()], &obs.effects_noise()), vec![log]);
        obs.benign.push(benign("list_jobs", &[log, cache]));
        assert_eq!(without_noise(&[log.to_string(), cache.to_string()], &obs.effects_noise()), vec![cache]);
        assert_eq!(effects_read_only(&obs).verdict, Verdict::Fail, "the root's cache is still a write");
        // A history flushed on a timer lands in one benign call and in a probe of another
        // tool: still the server's books.
        let flushed = "{sandbox_home}/.flushed was changed";
        obs.benign = vec![benign("get_status", &[flushed])];
        assert_eq!(without_noise(&[flushed.to_string()], &obs.effects_noise()), vec![flushed]);
        obs.reads.push(benign("read_file", &[flushed]).call);
        assert_eq!(without_noise(&[flushed.to_string()], &obs.effects_noise()), Vec::<String>::new());
        assert_eq!(effects_read_only(&obs).verdict, Verdict::Pass);
    }

    #[test]
    fn diff_names_created_changed_and_removed() {
        let mut a = Snapshot::new();
        a.insert("{canary}/secret.txt".into(), Entry::File { size: 1, hash: "x".into() });
        a.insert("{sandbox}/gone".into(), Entry::Dir);
        let mut b = a.clone();
        b.insert("{canary}/secret.txt".into(), Entry::File { size: 1, hash: "y".into() });
        b.insert("{canary}/new.txt".into(), Entry::File { size: 1, hash: "z".into() });
        b.remove("{sandbox}/gone");
        let d = diff(&a, &b);
        assert_eq!(
            d,
            vec!["{canary}/new.txt was created", "{canary}/secret.txt was changed", "{sandbox}/gone was removed"]
        );
        assert_eq!(outside_root(&d), vec!["{canary}/new.txt was created", "{canary}/secret.txt was changed"]);
    }
}
