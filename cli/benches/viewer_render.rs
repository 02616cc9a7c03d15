//! The viewer's render benchmark: how long a published report of a record with 5,000
//! pieces of evidence takes to draw in headless Chromium, from navigation to the record
//! on screen (loading the WebAssembly included). Target: under 1 s. It reports, it does
//! not assert. Run by scripts/bench; needs the viewer built (scripts/build-viewer).

#[path = "../tests/browser/mod.rs"]
mod browser;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const EVIDENCE: usize = 5_000;
const RUNS: usize = 5;

fn main() {
    let sealmark = env!("CARGO_BIN_EXE_sealmark");
    let toy = Path::new(sealmark).with_file_name("toy-server");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(sealmark)
        .args(["run", "--format", "json", "--"])
        .arg(&toy)
        .args(["--mode", "env-echo", "{sandbox}"])
        .output()
        .expect("sealmark runs");
    let mut record: Value =
        serde_json::from_slice(&out.stdout).expect("a record (build the workspace's binaries first)");
    // Spread 5,000 copies of real evidence over the record's checks.
    let checks = record["checks"].as_array_mut().unwrap();
    let template = checks.iter().find_map(|c| c["evidence"].get(0).cloned()).unwrap();
    let n = checks.len();
    for c in checks.iter_mut() {
        c["evidence"] = Value::Array(Vec::new());
    }
    for i in 0..EVIDENCE {
        let mut e = template.clone();
        e["probe"] = format!("probe {i} of {EVIDENCE}: {}", template["probe"].as_str().unwrap_or("")).into();
        checks[i % n]["evidence"].as_array_mut().unwrap().push(e);
    }
    let big = dir.path().join("big.json");
    std::fs::write(&big, serde_json::to_string(&record).unwrap()).unwrap();
    let site = dir.path().join("site");
    let published = Command::new(sealmark)
        .args(["run", "--replay"])
        .arg(&big)
        .args(["--format", "html", "--out-dir"])
        .arg(&site)
        .output()
        .unwrap();
    assert!(
        site.join("index.html").exists(),
        "publishing failed (is the viewer built? scripts/build-viewer):\n{}",
        String::from_utf8_lossy(&published.stderr)
    );

    let mut b = browser::Browser::launch();
    let mut times = Vec::new();
    for _ in 0..RUNS {
        b.goto(&format!("file://{}", site.join("index.html").display()));
        b.wait_for("document.documentElement.hasAttribute('data-rendered-ms')");
        let ms: f64 = b.eval("Number(document.documentElement.getAttribute('data-rendered-ms'))").as_f64().unwrap();
        let rows = b.eval("document.querySelectorAll('.evidence tbody tr').length").as_u64().unwrap();
        assert_eq!(rows as usize, EVIDENCE, "every piece of evidence is on the page");
        times.push(ms);
    }
    times.sort_by(f64::total_cmp);
    let size = std::fs::metadata(&big).unwrap().len();
    println!(
        "viewer render, {EVIDENCE} evidence entries ({:.1} MiB record), {RUNS} loads from file://: median {:.0} ms, min {:.0} ms, max {:.0} ms (target under 1000 ms)",
        size as f64 / 1048576.0,
        times[RUNS / 2],
        times[0],
        times[RUNS - 1]
    );
}
