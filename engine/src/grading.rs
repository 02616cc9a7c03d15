//! The grading formula of the methodology (steps 1–9) and the exit gate, as pure functions.

use crate::model::{Verdict, Weight};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A letter grade. Ordered best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
pub enum Letter {
    A,
    B,
    C,
    D,
    F,
}

impl Letter {
    pub fn parse(s: &str) -> Option<Letter> {
        match s.trim().to_ascii_uppercase().as_str() {
            "A" => Some(Letter::A),
            "B" => Some(Letter::B),
            "C" => Some(Letter::C),
            "D" => Some(Letter::D),
            "F" => Some(Letter::F),
            _ => None,
        }
    }

    /// Step 5: the band a percentage falls in, compared exactly as a fraction.
    fn band(points_halves: u32, scored: u32) -> Letter {
        // points / scored >= p/100  <=>  halves * 100 >= p * 2 * scored
        let at_least = |p: u32| points_halves * 100 >= p * 2 * scored;
        if at_least(90) {
            Letter::A
        } else if at_least(75) {
            Letter::B
        } else if at_least(60) {
            Letter::C
        } else if at_least(45) {
            Letter::D
        } else {
            Letter::F
        }
    }
}

impl fmt::Display for Letter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// A number that is printed without a fractional part when it has none
/// (`4`, `3.5`, `87.5`), so JSON and text agree.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Decimal(pub f64);

impl Serialize for Decimal {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 && self.0.abs() < 1e15 {
            s.serialize_i64(self.0 as i64)
        } else {
            s.serialize_f64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for Decimal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        f64::deserialize(d).map(Decimal)
    }
}

impl schemars::JsonSchema for Decimal {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Decimal".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "number", "description": "A whole number, or a half (2.5)." })
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.fract() == 0.0 { write!(f, "{}", self.0 as i64) } else { write!(f, "{}", self.0) }
    }
}

/// One check as the formula sees it: its effective weight and its verdict.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub id: &'a str,
    pub weight: Weight,
    pub verdict: Verdict,
}

/// The grade of one pack (the `grade` object of the record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Grade {
    pub pack: String,
    pub points: Decimal,
    pub scored: u32,
    pub pct: Decimal,
    /// The band before the critical cap.
    pub raw: Letter,
    pub letter: Letter,
    pub capped: bool,
    pub critical_fails: Vec<String>,
    pub provisional: bool,
    /// Non-advisory checks left out of the denominator (inconclusive or na).
    pub excluded: Vec<String>,
    /// Every non-advisory check, scored or excluded.
    #[serde(default)]
    pub total: u32,
}

impl Grade {
    /// `A`, or `A*` when provisional.
    pub fn display_letter(&self) -> String {
        format!("{}{}", self.letter, if self.provisional { "*" } else { "" })
    }

    /// `3/4 points, 75%`, plus `· 1 of 5 checks not scored` when something was excluded.
    pub fn fraction(&self) -> String {
        let mut s = format!("{}/{} points, {}%", self.points, self.scored, self.pct);
        if !self.excluded.is_empty() {
            s.push_str(&format!(" · {} of {} checks not scored", self.excluded.len(), self.total));
        }
        s
    }
}

/// What grading one pack produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Graded(Grade),
    /// Step 3: nothing was scored; no letter is invented.
    NotGraded {
        all_na: bool,
        reason: String,
    },
}

