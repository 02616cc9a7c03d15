//! A record at a glance, as the viewer's summary band draws it: per pack the counts
//! behind the letter and the notices that qualify it, what to fix first, and whether
//! the stored grades are the ones the checks give. Pure, so it is tested natively.

use crate::assemble::regrade;
use crate::grading::Grade;
use crate::model::{Pack, Verdict, Weight};
use crate::record::{CheckResult, PackStatus, Record};
use crate::registry;

/// Something that qualifies a pack's letter, with the methodology section explaining it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// A critical check failed and the raw letter was above D.
    Capped,
    /// A critical check was inconclusive: the letter may fall (`A*`).
    Provisional,
    /// A candidate pack: shown, never part of a standard grade.
    Candidate,
    /// The custom pack, graded from the config's own probes.
    Custom,
}

impl Notice {
    pub fn label(self) -> &'static str {
        match self {
            Notice::Capped => "capped at D",
            Notice::Provisional => "provisional",
            Notice::Candidate => "candidate",
            Notice::Custom => "custom",
        }
    }

    /// The page and section that explain it, as the viewer's routes name them.
    pub fn explained_at(self) -> (&'static str, &'static str) {
        match self {
            Notice::Capped => ("methodology", Rule::CriticalCap.anchor()),
            Notice::Provisional => ("methodology", Rule::Provisional.anchor()),
            Notice::Candidate => ("methodology", "candidate-checks-and-packs"),
            Notice::Custom => ("custom-probes", ""),
        }
    }
}

/// The rules of the grading formula, by the names the methodology gives them; each is an
/// anchor on the methodology page (a list item led by its name in bold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    Counted,
    Scored,
    NoLetter,
    Percentage,
    Bands,
    CriticalCap,
    Provisional,
    Excluded,
    Advisory,
}

impl Rule {
    pub const ALL: [Rule; 9] = [
        Rule::Counted,
        Rule::Scored,
        Rule::NoLetter,
        Rule::Percentage,
        Rule::Bands,
        Rule::CriticalCap,
        Rule::Provisional,
        Rule::Excluded,
        Rule::Advisory,
    ];

    /// The name the methodology's list leads the rule with.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Counted => "Counted",
            Rule::Scored => "Scored",
            Rule::NoLetter => "No letter",
            Rule::Percentage => "Percentage",
            Rule::Bands => "Bands",
            Rule::CriticalCap => "Critical cap",
            Rule::Provisional => "Provisional",
            Rule::Excluded => "Excluded",
            Rule::Advisory => "Advisory",
        }
    }

    /// Its anchor on the methodology page: the name as the page's slugs spell it.
    pub fn anchor(self) -> &'static str {
        match self {
            Rule::Counted => "counted",
            Rule::Scored => "scored",
            Rule::NoLetter => "no-letter",
            Rule::Percentage => "percentage",
            Rule::Bands => "bands",
            Rule::CriticalCap => "critical-cap",
            Rule::Provisional => "provisional",
            Rule::Excluded => "excluded",
            Rule::Advisory => "advisory",
        }
    }

    /// Its number in the methodology's list.
    pub fn number(self) -> u8 {
        self as u8 + 1
    }
}

/// One pack at a glance: its result and the counts its bar is drawn from.
#[derive(Debug, Clone, PartialEq)]
pub struct PackGlance {
    pub pack: Pack,
    pub status: PackStatus,
    pub grade: Option<Grade>,
    pub reason: Option<String>,
    pub pass: u32,
    pub part: u32,
    /// Failed checks that are not critical.
    pub fail: u32,
    pub critical_fail: u32,
    /// Counted checks left out of the denominator (inconclusive or na).
    pub excluded: u32,
    /// Shown, never counted; not part of the bar.
    pub advisory: u32,
    pub notices: Vec<Notice>,
}

impl PackGlance {
    /// The checks the bar spans: every counted one.
    pub fn counted(&self) -> u32 {
        self.pass + self.part + self.fail + self.critical_fail + self.excluded
    }

    pub fn graded(&self) -> bool {
        self.status == PackStatus::Graded && self.grade.is_some()
    }
}

