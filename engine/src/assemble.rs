//! Assembly: findings, classification and run facts in; the complete record out.
//!
//! Pure: grades, pack statuses, the standard/custom decision, the badge and the
//! "Not covered" list are all derived here, so the viewer can re-derive them.

use crate::classify::{Classification, classify};
use crate::config::Config;
use crate::grading::{self, Input, Outcome};
use crate::judge::Finding;
use crate::judge::custom::CustomProbe;
use crate::model::{Pack, Verdict, Weight};
use crate::record::*;
use crate::registry::{CHECKS, CheckDef};
use crate::tools::{ToolInfo, canonical_json, sha256_tagged};
use crate::{METHODOLOGY, SCHEMA_VERSION, VERSION};
use std::collections::BTreeMap;

/// What the runtime learned, beyond the findings.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub started_at: String,
    pub duration_ms: u64,
    pub transport: String,
    pub command_display: String,
    pub url: Option<String>,
    pub env_display: BTreeMap<String, String>,
    /// How each tool was placed (`classify:`, the heuristics, parameters learned from
    /// the server); empty to place them here by the heuristics alone.
    pub classification: Vec<Classification>,
    /// Tools kept by `tools.include` / `tools.exclude`, in listing order.
    pub tools: Vec<ToolInfo>,
    /// Tools the filter removed.
    pub filtered_out: Vec<String>,
    pub announced: Option<Announced>,
    pub sandbox: SandboxRecord,
    pub server_log: ServerLog,
    /// Gaps found while probing (tools not probed, and why).
    pub gaps: Vec<String>,
    /// The tool of every valid call that was answered without an error (control reads,
    /// benign calls, control fetches).
    pub valid_calls: Vec<String>,
    /// The `db:` line.
    pub db: DbRecord,
    /// Why each requested pack observed nothing, as collection recorded it
    /// (`Observations::not_run`).
    pub not_run: BTreeMap<Pack, String>,
    pub upstream: Option<UpstreamRecord>,
    pub probe_calls: Vec<ProbeCall>,
    /// The custom checks (from `probes:` with a check), with their probes' verdicts.
    pub custom: Vec<(crate::judge::custom::CheckMeta, Finding)>,
    pub custom_probes: Vec<CustomProbe>,
    pub unasked: Unasked,
}

/// The weight a check counts with in this run: `checks.<id>.severity` when set, else
/// its declared weight, with candidates advisory in a standard pack.
pub fn effective_weight(def: &CheckDef, config: &Config) -> Weight {
    match config.checks.get(def.id).and_then(|c| c.severity) {
        Some(w) => w,
        None if def.is_advisory() => Weight::Advisory,
        None => def.weight,
    }
}

/// One registry check's result, counted with `weight`.
pub fn check_result(def: &CheckDef, weight: Weight, finding: Finding) -> CheckResult {
    let Finding { verdict, summary, evidence } = finding;
    CheckResult {
        id: def.id.to_string(),
        pack: def.pack.id().to_string(),
        label: def.label.to_string(),
        critical: weight == Weight::Critical,
        advisory: weight == Weight::Advisory,
        candidate: def.candidate,
        scope: def.scope.to_string(),
        verdict,
        summary,
        evidence,
    }
}

