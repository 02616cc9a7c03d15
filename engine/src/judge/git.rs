//! The git pack's judges and corpora: read-only git tools aimed at a repository the
//! server must not serve (the canary repository, outside `{repo}`), and ref and path
//! arguments that become git options. What decides is what the harness can see: the
//! canary in a reply, a file the sandbox observer saw appear, a harness program's
//! marker, or a reply that could only come from an option taking effect.

use super::Answer;
use super::Finding;
use crate::model::{Evidence, Verdict, VerifiedBy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a read-only git tool did with one repository-scope probe.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScopeProbe {
    pub variant: String,
    pub tool: String,
    /// The path as reports show it (placeholders, not this run's paths).
    pub shown: String,
    pub answer: Answer,
    /// The canary repository's token came back.
    pub canary_seen: bool,
}

/// What one injection value did in one argument.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InjectionProbe {
    pub variant: String,
    pub tool: String,
    pub param: String,
    pub answer: Answer,
    /// Files the sandbox observer saw appear or change during the call.
    pub effects: Vec<String>,
    /// A marker in the reply that only an option taking effect puts there.
    pub marker: Option<String>,
}

/// A control call: the tool on `{repo}` with benign arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Control {
    pub tool: String,
    pub answer: Answer,
}

impl Control {
    pub fn worked(&self) -> bool {
        matches!(self.answer, Answer::Success { .. })
    }
}

/// A tool annotated read-only that changed `{repo}` during a call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepoChange {
    pub tool: String,
    pub during: String,
    pub what: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitObservations {
    /// Git tools, by name.
    pub tools: Vec<String>,
    /// Git tools without a repository parameter (the scope probes cannot aim them).
    pub without_repo_param: Vec<String>,
    /// Git tools whose required arguments the harness cannot fill.
    pub unfillable: Vec<String>,
    pub scope_controls: Vec<Control>,
    pub scope: Vec<ScopeProbe>,
    pub injection_controls: Vec<Control>,
    pub injection: Vec<InjectionProbe>,
    pub read_only_changes: Vec<RepoChange>,
    /// The probes of the tools that write (`--active`).
    #[serde(default)]
    pub writes: WriteObservations,
}

/// What the git tools that write did with the three candidates' probes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteObservations {
    /// Why the write probes did not run (no `--active`), naming the tools they would call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<WriteSkip>,
    /// Tools that create repositories (git-init-scope).
    pub init: Vec<WriteRun>,
    /// Tools that stage files (git-add-scope).
    pub stage: Vec<WriteRun>,
    /// Other tools that write and take a ref-like argument (git-ref-options).
    pub refs: Vec<WriteRun>,
}

/// The write probes were not run: why, and the tools each check would have called.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteSkip {
    pub why: String,
    pub init: Vec<String>,
    pub stage: Vec<String>,
    pub refs: Vec<String>,
}

/// One tool that writes: why it was taken for its check, its control and its probes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteRun {
    pub tool: String,
    /// Why the tool was taken for this check (its name, its annotations).
    pub decided_by: String,
    pub control: WriteProbe,
    pub probes: Vec<WriteProbe>,
    /// Why no probe value could show an effect on this tool, when none could (its name
    /// is none of the git commands the values act on): its probes may fail it, never pass it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blind: Option<String>,
}

/// One call of a tool that writes, and what the harness saw afterwards in `{repo}` and
/// the sandbox that only the call explains.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WriteProbe {
    pub variant: String,
    /// The argument the value went into.
    pub param: String,
    /// The value as reports show it (placeholders, not this run's paths).
    pub shown: String,
    pub answer: Answer,
    /// For a probe, the effects the check looks for; for a control, what it was
    /// meant to do (the repository created, the file staged) or, for git-ref-options,
    /// any of the probes' effects it produced itself.
    pub seen: Vec<String>,
    /// Why the harness could not read what it looks at after the call (the path, or
    /// `{repo}` with git), when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
}