/// Every pack of the record, in the reports' order.
pub fn packs(record: &Record) -> Vec<PackGlance> {
    Pack::ALL
        .into_iter()
        .filter_map(|pack| {
            let res = record.packs.get(pack.id())?;
            let mut g = PackGlance {
                pack,
                status: res.status,
                grade: res.grade.clone(),
                reason: res.reason.clone(),
                pass: 0,
                part: 0,
                fail: 0,
                critical_fail: 0,
                excluded: 0,
                advisory: 0,
                notices: Vec::new(),
            };
            for c in record.checks.iter().filter(|c| c.pack == pack.id()) {
                let slot = match (c.advisory, c.verdict) {
                    (true, _) => &mut g.advisory,
                    (_, Verdict::Pass) => &mut g.pass,
                    (_, Verdict::Part) => &mut g.part,
                    (_, Verdict::Fail) if c.critical => &mut g.critical_fail,
                    (_, Verdict::Fail) => &mut g.fail,
                    (_, Verdict::Inconclusive | Verdict::Na) => &mut g.excluded,
                };
                *slot += 1;
            }
            if let Some(grade) = g.grade.as_ref().filter(|_| res.status == PackStatus::Graded) {
                if grade.capped {
                    g.notices.push(Notice::Capped);
                }
                if grade.provisional {
                    g.notices.push(Notice::Provisional);
                }
            }
            match pack {
                Pack::Custom => g.notices.push(Notice::Custom),
                p if p.is_candidate() => g.notices.push(Notice::Candidate),
                _ => {}
            }
            Some(g)
        })
        .collect()
}

/// The counted checks that failed or partly passed, worst first across packs, each
/// with what to do about it.
pub fn to_fix(record: &Record) -> Vec<(&CheckResult, &'static str)> {
    let mut rows: Vec<&CheckResult> =
        record.checks.iter().filter(|c| !c.advisory && matches!(c.verdict, Verdict::Fail | Verdict::Part)).collect();
    rows.sort_by_key(|c| c.verdict.severity_rank());
    rows.into_iter()
        .map(|c| (c, registry::check(&c.id).map_or("a custom check: see the probe's expect clauses", |d| d.fix)))
        .collect()
}

use crate::record::{Distrust, GradeMismatch, WeightMismatch};

/// Grades `mine` (a copy of `stored`, perhaps re-judged) from its own checks, never its
/// stored letters: in a standard run each registry check counts with the registry's
/// weight (a standard run overrides none), whatever the record says. Returns what
/// `stored` claimed that this contradicts.
pub fn regrade_distrusting(stored: &Record, mine: &mut Record) -> Distrust {
    let mut distrust = Distrust::default();
    if mine.config.standard {
        for c in mine.checks.iter_mut() {
            let Some(def) = registry::check(&c.id).filter(|d| d.pack.id() == c.pack) else { continue };
            let registry = if def.is_advisory() { Weight::Advisory } else { def.weight };
            let stored = weight_of(c);
            if stored != registry {
                distrust.weights.push(WeightMismatch { id: c.id.clone(), stored, registry });
                c.critical = registry == Weight::Critical;
                c.advisory = registry == Weight::Advisory;
            }
        }
    }
    regrade(mine);
    // A pack without checks has nothing to grade: a letter stored for one is made up.
    for (pack, res) in mine.packs.iter_mut() {
        if res.status == PackStatus::Graded && !mine.checks.iter().any(|c| c.pack == *pack) {
            res.status = PackStatus::Inconclusive;
            res.grade = None;
            res.reason = Some("the record holds no check of this pack".to_string());
        }
    }
    let said = |r: &Record, pack: &str| match r.packs.get(pack) {
        Some(p) if p.status == PackStatus::Graded => {
            p.grade.as_ref().map_or("not graded".to_string(), |g| format!("{} ({})", g.display_letter(), g.fraction()))
        }
        Some(_) => "not graded".to_string(),
        None => "absent".to_string(),
    };
    let ids: std::collections::BTreeSet<&String> = stored.packs.keys().chain(mine.packs.keys()).collect();
    for pack in ids {
        let (before, after) = (said(stored, pack), said(mine, pack));
        if before != after {
            distrust.grades.push(GradeMismatch { pack: pack.clone(), stored: before, recomputed: after });
        }
    }
    distrust
}

