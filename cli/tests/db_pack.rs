//! The db pack through the real binary, against a real embedded Postgres the harness
//! starts and seeds: each toy SQL server mode gets the verdicts the table expects, with
//! state-reader evidence naming what changed.

mod common;

use common::{Scratch, toy_sql, verdict};
use sealmark_engine::model::Verdict::{self, Fail, Inconclusive as Incl, Part, Pass};

const CHECKS: [&str; 10] = [
    "db-read-only",
    "db-mutation-forms",
    "db-row-cap",
    "db-timeout",
    "rls",
    "pii",
    "pii-masked",
    "db-privilege",
    "write-gate",
    "audit",
];

/// Mode → verdicts, in the order of CHECKS.
const EXPECTED: &[(&str, [Verdict; 10])] = &[
    ("good", [Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass]),
    ("prefix-check", [Pass, Fail, Fail, Fail, Pass, Pass, Pass, Pass, Pass, Pass]),
    ("commit-escape", [Pass, Fail, Fail, Fail, Pass, Pass, Pass, Pass, Pass, Pass]),
    ("subquery-only", [Pass, Part, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass]),
    ("read-write", [Fail, Fail, Fail, Fail, Pass, Pass, Pass, Pass, Fail, Pass]),
    ("no-row-cap", [Pass, Pass, Fail, Pass, Pass, Pass, Pass, Pass, Pass, Pass]),
    ("no-timeout", [Pass, Pass, Pass, Fail, Pass, Pass, Pass, Pass, Pass, Pass]),
    ("admin-always", [Incl, Incl, Incl, Incl, Fail, Fail, Fail, Fail, Incl, Incl]),
    ("silent", [Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Fail]),
    ("broken", [Incl, Incl, Incl, Incl, Incl, Incl, Incl, Incl, Incl, Incl]),
    // A guard that refuses functions by name: the spellings without them decide. Its
    // privilege probe (a short pg_sleep) is refused too, so nothing is seen.
    ("no-functions", [Pass, Pass, Fail, Fail, Pass, Pass, Pass, Incl, Pass, Pass]),
    ("no-functions-bounded", [Pass, Pass, Pass, Pass, Pass, Pass, Pass, Incl, Pass, Pass]),
    // Echoing the statement above exactly row_cap rows is not a row too many.
    ("echo-statement", [Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass]),
];

