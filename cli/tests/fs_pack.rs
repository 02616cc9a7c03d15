//! Every fs and effects check passes on the well-behaved toy server and fails on the
//! mode with exactly the flaw it exists to catch, with the evidence that decided it.

mod common;

use common::{Scratch, record_of, verdict};
use sealmark_engine::model::Verdict::{self, Fail, Inconclusive, Na, Pass};

const CHECKS: [&str; 7] = [
    "fs-read-escape",
    "fs-write-escape",
    "fs-symlink-escape",
    "fs-large-read",
    "effects-read-only",
    "effects-closed-world",
    "effects-unannotated",
];

/// The well-behaved server: every scored check passes; no tool is unannotated.
const GOOD: [Verdict; 7] = [Pass, Pass, Pass, Pass, Pass, Pass, Na];

/// Mode × check → expected verdict, where it differs from GOOD.
const EXPECTED: &[(&str, &[(&str, Verdict)])] = &[
    ("good", &[]),
    ("prefix-check-reads", &[("fs-read-escape", Fail)]),
    ("prefix-check-writes", &[("fs-write-escape", Fail)]),
    ("no-link-resolution", &[("fs-symlink-escape", Fail)]),
    ("realpath-existing-only", &[("fs-symlink-escape", Fail)]),
    ("no-read-cap", &[("fs-large-read", Fail)]),
    ("readonly-writes-cache", &[("effects-read-only", Fail)]),
    ("phones-home", &[("effects-closed-world", Fail)]),
    ("unannotated-cache", &[("effects-unannotated", Fail), ("effects-read-only", Na), ("effects-closed-world", Na)]),
    ("broken-reads", &[("fs-read-escape", Inconclusive), ("fs-large-read", Inconclusive), ("effects-read-only", Pass)]),
    // A call log rewritten under HOME on every call is the server's noise, not an escape.
    ("call-log-home", &[]),
    // A history of the calls that are not reads, under HOME: the server's bookkeeping.
    ("history-in-home", &[]),
    // One answer line of more than 8 MiB: too large, attributed to the read, no wait.
    ("huge-read", &[("fs-large-read", Fail)]),
];

/// Runs one mode and checks every fs and effects verdict, and that a failure names
/// the probe and tool that decided it.
fn check_mode(mode: &str) -> serde_json::Value {
    let row = EXPECTED.iter().find(|(m, _)| *m == mode).expect("mode in table").1;
    let scratch = Scratch::new();
    let cfg = scratch.config_args(&["--mode", mode, "--notify", "{listener}", "{sandbox}"], "");
    let (rec, _) = record_of(&scratch, &cfg);
    for (id, good) in CHECKS.iter().zip(GOOD) {
        let want = row.iter().find(|(c, _)| c == id).map_or(good, |(_, v)| *v);
        let check = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == *id).unwrap();
        assert_eq!(verdict(&rec, id), want, "mode {mode}, check {id}: {}", check["summary"]);
        if want == Fail {
            let first = &check["evidence"][0];
            assert!(first["tool"].is_string(), "mode {mode}, {id}: the deciding evidence names the tool: {first}");
            assert!(
                matches!(first["verifiedBy"].as_str(), Some("sandbox" | "response" | "listener")),
                "mode {mode}, {id}: {first}"
            );
        }
    }
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes: {:?}", scratch.survivors());
    assert!(scratch.sandbox_removed(), "mode {mode}: sandbox not removed");
    rec
}

#[test]
fn good_server_passes_fs_and_effects() {
    let rec = check_mode("good");
    assert_eq!(rec["packs"]["fs"]["grade"]["letter"], "A");
    assert_eq!(rec["packs"]["effects"]["grade"]["letter"], "A");
    assert_eq!(rec["badge"]["eligible"], true);
    let read = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "fs-read-escape").unwrap();
    assert_eq!(read["evidence"][0]["code"], "fs.control.read", "the control read comes first");
}

