//! The scope, sql-guard and upstream candidate packs through the real binary, against
//! the toy data server in front of the harness's upstream stub, configured by the
//! page's example (fixtures/config/scoped-http.yaml). Each mode breaks exactly one
//! thing; the table says which verdict it must get.

mod common;

use common::{Scratch, free_port, sealmark, verdict};
use sealmark_engine::model::Verdict::{self, Fail, Inconclusive, Part, Pass};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

const CHECKS: [&str; 5] =
    ["scope-escape", "sql-guard-statements", "sql-guard-references", "sql-guard-rowcap", "upstream-credential"];

/// Mode → verdicts, in the order of CHECKS, with the probe a failure must name.
const EXPECTED: &[(&str, [Verdict; 5], &str)] = &[
    ("safe", [Pass, Pass, Pass, Pass, Pass], ""),
    ("no-scope-check", [Fail, Pass, Pass, Pass, Pass], "sibling"),
    ("prefix-without-separator", [Fail, Pass, Pass, Pass, Pass], "prefix-no-separator"),
    ("deny-case-sensitive", [Fail, Pass, Pass, Pass, Pass], "other-case"),
    ("quotes-stripped", [Fail, Pass, Pass, Pass, Pass], "quoted"),
    ("decodes-before-check", [Fail, Pass, Pass, Pass, Pass], "encoded-separator"),
    ("traversal-normalised", [Fail, Pass, Pass, Pass, Pass], "traversal"),
    ("partial-names-defaulted", [Fail, Pass, Pass, Pass, Pass], "partial"),
    ("bare-container-allowed", [Fail, Pass, Pass, Pass, Pass], "bare-container"),
    ("no-statement-guard", [Pass, Fail, Pass, Pass, Pass], "insert"),
    ("stacked-forwarded", [Pass, Fail, Pass, Pass, Pass], "stacked"),
    ("first-keyword-only", [Pass, Fail, Pass, Pass, Pass], "cte-dml"),
    ("keyword-case-sensitive", [Pass, Fail, Pass, Pass, Pass], "mixed-case-cte"),
    ("unparsed-forwarded", [Pass, Fail, Pass, Pass, Pass], "unparseable"),
    ("first-reference-only", [Pass, Pass, Fail, Pass, Pass], "join"),
    ("quoted-names-skipped", [Pass, Pass, Fail, Pass, Pass], "quoted"),
    ("names-case-sensitive", [Pass, Pass, Fail, Pass, Pass], "cased"),
    ("alias-confused", [Pass, Pass, Fail, Pass, Pass], "alias-hidden"),
    ("no-row-cap", [Pass, Pass, Pass, Fail, Pass], "huge-limit"),
    ("cap-only-when-missing", [Pass, Pass, Pass, Fail, Pass], "huge-limit"),
    ("cap-fetch-first", [Pass, Pass, Pass, Pass, Pass], ""),
    ("cap-top", [Pass, Pass, Pass, Pass, Pass], ""),
    ("cap-as-field", [Pass, Pass, Pass, Part, Pass], "huge-limit"),
    ("service-token", [Pass, Pass, Pass, Pass, Fail], "caller-a"),
    ("first-caller-cached", [Pass, Pass, Pass, Pass, Fail], "caller-b"),
    ("no-token", [Pass, Pass, Pass, Pass, Fail], "caller-a"),
    ("anonymous-service-token", [Pass, Pass, Pass, Pass, Fail], "anonymous"),
];

/// The example config as written.
fn example() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/config/scoped-http.yaml");
    std::fs::read_to_string(path).expect("the example config")
}

/// The example with the toy in `mode` on a free port, plus `extra` YAML.
fn config(scratch: &Scratch, mode: &str, extra: &str) -> PathBuf {
    let text = example().replace("[\"--mode\", \"safe\"]", &format!("[\"--mode\", \"{mode}\"]"));
    assert!(text.contains(mode), "the example starts toy-data with --mode safe");
    let text = text.replace("8080", &free_port().to_string());
    let text = text.replace("env: { ", &format!("env: {{ TEST_TAG: \"{}\", ", scratch.tag));
    let path = scratch.path().join("sealmark.yaml");
    std::fs::write(&path, format!("{text}{extra}")).unwrap();
    path
}

