//! A misbehaving server gives a finished report with inconclusive verdicts, and
//! nothing it started is left running.

mod common;

use common::{Scratch, record, verdict};
use sealmark_engine::model::Verdict;
use std::time::{Duration, Instant};

/// A short probe timeout keeps these tests quick; it makes the run CUSTOM, which
/// does not matter here.
const FAST: &str = "timeout_probe_sec: 2\n";

fn hostile(mode: &str) -> (serde_json::Value, Scratch) {
    let scratch = Scratch::new();
    let started = Instant::now();
    let (rec, _) = record(&scratch, mode, FAST);
    assert!(started.elapsed() < Duration::from_secs(30), "mode {mode} took {:?}", started.elapsed());
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes: {:?}", scratch.survivors());
    assert!(scratch.sandbox_removed(), "mode {mode}: sandbox not removed");
    (rec, scratch)
}

#[test]
fn hang_at_initialize_is_inconclusive() {
    let (rec, _) = hostile("hang-init");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Inconclusive);
    assert_eq!(rec["packs"]["core"]["status"], "inconclusive");
    let summary = rec["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("no answer within 2s"), "{summary}");
}

#[test]
fn exit_at_start_is_inconclusive_and_says_how_it_exited() {
    let (rec, _) = hostile("die-at-start");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Inconclusive);
    let summary = rec["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("exited with status 3"), "{summary}");
    assert!(rec["serverLog"]["head"].as_str().unwrap().contains("exiting at start"));
}

#[test]
fn stdout_flood_is_bounded_and_inconclusive() {
    let (rec, _) = hostile("flood-stdout");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Inconclusive);
    // The server log keeps a bounded head of the stderr flood.
    assert!(rec["serverLog"]["truncated"].as_bool().unwrap());
    assert!(rec["serverLog"]["head"].as_str().unwrap().len() <= 64 * 1024);
}

#[test]
fn garbage_answers_are_named() {
    let (rec, _) = hostile("garbage");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Inconclusive);
    let summary = rec["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("not JSON"), "{summary}");
}

#[test]
fn sigterm_ignored_is_killed() {
    let (rec, _) = hostile("ignore-sigterm");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Pass);
}

#[test]
fn children_in_the_process_group_are_stopped() {
    let (rec, _) = hostile("fork-child");
    assert_eq!(rec["sandbox"]["leftoverProcesses"], serde_json::json!([]));
}

#[test]
fn children_that_leave_the_group_are_found_killed_and_named() {
    let (rec, _) = hostile("escape-child");
    let left = rec["sandbox"]["leftoverProcesses"].as_array().unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].as_str().unwrap().starts_with("sleep"), "{left:?}");
}

#[test]
fn calls_that_never_return_are_bounded() {
    let (rec, _) = hostile("hang-on-call");
    // Calls that never come back from a server that still answers ping are a slow tool,
    // not a robustness defect: no evidence either way.
    assert_eq!(verdict(&rec, "robust-input"), Verdict::Inconclusive);
    assert_eq!(verdict(&rec, "secret-echo"), Verdict::Inconclusive);
    // An inconclusive critical check makes the grade provisional.
    assert_eq!(rec["packs"]["core"]["grade"]["provisional"], true);
    let not_covered = rec["notCovered"].as_array().unwrap();
    assert!(
        not_covered.iter().any(|l| l.as_str().unwrap().contains("not sent: no call of this run was answered")),
        "{not_covered:?}"
    );
}

#[test]
fn ctrl_c_stops_the_server_removes_the_sandbox_and_exits_130() {
    let scratch = Scratch::new();
    let cfg = scratch.config("hang-init", "");
    let child = std::process::Command::new(common::sealmark())
        .args(["run", "--config", cfg.to_str().unwrap()])
        .env("TMPDIR", scratch.path().join("tmp"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the server is running, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(10);
    while scratch.survivors().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!scratch.survivors().is_empty(), "the server never started");
    // SAFETY: signalling a child we spawned.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(scratch.survivors().is_empty(), "left: {:?}", scratch.survivors());
    assert!(scratch.sandbox_removed());
}

#[test]
fn an_enormous_line_is_dropped_not_buffered() {
    let (rec, _) = hostile("huge-line");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Inconclusive);
    let summary = rec["checks"][0]["summary"].as_str().unwrap();
    // The 20 MiB line is an answer too large to parse, not garbage, and no wait.
    assert!(summary.contains("20971564 bytes, longer than the harness reads"), "{summary}");
}

/// A custom check and a valid call against a server whose calls hang: the probes are
/// inconclusive (or not made) with the reason, and the run still ends promptly.
#[test]
fn probes_against_hung_calls_are_inconclusive_not_hung() {
    let probes = "packs: [core, custom]\nprobes:\n  - { tool: read_file, args: { path: \"{sandbox}/ok.txt\" } }\n  - { id: p, tool: read_file, args: { path: \"{canary}/secret.txt\" }, check: { id: custom-hang, label: refuses the canary, scope: server }, expect: { is_error: true } }\n";
    let (rec, _) = {
        let scratch = Scratch::new();
        let started = Instant::now();
        let (rec, _) = record(&scratch, "hang-on-call", &format!("{FAST}{probes}"));
        assert!(started.elapsed() < Duration::from_secs(40), "took {:?}", started.elapsed());
        assert!(scratch.survivors().is_empty() && scratch.sandbox_removed());
        (rec, scratch)
    };
    assert_eq!(verdict(&rec, "custom-hang"), Verdict::Inconclusive);
    let probe = &rec["custom"]["probes"][0];
    assert_eq!(probe["verdict"], "inconclusive", "{probe}");
    assert!(rec["probes"]["calls"][0]["outcome"].as_str().is_some(), "{}", rec["probes"]);
}
