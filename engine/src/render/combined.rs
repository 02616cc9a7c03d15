//! A run of several servers in every format that can hold several: a table of servers ×
//! pack grades first, then each server's own report as a section. Badge and shields
//! stand for one server's grade and have no combined form.

use super::{CLOSING_LINE, junit, markdown, sarif, text};
use crate::combined::Combined;
use crate::model::Pack;
use crate::record::{PackStatus, Record};
use std::fmt::Write;

/// Why badge and shields refuse a run of several.
pub const NO_BADGE: &str = "a badge stands for one server's grade, and this is a run of several: pick one with --server NAME, or render one server's record with --replay DIR/NAME/sealmark-report.json --format badge";

/// The combined record as 2-space indented JSON, with a final newline.
pub fn json(c: &Combined) -> String {
    let mut s = super::json_escaped(serde_json::to_string_pretty(c).expect("a combined record always serialises"));
    s.push('\n');
    s
}

/// The packs worth a column: those that applied to at least one server.
pub fn columns(c: &Combined) -> Vec<Pack> {
    Pack::ALL
        .into_iter()
        .filter(|p| c.records().any(|(_, r)| r.packs.get(p.id()).is_some_and(|res| res.status != PackStatus::Na)))
        .collect()
}

/// One cell of the table: the grade (A* provisional), `?` for a pack that ran and could
/// not be graded, `–` for one that did not apply, blank for one not asked for.
pub fn cell(r: &Record, pack: Pack) -> String {
    match r.packs.get(pack.id()) {
        Some(res) => match (res.status, &res.grade) {
            (PackStatus::Graded, Some(g)) => g.display_letter(),
            (PackStatus::Inconclusive, _) => "?".to_string(),
            _ => "–".to_string(),
        },
        None => String::new(),
    }
}

/// What the cells mean.
pub const LEGEND: &str = "A–F graded (A* provisional) · ? ran, not graded (inconclusive) · – did not apply";

/// The table's rows: a server's name and its cells, or its name and why it has no record.
fn rows(c: &Combined, packs: &[Pack]) -> Vec<(String, Result<Vec<String>, String>)> {
    c.servers
        .iter()
        .map(|e| {
            let cells = match (&e.record, &e.error) {
                (Some(r), _) => Ok(packs.iter().map(|p| cell(r, *p)).collect()),
                (None, _) => Err(format!("no record: {}", e.why_none())),
            };
            (e.name.clone(), cells)
        })
        .collect()
}

/// The first line: the release, the methodology, how many servers and from where.
pub fn heading(c: &Combined) -> String {
    let mut s = format!(
        "sealmark {} · methodology {} · {} server(s)",
        c.sealmark.version,
        c.sealmark.methodology,
        c.servers.len()
    );
    if let Some(file) = &c.combined.file {
        s.push_str(&format!(" of {file}"));
    }
    if let Some(shard) = &c.combined.shard {
        s.push_str(&format!(" · shard {shard} of the {} declared", c.combined.declared));
    }
    s
}

/// The table as aligned plain text, with its legend.
pub fn table(c: &Combined) -> String {
    let packs = columns(c);
    let rows = rows(c, &packs);
    let mut widths: Vec<usize> =
        std::iter::once("server".len()).chain(packs.iter().map(|p| p.id().chars().count())).collect();
    for (name, cells) in &rows {
        widths[0] = widths[0].max(name.chars().count());
        for (i, cell) in cells.iter().flatten().enumerate() {
            widths[i + 1] = widths[i + 1].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.chars().count()))))
            .collect();
        format!("  {}\n", padded.join("  ").trim_end())
    };
    let mut o = line(std::iter::once("server").chain(packs.iter().map(|p| p.id())).collect());
    for (name, cells) in &rows {
        match cells {
            Ok(cells) => {
                o.push_str(&line(std::iter::once(name.as_str()).chain(cells.iter().map(String::as_str)).collect()))
            }
            Err(why) => o.push_str(&line(vec![name.as_str(), why.as_str()])),
        }
    }
    let _ = writeln!(o, "  ({LEGEND})");
    o
}

/// The text report: the table, then each server's report.
pub fn text(c: &Combined, verbosity: u8) -> String {
    let mut o = plain_sections(c, |r| text::section(r, verbosity), "\n");
    let _ = writeln!(o, "{CLOSING_LINE}");
    super::printable(o)
}

/// The heading and the table as plain text, then each server under `=== NAME ===`: its
/// `body`, or why it has none (followed by `gap`).
fn plain_sections(c: &Combined, body: impl Fn(&Record) -> String, gap: &str) -> String {
    let mut o = format!("{}\n\n", heading(c));
    o.push_str(&table(c));
    for e in &c.servers {
        let _ = writeln!(o, "\n=== {} ===\n", e.name);
        match &e.record {
            Some(r) => o.push_str(&body(r)),
            None => {
                let _ = writeln!(o, "No record: {}{gap}", e.why_none());
            }
        }
    }
    o
}

