//! The custom pack: each probe's `expect` clauses against what the harness saw during
//! its call, and each custom check from its probes. Valid calls use the same clause
//! reading, but a miss is a warning, never a verdict.

use super::Answer;
use super::Finding;
use crate::model::{Evidence, Verdict, VerifiedBy};
use crate::upstream::Reply;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A file named by a `files` clause, before and after the call (a content hash, or
/// `None` when it did not exist).
#[derive(Debug, Clone, PartialEq)]
pub struct FileSeen {
    /// The path as written, with its placeholder.
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// One request the upstream stub recorded during the call.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestSeen {
    /// `METHOD path?query`.
    pub target: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RequestSeen {
    /// What `none_matching` and `all_matching` read: the target, the headers, the body.
    fn text(&self) -> String {
        let headers: Vec<String> = self.headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        format!("{}\n{}\n{}", self.target, headers.join("\n"), self.body)
    }
}

/// What the harness saw during one probe's call.
#[derive(Debug, Clone)]
pub struct Seen {
    pub answer: Answer,
    pub elapsed_ms: u64,
    /// The reply's text in UTF-8 bytes plus any binary blocks.
    pub response_bytes: u64,
    pub files: Vec<FileSeen>,
    /// Requests and connections the loopback listener saw; `None` without a listener.
    pub listener_hits: Option<u32>,
    /// What the stub recorded; `None` when no stub ran.
    pub upstream: Option<Vec<RequestSeen>>,
    /// Whether a marker minted by `{upstream_token}` came back; `None` when none was minted.
    pub token_echoed: Option<bool>,
    /// What the server printed during the call; `None` when there is no log to read.
    pub log: Option<String>,
}

/// One probe's result.
#[derive(Debug, Clone)]
pub enum ProbeOutcome {
    /// Not applicable, with the reason (an active probe without --active).
    Na(String),
    /// Could not be judged, with the reason.
    Unjudged(String),
    Observed(Box<Seen>),
}

#[derive(Debug, Clone)]
pub struct ProbeObs {
    pub name: String,
    pub tool: String,
    /// The arguments as reports show them.
    pub args: Value,
    pub outcome: ProbeOutcome,
}

/// The clauses of `expect` that did not hold, or why they cannot be read.
pub fn evaluate(expect: &Expect, seen: &Seen) -> Result<Vec<String>, String> {
    let mut missed = Vec::new();
    // An answer too long to read still says how long it was; nothing else about it.
    let reply = match &seen.answer {
        Answer::Success { text } => Some((text.as_str(), false)),
        Answer::ToolError { text } => Some((text.as_str(), true)),
        Answer::RpcError { message, .. } => Some((message.as_str(), true)),
        Answer::TooLarge { .. } => None,
        other => return Err(other.brief()),
    };
    let reads_reply = expect.is_error.is_some() || expect.text_matches.is_some() || expect.text_not_matches.is_some();
    if let Some((text, is_error)) = reply {
        if let Some(want) = expect.is_error
            && want != is_error
        {
            let got = if is_error { "the tool reported an error" } else { "the tool reported success" };
            missed.push(format!("expected is_error {want}, {got}"));
        }
        if let Some(re) = &expect.text_matches
            && !re.is_match(text)
        {
            missed.push(format!("the text does not match /{}/", re.as_str()));
        }
        if let Some(re) = &expect.text_not_matches
            && let Some(m) = re.find(text)
        {
            missed.push(format!("the text matches /{}/ (\"{}\")", re.as_str(), crate::text::clip(m.as_str(), 60)));
        }
    } else if reads_reply {
        return Err(seen.answer.brief());
    }
    let file = |path: &str| seen.files.iter().find(|f| f.path == path);
    for path in &expect.files_unchanged {
        match file(path) {
            Some(f) if f.before.is_none() => {
                missed.push(format!("{path} did not exist before the call, so unchanged tests nothing"))
            }
            Some(f) if f.before != f.after => missed.push(format!("{path} was changed, added or removed")),
            Some(_) => {}
            None => return Err(format!("{path} could not be read")),
        }
    }
    for path in &expect.files_created {
        match file(path) {
            Some(f) if f.before.is_none() && f.after.is_some() => {}
            Some(_) => missed.push(format!("{path} was not created by the call")),
            None => return Err(format!("{path} could not be read")),
        }
    }
    for path in &expect.files_absent {
        if file(path).is_some_and(|f| f.after.is_some()) {
            missed.push(format!("{path} exists after the call"));
        }
    }
    if let Some(want) = expect.listener {
        let Some(hits) = seen.listener_hits else { return Err("no loopback listener ran".to_string()) };
        match want {
            ListenerExpect::None if hits > 0 => missed.push(format!("the listener saw {hits} request(s)")),
            ListenerExpect::Hit if hits == 0 => missed.push("the listener saw nothing".to_string()),
            _ => {}
        }
    }
    if let Some(max) = expect.duration_max_ms
        && seen.elapsed_ms > max
    {
        // The limit, not the measurement: reports stay the same from run to run.
        missed.push(format!("the call took longer than {max} ms"));
    }
    if let Some(max) = expect.response_max_bytes
        && seen.response_bytes > max
    {
        let size = format!("{} bytes", seen.response_bytes);
        missed.push(format!("the reply was {size} (max {max})"));
    }
    if expect.reads_upstream() {
        let Some(requests) = &seen.upstream else { return Err("no upstream stub ran".to_string()) };
        match expect.upstream_any {
            Some(false) if !requests.is_empty() => {
                missed.push(format!("the upstream received {} request(s): {}", requests.len(), requests[0].target))
            }
            Some(true) if requests.is_empty() => missed.push("the upstream received nothing".to_string()),
            _ => {}
        }
        if let Some(re) = &expect.upstream_none_matching
            && let Some(r) = requests.iter().find(|r| re.is_match(&r.text()))
        {
            missed.push(format!("a request matches /{}/: {}", re.as_str(), r.target));
        }
        if let Some(re) = &expect.upstream_all_matching
            && let Some(r) = requests.iter().find(|r| !re.is_match(&r.text()))
        {
            missed.push(format!("a request does not match /{}/: {}", re.as_str(), r.target));
        }
        for (name, rule) in &expect.upstream_header {
            for r in requests {
                let value = r.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
                let holds = match (rule, value) {
                    (HeaderExpect::Equals(want), Some(v)) => v == want,
                    (HeaderExpect::Matches(re), Some(v)) => re.is_match(v),
                    (_, None) => false,
                };
                if !holds {
                    missed.push(format!("{} did not carry the expected {name} header", r.target));
                    break;
                }
            }
        }
        if let Some(want) = expect.upstream_token_echoed {
            let Some(echoed) = seen.token_echoed else {
                return Err("upstream.token_echoed needs {upstream_token} in the probe's upstream.reply".to_string());
            };
            if echoed != want {
                missed.push(if echoed {
                    "a marker the stub sent came back in the reply".to_string()
                } else {
                    "no marker the stub sent came back in the reply".to_string()
                });
            }
        }
    }
    if expect.log_matches.is_some() || expect.log_not_matches.is_some() {
        let Some(log) = &seen.log else { return Err("there is no server log to read".to_string()) };
        if let Some(re) = &expect.log_matches
            && !re.is_match(log)
        {
            missed.push(format!("the server log does not match /{}/", re.as_str()));
        }
        if let Some(re) = &expect.log_not_matches
            && re.is_match(log)
        {
            missed.push(format!("the server log matches /{}/", re.as_str()));
        }
    }
    Ok(missed)
}

/// One probe's verdict and the line that explains it.
pub fn probe_verdict(probe: &Probe, obs: &ProbeObs) -> (Verdict, String) {
    match &obs.outcome {
        ProbeOutcome::Na(why) => (Verdict::Na, why.clone()),
        ProbeOutcome::Unjudged(why) => (Verdict::Inconclusive, why.clone()),
        ProbeOutcome::Observed(seen) => match evaluate(&probe.expect, seen) {
            Err(why) => (Verdict::Inconclusive, why),
            Ok(missed) if missed.is_empty() => {
                (Verdict::Pass, format!("{} clause(s) held", probe.expect.clause_count()))
            }
            Ok(missed) => (Verdict::Fail, missed.join(", ")),
        },
    }
}

/// A custom check from its probes: all pass → pass, some → part, none → fail; any
/// probe that could not be judged → inconclusive; all not applicable → n/a.
pub fn custom_check(probes: &[(&Probe, &ProbeObs)]) -> Finding {
    let results: Vec<(&ProbeObs, Verdict, String)> = probes
        .iter()
        .map(|(p, o)| {
            let (v, line) = probe_verdict(p, o);
            (*o, v, line)
        })
        .collect();
    let evidence = results
        .iter()
        .map(|(o, v, line)| {
            Evidence::new(&o.name, format!("{}: {line}", v.id()), verified_by(&o.outcome))
                .tool(&o.tool)
                .args(o.args.clone())
                .code("custom.probe")
        })
        .collect();
    let count = |v: Verdict| results.iter().filter(|(_, x, _)| *x == v).count();
    let judged: Vec<_> = results.iter().filter(|(_, v, _)| *v != Verdict::Na).collect();
    let lines = |v: Verdict| {
        results.iter().filter(|(_, x, _)| *x == v).map(|(o, _, l)| format!("{}: {l}", o.name)).collect::<Vec<_>>()
    };
    let n = judged.len();
    let (verdict, summary) = if judged.is_empty() {
        (Verdict::Na, format!("not applicable: {}", results.first().map_or(String::new(), |r| r.2.clone())))
    } else if count(Verdict::Inconclusive) > 0 {
        (Verdict::Inconclusive, format!("could not be judged: {}", lines(Verdict::Inconclusive).join("; ")))
    } else if count(Verdict::Pass) == n {
        (Verdict::Pass, format!("{n} of {n} probe(s) passed"))
    } else {
        let failed = count(Verdict::Fail);
        let v = if failed == n { Verdict::Fail } else { Verdict::Part };
        (v, format!("{failed} of {n} probe(s) failed: {}", lines(Verdict::Fail).join("; ")))
    };
    Finding::new(verdict, summary, evidence)
}

/// The custom checks, in the order their first probe is written, and each probe's line.
pub fn findings(observed: &[(Probe, ProbeObs)]) -> (Vec<(CheckMeta, Finding)>, Vec<crate::judge::custom::CustomProbe>) {
    let mut checks: Vec<(CheckMeta, Finding)> = Vec::new();
    for (p, _) in observed {
        let Some(meta) = &p.check else { continue };
        if checks.iter().any(|(m, _)| m.id == meta.id) {
            continue;
        }
        let mine: Vec<_> = observed
            .iter()
            .filter(|(q, _)| q.check.as_ref().is_some_and(|m| m.id == meta.id))
            .map(|(q, o)| (q, o))
            .collect();
        checks.push((meta.clone(), custom_check(&mine)));
    }
    let lines = observed
        .iter()
        .map(|(p, o)| {
            let (verdict, detail) = probe_verdict(p, o);
            crate::judge::custom::CustomProbe {
                name: p.name.clone(),
                check: p.check.as_ref().map(|m| m.id.clone()).unwrap_or_default(),
                tool: p.tool.clone(),
                verdict,
                detail,
            }
        })
        .collect();
    (checks, lines)
}

/// The strongest observer a probe's clauses could have read.
fn verified_by(outcome: &ProbeOutcome) -> VerifiedBy {
    match outcome {
        ProbeOutcome::Observed(seen) if !seen.files.is_empty() => VerifiedBy::Sandbox,
        ProbeOutcome::Observed(seen) if seen.upstream.as_ref().is_some_and(|u| !u.is_empty()) => VerifiedBy::Upstream,
        _ => VerifiedBy::Response,
    }
}

/// One probe of a custom check.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CustomProbe {
    pub name: String,
    pub check: String,
    pub tool: String,
    pub verdict: Verdict,
    pub detail: String,
}

/// One probe, after `matrix` and `cases` expansion.
#[derive(Debug, Clone)]
pub struct Probe {
    /// The name reports use: the id, `id[arg=value]`, `id#2`, or `<tool>#<n>`.
    pub name: String,
    pub check: Option<CheckMeta>,
    pub tool: String,
    pub args: Map<String, Value>,
    pub active: bool,
    pub timeout_ms: Option<u64>,
    pub expect: Expect,
    pub identity: Option<Identity>,
    pub upstream_reply: Option<Reply>,
    /// Where the entry is: its line and key, for errors found once the tools are known.
    pub line: usize,
    pub key: String,
}

impl Probe {
    pub fn is_check(&self) -> bool {
        self.check.is_some()
    }
}

/// `check:` of a probe: the custom check it belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckMeta {
    pub id: String,
    pub label: String,
    pub scope: String,
    pub critical: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    A,
    B,
    Anonymous,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenerExpect {
    None,
    Hit,
    Any,
}

#[derive(Debug, Clone)]
pub enum HeaderExpect {
    Equals(String),
    Matches(Regex),
}

/// `expect:`: every clause given must hold.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    pub is_error: Option<bool>,
    pub text_matches: Option<Regex>,
    pub text_not_matches: Option<Regex>,
    pub files_unchanged: Vec<String>,
    pub files_created: Vec<String>,
    pub files_absent: Vec<String>,
    pub listener: Option<ListenerExpect>,
    pub duration_max_ms: Option<u64>,
    /// `upstream.requests`: `Some(false)` none, `Some(true)` any.
    pub upstream_any: Option<bool>,
    pub upstream_none_matching: Option<Regex>,
    pub upstream_all_matching: Option<Regex>,
    pub upstream_header: Vec<(String, HeaderExpect)>,
    pub upstream_token_echoed: Option<bool>,
    pub log_matches: Option<Regex>,
    pub log_not_matches: Option<Regex>,
    pub response_max_bytes: Option<u64>,
}