/// Builds the record.
pub fn assemble(config: &Config, facts: RunFacts, findings: Vec<(&'static CheckDef, Finding)>) -> Record {
    let requested: Vec<Pack> = config.packs.clone().unwrap_or_else(|| Pack::STANDARD.to_vec());
    let classification: Vec<Classification> = if facts.classification.len() == facts.tools.len() {
        facts.classification.clone()
    } else {
        facts.tools.iter().map(classify).collect()
    };

    let mut checks = Vec::new();
    for (meta, finding) in &facts.custom {
        checks.push(CheckResult {
            id: meta.id.clone(),
            pack: Pack::Custom.id().to_string(),
            label: meta.label.clone(),
            critical: meta.critical,
            advisory: false,
            candidate: false,
            scope: meta.scope.clone(),
            verdict: finding.verdict,
            summary: finding.summary.clone(),
            evidence: finding.evidence.clone(),
        });
    }
    for (def, finding) in findings {
        checks.push(check_result(def, effective_weight(def, config), finding));
    }

    // Why a requested pack produced no check is what collection recorded.
    let not_run = |pack: Pack| {
        let reason =
            facts.not_run.get(&pack).cloned().unwrap_or_else(|| "no check of this pack was judged".to_string());
        PackResult { status: PackStatus::Na, grade: None, reason: Some(reason) }
    };
    let mut packs = BTreeMap::new();
    for pack in Pack::STANDARD {
        let result = if !requested.contains(&pack) {
            PackResult { status: PackStatus::Na, grade: None, reason: Some("pack not requested".to_string()) }
        } else if !checks.iter().any(|c| c.pack == pack.id()) {
            not_run(pack)
        } else {
            grade_pack(pack, &checks)
        };
        packs.insert(pack.id().to_string(), result);
    }

    let mut pack_notes = Vec::new();
    for pack in Pack::ALL.into_iter().filter(|p| !Pack::STANDARD.contains(p)) {
        let declared = config.declares(pack);
        let result = if config.runs_pack(pack) {
            if config.packs.is_none()
                && let Some(note) = declared
            {
                pack_notes.push(format!("{note} (candidate pack)"));
            }
            if checks.iter().any(|c| c.pack == pack.id()) { grade_pack(pack, &checks) } else { not_run(pack) }
        } else if declared.is_some() {
            let note = format!(
                "{} is declared in the config but not in the pack list you chose (packs: or --pack), so it was skipped",
                pack.id()
            );
            pack_notes.push(note.clone());
            PackResult { status: PackStatus::Na, grade: None, reason: Some(note) }
        } else {
            continue;
        };
        packs.insert(pack.id().to_string(), result);
    }

    let (standard_diff, hash) = standard_profile(config);
    let standard = standard_diff.is_empty();
    let beyond_core = packs.iter().any(|(id, p)| {
        id != "core" && p.status == PackStatus::Graded && !Pack::from_id(id).is_some_and(Pack::is_candidate)
    });
    let badge = match (standard, beyond_core) {
        (true, true) => Badge { eligible: true, reason: "a STANDARD run with a graded pack beyond core".to_string() },
        (false, _) => Badge { eligible: false, reason: "a CUSTOM run".to_string() },
        (true, false) => Badge { eligible: false, reason: "no pack beyond core was graded".to_string() },
    };

    let name = config
        .server
        .name
        .clone()
        .or_else(|| facts.announced.as_ref().map(|a| a.name.clone()))
        .unwrap_or_else(|| "unnamed server".to_string());
    let version = config
        .server
        .version
        .clone()
        .or_else(|| facts.announced.as_ref().map(|a| a.version.clone()))
        .unwrap_or_else(|| "unknown".to_string());
    let tools_total = facts.tools.len() as u32;
    let reached: std::collections::BTreeSet<&str> = facts.valid_calls.iter().map(String::as_str).collect();
    let level = match reached.len() as u32 {
        0 => "hygiene-only",
        n if n >= tools_total => "covered",
        _ => "partial",
    };
    let coverage = Coverage {
        valid_calls: facts.valid_calls.len() as u32,
        tools_called_valid: reached.len() as u32,
        tools_total,
        level: level.to_string(),
    };
    let not_covered = not_covered(&facts, &classification, &packs, &checks);

    Record {
        sealmark: Producer { version: VERSION.to_string(), methodology: METHODOLOGY.to_string() },
        server: ServerRecord {
            name,
            selected: config.selected.clone(),
            version,
            command: facts.command_display,
            url: facts.url,
            env: facts.env_display,
            transport: facts.transport,
            tools: facts.tools.iter().map(|t| t.name.clone()).collect(),
            surface: facts.tools.iter().map(ToolInfo::surface).collect(),
            announced: facts.announced,
        },
        options: Options {
            packs_requested: requested.iter().map(|p| p.id().to_string()).collect(),
            pack_notes,
            timeout_probe_sec: config.timeout_probe_sec,
            active: facts.sandbox.active,
            sandbox: true,
        },
        started_at: facts.started_at,
        duration_ms: facts.duration_ms,
        packs,
        checks,
        classification,
        sandbox: facts.sandbox,
        db: facts.db,
        config: ConfigRecord {
            hash,
            profile: if standard { "standard" } else { "custom" }.to_string(),
            standard,
            standard_diff,
            methodology: METHODOLOGY.to_string(),
            schema_version: SCHEMA_VERSION,
            file: config.file.clone(),
            server_line: config.server_line,
        },
        coverage,
        badge,
        not_covered,
        server_log: facts.server_log,
        upstream: facts.upstream,
        probes: (!facts.probe_calls.is_empty()).then_some(ProbesRecord { calls: facts.probe_calls }),
        custom: (!facts.custom_probes.is_empty()).then_some(CustomRecord { probes: facts.custom_probes }),
        unasked: facts.unasked,
        observations: None,
        observations_omitted: None,
        replay: None,
    }
}

/// A saved record graded again by this build's formula (replay): every pack that has
/// checks gets its grade recomputed from their verdicts and weights.
pub fn regrade(record: &mut Record) {
    for pack in Pack::ALL {
        if record.checks.iter().any(|c| c.pack == pack.id()) {
            let fresh = grade_pack(pack, &record.checks);
            record.packs.insert(pack.id().to_string(), fresh);
        }
    }
}

/// The formula's view of a pack's checks: each with the weight it counted with.
pub fn pack_inputs<'c>(pack: &str, checks: &'c [CheckResult]) -> Vec<Input<'c>> {
    checks
        .iter()
        .filter(|c| c.pack == pack)
        .map(|c| Input {
            id: &c.id,
            weight: if c.advisory {
                Weight::Advisory
            } else if c.critical {
                Weight::Critical
            } else {
                Weight::Scored
            },
            verdict: c.verdict,
        })
        .collect()
}

