//! What the scope and sql-guard judges share: a probe aimed through the server at the
//! harness's upstream stub, and the rule that decides it. Every name and statement
//! carries a fresh token, so "let through" means "its token reached the stub"; no SQL
//! and no reply is parsed to decide it.

use super::Answer;
use super::Finding;
use crate::model::{Evidence, Verdict, VerifiedBy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How reports write a probe's token.
pub const TOKEN: &str = "{token}";

/// One request the stub recorded, as evidence shows it (tokens written as placeholders).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reached {
    /// `METHOD path?query`.
    pub target: String,
    /// The body, clipped to a few KiB.
    pub body: String,
}

impl Reached {
    pub fn line(&self) -> String {
        let body = crate::text::visible(self.body.trim());
        if body.is_empty() { self.target.clone() } else { format!("{} {}", self.target, crate::text::clip(&body, 160)) }
    }
}

/// One call aimed through the server at the stub.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Forward {
    /// The corpus name of the probe (`sibling`, `join`, …).
    pub probe: String,
    pub tool: String,
    /// The arguments as reports show them.
    pub args: Value,
    pub answer: Answer,
    /// The requests this probe reached the stub with: those carrying its token or, for
    /// a name that cannot carry one, those made during the call that name it.
    pub reached: Vec<Reached>,
}

impl Forward {
    fn sent(&self) -> bool {
        !matches!(self.answer, Answer::NotSent { .. })
    }

    fn evidence(&self, outcome: String) -> Evidence {
        Evidence::new(&self.probe, outcome, VerifiedBy::Upstream).tool(&self.tool).args(self.args.clone())
    }
}

/// One tool's control call and the probes that followed it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolRun {
    pub tool: String,
    pub control: Forward,
    pub probes: Vec<Forward>,
}

impl ToolRun {
    /// A control counts when the tool accepted it and it reached the stub.
    pub fn control_held(&self) -> bool {
        matches!(self.control.answer, Answer::Success { .. }) && !self.control.reached.is_empty()
    }
}

/// Everything the scope, sql-guard and upstream packs judge.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BackendObservations {
    pub scope: Vec<ToolRun>,
    pub statements: Vec<ToolRun>,
    pub references: Vec<ToolRun>,
    /// Why sql-guard-references is n/a, when it is.
    pub references_na: Option<String>,
    pub rowcap: Vec<ToolRun>,
    pub row_cap: u64,
    pub credential: super::credential::CredentialObservations,
}

/// The shared verdict rule: fail when any probe of a tool whose control held reached
/// the stub; pass when every probe sent was kept from it; inconclusive when no control
/// held (nothing shows the tool reaches the stub at all) or nothing could be sent.
pub fn let_through(runs: &[ToolRun], what: &str, control_hint: &str) -> Finding {
    let (judged, unjudged): (Vec<&ToolRun>, Vec<&ToolRun>) = runs.iter().partition(|r| r.control_held());
    let control_line = |r: &ToolRun| {
        let outcome = if r.control.reached.is_empty() {
            format!("did not reach the upstream; {}", r.control.answer.brief())
        } else {
            format!("{}; reached the upstream: {}", r.control.answer.brief(), r.control.reached[0].line())
        };
        r.control.evidence(outcome).code("upstream.control")
    };
    if judged.is_empty() {
        let first = unjudged.first().map(|r| {
            format!("the control {} did not reach the upstream through {}", show_args(&r.control.args), r.tool)
        });
        return Finding::new(
            Verdict::Inconclusive,
            format!("{}; {control_hint}", first.unwrap_or_else(|| "no tool to aim at".to_string())),
            unjudged.iter().map(|r| control_line(r)).collect(),
        );
    }
    let sent: Vec<&Forward> = judged.iter().flat_map(|r| &r.probes).filter(|p| p.sent()).collect();
    let leaks: Vec<&Forward> = sent.iter().copied().filter(|p| !p.reached.is_empty()).collect();
    let skipped = if unjudged.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = unjudged.iter().map(|r| r.tool.as_str()).collect();
        format!(" ({} not judged: its control did not reach the upstream)", names.join(", "))
    };
    let mut evidence: Vec<Evidence> = unjudged.iter().map(|r| control_line(r)).collect();
    if !leaks.is_empty() {
        let mut names: Vec<&str> = Vec::new();
        for p in &leaks {
            if !names.contains(&p.probe.as_str()) {
                names.push(&p.probe);
            }
        }
        evidence.extend(
            leaks
                .iter()
                .map(|p| p.evidence(format!("reached the upstream: {}", p.reached[0].line())).code("upstream.reached")),
        );
        return Finding::new(
            Verdict::Fail,
            format!("{} of {} {what} reached the upstream ({}){skipped}", leaks.len(), sent.len(), names.join(", ")),
            evidence,
        );
    }
    if sent.is_empty() {
        return Finding::new(Verdict::Inconclusive, format!("no probe could be sent{skipped}"), evidence);
    }
    let tools: Vec<&str> = judged.iter().map(|r| r.tool.as_str()).collect();
    evidence.extend(judged.iter().map(|r| control_line(r)));
    Finding::new(
        Verdict::Pass,
        format!("{} {what} were kept from the upstream, on {}{skipped}", sent.len(), tools.join(", ")),
        evidence,
    )
}