impl Expect {
    pub fn is_empty(&self) -> bool {
        self.clause_count() == 0
    }

    pub fn clause_count(&self) -> usize {
        [
            self.is_error.is_some(),
            self.text_matches.is_some(),
            self.text_not_matches.is_some(),
            !self.files_unchanged.is_empty(),
            !self.files_created.is_empty(),
            !self.files_absent.is_empty(),
            self.listener.is_some(),
            self.duration_max_ms.is_some(),
            self.upstream_any.is_some(),
            self.upstream_none_matching.is_some(),
            self.upstream_all_matching.is_some(),
            !self.upstream_header.is_empty(),
            self.upstream_token_echoed.is_some(),
            self.log_matches.is_some(),
            self.log_not_matches.is_some(),
            self.response_max_bytes.is_some(),
        ]
        .iter()
        .filter(|b| **b)
        .count()
    }

    /// Whether a clause reads the upstream stub.
    pub fn reads_upstream(&self) -> bool {
        self.upstream_any.is_some()
            || self.upstream_none_matching.is_some()
            || self.upstream_all_matching.is_some()
            || !self.upstream_header.is_empty()
            || self.upstream_token_echoed.is_some()
    }

    /// `other`'s clauses laid over these (a case over its probe).
    pub(crate) fn overlay(&mut self, other: Expect) {
        macro_rules! take {
            ($($f:ident),*) => { $( if other.$f.is_some() { self.$f = other.$f; } )* };
        }
        take!(
            is_error,
            text_matches,
            text_not_matches,
            listener,
            duration_max_ms,
            upstream_any,
            upstream_none_matching,
            upstream_all_matching,
            upstream_token_echoed,
            log_matches,
            log_not_matches,
            response_max_bytes
        );
        for (mine, theirs) in [
            (&mut self.files_unchanged, other.files_unchanged),
            (&mut self.files_created, other.files_created),
            (&mut self.files_absent, other.files_absent),
        ] {
            if !theirs.is_empty() {
                *mine = theirs;
            }
        }
        if !other.upstream_header.is_empty() {
            self.upstream_header = other.upstream_header;
        }
    }