fn grade_pack(pack: Pack, checks: &[CheckResult]) -> PackResult {
    let inputs = pack_inputs(pack.id(), checks);
    match grading::grade(pack.id(), &inputs) {
        Outcome::Graded(g) => PackResult { status: PackStatus::Graded, grade: Some(g), reason: None },
        Outcome::NotGraded { all_na, reason } => PackResult {
            status: if all_na { PackStatus::Na } else { PackStatus::Inconclusive },
            grade: None,
            reason: Some(reason),
        },
    }
}

/// The standard profile as YAML (`sealmark standard`, standard.yaml): every locked
/// setting at its standard value, and the `config.hash` a STANDARD run carries.
pub fn standard_yaml() -> String {
    let config = Config::default();
    let (_, hash) = standard_profile(&config);
    let mut o = format!(
        "# The standard profile of methodology {METHODOLOGY}: the locked settings at their standard values.\n\
         # A run that changes none of them carries this config.hash; it is STANDARD when it also\n\
         # turns no check off, reweighs none and has no custom check (site/standard.md).\n\
         # Candidate checks and packs are not part of it.\n\
         methodology: {METHODOLOGY}\nhash: \"{hash}\"\ntimeout_probe_sec: {}\nchecks:\n",
        config.timeout_probe_sec
    );
    for def in CHECKS.iter().filter(|d| !d.candidate) {
        let mut fields =
            vec!["enabled: true".to_string(), format!("severity: {}", effective_weight(def, &config).id())];
        for s in def.settings.iter().filter(|s| s.locked && !s.is_global()) {
            fields.push(format!("{}: {}", s.key, s.default));
        }
        o.push_str(&format!("  {}: {{ {} }}\n", def.id, fields.join(", ")));
    }
    o
}

/// The differences from the standard profile, and the hash of the locked settings.
fn standard_profile(config: &Config) -> (Vec<String>, String) {
    let mut diff = Vec::new();
    let mut locked = serde_json::Map::new();
    for def in CHECKS {
        let cc = config.checks.get(def.id);
        if let Some(false) = cc.and_then(|c| c.enabled) {
            diff.push(format!("checks.{}.enabled: false (standard: true)", def.id));
        }
        if let Some(w) = cc.and_then(|c| c.severity) {
            let declared = if def.is_advisory() { Weight::Advisory } else { def.weight };
            if w != declared {
                diff.push(format!("checks.{}.severity: {} (standard: {})", def.id, w.id(), declared.id()));
            }
        }
        if def.candidate {
            // Candidate settings are not locked: they never enter the hash.
            continue;
        }
        let mut entry = serde_json::Map::new();
        entry.insert("enabled".into(), config.enabled(def.id).into());
        entry.insert("severity".into(), effective_weight(def, config).id().into());
        for s in def.settings.iter().filter(|s| s.locked) {
            let value = config.setting(def.id, s.key);
            let default: serde_json::Value = serde_yaml_ng::from_str(s.default).expect("valid default");
            if value != default {
                diff.push(format!("checks.{}.{}: {} (standard: {})", def.id, s.key, value, s.default));
            }
            entry.insert(s.key.into(), value);
        }
        locked.insert(def.id.into(), entry.into());
    }
    let mut custom_ids: Vec<&str> = Vec::new();
    for id in config.probes.iter().filter_map(|p| p.check.as_ref().map(|m| m.id.as_str())) {
        if !custom_ids.contains(&id) {
            custom_ids.push(id);
        }
    }
    if !custom_ids.is_empty() {
        diff.push(format!("probes: custom check(s) {} (the standard has none)", custom_ids.join(", ")));
    }
    if config.timeout_probe_sec != crate::config::DEFAULT_TIMEOUT_PROBE_SEC {
        diff.push(format!(
            "timeout_probe_sec: {} (standard: {})",
            config.timeout_probe_sec,
            crate::config::DEFAULT_TIMEOUT_PROBE_SEC
        ));
    }
    let mut doc = serde_json::json!({
        "methodology": METHODOLOGY,
        "checks": locked,
        "timeoutProbeSec": config.timeout_probe_sec,
    });
    if !custom_ids.is_empty() {
        doc["customChecks"] = serde_json::json!(custom_ids);
    }
    (diff, sha256_tagged(canonical_json(&doc).as_bytes()))
}

