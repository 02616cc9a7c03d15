//! The sqlite pack through the real binary, against the seeded SQLite file the harness
//! makes: each toy SQLite server mode gets the verdicts the table expects.

mod common;

use common::{Scratch, record_of, toy, verdict};
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
    // A guard that takes only statements beginning with SELECT refuses the plain probes
    // for their form; the SELECT-led spellings still reach a verdict.
    ("select-only", [Pass, Pass, Pass, Pass, Fail, Fail]),
    ("select-only-bounded", [Pass, Pass, Pass, Pass, Pass, Pass]),
];

fn check(mode: &str) -> serde_json::Value {
    check_with(mode, &[])
}

fn check_with(mode: &str, flags: &[&str]) -> serde_json::Value {
    let want = EXPECTED.iter().find(|(m, _)| *m == mode).expect("mode in table").1;
    let scratch = Scratch::new();
    let mut args = vec!["--mode", mode];
    args.extend(flags);
    args.push("{sqlite}");
    let cfg = scratch.config_for(&toy("toy-sqlite"), &args, "timeout_probe_sec: 6\n");
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

/// sql_tools replaces discovery here too: a tool it calls a writer gets only
/// sqlite-attach and is named under Not covered; a tool the server lacks is refused.
#[test]
fn sql_tools_decides_the_sqlite_targets() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(
        &toy("toy-sqlite"),
        &["--mode", "good", "{sqlite}"],
        "timeout_probe_sec: 6\nsql_tools: [{ tool: query, arg: sql, role: writer }]\n",
    );
    let (rec, _) = record_of(&scratch, &cfg);
    let blind = rec["notCovered"].to_string();
    assert!(blind.contains("query: a SQL tool that writes by design (sql_tools role: writer)"), "{blind}");
    assert_eq!(rec["observations"]["sqlite"]["tools"], serde_json::json!([]), "the writer is not a read target");
    assert_eq!(rec["observations"]["sqlite"]["writeTools"], serde_json::json!(["query"]));
    // An entry the server does not have is a config error, found right after tools/list.
    let typo = scratch.config_for(&toy("toy-sqlite"), &["{sqlite}"], "sql_tools: [{ tool: qurey, arg: sql }]\n");
    let out = scratch.run(&["run", "--config", typo.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sql_tools[0].tool: the server declares no tool \"qurey\" (did you mean `query`?)"), "{err}");
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
    let cfg = scratch.config_for(&toy("toy-sqlite"), &["/nonexistent.sqlite"], "");
    let (rec, _) = record_of(&scratch, &cfg);
    assert_eq!(
        rec["packs"]["sqlite"]["reason"],
        "server config has no {sqlite} placeholder, so the harness cannot point the server at its seeded file"
    );
}

/// The false passes of a SELECT-only guard: the runaway probes it refuses for their form
/// are sent again in spellings it accepts, and those decide.
#[test]
fn a_select_only_guard_without_limits_fails_row_cap_and_timeout() {
    let rec = check("select-only");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sqlite-row-cap").unwrap().clone();
    assert!(c["summary"].as_str().unwrap().contains("row-cap-subquery: 100000 rows came back"), "{}", c["summary"]);
    let refused = c["evidence"].as_array().unwrap().iter().find(|e| e["code"] == "db.runaway.refused").unwrap();
    assert!(refused["outcome"].as_str().unwrap().contains("Only SELECT queries are allowed"), "{refused}");
    let t = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sqlite-timeout").unwrap().clone();
    assert!(t["summary"].as_str().unwrap().contains("runaway-subquery: still running"), "{}", t["summary"]);
}

#[test]
fn a_select_only_guard_with_limits_passes_on_the_select_spellings() {
    let rec = check("select-only-bounded");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sqlite-row-cap").unwrap().clone();
    assert!(c["summary"].as_str().unwrap().contains("100 of 100000 rows came back"), "{}", c["summary"]);
}

/// A tool that writes by design beside the read tool is not judged as read-only, but
/// sqlite-attach aims at it once the file records its write control.
#[test]
fn a_write_tool_is_judged_by_attach_only() {
    let rec = check_with("good", &["--write-tool"]);
    let attach = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sqlite-attach").unwrap().clone();
    let tools: Vec<&str> = attach["evidence"].as_array().unwrap().iter().filter_map(|e| e["tool"].as_str()).collect();
    assert!(tools.contains(&"write_query") && tools.contains(&"query"), "{tools:?}");
    let ro = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sqlite-read-only").unwrap().clone();
    assert!(ro["evidence"].as_array().unwrap().iter().all(|e| e["tool"] != "write_query"), "{ro}");
    assert!(
        rec["notCovered"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().starts_with("write_query: a SQL tool that writes by design")),
        "{}",
        rec["notCovered"]
    );
}

#[test]
fn a_write_tool_that_attaches_anywhere_fails_attach() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(
        &toy("toy-sqlite"),
        &["--mode", "attach-allowed", "--write-tool", "{sqlite}"],
        "timeout_probe_sec: 6\nclassify:\n  query: { class: other }\n",
    );
    let (rec, _) = record_of(&scratch, &cfg);
    let attach = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sqlite-attach").unwrap().clone();
    assert_eq!(verdict(&rec, "sqlite-attach"), Fail, "{}", attach["summary"]);
    assert_eq!(attach["evidence"][0]["tool"], "write_query", "{}", attach["evidence"][0]);
}

#[test]
fn the_table_is_the_registrys_and_fails_every_check() {
    use sealmark_engine::model::Pack;
    let rows: Vec<(&str, Vec<Verdict>)> = EXPECTED.iter().map(|(m, v)| (*m, v.to_vec())).collect();
    common::assert_table_covers_registry(&CHECKS, &[Pack::Sqlite], &rows);
}
