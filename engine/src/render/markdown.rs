//! The markdown report (for pull-request comments) and the summary (the short CI view).
//! Both print the same pack fractions as the text report; server-supplied text is
//! escaped so it cannot become markup, links or tables.

use super::CLOSING_LINE;
use crate::explain::{pack_kind, worst_first};
use crate::model::{Pack, Verdict};
use crate::record::{CheckResult, PackResult, PackStatus, Record};
use std::fmt::Write;

/// Text safe inside a markdown table cell: no markup, no links, no line breaks.
pub fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in crate::text::visible(s).chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

fn profile(r: &Record) -> &'static str {
    if r.config.standard { "STANDARD" } else { "CUSTOM" }
}

/// The packs of a record in report order, with their results.
fn packs(r: &Record) -> impl Iterator<Item = (Pack, &PackResult)> {
    Pack::ALL.into_iter().filter_map(|p| r.packs.get(p.id()).map(|res| (p, res)))
}

fn grade_cell(res: &PackResult) -> (String, String) {
    match (&res.grade, res.status) {
        (Some(g), PackStatus::Graded) => (g.display_letter(), g.fraction()),
        (_, PackStatus::Inconclusive) => {
            ("not graded".to_string(), format!("{} (inconclusive)", res.reason.as_deref().unwrap_or("")))
        }
        _ => ("not graded".to_string(), res.reason.clone().unwrap_or_default()),
    }
}

fn kind(p: Pack) -> String {
    pack_kind(p).map(|k| format!(" ({k})")).unwrap_or_default()
}

fn sorted(r: &Record, pack: Pack) -> Vec<&CheckResult> {
    worst_first(r, pack.id())
}

fn tag(v: Verdict) -> &'static str {
    v.tag().trim_start_matches('[').trim_end_matches(']').trim()
}

/// The markdown report.
pub fn render(r: &Record) -> String {
    let mut o = body(r);
    let _ = writeln!(o, "{CLOSING_LINE}");
    super::printable(o)
}

/// The markdown report without its closing line, unescaped.
pub(crate) fn body(r: &Record) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "## sealmark {} · methodology {} · {} · {} {}\n",
        r.sealmark.version,
        r.sealmark.methodology,
        profile(r),
        md(&r.server.name),
        md(&r.server.version)
    );
    let custom = super::custom_lines(r);
    if !custom.is_empty() {
        for line in &custom {
            let _ = writeln!(o, "- {}", md(line));
        }
        o.push('\n');
    }
    if let Some((head, rest)) = super::replay_lines(r).split_first() {
        let _ = writeln!(o, "> **{}; shown as this build judges it:**", md(head));
        for line in rest {
            let _ = writeln!(o, "> - {}", md(line));
        }
        o.push('\n');
    }
    o.push_str("| pack | grade | points |\n|---|---|---|\n");
    for (p, res) in packs(r) {
        let (grade, detail) = grade_cell(res);
        let _ = writeln!(o, "| {}{} | {grade} | {} |", p.id(), kind(p), md(&detail));
    }
    o.push('\n');
    for (p, res) in packs(r) {
        let checks = sorted(r, p);
        if checks.is_empty() {
            continue;
        }
        let (grade, detail) = grade_cell(res);
        let _ = writeln!(o, "### {}{} — {grade} ({})\n", p.id(), kind(p), md(&detail));
        if let Some(g) = res.grade.as_ref().filter(|g| g.capped) {
            let _ =
                writeln!(o, "Capped at D: a critical check failed; without the cap the grade would be {}.\n", g.raw);
        }
        o.push_str("| verdict | check | what was observed | scope |\n|---|---|---|---|\n");
        for c in checks {
            let advisory = if c.advisory { " (advisory, not scored)" } else { "" };
            let _ = writeln!(
                o,
                "| {} | {}{advisory} | {} | {} |",
                tag(c.verdict),
                md(&c.label),
                md(&c.summary),
                md(&c.scope)
            );
        }
        o.push('\n');
    }
    let badge = if r.badge.eligible { "eligible" } else { "not eligible" };
    let _ = writeln!(o, "Badge: {badge} ({}).\n", r.badge.reason);
    let unasked = r.unasked.lines();
    if !unasked.is_empty() {
        o.push_str("Sent unasked (advisory, not scored):\n\n");
        for line in unasked {
            let _ = writeln!(o, "- {}", md(&line));
        }
        o.push('\n');
    }
    if !r.not_covered.is_empty() {
        o.push_str("<details><summary>Not covered</summary>\n\n");
        for line in &r.not_covered {
            let _ = writeln!(o, "- {}", md(line));
        }
        o.push_str("\n</details>\n\n");
    }
    o
}

/// What the exit code means, as `sealmark run --help` says it.
pub const EXIT_CODES: &str = "0 every graded pack met the gate (--fail-under, default A; A* does not meet A); 1 a graded pack is below it (with --profile ci also a pack that ran but could not be graded, with --baseline also a regression, with --replay --strict also a stored result the record's checks do not give); 2 bad usage, config, record or environment; 130, 143, 129 interrupted by SIGINT, SIGTERM, SIGHUP (the server, database and sandbox are cleaned up first).";

/// The summary: a grade card per pack, one row per check with failures first, what to
/// fix, and what the exit code means.
pub fn summary(r: &Record) -> String {
    let mut o = summary_body(r);
    let _ = writeln!(o, "\nExit code: {EXIT_CODES}");
    super::printable(o)
}

/// The summary without the exit code's meaning, unescaped.
pub(crate) fn summary_body(r: &Record) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "sealmark {} · methodology {} · {} · {} {}\n",
        r.sealmark.version,
        r.sealmark.methodology,
        profile(r),
        r.server.name,
        r.server.version
    );
    let custom = super::custom_lines(r);
    if !custom.is_empty() {
        for line in &custom {
            let _ = writeln!(o, "  {line}");
        }
        o.push('\n');
    }
    if let Some((head, rest)) = super::replay_lines(r).split_first() {
        let _ = writeln!(o, "{head}; shown as this build judges it:");
        for line in rest {
            let _ = writeln!(o, "  - {line}");
        }
        o.push('\n');
    }
    o.push_str("Grades\n");
    for (p, res) in packs(r) {
        let (grade, detail) = grade_cell(res);
        let _ = writeln!(o, "  {:10} {:11} {detail}{}", p.id(), grade, kind(p));
    }
    let mut rows: Vec<&CheckResult> = r.checks.iter().filter(|c| c.verdict != Verdict::Na).collect();
    rows.sort_by_key(|c| (c.advisory, c.verdict.severity_rank()));
    o.push_str("\nChecks, failures first\n");
    for c in &rows {
        let advisory = if c.advisory { " (advisory)" } else { "" };
        let _ = writeln!(o, "  {} {:10} {} — {}{advisory}", c.verdict.tag(), c.pack, c.label, c.summary);
        let _ = writeln!(o, "  {:6} {:10} scope: {}", "", "", c.scope);
    }
    let to_fix = crate::glance::to_fix(r);
    if !to_fix.is_empty() {
        o.push_str("\nWhat to fix\n");
        for (c, fix) in to_fix {
            let _ = writeln!(o, "  {}: {fix}", c.id);
        }
    }
    o
}