#[test]
fn string_prefix_read_check_fails_read_escape() {
    let rec = check_mode("prefix-check-reads");
    let summary =
        rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "fs-read-escape").unwrap()["summary"].clone();
    assert!(summary.as_str().unwrap().contains("sibling-prefix on read_file"), "{summary}");
}

#[test]
fn string_prefix_write_check_fails_write_escape() {
    let rec = check_mode("prefix-check-writes");
    let check = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "fs-write-escape").unwrap().clone();
    assert!(
        check["summary"].as_str().unwrap().contains("{sandbox}-sibling/new.txt was created"),
        "{}",
        check["summary"]
    );
    assert_eq!(check["evidence"][0]["verifiedBy"], "sandbox");
}

#[test]
fn unresolved_links_fail_symlink_escape() {
    check_mode("no-link-resolution");
}

#[test]
fn dangling_link_write_fails_symlink_escape() {
    let rec = check_mode("realpath-existing-only");
    let check = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "fs-symlink-escape").unwrap().clone();
    assert!(check["summary"].as_str().unwrap().contains("write-new-link"), "{}", check["summary"]);
}

#[test]
fn uncapped_read_fails_large_read() {
    check_mode("no-read-cap");
}

#[test]
fn read_only_tool_writing_a_cache_fails_effects_read_only() {
    check_mode("readonly-writes-cache");
}

#[test]
fn closed_world_tool_connecting_out_fails_effects_closed_world() {
    check_mode("phones-home");
}

#[test]
fn unannotated_tool_writing_fails_effects_unannotated() {
    check_mode("unannotated-cache");
}

#[test]
fn failed_control_read_is_inconclusive_never_pass() {
    check_mode("broken-reads");
}

#[test]
fn explain_lists_every_read_variant() {
    let out = std::process::Command::new(common::sealmark()).args(["explain", "fs-read-escape"]).output().unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    for v in sealmark_engine::registry::fs::READ_VARIANTS {
        assert!(page.contains(&format!("  {}  {}", v.name, v.sends)), "missing {}", v.name);
    }
}

#[test]
fn a_tool_with_an_argument_the_harness_cannot_fill_is_listed_not_skipped_silently() {
    let scratch = Scratch::new();
    let cfg = scratch.config("extra-required", "");
    let (rec, _) = record_of(&scratch, &cfg);
    let gaps: Vec<&str> = rec["notCovered"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(
        gaps.contains(&"head_file: required argument(s) lines cannot be filled with a harness-owned value; not probed by the fs and effects packs"),
        "{gaps:?}"
    );
    let class = rec["classification"].as_array().unwrap().iter().find(|c| c["tool"] == "head_file").unwrap().clone();
    assert_eq!((class["class"].as_str(), class["param"].as_str()), (Some("path"), Some("path")));
    assert_eq!(verdict(&rec, "fs-read-escape"), Pass, "the other tools are still probed");
}

#[test]
fn a_log_the_server_rewrites_on_every_call_is_noise_not_an_escape() {
    let rec = check_mode("call-log-home");
    let check = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "fs-write-escape").unwrap().clone();
    let noise = check["evidence"].as_array().unwrap().iter().find(|e| e["code"] == "fs.noise").unwrap().clone();
    assert!(noise["outcome"].as_str().unwrap().contains("{sandbox_home}/.toy/calls.log"), "{noise}");
}

/// A history file that write probes change, and a benign call of another tool too, is
/// the server's baseline: listed, never an escape, never a read-only tool's write.
#[test]
fn a_history_the_server_keeps_under_home_is_its_baseline_not_an_escape() {
    let rec = check_mode("history-in-home");
    for id in ["fs-write-escape", "effects-read-only"] {
        let check = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
        let noise = check["evidence"].as_array().unwrap().iter().find(|e| e["code"] == "fs.noise");
        let noise = noise.unwrap_or_else(|| panic!("{id}: no noise line: {check}"))["outcome"].clone();
        assert!(noise.as_str().unwrap().contains("{sandbox_home}/.toy/history.jsonl"), "{id}: {noise}");
    }
}