fn control_evidence(controls: &[Control]) -> Vec<Evidence> {
    controls
        .iter()
        .map(|c| {
            Evidence::new("control: {repo} with benign arguments", c.answer.brief(), VerifiedBy::Response).tool(&c.tool)
        })
        .collect()
}

/// `git-repo-scope`: the canary repository must never answer through the server.
pub fn repo_scope(obs: &GitObservations) -> Finding {
    if obs.scope_controls.is_empty() {
        let why = if obs.without_repo_param.is_empty() {
            "no read-only git tool whose arguments the harness can fill".to_string()
        } else {
            format!("no git tool takes a repository argument ({})", obs.without_repo_param.join(", "))
        };
        return Finding::new(Verdict::Na, why, vec![]);
    }
    let leaks: Vec<&ScopeProbe> = obs.scope.iter().filter(|p| p.canary_seen).collect();
    let mut evidence: Vec<Evidence> = leaks
        .iter()
        .map(|p| {
            Evidence::new(
                format!("{} ({})", p.variant, p.shown),
                format!("the canary repository's content came back: {}", p.answer.brief()),
                VerifiedBy::Response,
            )
            .tool(&p.tool)
            .code("canary-repo-served")
        })
        .collect();
    if !leaks.is_empty() {
        let kinds: Vec<&str> = dedup(leaks.iter().map(|p| p.variant.as_str()));
        return Finding::new(
            Verdict::Fail,
            format!("the canary repository was served through {} ({})", leaks[0].tool, kinds.join(", ")),
            evidence,
        );
    }
    evidence.extend(control_evidence(&obs.scope_controls));
    if !obs.scope_controls.iter().any(Control::worked) {
        return Finding::new(
            Verdict::Inconclusive,
            "no git tool could read {repo}, the repository it serves, so a refusal proves nothing",
            evidence,
        );
    }
    evidence.extend(obs.scope.iter().map(|p| {
        Evidence::new(format!("{} ({})", p.variant, p.shown), p.answer.brief(), VerifiedBy::Response).tool(&p.tool)
    }));
    let tools = dedup(obs.scope.iter().map(|p| p.tool.as_str()));
    Finding::new(
        Verdict::Pass,
        format!(
            "{} probe(s) aimed at the canary repository on {} brought none of it back",
            obs.scope.len(),
            tools.join(", ")
        ),
        evidence,
    )
}

/// `git-arg-injection`: no injected option may take effect, and no tool annotated
/// read-only may change the repository.
pub fn arg_injection(obs: &GitObservations) -> Finding {
    if obs.injection_controls.is_empty() {
        return Finding::new(
            Verdict::Na,
            "no git tool takes a ref, revision or path argument the harness can fill",
            vec![],
        );
    }
    let mut evidence = Vec::new();
    for p in &obs.injection {
        let took = |what: String, by: VerifiedBy, code: &str| {
            Evidence::new(format!("{} in {}", p.variant, p.param), what, by).tool(&p.tool).code(code)
        };
        if !p.effects.is_empty() {
            evidence.push(took(
                format!("the option took effect: {} ({})", p.effects.join(", "), p.answer.brief()),
                VerifiedBy::Sandbox,
                "option-took-effect",
            ));
        } else if let Some(m) = &p.marker {
            evidence.push(took(format!("the option took effect: {m}"), VerifiedBy::Response, "option-took-effect"));
        }
    }
    for c in &obs.read_only_changes {
        evidence.push(
            Evidence::new(
                c.during.clone(),
                format!("annotated read-only, but the repository changed: {}", c.what.join(", ")),
                VerifiedBy::Sandbox,
            )
            .tool(&c.tool)
            .code("read-only-changed-repo"),
        );
    }
    if !evidence.is_empty() {
        let first = &evidence[0];
        let summary = match first.code.as_deref() {
            Some("read-only-changed-repo") => {
                format!("{} is annotated read-only but changed {{repo}}", first.tool.clone().unwrap_or_default())
            }
            _ => format!(
                "{} injected option(s) took effect, first {} on {}",
                obs.injection.iter().filter(|p| !p.effects.is_empty() || p.marker.is_some()).count(),
                first.probe,
                first.tool.clone().unwrap_or_default()
            ),
        };
        return Finding::new(Verdict::Fail, summary, evidence);
    }
    evidence.extend(control_evidence(&obs.injection_controls));
    if !obs.injection_controls.iter().any(Control::worked) {
        return Finding::new(
            Verdict::Inconclusive,
            "no git tool answered a benign call on {repo}, so options that did nothing prove nothing",
            evidence,
        );
    }
    evidence.extend(obs.injection.iter().map(|p| {
        Evidence::new(format!("{} in {}", p.variant, p.param), p.answer.brief(), VerifiedBy::Sandbox).tool(&p.tool)
    }));
    Finding::new(
        Verdict::Pass,
        format!(
            "{} injected option(s) in {} argument(s) took no effect; nothing annotated read-only changed {{repo}}",
            obs.injection.len(),
            dedup(obs.injection.iter().map(|p| (p.tool.as_str(), p.param.as_str()))).len()
        ),
        evidence,
    )
}