    /// Every file path the clauses name.
    pub fn paths(&self) -> impl Iterator<Item = &String> {
        self.files_unchanged.iter().chain(&self.files_created).chain(&self.files_absent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;

    fn probe(expect: &str) -> Probe {
        let text = format!(
            "server:\n  command: x\nprobes:\n  - id: p\n    check: {{ id: custom-x, label: l, scope: server }}\n    tool: t\n    expect: {expect}\n"
        );
        parse("c.yaml", &text).unwrap_or_else(|e| panic!("{e}")).probes.remove(0)
    }

    fn seen(answer: Answer) -> Seen {
        Seen {
            answer,
            elapsed_ms: 5,
            response_bytes: 10,
            files: vec![FileSeen {
                path: "{canary}/secret.txt".into(),
                before: Some("h1".into()),
                after: Some("h1".into()),
            }],
            listener_hits: Some(0),
            upstream: None,
            token_echoed: None,
            log: None,
        }
    }

    fn obs(s: Seen) -> ProbeObs {
        ProbeObs { name: "p".into(), tool: "t".into(), args: Value::Null, outcome: ProbeOutcome::Observed(Box::new(s)) }
    }

    /// A call over its time limit says the limit, never the measured time, so two runs
    /// print the same line.
    #[test]
    fn a_slow_call_names_its_limit_not_its_time() {
        let p = probe("{ duration_ms: { max: 1 } }");
        let (v, line) = probe_verdict(&p, &obs(seen(Answer::Success { text: "ok".into() })));
        assert_eq!((v, line.as_str()), (Verdict::Fail, "the call took longer than 1 ms"));
    }

    #[test]
    fn the_page_example_fails_when_the_delete_goes_through() {
        let p = probe("{ is_error: true, files: { unchanged: [\"{canary}/secret.txt\"] } }");
        let mut s = seen(Answer::Success { text: "deleted".into() });
        s.files[0].after = None;
        let (v, line) = probe_verdict(&p, &obs(s));
        assert_eq!(v, Verdict::Fail);
        assert_eq!(
            line,
            "expected is_error true, the tool reported success, {canary}/secret.txt was changed, added or removed"
        );
        let (v, _) = probe_verdict(&p, &obs(seen(Answer::ToolError { text: "outside the root".into() })));
        assert_eq!(v, Verdict::Pass);
    }

    #[test]
    fn unreadable_clauses_are_inconclusive_and_checks_aggregate() {
        let p = probe("{ log: { matches: started } }");
        assert_eq!(probe_verdict(&p, &obs(seen(Answer::Success { text: String::new() }))).0, Verdict::Inconclusive);
        let q = probe("{ is_error: false }");
        let pass = obs(seen(Answer::Success { text: String::new() }));
        let fail = obs(seen(Answer::ToolError { text: "no".into() }));
        assert_eq!(custom_check(&[(&q, &pass), (&q, &fail)]).verdict, Verdict::Part);
        assert_eq!(custom_check(&[(&q, &fail)]).verdict, Verdict::Fail);
        assert_eq!(custom_check(&[(&q, &pass)]).verdict, Verdict::Pass);
        let na = ProbeObs { outcome: ProbeOutcome::Na("needs --active".into()), ..pass.clone() };
        assert_eq!(custom_check(&[(&q, &na)]).verdict, Verdict::Na);
    }
}
