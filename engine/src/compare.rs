//! A record against a baseline: regressions, new checks, a different configuration and
//! tool-surface drift. Pure, so the CLI (`--baseline`) and the viewer apply one rule.

use crate::model::Verdict;
use crate::record::{PackStatus, Record};
use std::fmt::Write;

/// What changed between a baseline record and the current one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Comparison {
    /// Checks whose verdict got worse: (id, baseline verdict, current verdict).
    pub regressions: Vec<(String, Verdict, Verdict)>,
    /// Checks whose verdict got better.
    pub improvements: Vec<(String, Verdict, Verdict)>,
    /// Checks the baseline did not have: never a regression.
    pub new_checks: Vec<String>,
    /// `config.hash` differs, or the methodology: the runs did not use the same locked
    /// configuration.
    pub different_config: bool,
    /// The baseline's methodology, when it is not the current record's.
    pub other_methodology: Option<String>,
    /// Tools whose description or input schema changed, or that came or went.
    pub drift: Vec<String>,
    /// The baseline's server (`name version`), when it is not the current record's name:
    /// the two records are of different servers.
    pub other_server: Option<String>,
    /// Packs whose grade changed: (pack, baseline's, current's), `–` for not graded.
    pub grades: Vec<(String, String, String)>,
}

/// How good a verdict is; `None` for n/a, which is never compared.
fn goodness(v: Verdict) -> Option<u8> {
    match v {
        Verdict::Pass => Some(3),
        Verdict::Inconclusive => Some(2),
        Verdict::Part => Some(1),
        Verdict::Fail => Some(0),
        Verdict::Na => None,
    }
}

pub fn compare(baseline: &Record, current: &Record) -> Comparison {
    let methodology = &baseline.sealmark.methodology;
    let other_methodology = (methodology != &current.sealmark.methodology).then(|| methodology.clone());
    let mut out = Comparison {
        different_config: baseline.config.hash != current.config.hash || other_methodology.is_some(),
        other_methodology,
        ..Default::default()
    };
    for c in &current.checks {
        let Some(old) = baseline.checks.iter().find(|b| b.id == c.id) else {
            out.new_checks.push(c.id.clone());
            continue;
        };
        if let (Some(before), Some(now)) = (goodness(old.verdict), goodness(c.verdict)) {
            if now < before {
                out.regressions.push((c.id.clone(), old.verdict, c.verdict));
            } else if now > before {
                out.improvements.push((c.id.clone(), old.verdict, c.verdict));
            }
        }
    }
    if baseline.server.name != current.server.name {
        out.other_server = Some(format!("{} {}", baseline.server.name, baseline.server.version));
    }
    let letter = |r: &Record, pack: &str| {
        r.packs
            .get(pack)
            .and_then(|p| p.grade.as_ref().filter(|_| p.status == PackStatus::Graded))
            .map_or("–".to_string(), |g| g.display_letter())
    };
    for pack in crate::model::Pack::ALL.map(|p| p.id()) {
        if !baseline.packs.contains_key(pack) && !current.packs.contains_key(pack) {
            continue;
        }
        let (before, now) = (letter(baseline, pack), letter(current, pack));
        if before != now {
            out.grades.push((pack.to_string(), before, now));
        }
    }
    let (old_tools, new_tools) = (&baseline.server.surface, &current.server.surface);
    for t in new_tools {
        match old_tools.iter().find(|o| o.name == t.name) {
            None => out.drift.push(format!("{}: a new tool", t.name)),
            Some(o) => {
                if o.description_hash != t.description_hash {
                    out.drift.push(format!("{}: its description changed", t.name));
                }
                if o.input_schema_hash != t.input_schema_hash {
                    out.drift.push(format!("{}: its input schema changed", t.name));
                }
                if o.annotations != t.annotations {
                    out.drift.push(format!("{}: its annotations changed", t.name));
                }
            }
        }
    }
    for o in old_tools.iter().filter(|o| !new_tools.iter().any(|t| t.name == o.name)) {
        out.drift.push(format!("{}: no longer listed", o.name));
    }
    out
}

