//! The registry rendered for people: `list-checks`, `explain` (a check's page) and
//! `describe` (the whole registry as JSON).

use crate::model::Weight;
use crate::registry::{CHECKS, CheckDef, PACKS, pack_doc};
use crate::{METHODOLOGY, VERSION};
use std::fmt::Write;

/// One line per check: id, pack, weight, label.
pub fn list_checks() -> String {
    let w = CHECKS.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for c in CHECKS {
        let weight = weight_word(c);
        let cand = if c.candidate { " candidate" } else { "" };
        let _ = writeln!(out, "{:w$}  {:8}  {:<8}{cand:10}  {}", c.id, c.pack.id(), weight, c.label);
    }
    let _ = writeln!(out, "\n{} check(s), methodology {METHODOLOGY}.", CHECKS.len());
    out
}

/// The `config keys` line of a check's page.
pub fn config_keys(c: &CheckDef) -> Vec<String> {
    let mut keys = vec![format!("checks.{}.enabled", c.id), format!("checks.{}.severity", c.id)];
    keys.extend(c.settings.iter().map(|s| setting_key(c, s)));
    keys
}

/// The full config key of a setting.
pub fn setting_key(c: &CheckDef, s: &crate::registry::Setting) -> String {
    if s.is_global() { s.key.to_string() } else { format!("checks.{}.{}", c.id, s.key) }
}

/// `advisory` for a check that never counts, else its weight (`critical`, `scored`).
pub fn weight_word(c: &CheckDef) -> &'static str {
    if c.is_advisory() { "advisory" } else { c.weight.id() }
}

/// The observers that can decide a check, strongest first: `sandbox, response`.
pub fn decided_by(c: &CheckDef) -> String {
    c.decided_by.iter().map(|v| v.id()).collect::<Vec<_>>().join(", ")
}

/// A check's CWE references: `CWE-22, CWE-23`.
pub fn cwe_list(c: &CheckDef) -> String {
    c.references.cwe.iter().map(|n| format!("CWE-{n}")).collect::<Vec<_>>().join(", ")
}

/// The status line of a check's page: every check the registry declares runs in this
/// build (what is designed and not built is on the roadmap, not in the registry).
pub const STATUS: &str = "shipped";

/// How points are awarded, in words, for a check's weight.
pub fn scoring_sentence(c: &CheckDef) -> &'static str {
    if c.is_advisory() {
        "Advisory: the verdict is printed with (advisory, not scored) and never changes a letter or a point count."
    } else if c.weight == Weight::Critical {
        "Critical: pass earns 1 point, part 0.5, fail 0, and a fail caps the pack at D whatever else it scored; an inconclusive verdict marks the grade provisional (*)."
    } else {
        "Scored: pass earns 1 point, part 0.5, fail 0; inconclusive and n/a leave the denominator."
    }
}

/// The line that opens every check's page: where its text comes from.
pub fn preface(c: &CheckDef) -> String {
    format!(
        "The sections below are generated from the check registry of sealmark {VERSION} (methodology {METHODOLOGY}); `sealmark explain {}` prints the same text.",
        c.id
    )
}

/// The `pack` row of a check's page: `sql-guard (candidate pack) — SQL that must not reach the backend`.
pub fn pack_line(c: &CheckDef) -> String {
    let cand = if c.pack.is_candidate() { " (candidate pack)" } else { "" };
    format!("{}{cand} — {}", c.pack.id(), pack_doc(c.pack).title)
}

/// What every check takes, said under "Settings and thresholds".
pub fn common_settings(c: &CheckDef) -> String {
    format!(
        "Every check takes checks.{0}.enabled (default true) and checks.{0}.severity (critical, scored or advisory).",
        c.id
    )
}

/// The line a check without a numeric threshold carries.
pub fn threshold_line(c: &CheckDef) -> Option<&'static str> {
    (!c.settings.iter().any(|s| s.threshold)).then_some("This check has no numeric threshold.")
}

/// A check's page, as `sealmark explain <id>` prints it.
pub fn explain(c: &CheckDef) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{}\n\n{}\n\n{}\n\n{}\n", c.id, c.label, STATUS, preface(c));
    let _ = writeln!(o, "pack: {}", pack_line(c));
    let _ = writeln!(o, "weight: {}", c.weight_line());
    let _ = writeln!(o, "scope: {}", c.scope);
    let _ = writeln!(o, "decided by: {}", decided_by(c));
    let _ = writeln!(o, "since: {} (methodology {METHODOLOGY}, sealmark {VERSION})", c.since);
    let _ = writeln!(o, "config keys: {}", config_keys(c).join(", "));
    o.push_str("\nProbes\n\n");
    for p in c.probes {
        let _ = writeln!(o, "  {}  {}", p.name, p.described());
    }
    o.push_str("\nSettings and thresholds\n\n");
    let _ = writeln!(o, "{}", common_settings(c));
    match threshold_line(c) {
        Some(line) => {
            let _ = writeln!(o, "{line}\n");
        }
        None => o.push('\n'),
    }
    if !c.settings.is_empty() {
        let _ = writeln!(o, "  key | default | standard | meaning");
        for s in c.settings {
            let locked = if c.locks(s) { "locked" } else { "not locked" };
            let _ = writeln!(
                o,
                "  {} | {} | {locked} | {} ({})",
                setting_key(c, s),
                s.default,
                s.meaning,
                s.kind.describe()
            );
        }
        o.push('\n');
    }
    let _ = writeln!(o, "How the verdict is established\n\n{}\n\n{}\n", c.verdict, scoring_sentence(c));
    let _ = writeln!(o, "What proves a pass\n\n{}\n", c.proves_pass);
    let _ = writeln!(o, "What to fix\n\n{}\n", c.fix);
    let _ = writeln!(o, "False positives\n\n{}\n", c.false_positives);
    let _ = writeln!(o, "False negatives\n\n{}\n", c.false_negatives);
    let _ = writeln!(o, "References\n\nOWASP MCP Top 10: {} · {}", c.references.owasp_mcp, cwe_list(c));
    let _ = writeln!(
        o,
        "\nSee also: Observers (what \"decided by\" means), Grades (how the weight counts), Packs — in the site's \
         reference (site/reference/observers.md, grades.md, packs.md; `--format html` publishes the site with a report)."
    );
    o
}