/// The markdown report: the table, then each server's report under its name, its
/// headings one level down.
pub fn markdown(c: &Combined) -> String {
    let md = markdown::md;
    let packs = columns(c);
    let mut o = format!("## {}\n\n", md(&heading(c)));
    let _ = writeln!(o, "| server | {} |", packs.iter().map(|p| p.id()).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(o, "|---|{}", "---|".repeat(packs.len()));
    for (name, cells) in rows(c, &packs) {
        match cells {
            Ok(cells) => {
                let _ = writeln!(o, "| {} | {} |", md(&name), cells.join(" | "));
            }
            Err(why) => {
                let _ = writeln!(o, "| {} | {} |{}", md(&name), md(&why), " |".repeat(packs.len().saturating_sub(1)));
            }
        }
    }
    let _ = writeln!(o, "\n{}\n", md(LEGEND));
    for e in &c.servers {
        let _ = writeln!(o, "## {}\n", md(&e.name));
        match &e.record {
            Some(r) => {
                for line in markdown::body(r).lines() {
                    let demoted = if line.starts_with('#') { "#" } else { "" };
                    let _ = writeln!(o, "{demoted}{line}");
                }
            }
            None => {
                let _ = writeln!(o, "No record: {}\n", md(e.why_none()));
            }
        }
    }
    let _ = writeln!(o, "{CLOSING_LINE}");
    super::printable(o)
}

/// The summary: the table, then each server's summary.
pub fn summary(c: &Combined) -> String {
    let mut o = plain_sections(c, markdown::summary_body, "");
    let _ = writeln!(o, "\nExit code: {}", markdown::EXIT_CODES);
    super::printable(o)
}

/// JUnit: every server's suites, named `<server>.sealmark.<pack>`; a server without a
/// record is one suite with one error.
pub fn junit(c: &Combined) -> String {
    let mut all = junit::Suites::default();
    for e in &c.servers {
        match &e.record {
            Some(r) => all.add(junit::suites(r, &format!("{}.", e.name))),
            None => {
                let name = super::badge::escape(&e.name);
                let why = super::badge::escape(e.why_none());
                all.add(junit::Suites {
                    xml: format!(
                        "  <testsuite name=\"{name}.sealmark\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n    <testcase classname=\"{name}.sealmark\" name=\"run\">\n      <error message=\"{why}\" type=\"no-record\"/>\n    </testcase>\n  </testsuite>\n"
                    ),
                    tests: 1,
                    errors: 1,
                    ..junit::Suites::default()
                });
            }
        }
    }
    junit::document(&heading(c), &all)
}

/// SARIF: one run per server with a record, told apart by `automationDetails.id`.
pub fn sarif(c: &Combined) -> String {
    sarif::document(c.records().map(|(name, r)| sarif::run(r, Some(name))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::combined::ServerEntry;

    fn three() -> Combined {
        let entry = |name: &str, r: Option<Record>| ServerEntry {
            name: name.to_string(),
            index: None,
            error: r.is_none().then(|| "the server did not start".to_string()),
            record: r,
        };
        Combined::new(
            Some("servers.yaml".into()),
            3,
            None,
            vec![
                entry("capped", Some(crate::sample::capped())),
                entry("provisional", Some(crate::sample::provisional())),
                entry("broken", None),
            ],
        )
    }

    #[test]
    fn the_text_report_has_a_table_then_a_section_per_server() {
        let t = text(&three(), 0);
        insta::assert_snapshot!(t.lines().take(8).collect::<Vec<_>>().join("\n"));
        let sections: Vec<&str> = t.lines().filter(|l| l.starts_with("=== ")).collect();
        assert_eq!(sections, ["=== capped ===", "=== provisional ===", "=== broken ==="]);
        assert_eq!(t.matches(CLOSING_LINE).count(), 1);
    }

    #[test]
    fn markdown_and_summary_carry_the_table_and_every_server() {
        let m = markdown(&three());
        assert!(m.contains("| server | "), "{m}");
        assert!(
            m.contains("## capped") && m.contains("## broken") && m.contains("No record: the server did not start")
        );
        // Each server's own headings sit below its section's.
        assert!(!m.lines().skip(1).any(|l| l.starts_with("## sealmark")), "{m}");
        let s = summary(&three());
        assert_eq!(s.matches("Exit code:").count(), 1);
        assert!(s.contains("=== provisional ==="));
    }

    #[test]
    fn junit_and_sarif_hold_every_server() {
        let x = junit(&three());
        assert!(x.contains("name=\"capped.sealmark.") && x.contains("name=\"broken.sealmark\""), "{x}");
        let doc: serde_json::Value = serde_json::from_str(&sarif(&three())).unwrap();
        let ids: Vec<&str> =
            doc["runs"].as_array().unwrap().iter().map(|r| r["automationDetails"]["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["sealmark/capped/", "sealmark/provisional/"]);
    }
}
