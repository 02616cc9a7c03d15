//! The command line: exit codes, config errors, the registry commands, output files,
//! determinism and the HTTP transport. Through the real binary.

mod common;

use common::{Scratch, sealmark, toy, verdict};
use sealmark_engine::model::Verdict;
use std::process::Command;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn quick_form_grades_without_a_config() {
    let scratch = Scratch::new();
    let toy = toy("toy-server");
    let out = scratch.run(&["run", "--", toy.to_str().unwrap(), "{sandbox}"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("sealmark 0.1.0 · methodology 0.3-draft · STANDARD · Server A 1.0.0\n"), "{text}");
    assert!(text.contains("PACK core  GRADE A  (4/4 points, 100%)"), "{text}");
    assert!(text.contains("  SEALMARK_CANARY=<canary>"), "{text}");
    assert!(text.ends_with("It is not a security endorsement; see methodology.\n"));
    let not_covered = text.split("Not covered:\n").nth(1).unwrap();
    assert!(not_covered.contains("  - supply chain: what the server's package pulls in"), "{not_covered}");
    assert!(not_covered.contains("  - load, concurrency, long sessions and several users:"), "{not_covered}");
    // stdout is not a console here, so the grades are also on stderr.
    assert!(stderr(&out).contains("  core     GRADE A  (4/4 points, 100%)"), "{}", stderr(&out));
}

/// -v and -vv add evidence lines under the checks, never change a verdict, and each
/// verbosity prints byte-identical text on two runs of the same server.
#[test]
fn verbosity_adds_evidence_and_keeps_the_report_deterministic() {
    let scratch = Scratch::new();
    let cfg = scratch.config("prefix-check-reads", "packs: [core, fs]\n");
    let text = |v: &[&str]| {
        let mut args = vec!["run", "--config", cfg.to_str().unwrap()];
        args.extend(v);
        stdout(&scratch.run(&args))
    };
    let quiet = text(&[]);
    assert!(!quiet.contains("evidence: ["), "{quiet}");
    for v in [&["-v"][..], &["-vv"][..]] {
        let (first, second) = (text(v), text(v));
        assert_eq!(first, second, "{v:?} is not deterministic");
        assert!(first.contains("        evidence: [response] sibling-prefix: read_file"), "{v:?}: {first}");
        let without: String = first
            .lines()
            .filter(|l| !l.trim_start().starts_with("evidence: [") && !l.contains("more evidence line(s)"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(without, quiet, "{v:?} changed more than the evidence lines");
    }
    assert!(text(&["-vv"]).len() > text(&["-v"]).len(), "-vv shows the passing checks' evidence too");
}

#[test]
fn the_progress_line_never_shows_a_password() {
    let scratch = Scratch::new();
    let cfg = scratch.path().join("sealmark.yaml");
    std::fs::write(&cfg, "server:\n  url: http://sm-user:sm-secret@127.0.0.1:9/mcp\ntimeout_probe_sec: 1\n").unwrap();
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(err.contains("sealmark: running http://127.0.0.1:9/mcp"), "{err}");
    assert!(!err.contains("sm-secret") && !stdout(&out).contains("sm-secret"), "{err}");
}

#[test]
fn config_errors_are_all_reported_with_file_line_and_key_and_exit_2() {
    let scratch = Scratch::new();
    let cfg = scratch.path().join("bad.yaml");
    std::fs::write(&cfg, "server:\n  comand: ./x\npacks: [core, nett]\nchecks:\n  secret-eco: {}\n").unwrap();
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    let file = cfg.display().to_string();
    for line in [
        format!("{file}:2: server.comand: unknown key (did you mean `command`?)"),
        format!("{file}:3: packs[1]: unknown pack \"nett\" (did you mean `net`?)"),
        format!("{file}:5: checks.secret-eco: unknown check (did you mean `secret-echo`?)"),
    ] {
        assert!(err.contains(&line), "missing {line:?} in:\n{err}");
    }
    assert!(err.contains("nothing was run"));
    assert!(stdout(&out).is_empty(), "no report on a config error");
}

#[test]
fn bad_flags_exit_2() {
    let scratch = Scratch::new();
    let out = scratch.run(&["run", "--fail-under", "Q", "--", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--fail-under"));
    let out = scratch.run(&["run", "--pack", "corr", "--", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("did you mean `core`?"), "{}", stderr(&out));
    let out = scratch.run(&["run", "--", "/nonexistent/server"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot start /nonexistent/server"), "{}", stderr(&out));
}

#[test]
fn the_gate_defaults_to_a_and_follows_fail_under() {
    let scratch = Scratch::new();
    let cfg = scratch.config("poisoned", "");
    let cfg = cfg.to_str().unwrap();
    // Poisoned grades B: below the default A gate, at the B gate.
    assert_eq!(scratch.run(&["run", "--config", cfg]).status.code(), Some(1));
    assert_eq!(scratch.run(&["run", "--config", cfg, "--fail-under", "B"]).status.code(), Some(0));
}

#[test]
fn explain_list_and_describe_render_the_registry() {
    let out = Command::new(sealmark()).args(["explain", "secret-echo"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let page = stdout(&out);
    for section in [
        "pack: core",
        "weight: critical",
        "scope: server",
        "decided by: response",
        "config keys: checks.secret-echo.enabled",
        "Probes",
        "How the verdict is established",
        "What proves a pass",
        "What to fix",
        "False positives",
        "False negatives",
        "OWASP MCP Top 10: MCP01",
    ] {
        assert!(page.contains(section), "missing {section:?}");
    }
    let out = Command::new(sealmark()).args(["explain", "secret-eco"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("did you mean `secret-echo`?"));

    let list = stdout(&Command::new(sealmark()).arg("list-checks").output().unwrap());
    assert!(list.contains("instructions-hygiene") && list.contains("advisory candidate"), "{list}");
    assert!(!list.contains(": ."), "no empty list of unbuilt packs: {list}");
    let page = stdout(&Command::new(sealmark()).args(["explain", "scope-escape"]).output().unwrap());
    assert_eq!(page.matches("(candidate pack)").count(), 1, "{page}");
    assert!(
        page.starts_with("scope-escape\n\nIdentifiers outside the declared scope kept from the backend\n\nshipped\n"),
        "{page}"
    );
    let page = stdout(&Command::new(sealmark()).args(["explain", "sql-guard-statements"]).output().unwrap());
    assert!(page.contains("(a list of { tool, arg } entries)") && !page.contains("corrects arguments"), "{page}");
    let described: serde_json::Value =
        serde_json::from_slice(&Command::new(sealmark()).arg("describe").output().unwrap().stdout).unwrap();
    let checks = described["checks"].as_array().unwrap();
    assert_eq!(checks.len(), sealmark_engine::registry::CHECKS.len());
    assert!(checks.iter().any(|c| c["id"] == "fs-read-escape" && c["probes"].as_array().unwrap().len() == 29));
    assert!(checks.iter().any(|c| c["id"] == "refusal-quality" && c["candidate"] == true && c["advisory"] == true));
}

#[test]
fn two_runs_give_byte_identical_text_and_json_differs_only_in_volatile_fields() {
    let scratch = Scratch::new();
    let cfg = scratch.config("good", "");
    let cfg = cfg.to_str().unwrap();
    let a = scratch.run(&["run", "--config", cfg]);
    let b = scratch.run(&["run", "--config", cfg]);
    assert_eq!(stdout(&a), stdout(&b));
    let json = |o: std::process::Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for k in ["startedAt", "durationMs"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v["sandbox"].as_object_mut().unwrap().remove("listenerPort");
        v
    };
    let ja = json(scratch.run(&["run", "--format", "json", "--config", cfg]));
    let jb = json(scratch.run(&["run", "--format", "json", "--config", cfg]));
    assert_eq!(ja, jb);
    assert!(
        !serde_json::to_string(&ja).unwrap().contains(scratch.path().join("tmp").to_str().unwrap()),
        "no sandbox path in the record"
    );
}

#[test]
fn out_writes_the_file_and_prints_grades_on_stderr() {
    let scratch = Scratch::new();
    let cfg = scratch.config("good", "");
    let report = scratch.path().join("report.json");
    let out =
        scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--format", "json", "--out", report.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).is_empty());
    assert!(stderr(&out).contains(&format!("report written to {}", report.display())));
    assert!(stderr(&out).contains("core     GRADE A"), "{}", stderr(&out));
    let rec: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(rec["config"]["serverLine"], 2);
    assert_eq!(rec["config"]["standard"], true);
}

/// `--out` replaces only regular files atomically: a FIFO (like a device or
/// `/dev/stdout`) is written in place, a link keeps pointing where it did, and a
/// directory is refused before the server is started.
#[test]
fn out_writes_fifos_and_links_in_place_and_refuses_a_directory() {
    let scratch = Scratch::new();
    let cfg = scratch.config("good", "");
    let fifo = scratch.path().join("report.fifo");
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(status.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).expect("read the fifo"))
    };
    let summary_to = |out: &std::path::Path| {
        let run = scratch.run(&[
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--format",
            "summary",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    };
    summary_to(&fifo);
    assert!(reader.join().unwrap().contains("core"));
    let meta = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&meta.file_type()), "the FIFO was replaced");

    let target = scratch.path().join("target.txt");
    std::fs::write(&target, "old").unwrap();
    let link = scratch.path().join("link.txt");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    summary_to(&link);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert!(std::fs::read_to_string(&target).unwrap().contains("core"));

    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--out", scratch.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("sealmark: running"), "refused before the run");
}

#[test]
fn a_changed_locked_setting_makes_the_run_custom() {
    let scratch = Scratch::new();
    let (rec, _) = common::record(&scratch, "good", "checks:\n  robust-input:\n    max_tools: 2\n");
    assert_eq!(rec["config"]["standard"], false);
    assert_eq!(rec["config"]["standardDiff"], serde_json::json!(["checks.robust-input.max_tools: 2 (standard: 25)"]));
    assert!(
        rec["notCovered"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().starts_with("robust-input probed the first 2 of 4 tools"))
    );
}

#[test]
fn streamable_http_server_started_from_command() {
    let scratch = Scratch::new();
    let port = common::free_port();
    let cfg = scratch.path().join("http.yaml");
    std::fs::write(
        &cfg,
        format!(
            "server:\n  command: {}\n  args: [\"--http\", \"127.0.0.1:{port}\", \"{{sandbox}}\"]\n  url: http://127.0.0.1:{port}/mcp\n  env:\n    TEST_TAG: \"{}\"\n",
            toy("toy-server").display(),
            scratch.tag
        ),
    )
    .unwrap();
    let out = scratch.run(&["run", "--format", "json", "--config", cfg.to_str().unwrap()]);
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(rec["server"]["transport"], "http");
    for id in ["handshake", "tool-poisoning", "robust-input", "secret-echo"] {
        assert_eq!(verdict(&rec, id), Verdict::Pass, "{id}: {}", rec["checks"]);
    }
    assert!(scratch.survivors().is_empty(), "left: {:?}", scratch.survivors());
}

#[test]
fn tools_filter_limits_probing_and_reports_what_it_left_out() {
    let scratch = Scratch::new();
    let (rec, _) = common::record(&scratch, "good", "tools:\n  include: [\"read_*\", \"nope\"]\n");
    assert_eq!(rec["server"]["tools"], serde_json::json!(["read_file"]));
    let gaps: Vec<&str> = rec["notCovered"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(gaps.contains(&"left out by tools.include/tools.exclude: write_file, list_dir, stat"), "{gaps:?}");
    assert!(gaps.contains(&"tools.include names \"nope\", which matches no tool the server lists"), "{gaps:?}");
    let probed: Vec<&str> =
        rec["checks"][2]["evidence"].as_array().unwrap().iter().filter_map(|e| e["tool"].as_str()).collect();
    assert!(probed.iter().all(|t| *t == "read_file"), "{probed:?}");
}

#[test]
fn keep_sandbox_leaves_the_tree_and_says_where() {
    let scratch = Scratch::new();
    let cfg = scratch.config("good", "");
    let out = scratch.run(&["run", "--keep-sandbox", "--config", cfg.to_str().unwrap()]);
    let err = stderr(&out);
    let kept =
        err.lines().find_map(|l| l.strip_prefix("sealmark: the sandbox was kept at ")).expect("the path on stderr");
    let kept = std::path::Path::new(kept);
    assert!(kept.join("root/ok.txt").is_file() && kept.join("canary/secret.txt").is_file());
    assert!(std::fs::symlink_metadata(kept.join("root/link-new")).unwrap().file_type().is_symlink());
    assert!(stdout(&out).contains(" · kept · "), "the sandbox line says kept");
    assert!(!kept.join("canary/not-yet.txt").exists(), "no probe wrote through the dangling link");
}

#[test]
fn a_database_placeholder_starts_seeds_and_removes_an_embedded_postgres() {
    let scratch = Scratch::watching_starts();
    let cfg = scratch.config_args(&["{sandbox}"], "");
    let text =
        std::fs::read_to_string(&cfg).unwrap().replace("    TEST_TAG:", "    DATABASE_URL: \"{dsn}\"\n    TEST_TAG:");
    std::fs::write(&cfg, text).unwrap();
    let run = Command::new(sealmark())
        .args(["run", "--config", cfg.to_str().unwrap()])
        .env("TMPDIR", scratch.path().join("tmp"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sealmark starts");
    // The server is given the DSN, so by its start the cluster runs.
    scratch.wait_for_starts(1);
    let ours = clusters_of(run.id());
    assert!(!ours.is_empty(), "no embedded Postgres ran under the run");
    let out = run.wait_with_output().expect("sealmark ends");
    let report = stdout(&out);
    assert!(
        report
            .contains("\ndb: embedded Postgres · seed 0.2 in sealmark_seed · roles sm_analyst, sm_support, sm_admin\n"),
        "{report}{}",
        stderr(&out)
    );
    assert!(report.contains("  DATABASE_URL={dsn}\n"), "the env line shows the placeholder, never a password");
    assert_eq!(left_of(&scratch, &ours), Vec::<String>::new(), "the cluster is stopped and removed");
    let out = scratch.run(&["run", "--no-embedded", "--config", cfg.to_str().unwrap()]);
    assert!(stdout(&out).contains("PACK db  not graded: --no-embedded and no --pg"), "{}", stdout(&out));
}

/// SIGTERM in the middle of a db run (how CI cancels a job) stops the server and the
/// embedded Postgres and removes the cluster and the sandbox.
#[test]
fn sigterm_during_a_db_run_leaves_no_process_no_postgres_and_no_temp_directory() {
    let scratch = Scratch::watching_starts();
    let cfg = scratch.config_for(&common::toy("toy-sql"), &["--mode", "no-timeout"], "");
    let text =
        std::fs::read_to_string(&cfg).unwrap().replace("    TEST_TAG:", "    DATABASE_URL: \"{dsn}\"\n    TEST_TAG:");
    std::fs::write(&cfg, text).unwrap();
    // Once the server runs, the cluster runs too.
    let mut ours = std::collections::BTreeSet::new();
    let out = scratch.interrupted(&["run", "--config", cfg.to_str().unwrap()], libc::SIGTERM, |run| {
        ours = clusters_of(run);
        assert!(!ours.is_empty(), "no embedded Postgres ran under the run");
    });
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("stopped the embedded Postgres"), "{err}");
    assert_eq!(left_of(&scratch, &ours), Vec::<String>::new(), "the cluster is stopped and removed");
    assert!(scratch.survivors().is_empty(), "left: {:?}", scratch.survivors());
    assert!(scratch.sandbox_removed());
}

/// The cluster directories the Postgres processes below sealmark's process `run` name
/// (sealmark reaps its orphans, so the daemonized postmaster is among them): that run's
/// own, whatever other runs on the machine start or leave meanwhile.
fn clusters_of(run: u32) -> std::collections::BTreeSet<String> {
    let processes: Vec<(u32, u32, String)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // The parent is the second field after the command, which sits in parentheses.
            let ppid = stat[stat.rfind(')')? + 2..].split(' ').nth(1)?.parse().ok()?;
            Some((pid, ppid, std::fs::read_to_string(e.path().join("cmdline")).unwrap_or_default()))
        })
        .collect();
    let parent = |pid: u32| processes.iter().find(|p| p.0 == pid).map(|p| p.1);
    let below = |mut pid: u32| loop {
        match parent(pid) {
            Some(p) if p == run => return true,
            Some(p) if p > 1 => pid = p,
            _ => return false,
        }
    };
    processes
        .iter()
        .filter(|(pid, _, _)| below(*pid))
        .filter_map(|(_, _, cmd)| {
            let at = cmd.find("sealmark-pg-")?;
            Some(cmd[at..].split(['/', '\0']).next().unwrap_or_default().to_string())
        })
        .collect()
}

/// What is left of these clusters: a directory (under /tmp, where a root run puts them,
/// or the scratch's TMPDIR) or a process that names one.
fn left_of(scratch: &Scratch, clusters: &std::collections::BTreeSet<String>) -> Vec<String> {
    let running: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("cmdline")).ok())
        .collect();
    clusters
        .iter()
        .filter(|c| {
            std::path::Path::new("/tmp").join(c).exists()
                || scratch.path().join("tmp").join(c).exists()
                || running.iter().any(|cmd| cmd.contains(c.as_str()))
        })
        .cloned()
        .collect()
}

#[test]
fn an_upstream_stub_runs_when_declared_and_an_unused_one_is_refused() {
    let scratch = Scratch::new();
    let cfg = scratch.config_args(&["{sandbox}"], "upstream:\n  kind: http\n");
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("upstream.kind: the stub would be unused"), "{}", stderr(&out));
    let out = scratch.run(&["run", "--upstream", "--", toy("toy-server").to_str().unwrap(), "{sandbox}"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--upstream: the stub would be unused"));

    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("    TEST_TAG:", "    BACKEND_URL: \"{upstream}\"\n    TEST_TAG:");
    std::fs::write(&cfg, text).unwrap();
    let out = scratch.run(&["run", "--format", "json", "--config", cfg.to_str().unwrap()]);
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert!(rec["upstream"]["url"].as_str().unwrap().starts_with("http://127.0.0.1:"));
    assert_eq!(rec["server"]["env"]["BACKEND_URL"], "{upstream}");
}

/// Credentials a config holds in its args and env (a URL's password, a secret-named
/// variable) are hidden in every format, on stdout and on stderr, even from a server that
/// echoes its whole environment into its answers; the env line shows where they were.
#[test]
fn credentials_in_args_and_env_are_in_no_report() {
    let scratch = Scratch::new();
    let secrets = ["hunter22-db", "key-98765-api", "pw-notify-1"];
    let extra = "    DATABASE_URL: postgres://app:hunter22-db@db.invalid/app\n    SERVICE_API_KEY: key-98765-api\npacks: [core]\n";
    let args = ["--mode", "env-echo", "--notify", "http://hook:pw-notify-1@127.0.0.1:9/x", "{sandbox}"];
    let cfg = scratch.config_args(&args, extra);
    let dir = scratch.path().join("reports");
    let formats = "text,json,markdown,junit,sarif,summary,badge,shields,html";
    let out = scratch.run(&[
        "run",
        "-vv",
        "--config",
        cfg.to_str().unwrap(),
        "--format",
        formats,
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(dir.join("sealmark-report.txt")).unwrap();
    assert!(text.contains("DATABASE_URL=postgres://app:<redacted>@db.invalid/app"), "{text}");
    assert!(
        text.contains("SERVICE_API_KEY=<redacted>") && text.contains("http://hook:<redacted>@127.0.0.1:9/x"),
        "{text}"
    );
    let json = std::fs::read_to_string(dir.join("sealmark-report.json")).unwrap();
    assert!(json.contains("(environment: "), "the server echoed its environment: {json}");
    let said = format!("{}{}{}", stdout(&out), stderr(&out), common::all_text(&dir));
    for secret in secrets {
        assert!(!said.contains(secret), "{secret} was shown");
    }
}

/// Several formats go to files in --out-dir; two runs of the same server give
/// byte-identical text, markdown, summary, badge and shields.
#[test]
fn every_format_is_written_and_the_human_ones_are_deterministic() {
    let scratch = Scratch::new();
    let cfg = scratch.config("good", "packs: [core, fs, effects]\n");
    let mut files = Vec::new();
    for run in ["a", "b"] {
        let dir = scratch.path().join(run);
        let out = scratch.run(&[
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--format",
            "text,json,markdown,junit,summary,badge",
            "--format",
            "shields",
            "--out-dir",
            dir.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(out.stdout.is_empty(), "reports go to files");
        assert!(err.contains("sealmark-report.junit.xml") && err.contains("fs       GRADE A"), "{err}");
        files.push(dir);
    }
    for name in [
        "sealmark-report.txt",
        "sealmark-report.md",
        "sealmark-report.summary.txt",
        "sealmark-report.svg",
        "sealmark-report.shields.json",
    ] {
        let (a, b) = (std::fs::read(files[0].join(name)).unwrap(), std::fs::read(files[1].join(name)).unwrap());
        assert!(a == b, "{name} differs between two runs");
    }
    // Every check's scope, passing or not, in the summary, JUnit and SARIF.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(files[0].join("sealmark-report.json")).unwrap()).unwrap();
    let summary = std::fs::read_to_string(files[0].join("sealmark-report.summary.txt")).unwrap();
    let junit = std::fs::read_to_string(files[0].join("sealmark-report.junit.xml")).unwrap();
    let out =
        scratch.run(&["run", "--replay", files[0].join("sealmark-report.json").to_str().unwrap(), "--format", "sarif"]);
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    for c in json["checks"].as_array().unwrap().iter().filter(|c| c["verdict"] == "pass") {
        let (id, scope) = (c["id"].as_str().unwrap(), c["scope"].as_str().unwrap());
        let case = junit.split("<testcase ").find(|t| t.contains(&format!("name=\"{id}: "))).unwrap();
        assert!(case.contains("<system-out>scope: "), "{id}: {case}");
        let rule = rules.iter().find(|r| r["id"] == id).unwrap();
        assert_eq!(rule["properties"]["scope"], scope, "{id}");
        assert_eq!(rule["properties"]["verdict"], "pass", "{id}");
        let row = summary
            .lines()
            .position(|l| l.starts_with("  [PASS]") && l.contains(c["label"].as_str().unwrap()))
            .unwrap();
        assert_eq!(summary.lines().nth(row + 1).unwrap().trim(), format!("scope: {scope}"), "{id}: {summary}");
    }
    let shields: serde_json::Value =
        serde_json::from_slice(&std::fs::read(files[0].join("sealmark-report.shields.json")).unwrap()).unwrap();
    assert_eq!(shields["message"], "core A · fs A · effects A");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(files[0].join("sealmark-report.json")).unwrap()).unwrap();
    assert_eq!(json["packs"]["fs"]["grade"]["letter"], "A");
    // A standard JUnit reader (Python's junitparser, installed by scripts/test) reads it.
    let read = std::process::Command::new("python3")
        .args(["-c", "import sys, junitparser\nx = junitparser.JUnitXml.fromfile(sys.argv[1])\nprint(sum(1 for s in x for c in s), sum(s.failures for s in x), sum(s.skipped for s in x))"])
        .arg(files[0].join("sealmark-report.junit.xml"))
        .output()
        .expect("python3 runs");
    assert!(read.status.success(), "junitparser refused it: {}", String::from_utf8_lossy(&read.stderr));
    let counts: Vec<usize> =
        String::from_utf8_lossy(&read.stdout).split_whitespace().map(|n| n.parse().unwrap()).collect();
    let checks = json["checks"].as_array().unwrap();
    let count = |v: &[&str]| checks.iter().filter(|c| v.contains(&c["verdict"].as_str().unwrap())).count();
    assert_eq!(counts, [checks.len(), count(&["fail", "part"]), count(&["na"])], "cases, failures, skipped");
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--format", "text,json", "--out", "x.txt"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A saved record renders again without a server, re-graded; records of another
/// methodology, a newer version or not JSON at all are refused with exit 2.
#[test]
fn replay_renders_a_saved_record_and_refuses_foreign_ones() {
    let scratch = Scratch::new();
    let cfg = scratch.config("good", "packs: [core, fs, effects]\n");
    let saved = scratch.path().join("record.json");
    let out =
        scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--format", "json", "--out", saved.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = scratch.run(&["run", "--config", cfg.to_str().unwrap()]).stdout;
    let replayed = scratch.run(&["run", "--replay", saved.to_str().unwrap()]);
    assert_eq!(replayed.status.code(), Some(0), "{}", String::from_utf8_lossy(&replayed.stderr));
    assert!(replayed.stdout == text, "a replay renders the same text as the run");
    assert!(!String::from_utf8_lossy(&replayed.stderr).contains("running"), "no server was started");

    let mut record: serde_json::Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    record["packs"]["fs"]["grade"]["letter"] = "F".into();
    let tampered = scratch.path().join("tampered.json");
    std::fs::write(&tampered, record.to_string()).unwrap();
    let out = scratch.run(&["run", "--replay", tampered.to_str().unwrap(), "--format", "json"]);
    let regraded: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(regraded["packs"]["fs"]["grade"]["letter"], "A", "the grade is recomputed from the verdicts");

    let cases = [
        ("old.json", "/sealmark/methodology", serde_json::json!("0.2"), "a record of methodology 0.2"),
        ("new.json", "/config/schemaVersion", serde_json::json!(99), "record version 99.0 is newer"),
        ("major.json", "/config/schemaVersion", serde_json::json!("2.0"), "record version 2.0 is newer"),
    ];
    for (name, pointer, value, want) in cases {
        let mut r = record.clone();
        *r.pointer_mut(pointer).unwrap() = value;
        let path = scratch.path().join(name);
        std::fs::write(&path, r.to_string()).unwrap();
        let out = scratch.run(&["run", "--replay", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains(want), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let junk = scratch.path().join("junk.json");
    std::fs::write(&junk, "{\n  \"sealmark\": oops\n}\n").unwrap();
    let out = scratch.run(&["run", "--replay", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("junk.json:2:"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Replay judges the record's observations again: a verdict edited in the record is
/// named and overruled; a record without observations (1.0) or of a newer minor is
/// re-graded from its stored verdicts, and says so.
#[test]
fn replay_rejudges_the_observations_and_names_a_doctored_verdict() {
    let scratch = Scratch::new();
    let cfg = scratch.config("prefix-check-reads", "packs: [core, fs, effects]\n");
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--format", "json"]);
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(record["observations"]["fs"]["reads"].is_array(), "the record carries what the fs judges read");
    assert_eq!(record["config"]["schemaVersion"], "1.9");
    let failed = record["checks"].as_array().unwrap().iter().position(|c| c["verdict"] == "fail").unwrap();
    let id = record["checks"][failed]["id"].as_str().unwrap().to_string();
    let pack = record["checks"][failed]["pack"].as_str().unwrap().to_string();

    let mut doctored = record.clone();
    doctored["checks"][failed]["verdict"] = "pass".into();
    doctored["packs"][&pack]["grade"]["letter"] = "A".into();
    let path = scratch.path().join("doctored.json");
    std::fs::write(&path, doctored.to_string()).unwrap();
    let out = scratch.run(&["run", "--replay", path.to_str().unwrap(), "--format", "json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("; 1 differ from the stored result"), "{err}");
    assert!(err.contains(&format!("{id}: stored pass, re-derived fail")), "{err}");
    let rejudged: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rejudged["checks"], record["checks"], "the observations' verdicts, not the stored ones");
    assert_eq!(rejudged["packs"], record["packs"]);

    for (version, keep) in [(serde_json::json!(1), false), (serde_json::json!("1.9"), true)] {
        let mut older = doctored.clone();
        older["config"]["schemaVersion"] = version.clone();
        if !keep {
            older.as_object_mut().unwrap().remove("observations");
        } else {
            older["observations"]["version"] = 2.into();
        }
        std::fs::write(&path, older.to_string()).unwrap();
        let out = scratch.run(&["run", "--replay", path.to_str().unwrap(), "--format", "json"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{version}: {err}");
        assert!(err.contains("re-graded the stored verdicts"), "{version}: {err}");
        let regraded: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(regraded["checks"][failed]["verdict"], "pass", "{version}: nothing to re-judge it with");
    }
}

/// A stored grade or weight edited with the checks left alone is named by replay, on
/// stderr and in every format, and graded as the checks give; the badge is withheld, and
/// --strict makes it exit 1 though every pack meets the gate.
#[test]
fn replay_names_a_doctored_grade_and_weight_everywhere_and_strict_fails() {
    let scratch = Scratch::new();
    let cfg = scratch.config("good", "packs: [core, fs]\n");
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--format", "json"]);
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["packs"]["core"]["grade"]["letter"], "A", "{}", record["packs"]);
    let mut doctored = record.clone();
    doctored["packs"]["core"]["grade"]["letter"] = "B".into();
    let robust = record["checks"].as_array().unwrap().iter().position(|c| c["id"] == "robust-input").unwrap();
    doctored["checks"][robust]["critical"] = true.into();
    let path = scratch.path().join("doctored.json");
    std::fs::write(&path, doctored.to_string()).unwrap();
    let dir = scratch.path().join("replayed");
    let formats = "text,json,markdown,junit,sarif,summary,badge,shields";
    let replay = |strict: bool| {
        let mut args =
            vec!["run", "--replay", path.to_str().unwrap(), "--format", formats, "--out-dir", dir.to_str().unwrap()];
        if strict {
            args.push("--strict");
        }
        scratch.run(&args)
    };
    let out = replay(false);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "every pack meets the gate as its checks give: {err}");
    let grade = "core: stored grade B (4/4 points, 100%), its checks give A (4/4 points, 100%)";
    let weight = "robust-input: stored as critical, the registry weighs it scored";
    assert!(err.contains("; 0 differ from the stored result") && err.contains(grade) && err.contains(weight), "{err}");
    for file in ["txt", "md", "junit.xml", "sarif", "summary.txt"] {
        // Markdown escapes its brackets.
        let text = std::fs::read_to_string(dir.join(format!("sealmark-report.{file}"))).unwrap().replace('\\', "");
        assert!(text.contains(grade) && text.contains(weight), "{file}: {text}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("sealmark-report.json")).unwrap()).unwrap();
    assert_eq!(json["replay"]["grades"][0]["pack"], "core", "{}", json["replay"]);
    assert_eq!(json["packs"]["core"]["grade"]["letter"], "A");
    for file in ["svg", "shields.json"] {
        let text = std::fs::read_to_string(dir.join(format!("sealmark-report.{file}"))).unwrap();
        assert!(text.contains("no badge") && text.contains("replayed"), "{file}: {text}");
    }
    let junit = std::fs::read_to_string(dir.join("sealmark-report.junit.xml")).unwrap();
    assert!(
        junit.contains("<failure message=\"a stored result is not what the checks give\" type=\"replay\">"),
        "{junit}"
    );
    let out = replay(true);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("--strict"), "{}", stderr(&out));

    // The record as run holds: --strict passes it, no report for people carries a replay
    // line, and JUnit's replay test passes.
    std::fs::write(&path, record.to_string()).unwrap();
    let out = replay(true);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for file in ["txt", "md", "sarif", "summary.txt"] {
        let text = std::fs::read_to_string(dir.join(format!("sealmark-report.{file}"))).unwrap();
        assert!(!text.contains("replay re-judged") && !text.contains(grade), "{file}: {text}");
    }
    let junit = std::fs::read_to_string(dir.join("sealmark-report.junit.xml")).unwrap();
    assert!(junit.contains("sealmark.replay\" tests=\"1\" failures=\"0\""), "{junit}");
    assert!(!junit.contains("type=\"replay\""), "{junit}");
}

/// --baseline: a worse verdict is a regression (exit 1), a check the baseline lacks
/// never is, a changed description is drift, a different config hash is noted.
#[test]
fn baselines_list_regressions_new_checks_and_drift() {
    let scratch = Scratch::new();
    let good = scratch.config("good", "packs: [core]\n");
    let base = scratch.path().join("base.json");
    scratch.run(&["run", "--config", good.to_str().unwrap(), "--format", "json", "--out", base.to_str().unwrap()]);
    let mut record: serde_json::Value = serde_json::from_slice(&std::fs::read(&base).unwrap()).unwrap();
    record["checks"].as_array_mut().unwrap().retain(|c| c["id"] != "handshake");
    record["config"]["hash"] = "sha256:other".into();
    std::fs::write(&base, record.to_string()).unwrap();
    let poisoned = scratch.config("poisoned", "packs: [core]\n");
    let out = scratch.run(&["run", "--config", poisoned.to_str().unwrap(), "--baseline", base.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for line in [
        "regression: tool-poisoning pass → fail",
        "new checks (never a regression): handshake",
        "tool-surface drift: read_file: its description changed",
        "a different configuration (config.hash differs)",
    ] {
        assert!(err.contains(line), "missing {line:?} in:\n{err}");
    }
    // A baseline of another methodology is compared with a note, not refused.
    record["sealmark"]["methodology"] = "0.2".into();
    std::fs::write(&base, record.to_string()).unwrap();
    let out = scratch.run(&["run", "--config", poisoned.to_str().unwrap(), "--baseline", base.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("a different configuration (methodology 0.2)"), "{err}");
    assert!(err.contains("regression: tool-poisoning pass → fail"), "{err}");
    // The grade that moved comes first; a baseline of another server is named as such.
    assert!(err.contains("grade: core A → "), "{err}");
    record["server"]["name"] = "Somebody Else".into();
    std::fs::write(&base, record.to_string()).unwrap();
    let out = scratch.run(&["run", "--config", poisoned.to_str().unwrap(), "--baseline", base.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning: the baseline is a record of another server (Somebody Else "), "{err}");
}

/// --profile ci counts a pack that ran but could not be graded as a failure at the gate.
#[test]
fn profile_ci_fails_an_inconclusive_pack() {
    let scratch = Scratch::new();
    // A custom check whose one probe names a database placeholder cannot be judged.
    let probe = "probes:\n  - { id: p, tool: read_file, args: { path: \"{sandbox}/{dsn}\" }, check: { id: custom-x, label: x, scope: server }, expect: { is_error: true } }\n";
    let cfg = scratch.config("good", &format!("packs: [core, custom]\n{probe}"));
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--format", "json"]);
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["packs"]["custom"]["status"], "inconclusive", "{}", rec["packs"]["custom"]);
    let plain = out.status.code();
    let ci = scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--profile", "ci"]);
    assert_eq!(ci.status.code(), Some(1), "{}", String::from_utf8_lossy(&ci.stderr));
    assert!(String::from_utf8_lossy(&ci.stderr).contains("custom inconclusive (profile ci)"));
    assert_eq!(plain, Some(0), "without the profile an inconclusive pack does not gate");
}

/// `sealmark standard` prints the profile whose hash a STANDARD run carries.
#[test]
fn the_standard_profile_carries_the_hash_of_a_standard_run() {
    let scratch = Scratch::new();
    let out = scratch.run(&["standard"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let hash = text.lines().find_map(|l| l.strip_prefix("hash: ")).unwrap().trim_matches('"').to_string();
    let cfg = scratch.config("good", "packs: [core]\n");
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--format", "json"]);
    let rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["config"]["profile"], "standard");
    assert_eq!(rec["config"]["hash"], hash.as_str());
    assert!(text.contains("  robust-input: { enabled: true, severity: scored, max_tools: 25"), "{text}");
}

/// The rest of sealmark's own input: an unknown placeholder, a duplicate key at its own
/// line, a --pg that cannot be reached, a record with a check twice. Each exits 2.
#[test]
fn placeholders_duplicate_keys_unreachable_pg_and_repeated_checks_exit_2() {
    let scratch = Scratch::new();
    let cfg = scratch.config_args(&["{sandbx}"], "");
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(":3: server.args[0]: unknown placeholder {sandbx} (did you mean `{sandbox}`?)"),
        "{}",
        stderr(&out)
    );
    let out = scratch.run(&["run", "--", toy("toy-server").to_str().unwrap(), "{sandbx}"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown placeholder {sandbx}"), "{}", stderr(&out));

    let dup = scratch.path().join("dup.yaml");
    std::fs::write(&dup, "server:\n  command: ./x\n  args: [\"{sandbox}\"]\n  command: ./y\n").unwrap();
    let out = scratch.run(&["run", "--config", dup.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("dup.yaml:4: server.command: this key appears twice (first on line 2)"),
        "{}",
        stderr(&out)
    );

    // A port nothing listens on.
    let port = common::free_port();
    let cfg = scratch.path().join("sql.yaml");
    let text =
        format!("server:\n  command: {}\n  env:\n    DATABASE_URL: \"{{dsn}}\"\n", common::toy("toy-sql").display());
    std::fs::write(&cfg, text).unwrap();
    let pg = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--pg", &pg]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot reach Postgres at 127.0.0.1:"), "{}", stderr(&out));
    // doctor is not a run: it says why the db pack would not run, and goes on.
    let out = scratch.run(&["doctor", "--config", cfg.to_str().unwrap(), "--pg", &pg]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = stdout(&out);
    assert!(report.contains("db         would not run: --pg: cannot reach Postgres at 127.0.0.1:"), "{report}");

    // A saved record holding one check twice.
    let good = scratch.config("good", "");
    let out = scratch.run(&["run", "--config", good.to_str().unwrap(), "--format", "json"]);
    let mut rec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = rec["checks"][0].clone();
    rec["checks"].as_array_mut().unwrap().push(first);
    let saved = scratch.path().join("twice.json");
    std::fs::write(&saved, serde_json::to_string_pretty(&rec).unwrap()).unwrap();
    let out = scratch.run(&["run", "--replay", saved.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("repeats the check id \"handshake\" of checks[0]"), "{}", stderr(&out));
    let out = scratch.run(&["run", "--config", good.to_str().unwrap(), "--baseline", saved.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// Runs sealmark under a pseudo-terminal (util-linux `script`), as a person at a terminal
/// would, and returns what the terminal showed (stdout and stderr together).
fn on_a_terminal(scratch: &Scratch, args: &[&str], env: &[(&str, &str)]) -> String {
    let quoted: Vec<String> = std::iter::once(sealmark().display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &quoted.join(" "), "/dev/null"])
        .env("TERM", "xterm-256color")
        .env("TMPDIR", scratch.path().join("tmp"))
        .env_remove("NO_COLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    String::from_utf8_lossy(&cmd.output().expect("script runs").stdout).into_owned()
}

#[test]
fn a_terminal_gets_a_progress_line_and_colour_and_files_and_pipes_get_neither() {
    let scratch = Scratch::new();
    let cfg = scratch.config("good", "");
    let cfg = cfg.to_str().unwrap();
    let shown = on_a_terminal(&scratch, &["run", "--config", cfg], &[]);
    assert!(shown.contains("message(s) sent"), "a progress line: {shown:?}");
    assert!(shown.contains("\x1b[32m[PASS]\x1b[0m"), "coloured tags: {shown:?}");
    let no_colour = on_a_terminal(&scratch, &["run", "--config", cfg, "--quiet"], &[("NO_COLOR", "1")]);
    assert!(!no_colour.contains("message(s) sent"), "--quiet: {no_colour:?}");
    assert!(no_colour.contains("[PASS]") && !no_colour.contains("\x1b[32m"), "NO_COLOR: {no_colour:?}");
    let never = on_a_terminal(&scratch, &["run", "--config", cfg, "--color", "never"], &[]);
    assert!(!never.contains("\x1b[32m[PASS]"), "--color never: {never:?}");
    // A pipe gets the plain report, and --color always colours even a pipe.
    let piped = scratch.run(&["run", "--config", cfg]);
    assert!(!stdout(&piped).contains('\x1b') && !stderr(&piped).contains("message(s) sent"));
    let forced = scratch.run(&["run", "--config", cfg, "--color", "always"]);
    assert!(stdout(&forced).contains("\x1b[32m[PASS]\x1b[0m"));
    // A file is never coloured, whatever --color says.
    let file = scratch.path().join("report.txt");
    scratch.run(&["run", "--config", cfg, "--color", "always", "--out", file.to_str().unwrap()]);
    assert!(!std::fs::read_to_string(&file).unwrap().contains('\x1b'));
}

#[test]
fn completions_and_the_man_page_come_from_the_command_line_definitions() {
    let run = |args: &[&str]| {
        let out = Command::new(sealmark()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let bash = run(&["completions", "bash"]);
    assert!(bash.contains("_sealmark()") && bash.contains("--shard") && bash.contains("merge"), "{bash}");
    assert!(run(&["completions", "zsh"]).starts_with("#compdef sealmark"));
    assert!(run(&["completions", "fish"]).contains("complete -c sealmark"));
    let man = run(&["man"]);
    assert!(man.contains(".TH sealmark"), "{man}");
    for sub in ["run", "doctor", "merge", "explain"] {
        assert!(man.contains(&format!("sealmark\\-{sub}")), "{sub} in the man page: {man}");
    }
}

/// npx, uvx and pip servers start warm: the machine's package caches reach the server
/// (named in the report, their paths never), and --no-package-caches keeps them out.
#[test]
fn servers_get_the_package_caches_by_name_and_never_their_paths() {
    let scratch = Scratch::new();
    let home = scratch.path().join("home");
    std::fs::create_dir_all(home.join(".npm")).unwrap();
    std::fs::create_dir_all(home.join(".cache/uv")).unwrap();
    let cfg = scratch.config("env-echo", "packs: [core]\n");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--format", "json", "--config", cfg.to_str().unwrap()];
        args.extend(extra);
        let out = Command::new(sealmark())
            .args(&args)
            .env("HOME", &home)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("npm_config_cache")
            .env_remove("UV_CACHE_DIR")
            .env_remove("PIP_CACHE_DIR")
            .env("TMPDIR", scratch.path().join("tmp"))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout.clone()).unwrap();
        let record: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
        (record, text)
    };
    let (warm, text) = run(&[]);
    let inherited: Vec<&str> =
        warm["sandbox"]["inherited"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(
        inherited.contains(&"npm cache (npm_config_cache)") && inherited.contains(&"uv cache (UV_CACHE_DIR)"),
        "{inherited:?}"
    );
    assert!(!inherited.iter().any(|i| i.starts_with("pip cache")), "no pip cache here: {inherited:?}");
    // The env-echo server printed its environment: the caches were there, by placeholder.
    assert!(text.contains(r#"(\"npm_config_cache\", \"{npm_config_cache}\")"#), "the server got the cache");
    assert!(!text.contains(home.to_str().unwrap()), "no path of this machine in the record");
    let (cold, text) = run(&["--no-package-caches"]);
    assert!(!cold["sandbox"]["inherited"].to_string().contains("cache"), "{}", cold["sandbox"]["inherited"]);
    assert!(!text.contains(r#"(\"npm_config_cache\""#), "no cache reached the server");
}