/// How one of the three write checks reads its runs.
struct WriteRule {
    /// The tools it aims at, for "no git tool …".
    kind: &'static str,
    /// Whether a run's control did what proves a refusal means something.
    control_worked: fn(&WriteRun) -> bool,
    /// Whether what a run's control produced itself is taken off each probe's charge
    /// (git-ref-options, whose control may legitimately do some of what it looks for).
    less_control: bool,
    /// What a probe that saw something did, before the list of what was seen.
    took: &'static str,
    code: &'static str,
    /// The observer behind what was seen.
    by: fn(&[String]) -> VerifiedBy,
    /// Why no pass, when no control worked.
    no_control: &'static str,
    /// What the passing probes left as it was.
    held: &'static str,
}

/// What a probe is charged with: what it saw, less what its run's control produced when
/// the rule says so.
fn charged<'p>(rule: &WriteRule, run: &WriteRun, p: &'p WriteProbe) -> Vec<&'p String> {
    p.seen.iter().filter(|s| !rule.less_control || !run.control.seen.contains(s)).collect()
}

fn judge_writes(runs: &[WriteRun], skipped: Option<(&str, &[String])>, rule: WriteRule) -> Finding {
    if let Some((why, tools)) = skipped {
        return match tools.is_empty() {
            true => Finding::new(Verdict::Na, format!("no git tool {}", rule.kind), vec![]),
            false => Finding::new(Verdict::Na, format!("{why} (it would call {})", tools.join(", ")), vec![]),
        };
    }
    if runs.is_empty() {
        return Finding::new(Verdict::Na, format!("no git tool {} that the harness can call", rule.kind), vec![]);
    }
    let probe_line = |p: &WriteProbe| format!("{} in {} ({})", p.variant, p.param, p.shown);
    let mut evidence = Vec::new();
    for run in runs {
        for p in &run.probes {
            let seen = charged(&rule, run, p);
            if seen.is_empty() {
                continue;
            }
            let seen: Vec<String> = seen.into_iter().cloned().collect();
            let outcome = format!("{}: {} ({})", rule.took, seen.join(", "), p.answer.brief());
            evidence.push(Evidence::new(probe_line(p), outcome, (rule.by)(&seen)).tool(&run.tool).code(rule.code));
        }
    }
    if !evidence.is_empty() {
        let first = &evidence[0];
        let summary = format!(
            "{} probe(s): {}, first {} on {}",
            evidence.len(),
            rule.took,
            first.probe,
            first.tool.clone().unwrap_or_default()
        );
        return Finding::new(Verdict::Fail, summary, evidence);
    }
    for run in runs {
        let c = &run.control;
        let what = match (&c.unread, c.seen.is_empty()) {
            (Some(why), _) => format!("{why} ({})", c.answer.brief()),
            (None, true) => c.answer.brief(),
            (None, false) => format!("{} ({})", c.seen.join(", "), c.answer.brief()),
        };
        let outcome = format!("{what}; chosen as {}", run.decided_by);
        evidence.push(
            Evidence::new(format!("control: {} ({})", c.param, c.shown), outcome, (rule.by)(&c.seen)).tool(&run.tool),
        );
    }
    let worked: Vec<&WriteRun> = runs.iter().filter(|r| (rule.control_worked)(r)).collect();
    if worked.is_empty() {
        return Finding::new(Verdict::Inconclusive, rule.no_control, evidence);
    }
    let proving: Vec<&WriteRun> = worked.iter().copied().filter(|r| r.blind.is_none()).collect();
    if proving.is_empty() {
        let why: Vec<String> =
            worked.iter().map(|r| format!("{}: {}", r.tool, r.blind.clone().unwrap_or_default())).collect();
        return Finding::new(
            Verdict::Inconclusive,
            format!("no probe could show an effect on the tools whose control worked ({})", why.join("; ")),
            evidence,
        );
    }
    // A probe that got no answer, or after which the harness could not read what it
    // looks at, proves nothing.
    let unproven: Vec<String> = proving
        .iter()
        .flat_map(|r| r.probes.iter().map(move |p| (r, p)))
        .filter_map(|(r, p)| match (&p.unread, p.answer.was_answered()) {
            (Some(why), _) => Some(format!("{} on {}: {why}", p.variant, r.tool)),
            (None, false) => Some(format!("{} on {}: {}", p.variant, r.tool, p.answer.brief())),
            (None, true) => None,
        })
        .collect();
    for run in &proving {
        evidence.extend(
            run.probes
                .iter()
                .map(|p| Evidence::new(probe_line(p), p.answer.brief(), (rule.by)(&p.seen)).tool(&run.tool)),
        );
    }
    if !unproven.is_empty() {
        let summary = format!("{} probe(s) prove nothing, first {}", unproven.len(), unproven[0]);
        return Finding::new(Verdict::Inconclusive, summary, evidence);
    }
    let probes: usize = proving.iter().map(|r| r.probes.len()).sum();
    let tools: Vec<&str> = proving.iter().map(|r| r.tool.as_str()).collect();
    Finding::new(Verdict::Pass, format!("{probes} probe(s) on {}: {}", tools.join(", "), rule.held), evidence)
}

