//! The text report, laid out as the Output page describes.

use super::CLOSING_LINE;
use crate::explain::{pack_kind, pack_verdict, worst_first};
use crate::model::{Pack, Verdict};
use crate::record::{PackResult, PackStatus, Record};
use std::fmt::Write;

/// At most this many "Not covered" lines are printed, then a count.
const NOT_COVERED_LINES: usize = 12;

/// At `-v`, this many evidence lines are printed under a check that did not pass.
const EVIDENCE_LINES: usize = 5;

pub fn render(r: &Record) -> String {
    render_with(r, 0)
}

/// The text report at a verbosity: 0 prints no evidence, 1 the first lines of each check
/// that did not pass, 2 every line of every check. The verdicts are the same at each.
pub fn render_with(r: &Record, verbosity: u8) -> String {
    let mut out = section(r, verbosity);
    out.push_str(CLOSING_LINE);
    out.push('\n');
    super::printable(out)
}

/// The report without its closing line, unescaped: a section of a run of several.
pub(crate) fn section(r: &Record, verbosity: u8) -> String {
    let mut out = String::new();
    let o = &mut out;
    let profile = if r.config.standard { "STANDARD" } else { "CUSTOM" };
    let _ = writeln!(
        o,
        "sealmark {} · methodology {} · {profile} · {} {}",
        r.sealmark.version, r.sealmark.methodology, r.server.name, r.server.version
    );
    for line in super::custom_lines(r) {
        let _ = writeln!(o, "  {line}");
    }
    if let Some((head, rest)) = super::replay_lines(r).split_first() {
        let _ = writeln!(o, "  {head}; shown as this build judges it:");
        for line in rest {
            let _ = writeln!(o, "    - {line}");
        }
    }
    o.push('\n');
    header(o, r);
    classification(o, r);
    for pack in Pack::ALL {
        if let Some(result) = r.packs.get(pack.id()) {
            pack_block(o, r, pack, result, verbosity);
        }
    }
    let badge = if r.badge.eligible { "eligible" } else { "not eligible" };
    let _ = writeln!(o, "Badge: {badge} ({}).", r.badge.reason);
    o.push('\n');
    let warnings: Vec<String> = r
        .probes
        .iter()
        .flat_map(|p| &p.calls)
        .flat_map(|p| p.warnings.iter().map(move |w| format!("{} ({}): {w}", p.name, p.tool)))
        .collect();
    if !warnings.is_empty() {
        o.push_str("Warnings (valid calls whose expect did not hold; not a verdict):\n");
        for w in warnings {
            let _ = writeln!(o, "  - {w}");
        }
        o.push('\n');
    }
    let unasked = r.unasked.lines();
    if !unasked.is_empty() {
        o.push_str("Sent unasked (advisory, not scored):\n");
        for line in unasked {
            let _ = writeln!(o, "  - {line}");
        }
        o.push('\n');
    }
    if !r.not_covered.is_empty() {
        o.push_str("Not covered:\n");
        for line in r.not_covered.iter().take(NOT_COVERED_LINES) {
            let _ = writeln!(o, "  - {line}");
        }
        if r.not_covered.len() > NOT_COVERED_LINES {
            let _ = writeln!(o, "  … and {} more (see the JSON record)", r.not_covered.len() - NOT_COVERED_LINES);
        }
        o.push('\n');
    }
    out
}

fn header(o: &mut String, r: &Record) {
    let s = &r.server;
    if s.transport == "http" {
        let _ = writeln!(o, "server: {}", s.url.as_deref().unwrap_or(""));
        if !s.command.is_empty() {
            let _ = writeln!(o, "started with: {}", s.command);
        }
    } else {
        let _ = writeln!(o, "server: {}", s.command);
    }
    if s.env.is_empty() {
        o.push_str("env: (none)\n");
    } else {
        o.push_str("env:\n");
        for (k, v) in &s.env {
            let _ = writeln!(o, "  {k}={v}");
        }
    }
    let _ = writeln!(
        o,
        "{} server, {} tool(s): {}",
        s.transport,
        s.tools.len(),
        if s.tools.is_empty() { "(none)".to_string() } else { s.tools.join(", ") }
    );
    let _ = writeln!(o, "db: {}", r.db.summary);
    let sb = &r.sandbox;
    let mut parts = vec![sb.dir.clone(), format!("env {}", sb.env_mode)];
    if sb.listener_port.is_some() {
        parts.push("listener 127.0.0.1:{listener_port}".to_string());
    }
    parts.push(if sb.kept {
        "kept".to_string()
    } else if sb.cleaned_up {
        "cleaned up".to_string()
    } else {
        "NOT cleaned up".to_string()
    });
    if !sb.inherited.is_empty() {
        parts.push(format!("inherited: {}", sb.inherited.join(", ")));
    }
    let _ = writeln!(o, "sandbox: {}", parts.join(" · "));
    if !sb.leftover_processes.is_empty() {
        let _ = writeln!(o, "left behind after stop: {}", sb.leftover_processes.join(", "));
    }
    o.push('\n');
}

