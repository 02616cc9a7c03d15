//! `probes:` through the real binary: the page's custom checks against the toy
//! servers, valid calls, every refusal (exit 2), `--active`, `init` and `doctor`.

mod common;

use common::{Scratch, sealmark, toy, verdict};
use sealmark_engine::model::Verdict::{Fail, Na, Pass};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

const DELETE_CHECK: &str = r#"probes:
  - tool: read_file
    args: { path: "{sandbox}/ok.txt" }
  - id: delete-outside-root
    check:
      id: custom-delete-scope
      label: delete refuses paths outside the root
      critical: true
      scope: server
    tool: delete_file
    args: { path: "{canary}/secret.txt" }
    expect:
      is_error: true
      files:
        unchanged: ["{canary}/secret.txt"]
"#;

fn toy_config(scratch: &Scratch, args: &[&str], extra: &str) -> PathBuf {
    scratch.config_for(&toy("toy-server"), args, extra)
}

fn text_run(scratch: &Scratch, args: &[&str]) -> (String, String, i32) {
    let out = scratch.run(args);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn json_of(scratch: &Scratch, cfg: &Path, extra_args: &[&str]) -> Value {
    let mut args = vec!["run", "--format", "json", "--config", cfg.to_str().unwrap()];
    args.extend_from_slice(extra_args);
    let out = scratch.run(&args);
    let record = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no record ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    common::assert_rederived(scratch, &record);
    record
}

#[test]
fn the_delete_example_passes_on_a_careful_server_and_fails_on_one_that_deletes_anywhere() {
    let scratch = Scratch::new();
    let cfg = toy_config(&scratch, &["--delete", "{sandbox}"], &format!("packs: [core, custom]\n{DELETE_CHECK}"));
    let rec = json_of(&scratch, &cfg, &[]);
    assert_eq!(verdict(&rec, "custom-delete-scope"), Pass);
    assert_eq!(rec["config"]["profile"], "custom");
    assert!(rec["config"]["standardDiff"][0].as_str().unwrap().contains("custom-delete-scope"));
    assert_eq!(rec["probes"]["calls"][0]["name"], "read_file#1");
    assert_eq!(rec["custom"]["probes"][0]["verdict"], "pass");
    assert!(rec["probes"]["calls"][0]["elapsedMs"].is_u64());
    assert_eq!(rec["coverage"]["toolsCalledValid"], 1);
    // A real record with probes and custom checks fits the published record schema.
    let out = std::process::Command::new(sealmark()).args(["schema", "record"]).output().unwrap();
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<String> =
        jsonschema::validator_for(&schema).unwrap().iter_errors(&rec).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");

    let cfg = toy_config(
        &scratch,
        &["--mode", "delete-anywhere", "{sandbox}"],
        &format!("packs: [core, custom]\n{DELETE_CHECK}"),
    );
    let (text, _, code) = text_run(&scratch, &["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    for line in [
        "· CUSTOM ·",
        "PACK custom  GRADE F  (0/1 points, 0%)  custom grade",
        "[FAIL] delete refuses paths outside the root — 1 of 1 probe(s) failed: delete-outside-root: expected is_error true, the tool reported success, {canary}/secret.txt was changed, added or removed",
        "Badge: not eligible (a CUSTOM run).",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    // Every text format says why the run is CUSTOM, and with which configuration hash.
    let rec = json_of(&scratch, &cfg, &[]);
    let why = format!("differs from the standard profile: {}", rec["config"]["standardDiff"][0].as_str().unwrap());
    let hash = format!("config.hash: {}", rec["config"]["hash"].as_str().unwrap());
    for format in ["text", "markdown", "summary"] {
        let (report, _, _) = text_run(&scratch, &["run", "--config", cfg.to_str().unwrap(), "--format", format]);
        let report = report.replace('\\', "");
        assert!(report.contains(&why) && report.contains(&hash), "{format} does not say why:\n{report}");
    }
    assert!(scratch.sandbox_removed() && scratch.survivors().is_empty());
}

/// The page's two backend rules, on the toy data server: each passes on the safe mode
/// and fails on the mode that breaks it.
#[test]
fn the_backend_examples_judge_what_reached_the_stub_and_the_reply() {
    let rules = r#"  - id: agg-never-rows
    check: { id: custom-aggregate-only, label: count_rows never returns raw rows, scope: server, critical: true }
    tool: count_rows
    args: { table: sales.public.orders }
    upstream: { reply: { status: 200, json: { rows: [{ id: 1, note: "{upstream_token}" }], count: 1 } } }
    expect: { is_error: false, upstream: { requests: any, token_echoed: false } }
  - id: big-reply-capped
    check: { id: custom-byte-cap, label: replies are capped at 1 MiB, scope: server }
    tool: query
    args: { sql: "SELECT * FROM sales.public.orders WHERE 'sm-{token}' = 'sm-{token}'" }
    upstream: { reply: { bytes: 20971520, body: "{\"rows\":[\"{upstream_token}\"]}" } }
    expect: { response: { max_bytes: 1048576 } }
  - id: as-caller-b
    check: { id: custom-caller-b, label: caller b's calls carry a bearer token, scope: server }
    identity: b
    tool: count_rows
    args: { table: sales.public.orders }
    expect: { upstream: { header: { authorization: { matches: "^Bearer " } } }, log: { not_matches: panicked } }
"#;
    let example =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/config/scoped-http.yaml"))
            .unwrap();
    let bin = sealmark().parent().unwrap().to_path_buf();
    let cases =
        [("safe", [Pass, Pass, Pass]), ("raw-count-reply", [Fail, Pass, Pass]), ("uncapped-reply", [Pass, Fail, Pass])];
    std::thread::scope(|s| {
        for (mode, want) in cases {
            let (example, bin) = (&example, &bin);
            s.spawn(move || {
                let scratch = Scratch::new();
                let port = common::free_port();
                let text = example
                    .replace("\"--mode\", \"safe\"", &format!("\"--mode\", \"{mode}\""))
                    .replace("8080", &port.to_string());
                let cfg = scratch.path().join("sealmark.yaml");
                std::fs::write(&cfg, format!("{text}{rules}")).unwrap();
                let out = std::process::Command::new(sealmark())
                    .args(["run", "--format", "json", "--pack", "core,custom", "--config", cfg.to_str().unwrap()])
                    .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()))
                    .env("TMPDIR", scratch.path().join("tmp"))
                    .output()
                    .unwrap();
                let rec: Value = serde_json::from_slice(&out.stdout)
                    .unwrap_or_else(|e| panic!("{mode}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
                for (id, want) in ["custom-aggregate-only", "custom-byte-cap", "custom-caller-b"].iter().zip(want) {
                    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == *id).unwrap();
                    assert_eq!(verdict(&rec, id), want, "{mode} {id}: {}", c["summary"]);
                }
                if mode == "raw-count-reply" {
                    let c =
                        rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "custom-aggregate-only").unwrap();
                    assert!(c["summary"].as_str().unwrap().contains("a marker the stub sent came back"), "{c}");
                }
                assert!(!rec.to_string().contains("smup"), "{mode}: a stub marker reached the record");
            });
        }
    });
}

/// A valid call whose expect does not hold is a warning, not a verdict, and keeps the
/// run STANDARD; a listener clause reads the harness's own listener.
#[test]
fn valid_calls_warn_and_keep_the_run_standard() {
    let scratch = Scratch::new();
    let probes = r#"probes:
  - { id: fetch-listener, tool: fetch, args: { url: "{listener}/t/{token}" }, expect: { listener: hit, duration_ms: { max: 5000 } } }
  - { id: wrong-guess, tool: fetch, args: { url: "{listener}/t/{token}" }, expect: { text: { matches: "no such text" } } }
"#;
    let cfg = scratch.config_for(&toy("toy-fetch"), &["--allow", "{listener}"], &format!("packs: [core]\n{probes}"));
    let (text, err, code) = text_run(&scratch, &["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}{err}");
    assert!(text.contains("· STANDARD ·"), "{text}");
    assert!(
        text.contains("Warnings (valid calls whose expect did not hold; not a verdict):\n  - wrong-guess (fetch): the text does not match /no such text/"),
        "{text}"
    );
    assert!(!text.contains("fetch-listener (fetch)"), "the listener clause held: {text}");
}

/// Everything validation can refuse without the server, at once: exit 2, file, line,
/// key, and nothing started.
#[test]
fn every_static_refusal_is_reported_at_once_with_exit_2() {
    let scratch = Scratch::new();
    let probes = r#"probes:
  - { tool: read_file, args: { path: "{sandbox}/ok.txt" }, expct: { is_error: false } }
  - { id: dup, tool: read_file, args: { path: "{sandbox}/ok.txt" } }
  - { id: dup, tool: read_file, args: { path: "{sandbox}/ok.txt" } }
  - { tool: read_file, check: { id: custom-a, label: a, scope: server }, expect: { is_error: true } }
  - { id: no-expect, tool: read_file, check: { id: custom-b, label: b, scope: server } }
  - { id: bad-regex, tool: read_file, expect: { text: { matches: "([" } } }
  - { id: builtin, tool: read_file, check: { id: fs-read-escape, label: c, scope: server }, expect: { is_error: true } }
  - { id: meta-1, tool: read_file, check: { id: custom-m, label: one, scope: server }, expect: { is_error: true } }
  - { id: meta-2, tool: read_file, check: { id: custom-m, label: two, scope: server }, expect: { is_error: true } }
  - { id: climbs, tool: read_file, args: { path: "{sandbox}/../../etc/passwd" } }
  - { id: encoded, tool: read_file, args: { path: "{canary}/%2e%2e/x" } }
  - { id: dots, tool: read_file, args: { path: "{sandbox}/.../x" } }
  - { id: leaves, tool: read_file, args: { path: "{listener}@example.com/" } }
  - { id: backend, tool: read_file, args: { path: "{upstream}/x" } }
  - { id: caller, tool: read_file, args: { path: "{bearer}" } }
"#;
    let cfg = toy_config(&scratch, &["{sandbox}"], probes);
    let (_, err, code) = text_run(&scratch, &["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    let want = [
        ":7: probes[0].expct: unknown key (did you mean `expect`?)",
        ":9: probes[2].id: the probe id \"dup\" is used twice",
        ":10: probes[3]: a probe with a check needs an id",
        ":11: probes[4].expect: check custom-b needs at least one expect clause",
        ":12: probes[5].expect.text.matches: \"([\" is not a valid regular expression",
        ":13: probes[6].check.id: \"fs-read-escape\" is a built-in check",
        ":15: probes[8].check: check \"custom-m\" is declared with another label",
        ":16: probes[9].args: \"{sandbox}/../../etc/passwd\": a segment made only of dots",
        ":17: probes[10].args: \"{canary}/%2e%2e/x\": a percent-encoded dot or slash",
        ":18: probes[11].args: \"{sandbox}/.../x\": a segment made only of dots",
        ":19: probes[12].args: \"{listener}@example.com/\": a URL must continue {listener} with a path",
        ":20: probes[13].args: \"{upstream}/x\": {upstream} is the server's backend",
        ":21: probes[14].args: \"{bearer}\": {bearer} is chosen by identity",
    ];
    for w in want {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
    assert!(scratch.survivors().is_empty() && scratch.sandbox_removed());
}

/// One pass finds every problem: what the file refutes as written and what the server's
/// tools refute, in the order of the file's lines, from one run that starts the server,
/// lists its tools and calls none (the toy would connect to the test's listener on any call).
#[test]
fn problems_as_written_and_against_the_tools_come_in_one_report() {
    let scratch = Scratch::new();
    let calls = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    calls.set_nonblocking(true).unwrap();
    let notify = format!("http://{}/", calls.local_addr().unwrap());
    let extra = r#"probes:
  - { id: typo, tool: read_fil, args: { path: "{sandbox}/ok.txt" } }
  - { id: slow, tool: read_file, timeout_ms: 0, args: { path: "{sandbox}/ok.txt" } }
  - { id: typed, tool: read_file, args: { path: 5 } }
sql_tools:
  - { tool: read_file, arg: path, shape: list }
  - { tool: read_file, arg: nothing }
"#;
    let cfg = toy_config(&scratch, &["--mode", "phones-home", "--notify", &notify], extra);
    let text = std::fs::read_to_string(&cfg).unwrap();
    let line = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let (out, err, code) = text_run(&scratch, &["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "a report was printed");
    let wanted = [
        format!(
            "sealmark.yaml:{}: probes[0].tool: the server declares no tool \"read_fil\" (did you mean `read_file`?)",
            line("read_fil")
        ),
        format!(
            "sealmark.yaml:{}: probes[1].timeout_ms: expected milliseconds from 1 to 600000, found 0",
            line("timeout_ms")
        ),
        format!(
            "sealmark.yaml:{}: probes[2].args: a valid call must fit read_file's schema: path is 5, where the schema asks for a string",
            line("id: typed")
        ),
        format!("sealmark.yaml:{}: sql_tools[0].shape: expected string or array, found \"list\"", line("shape: list")),
        format!(
            "sealmark.yaml:{}: sql_tools[1].arg: read_file has no string argument \"nothing\" (its string arguments: path)",
            line("arg: nothing")
        ),
    ];
    let mut at = 0;
    for w in &wanted {
        let found = err[at..].find(w.as_str()).unwrap_or_else(|| panic!("missing {w:?}, in order, in:\n{err}"));
        at += found + w.len();
    }
    assert!(err.contains("sealmark: error: 5 problem(s) in "), "{err}");
    assert!(err.contains("to check the config against its tools (no tool is called)"), "{err}");
    assert!(calls.accept().is_err(), "a tool was called");
    // A problem elsewhere in the file leaves the server unstarted and says why the tool
    // checks wait.
    let broken = format!("{}timeout_probe_sec: -1\n", text);
    std::fs::write(&cfg, broken).unwrap();
    let (_, err, code) = text_run(&scratch, &["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("timeout_probe_sec"), "{err}");
    assert!(err.contains("checked against the server's tools once the rest of "), "{err}");
    assert!(!err.contains("declares no tool"), "{err}");
}

/// What needs the server's tool list is refused after tools/list and before any probe:
/// unknown tools, literal targets, commands without active, schema breaks, SQL without a stub.
#[test]
fn refusals_that_need_the_tool_list_exit_2_before_any_probe() {
    let scratch = Scratch::new();
    let probes = r#"probes:
  - { id: typo, tool: read_fil, args: { path: "{sandbox}/ok.txt" } }
  - { id: literal, tool: read_file, args: { path: "/etc/passwd" } }
  - { id: schema, tool: read_file, args: {} }
  - { id: shell, tool: run_command, args: { command: "rm -rf /" }, active: true }
  - { id: passive, tool: run_command, args: { command: "sm-echo hi" } }
classify:
  read_fil: { class: path, param: path }
"#;
    let cfg = toy_config(&scratch, &["--exec", "{sandbox}"], probes);
    let (text, err, code) = text_run(&scratch, &["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 2, "{text}{err}");
    assert!(text.is_empty(), "a report was printed");
    for w in [
        "sealmark.yaml:7: probes[0].tool: the server declares no tool \"read_fil\" (did you mean `read_file`?)",
        "sealmark.yaml:8: probes[1].args.path: \"/etc/passwd\": a path tool must be given a path that starts with {sandbox}",
        "sealmark.yaml:9: probes[2].args: a valid call must fit read_file's schema: the required argument path is missing",
        "sealmark.yaml:10: probes[3].args.command: \"rm -rf /\": a command tool may run only the harness programs sm-echo, sm-canary, sm-sleep, sm-spew",
        "sealmark.yaml:11: probes[4].active: run_command runs commands, so the probe must say active: true",
        // What the tool list refutes elsewhere in the file comes in the same report.
        "classify.read_fil: the server lists no tool \"read_fil\"",
    ] {
        assert!(err.contains(w), "missing {w:?} in:\n{err}");
    }
    let url = scratch.config_for(
        &toy("toy-fetch"),
        &[],
        "probes:\n  - { tool: fetch, args: { url: \"http://127.0.0.1:9/\" } }\n",
    );
    let (_, err, code) = text_run(&scratch, &["run", "--config", url.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("a URL tool must be given a URL that starts with {listener}"), "{err}");
    let sql = scratch.config_for(
        &common::toy("toy-sqlite"),
        &["{sqlite}"],
        "packs: [core]\nprobes:\n  - { tool: query, args: { sql: \"SELECT 1\" } }\n",
    );
    let (_, err, code) = text_run(&scratch, &["run", "--config", sql.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("SQL is sent from probes only when upstream.kind declares a stub"), "{err}");
    assert!(scratch.survivors().is_empty() && scratch.sandbox_removed());
}

/// An active probe runs only with --active; the harness programs are on the server's PATH.
#[test]
fn active_probes_run_only_with_active() {
    let scratch = Scratch::new();
    let probes = r#"packs: [core, custom]
probes:
  - id: canary-runs
    check: { id: custom-runs-harness-programs, label: run_command runs sm-canary, scope: server }
    tool: run_command
    args: { command: "sm-canary" }
    active: true
    expect: { text: { matches: "sm-canary-ran" }, files: { created: ["{sandbox}/sm-canary.txt"] } }
  - id: database-target
    check: { id: custom-no-database-here, label: the database belongs to the db pack, scope: server }
    tool: read_file
    args: { path: "{sandbox}/{dsn}" }
    expect: { is_error: true }
"#;
    let cfg = toy_config(&scratch, &["--exec", "{sandbox}"], probes);
    let rec = json_of(&scratch, &cfg, &[]);
    assert_eq!(verdict(&rec, "custom-runs-harness-programs"), Na);
    let rec = json_of(&scratch, &cfg, &["--active"]);
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "custom-runs-harness-programs").unwrap();
    assert_eq!(verdict(&rec, "custom-runs-harness-programs"), Pass, "{c}");
    assert_eq!(rec["options"]["active"], true, "options.active records the flag: {}", rec["options"]);
    assert_eq!(verdict(&rec, "custom-no-database-here"), sealmark_engine::model::Verdict::Inconclusive);
    assert_eq!(rec["packs"]["custom"]["grade"]["provisional"], false, "not critical: {}", rec["packs"]["custom"]);
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(sealmark()).args(args).current_dir(dir).output().unwrap()
}

#[test]
fn init_writes_a_starter_and_never_overwrites() {
    let scratch = Scratch::new();
    let toy = toy("toy-server");
    let out = run_in(scratch.path(), &["init", "--", toy.to_str().unwrap(), "{sandbox}"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(scratch.path().join("sealmark.yaml")).unwrap();
    assert!(text.contains(&format!("command: {}", toy.display())) && text.contains("args: [\"{sandbox}\"]"), "{text}");
    let out = run_in(scratch.path(), &["init", "--", "other"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sealmark.yaml exists; init never overwrites"));
    assert_eq!(std::fs::read_to_string(scratch.path().join("sealmark.yaml")).unwrap(), text);

    // The starter runs as written, and init --probes fills one valid call per tool.
    let out = run_in(scratch.path(), &["init", "--probes", "--json"]);
    let calls: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(calls[0], serde_json::json!({"tool": "read_file", "args": {"path": "{sandbox}/ok.txt"}}));
    assert!(calls[1]["skipped"].as_str().unwrap().contains("destructive"), "{calls}");
    assert_eq!(calls[2]["args"]["path"], "{sandbox}");
    let out = run_in(scratch.path(), &["init", "--probes", "--write", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(scratch.path().join("sealmark.yaml")).unwrap();
    assert!(text.contains("probes:\n  - { tool: read_file, args: {\"path\":\"{sandbox}/ok.txt\"} }"), "{text}");
    assert!(text.contains("  # - { tool: write_file, args: {} }   # destructive"), "{text}");
    let out = run_in(scratch.path(), &["init", "--probes", "--write", "--yes"]);
    assert_eq!(out.status.code(), Some(2));
    let out = run_in(scratch.path(), &["run", "--pack", "core"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run_in(scratch.path(), &["run", "--pack", "core", "--format", "json"]);
    let rec: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["probes"]["calls"].as_array().unwrap().len(), 3, "{}", rec["probes"]);
}

#[test]
fn doctor_says_what_each_pack_would_do() {
    let scratch = Scratch::new();
    let cfg = toy_config(
        &scratch,
        &["{sandbox}"],
        "  \nprobes:\n  - { id: c, tool: read_file, args: { path: \"{sandbox}/ok.txt\" }, check: { id: custom-c, label: c, scope: server }, expect: { is_error: false } }\n",
    );
    let text = std::fs::read_to_string(&cfg).unwrap().replace("  env:\n", "  env:\n    DATA_DIR: /srv/data\n");
    std::fs::write(&cfg, text).unwrap();
    let (out, err, code) = text_run(&scratch, &["doctor", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    for line in [
        "server: reached, 4 tool(s): read_file, write_file, list_dir, stat",
        "db         would not run: server config has no {dsn}",
        "fs         runs on read_file, write_file, list_dir, stat",
        "net        would not run: no url tool found",
        "custom     runs 1 probe(s) with a check",
        "warning: server.env.DATA_DIR names /srv/data, outside the sandbox",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
    let (out, _, code) =
        text_run(&scratch, &["doctor", "--", toy("toy-server").to_str().unwrap(), "--mode", "die-at-start"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("server: not reached"), "{out}");
    assert!(scratch.survivors().is_empty() && scratch.sandbox_removed());
}

/// `{token}` stands for the probe's own marker in `expect.files` as in `args`, so a probe
/// that writes a file named by it can say that file was created.
#[test]
fn a_token_in_an_expected_path_is_the_probe_s_own() {
    let scratch = Scratch::new();
    let probe = "probes:\n  - id: fresh-file\n    check: { id: custom-fresh-file, label: writes a fresh file, scope: server }\n    tool: write_file\n    args: { path: \"{sandbox}/sm-{token}.txt\", content: hello }\n    expect: { is_error: false, files: { created: [\"{sandbox}/sm-{token}.txt\"] } }\n";
    let cfg = toy_config(&scratch, &["{sandbox}"], &format!("packs: [core, custom]\n{probe}"));
    let rec = json_of(&scratch, &cfg, &[]);
    assert_eq!(verdict(&rec, "custom-fresh-file"), Pass, "{}", rec["custom"]);
}

/// A store named by an absolute path is not observed: `run` says so as `doctor` does,
/// on stderr and under "Not covered".
#[test]
fn run_warns_about_paths_outside_the_sandbox() {
    let scratch = Scratch::new();
    let cfg = toy_config(&scratch, &["{sandbox}"], "");
    let text = std::fs::read_to_string(&cfg).unwrap().replace("  env:\n", "  env:\n    SECRET_STORE: /srv/data\n");
    std::fs::write(&cfg, text).unwrap();
    let (out, err, _) = text_run(&scratch, &["run", "--pack", "core", "--config", cfg.to_str().unwrap()]);
    // The value sits under a secret-looking name, so stderr hides it too.
    let warning = "server.env.SECRET_STORE names <redacted>, outside the sandbox: writes there are not observed";
    assert!(err.contains(&format!("sealmark: warning: {warning}")) && !err.contains("/srv/data"), "{err}");
    // The record is published: it names the key, not the path, which sits under a
    // secret-looking name that the env: line shows as <redacted>.
    let listed = "server.env.SECRET_STORE names an absolute path, outside the sandbox: writes there are not observed";
    assert!(out.contains(&format!("  - {listed}")), "{out}");
    assert!(out.contains("SECRET_STORE=<redacted>") && !out.contains("/srv/data"), "{out}");
}

/// The program a command runs is read, not written: behind an `env` prefix, the toy's
/// absolute path and a PATH entry are its location, and only the data path is named.
#[test]
fn the_program_s_own_path_is_not_a_path_outside_the_sandbox() {
    let scratch = Scratch::new();
    let toy = toy("toy-server");
    let args = ["PATH=/usr/local/bin:/usr/bin:/bin", "DATA_DIR=/srv/data", toy.to_str().unwrap(), "{sandbox}"];
    let cfg = scratch.config_for(Path::new("env"), &args, "");
    let (out, err, code) = text_run(&scratch, &["run", "--pack", "core", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("outside the sandbox")).collect();
    assert_eq!(
        warnings,
        [
            "sealmark: warning: server.args[1] names /srv/data, outside the sandbox: writes there are not observed (use {sandbox} or {sandbox_home})"
        ],
        "{err}"
    );
    assert!(out.contains("server.args[1] names an absolute path") && !out.contains("server.args[2]"), "{out}");
}
