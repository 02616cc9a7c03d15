//! The sql-guard pack: statements and references that must not reach the backend, and
//! the row cap. Placeholders: `{a}` an in-scope name (`scope::allowed_name`), `{a:last}`
//! its last part, `{o}` an out-of-scope name (`<container>.outside_sm_<token>`), written
//! as is, with each part quoted (`{o:quoted}`) or in upper case (`{o:upper}`), and
//! `{token}` the probe's token.

use super::Answer;
use super::Finding;
use super::backend::{Forward, TOKEN, ToolRun, let_through};
use crate::judge::scope::ScopeConfig;
use crate::model::{Evidence, Verdict, VerifiedBy};
use regex::Regex;
use std::sync::LazyLock;

/// A harmless read of the in-scope name: it must reach the upstream, with its token.
pub const CONTROL: &str = "SELECT * FROM {a} WHERE 'sm-{token}' = 'sm-{token}'";

/// A template with its placeholders filled for one probe.
pub fn fill(template: &str, scope: &ScopeConfig, token: &str) -> String {
    let sep = scope.separator;
    let a = super::scope::allowed_name(scope);
    let a_last = a.rsplit_once(sep).map_or(a.as_str(), |(_, l)| l).to_string();
    // The container the first allow entry sits in: an exact entry's parent, a prefix's
    // parent (sales.public. sits in sales), so {o} is outside the scope as written.
    let container = match scope.allow.first() {
        Some(e) => {
            let name = e.strip_suffix(sep).unwrap_or(e);
            name.rsplit_once(sep).map_or("", |(p, _)| p).to_string()
        }
        None => String::new(),
    };
    let leaf = format!("outside_sm_{token}");
    let parts: Vec<&str> = container.split(sep).filter(|p| !p.is_empty()).chain([leaf.as_str()]).collect();
    let o = parts.join(&sep.to_string());
    let quoted: Vec<String> = parts.iter().map(|p| format!("\"{p}\"")).collect();
    template
        .replace("{o:quoted}", &quoted.join(&sep.to_string()))
        .replace("{o:upper}", &o.to_uppercase())
        .replace("{o}", &o)
        .replace("{a:last}", &a_last)
        .replace("{a}", &a)
        .replace(TOKEN, token)
}

/// `sql-guard-statements`.
pub fn statements(runs: &[ToolRun]) -> Finding {
    let_through(runs, "statements that must not reach the backend", CONTROL_HINT)
}

/// `sql-guard-references`.
/// `sql-guard-references`; n/a with `why` when the pack had nothing to aim them at
/// (no `scope.allow` to step outside of).
pub fn references(runs: &[ToolRun], na: Option<&str>) -> Finding {
    match na {
        Some(why) => Finding::new(crate::model::Verdict::Na, why, Vec::new()),
        None => let_through(runs, "statements naming a table outside scope.allow", CONTROL_HINT),
    }
}

const CONTROL_HINT: &str = "the tool must forward a plain SELECT for the pack to judge it (check sql_tools and that the server's backend address is {upstream})";

static CAP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bLIMIT\s+(\d{1,19})|\bFETCH\s+(?:FIRST|NEXT)\s+(\d{1,19})|\bTOP\s*\(?\s*(\d{1,19})")
        .expect("valid")
});

/// Every row cap spelled in forwarded text: LIMIT n, FETCH FIRST|NEXT n, TOP n.
pub fn caps_in(text: &str) -> Vec<u64> {
    CAP.captures_iter(text)
        .filter_map(|c| (1..=3).find_map(|i| c.get(i)).and_then(|m| m.as_str().parse().ok()))
        .collect()
}

/// `sql-guard-rowcap`: each statement reached the upstream with a cap of at most
/// `row_cap` (or was refused). No recognised cap at all reads as part: the server may
/// cap another way.
pub fn rowcap(runs: &[ToolRun], row_cap: u64) -> Finding {
    let judged: Vec<&ToolRun> = runs.iter().filter(|r| r.control_held()).collect();
    if judged.is_empty() {
        return statements(runs);
    }
    let mut worst = Verdict::Pass;
    let mut evidence = Vec::new();
    let mut lines = Vec::new();
    let mut sent = 0;
    for p in judged.iter().flat_map(|r| &r.probes) {
        let (verdict, outcome) = rowcap_probe(p, row_cap);
        let Some(verdict) = verdict else { continue };
        sent += 1;
        if verdict.severity_rank() < worst.severity_rank() {
            worst = verdict;
        }
        if verdict != Verdict::Pass {
            lines.push(format!("{}: {outcome}", p.probe));
        }
        evidence.push(
            Evidence::new(&p.probe, outcome, VerifiedBy::Upstream)
                .tool(&p.tool)
                .args(p.args.clone())
                .code("sql-guard.rowcap"),
        );
    }
    if sent == 0 {
        return Finding::new(Verdict::Inconclusive, "no probe could be sent", evidence);
    }
    let summary = match worst {
        Verdict::Pass => {
            format!("every statement reached the upstream capped at {row_cap} rows or fewer, or was refused")
        }
        _ => lines.join("; "),
    };
    Finding::new(worst, summary, evidence)
}