impl Comparison {
    /// The comparison as the text the CLI prints.
    pub fn render(&self) -> String {
        let mut o = String::from("Compared with the baseline:\n");
        if let Some(other) = &self.other_server {
            let _ = writeln!(
                o,
                "  warning: the baseline is a record of another server ({other}); the two are not the same server's runs"
            );
        }
        for (pack, before, now) in &self.grades {
            let _ = writeln!(o, "  grade: {pack} {before} → {now}");
        }
        match (&self.other_methodology, self.different_config) {
            (Some(m), _) => {
                let _ = writeln!(
                    o,
                    "  note: the baseline ran with a different configuration (methodology {m}), so verdicts may differ for that reason"
                );
            }
            (None, true) => o.push_str("  note: the baseline ran with a different configuration (config.hash differs), so verdicts may differ for that reason\n"),
            (None, false) => {}
        }
        if self.regressions.is_empty() {
            o.push_str("  regressions: none\n");
        }
        for (id, before, now) in &self.regressions {
            let _ = writeln!(o, "  regression: {id} {} → {}", before.id(), now.id());
        }
        for (id, before, now) in &self.improvements {
            let _ = writeln!(o, "  better: {id} {} → {}", before.id(), now.id());
        }
        if !self.new_checks.is_empty() {
            let _ = writeln!(o, "  new checks (never a regression): {}", self.new_checks.join(", "));
        }
        for d in &self.drift {
            let _ = writeln!(o, "  tool-surface drift: {d}");
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::{capped, provisional};

    #[test]
    fn grade_changes_come_first_and_another_server_is_named() {
        let base = capped();
        let mut now = capped();
        now.server.name = "Other".into();
        let core = now.packs.get_mut("core").unwrap().grade.as_mut().unwrap();
        core.letter = crate::grading::Letter::A;
        let cmp = compare(&base, &now);
        assert_eq!(cmp.other_server.as_deref(), Some(&*format!("{} {}", base.server.name, base.server.version)));
        assert_eq!(cmp.grades, vec![("core".to_string(), "D".to_string(), "A".to_string())]);
        let text = cmp.render();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("  warning: the baseline is a record of another server"), "{text}");
        assert_eq!(lines[2], "  grade: core D → A", "{text}");
        assert!(compare(&base, &capped()).grades.is_empty());
    }

    #[test]
    fn worse_verdicts_are_regressions_and_new_checks_never_are() {
        let base = capped();
        let mut now = capped();
        let i = now.checks.iter().position(|c| c.id == "handshake").unwrap();
        now.checks[i].verdict = Verdict::Fail;
        now.checks.retain(|c| c.id != "fs-read-escape");
        let mut base_without = base.clone();
        base_without.checks.retain(|c| c.id != "secret-echo");
        let c = compare(&base_without, &now);
        assert_eq!(c.regressions, vec![("handshake".to_string(), Verdict::Pass, Verdict::Fail)]);
        assert_eq!(c.new_checks, vec!["secret-echo".to_string()]);
        assert!(!c.different_config);
        let mut other = provisional();
        other.config.hash = "sha256:another".into();
        assert!(compare(&base, &other).render().contains("a different configuration"));
        let mut older = capped();
        older.sealmark.methodology = "0.2".to_string();
        let note = compare(&older, &capped()).render();
        assert!(note.contains("a different configuration (methodology 0.2)"), "{note}");
    }

    #[test]
    fn a_changed_description_is_drift() {
        let base = capped();
        let mut now = capped();
        now.server.surface[0].description_hash = "sha256:changed".into();
        now.server.surface.pop();
        let c = compare(&base, &now);
        assert!(c.drift.iter().any(|d| d.ends_with("its description changed")), "{:?}", c.drift);
        assert!(c.drift.iter().any(|d| d.ends_with("no longer listed")), "{:?}", c.drift);
        assert!(c.render().contains("tool-surface drift:"));
    }
}
