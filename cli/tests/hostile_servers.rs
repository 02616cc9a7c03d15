//! A misbehaving server gives a finished report (a handshake that never completes is a
//! failed handshake; what could not be observed is inconclusive), and nothing it
//! started is left running.

mod common;

use common::{Scratch, record, verdict};
use sealmark_engine::model::Verdict;
use std::time::{Duration, Instant};

/// A short probe timeout keeps these tests quick; it makes the run CUSTOM, which
/// does not matter here.
const FAST: &str = "timeout_probe_sec: 2\n";

fn hostile(mode: &str) -> (serde_json::Value, Scratch) {
    let (rec, _, scratch) = hostile_with_code(mode);
    (rec, scratch)
}

fn hostile_with_code(mode: &str) -> (serde_json::Value, i32, Scratch) {
    hostile_within(mode, FAST)
}

/// As `hostile_with_code`, with the probe timeout (and any other keys) in `extra`.
fn hostile_within(mode: &str, extra: &str) -> (serde_json::Value, i32, Scratch) {
    let scratch = Scratch::new();
    let started = Instant::now();
    let (rec, code) = record(&scratch, mode, extra);
    assert!(started.elapsed() < Duration::from_secs(30), "mode {mode} took {:?}", started.elapsed());
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes: {:?}", scratch.survivors());
    assert!(scratch.sandbox_removed(), "mode {mode}: sandbox not removed");
    (rec, code, scratch)
}

/// A handshake that never completes is evidence: handshake fails, core is graded, and
/// the gate fails (exit 1) by the methodology's own rule.
fn failed_handshake(mode: &str) -> serde_json::Value {
    let (rec, code, _) = hostile_with_code(mode);
    assert_eq!(verdict(&rec, "handshake"), Verdict::Fail, "mode {mode}");
    assert_eq!(rec["packs"]["core"]["grade"]["letter"], "F", "mode {mode}: {}", rec["packs"]["core"]);
    assert_eq!(code, 1, "mode {mode}");
    rec
}

