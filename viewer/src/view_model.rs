//! What the report views show, computed without a browser so it is unit-tested
//! natively. Every string a server could have written passes through `visible`.

use sealmark_engine::compare::compare;
use sealmark_engine::model::Evidence;
use sealmark_engine::model::Verdict;
use sealmark_engine::record::{CheckResult, Record};
use sealmark_engine::text::visible;

/// One piece of evidence, as the table row shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceRow {
    pub verified_by: &'static str,
    pub probe: String,
    pub outcome: String,
    pub role: String,
    pub tool: String,
    pub args: String,
}

pub fn evidence_row(e: &Evidence) -> EvidenceRow {
    EvidenceRow {
        verified_by: e.verified_by.id(),
        probe: visible(&e.probe),
        outcome: visible(&e.outcome),
        role: e.role.as_deref().map(visible).unwrap_or_default(),
        tool: e.tool.as_deref().map(visible).unwrap_or_default(),
        args: e.args.as_ref().map(|a| visible(&a.to_string())).unwrap_or_default(),
    }
}

/// How a check moved between the baseline and the current record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Regression,
    Improvement,
    New,
    Gone,
    Same,
}

impl Change {
    pub fn word(self) -> &'static str {
        match self {
            Change::Regression => "regression",
            Change::Improvement => "improvement",
            Change::New => "new check",
            Change::Gone => "no longer run",
            Change::Same => "unchanged",
        }
    }
}

/// One row of the side-by-side comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareRow {
    pub id: String,
    pub label: String,
    pub before: Option<Verdict>,
    pub after: Option<Verdict>,
    pub change: Change,
}

/// Every check of either record, changed ones first, by the CLI's `--baseline` rule.
pub fn compare_rows(baseline: &Record, current: &Record) -> Vec<CompareRow> {
    let cmp = compare(baseline, current);
    let find = |r: &Record, id: &str| r.checks.iter().find(|c| c.id == id).map(|c| c.verdict);
    let change = |c: &CheckResult| {
        if cmp.regressions.iter().any(|(id, ..)| *id == c.id) {
            Change::Regression
        } else if cmp.improvements.iter().any(|(id, ..)| *id == c.id) {
            Change::Improvement
        } else if cmp.new_checks.contains(&c.id) {
            Change::New
        } else {
            Change::Same
        }
    };
    let mut rows: Vec<CompareRow> = current
        .checks
        .iter()
        .map(|c| CompareRow {
            id: visible(&c.id),
            label: visible(&c.label),
            before: find(baseline, &c.id),
            after: Some(c.verdict),
            change: change(c),
        })
        .collect();
    rows.extend(baseline.checks.iter().filter(|b| find(current, &b.id).is_none()).map(|b| CompareRow {
        id: visible(&b.id),
        label: visible(&b.label),
        before: Some(b.verdict),
        after: None,
        change: Change::Gone,
    }));
    rows.sort_by_key(|r| r.change as u8);
    rows
}

/// A verdict as a short word for a table cell.
pub fn verdict_word(v: Option<Verdict>) -> &'static str {
    v.map_or("—", |v| v.tag().trim_matches(|c| c == '[' || c == ']').trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sealmark_engine::sample::capped;

    #[test]
    fn evidence_is_shown_as_text_with_invisible_characters_named() {
        let mut e =
            Evidence::new("call <b>x</b>", "said \u{202e}gnp.exe", sealmark_engine::model::VerifiedBy::Response);
        e.args = Some(serde_json::json!({ "path": "a\u{200b}b" }));
        let row = evidence_row(&e);
        assert_eq!(row.probe, "call <b>x</b>", "markup stays as characters; the view makes it a text node");
        assert_eq!(row.outcome, "said \\u{202e}gnp.exe");
        assert_eq!(row.args, "{\"path\":\"a\\u{200b}b\"}");
        assert_eq!(row.verified_by, "response");
    }

    #[test]
    fn the_comparison_puts_regressions_first_and_keeps_checks_that_went() {
        let base = capped();
        let mut cur = capped();
        let first = cur.checks.iter().position(|c| c.verdict == Verdict::Pass).unwrap();
        let regressed = cur.checks[first].id.clone();
        cur.checks[first].verdict = Verdict::Fail;
        let gone = cur.checks.pop().unwrap().id;
        let rows = compare_rows(&base, &cur);
        assert_eq!(rows[0].id, regressed);
        assert_eq!(
            (rows[0].before, rows[0].after, rows[0].change),
            (Some(Verdict::Pass), Some(Verdict::Fail), Change::Regression)
        );
        let last = rows.iter().find(|r| r.id == gone).unwrap();
        assert_eq!((last.after, last.change), (None, Change::Gone));
        assert_eq!(rows.iter().filter(|r| r.change == Change::Same).count(), base.checks.len() - 2);
        assert_eq!(verdict_word(None), "—");
        assert_eq!(verdict_word(Some(Verdict::Inconclusive)), "INCL");
    }
}