/// What this run did not look at: the fixed lines, the blind spots of each pack that was
/// graded (the methodology's list), and the per-tool gaps.
fn not_covered(
    facts: &RunFacts,
    classification: &[Classification],
    packs: &BTreeMap<String, PackResult>,
    checks: &[CheckResult],
) -> Vec<String> {
    let graded = |p: Pack| packs.get(p.id()).is_some_and(|r| r.status == PackStatus::Graded);
    let judged = |id: &str| {
        checks.iter().any(|c| c.id == id && matches!(c.verdict, Verdict::Pass | Verdict::Fail | Verdict::Part))
    };
    let mut out = Vec::new();
    if facts.transport == "stdio" || !facts.command_display.is_empty() {
        out.push("The sandbox is a convention the harness follows, not a security boundary: the server runs with your user's privileges, can read the real file system and reach the network, and may ignore cwd, HOME and PATH. Run untrusted servers in a throwaway VM or container.".to_string());
    }
    out.push("prompt injection carried in tool output (only tool metadata is scanned)".to_string());
    out.push("supply chain: what the server's package pulls in (its dependencies, their versions and install scripts) is not inspected; only the running server is probed".to_string());
    // No check measures load or long sessions yet; two callers are tried by one.
    out.push(match judged("upstream-credential") {
        true => "load, concurrency and long sessions: calls are made one at a time in short sessions; several users only as upstream-credential's two callers, one after the other",
        false => "load, concurrency, long sessions and several users: calls are made one at a time, in short sessions, as one caller",
    }.to_string());
    out.push(match graded(Pack::Http) {
        true => "authorization: what an authorised caller may do, token scopes and OAuth (the http pack checks the transport and a missing credential, not what a credential allows)",
        false => "authentication and transport security",
    }.to_string());
    out.push(match graded(Pack::Db) {
        true => format!(
            "databases and policy shapes beyond the seed: Postgres with seed {} (one tenant-column policy, one column grant) is tested; other databases and policies are not",
            crate::judge::db::SEED_VERSION
        ),
        false => "audit logging (not measured by these packs; only the db pack has an advisory audit check)".to_string(),
    });
    if graded(Pack::Net) {
        out.push("SSRF beyond the corpus: octal and the other 127/8 spellings, a redirect from a public host to loopback and DNS rebinding are not probed (the harness contacts only its own listener)".to_string());
    }
    if graded(Pack::Git) {
        out.push(match facts.sandbox.active {
            true => "git tools that write, beyond creating repositories, staging files and refs that are options: commits, merges, pushes and resets without a ref are not probed",
            false => "git tools that write: repository creation, staging and refs that are options are probed only with --active (git-init-scope, git-add-scope, git-ref-options)",
        }.to_string());
    }
    out.push(
        "tools a server lists only to clients that declare roots, sampling or elicitation (the harness declares none)"
            .to_string(),
    );
    let reached: std::collections::BTreeSet<&str> = facts.valid_calls.iter().map(String::as_str).collect();
    let unreached: Vec<&str> = facts.tools.iter().map(|t| t.name.as_str()).filter(|t| !reached.contains(t)).collect();
    if !unreached.is_empty() {
        out.push(format!(
            "behaviour behind valid calls of {}: no pack could give them a harness-owned argument, so they got malformed input only",
            unreached.join(", ")
        ));
    }
    if !facts.filtered_out.is_empty() {
        out.push(format!("left out by tools.include/tools.exclude: {}", facts.filtered_out.join(", ")));
    }
    for c in classification {
        if let Some(sec) = &c.secondary {
            out.push(format!("{}: secondary class {sec} not probed (classified as {})", c.tool, c.class));
        }
    }
    out.extend(facts.gaps.iter().cloned());
    out
}
