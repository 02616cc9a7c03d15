//! The grade math of one pack, step by step, as the viewer shows it: recomputed from a
//! record's checks by the grading code the CLI uses, so what is explained is what ran.

use crate::assemble::pack_inputs;
use crate::glance::Rule;
use crate::grading::{Outcome, grade};
use crate::model::{Pack, Verdict, Weight};
use crate::record::{CheckResult, PackResult, PackStatus, Record};

/// A pack's result as every report's pack line says it, after `PACK <id>`.
pub fn pack_verdict(result: &PackResult) -> String {
    match (result.status, &result.grade) {
        (PackStatus::Graded, Some(g)) => format!("GRADE {}  ({})", g.display_letter(), g.fraction()),
        (PackStatus::Inconclusive, _) => {
            format!("not graded: {} (inconclusive)", result.reason.as_deref().unwrap_or("nothing could be scored"))
        }
        _ => format!("not graded: {}", result.reason.as_deref().unwrap_or("does not apply")),
    }
}

/// What kind of grade a pack earns when it is not a standard pack's.
pub fn pack_kind(pack: Pack) -> Option<&'static str> {
    match pack {
        Pack::Custom => Some("custom grade"),
        p if p.is_candidate() => Some("candidate pack"),
        _ => None,
    }
}

/// A pack's checks in the order every report lists them: worst first, advisory last.
pub fn worst_first<'a>(record: &'a Record, pack: &str) -> Vec<&'a CheckResult> {
    let mut checks: Vec<&CheckResult> = record.checks.iter().filter(|c| c.pack == pack).collect();
    checks.sort_by_key(|c| (c.advisory, c.verdict.severity_rank()));
    checks
}

/// One line of a pack's math: the formula's rule it applies, in the methodology's
/// words, or (`None`) the letter that results.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub rule: Option<Rule>,
    pub text: String,
}