/// One row-cap probe: its verdict (None when it was never answered) and what was seen.
fn rowcap_probe(p: &Forward, row_cap: u64) -> (Option<Verdict>, String) {
    if p.reached.is_empty() {
        return match &p.answer {
            Answer::Timeout | Answer::Died { .. } | Answer::NotSent { .. } => (None, p.answer.brief()),
            a => (Some(Verdict::Pass), format!("did not reach the upstream; {}", a.brief())),
        };
    }
    let caps: Vec<u64> =
        p.reached.iter().flat_map(|r| caps_in(&r.target).into_iter().chain(caps_in(&r.body))).collect();
    let line = p.reached[0].line();
    match caps.iter().min() {
        Some(&cap) if cap <= row_cap => (Some(Verdict::Pass), format!("capped at {cap}: {line}")),
        Some(&cap) => {
            (Some(Verdict::Fail), format!("reached the upstream with a cap of {cap} (row_cap {row_cap}): {line}"))
        }
        None => (
            Some(Verdict::Part),
            format!(
                "no LIMIT, FETCH FIRST or TOP in what reached the upstream (another spelling reads as part): {line}"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::backend::Reached;
    use crate::registry::backend::REFERENCE_PROBES;
    use serde_json::json;

    fn example() -> ScopeConfig {
        ScopeConfig {
            tools: Vec::new(),
            allow: vec!["sales.public.".into()],
            deny: vec!["hr.private.salaries".into()],
            separator: '.',
        }
    }

    #[test]
    fn placeholders_fill_as_the_reference_says() {
        let s = example();
        assert_eq!(
            fill(REFERENCE_PROBES[9].sends, &s, "ab"),
            "SELECT * FROM \"sales\".\"outside_sm_ab\" WHERE 'sm-ab' = 'sm-ab'"
        );
        assert_eq!(
            fill(REFERENCE_PROBES[10].sends, &s, "ab"),
            "SELECT * FROM SALES.OUTSIDE_SM_AB WHERE 'sm-ab' = 'sm-ab'"
        );
        assert_eq!(
            fill(REFERENCE_PROBES[11].sends, &s, "ab"),
            "SELECT * FROM sales.outside_sm_ab AS sm_control WHERE 'sm-ab' = 'sm-ab'"
        );
        assert_eq!(fill(CONTROL, &s, "ab"), "SELECT * FROM sales.public.sm_control WHERE 'sm-ab' = 'sm-ab'");
    }

    #[test]
    fn caps_are_read_from_every_spelling() {
        assert_eq!(caps_in("select * from (x limit 1000000000) limit 1000"), vec![1_000_000_000, 1000]);
        assert_eq!(caps_in("{\"sql\":\"SELECT * FROM t FETCH FIRST 50 ROWS ONLY\"}"), vec![50]);
        assert_eq!(caps_in("SELECT TOP (10) * FROM t"), vec![10]);
        assert!(caps_in("{\"sql\":\"SELECT 1\",\"limit\":1000}").is_empty());
    }

    #[test]
    fn rowcap_reads_pass_fail_and_part() {
        let fwd = |body: &str| Forward {
            probe: "huge-limit".into(),
            tool: "query".into(),
            args: json!({}),
            answer: Answer::Success { text: "[]".into() },
            reached: vec![Reached { target: "POST /sql".into(), body: body.into() }],
        };
        let run = |body: &str| ToolRun { tool: "query".into(), control: fwd("SELECT 1"), probes: vec![fwd(body)] };
        assert_eq!(rowcap(&[run("SELECT * FROM (x LIMIT 1000000000) AS c LIMIT 1000")], 1000).verdict, Verdict::Pass);
        assert_eq!(rowcap(&[run("SELECT * FROM x LIMIT 1000000000")], 1000).verdict, Verdict::Fail);
        assert_eq!(rowcap(&[run("{\"sql\":\"SELECT * FROM x\",\"max_rows\":1000}")], 1000).verdict, Verdict::Part);
    }
}