fn classification(o: &mut String, r: &Record) {
    o.push_str("Classification:\n");
    let rows: Vec<[String; 5]> = r
        .classification
        .iter()
        .map(|c| {
            let tags = if c.annotations.is_empty() { String::new() } else { format!("[{}]", c.annotations.join(", ")) };
            [c.tool.clone(), c.class.to_string(), c.confidence.clone(), tags, c.reason.clone()]
        })
        .collect();
    let width = |i: usize| rows.iter().map(|row| row[i].chars().count()).max().unwrap_or(0);
    let widths = [width(0), width(1), width(2), width(3)];
    for row in &rows {
        let mut line = String::from("  ");
        for (i, w) in widths.iter().enumerate() {
            line.push_str(&pad(&row[i], *w));
            line.push_str("  ");
        }
        line.push_str("← ");
        line.push_str(&row[4]);
        let _ = writeln!(o, "{}", line.trim_end());
    }
    let applied: Vec<&str> = Pack::ALL
        .iter()
        .filter(|p| {
            r.packs
                .get(p.id())
                .is_some_and(|res| res.status != PackStatus::Na || r.checks.iter().any(|c| c.pack == p.id()))
        })
        .map(|p| p.id())
        .collect();
    let _ =
        writeln!(o, "  packs applied: {}", if applied.is_empty() { "none".to_string() } else { applied.join(", ") });
    for note in &r.options.pack_notes {
        let _ = writeln!(o, "  {note}");
    }
    o.push('\n');
}

fn pad(s: &str, w: usize) -> String {
    let n = s.chars().count();
    format!("{s}{}", " ".repeat(w.saturating_sub(n)))
}

fn pack_block(o: &mut String, r: &Record, pack: Pack, result: &PackResult, verbosity: u8) {
    let kind = pack_kind(pack).map(|k| format!("  {k}")).unwrap_or_default();
    let _ = writeln!(o, "PACK {}  {}{kind}", pack.id(), pack_verdict(result));
    let grade = result.grade.as_ref().filter(|_| result.status == PackStatus::Graded);
    if let Some(g) = grade.filter(|g| g.capped) {
        let _ = writeln!(o, "  Capped at D: a critical check failed; without the cap the grade would be {}", g.raw);
    }
    let checks = worst_first(r, pack.id());
    for c in &checks {
        let advisory = if c.advisory { " (advisory, not scored)" } else { "" };
        let _ = writeln!(o, "  {} {} — {}{advisory}", c.verdict.tag(), c.label, c.summary);
        let _ = writeln!(o, "        scope: {}", c.scope);
        let shown = match verbosity {
            0 => 0,
            1 if c.verdict == Verdict::Pass || c.verdict == Verdict::Na => 0,
            1 => EVIDENCE_LINES,
            _ => usize::MAX,
        };
        for e in c.evidence.iter().take(shown) {
            let _ = writeln!(
                o,
                "        evidence: [{}] {} → {}",
                e.verified_by.id(),
                crate::text::visible(&e.probe),
                crate::text::visible(&e.outcome)
            );
        }
        if c.evidence.len() > shown && shown > 0 {
            let _ = writeln!(
                o,
                "        … and {} more evidence line(s) (-vv, or the JSON record)",
                c.evidence.len() - shown
            );
        }
    }
    if let Some(g) = grade {
        let label = |id: &str| r.checks.iter().find(|c| c.id == id).map_or(id.to_string(), |c| c.label.clone());
        let provisional: Vec<String> = checks
            .iter()
            .filter(|c| c.critical && !c.advisory && c.verdict == Verdict::Inconclusive)
            .map(|c| c.label.clone())
            .collect();
        if g.provisional {
            let _ = writeln!(
                o,
                "  * provisional: a critical check could not be measured ({}); the grade may drop once it can",
                provisional.join("; ")
            );
        }
        if !g.excluded.is_empty() {
            let excluded: Vec<String> = g
                .excluded
                .iter()
                .map(|id| {
                    let v = r.checks.iter().find(|c| &c.id == id).map(|c| c.verdict);
                    let why = if v == Some(Verdict::Na) { "n/a" } else { "INCL" };
                    format!("{} ({why})", label(id))
                })
                .collect();
            let _ = writeln!(o, "  not scored: {}", excluded.join("; "));
        }
    }
    o.push('\n');
}
