//! SARIF 2.1.0 for code-scanning tools: a rule per check of the run (help text from the
//! registry, a help URI to the check's page, its scope and verdict, passing or not), one
//! result per check that did not pass (n/a is left out), located at the config file's
//! line of the server's command or url. What a replay distrusted is a notification.

use crate::model::Verdict;
use crate::record::{CheckResult, Record};
use crate::registry;
use serde_json::{Value, json};

/// Where the published checks reference lives; each check's page is an anchor in it.
pub const REFERENCE_URL: &str = "https://sealmark.dev/reference/checks";

pub fn render(r: &Record) -> String {
    document(vec![run(r, None)])
}

/// The SARIF log around its runs.
pub fn document(runs: Vec<Value>) -> String {
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": runs,
    });
    let mut s = super::json_escaped(serde_json::to_string_pretty(&doc).expect("serialises"));
    s.push('\n');
    s
}

/// One record as a SARIF run; in a run of several, `server` (its name under `servers:`)
/// tells code scanning the runs apart.
pub fn run(r: &Record, server: Option<&str>) -> Value {
    let rules: Vec<Value> = r.checks.iter().map(rule).collect();
    let results: Vec<Value> = r
        .checks
        .iter()
        .enumerate()
        .filter(|(_, c)| !matches!(c.verdict, Verdict::Pass | Verdict::Na))
        .map(|(i, c)| result(r, i, c))
        .collect();
    let mut run = json!({
        "tool": { "driver": {
            "name": "sealmark",
            "version": r.sealmark.version,
            "semanticVersion": r.sealmark.version,
            "informationUri": "https://sealmark.dev",
            "rules": rules,
            "properties": { "methodology": r.sealmark.methodology },
        }},
        "invocations": [invocation(r)],
        "originalUriBaseIds": { "CONFIGROOT": { "description": { "text": "The directory sealmark was run from." } } },
        "results": results,
        "properties": {
            "server": r.server.name,
            "profile": r.config.profile,
            "configHash": r.config.hash,
        },
    });
    if let Some(name) = server {
        run["automationDetails"] = json!({ "id": format!("sealmark/{name}/") });
    }
    run
}

/// The run's invocation; a replay that distrusted the record says each finding as a
/// warning notification.
fn invocation(r: &Record) -> Value {
    let mut inv = json!({ "executionSuccessful": true, "startTimeUtc": r.started_at });
    let found = super::replay_lines(r);
    if !found.is_empty() {
        let level = if r.replay.as_ref().is_some_and(|p| p.differs()) { "warning" } else { "note" };
        let notes: Vec<Value> = found.iter().map(|l| json!({ "level": level, "message": { "text": l } })).collect();
        inv["toolExecutionNotifications"] = json!(notes);
    }
    inv
}

fn rule(c: &CheckResult) -> Value {
    let def = registry::check(&c.id);
    let (full, help) = match def {
        Some(d) => (d.verdict.to_string(), format!("{}\n\nScope: {}", d.fix, d.scope)),
        None => (c.label.clone(), format!("A custom check from probes: in the config. Scope: {}", c.scope)),
    };
    let mut tags = vec![format!("pack:{}", c.pack), "security".to_string()];
    if c.candidate {
        tags.push("candidate".to_string());
    }
    if c.advisory {
        tags.push("advisory".to_string());
    }
    let cwe: Vec<String> =
        def.map(|d| d.references.cwe.iter().map(|n| format!("external/cwe/cwe-{n}")).collect()).unwrap_or_default();
    tags.extend(cwe);
    json!({
        "id": c.id,
        "name": c.label,
        "shortDescription": { "text": c.label },
        "fullDescription": { "text": full },
        "help": { "text": help },
        "helpUri": format!("{REFERENCE_URL}#{}", c.id),
        "defaultConfiguration": { "level": if c.critical { "error" } else if c.advisory { "note" } else { "warning" } },
        "properties": { "tags": tags, "precision": "very-high", "scope": c.scope, "verdict": c.verdict.id() },
    })
}

fn result(r: &Record, index: usize, c: &CheckResult) -> Value {
    let level = match c.verdict {
        _ if c.advisory => "note",
        Verdict::Fail if c.critical => "error",
        Verdict::Fail | Verdict::Part => "warning",
        _ => "note",
    };
    let kind = if c.verdict == Verdict::Inconclusive { "review" } else { "fail" };
    let file = r.config.file.as_deref().unwrap_or("sealmark.yaml");
    let uri = if file.starts_with('/') { format!("file://{}", percent_path(file)) } else { percent_path(file) };
    let evidence: Vec<Value> = c
        .evidence
        .iter()
        .map(|e| json!({ "probe": e.probe, "outcome": e.outcome, "verifiedBy": e.verified_by.id() }))
        .collect();
    let mut artifact = json!({ "uri": uri });
    if !file.starts_with('/') {
        artifact["uriBaseId"] = json!("CONFIGROOT");
    }
    json!({
        "ruleId": c.id,
        "ruleIndex": index,
        "kind": kind,
        "level": level,
        "message": { "text": format!("{}: {} — {}", c.verdict.id(), c.label, c.summary) },
        "locations": [{ "physicalLocation": {
            "artifactLocation": artifact,
            "region": { "startLine": r.config.server_line.unwrap_or(1) },
        }}],
        "properties": { "verdict": c.verdict.id(), "pack": c.pack, "scope": c.scope, "evidence": evidence },
    })
}

/// A path as a URI reference: every byte outside the unreserved set and `/` encoded.
fn percent_path(p: &str) -> String {
    const PATH: &percent_encoding::AsciiSet = &crate::text::NOT_UNRESERVED.remove(b'/');
    percent_encoding::utf8_percent_encode(p, PATH).to_string()
}
