//! The viewer end to end: built with trunk, served on loopback by a plain static
//! server, opened in headless Chromium with records from real runs, a record it must
//! refuse, and a hostile record whose text must stay text.

mod common;

use common::Scratch;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn viewer_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../viewer")
}

/// Builds the viewer once per test run (trunk, offline, with the pinned wasm-bindgen).
fn dist() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // Its own target directory: the cargo running this test may hold the lock on ours.
            let out = Command::new("trunk")
                .args(["build", "--release", "--offline"])
                .env("CARGO_TARGET_DIR", viewer_dir().join("../target/viewer"))
                .current_dir(viewer_dir())
                .output()
                .expect("trunk is on PATH (scripts/test installs it)");
            assert!(out.status.success(), "trunk build failed:\n{}", String::from_utf8_lossy(&out.stderr));
            viewer_dir().join("dist")
        })
        .clone()
}

/// Serves `roots` (first match wins) on 127.0.0.1; returns the base URL.
fn serve(roots: Vec<PathBuf>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let roots = roots.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h == "\r\n" || h.is_empty() {
                        break;
                    }
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").split('?').next().unwrap_or("/");
                let name = if path == "/" { "index.html" } else { path.trim_start_matches('/') };
                let file = roots.iter().map(|r| r.join(name)).find(|p| p.is_file());
                let mut out = &stream;
                match file.and_then(|f| std::fs::read(&f).ok().map(|b| (f, b))) {
                    Some((f, body)) => {
                        let kind = match f.extension().and_then(|e| e.to_str()) {
                            Some("html") => "text/html; charset=utf-8",
                            Some("js") => "text/javascript",
                            Some("wasm") => "application/wasm",
                            Some("css") => "text/css",
                            _ => "application/json",
                        };
                        let _ = write!(
                            out,
                            "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = out.write_all(&body);
                    }
                    None => {
                        let _ =
                            out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    }
                }
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// The page's DOM after its scripts ran, from headless Chromium.
fn dom(url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=10000",
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
            url,
        ])
        .output()
        .expect("chromium is installed (scripts/test installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn saved_record(scratch: &Scratch, mode: &str, name: &str) -> PathBuf {
    let cfg = scratch.config(mode, "packs: [core, fs, effects]\n");
    let path = scratch.path().join(name);
    scratch.run(&["run", "--config", cfg.to_str().unwrap(), "--format", "json", "--out", path.to_str().unwrap()]);
    assert!(path.exists(), "no record for {mode}");
    path
}

#[test]
fn records_open_with_their_grade_math_and_bad_ones_get_a_message() {
    let scratch = Scratch::new();
    saved_record(&scratch, "good", "good.json");
    saved_record(&scratch, "env-echo", "capped.json");
    let good: serde_json::Value =
        serde_json::from_slice(&std::fs::read(scratch.path().join("good.json")).unwrap()).unwrap();
    let mut old = good.clone();
    old["sealmark"]["methodology"] = "0.2".into();
    std::fs::write(scratch.path().join("old.json"), old.to_string()).unwrap();
    let mut hostile = good.clone();
    hostile["server"]["name"] = "<script>document.title='pwned'</script>\u{200b}Evil".into();
    hostile["checks"][0]["label"] = "<img src=x onerror=\"document.title='pwned'\">".into();
    hostile["checks"][0]["summary"] = "[click](javascript:alert(1)) \u{202e}gnp.exe".into();
    std::fs::write(scratch.path().join("hostile.json"), hostile.to_string()).unwrap();

    let base = serve(vec![dist(), scratch.path().to_path_buf()]);
    let page = dom(&format!("{base}/?record=good.json"));
    for want in [
        "PACK fs",
        "GRADE A (4/4 points, 100%)",
        "How this grade was computed",
        "4 of 4 points: 100%.",
        "scope: server",
    ] {
        assert!(page.contains(want), "missing {want:?} in:\n{page}");
    }
    let page = dom(&format!("{base}/?record=capped.json"));
    assert!(page.contains("so C is capped at D.") || page.contains("is capped at D."), "{page}");
    assert!(page.contains("[response]"), "an evidence line: {page}");

    let page = dom(&format!("{base}/?record=capped.json&baseline=good.json"));
    assert!(page.contains("Compared with the baseline:"), "{page}");
    assert!(page.contains("regression: secret-echo pass → fail"), "the CLI's baseline rule: {page}");

    let page = dom(&format!("{base}/?record=old.json"));
    assert!(page.contains("not a record the viewer can read: a record of methodology 0.2"), "{page}");
    let page = dom(&format!("{base}/?record=missing.json"));
    assert!(page.contains("missing.json: HTTP 404"), "{page}");

    let page = dom(&format!("{base}/?record=hostile.json"));
    assert!(!page.contains("pwned</title>") && page.contains("<title>sealmark report</title>"), "a script ran: {page}");
    assert!(page.contains("&lt;script&gt;document.title="), "the name is shown as text: {page}");
    assert!(page.contains("&lt;img src=x onerror="), "the label is shown as text: {page}");
    assert!(!page.contains("<img"), "no element came from the record: {page}");
    assert!(!page.contains("href=\"javascript:"), "no link came from the record: {page}");
    assert!(page.contains("\\u{200b}") && page.contains("\\u{202e}"), "invisible characters are shown: {page}");
}