/// Arguments as one short line: the single value when there is one.
pub fn show_args(args: &Value) -> String {
    match args.as_object() {
        Some(m) if m.len() == 1 => {
            let v = m.values().next().expect("one");
            format!("\"{}\"", crate::text::clip(&crate::text::visible(v.as_str().unwrap_or(&v.to_string())), 100))
        }
        _ => crate::text::clip(&args.to_string(), 100),
    }
}

/// `text` with every spelling of `token` (any case) written as `{token}`.
pub fn hide_token(text: &str, token: &str) -> String {
    if token.is_empty() {
        return text.to_string();
    }
    let lower = text.to_ascii_lowercase();
    let needle = token.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(pos) = lower[i..].find(&needle) {
        out.push_str(&text[i..i + pos]);
        out.push_str(TOKEN);
        i += pos + needle.len();
    }
    out.push_str(&text[i..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fwd(probe: &str, answer: Answer, reached: bool) -> Forward {
        Forward {
            probe: probe.into(),
            tool: "t".into(),
            args: json!({"table": probe}),
            answer,
            reached: if reached {
                vec![Reached { target: "GET /tables/x".into(), body: String::new() }]
            } else {
                Vec::new()
            },
        }
    }

    fn ok() -> Answer {
        Answer::Success { text: "ok".into() }
    }

    fn refused() -> Answer {
        Answer::ToolError { text: "out of scope".into() }
    }

    #[test]
    fn a_probe_that_reached_the_stub_fails_and_a_failed_control_is_inconclusive() {
        let run = |control: bool, leak: bool| ToolRun {
            tool: "t".into(),
            control: fwd("control", ok(), control),
            probes: vec![fwd("sibling", refused(), false), fwd("partial", ok(), leak)],
        };
        assert_eq!(let_through(&[run(true, false)], "names", "hint").verdict, Verdict::Pass);
        let f = let_through(&[run(true, true)], "names", "hint");
        assert_eq!(f.verdict, Verdict::Fail);
        assert!(f.summary.starts_with("1 of 2 names reached the upstream (partial)"), "{}", f.summary);
        let f = let_through(&[run(false, true)], "names", "check the spelling");
        assert_eq!(f.verdict, Verdict::Inconclusive);
        assert!(f.summary.ends_with("check the spelling"), "{}", f.summary);
    }

    #[test]
    fn tokens_are_hidden_in_any_case() {
        assert_eq!(
            hide_token("SELECT * FROM S.OUTSIDE_SM_AB12 x sm_ab12", "ab12"),
            "SELECT * FROM S.OUTSIDE_SM_{token} x sm_{token}"
        );
    }
}