/// The whole registry as JSON, for tools.
pub fn describe() -> String {
    let doc = serde_json::json!({
        "sealmark": { "version": VERSION, "methodology": METHODOLOGY },
        "packs": PACKS,
        "checks": CHECKS.iter().map(|c| {
            let mut v = serde_json::to_value(c).expect("a check serialises");
            v["advisory"] = serde_json::Value::Bool(c.is_advisory());
            v["configKeys"] = serde_json::json!(config_keys(c));
            v
        }).collect::<Vec<_>>(),
    });
    let mut s = serde_json::to_string_pretty(&doc).expect("serialises");
    s.push('\n');
    s
}

/// The checks reference as one markdown page, generated from the registry. The
/// committed copy (`site/reference/checks.md`) is compared with this by a test.
pub fn checks_markdown() -> String {
    let mut o = String::new();
    let _ = writeln!(o, "<!-- Generated from the check registry by `sealmark-engine`; do not edit. -->");
    let _ = writeln!(o, "<!-- Regenerate: SEALMARK_BLESS=1 cargo test -p sealmark-engine checks_reference -->\n");
    let _ = writeln!(o, "# Checks reference (methodology {METHODOLOGY})\n");
    let _ = writeln!(o, "Every check sealmark {VERSION} runs, with the same facts `sealmark explain <id>` prints.\n");
    for pack in PACKS {
        let checks: Vec<&CheckDef> = CHECKS.iter().copied().filter(|c| c.pack == pack.pack).collect();
        let _ = writeln!(o, "## Pack `{}`\n\n{}. Runs {}.\n", pack.pack.id(), pack.title, pack.applies);
        for c in checks {
            let _ = writeln!(o, "### `{}` — {}\n\n*{}*\n\n{}\n", c.id, c.label, STATUS, preface(c));
            let _ = writeln!(o, "| | |\n|---|---|");
            let _ = writeln!(o, "| pack | {} |", pack_line(c));
            let _ = writeln!(o, "| weight | {} |", c.weight_line());
            let _ = writeln!(o, "| scope | {} |", c.scope);
            let _ = writeln!(o, "| decided by | {} |", decided_by(c));
            let _ = writeln!(o, "| since | {} |", c.since);
            let keys: Vec<String> = config_keys(c).iter().map(|k| format!("`{k}`")).collect();
            let _ = writeln!(o, "| config keys | {} |", keys.join(", "));
            let _ = writeln!(o, "| references | {} · {} |\n", c.references.owasp_mcp, cwe_list(c));
            o.push_str("**Probes**\n\n");
            for p in c.probes {
                let _ = writeln!(o, "- `{}`: {}", p.name, p.described().replace('|', "\\|"));
            }
            let _ = writeln!(o, "\n**Settings and thresholds.** {}", common_settings(c));
            if let Some(line) = threshold_line(c) {
                let _ = writeln!(o, "{line}");
            }
            if !c.settings.is_empty() {
                o.push_str("\n| key | default | standard | meaning |\n|---|---|---|---|\n");
                for s in c.settings {
                    let locked = if c.locks(s) { "locked" } else { "not locked" };
                    let _ = writeln!(
                        o,
                        "| `{}` | `{}` | {locked} | {} ({}) |",
                        setting_key(c, s),
                        s.default.replace('|', "\\|"),
                        s.meaning,
                        s.kind.describe()
                    );
                }
            }
            let _ = writeln!(o, "\n**Verdict.** {}\n\n{}\n", c.verdict, scoring_sentence(c));
            let _ = writeln!(o, "**What proves a pass.** {}\n", c.proves_pass);
            let _ = writeln!(o, "**What to fix.** {}\n", c.fix);
            let _ = writeln!(o, "**False positives.** {}\n", c.false_positives);
            let _ = writeln!(o, "**False negatives.** {}\n", c.false_negatives);
        }
    }
    o
}

#[cfg(test)]
mod tests {
    /// The committed checks reference must match the registry.
    #[test]
    fn checks_reference_is_fresh() {
        crate::render::assert_fresh("site/reference/checks.md", &super::checks_markdown());
    }
}