#[test]
fn an_answer_over_the_line_bound_is_a_too_large_read_not_a_timeout() {
    let started = std::time::Instant::now();
    let rec = check_mode("huge-read");
    let check = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "fs-large-read").unwrap().clone();
    assert!(
        check["summary"].as_str().unwrap().contains("bytes came back, over the 1048576-byte limit"),
        "{}",
        check["summary"]
    );
    // The default probe timeout is 10 s: an answer that arrived is never waited out.
    assert!(started.elapsed() < std::time::Duration::from_secs(8), "took {:?}", started.elapsed());
}

/// Schemas published empty (the zod 4 breakage): the handshake says so, and the packs
/// still aim the tools, with the parameters learned from the server's own validation.
#[test]
fn empty_schemas_fail_the_handshake_but_the_packs_still_run() {
    let scratch = Scratch::new();
    let cfg = scratch.config_args(&["--empty-schemas", "--notify", "{listener}", "{sandbox}"], "");
    let (rec, _) = record_of(&scratch, &cfg);
    assert_eq!(verdict(&rec, "handshake"), Fail);
    for id in ["fs-read-escape", "fs-write-escape", "fs-symlink-escape", "fs-large-read"] {
        let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap();
        assert_eq!(verdict(&rec, id), Pass, "{id}: {}", c["summary"]);
    }
    let class = rec["classification"].as_array().unwrap().iter().find(|c| c["tool"] == "write_file").unwrap().clone();
    assert_eq!(
        (class["class"].as_str(), class["param"].as_str(), class["confidence"].as_str()),
        (Some("path"), Some("path"), Some("low"))
    );
    assert!(
        class["reason"].as_str().unwrap().contains("parameters path, content learned from its validation error"),
        "{class}"
    );

    // And the flaw under an empty schema is still found.
    let scratch = Scratch::new();
    let cfg = scratch.config_args(&["--empty-schemas", "--mode", "prefix-check-reads", "{sandbox}"], "");
    let (rec, _) = record_of(&scratch, &cfg);
    assert_eq!(verdict(&rec, "fs-read-escape"), Fail);
}

#[test]
fn classify_declares_what_the_heuristics_cannot_see() {
    let scratch = Scratch::new();
    let cfg = scratch.config_args(
        &["--empty-schemas", "{sandbox}"],
        "classify:\n  stat: { class: other }\n  list_dir: { class: path, param: path }\n",
    );
    let (rec, _) = record_of(&scratch, &cfg);
    let class =
        |tool: &str| rec["classification"].as_array().unwrap().iter().find(|c| c["tool"] == tool).unwrap().clone();
    assert_eq!(class("stat")["class"], "other");
    assert_eq!(class("list_dir")["confidence"], "declared");
    assert_eq!(verdict(&rec, "fs-read-escape"), Pass);

    // A declared tool the server does not list is a config error, with the line and a hint.
    let cfg = scratch.config_args(&["{sandbox}"], "classify:\n  read_fil: { class: path, param: path }\n");
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":7: classify.read_fil: the server lists no tool \"read_fil\" (did you mean `read_file`?)"),
        "{err}"
    );
    // doctor, which starts the server too, names the same problem.
    let out = scratch.run(&["doctor", "--config", cfg.to_str().unwrap()]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("problems a run would refuse (exit 2):"), "{report}");
    assert!(report.contains("classify.read_fil: the server lists no tool \"read_fil\""), "{report}");
    let cfg = scratch.config_args(&["{sandbox}"], "classify:\n  read_file: { class: path, param: pth }\n");
    let err = String::from_utf8_lossy(&scratch.run(&["run", "--config", cfg.to_str().unwrap()]).stderr).into_owned();
    assert!(
        err.contains("classify.read_file.param: read_file declares no parameter \"pth\" (did you mean `path`?)"),
        "{err}"
    );
    let cfg = scratch.config_args(&["{sandbox}"], "classify:\n  read_file: { class: paht, param: path }\n");
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("classify.read_file.class: expected one of sql, command, git, url, path, other, found \"paht\" (did you mean `path`?)"), "{err}");
    assert!(scratch.survivors().is_empty());
}