fn weight_of(c: &CheckResult) -> Weight {
    if c.advisory {
        Weight::Advisory
    } else if c.critical {
        Weight::Critical
    } else {
        Weight::Scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grading::Letter;
    use crate::sample::capped;

    #[test]
    fn a_pack_counts_its_checks_as_the_formula_does_and_names_its_notices() {
        let rec = capped();
        let all = packs(&rec);
        let core = all.iter().find(|g| g.pack == Pack::Core).unwrap();
        let grade = core.grade.as_ref().unwrap();
        // The bar's pass and part are the points; its width the counted checks.
        assert_eq!(f64::from(core.pass) + 0.5 * f64::from(core.part), grade.points.0);
        assert_eq!(core.counted(), grade.total);
        assert_eq!(core.counted() - core.excluded, grade.scored);
        assert_eq!(core.critical_fail as usize, grade.critical_fails.len());
        assert!(core.notices.contains(&Notice::Capped), "{:?}", core.notices);
        let net = all.iter().find(|g| g.pack == Pack::Net).unwrap();
        assert!(net.notices.contains(&Notice::Provisional), "{:?}", net.notices);
    }

    #[test]
    fn what_to_fix_lists_counted_failures_before_parts_with_their_fix() {
        let rec = capped();
        let fix = to_fix(&rec);
        assert!(!fix.is_empty());
        assert!(fix.iter().all(|(c, _)| !c.advisory && matches!(c.verdict, Verdict::Fail | Verdict::Part)));
        let first_part = fix.iter().position(|(c, _)| c.verdict == Verdict::Part).unwrap_or(fix.len());
        assert!(fix[first_part..].iter().all(|(c, _)| c.verdict == Verdict::Part));
        assert!(fix.iter().all(|(c, f)| registry::check(&c.id).is_none_or(|d| d.fix == *f)));
    }

    #[test]
    fn a_stored_grade_its_checks_do_not_give_is_recomputed_and_named() {
        let stored = {
            let mut r = capped();
            let core = r.packs.get_mut("core").unwrap();
            let g = core.grade.as_mut().unwrap();
            (g.letter, g.capped) = (Letter::A, false);
            r
        };
        let mut mine = stored.clone();
        let distrust = regrade_distrusting(&stored, &mut mine);
        let core = distrust.grade("core").expect("core's stored A is named");
        assert!(core.stored.starts_with("A "), "{core:?}");
        assert!(core.recomputed.starts_with("D "), "{core:?}");
        assert_eq!(mine.packs["core"].grade.as_ref().unwrap().letter, Letter::D);
        assert_eq!(distrust.grades.len(), 1, "{distrust:?}");
    }

    #[test]
    fn a_standard_run_cannot_make_a_critical_failure_advisory() {
        let mut stored = capped();
        let at = stored.checks.iter().position(|c| c.critical && c.verdict == Verdict::Fail).unwrap();
        (stored.checks[at].critical, stored.checks[at].advisory) = (false, true);
        crate::assemble::regrade(&mut stored);
        let id = stored.checks[at].id.clone();
        let mut mine = stored.clone();
        let distrust = regrade_distrusting(&stored, &mut mine);
        assert_eq!(distrust.weights, vec![WeightMismatch { id, stored: Weight::Advisory, registry: Weight::Critical }]);
        assert!(mine.packs[&stored.checks[at].pack].grade.as_ref().unwrap().capped);
        assert!(!distrust.grades.is_empty());
    }

    #[test]
    fn every_rule_is_numbered_as_the_methodology_lists_it() {
        let numbers: Vec<u8> = Rule::ALL.iter().map(|r| r.number()).collect();
        assert_eq!(numbers, (1..=9).collect::<Vec<u8>>());
        let page = include_str!("../../site/methodology.md");
        for rule in Rule::ALL {
            let lead = format!("{}. **{}**", rule.number(), rule.name());
            assert!(page.contains(&lead), "site/methodology.md lacks {lead:?}");
        }
    }
}
