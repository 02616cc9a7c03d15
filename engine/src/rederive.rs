//! A record's verdicts derived again from its own observations, by this build's judges:
//! what `--replay` and the viewer do, so no stored verdict has to be taken on trust.

use crate::glance::regrade_distrusting;
use crate::judge::{self, Finding};
use crate::model::{Pack, Verdict, Weight};
use crate::record::{CheckResult, Record, ReplayRecord};
use crate::registry::{self, CheckDef};

/// How one check's stored result compares with what the judges derive.
#[derive(Debug, Clone, PartialEq)]
pub enum Agreement {
    /// Verdict, summary and evidence are what the observations give.
    Same,
    /// The judges give another verdict.
    Verdict { stored: Verdict, derived: Verdict },
    /// The verdict holds; its summary or evidence is not what the judges write.
    Wording,
    /// Stored, but the judges decide no such check from these observations.
    NotDerived,
    /// Derived, but absent from the stored checks.
    NotStored,
}

/// One check, re-derived.
#[derive(Debug, Clone)]
pub struct Rederived {
    pub id: String,
    pub agreement: Agreement,
    /// What the judges gave, when they gave anything.
    pub derived: Option<(&'static CheckDef, Finding)>,
}

impl Rederived {
    /// One line for replay's stderr and the viewer: what differs.
    pub fn describe(&self) -> String {
        match &self.agreement {
            Agreement::Same => format!("{}: re-derived", self.id),
            Agreement::Verdict { stored, derived } => {
                format!("{}: stored {}, re-derived {}", self.id, stored.id(), derived.id())
            }
            Agreement::Wording => format!("{}: same verdict, but the stored summary or evidence differs", self.id),
            Agreement::NotDerived => format!("{}: stored, but not judged from these observations", self.id),
            Agreement::NotStored => format!("{}: judged from the observations, but not stored", self.id),
        }
    }
}

/// Every registry check of the record and every check its observations decide, in
/// record order (new ones last). Custom checks are not here: their expectations live
/// in the config, which a record does not carry.
pub fn rederive(record: &Record) -> Result<Vec<Rederived>, String> {
    let observations = record.observations()?;
    let mut derived = judge::all(&observations);
    let mut out = Vec::new();
    for stored in record.checks.iter().filter(|c| c.pack != Pack::Custom.id()) {
        let found = derived.iter().position(|(def, _)| def.id == stored.id).map(|i| derived.remove(i));
        let agreement = match &found {
            None => Agreement::NotDerived,
            Some((_, f)) if f.verdict != stored.verdict => {
                Agreement::Verdict { stored: stored.verdict, derived: f.verdict }
            }
            Some((_, f)) if f.summary != stored.summary || f.evidence != stored.evidence => Agreement::Wording,
            Some(_) => Agreement::Same,
        };
        out.push(Rederived { id: stored.id.clone(), agreement, derived: found });
    }
    out.extend(derived.into_iter().map(|(def, f)| Rederived {
        id: def.id.to_string(),
        agreement: Agreement::NotStored,
        derived: Some((def, f)),
    }));
    Ok(out)
}

/// A saved record judged again by this build, by the one rule `--replay` and the viewer
/// share.
pub struct Replayed {
    /// The record as this build judges it, with `replay` saying what differed.
    pub record: Record,
    /// Per check, how it compares; `Err` when the record has no observations to judge.
    pub rederived: Result<Vec<Rederived>, String>,
}

/// `stored` judged again: its checks re-judged from its observations (when it carries
/// them), then every pack graded from those checks, a standard run's with the registry's
/// weights, never from the stored letters (`glance::regrade_distrusting`).
pub fn replay(stored: &Record) -> Replayed {
    let mut record = stored.clone();
    let rederived = rederive(stored);
    if let Ok(list) = &rederived {
        rejudge(&mut record, list);
    }
    let distrust = regrade_distrusting(stored, &mut record);
    let found = ReplayRecord {
        rejudged: rederived.as_ref().map_or(0, Vec::len),
        not_rejudged: rederived.as_ref().err().cloned(),
        checks: rederived
            .iter()
            .flatten()
            .filter(|r| r.agreement != Agreement::Same)
            .map(|r| crate::text::visible(&r.describe()))
            .collect(),
        distrust,
    };
    // A badge stands for a record that holds; this one was contradicted by its own checks.
    if found.differs() {
        record.badge.eligible = false;
        record.badge.reason = "replayed: the stored results are not what the record's checks give".to_string();
    }
    record.replay = Some(found);
    Replayed { record, rederived }
}

/// The record's checks replaced by what its observations give (each keeps the weight
/// it was stored with; a new one gets its declared weight). The grades are left to
/// `replay`.
fn rejudge(record: &mut Record, rederived: &[Rederived]) {
    let mut checks: Vec<CheckResult> = Vec::new();
    for stored in &record.checks {
        if stored.pack == Pack::Custom.id() {
            checks.push(stored.clone());
            continue;
        }
        if let Some(Rederived { derived: Some((_, f)), .. }) = rederived.iter().find(|r| r.id == stored.id) {
            checks.push(CheckResult {
                verdict: f.verdict,
                summary: f.summary.clone(),
                evidence: f.evidence.clone(),
                ..stored.clone()
            });
        }
    }
    for r in rederived.iter().filter(|r| r.agreement == Agreement::NotStored) {
        let Some((def, f)) = &r.derived else { continue };
        let weight = if def.is_advisory() { Weight::Advisory } else { def.weight };
        checks.push(crate::assemble::check_result(def, weight, f.clone()));
    }
    // Registry order within the record, as a run writes it.
    let rank = |c: &CheckResult| registry::CHECKS.iter().position(|d| d.id == c.id);
    checks.sort_by_key(|c| (c.pack != Pack::Custom.id(), rank(c)));
    record.checks = checks;
}