/// sealmark with toy-data on PATH, as the example's `command: toy-data` needs.
fn run(scratch: &Scratch, args: &[&str], env: &[(&str, &str)]) -> Output {
    let bin = sealmark().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = std::process::Command::new(sealmark());
    cmd.args(args).env("PATH", path).env("TMPDIR", scratch.path().join("tmp"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn json_run(scratch: &Scratch, cfg: &Path, env: &[(&str, &str)]) -> (Value, String) {
    let out = run(scratch, &["run", "--format", "json", "--config", cfg.to_str().unwrap()], env);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let record = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("no record ({e}): {stderr}"));
    common::assert_rederived(scratch, &record);
    (record, stderr)
}

fn check_of<'r>(rec: &'r Value, id: &str) -> &'r Value {
    rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no check {id}"))
}

/// Runs one mode and returns what disagrees with the table.
fn mismatches(mode: &str, want: [Verdict; 5], probe: &str) -> Vec<String> {
    let scratch = Scratch::new();
    let (rec, stderr) = json_run(&scratch, &config(&scratch, mode, ""), &[]);
    let mut out = Vec::new();
    // A server that was never reached has no candidate checks at all: say why first.
    if verdict(&rec, "handshake") != Pass {
        return vec![format!("{mode}: the handshake failed: {stderr}")];
    }
    for (id, want) in CHECKS.iter().zip(want) {
        let got = verdict(&rec, id);
        let c = check_of(&rec, id);
        if got != want {
            out.push(format!("{mode}: {id} is {got:?}, expected {want:?}: {}", c["summary"]));
        }
        if want != Pass && !c["evidence"].as_array().unwrap().iter().any(|e| e["probe"] == probe) {
            out.push(format!("{mode}: {id} evidence names no {probe} probe: {}", c["evidence"]));
        }
        if want == Fail && id != &"upstream-credential" {
            let e = c["evidence"].as_array().unwrap().iter().find(|e| e["probe"] == probe).unwrap();
            if e["verifiedBy"] != "upstream" || !e["outcome"].as_str().unwrap().contains("reached the upstream") {
                out.push(format!("{mode}: {id} evidence does not say what reached the stub: {e}"));
            }
        }
    }
    // Not covered says what the two callers cover, and only when their check was judged.
    let several = if matches!(verdict(&rec, "upstream-credential"), Pass | Fail) {
        "several users only as"
    } else {
        "and several users"
    };
    if !rec["notCovered"].as_array().unwrap().iter().any(|l| l.as_str().unwrap().contains(several)) {
        out.push(format!("{mode}: Not covered does not say `{several}`: {}", rec["notCovered"]));
    }
    let text = rec.to_string();
    if text.contains("sm_a_") || text.contains("sm_b_") {
        out.push(format!("{mode}: a minted token reached the record"));
    }
    if !scratch.survivors().is_empty() || !scratch.sandbox_removed() {
        out.push(format!("{mode}: processes or the sandbox were left behind"));
    }
    out
}

