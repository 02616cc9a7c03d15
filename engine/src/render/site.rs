//! The site's generated pages: Packs from the pack declarations, Observers from the
//! observer list and the checks each decides, and Grades, whose worked examples are
//! computed by `grading::grade` so they cannot drift from the formula.

use crate::grading::{Input, Outcome, grade};
use crate::model::{Pack, Verdict, VerifiedBy, Weight};
use crate::registry::{CHECKS, pack_doc};
use std::fmt::Write;

/// `site/reference/packs.md`.
pub fn packs_page() -> String {
    let mut o = String::from(
        "# Packs\n\n<!-- Generated from the pack declarations (engine/src/registry/packs.rs); \
         SEALMARK_BLESS=1 cargo test --workspace regenerates it. -->\n\n\
         A pack is a group of checks that share a target the harness owns. Each is graded on its own \
         ([Grades](#/grades)). The standard packs make up the standard profile; a candidate pack joins a \
         run when the configuration declares what it needs, is scored inside its own pack and never \
         appears on a badge ([candidate packs](#/methodology/candidate-checks-and-packs)).\n\n",
    );
    for pack in Pack::ALL {
        let doc = pack_doc(pack);
        let kind = if pack.is_candidate() {
            "candidate pack"
        } else if pack == Pack::Custom {
            "your own checks"
        } else {
            "standard pack"
        };
        let _ = writeln!(o, "## {}\n\n{} ({kind}).\n", pack.id(), doc.title);
        let _ = writeln!(o, "- Runs: {}.", doc.applies);
        let checks: Vec<String> = CHECKS
            .iter()
            .filter(|c| c.pack == pack)
            .map(|c| format!("[{}](#/checks/{}) ({})", c.id, c.id, weight_word(c.weight, c.candidate)))
            .collect();
        match checks.is_empty() {
            true if pack == Pack::Custom => o.push_str(
                "- Its checks are the `probes:` you write with a `check` ([Custom probes](#/custom-probes)).\n",
            ),
            true => o.push_str("- No check is declared yet.\n"),
            false => {
                let _ = writeln!(o, "- Checks: {}.", checks.join(", "));
            }
        }
        o.push('\n');
    }
    o
}

fn weight_word(w: Weight, candidate: bool) -> String {
    let w = w.id();
    if candidate { format!("{w}, candidate") } else { w.to_string() }
}

/// `site/reference/observers.md`.
pub fn observers_page() -> String {
    let mut o = String::from(
        "# Observers\n\n<!-- Generated from the observer list (engine/src/model.rs) and the check \
         registry; SEALMARK_BLESS=1 cargo test --workspace regenerates it. -->\n\n\
         Every piece of evidence says how it was established (`verifiedBy`). The observers below \
         are listed strongest first: a verdict rests on the strongest observation a check's target \
         allows, and the server's own answer is the weakest. Each check page names the observers \
         that can decide it (\"decided by\").\n\n",
    );
    for v in VerifiedBy::ALL {
        let _ = writeln!(o, "## {}\n\n{}\n", v.id(), v.describe());
        let deciding: Vec<String> = CHECKS
            .iter()
            .filter(|c| c.decided_by.contains(&v))
            .map(|c| format!("[{}](#/checks/{})", c.id, c.id))
            .collect();
        if deciding.is_empty() {
            o.push_str("Decides no check on its own.\n\n");
        } else {
            let _ = writeln!(o, "Decides: {}.\n", deciding.join(", "));
        }
    }
    o
}

/// One worked example: what the pack's checks said, and what the formula makes of it.
struct Example {
    title: &'static str,
    checks: &'static [(Weight, Verdict)],
}