/// Grades one pack from its checks' verdicts.
pub fn grade(pack: &str, checks: &[Input<'_>]) -> Outcome {
    // Step 1 (and 9): advisory checks never count.
    let counted: Vec<&Input> = checks.iter().filter(|c| c.weight != Weight::Advisory).collect();
    // Step 2: pass 1, part 0.5, fail 0 — kept in halves so the bands compare exactly.
    let mut halves = 0u32;
    let mut scored = 0u32;
    let mut excluded = Vec::new();
    let mut critical_fails = Vec::new();
    let mut provisional = false;
    for c in &counted {
        match c.verdict {
            Verdict::Pass => {
                halves += 2;
                scored += 1;
            }
            Verdict::Part => {
                halves += 1;
                scored += 1;
            }
            Verdict::Fail => {
                scored += 1;
                if c.weight == Weight::Critical {
                    critical_fails.push(c.id.to_string());
                }
            }
            // Step 8: inconclusive and na leave the denominator and are listed.
            Verdict::Inconclusive | Verdict::Na => {
                excluded.push(c.id.to_string());
                // Step 7: an unanswered critical question makes the grade provisional.
                if c.verdict == Verdict::Inconclusive && c.weight == Weight::Critical {
                    provisional = true;
                }
            }
        }
    }
    // Step 3.
    if scored == 0 {
        let na = counted.iter().filter(|c| c.verdict == Verdict::Na).count();
        let incl = counted.len() - na;
        let all_na = incl == 0;
        let reason = if counted.is_empty() {
            "the pack has no scored check".to_string()
        } else if all_na {
            format!("no check applied ({na} not applicable)")
        } else {
            format!("no check could be scored ({incl} inconclusive, {na} not applicable)")
        };
        return Outcome::NotGraded { all_na, reason };
    }
    // Steps 4 and 5.
    let raw = Letter::band(halves, scored);
    let pct = (f64::from(halves) * 500.0 / f64::from(scored)).round() / 10.0;
    // Step 6: a critical fail caps anything above D at D; a part does not.
    let capped = !critical_fails.is_empty() && raw < Letter::D;
    let letter = if capped { Letter::D } else { raw };
    Outcome::Graded(Grade {
        pack: pack.to_string(),
        points: Decimal(f64::from(halves) / 2.0),
        scored,
        pct: Decimal(pct),
        raw,
        letter,
        capped,
        critical_fails,
        provisional,
        excluded,
        total: counted.len() as u32,
    })
}

/// Whether a grade meets the gate set by `--fail-under` (default A). A provisional A*
/// does not meet an A gate, because a critical question was unanswered; a
/// provisional B meets a B gate.
pub fn meets_gate(grade: &Grade, gate: Letter) -> bool {
    if grade.letter == gate { !(grade.provisional && gate == Letter::A) } else { grade.letter < gate }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verdict::*;
    use Weight::*;

    fn g(checks: &[(Weight, Verdict)]) -> Outcome {
        let ids: Vec<String> = (0..checks.len()).map(|i| format!("c{i}")).collect();
        let inputs: Vec<Input> =
            checks.iter().zip(&ids).map(|(&(weight, verdict), id)| Input { id, weight, verdict }).collect();
        grade("p", &inputs)
    }

    fn graded(checks: &[(Weight, Verdict)]) -> Grade {
        match g(checks) {
            Outcome::Graded(grade) => grade,
            other => panic!("expected a grade, got {other:?}"),
        }
    }

    #[test]
    fn step1_advisory_checks_are_not_taken() {
        let grade = graded(&[(Scored, Pass), (Advisory, Fail)]);
        assert_eq!((grade.scored, grade.total), (1, 1));
        assert_eq!(grade.letter, Letter::A);
    }

    #[test]
    fn step2_points_are_one_half_zero() {
        let grade = graded(&[(Scored, Pass), (Scored, Part), (Scored, Fail)]);
        assert_eq!(grade.points, Decimal(1.5));
        assert_eq!(grade.scored, 3);
    }

    #[test]
    fn step3_nothing_scored_invents_no_letter() {
        assert!(matches!(g(&[(Scored, Na), (Critical, Na)]), Outcome::NotGraded { all_na: true, .. }));
        match g(&[(Scored, Inconclusive), (Scored, Na)]) {
            Outcome::NotGraded { all_na, reason } => {
                assert!(!all_na);
                assert_eq!(reason, "no check could be scored (1 inconclusive, 1 not applicable)");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(g(&[(Advisory, Pass)]), Outcome::NotGraded { .. }));
    }

    #[test]
    fn step4_percentage_is_points_over_scored() {
        let grade = graded(&[(Scored, Pass), (Scored, Pass), (Scored, Pass), (Scored, Fail)]);
        assert_eq!(grade.pct, Decimal(75.0));
        let grade = graded(&[(Scored, Pass), (Scored, Part), (Scored, Pass), (Scored, Pass)]);
        assert_eq!(grade.pct, Decimal(87.5));
    }

    #[test]
    fn step5_bands_include_their_lower_bound() {
        let letter = |pass: usize, fail: usize| {
            let mut v = vec![(Scored, Pass); pass];
            v.extend(vec![(Scored, Fail); fail]);
            graded(&v).raw
        };
        assert_eq!(letter(9, 1), Letter::A); // 90%
        assert_eq!(letter(8, 2), Letter::B); // 80%
        assert_eq!(letter(3, 1), Letter::B); // 75%
        assert_eq!(letter(3, 2), Letter::C); // 60%
        assert_eq!(letter(9, 11), Letter::D); // 45%
        assert_eq!(letter(4, 6), Letter::F); // 40%
        assert_eq!(letter(0, 1), Letter::F);
    }

    #[test]
    fn step6_critical_fail_caps_at_d_but_leaves_d_and_f() {
        let mut v = vec![(Scored, Pass); 9];
        v.push((Critical, Fail));
        let grade = graded(&v);
        assert_eq!((grade.raw, grade.letter, grade.capped), (Letter::A, Letter::D, true));
        assert_eq!(grade.critical_fails, vec!["c9"]);
        let grade = graded(&[(Critical, Fail), (Scored, Fail)]);
        assert_eq!((grade.raw, grade.letter, grade.capped), (Letter::F, Letter::F, false));
        // A part on a critical check does not cap.
        let mut v = vec![(Scored, Pass); 9];
        v.push((Critical, Part));
        let grade = graded(&v);
        assert_eq!((grade.letter, grade.capped), (Letter::A, false));
    }

    #[test]
    fn step7_critical_inconclusive_is_provisional() {
        let grade = graded(&[(Critical, Inconclusive), (Scored, Pass)]);
        assert!(grade.provisional);
        assert_eq!(grade.display_letter(), "A*");
        let grade = graded(&[(Scored, Inconclusive), (Scored, Pass)]);
        assert!(!grade.provisional);
    }

    #[test]
    fn step8_excluded_checks_are_listed_and_counted_in_the_line() {
        let grade = graded(&[(Scored, Pass), (Scored, Pass), (Scored, Pass), (Scored, Fail), (Scored, Na)]);
        assert_eq!(grade.excluded, vec!["c4"]);
        assert_eq!(grade.fraction(), "3/4 points, 75% · 1 of 5 checks not scored");
    }

    #[test]
    fn step9_advisory_never_changes_the_letter() {
        let base = graded(&[(Scored, Pass), (Scored, Fail)]);
        let with = graded(&[(Scored, Pass), (Scored, Fail), (Advisory, Pass), (Advisory, Fail)]);
        assert_eq!(base, with);
    }

    #[test]
    fn gate_default_a_and_provisional_a() {
        let a = graded(&[(Scored, Pass)]);
        let a_star = graded(&[(Scored, Pass), (Critical, Inconclusive)]);
        let b_star =
            graded(&[(Scored, Pass), (Scored, Pass), (Scored, Pass), (Scored, Fail), (Critical, Inconclusive)]);
        assert!(meets_gate(&a, Letter::A));
        assert!(!meets_gate(&a_star, Letter::A));
        assert!(meets_gate(&a_star, Letter::B));
        assert!(meets_gate(&b_star, Letter::B));
        assert!(!meets_gate(&b_star, Letter::A));
    }

    #[test]
    fn decimals_print_without_a_needless_fraction() {
        assert_eq!(serde_json::to_string(&Decimal(4.0)).unwrap(), "4");
        assert_eq!(serde_json::to_string(&Decimal(3.5)).unwrap(), "3.5");
        assert_eq!(Decimal(87.5).to_string(), "87.5");
    }
}