/// The lines that turn a pack's verdicts into its letter, in the methodology's order of
/// rules, the letter last (empty for a pack without checks).
pub fn grade_math(record: &Record, pack: &str) -> Vec<Step> {
    let inputs = pack_inputs(pack, &record.checks);
    if inputs.is_empty() {
        return Vec::new();
    }
    let label = |id: &str| record.checks.iter().find(|c| c.id == id).map_or(id.to_string(), |c| c.label.clone());
    let mut steps = Vec::new();
    let mut say = |rule: Option<Rule>, text: String| steps.push(Step { rule, text });
    let advisory: Vec<String> = inputs.iter().filter(|i| i.weight == Weight::Advisory).map(|i| label(i.id)).collect();
    let counted: Vec<_> = inputs.iter().filter(|i| i.weight != Weight::Advisory).collect();
    say(Some(Rule::Counted), format!("{} of the pack's {} check(s) count.", counted.len(), inputs.len()));
    for i in &counted {
        let critical = if i.weight == Weight::Critical { " (critical)" } else { "" };
        let (rule, text) = match i.verdict {
            Verdict::Pass => (Rule::Scored, format!("{}{critical}: pass, 1 point of 1.", label(i.id))),
            Verdict::Part => (Rule::Scored, format!("{}{critical}: part, 0.5 points of 1.", label(i.id))),
            Verdict::Fail => (Rule::Scored, format!("{}{critical}: fail, 0 points of 1.", label(i.id))),
            Verdict::Inconclusive => {
                (Rule::Excluded, format!("{}{critical}: inconclusive, left out of the denominator.", label(i.id)))
            }
            Verdict::Na => {
                (Rule::Excluded, format!("{}{critical}: not applicable, left out of the denominator.", label(i.id)))
            }
        };
        say(Some(rule), text);
    }
    say(
        Some(Rule::Advisory),
        if advisory.is_empty() {
            "No advisory check.".to_string()
        } else {
            format!("Shown and never counted: {}.", advisory.join("; "))
        },
    );
    let mut last = None;
    match grade(pack, &inputs) {
        Outcome::NotGraded { reason, .. } => {
            say(Some(Rule::NoLetter), format!("Nothing was scored, so no letter is given: {reason}."))
        }
        Outcome::Graded(g) => {
            say(Some(Rule::Percentage), format!("{} of {} points: {}%.", g.points, g.scored, g.pct));
            say(
                Some(Rule::Bands),
                format!("{}% falls in band {} (A from 90%, B from 75%, C from 60%, D from 45%, else F).", g.pct, g.raw),
            );
            let cap = if g.capped {
                let fails: Vec<String> = g.critical_fails.iter().map(|id| label(id)).collect();
                format!("A critical check failed ({}), so {} is capped at D.", fails.join("; "), g.raw)
            } else if !g.critical_fails.is_empty() {
                format!("A critical check failed, but {} is not above D, so the cap changes nothing.", g.raw)
            } else {
                "No critical check failed: no cap.".to_string()
            };
            say(Some(Rule::CriticalCap), cap);
            if g.provisional {
                let open: Vec<String> = counted
                    .iter()
                    .filter(|i| i.weight == Weight::Critical && i.verdict == Verdict::Inconclusive)
                    .map(|i| label(i.id))
                    .collect();
                say(
                    Some(Rule::Provisional),
                    format!(
                        "A critical check could not be measured ({}), so the grade is provisional ({}) and may drop once it can.",
                        open.join("; "),
                        g.display_letter()
                    ),
                );
            }
            let recorded = record.packs.get(pack).and_then(|p| p.grade.as_ref()).map(|r| r.display_letter());
            let mut text = format!("Grade {}.", g.display_letter());
            if let Some(r) = recorded.filter(|r| *r != g.display_letter()) {
                text.push_str(&format!(" The record says {r}: it was graded by another formula."));
            }
            last = Some(text);
        }
    }
    // The methodology's order (stable, so each rule's lines keep theirs), the letter last.
    steps.sort_by_key(|s| s.rule);
    steps.extend(last.map(|text| Step { rule: None, text }));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::capped;

    #[test]
    fn a_capped_pack_explains_its_cap_and_a_provisional_one_why() {
        let rec = capped();
        let math = grade_math(&rec, "core");
        let core: Vec<String> =
            math.iter().map(|s| format!("{}: {}", s.rule.map_or("Result", Rule::name), s.text)).collect();
        assert!(core.iter().any(|l| l == "Percentage: 2.5 of 4 points: 62.5%."), "{core:#?}");
        assert!(core.iter().any(|l| l.starts_with("Bands: 62.5% falls in band C")), "{core:#?}");
        assert!(
            core.iter().any(|l| l
                == "Critical cap: A critical check failed (No environment secret echoed in responses), so C is capped at D."),
            "{core:#?}"
        );
        assert!(core.iter().any(|l| l.starts_with("Advisory: Shown and never counted:")), "{core:#?}");
        assert_eq!(core.last().unwrap(), "Result: Grade D.");
        // One list in the methodology's order: the rules never go back.
        let rules: Vec<Rule> = math.iter().filter_map(|s| s.rule).collect();
        assert!(rules.windows(2).all(|w| w[0] <= w[1]), "{rules:?}");
        let net: Vec<String> = grade_math(&rec, "net").into_iter().map(|s| s.text).collect();
        assert!(net.iter().any(|l| l.contains("so the grade is provisional (A*)")), "{net:#?}");
        assert!(grade_math(&rec, "git").is_empty());
    }

    #[test]
    fn a_record_graded_by_another_formula_says_so() {
        let mut rec = capped();
        rec.packs.get_mut("fs").unwrap().grade.as_mut().unwrap().letter = crate::grading::Letter::A;
        let last = grade_math(&rec, "fs").pop().unwrap();
        assert_eq!(last.text, "Grade D. The record says A: it was graded by another formula.");
    }
}