const EXAMPLES: &[Example] = &[
    Example {
        title: "Everything passed",
        checks: &[(Weight::Critical, Verdict::Pass), (Weight::Scored, Verdict::Pass), (Weight::Scored, Verdict::Pass)],
    },
    Example {
        title: "One part",
        checks: &[
            (Weight::Critical, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Part),
        ],
    },
    Example {
        title: "One scored fail",
        checks: &[
            (Weight::Critical, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Fail),
        ],
    },
    Example {
        title: "A critical fail: the cap",
        checks: &[
            (Weight::Critical, Verdict::Fail),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
        ],
    },
    Example {
        title: "A critical part: no cap",
        checks: &[
            (Weight::Critical, Verdict::Part),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
        ],
    },
    Example {
        title: "A critical check left inconclusive: provisional",
        checks: &[
            (Weight::Critical, Verdict::Inconclusive),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
        ],
    },
    Example {
        title: "Excluded checks leave the denominator",
        checks: &[
            (Weight::Critical, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
            (Weight::Scored, Verdict::Fail),
            (Weight::Scored, Verdict::Na),
        ],
    },
    Example {
        title: "An advisory check never counts",
        checks: &[
            (Weight::Critical, Verdict::Pass),
            (Weight::Scored, Verdict::Pass),
            (Weight::Advisory, Verdict::Fail),
        ],
    },
    Example {
        title: "Nothing could be scored",
        checks: &[(Weight::Critical, Verdict::Inconclusive), (Weight::Scored, Verdict::Na)],
    },
];

/// `site/reference/grades.md`.
pub fn grades_page() -> String {
    let mut o = String::from(
        "# Grades\n\n<!-- Generated: each example below is graded by the code that grades every run \
         (engine/src/grading.rs); SEALMARK_BLESS=1 cargo test --workspace regenerates it. -->\n\n\
         Each pack gets its own letter from its checks' verdicts, by the nine steps of the \
         [grading formula](#/methodology/grading-formula): a pass is worth 1 point, a part 0.5 and a \
         fail 0; inconclusive and not-applicable checks leave the denominator; advisory checks never \
         count. The percentage is the points over the scored checks, and the bands are A from 90%, \
         B from 75%, C from 60%, D from 45%, F below. A failed critical check caps an A, B or C at \
         D; a critical check left inconclusive marks the letter provisional (`*`), and a provisional \
         A does not meet an A gate. When nothing is scored there is no letter.\n\n\
         The bands are wide on purpose: a pack has a handful of checks, so one part or one fail \
         moves a letter, and a critical flaw is never averaged away.\n\n",
    );
    for (n, ex) in EXAMPLES.iter().enumerate() {
        let ids: Vec<String> = (1..=ex.checks.len()).map(|i| format!("check-{i}")).collect();
        let inputs: Vec<Input> = ex
            .checks
            .iter()
            .zip(&ids)
            .map(|((weight, verdict), id)| Input { id, weight: *weight, verdict: *verdict })
            .collect();
        let _ = writeln!(o, "## {}. {}\n", n + 1, ex.title);
        o.push_str("| check | weight | verdict |\n|---|---|---|\n");
        for input in &inputs {
            let _ = writeln!(o, "| {} | {} | {} |", input.id, input.weight.id(), input.verdict.id());
        }
        o.push('\n');
        match grade("example", &inputs) {
            Outcome::Graded(g) => {
                let _ = writeln!(
                    o,
                    "The report prints `PACK example  GRADE {}  ({})`.\n",
                    g.display_letter(),
                    g.fraction()
                );
                let mut why = vec![format!(
                    "{} point(s) over {} scored check(s) is {}%, band {}",
                    g.points, g.scored, g.pct, g.raw
                )];
                if g.capped {
                    why.push(format!("the critical fail of {} caps it at {}", g.critical_fails.join(", "), g.letter));
                }
                if g.provisional {
                    why.push("a critical check is inconclusive, so the letter is provisional".to_string());
                }
                if !g.excluded.is_empty() {
                    why.push(format!("{} left the denominator", g.excluded.join(", ")));
                }
                let advisory: Vec<&str> =
                    inputs.iter().filter(|i| i.weight == Weight::Advisory).map(|i| i.id).collect();
                if !advisory.is_empty() {
                    why.push(format!("{} is advisory and not counted", advisory.join(", ")));
                }
                let _ = writeln!(o, "Why: {}.\n", why.join("; "));
            }
            Outcome::NotGraded { reason, .. } => {
                let _ = writeln!(o, "The report prints `PACK example  not graded: {reason}`: no letter is made up.\n");
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use crate::registry::CHECKS;

    #[test]
    fn the_generated_pages_are_fresh() {
        crate::render::assert_fresh("site/reference/packs.md", &super::packs_page());
        crate::render::assert_fresh("site/reference/observers.md", &super::observers_page());
        crate::render::assert_fresh("site/reference/grades.md", &super::grades_page());
    }

    #[test]
    fn every_check_is_listed_under_each_observer_that_decides_it() {
        let page = super::observers_page();
        for v in crate::model::VerifiedBy::ALL {
            let heading = format!("## {}\n", v.id());
            let start = page.find(&heading).unwrap_or_else(|| panic!("{} has no section", v.id()));
            let section = page[start + heading.len()..].split("\n## ").next().unwrap_or_default();
            for c in CHECKS.iter().filter(|c| c.decided_by.contains(&v)) {
                assert!(
                    section.contains(&format!("[{}](#/checks/{})", c.id, c.id)),
                    "{} is missing under {}",
                    c.id,
                    v.id()
                );
            }
        }
        assert!(page.contains("## metadata\n"), "verifiedBy: metadata is documented");
    }
}
