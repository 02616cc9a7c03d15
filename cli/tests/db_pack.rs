//! The db pack through the real binary, against a real embedded Postgres the harness
//! starts and seeds: each toy SQL server mode gets the verdicts the table expects, with
//! state-reader evidence naming what changed.

mod common;

use common::{Scratch, toy, verdict};
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
    // Its only SQL tool writes by design (and says so): nothing on the server stops a
    // write, so the read-only checks judge that tool; write-gate passes, as it declares it.
    ("execute-sql", [Fail, Fail, Fail, Fail, Pass, Pass, Pass, Pass, Pass, Pass]),
    // A write tool beside a read tool: the read-only checks judge the reader; row cap and
    // time limit every tool, and the writer has neither.
    ("read-and-write", [Pass, Pass, Fail, Fail, Pass, Pass, Pass, Pass, Pass, Pass]),
    ("with-explain", [Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass]),
    ("shifting-list", [Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass, Pass]),
];

fn check(mode: &str) -> (serde_json::Value, String) {
    let want = EXPECTED.iter().find(|(m, _)| *m == mode).expect("mode in table").1;
    let scratch = Scratch::new();
    // A short probe timeout and time limit keep the runaway-query probe quick (the run is
    // CUSTOM); `a_statement_limit_longer_than_the_probe_timeout_passes` runs the standard.
    let cfg = scratch.config_for(
        &toy("toy-sql"),
        &["--mode", mode],
        "timeout_probe_sec: 5\nchecks:\n  db-timeout: { limit_sec: 3 }\n",
    );
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
/// says writes by design (`role: writer`) is a writer. With no read tool beside it, the
/// read-only checks judge it, and say so on their line.
#[test]
fn sql_tools_replaces_discovery_and_a_lone_writer_is_judged() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(
        &toy("toy-sql"),
        &["--mode", "good"],
        "timeout_probe_sec: 5\nsql_tools: [{ tool: query, arg: sql, role: writer }]\n",
    );
    let text =
        std::fs::read_to_string(&cfg).unwrap().replace("    TEST_TAG:", "    DATABASE_URL: \"{dsn}\"\n    TEST_TAG:");
    std::fs::write(&cfg, text).unwrap();
    let out = scratch.run(&["run", "--format", "json", "--config", cfg.to_str().unwrap()]);
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a record");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-read-only").unwrap();
    assert_eq!(c["verdict"], "pass", "{c}");
    let line = c["summary"].as_str().unwrap();
    assert!(
        line.ends_with(
            "judged on tools that write by design, as no SQL tool is read-only: query (sql_tools role: writer)"
        ),
        "{line}"
    );
}

/// A tool that takes its statements as a list (`shape: array`) is sent a list of the one
/// statement each probe means, and judged by the state reader as any other: the toy that
/// runs each statement read-only passes, the one that runs them read-write fails. The
/// evidence shows the list as it was sent.
#[test]
fn a_tool_that_takes_a_list_of_statements_is_probed_with_lists() {
    let scratch = Scratch::new();
    let run = |mode: &str, sql_tools: &str| {
        let cfg = scratch.config_for(&toy("toy-sql"), &["--mode", mode], &format!("timeout_probe_sec: 5\n{sql_tools}"));
        let text = std::fs::read_to_string(&cfg)
            .unwrap()
            .replace("    TEST_TAG:", "    DATABASE_URL: \"{dsn}\"\n    TEST_TAG:");
        std::fs::write(&cfg, text).unwrap();
        scratch.run(&["run", "--format", "json", "--pack", "db", "--config", cfg.to_str().unwrap()])
    };
    let listed = "sql_tools: [{ tool: run_statements, arg: statements, shape: array }]\n";
    let good: serde_json::Value = serde_json::from_slice(&run("statements", listed).stdout).expect("a record");
    assert_eq!(good["db"]["sqlTools"], serde_json::json!(["run_statements"]));
    assert_eq!(verdict(&good, "db-read-only"), Pass);
    assert_eq!(verdict(&good, "db-mutation-forms"), Pass);
    let bad: serde_json::Value =
        serde_json::from_slice(&run("statements-read-write", listed).stdout).expect("a record");
    assert_eq!(verdict(&bad, "db-read-only"), Fail);
    let c = bad["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-read-only").unwrap();
    let first = &c["evidence"][0];
    assert_eq!(first["verifiedBy"], "state", "{first}");
    let sent = first["args"]["statements"].as_array().unwrap_or_else(|| panic!("a list was sent: {first}"));
    assert_eq!(sent.len(), 1, "{first}");
    assert!(sent[0].as_str().unwrap().to_uppercase().contains("INSERT"), "{first}");
    // Without shape: array the argument is not a string one, and the error says what to write.
    let out = run("statements", "sql_tools: [{ tool: run_statements, arg: statements }]\n");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "sql_tools[0].arg: run_statements has no string argument \"statements\" (it is an array: say shape: array) (its string arguments: none)"
        ),
        "{err}"
    );
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
    let cfg = scratch.config_for(&toy("toy-sql"), &["--mode", "good"], extra);
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
    let cfg = scratch.config_for(&toy("toy-sql"), &["--mode", "good"], "");
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
    assert!(t["summary"].as_str().unwrap().contains("cross-join: no answer within the 3 s limit"), "{}", t["summary"]);
}