fn check(mode: &str) -> (serde_json::Value, String) {
    let want = EXPECTED.iter().find(|(m, _)| *m == mode).expect("mode in table").1;
    let scratch = Scratch::new();
    // A short probe timeout keeps the runaway-query probe quick (the run is CUSTOM).
    let cfg = scratch.config_for(&toy_sql(), &["--mode", mode], "timeout_probe_sec: 5\n");
    let text =
        std::fs::read_to_string(&cfg).unwrap().replace("    TEST_TAG:", "    DATABASE_URL: \"{dsn}\"\n    TEST_TAG:");
    std::fs::write(&cfg, text).unwrap();
    let out = scratch.run(&["run", "--format", "json", "--config", cfg.to_str().unwrap()]);
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a record");
    common::assert_rederived(&scratch, &rec);
    for (id, want) in CHECKS.iter().zip(want) {
        let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == *id).unwrap();
        assert_eq!(verdict(&rec, id), want, "mode {mode}, {id}: {}", c["summary"]);
        if matches!(want, Fail | Part) {
            let first = &c["evidence"][0];
            assert!(first["role"].is_string() || *id == "audit", "the deciding evidence names the role: {first}");
            if ["db-read-only", "db-mutation-forms"].contains(id) {
                assert_eq!(first["verifiedBy"], "state", "{first}");
                assert!(first["outcome"].as_str().unwrap().contains("the state reader saw: "), "{first}");
            }
        }
    }
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes");
    (rec, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `sql_tools` means one thing everywhere: given, it replaces discovery, and a tool it
/// says writes by design (`role: writer`) is left out of the read-only checks, by name.
#[test]
fn sql_tools_replaces_discovery_and_a_writer_is_left_out() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(
        &toy_sql(),
        &["--mode", "good"],
        "timeout_probe_sec: 5\nsql_tools: [{ tool: query, arg: sql, role: writer }]\n",
    );
    let text =
        std::fs::read_to_string(&cfg).unwrap().replace("    TEST_TAG:", "    DATABASE_URL: \"{dsn}\"\n    TEST_TAG:");
    std::fs::write(&cfg, text).unwrap();
    let out = scratch.run(&["run", "--format", "json", "--config", cfg.to_str().unwrap()]);
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a record");
    assert_eq!(rec["packs"]["db"]["reason"], "no sql tool found", "{}", rec["packs"]["db"]);
    let blind = rec["notCovered"].to_string();
    assert!(blind.contains("query: a SQL tool that writes by design (sql_tools role: writer)"), "{blind}");
    // A shape the packs cannot send is refused, not ignored.
    let array = scratch.config_for(&toy_sql(), &[], "sql_tools: [{ tool: query, arg: sql, shape: array }]\n");
    let out = scratch.run(&["run", "--config", array.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sql_tools[0].shape: array is not supported"), "{err}");
}

#[test]
fn a_correct_read_only_server_passes() {
    let (rec, _) = check("good");
    assert_eq!(rec["db"]["used"], true);
    assert_eq!(rec["db"]["seed"], "0.2", "the seed version is a field of its own");
    assert_eq!(rec["db"]["sqlTools"], serde_json::json!(["query"]), "and so are the SQL tools used");
    assert_eq!(rec["packs"]["db"]["grade"]["letter"], "A");
    let blind = rec["notCovered"].as_array().unwrap();
    assert!(blind.iter().any(|l| l.as_str().unwrap().starts_with("databases and policy shapes beyond the seed")));
    assert!(!blind.iter().any(|l| l.as_str().unwrap().starts_with("audit logging")), "{blind:?}");
}

#[test]
fn a_select_prefix_check_fails_the_indirect_forms() {
    let (rec, _) = check("prefix-check");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-mutation-forms").unwrap().clone();
    assert!(
        c["summary"].as_str().unwrap().contains("cte-insert on query (probe_t gained a row (sm-cte))"),
        "{}",
        c["summary"]
    );
}

#[test]
fn a_read_only_transaction_ended_by_commit_fails() {
    let (rec, _) = check("commit-escape");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-mutation-forms").unwrap().clone();
    assert!(c["summary"].as_str().unwrap().contains("commit-escape on query"), "{}", c["summary"]);
}

#[test]
fn a_non_core_form_alone_scores_critical_part_and_says_so() {
    let (rec, stderr) = check("subquery-only");
    assert_eq!(rec["packs"]["db"]["grade"]["capped"], false);
    assert!(stderr.contains("sealmark: critical part: db-mutation-forms"), "{stderr}");
}

#[test]
fn a_read_write_server_fails_the_write_checks() {
    let (rec, _) = check("read-write");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-read-only").unwrap().clone();
    let outcomes: Vec<&str> =
        c["evidence"].as_array().unwrap().iter().map(|e| e["outcome"].as_str().unwrap()).collect();
    for seen in [
        "probe_t gained a row (sm-write)",
        "1 tenant_notes row(s) changed tenant",
        "1 tenant_notes row(s) were deleted",
        "table sm_ddl_probe was created",
        "table audit_probe was dropped",
    ] {
        assert!(outcomes.iter().any(|o| o.contains(seen)), "missing {seen}: {outcomes:?}");
    }
}

#[test]
fn no_row_cap_fails_db_row_cap() {
    check("no-row-cap");
}

#[test]
fn no_statement_timeout_fails_db_timeout() {
    check("no-timeout");
}

#[test]
fn connecting_as_a_superuser_defeats_the_database_controls() {
    let (rec, _) = check("admin-always");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-privilege").unwrap().clone();
    assert!(
        c["summary"].as_str().unwrap().contains("the sm_analyst instance connected as sm_super"),
        "{}",
        c["summary"]
    );
    assert_eq!(c["evidence"][0]["verifiedBy"], "state");
}

#[test]
fn a_server_that_keeps_no_record_fails_audit() {
    check("silent");
}

#[test]
fn a_failed_control_is_inconclusive_never_pass() {
    check("broken");
}

#[test]
fn sql_tools_replaces_discovery_and_a_wrong_entry_is_a_config_error() {
    let scratch = Scratch::new();
    let extra = "sql_tools:\n  - tool: querry\n    arg: sql\n  - tool: query\n    arg: statement\n";
    let cfg = scratch.config_for(&toy_sql(), &["--mode", "good"], extra);
    let text =
        std::fs::read_to_string(&cfg).unwrap().replace("    TEST_TAG:", "    DATABASE_URL: \"{dsn}\"\n    TEST_TAG:");
    std::fs::write(&cfg, &text).unwrap();
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let file = cfg.display();
    assert!(
        err.contains(&format!(
            "{file}:8: sql_tools[0].tool: the server declares no tool \"querry\" (did you mean `query`?)"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{file}:11: sql_tools[1].arg: query has no string argument \"statement\" (its string arguments: sql)"
        )),
        "{err}"
    );
    assert!(scratch.survivors().is_empty());

    std::fs::write(&cfg, text.replace("querry", "query").replace("arg: statement", "arg: sql")).unwrap();
    let out = scratch.run(&["run", "--format", "json", "--config", cfg.to_str().unwrap()]);
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a record");
    assert_eq!(verdict(&rec, "db-read-only"), Pass);
}

#[test]
fn pg_seeds_a_postgres_the_user_controls() {
    // The "user's" Postgres: a cluster this test starts itself.
    let mut theirs = sealmark_engine::targets::postgres::EmbeddedPg::start().expect("a cluster");
    let scratch = Scratch::new();
    let cfg = scratch.config_for(&toy_sql(), &["--mode", "good"], "");
    let text =
        std::fs::read_to_string(&cfg).unwrap().replace("    TEST_TAG:", "    DATABASE_URL: \"{dsn}\"\n    TEST_TAG:");
    std::fs::write(&cfg, text).unwrap();
    let dsn = theirs.superuser_url("postgres");
    let out = scratch.run(&["run", "--format", "json", "--pg", &dsn, "--config", cfg.to_str().unwrap()]);
    let rec: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert!(rec["db"]["summary"].as_str().unwrap().starts_with("Postgres from --pg"), "{}", rec["db"]);
    assert_eq!(verdict(&rec, "db-read-only"), Pass);
    assert_eq!(verdict(&rec, "rls"), Pass);
    theirs.stop();
}

#[test]
fn a_guard_refusing_functions_by_name_fails_on_the_spellings_it_takes() {
    let (rec, _) = check("no-functions");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-row-cap").unwrap().clone();
    assert!(c["summary"].as_str().unwrap().contains("row-cap-subquery: 100000 rows came back"), "{}", c["summary"]);
    let t = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-timeout").unwrap().clone();
    assert!(t["summary"].as_str().unwrap().contains("cross-join: still running"), "{}", t["summary"]);
}

#[test]
fn a_guard_refusing_functions_with_limits_passes() {
    let (rec, _) = check("no-functions-bounded");
    let t = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-timeout").unwrap().clone();
    assert!(
        t["summary"].as_str().unwrap().contains("cross-join: stopped before the probe timeout"),
        "{}",
        t["summary"]
    );
}

#[test]
fn an_echoed_statement_is_not_a_row() {
    let (rec, _) = check("echo-statement");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-row-cap").unwrap().clone();
    assert!(c["summary"].as_str().unwrap().contains("1000 of 100000 rows came back"), "{}", c["summary"]);
}
