//! A server that stops answering after one malformed input must cost that input, not
//! the run: robust-input fails, every later pack is graded on a restarted server, and
//! the verdicts are the same from run to run.

mod common;

use common::{Scratch, record, verdict};
use sealmark_engine::model::Verdict::{Fail, Pass};
use serde_json::Value;

const FAST: &str = "timeout_probe_sec: 1\n";

/// A record without the fields that change from run to run.
fn stable(mut rec: Value) -> Value {
    for (parent, key) in [("", "startedAt"), ("", "durationMs"), ("sandbox", "listenerPort")] {
        let obj = if parent.is_empty() { rec.as_object_mut() } else { rec[parent].as_object_mut() };
        if let Some(o) = obj {
            o.remove(key);
        }
    }
    rec
}

#[test]
fn a_server_wedged_by_deep_nesting_fails_robust_input_and_nothing_else() {
    let scratch = Scratch::new();
    let (rec, _) = record(&scratch, "wedge-on-deep-nesting", FAST);
    let robust = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "robust-input").unwrap().clone();
    assert_eq!(verdict(&rec, "robust-input"), Fail, "{}", robust["summary"]);
    assert!(
        robust["summary"].as_str().unwrap().contains("stopped answering after deep-nesting"),
        "{}",
        robust["summary"]
    );
    for id in
        ["secret-echo", "fs-read-escape", "fs-write-escape", "fs-symlink-escape", "fs-large-read", "effects-read-only"]
    {
        let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap();
        assert_eq!(verdict(&rec, id), Pass, "{id}: {}", c["summary"]);
    }
    assert_eq!(rec["packs"]["fs"]["grade"]["letter"], "A");
    assert!(scratch.survivors().is_empty(), "left: {:?}", scratch.survivors());
    assert!(scratch.sandbox_removed());
}

#[test]
fn ten_runs_of_a_wedging_server_give_the_same_record() {
    let runs: Vec<Value> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..10)
            .map(|_| {
                s.spawn(|| {
                    let scratch = Scratch::new();
                    let (rec, _) = record(&scratch, "wedge-on-deep-nesting", FAST);
                    assert!(scratch.survivors().is_empty());
                    // The scratch directory's own name is the one thing a run is given apart.
                    serde_json::from_str(&stable(rec).to_string().replace(&scratch.tag, "{tag}")).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a run")).collect()
    });
    for (i, r) in runs.iter().enumerate().skip(1) {
        if *r != runs[0] {
            let (a, b) = (serde_json::to_string_pretty(&runs[0]).unwrap(), serde_json::to_string_pretty(r).unwrap());
            let first = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
            panic!(
                "run {i} differs from run 0 at line {first}:\n{}\n---\n{}",
                a.lines().nth(first).unwrap_or(""),
                b.lines().nth(first).unwrap_or("")
            );
        }
    }
}
