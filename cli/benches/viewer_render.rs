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
    // Without observations the evidence drawn is the record's own, all 5,000 of it (with
    // them, the judges would re-derive the real evidence and draw that instead).
    record.as_object_mut().unwrap().remove("observations");
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
    // The folder a reader downloads, raw and as a static host would gzip it.
    let mut files: Vec<(String, u64, u64)> = std::fs::read_dir(&site)
        .unwrap()
        .flatten()
        .map(|e| {
            let raw = e.metadata().unwrap().len();
            let gz = Command::new("gzip").arg("-9c").arg(e.path()).output().map_or(0, |o| o.stdout.len() as u64);
            (e.file_name().to_string_lossy().into_owned(), raw, gz)
        })
        .collect();
    files.sort();
    let kib = |n: u64| n as f64 / 1024.0;
    for (name, raw, gz) in &files {
        println!("  {name}: {:.0} KiB, {:.0} KiB gzipped", kib(*raw), kib(*gz));
    }
    let (raw, gz): (u64, u64) = files.iter().fold((0, 0), |(r, g), (_, a, b)| (r + a, g + b));
    // A reader fetches one form of the module: over HTTP viewer.wasm, from file:// viewer-wasm.js.
    let one =
        |skip: &str| files.iter().filter(|(n, ..)| n != skip && n != "sealmark-report.json").map(|f| f.2).sum::<u64>();
    println!(
        "published folder: {:.0} KiB, {:.0} KiB gzipped; a reader over HTTP downloads {:.0} KiB gzipped, from file:// {:.0} KiB (record aside; target under 600 KiB)",
        kib(raw),
        kib(gz),
        kib(one("viewer-wasm.js")),
        kib(one("viewer.wasm"))
    );
    let size = std::fs::metadata(&big).unwrap().len();
    println!(
        "viewer render, {EVIDENCE} evidence entries ({:.1} MiB record), {RUNS} loads from file://: median {:.0} ms, min {:.0} ms, max {:.0} ms (target under 1000 ms)",
        size as f64 / 1048576.0,
        times[RUNS / 2],
        times[0],
        times[RUNS - 1]
    );
}
