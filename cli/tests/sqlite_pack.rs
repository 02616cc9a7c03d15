//! The sqlite pack through the real binary, against the seeded SQLite file the harness
//! makes: each toy SQLite server mode gets the verdicts the table expects.

mod common;

use common::{Scratch, record_of, toy_sqlite, verdict};
use sealmark_engine::model::Verdict::{self, Fail, Pass};

const CHECKS: [&str; 6] = [
    "sqlite-read-only",
    "sqlite-mutation-forms",
    "sqlite-attach",
    "sqlite-load-extension",
    "sqlite-row-cap",
    "sqlite-timeout",
];

/// Mode → verdicts, in the order of CHECKS.
const EXPECTED: &[(&str, [Verdict; 6])] = &[
    ("good", [Pass, Pass, Pass, Pass, Pass, Pass]),
    ("prefix-check", [Pass, Fail, Pass, Pass, Pass, Pass]),
    ("read-write", [Fail, Fail, Pass, Pass, Pass, Pass]),
    ("attach-allowed", [Pass, Pass, Fail, Pass, Pass, Pass]),
    ("load-extension", [Pass, Pass, Pass, Fail, Pass, Pass]),
    ("no-row-cap", [Pass, Pass, Pass, Pass, Fail, Pass]),
    ("no-timeout", [Pass, Pass, Pass, Pass, Pass, Fail]),
];

fn check(mode: &str) -> serde_json::Value {
    let want = EXPECTED.iter().find(|(m, _)| *m == mode).expect("mode in table").1;
    let scratch = Scratch::new();
    let cfg = scratch.config_for(&toy_sqlite(), &["--mode", mode, "{sqlite}"], "timeout_probe_sec: 6\n");
    let (rec, _) = record_of(&scratch, &cfg);
    for (id, want) in CHECKS.iter().zip(want) {
        let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == *id).unwrap();
        assert_eq!(verdict(&rec, id), want, "mode {mode}, {id}: {}", c["summary"]);
        if want == Fail {
            assert!(c["evidence"][0]["tool"] == "query", "{}", c["evidence"][0]);
        }
    }
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes");
    assert!(scratch.sandbox_removed());
    rec
}

#[test]
fn a_read_only_sqlite_server_passes() {
    let rec = check("good");
    assert_eq!(rec["packs"]["sqlite"]["grade"]["letter"], "A");
}

#[test]
fn a_select_prefix_check_lets_stacked_writes_through() {
    check("prefix-check");
}

#[test]
fn a_writable_connection_fails_read_only() {
    let rec = check("read-write");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sqlite-read-only").unwrap().clone();
    assert!(c["summary"].as_str().unwrap().contains("insert on query (probe_t:  → sm-write)"), "{}", c["summary"]);
}

#[test]
fn vacuum_into_a_file_outside_the_sandbox_fails_attach() {
    let rec = check("attach-allowed");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sqlite-attach").unwrap().clone();
    assert!(c["summary"].as_str().unwrap().contains("{canary}/sm-vacuum.db was created"), "{}", c["summary"]);
    assert_eq!(c["evidence"][0]["verifiedBy"], "sandbox");
}

#[test]
fn enabled_extension_loading_fails() {
    check("load-extension");
}

#[test]
fn uncapped_rows_fail() {
    check("no-row-cap");
}

#[test]
fn an_unbounded_query_fails() {
    check("no-timeout");
}

#[test]
fn without_the_placeholder_the_pack_says_why_it_did_not_run() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(&toy_sqlite(), &["/nonexistent.sqlite"], "");
    let (rec, _) = record_of(&scratch, &cfg);
    assert_eq!(
        rec["packs"]["sqlite"]["reason"],
        "server config has no {sqlite} placeholder, so the harness cannot point the server at its seeded file"
    );
}