/// Every mode of the table, four at a time: a run mostly waits on loopback round trips.
#[test]
fn every_mode_gets_its_expected_verdicts() {
    let mut problems = Vec::new();
    for chunk in EXPECTED.chunks(4) {
        std::thread::scope(|s| {
            let handles: Vec<_> =
                chunk.iter().map(|(mode, want, probe)| s.spawn(move || mismatches(mode, *want, probe))).collect();
            for h in handles {
                problems.extend(h.join().expect("a mode's run panicked"));
            }
        });
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The page's example config, exactly as written (toy-data on 127.0.0.1:8080).
#[test]
fn the_example_config_runs_as_written() {
    let scratch = Scratch::new();
    let cfg = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/config/scoped-http.yaml");
    let out = run(&scratch, &["run", "--config", cfg.to_str().unwrap()], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    // toy-data checks no credential itself (it forwards each caller's to its backend), so
    // the http pack fails it, and the run exits 1 below the A gate.
    assert_eq!(out.status.code(), Some(1), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for line in [
        "· STANDARD ·",
        "[FAIL] A missing or wrong credential gets 401 with WWW-Authenticate — accepted: no credential",
        "[PASS] A foreign Origin is refused (DNS rebinding)",
        "scope was declared in the config (scope.tools), so the pack is included (candidate pack)",
        "PACK scope  GRADE A  (1/1 points, 100%)  candidate pack",
        "PACK sql-guard  GRADE A  (3/3 points, 100%)  candidate pack",
        "PACK upstream  GRADE A  (1/1 points, 100%)  candidate pack",
        "header:Authorization=Bearer {bearer}",
        "Badge: eligible (a STANDARD run with a graded pack beyond core).",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    assert!(scratch.sandbox_removed());
    // The page that shows this example says what it demonstrates, and why it exits 1.
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../site/backend.md")).unwrap();
    assert!(page.contains("fixtures/config/scoped-http.yaml") && page.contains("http pack grades D here on purpose"));
}

/// A server that accepts only tokens it issued refuses the minted ones; the check says
/// so and points at identities, which then make it measurable. Tokens never reach a report.
#[test]
fn refused_minted_tokens_point_at_identities() {
    let scratch = Scratch::new();
    let with_tokens = |extra: &str| {
        let cfg = config(&scratch, "own-tokens-only", extra);
        let text =
            std::fs::read_to_string(&cfg).unwrap().replace("env: { ", "env: { TOY_TOKENS: \"tok-alice-1,tok-bob-2\", ");
        std::fs::write(&cfg, text).unwrap();
        cfg
    };
    let (rec, _) = json_run(&scratch, &with_tokens(""), &[]);
    assert_eq!(verdict(&rec, "upstream-credential"), Inconclusive);
    let summary = check_of(&rec, "upstream-credential")["summary"].as_str().unwrap().to_string();
    assert!(summary.contains("refused the minted token {bearer:a}") && summary.contains("identities.a"), "{summary}");

    let cfg = with_tokens("identities: { a: '${TOY_A}', b: '${TOY_B}' }\n");
    let (rec, _) = json_run(&scratch, &cfg, &[("TOY_A", "tok-alice-1"), ("TOY_B", "tok-bob-2")]);
    for id in CHECKS {
        assert_eq!(verdict(&rec, id), Pass, "{id}: {}", check_of(&rec, id)["summary"]);
    }
    let text = rec.to_string();
    assert!(!text.contains("tok-alice-1") && !text.contains("tok-bob-2"), "a token reached the record");
    let out = std::process::Command::new(sealmark()).args(["schema", "record"]).output().unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<String> =
        jsonschema::validator_for(&schema).unwrap().iter_errors(&rec).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "the record fits its schema: {errors:#?}");
    assert!(text.contains("{bearer:a}"), "evidence names the caller by placeholder");

    let out = run(&scratch, &["run", "--config", cfg.to_str().unwrap()], &[("TOY_A", "tok-alice-1")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("identities.b: the environment variable TOY_B is not set"), "{err}");
}

/// A pack list the user chose is left alone, and the report says what was skipped.
#[test]
fn a_chosen_pack_list_skips_declared_candidate_packs() {
    let scratch = Scratch::new();
    let cfg = config(&scratch, "no-scope-check", "");
    let out = run(&scratch, &["run", "--pack", "core,sql-guard", "--config", cfg.to_str().unwrap()], &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("PACK scope  not graded: scope is declared in the config but not in the pack list you chose"),
        "{text}"
    );
    assert!(text.contains("PACK sql-guard  GRADE A"), "{text}");
    assert!(!text.contains("Identifiers outside the declared scope"), "scope probes ran: {text}");
    // The candidate packs gate like any graded pack: the user declared them.
    let out = run(&scratch, &["run", "--config", cfg.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Mistakes in the backend keys are the user's: exit 2, file, line, key, did-you-mean.
#[test]
fn backend_config_mistakes_exit_2_with_file_line_and_key() {
    let scratch = Scratch::new();
    let cases: &[(&str, &str, &str)] = &[
        (
            "describe_table, param: table",
            "describe_tabel, param: table",
            "scope.tools[0].tool: the server declares no tool \"describe_tabel\" (did you mean `describe_table`?)",
        ),
        (
            "count_rows, param: table",
            "count_rows, param: tabel",
            "scope.tools[1].param: count_rows has no parameter \"tabel\" (did you mean `table`?)",
        ),
    ];
    for (from, to, want) in cases {
        let cfg = config(&scratch, "safe", "");
        let text = std::fs::read_to_string(&cfg).unwrap().replace(from, to);
        std::fs::write(&cfg, text).unwrap();
        let out = run(&scratch, &["run", "--config", cfg.to_str().unwrap()], &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("sealmark.yaml:{}: {want}", line_of(&cfg, to))), "{err}");
        assert!(out.stdout.is_empty(), "a report was written");
        assert!(scratch.survivors().is_empty());
    }
    let static_cases: &[(&str, &str)] = &[
        ("identities: { a: literal-token, b: '${B}' }\n", "identities.a: write the token as ${VARIABLE}"),
        (
            "scope:\n  tools: [{ tool: q, param: x }]\n",
            "scope.allow: scope.tools names a tool, so scope.allow must say",
        ),
    ];
    for (yaml, want) in static_cases {
        let path = scratch.path().join("bad.yaml");
        let text = format!("server:\n  command: x\n  env: {{ B: \"{{bearer}}\" }}\n{yaml}");
        std::fs::write(&path, text).unwrap();
        let out = run(&scratch, &["run", "--config", path.to_str().unwrap()], &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
        assert!(err.contains("bad.yaml:3: server.env.B: {bearer} is the caller's credential"), "{err}");
    }
}

fn line_of(cfg: &Path, text: &str) -> usize {
    std::fs::read_to_string(cfg).unwrap().lines().position(|l| l.contains(text)).unwrap() + 1
}

/// `sealmark explain sql-guard-references` prints the facts of the check page.
#[test]
fn explain_sql_guard_references_prints_the_check_page() {
    let out = std::process::Command::new(sealmark()).args(["explain", "sql-guard-references"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for fact in [
        "pack: sql-guard (candidate pack)",
        "weight: critical, candidate",
        "scope: server (judged by what reached the harness's upstream stub, not by the server's reply; no SQL is parsed)",
        "decided by: upstream",
        "since: 0.3-draft",
        "checks.sql-guard-references.enabled, checks.sql-guard-references.severity, scope.allow, scope.separator, sql_tools, upstream.kind",
        "alias-hidden  SELECT * FROM {o} AS {a:last} WHERE 'sm-{token}' = 'sm-{token}' ({a} an in-scope name, {o} <container of scope.allow[0]>.outside_sm_<token>; must not reach the upstream)",
        "This check has no numeric threshold.",
        "a fail caps the pack at D",
        "n/a until scope.allow is set",
    ] {
        assert!(text.contains(fact), "missing {fact:?} in:\n{text}");
    }
    let probes = text.lines().filter(|l| l.contains("must not reach the upstream)")).count();
    assert_eq!(probes, 12, "{text}");
    // The reference page says the same, with the same preface, pack row and sections.
    let reference =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../site/reference/checks.md")).unwrap();
    let page = reference.split("### `sql-guard-references`").nth(1).unwrap().split("\n### ").next().unwrap();
    let preface = "generated from the check registry of sealmark";
    let said = "`sealmark explain sql-guard-references` prints the same text.";
    for (place, text) in [("explain", text.as_ref()), ("checks.md", page)] {
        for fact in [
            preface,
            said,
            "sql-guard (candidate pack) — ",
            "Settings and thresholds",
            "This check has no numeric threshold.",
        ] {
            assert!(text.contains(fact), "{place}: missing {fact:?} in:\n{text}");
        }
    }
    assert!(page.contains("| pack | sql-guard (candidate pack) — "), "{page}");
}

/// The control comes first: an allowed name the server refuses (here a misspelt
/// scope.allow) makes the checks inconclusive with a hint, never a pass.
#[test]
fn a_failed_control_is_inconclusive_with_a_spelling_hint() {
    let scratch = Scratch::new();
    let cfg = config(&scratch, "safe", "");
    let text = std::fs::read_to_string(&cfg).unwrap().replace("[\"sales.public.\"]", "[\"sales.pubilc.\"]");
    std::fs::write(&cfg, text).unwrap();
    let (rec, _) = json_run(&scratch, &cfg, &[]);
    assert_eq!(verdict(&rec, "scope-escape"), Inconclusive);
    let summary = check_of(&rec, "scope-escape")["summary"].as_str().unwrap();
    assert!(summary.contains("\"sales.pubilc.sm_control\" did not reach the upstream"), "{summary}");
    assert!(summary.contains("check the spelling of scope.allow"), "{summary}");
    assert_eq!(verdict(&rec, "sql-guard-references"), Inconclusive);
    assert_eq!(rec["packs"]["scope"]["status"], "inconclusive");
}

#[test]
fn the_table_is_the_registrys_and_fails_every_check() {
    use sealmark_engine::model::Pack;
    let rows: Vec<(&str, Vec<Verdict>)> = EXPECTED.iter().map(|(m, v, _)| (*m, v.to_vec())).collect();
    common::assert_table_covers_registry(&CHECKS, &[Pack::Scope, Pack::SqlGuard, Pack::Upstream], &rows);
}