impl WriteObservations {
    fn skipped_for(&self, tools: fn(&WriteSkip) -> &[String]) -> Option<(&str, &[String])> {
        self.skipped.as_ref().map(|s| (s.why.as_str(), tools(s)))
    }
}

/// A control that did what it was meant to (created, staged) and was read afterwards.
fn made_it(r: &WriteRun) -> bool {
    !r.control.seen.is_empty() && r.control.unread.is_none()
}

/// `git-init-scope`: no repository may appear outside `{repo}`.
pub fn init_scope(obs: &GitObservations) -> Finding {
    let w = &obs.writes;
    judge_writes(
        &w.init,
        w.skipped_for(|s| &s.init),
        WriteRule {
            kind: "creates repositories",
            control_worked: made_it,
            less_control: false,
            took: "a repository was created outside {repo}",
            code: "repo-created-outside",
            by: |_| VerifiedBy::Sandbox,
            no_control: "no tool created a repository inside {repo} (the control), so that none appeared elsewhere proves nothing",
            held: "no repository appeared outside {repo}, and the control created one inside it",
        },
    )
}

/// `git-add-scope`: no file from outside `{repo}` may reach its index or object database.
pub fn add_scope(obs: &GitObservations) -> Finding {
    let w = &obs.writes;
    judge_writes(
        &w.stage,
        w.skipped_for(|s| &s.stage),
        WriteRule {
            kind: "stages files",
            control_worked: made_it,
            less_control: false,
            took: "a file outside {repo} was read into it",
            code: "outside-file-staged",
            by: |_| VerifiedBy::State,
            no_control: "no tool staged the harness's new file inside {repo} (the control), so refusals of outside files prove nothing",
            held: "neither the index nor the object database of {repo} holds an outside file, and the control's file was staged",
        },
    )
}