#[test]
fn a_guard_refusing_functions_with_limits_passes() {
    let (rec, _) = check("no-functions-bounded");
    let t = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-timeout").unwrap().clone();
    assert!(t["summary"].as_str().unwrap().contains("cross-join: stopped after 2 s"), "{}", t["summary"]);
}

#[test]
fn an_echoed_statement_is_not_a_row() {
    let (rec, _) = check("echo-statement");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "db-row-cap").unwrap().clone();
    assert!(c["summary"].as_str().unwrap().contains("1000 of 100000 rows came back"), "{}", c["summary"]);
}

/// Finds one check of a record.
fn check_of<'r>(rec: &'r serde_json::Value, id: &str) -> &'r serde_json::Value {
    rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()
}

#[test]
fn a_lone_execute_tool_is_judged_and_its_writes_fail() {
    let (rec, _) = check("execute-sql");
    assert_eq!(rec["db"]["sqlTools"], serde_json::json!(["execute_sql"]));
    for id in ["db-read-only", "db-mutation-forms"] {
        let line = check_of(&rec, id)["summary"].as_str().unwrap().to_string();
        assert!(
            line.contains(
                "judged on tools that write by design, as no SQL tool is read-only: execute_sql (its annotations say it writes)"
            ),
            "{id}: {line}"
        );
    }
}

#[test]
fn a_write_tool_beside_a_read_tool_is_left_out_of_the_read_checks_only() {
    let (rec, _) = check("read-and-write");
    assert_eq!(rec["db"]["sqlTools"], serde_json::json!(["read_query", "write_query"]));
    for id in ["db-read-only", "db-mutation-forms"] {
        let c = check_of(&rec, id);
        let line = c["summary"].as_str().unwrap();
        assert!(
            line.contains(
                "left out, as it writes by design beside a read tool: write_query (its annotations say it writes)"
            ),
            "{id}: {line}"
        );
        assert!(
            c["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["tool"] != "write_query" || e["code"] == "db.control.ok"),
            "{c}"
        );
    }
    // The writer is judged where every SQL tool is, and fails there.
    for id in ["db-row-cap", "db-timeout"] {
        let line = check_of(&rec, id)["summary"].as_str().unwrap();
        assert!(line.starts_with("write_query: "), "{id}: {line}");
    }
    // Evidence names the argument the statement went in.
    let e = &check_of(&rec, "db-read-only")["evidence"];
    assert!(e.as_array().unwrap().iter().any(|e| e["args"]["query"].is_string()), "{e}");
    assert!(!e.to_string().contains("\"sql\":"), "{e}");
}

#[test]
fn a_tool_that_only_explains_is_set_aside_once() {
    let (rec, _) = check("with-explain");
    assert_eq!(rec["db"]["sqlTools"], serde_json::json!(["query"]));
    let reasons: Vec<&str> = rec["notCovered"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .filter(|l| l.starts_with("explain_query:"))
        .collect();
    assert_eq!(
        reasons,
        [
            "explain_query: its control answered with a query plan, not rows: it explains SQL and runs none, so no db check judges it"
        ]
    );
    let db: Vec<&serde_json::Value> = rec["checks"].as_array().unwrap().iter().filter(|c| c["pack"] == "db").collect();
    assert_eq!(db.len(), CHECKS.len());
    for c in db {
        assert!(!c.to_string().contains("explain_query"), "{c}");
    }
}

/// The tools toy-sql lists when started with `dsn` as its DATABASE_URL (no database is
/// needed to list them).
fn tools_listed_with(mode: &str, dsn: &str) -> Vec<serde_json::Value> {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(toy("toy-sql"))
        .args(["--mode", mode])
        .env("DATABASE_URL", dsn)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("toy-sql starts");
    let mut stdin = child.stdin.take().unwrap();
    for msg in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{msg}").unwrap();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let listed = loop {
        let line = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())).expect("an answer");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            break v["result"]["tools"].as_array().unwrap().clone();
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    listed
}