#[test]
fn hang_at_initialize_fails_the_handshake_and_the_gate() {
    let rec = failed_handshake("hang-init");
    let summary = rec["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("no answer within 2s"), "{summary}");
}

#[test]
fn exit_at_start_fails_the_handshake_and_says_how_it_exited() {
    let rec = failed_handshake("die-at-start");
    let summary = rec["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("exited with status 3"), "{summary}");
    assert!(rec["serverLog"]["head"].as_str().unwrap().contains("exiting at start"));
}

#[test]
fn stdout_flood_is_bounded_and_fails_the_handshake() {
    let rec = failed_handshake("flood-stdout");
    // The server log keeps a bounded head of the stderr flood.
    assert!(rec["serverLog"]["truncated"].as_bool().unwrap());
    assert!(rec["serverLog"]["head"].as_str().unwrap().len() <= 64 * 1024);
}

#[test]
fn garbage_answers_are_named() {
    let rec = failed_handshake("garbage");
    let summary = rec["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("not JSON"), "{summary}");
    // The junk lines are reported as the server's, advisory.
    assert!(rec["unasked"]["junkLines"].as_u64().unwrap() >= 1, "{}", rec["unasked"]);
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
fn an_enormous_line_is_dropped_not_buffered() {
    let rec = failed_handshake("huge-line");
    let summary = rec["checks"][0]["summary"].as_str().unwrap();
    // The 20 MiB line is an answer too large to parse, not garbage, and no wait.
    assert!(summary.contains("its answer was 20971"), "{summary}");
    assert!(summary.contains("bytes, too large for the harness to parse"), "{summary}");
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

/// A server's name, version and tool names never reach the terminal raw: escapes and
/// bidi overrides are spelled out in every human format, and no machine format carries
/// a raw U+202E.
#[test]
fn terminal_escapes_from_the_server_are_spelled_out() {
    let scratch = Scratch::new();
    let cfg = scratch.config("terminal-escapes", FAST);
    for format in ["text", "markdown", "summary", "sarif", "junit", "json"] {
        let out = scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--format", format]);
        let text = String::from_utf8(out.stdout).unwrap();
        for c in ['\u{1b}', '\u{7}', '\u{8}', '\r', '\u{202e}'] {
            assert!(!text.contains(c), "{format} carries {c:?} raw");
        }
        if format == "text" {
            assert!(text.contains("Evil\\u{1b}[2J"), "{text}");
            assert!(text.contains("stat\\u{202e}txt.exe"), "{text}");
        }
        if format == "json" {
            // Escaped, not lost: the record still holds the server's exact name.
            let rec: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(rec["server"]["name"], "Evil\u{1b}[2J\u{1b}]0;pwned\u{7} Server");
        }
    }
}

/// Answers sent ahead for ids the server guesses are dropped and counted: a server that
/// wedges on malformed input fails robust-input even though it pre-answered its pings.
#[test]
fn answers_to_ids_never_sent_are_dropped_and_counted() {
    let (rec, _) = hostile("forges-answers");
    assert_eq!(verdict(&rec, "robust-input"), Verdict::Fail);
    assert!(rec["unasked"]["unsolicitedAnswers"].as_u64().unwrap() > 0, "{}", rec["unasked"]);
    // The forged id follows the harness's random one; the report shows a placeholder, so
    // two runs read the same.
    let scratch = Scratch::new();
    let cfg = scratch.config("forges-answers", FAST);
    let text = || String::from_utf8(scratch.run(&["run", "--config", cfg.to_str().unwrap()]).stdout).unwrap();
    let first = text();
    assert!(first.contains("\"id\":\"{id}\""), "{first}");
    assert_eq!(first, text());
}

/// A server that floods the client with requests of its own while it reads nothing
/// neither stalls the run nor hides the answers that matter.
#[test]
fn a_flood_of_server_requests_is_refused_without_waiting() {
    // The default timeout: the toy stops reading for two seconds, as long as FAST.
    let scratch = Scratch::new();
    let (rec, _) = record(&scratch, "floods-requests", "");
    assert!(scratch.survivors().is_empty());
    assert_eq!(verdict(&rec, "handshake"), Verdict::Pass);
    assert_eq!(rec["server"]["tools"].as_array().unwrap().len(), 4, "{}", rec["server"]);
    let asked = &rec["unasked"]["serverRequests"];
    assert_eq!(asked["roots/list"], 1000, "{}", rec["unasked"]);
    assert!(rec["unasked"]["serverRequestsUnanswered"].as_u64().unwrap() > 0);
}

/// Ctrl-C, SIGTERM (how CI cancels a job) and SIGHUP end a run alike: server stopped,
/// sandbox removed, the conventional exit code, and a word on stderr about what was
/// cleaned.
#[test]
fn sigint_sigterm_and_sighup_stop_the_server_and_remove_the_sandbox() {
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let scratch = Scratch::watching_starts();
        let cfg = scratch.config("hang-init", "");
        let out = scratch.interrupted(&["run", "--config", cfg.to_str().unwrap()], signal, |_| {});
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert!(err.contains("stopped the server"), "{err}");
        assert!(err.contains("removed the sandbox directory"), "{err}");
        assert!(scratch.survivors().is_empty(), "left: {:?}", scratch.survivors());
        assert!(scratch.sandbox_removed());
    }
}

/// A child that leaves the session, scrubs its environment and is orphaned is adopted
/// by sealmark (a child subreaper), found, killed and listed.
#[test]
fn orphans_with_a_scrubbed_environment_are_found_killed_and_named() {
    let (rec, _) = hostile("escape-scrubbed");
    let left = rec["sandbox"]["leftoverProcesses"].as_array().unwrap();
    assert!(left.iter().any(|l| l.as_str().unwrap().starts_with("sleep")), "{left:?}");
    let sleepers: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.trim() == "sleep 6001")
        .collect();
    assert!(sleepers.is_empty(), "still running: {sleepers:?}");
}

/// An initialize answer to an id the harness never sent is no handshake: it fails, and
/// the evidence says what came back instead.
#[test]
fn an_initialize_answer_to_another_id_fails_the_handshake() {
    let rec = failed_handshake("wrong-id-init");
    let summary = rec["checks"][0]["summary"].as_str().unwrap();
    assert!(summary.contains("answered a request id never sent"), "{summary}");
    assert_eq!(rec["unasked"]["unsolicitedAnswers"], 1, "{}", rec["unasked"]);
}

/// A tools/list that never ends is read to a bound and no further, and the bound is
/// evidence: the tool list is incomplete, so what depends on all of it is inconclusive.
#[test]
fn endless_pagination_is_read_to_a_bound() {
    let (rec, _) = hostile("endless-pages");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Inconclusive);
    assert_eq!(verdict(&rec, "tool-poisoning"), Verdict::Inconclusive);
    let handshake = rec["checks"][0].to_string();
    assert!(handshake.contains("the list was read no further than"), "{handshake}");
    let tools = rec["server"]["tools"].as_array().unwrap().len();
    assert!((1..=1000).contains(&tools), "{tools} tools kept");
    // What the judges read is larger than a record keeps: named, not silently cut.
    let omitted = rec["observationsOmitted"].as_str().unwrap_or_default();
    assert!(omitted.contains("more than the 4 MiB a record keeps"), "{}", rec["observationsOmitted"]);
    assert!(rec["observations"].is_null());
}

/// A line under the length bound that would cost far more parsed (a million small
/// objects) is treated as too large, not parsed.
#[test]
fn a_dense_answer_is_not_parsed() {
    let (rec, _) = hostile("dense-answer");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Inconclusive);
    let handshake = rec["checks"][0].to_string();
    assert!(handshake.contains("too large for the harness to parse"), "{handshake}");
}

/// Notifications are read and scanned as they come, never kept: a flood neither hides
/// the answers nor pushes a later echo of a canary past what the scan sees.
#[test]
fn a_flood_of_notifications_hides_no_answer_and_no_echo() {
    let (rec, _) = hostile("floods-notifications");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Pass);
    assert_eq!(verdict(&rec, "secret-echo"), Verdict::Pass);
    assert_eq!(rec["server"]["tools"].as_array().unwrap().len(), 4, "{}", rec["server"]);
    assert!(rec["unasked"]["notifications"].as_u64().unwrap() > 1000, "{}", rec["unasked"]);
    // 70 MiB of notifications first, then errors that carry the environment. A debug
    // build reads 70 MiB in about 2 s of CPU, which on a machine loaded by other tests
    // has taken more than 10 s of wall time, so this waits up to 20 s.
    let (rec, _, _) = hostile_within("echo-after-flood", "timeout_probe_sec: 20\n");
    assert_eq!(verdict(&rec, "handshake"), Verdict::Pass, "{}", rec["checks"][0]);
    assert_eq!(verdict(&rec, "secret-echo"), Verdict::Fail, "{}", rec["checks"]);
    assert_eq!(rec["unasked"]["notifications"], 1120, "{}", rec["unasked"]);
}
