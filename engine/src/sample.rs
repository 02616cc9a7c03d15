//! Sample records for renderer tests and the viewer: every verdict, a critical cap,
//! a provisional grade and advisory lines, built through the real assembly.

use crate::applies::{Situation, applies, found_nothing};
use crate::assemble::{RunFacts, assemble};
use crate::config::Config;
use crate::judge::{Finding, Observations};
use crate::model::Evidence;
use crate::model::{Pack, Verdict, VerifiedBy};
use crate::record::{Announced, Record, SandboxRecord, ServerLog};
use crate::registry::core as defs;
use crate::registry::fs as fs_defs;
use crate::registry::net as net_defs;
use crate::tools::ToolInfo;
use serde_json::json;
use std::collections::BTreeMap;

fn tool(name: &str, ro: bool) -> ToolInfo {
    ToolInfo::from_value(&json!({
        "name": name,
        "description": format!("{name} under the root"),
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "annotations": {"readOnlyHint": ro, "openWorldHint": false}
    }))
}

fn facts() -> RunFacts {
    RunFacts {
        started_at: "2026-10-12T09:30:00.000Z".to_string(),
        duration_ms: 412,
        transport: "stdio".to_string(),
        command_display: "./server-a {sandbox}".to_string(),
        url: None,
        env_display: [("SEALMARK_CANARY", "<canary>"), ("SEALMARK_FAKE_API_KEY", "<canary>")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        tools: vec![tool("read_file", true), tool("write_file", false)],
        classification: Vec::new(),
        filtered_out: vec![],
        announced: Some(Announced {
            name: "Server A".into(),
            version: "1.0.0".into(),
            protocol_version: "2025-11-25".into(),
        }),
        sandbox: SandboxRecord {
            dir: "{sandbox_dir}".into(),
            env_mode: "scrubbed".into(),
            listener_port: None,
            cleaned_up: true,
            leftover_processes: vec![],
            active: false,
            enabled: true,
            kept: false,
            inherited: vec!["PATH (system part)".into(), "LANG".into()],
        },
        server_log: ServerLog::default(),
        gaps: vec![],
        valid_calls: vec!["read_file".to_string()],
        db: crate::record::DbRecord { used: false, summary: "not used".to_string(), ..Default::default() },
        not_run: not_run(&[tool("read_file", true), tool("write_file", false)]),
        upstream: None,
        probe_calls: vec![],
        custom: vec![],
        custom_probes: vec![],
        unasked: Default::default(),
    }
}

/// What collection would record for a stdio server with these tools and a database
/// whose server config names none of the other targets.
fn not_run(tools: &[ToolInfo]) -> BTreeMap<Pack, String> {
    let config = Config::default();
    let classes: Vec<_> = tools.iter().map(crate::classify::classify).collect();
    let s = Situation { config: &config, classes: Some(&classes), database: Some(Ok(())), listener: true };
    let why = |pack| match applies(pack, &s) {
        Err(refusal) => refusal.to_string(),
        Ok(_) => found_nothing(pack, &Observations::default()),
    };
    Pack::STANDARD.into_iter().filter(|p| *p != Pack::Core).map(|p| (p, why(p))).collect()
}

fn finding(verdict: Verdict, summary: &str) -> Finding {
    Finding::new(
        verdict,
        summary,
        vec![Evidence::new("probe", format!("{} outcome", verdict.id()), VerifiedBy::Response)],
    )
}

/// The shared sample of every format's snapshot: pass, part, fail, inconclusive and
/// n/a verdicts, a critical fail capping a C at D, a provisional grade (net) and
/// advisory lines.
pub fn capped() -> Record {
    assemble(
        &Config::default(),
        facts(),
        vec![
            (&defs::HANDSHAKE, finding(Verdict::Pass, "handshake ok, 2 well-formed tool(s)")),
            (&defs::TOOL_POISONING, finding(Verdict::Pass, "nothing suspicious")),
            (
                &defs::ROBUST_INPUT,
                finding(Verdict::Part, "10 of 12 invalid call(s) rejected cleanly; 2 accepted as valid"),
            ),
            (&defs::SECRET_ECHO, finding(Verdict::Fail, "SEALMARK_CANARY came back plain in tools/call read_file")),
            (&defs::REFUSAL_QUALITY, finding(Verdict::Na, "no rejection with text to read")),
            (&defs::INSTRUCTIONS_HYGIENE, finding(Verdict::Fail, "1 of 5 deny pattern(s) matched the instructions")),
            (
                &fs_defs::FS_READ_ESCAPE,
                finding(
                    Verdict::Pass,
                    "29 path variants aimed outside the root were refused or returned nothing, on read_file",
                ),
            ),
            (
                &fs_defs::FS_WRITE_ESCAPE,
                finding(
                    Verdict::Pass,
                    "5 write attempts aimed outside the root left the canary directory and the sibling root unchanged",
                ),
            ),
            (
                &fs_defs::FS_SYMLINK_ESCAPE,
                finding(Verdict::Fail, "1 of 6 link probe(s) led out of the root, first write-new-link on write_file"),
            ),
            (&fs_defs::FS_LARGE_READ, finding(Verdict::Pass, "read_file: the server refused the read")),
            (
                &fs_defs::EFFECTS_READ_ONLY,
                finding(Verdict::Pass, "read_file declared read-only and changed nothing during a benign call"),
            ),
            (&fs_defs::EFFECTS_CLOSED_WORLD, finding(Verdict::Inconclusive, "no benign call was answered")),
            (
                &fs_defs::EFFECTS_UNANNOTATED,
                finding(Verdict::Na, "no unannotated read-style tool could be given a harness-owned control argument"),
            ),
            (&net_defs::NET_LOOPBACK_SSRF, finding(Verdict::Inconclusive, "the control fetch did not arrive")),
            (&net_defs::NET_SCHEME_ALLOWLIST, finding(Verdict::Pass, "6 other schemes were refused")),
        ],
    )
}

/// A critical inconclusive makes the grade provisional and leaves the denominator.
pub fn provisional() -> Record {
    assemble(
        &Config::default(),
        facts(),
        vec![
            (&defs::HANDSHAKE, finding(Verdict::Pass, "handshake ok, 2 well-formed tool(s)")),
            (&defs::TOOL_POISONING, finding(Verdict::Pass, "nothing suspicious")),
            (&defs::ROBUST_INPUT, finding(Verdict::Pass, "12 invalid call(s) rejected cleanly")),
            (&defs::SECRET_ECHO, finding(Verdict::Inconclusive, "no tool call was answered")),
            (&defs::REFUSAL_QUALITY, finding(Verdict::Pass, "2 of 2 rejection(s) name the argument at fault")),
            (&defs::INSTRUCTIONS_HYGIENE, finding(Verdict::Pass, "none matched")),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render;

    #[test]
    fn text_report_capped() {
        insta::assert_snapshot!(render::text::render(&capped()));
    }

    #[test]
    fn text_report_provisional() {
        insta::assert_snapshot!(render::text::render(&provisional()));
    }

    #[test]
    fn json_record_round_trips() {
        let rec = capped();
        let json = render::json(&rec);
        let back: Record = serde_json::from_str(&json).unwrap();
        assert_eq!(render::json(&back), json);
        let g = &rec.packs["core"].grade.as_ref().unwrap();
        assert_eq!((g.raw, g.letter, g.capped), (crate::grading::Letter::C, crate::grading::Letter::D, true));
    }

    #[test]
    fn markdown_capped() {
        insta::assert_snapshot!(render::markdown::render(&capped()));
    }

    #[test]
    fn summary_capped() {
        insta::assert_snapshot!(render::markdown::summary(&capped()));
    }

    #[test]
    fn junit_capped() {
        insta::assert_snapshot!(render::junit::render(&capped()));
    }

    #[test]
    fn badge_and_shields_name_the_graded_packs() {
        let mut rec = capped();
        insta::assert_snapshot!(render::badge::svg(&rec));
        let shields: serde_json::Value = serde_json::from_str(&render::badge::shields(&rec)).unwrap();
        let keys: Vec<&String> = shields.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["schemaVersion", "label", "message", "color"]);
        assert_eq!(
            (shields["message"].as_str(), shields["color"].as_str()),
            (Some("core D · fs D · net A* · effects A"), Some("orange"))
        );
        rec.badge.eligible = false;
        rec.badge.reason = "a CUSTOM run".into();
        let shields: serde_json::Value = serde_json::from_str(&render::badge::shields(&rec)).unwrap();
        assert_eq!(
            (shields["message"].as_str(), shields["color"].as_str()),
            (Some("no badge: a CUSTOM run"), Some("lightgrey"))
        );
        assert!(render::badge::svg(&rec).contains("<title>sealmark: no badge: a CUSTOM run</title>"));
    }

    /// The JUnit document parses as XML with one suite per pack and one case per check.
    #[test]
    fn junit_parses_with_a_case_per_check() {
        let rec = provisional();
        let xml = render::junit::render(&rec);
        let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
        let cases = doc.descendants().filter(|n| n.has_tag_name("testcase")).count();
        assert_eq!(cases, rec.checks.len());
        let suites: Vec<&str> =
            doc.descendants().filter(|n| n.has_tag_name("testsuite")).filter_map(|n| n.attribute("name")).collect();
        assert!(suites.contains(&"sealmark.core"), "{suites:?}");
        // What JUnit readers rely on: the counts on each suite match its cases.
        for suite in doc.descendants().filter(|n| n.has_tag_name("testsuite")) {
            let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
            let count = |tag: &str| cases.iter().filter(|c| c.children().any(|k| k.has_tag_name(tag))).count();
            let attr = |a: &str| suite.attribute(a).and_then(|v| v.parse::<usize>().ok()).unwrap();
            assert_eq!(attr("tests"), cases.len());
            assert_eq!(
                (attr("failures"), attr("errors"), attr("skipped")),
                (count("failure"), count("error"), count("skipped"))
            );
            assert!(cases.iter().all(|c| c.attribute("classname").is_some() && c.attribute("name").is_some()));
        }
    }

    #[test]
    fn sarif_capped() {
        insta::assert_json_snapshot!(
            serde_json::from_str::<serde_json::Value>(&render::sarif::render(&capped())).unwrap(),
            { ".runs[0].invocations[0].startTimeUtc" => "[startedAt]" }
        );
    }

    /// The SARIF validates against the OASIS SARIF 2.1.0 schema.
    #[test]
    fn sarif_validates_against_the_schema() {
        // The published schema's language pattern has a stray `]` that a strict
        // meta-schema check refuses; this is the pattern it means (sealmark sets no language).
        let text = include_str!("../testdata/sarif-2.1.0-rtm.5.json")
            .replace("^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$", "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema parses");
        let validator = jsonschema::draft4::new(&schema).expect("the schema compiles");
        assert!(!validator.is_valid(&serde_json::json!({"version": "2.0.0", "runs": [{}]})), "the schema bites");
        for rec in [capped(), provisional()] {
            let doc: serde_json::Value = serde_json::from_str(&render::sarif::render(&rec)).unwrap();
            let errors: Vec<String> =
                validator.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{errors:#?}");
            let results = doc["runs"][0]["results"].as_array().unwrap();
            let not_passing = rec.checks.iter().filter(|c| !matches!(c.verdict, Verdict::Pass | Verdict::Na)).count();
            assert_eq!(results.len(), not_passing);
            assert_eq!(doc["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap().len(), rec.checks.len());
        }
    }

    #[test]
    fn explain_page_secret_echo() {
        insta::assert_snapshot!(render::reference::explain(&defs::SECRET_ECHO));
    }
}