/// `git-ref-options`: no option-like ref may move HEAD, make a branch, set an upstream,
/// discard a change or write a file.
pub fn ref_options(obs: &GitObservations) -> Finding {
    let w = &obs.writes;
    judge_writes(
        &w.refs,
        w.skipped_for(|s| &s.refs),
        WriteRule {
            kind: "writes and takes a ref, branch, revision or path argument",
            control_worked: |r| {
                r.control.seen.is_empty()
                    && r.control.unread.is_none()
                    && matches!(r.control.answer, Answer::Success { .. })
            },
            less_control: true,
            took: "the option took effect",
            code: "option-took-effect",
            by: |seen| match seen.iter().any(|s| s.starts_with("{sandbox}/")) {
                true => VerifiedBy::Sandbox,
                false => VerifiedBy::State,
            },
            no_control: "no tool that writes answered a benign call on {repo} without itself doing what the probes look for, so options that did nothing prove nothing",
            held: "after each call HEAD, the refs, main's upstream, README.md's uncommitted line and {sandbox}/sm-injected.txt were as before it",
        },
    )
}

fn dedup<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Answer {
        Answer::Success { text: text.into() }
    }

    fn base() -> GitObservations {
        GitObservations {
            tools: vec!["git_log".into()],
            scope_controls: vec![Control { tool: "git_log".into(), answer: ok("abc first commit") }],
            injection_controls: vec![Control { tool: "git_log".into(), answer: ok("abc first commit") }],
            scope: vec![ScopeProbe {
                variant: "absolute".into(),
                tool: "git_log".into(),
                shown: "{canary_repo}".into(),
                answer: Answer::ToolError { text: "not the served repository".into() },
                canary_seen: false,
            }],
            injection: vec![InjectionProbe {
                variant: "output".into(),
                tool: "git_log".into(),
                param: "revision".into(),
                answer: Answer::ToolError { text: "bad revision".into() },
                effects: vec![],
                marker: None,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn refusals_after_a_working_control_pass_and_a_canary_fails() {
        let obs = base();
        assert_eq!(repo_scope(&obs).verdict, Verdict::Pass);
        assert_eq!(arg_injection(&obs).verdict, Verdict::Pass);
        let mut leak = base();
        leak.scope[0].canary_seen = true;
        let f = repo_scope(&leak);
        assert_eq!(f.verdict, Verdict::Fail);
        assert_eq!(f.evidence[0].code.as_deref(), Some("canary-repo-served"));
    }

    #[test]
    fn a_file_an_option_wrote_or_a_read_only_change_fails() {
        let mut obs = base();
        obs.injection[0].effects = vec!["{sandbox}/sm-injected.txt created".into()];
        let f = arg_injection(&obs);
        assert_eq!((f.verdict, f.evidence[0].verified_by), (Verdict::Fail, VerifiedBy::Sandbox));
        assert!(f.evidence[0].outcome.contains("sm-injected.txt created"), "{}", f.evidence[0].outcome);
        let mut obs = base();
        obs.read_only_changes.push(RepoChange {
            tool: "git_status".into(),
            during: "control".into(),
            what: vec!["{repo}/.git/refs/tags/x created".into()],
        });
        assert!(arg_injection(&obs).summary.contains("git_status is annotated read-only but changed {repo}"));
    }

    fn write_run(tool: &str, control_seen: &[&str], answer: Answer, probe_seen: &[&str]) -> WriteRun {
        let probe = |variant: &str, seen: &[&str], answer: Answer| WriteProbe {
            variant: variant.into(),
            param: "repo_path".into(),
            shown: "{canary}/sm-init".into(),
            answer,
            seen: seen.iter().map(|s| s.to_string()).collect(),
            unread: None,
        };
        WriteRun {
            tool: tool.into(),
            decided_by: "its name says init".into(),
            control: probe("control", control_seen, answer.clone()),
            probes: vec![probe("absolute", probe_seen, answer)],
            blind: None,
        }
    }

    #[test]
    fn write_checks_need_active_a_working_control_and_fail_on_what_was_seen() {
        let mut obs = base();
        obs.writes.skipped = Some(WriteSkip {
            why: "runs only with --active".into(),
            init: vec!["git_init".into()],
            ..Default::default()
        });
        let f = init_scope(&obs);
        assert_eq!(f.verdict, Verdict::Na);
        assert!(f.summary.contains("--active (it would call git_init)"), "{}", f.summary);
        assert_eq!(add_scope(&obs).summary, "no git tool stages files");
        let made = ["{repo}/sm-init-control/.git"];
        let mut obs = base();
        obs.writes.init = vec![write_run("git_init", &made, ok("done"), &[])];
        assert_eq!(init_scope(&obs).verdict, Verdict::Pass);
        obs.writes.init = vec![write_run("git_init", &[], ok("done"), &[])];
        assert_eq!(init_scope(&obs).verdict, Verdict::Inconclusive, "a control that made nothing proves nothing");
        obs.writes.init = vec![write_run("git_init", &[], ok("done"), &["{canary}/sm-init/.git"])];
        let f = init_scope(&obs);
        assert_eq!((f.verdict, f.evidence[0].code.as_deref()), (Verdict::Fail, Some("repo-created-outside")));
        // git-ref-options: a control that did what the probes look for makes its tool's probes unchargeable.
        let discarded = ["README.md's uncommitted line was discarded"];
        obs.writes.refs = vec![write_run("git_checkout", &discarded, ok("done"), &discarded)];
        assert_eq!(ref_options(&obs).verdict, Verdict::Inconclusive);
        obs.writes.refs = vec![write_run("git_checkout", &[], ok("done"), &discarded)];
        assert_eq!(ref_options(&obs).verdict, Verdict::Fail);
        obs.writes.refs = vec![write_run("git_checkout", &[], ok("done"), &[])];
        assert_eq!(ref_options(&obs).verdict, Verdict::Pass);
        obs.writes.refs = vec![write_run("git_checkout", &[], Answer::ToolError { text: "no".into() }, &[])];
        assert_eq!(ref_options(&obs).verdict, Verdict::Inconclusive, "a refused control proves nothing");
        // A probe is charged with what its control did not do itself.
        let both = ["README.md's uncommitted line was discarded", "HEAD is detached"];
        obs.writes.refs = vec![write_run("git_checkout", &discarded, ok("done"), &both)];
        let f = ref_options(&obs);
        assert_eq!(f.verdict, Verdict::Fail);
        assert!(
            f.evidence[0].outcome.starts_with("the option took effect: HEAD is detached ("),
            "{}",
            f.evidence[0].outcome
        );
        // No answer, an unreadable repository, or a tool the values cannot act on: no pass.
        let mut run = write_run("git_checkout", &[], ok("done"), &[]);
        run.probes[0].answer = Answer::Timeout;
        obs.writes.refs = vec![run.clone()];
        assert_eq!(ref_options(&obs).verdict, Verdict::Inconclusive);
        run.probes[0].answer = ok("done");
        run.probes[0].unread = Some("git ls-files on {repo} exited 128".into());
        obs.writes.refs = vec![run.clone()];
        assert_eq!(ref_options(&obs).verdict, Verdict::Inconclusive);
        run.probes[0].unread = None;
        run.blind = Some("its name is none of checkout, switch, reset, branch, log, show, diff".into());
        obs.writes.refs = vec![run];
        assert!(
            ref_options(&obs).summary.starts_with("no probe could show an effect"),
            "{}",
            ref_options(&obs).summary
        );
    }

    #[test]
    fn a_failed_control_is_inconclusive_never_a_pass() {
        let mut obs = base();
        obs.scope_controls[0].answer = Answer::ToolError { text: "no such repository".into() };
        obs.injection_controls[0].answer = Answer::Timeout;
        assert_eq!(repo_scope(&obs).verdict, Verdict::Inconclusive);
        assert_eq!(arg_injection(&obs).verdict, Verdict::Inconclusive);
        assert_eq!(repo_scope(&GitObservations::default()).verdict, Verdict::Na);
    }
}