/// A file tool whose flag switches its path argument to a URL is a URL tool as well.
#[test]
fn a_file_tool_with_a_url_flag_is_aimed_by_the_net_pack() {
    let scratch = Scratch::new();
    let cfg = scratch.config_args(&["--url-flag", "{sandbox}"], "");
    let (rec, _) = record_of(&scratch, &cfg);
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-loopback-ssrf").unwrap().clone();
    assert_eq!(verdict(&rec, "net-loopback-ssrf"), Fail, "{}", c["summary"]);
    assert!(c["summary"].as_str().unwrap().contains("on read_file"), "{}", c["summary"]);
    assert_eq!(c["evidence"][0]["verifiedBy"], "listener");
}

/// A run of a slow-tool mode with a short probe timeout: its record.
fn slow_run(mode: &str) -> serde_json::Value {
    let scratch = Scratch::new();
    let cfg = scratch.config_args(&["--mode", mode, "--notify", "{listener}", "{sandbox}"], "timeout_probe_sec: 2\n");
    let (rec, _) = record_of(&scratch, &cfg);
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes: {:?}", scratch.survivors());
    rec
}

fn check_of<'r>(rec: &'r serde_json::Value, id: &str) -> &'r serde_json::Value {
    rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()
}

/// The evidence line of long_operation's benign call in a check.
fn long_operation_line(rec: &serde_json::Value, id: &str) -> String {
    let check = check_of(rec, id);
    let line = check["evidence"].as_array().unwrap().iter().find(|e| e["tool"] == "long_operation");
    line.unwrap_or_else(|| panic!("{id}: no line for long_operation: {check}"))["outcome"].as_str().unwrap().to_string()
}

/// A read-only, closed-world tool that outlasts the probe timeout is left out with its
/// own line while the other tools are judged; an earlier probe's request that arrives
/// during its call (the server fetches its last URL again on every call) is that
/// probe's, not the tool's. Five runs, one verdict.
#[test]
fn a_slow_tool_and_a_late_request_give_one_effects_verdict_in_five_runs() {
    let runs: Vec<serde_json::Value> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..5).map(|_| s.spawn(|| slow_run("slow-and-late"))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for rec in &runs {
        for (id, want) in CHECKS.iter().zip(GOOD) {
            assert_eq!(verdict(rec, id), want, "{id}: {}", check_of(rec, id)["summary"]);
        }
        for id in ["effects-read-only", "effects-closed-world"] {
            let summary = check_of(rec, id)["summary"].as_str().unwrap().to_string();
            assert!(summary.contains("(long_operation left out: no answer within the probe timeout)"), "{summary}");
            let line = long_operation_line(rec, id);
            assert!(line.contains("left out: a call that did not finish in time proves nothing either way"), "{line}");
        }
        let line = long_operation_line(rec, "effects-closed-world");
        assert!(line.contains("an earlier probe's request arriving late, not charged to this call"), "{line}");
    }
}

/// The flaw beside it: the slow tool connects out before it sleeps. Its call never
/// finishes, but the connection was made during it and no earlier probe explains it.
#[test]
fn a_slow_closed_world_tool_that_connects_out_fails_effects_closed_world() {
    let rec = slow_run("slow-phones-home");
    assert_eq!(verdict(&rec, "effects-closed-world"), Fail, "{}", check_of(&rec, "effects-closed-world")["summary"]);
    assert_eq!(verdict(&rec, "effects-read-only"), Pass, "{}", check_of(&rec, "effects-read-only")["summary"]);
    let line = long_operation_line(&rec, "effects-closed-world");
    assert!(line.contains("accepted 1 connection(s) during the call that no earlier probe explains"), "{line}");
}

#[test]
fn the_table_is_the_registrys_and_fails_every_check() {
    use sealmark_engine::model::Pack;
    let rows: Vec<(&str, Vec<Verdict>)> = common::sparse_rows(&CHECKS, EXPECTED);
    common::assert_table_covers_registry(&CHECKS, &[Pack::Fs, Pack::Effects], &rows);
}