/// The toy behind `an_instance_that_lists_its_tool_in_other_words_keeps_it` has the
/// shape it stands for: restarted as another role, its listing reads as a writer.
#[test]
fn the_shifting_toy_lists_its_tool_in_other_words_as_another_role() {
    use sealmark_engine::tools::ToolInfo;
    let first = tools_listed_with("shifting-list", "postgres://sm_analyst:pw@127.0.0.1:1/sealmark_seed");
    let later = tools_listed_with("shifting-list", "postgres://sm_admin:pw@127.0.0.1:1/sealmark_seed");
    let names =
        |tools: &[serde_json::Value]| tools.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(names(&first), ["query"]);
    assert_eq!(names(&later), ["catalog", "query"]);
    let query =
        |tools: &[serde_json::Value]| ToolInfo::from_value(tools.iter().find(|t| t["name"] == "query").unwrap());
    let none = std::collections::BTreeMap::new();
    assert_eq!(sealmark_engine::classify::sql_writes(&query(&first), &none), None);
    assert_eq!(
        sealmark_engine::classify::sql_writes(&query(&later), &none).as_deref(),
        Some("its description says it writes (\"any SQL\")"),
        "classified again from this listing, the tool would be dropped as a writer"
    );
}

#[test]
fn an_instance_that_lists_its_tool_in_other_words_keeps_it() {
    let (rec, _) = check("shifting-list");
    // The main session's classification: a read tool, though later instances list it as "any SQL".
    assert_eq!(rec["observations"]["db"]["writers"], serde_json::json!([]));
    assert_eq!(rec["observations"]["db"]["tools"], serde_json::json!(["query"]));
    assert_eq!(rec["packs"]["db"]["grade"]["letter"], "A");
}

/// In a STANDARD run, a server whose own limit (30 s) is longer than the probe timeout
/// (10 s) stops the runaway statement and passes; the evidence says when.
#[test]
fn a_statement_limit_longer_than_the_probe_timeout_passes() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(&toy("toy-sql"), &["--mode", "limit30s"], "");
    let text =
        std::fs::read_to_string(&cfg).unwrap().replace("    TEST_TAG:", "    DATABASE_URL: \"{dsn}\"\n    TEST_TAG:");
    std::fs::write(&cfg, text).unwrap();
    let out = scratch.run(&["run", "--format", "json", "--config", cfg.to_str().unwrap()]);
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a record");
    assert_eq!(rec["config"]["standard"], true, "{}", rec["config"]);
    let t = check_of(&rec, "db-timeout");
    assert_eq!(t["verdict"], "pass", "{t}");
    assert!(t["summary"].as_str().unwrap().starts_with("query: sleep: stopped after 30 s: "), "{t}");
    assert_eq!(verdict(&rec, "db-read-only"), Pass);
    assert!(scratch.survivors().is_empty());
}

#[test]
fn the_table_is_the_registrys_and_fails_every_check() {
    use sealmark_engine::model::Pack;
    let rows: Vec<(&str, Vec<Verdict>)> = EXPECTED.iter().map(|(m, v)| (*m, v.to_vec())).collect();
    common::assert_table_covers_registry(&CHECKS, &[Pack::Db], &rows);
}
