//! The viewer end to end, in headless Chromium: folders published by `sealmark run
//! --format html` from real runs of every toy server open from `file://` (asking for
//! nothing but their own files) and from a plain static server, with the grades the
//! CLI printed; records open from `?record=`, the file picker and a drop; a baseline is
//! compared; bad and hostile records get a message or stay text; the site's pages,
//! search and links work, at phone width and in print.

mod browser;
mod common;

use browser::Browser;
use common::{Scratch, sealmark, toy};
use sealmark_engine::registry::CHECKS;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Serves `root` on 127.0.0.1 as a plain static host; returns the base URL.
fn serve(root: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
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
                let name = if path.ends_with('/') { format!("{path}index.html") } else { path.to_string() };
                let file = root.join(name.trim_start_matches('/'));
                let mut out = &stream;
                match std::fs::read(&file) {
                    Ok(body) if !name.contains("..") => {
                        let kind = match file.extension().and_then(|e| e.to_str()) {
                            Some("html") => "text/html; charset=utf-8",
                            Some("js") => "text/javascript",
                            Some("css") => "text/css",
                            Some("wasm") => "application/wasm",
                            _ => "application/json",
                        };
                        let _ = write!(
                            out,
                            "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        );
                        let _ = out.write_all(&body);
                    }
                    _ => {
                        let _ =
                            out.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                    }
                }
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

/// Runs sealmark (the toy servers' directory first on PATH) and returns its stderr.
fn sealmark_in(scratch: &Scratch, args: &[&str]) -> String {
    let bin = sealmark().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(sealmark())
        .args(args)
        .env("PATH", path)
        .env("TMPDIR", scratch.path().join("tmp"))
        .output()
        .expect("sealmark runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.code().is_some_and(|c| c < 2), "sealmark {args:?} failed:\n{stderr}");
    stderr
}

/// Publishes a run of `cfg` as html (and text) into `dir`.
fn publish(scratch: &Scratch, cfg: &Path, dir: &Path) {
    let stderr = sealmark_in(
        scratch,
        &["run", "--config", cfg.to_str().unwrap(), "--format", "html,text", "--out-dir", dir.to_str().unwrap()],
    );
    assert!(dir.join("index.html").is_file(), "no index.html: {stderr}");
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Opens a published page and waits until the viewer drew its record.
fn open(b: &mut Browser, url: &str) -> String {
    b.goto(url);
    b.wait_for("document.documentElement.hasAttribute('data-rendered-ms')");
    b.text()
}

/// Whitespace collapsed, as the browser's innerText of inline elements reads.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The pack lines of the CLI's text report (`PACK fs  GRADE A  (4/4 points, 100%)`)
/// and its cap lines, each of which the viewer must show the same.
fn cli_grade_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("PACK ") || l.trim_start().starts_with("Capped at D:"))
        .map(|l| squash(l.trim_end_matches("  candidate pack").trim_end_matches("  custom grade")))
        .collect()
}

#[test]
fn published_reports_of_every_toy_server_open_anywhere_with_the_clis_grades() {
    let scratch = Scratch::new();
    let example =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/config/scoped-http.yaml"))
            .unwrap();
    let port = common::free_port();
    let configs: Vec<(&str, PathBuf)> = vec![
        (
            "toy-server",
            scratch.config_named("toy-server", &toy("toy-server"), &["--mode", "env-echo", "{sandbox}"], ""),
        ),
        ("toy-fetch", scratch.config_named("toy-fetch", &toy("toy-fetch"), &["--mode", "good"], "")),
        ("toy-sqlite", scratch.config_named("toy-sqlite", &toy("toy-sqlite"), &["--mode", "good", "{sqlite}"], "")),
        ("toy-sql", {
            let cfg =
                scratch.config_named("toy-sql", &toy("toy-sql"), &["--mode", "no-row-cap"], "timeout_probe_sec: 5\n");
            add_env(&cfg, "DATABASE_URL: \"{dsn}\"")
        }),
        ("toy-data", {
            let p = scratch.path().join("toy-data.yaml");
            std::fs::write(&p, example.replace("8080", &port.to_string())).unwrap();
            p
        }),
        (
            "toy-git",
            scratch.config_named("toy-git", &toy("toy-git"), &["--repository", "{repo}", "--mode", "prefix-check"], ""),
        ),
        ("toy-http", {
            let port = common::free_port().to_string();
            let cfg =
                scratch.config_named("toy-http", &toy("toy-http"), &["--port", &port, "--mode", "cors-reflect"], "");
            let text = std::fs::read_to_string(&cfg).unwrap().replace(
                "  env:\n",
                &format!("  url: http://127.0.0.1:{port}/mcp\n  headers: {{ Authorization: \"Bearer t1\" }}\n  env:\n    TOY_TOKEN: t1\n"),
            );
            std::fs::write(&cfg, text).unwrap();
            cfg
        }),
    ];
    std::thread::scope(|s| {
        for (name, cfg) in &configs {
            let scratch = &scratch;
            s.spawn(move || publish(scratch, cfg, &scratch.path().join(name)));
        }
    });

    let mut b = Browser::launch();
    let base = serve(scratch.path().to_path_buf());
    for (name, _) in &configs {
        let dir = scratch.path().join(name);
        let cli = std::fs::read_to_string(dir.join("sealmark-report.txt")).unwrap();
        let want = cli_grade_lines(&cli);
        assert!(want.iter().any(|l| l.contains(" GRADE ")), "{name}: the CLI graded something:\n{cli}");

        b.forget();
        let page = open(&mut b, &file_url(&dir.join("index.html")));
        for line in &want {
            assert!(page.contains(line.as_str()), "{name}: the viewer lacks the CLI's {line:?}:\n{page}");
        }
        assert!(page.contains("How this grade was computed"), "{name}");
        // Every check was judged again in the browser, from the record's observations.
        let marks = b.eval(
            "[document.querySelectorAll('li.check').length,
              document.querySelectorAll('li.check .rederivation.rederived').length,
              document.querySelectorAll('.rederivation.mismatch, .mismatch-band').length]",
        );
        let checks = marks[0].as_u64().unwrap();
        assert!(checks > 0 && marks[1] == checks && marks[2] == 0, "{name}: [checks, re-derived, mismatches] {marks}");
        assert!(page.contains("re-derived in this browser from the record's observations"), "{name}:\n{page}");
        let own = file_url(&dir);
        let foreign: Vec<String> = b.requests().into_iter().filter(|u| !u.starts_with(&own)).collect();
        assert!(foreign.is_empty(), "{name}: requests beyond its own files: {foreign:?}");
        assert!(b.exceptions().is_empty(), "{name}: {:?}", b.exceptions());

        assert!(b.requests().iter().any(|u| u.ends_with("/viewer-wasm.js")), "from disk, the module comes in a script");

        // The same folder from a plain static host, which fetches the module as it is.
        b.forget();
        let page = open(&mut b, &format!("{base}/{name}/"));
        assert!(page.contains(want[0].as_str()), "{name} over HTTP:\n{page}");
        let requests = b.requests();
        assert!(requests.iter().any(|u| u.ends_with("/viewer.wasm")), "{requests:?}");
        assert!(!requests.iter().any(|u| u.ends_with("/viewer-wasm.js")), "{requests:?}");
        assert!(requests.iter().all(|u| u.starts_with(&base)), "{requests:?}");
    }

    // Each pack's math ends in the letter the CLI printed, step by step.
    let toy = scratch.path().join("toy-server");
    open(&mut b, &file_url(&toy.join("index.html")));
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
    let page = b.text();
    for want in ["4. Percentage 3 of 4 points: 75%.", "so B is capped at D.", "Grade D.", "[response]"] {
        assert!(page.contains(want), "missing {want:?}:\n{page}");
    }
    b.screenshot("report");
}

fn add_env(cfg: &Path, line: &str) -> PathBuf {
    let text = std::fs::read_to_string(cfg).unwrap().replace("    TEST_TAG:", &format!("    {line}\n    TEST_TAG:"));
    std::fs::write(cfg, text).unwrap();
    cfg.to_path_buf()
}

/// A good and a capped record, published, with JSON copies to open other ways.
fn two_records(scratch: &Scratch) -> (PathBuf, PathBuf) {
    let good = scratch.config_named("good", &toy("toy-server"), &["--mode", "good", "{sandbox}"], "");
    let capped = scratch.config_named("capped", &toy("toy-server"), &["--mode", "env-echo", "{sandbox}"], "");
    let (g, c) = (scratch.path().join("good"), scratch.path().join("capped"));
    std::thread::scope(|s| {
        s.spawn(|| publish(scratch, &good, &g));
        s.spawn(|| publish(scratch, &capped, &c));
    });
    (g.join("sealmark-report.json"), c.join("sealmark-report.json"))
}

#[test]
fn records_open_from_a_url_the_picker_or_a_drop_and_compare_with_a_baseline() {
    let scratch = Scratch::new();
    let (good, capped) = two_records(&scratch);
    let base = serve(scratch.path().to_path_buf());
    let mut b = Browser::launch();

    // ?record= overrides the embedded record; &baseline= compares by the CLI's rule.
    let page =
        open(&mut b, &format!("{base}/good/?record=../capped/sealmark-report.json&baseline=sealmark-report.json"));
    assert!(page.contains("Compared with the baseline"), "{page}");
    assert!(page.contains("regression: secret-echo pass → fail"), "{page}");
    assert!(page.contains("grade: core A → D"), "the grade change is named: {page}");
    assert!(page.contains(", from sealmark-report.json."), "the baseline is named: {page}");
    assert!(page.contains("Capped at D: a critical check failed; without the cap the grade would be B."), "{page}");
    b.eval("document.querySelector('.compare-table').open = true");
    let rows =
        b.eval("[...document.querySelectorAll('.compare-table tr.regression td')].map(t => t.innerText).join('|')");
    assert!(rows.as_str().unwrap().starts_with("secret-echo"), "{rows}");
    assert!(rows.as_str().unwrap().contains("|PASS|FAIL|regression"), "{rows}");

    // The file picker: the good record's page opens the capped one, then a baseline.
    open(&mut b, &file_url(&scratch.path().join("good/index.html")));
    b.pick_files("#open-record", &[&capped]);
    let page = b.wait_for_text("without the cap the grade would be B");
    assert!(!page.contains("Compared with the baseline"));
    b.pick_files("#open-baseline", &[&good]);
    let page = b.wait_for_text("Compared with the baseline");
    assert!(page.contains("regression: secret-echo pass → fail"), "{page}");
    let picked = good.file_name().unwrap().to_string_lossy().into_owned();
    assert!(page.contains(&format!(", from {picked}.")), "the picked file is named: {page}");

    // A drop anywhere on the page opens the dropped file as the record.
    let text = std::fs::read_to_string(&good).unwrap();
    open(&mut b, &file_url(&scratch.path().join("capped/index.html")));
    b.eval(&format!(
        "(() => {{ const dt = new DataTransfer(); dt.items.add(new File([{}], 'dropped.json', {{ type: 'application/json' }}));
           document.querySelector('main').dispatchEvent(new DragEvent('drop', {{ dataTransfer: dt, bubbles: true, cancelable: true }})); }})()",
        serde_json::json!(text)
    ));
    b.wait_for("!document.body.innerText.includes('without the cap the grade would be B')");
    let page = b.text();
    assert!(page.contains("PACK core GRADE A (4/4 points, 100%)"), "{page}");

    // A dropped file that is not a record gets a message, not a blank page.
    b.eval(
        "(() => { const dt = new DataTransfer(); dt.items.add(new File(['{not json'], 'notes.json'));
           document.querySelector('main').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true })); })()",
    );
    let page = b.wait_for_text("notes.json: this is not a record the viewer can read");
    assert!(page.contains("line 1"), "{page}");
}

#[test]
fn bad_records_get_a_message_and_hostile_ones_stay_text() {
    let scratch = Scratch::new();
    let (good, capped) = two_records(&scratch);
    let rec: serde_json::Value = serde_json::from_slice(&std::fs::read(&good).unwrap()).unwrap();
    let mut old = rec.clone();
    old["sealmark"]["methodology"] = "0.2".into();
    std::fs::write(scratch.path().join("old.json"), old.to_string()).unwrap();
    let mut newer = rec.clone();
    newer["config"]["schemaVersion"] = 99.into();
    std::fs::write(scratch.path().join("newer.json"), newer.to_string()).unwrap();
    // A verdict flipped in the record: the viewer's own judges overrule it, loudly.
    let mut doctored: serde_json::Value = serde_json::from_slice(&std::fs::read(&capped).unwrap()).unwrap();
    let at = doctored["checks"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["verdict"] != "pass")
        .expect("a check that did not pass");
    let doctored_id = doctored["checks"][at]["id"].as_str().unwrap().to_string();
    doctored["checks"][at]["verdict"] = "pass".into();
    std::fs::write(scratch.path().join("doctored.json"), doctored.to_string()).unwrap();
    // A grade edited in the record: the viewer gives the checks' letter and says so; the
    // record a replay of it writes carries what the replay found, which the viewer shows.
    let mut regraded = rec.clone();
    regraded["packs"]["core"]["grade"]["letter"] = "C".into();
    let regraded_path = scratch.path().join("regraded.json");
    std::fs::write(&regraded_path, regraded.to_string()).unwrap();
    let replayed = scratch.path().join("replayed");
    sealmark_in(
        &scratch,
        &[
            "run",
            "--replay",
            regraded_path.to_str().unwrap(),
            "--format",
            "json",
            "--out-dir",
            replayed.to_str().unwrap(),
        ],
    );
    let mut hostile = rec.clone();
    hostile["server"]["name"] = "<script>document.title='pwned'</script>\u{200b}Evil".into();
    hostile["checks"][0]["label"] = "<img src=x onerror=\"document.title='pwned'\">".into();
    hostile["checks"][0]["summary"] = "[click](javascript:alert(1)) \u{202e}gnp.exe".into();
    hostile["classification"][0]["reason"] = "named \u{202e}gnp.exe".into();
    hostile["checks"][0]["evidence"][0]["outcome"] = "</script><script>document.title='pwned'</script>".into();
    hostile["classification"][0]["tool"] = "<a href=\"javascript:document.title='pwned'\">x</a>".into();
    let hostile_path = scratch.path().join("hostile.json");
    std::fs::write(&hostile_path, hostile.to_string()).unwrap();
    // The hostile record published as its own page: embedded, not fetched.
    let out = scratch.path().join("hostile");
    sealmark_in(
        &scratch,
        &["run", "--replay", hostile_path.to_str().unwrap(), "--format", "html", "--out-dir", out.to_str().unwrap()],
    );

    let base = serve(scratch.path().to_path_buf());
    let mut b = Browser::launch();
    let page = open(&mut b, &format!("{base}/good/?record=../old.json"));
    assert!(page.contains("not a record the viewer can read: a record of methodology 0.2"), "{page}");
    let page = open(&mut b, &format!("{base}/good/?record=../missing.json"));
    assert!(page.contains("../missing.json: HTTP 404"), "{page}");
    let page = open(&mut b, &format!("{base}/good/?record=../newer.json"));
    assert!(page.contains("not a record the viewer can read") && page.contains("99"), "{page}");
    let page = open(&mut b, &format!("{base}/good/?record=../doctored.json"));
    assert!(page.contains("1 stored result(s) disagree with the record's own observations"), "{page}");
    assert!(page.contains(&format!("{doctored_id}: stored pass, re-derived ")), "{page}");
    assert!(page.contains("mismatch: the record stored pass"), "{page}");
    let page = open(&mut b, &format!("{base}/good/?record=../regraded.json"));
    assert!(page.contains("The record says C (4/4 points, 100%); its checks give A (4/4 points, 100%)."), "{page}");
    let page = open(&mut b, &format!("{base}/good/?record=../replayed/sealmark-report.json"));
    assert!(page.contains("This record was written by a replay"), "{page}");
    assert!(page.contains("core: stored grade C"), "{page}");
    let bands = b.eval("document.querySelectorAll('.mismatch-band.replayed').length");
    assert_eq!(bands, serde_json::json!(1), "{page}");

    for url in [format!("{base}/good/?record=../hostile.json"), file_url(&out.join("index.html"))] {
        b.forget();
        open(&mut b, &url);
        b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
        let page = b.text();
        let title = b.eval("document.title");
        assert!(title.as_str().unwrap().starts_with("sealmark report"), "a script ran: {title}");
        assert!(page.contains("<script>document.title='pwned'</script>\\u{200b}Evil"), "the name is text: {page}");
        assert!(page.contains("<img src=x onerror="), "the label is text: {page}");
        assert!(page.contains("\\u{202e}gnp.exe"), "invisible characters are shown: {page}");
        let counts = b.eval(
            "[document.querySelectorAll('img').length, document.querySelectorAll('a[href^=\"javascript\"]').length,
              document.querySelectorAll('main script').length, document.querySelectorAll('[onerror]').length]",
        );
        assert_eq!(counts, serde_json::json!([0, 0, 0, 0]), "elements came from the record");
        assert!(b.exceptions().is_empty(), "{:?}", b.exceptions());
    }
}

#[test]
fn the_site_has_every_check_page_search_and_links_and_reads_on_a_phone_and_in_print() {
    let scratch = Scratch::new();
    let (good, _) = two_records(&scratch);
    let page_url = file_url(&good.with_file_name("index.html"));
    let mut b = Browser::launch();
    open(&mut b, &page_url);

    // Every report line of a registry check links to its page.
    let links = b.eval("[...document.querySelectorAll('a.check-id')].map(a => a.getAttribute('href'))");
    assert!(links.as_array().unwrap().iter().any(|h| h == "#/checks/fs-read-escape"), "{links}");
    b.eval("document.querySelector('a.check-id[href=\"#/checks/fs-read-escape\"]').click()");
    let page = b.wait_for_text("What to fix");
    b.screenshot("check-page");
    assert!(page.contains("fs-read-escape") && page.contains("checks.fs-read-escape.enabled"), "{page}");

    // Every check in the registry has its page, with the facts `sealmark explain` prints.
    for c in CHECKS {
        b.eval(&format!("location.hash = '#/checks/{}'", c.id));
        b.wait_for(&format!("document.querySelector('.check-page h1 code')?.innerText === '{}'", c.id));
        let page = b.text();
        for fact in [c.label, "How the verdict is established", "What proves a pass", c.proves_pass, "False negatives"]
        {
            assert!(page.contains(&squash(fact)), "{}: missing {fact:?}", c.id);
        }
    }
    b.eval("location.hash = '#/checks/no-such-check'");
    b.wait_for_text("has no check no-such-check");

    // The hand-written pages, the packs, and search across them.
    b.eval("location.hash = '#/methodology'");
    b.wait_for_text("Grading formula");
    b.screenshot("methodology");
    b.eval("location.hash = '#/configuration/probes'");
    b.wait_for_text("timeout_ms");
    b.eval("location.hash = '#/cli'");
    b.wait_for_text("sealmark run");
    // The background pages: each draws under its own title and is in every page's footer.
    for (hash, title) in [
        ("#/standard", "Standard versus custom"),
        ("#/classification", "Classification"),
        ("#/agents", "Humans, CI and agents"),
        ("#/roadmap", "Roadmap"),
    ] {
        b.eval(&format!("location.hash = '{hash}'"));
        b.wait_for(&format!("document.querySelector('article.markdown h1')?.innerText === '{title}'"));
        let listed = b.eval(&format!(
            "[...document.querySelectorAll('footer.pages a')].some(a => a.getAttribute('href') === '{hash}' && a.innerText === '{title}')"
        ));
        assert_eq!(listed, true, "the footer does not list {hash} as {title:?}");
        b.wait_for(&format!("document.title === 'sealmark · {title}'"));
    }
    b.eval("location.hash = '#/packs/db'");
    b.wait_for_text("Postgres");
    b.eval(
        "(() => { const s = document.querySelector('input.search'); s.value = 'symlink';
           s.dispatchEvent(new Event('input', { bubbles: true })); })()",
    );
    b.wait_for_text("Search: symlink");
    let hits = b.eval("[...document.querySelectorAll('.search-results a')].map(a => a.getAttribute('href'))");
    // The open record's check first, then its page in the reference.
    assert_eq!(hits[0], "#/at/check-fs-symlink-escape", "{hits}");
    assert_eq!(hits[1], "#/checks/fs-symlink-escape", "{hits}");
    b.eval("document.querySelectorAll('.search-results a')[1].click()");
    b.wait_for("document.querySelector('.check-page h1 code')?.innerText === 'fs-symlink-escape'");

    // Keyboard: the first stop is the skip link, and it lands in the content.
    let first = b.eval("(() => { document.activeElement.blur(); const f = document.querySelector('a, input, summary, [tabindex]'); return f.className; })()");
    assert_eq!(first, "skip");
    let labelled = b
        .eval("[...document.querySelectorAll('input')].every(i => i.closest('label') || i.getAttribute('aria-label'))");
    assert_eq!(labelled, true, "every input has a label");

    // A phone: no sideways scrolling on the report.
    b.call(
        "Emulation.setDeviceMetricsOverride",
        serde_json::json!({ "width": 375, "height": 800, "deviceScaleFactor": 1, "mobile": true }),
    );
    b.eval("location.hash = '#/'");
    b.wait_for_text("How this grade was computed");
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
    let overflow = b.eval("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    let wide = b.eval(
        "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 376)
           .slice(0, 6).map(e => e.tagName + '.' + e.className)",
    );
    assert!(overflow.as_i64().unwrap() <= 0, "the report scrolls sideways at 375px by {overflow}px: {wide}");
    b.screenshot("phone");
    b.call("Emulation.clearDeviceMetricsOverride", serde_json::json!({}));

    // Print: no menu or pickers, and every details opened by the print itself.
    b.eval("document.querySelectorAll('details').forEach(d => d.open = false)");
    b.call("Page.printToPDF", serde_json::json!({}));
    let closed = b.eval("document.querySelectorAll('details:not([open])').length");
    assert_eq!(closed, 0, "printing opens the evidence and the math");
    b.call("Emulation.setEmulatedMedia", serde_json::json!({ "media": "print" }));
    let hidden = b.eval("['.top', '.open'].map(s => getComputedStyle(document.querySelector(s)).display)");
    assert_eq!(hidden, serde_json::json!(["none", "none"]));
}

#[test]
fn html_needs_a_folder() {
    let scratch = Scratch::new();
    let out = Command::new(sealmark())
        .args(["run", "--format", "html", "--out", "x.html", "--", "true"])
        .current_dir(scratch.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--format html writes a folder: use --out-dir DIR"));
    assert!(!scratch.path().join("x.html").exists());
}

#[test]
fn a_run_of_several_opens_as_a_table_of_servers_with_each_report_a_click_away() {
    let scratch = Scratch::new();
    let cfg = scratch.path().join("several.yaml");
    let server = toy("toy-server");
    std::fs::write(
        &cfg,
        format!(
            "servers:\n  good:\n    command: {0}\n    args: [\"{{sandbox}}\"]\n  capped:\n    command: {0}\n    args: [\"--mode\", \"env-echo\", \"{{sandbox}}\"]\n",
            server.display()
        ),
    )
    .unwrap();
    let dir = scratch.path().join("several");
    sealmark_in(
        &scratch,
        &[
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--jobs",
            "2",
            "--format",
            "html",
            "--out-dir",
            dir.to_str().unwrap(),
        ],
    );
    let mut b = Browser::launch();
    let page = open(&mut b, &file_url(&dir.join("index.html")));
    assert!(page.contains("A run of several servers"), "{page}");
    let rows = b.eval(
        "[...document.querySelectorAll('.servers-table tbody tr')].map(r => [...r.children].map(c => c.innerText.trim()).join(' ')).join('|')",
    );
    let rows = rows.as_str().unwrap();
    assert!(rows.starts_with("good Server A 1.0.0 A A A"), "{rows}");
    assert!(rows.contains("|capped Server A 1.0.0 D "), "{rows}");
    b.eval("[...document.querySelectorAll('.servers-table a')].find(a => a.innerText === 'capped').click()");
    let page = b.wait_for_text("without the cap the grade would be B");
    assert!(page.contains("every server of this run"), "{page}");
    assert!(b.eval("location.hash").as_str() == Some("#/servers/capped"));
    b.eval("history.back()");
    b.wait_for_text("A run of several servers");
    assert!(b.exceptions().is_empty(), "{:?}", b.exceptions());
}

/// The README's main command as a new user runs it: the text report on stdout, and an
/// HTML report beside it that opens from file:// with the same grades.
#[test]
fn the_main_command_prints_the_report_and_writes_one_that_opens() {
    let scratch = Scratch::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out_dir = scratch.path().join("report");
    let mut demo = Command::new(root.join("scripts/demo"));
    // Without what cargo sets for a test (CARGO_MANIFEST_DIR, OUT_DIR and the like): a
    // build script that watches one of them (ring's does) would be rebuilt, with all
    // above it, and rebuilt again by the next plain `scripts/demo`.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if (name.starts_with("CARGO") && name != "CARGO_HOME" && name != "CARGO_TARGET_DIR") || name == "OUT_DIR" {
            demo.env_remove(name.as_ref());
        }
    }
    let out = demo
        .current_dir(&root)
        .env("SEALMARK_REPORT_DIR", &out_dir)
        .env("TMPDIR", scratch.path().join("tmp"))
        .output()
        .expect("scripts/demo runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(text.starts_with("sealmark 0.1.0 · methodology"), "{text}");
    assert!(stderr.contains(&format!("the HTML report is {}/index.html", out_dir.display())), "{stderr}");
    let mut b = Browser::launch();
    let page = open(&mut b, &file_url(&out_dir.join("index.html")));
    for line in cli_grade_lines(&text) {
        assert!(squash(&page).contains(&line), "{line} in the page:\n{page}");
    }
    assert!(b.exceptions().is_empty(), "{:?}", b.exceptions());
}

/// The capped toy server's record (core: three passes and a critical fail), published.
fn capped_folder(scratch: &Scratch) -> PathBuf {
    let cfg = scratch.config_named("capped", &toy("toy-server"), &["--mode", "env-echo", "{sandbox}"], "");
    let dir = scratch.path().join("capped");
    publish(scratch, &cfg, &dir);
    dir
}

/// Publishes `record` (JSON) as its own folder beside the scratch's others.
fn republish(scratch: &Scratch, name: &str, record: &serde_json::Value) -> PathBuf {
    let path = scratch.path().join(format!("{name}.json"));
    std::fs::write(&path, record.to_string()).unwrap();
    let dir = scratch.path().join(name);
    sealmark_in(
        scratch,
        &["run", "--replay", path.to_str().unwrap(), "--format", "html", "--out-dir", dir.to_str().unwrap()],
    );
    dir
}

#[test]
fn the_summary_band_shows_the_grades_the_checks_give_with_bars_chips_filters_and_links() {
    let scratch = Scratch::new();
    let dir = capped_folder(&scratch);
    let rec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("sealmark-report.json")).unwrap()).unwrap();
    // Edited to claim an A above a critical fail, with and without the observations that
    // would let the viewer re-judge the checks: the letter shown is the checks', always.
    let mut tampered = rec.clone();
    tampered["packs"]["core"]["grade"]["letter"] = "A".into();
    tampered["packs"]["core"]["grade"]["capped"] = false.into();
    let mut bare = tampered.clone();
    bare.as_object_mut().unwrap().remove("observations");
    let mut b = Browser::launch();
    for (name, doc) in [("tampered", &tampered), ("bare", &bare)] {
        // --replay re-grades what it reads, so the edit goes into the published copy.
        let folder = republish(&scratch, name, &rec);
        std::fs::write(folder.join("sealmark-report.json"), doc.to_string()).unwrap();
        let base = serve(scratch.path().to_path_buf());
        b.forget();
        let page = open(&mut b, &format!("{base}/{name}/?record=sealmark-report.json"));
        let card = b.eval(
            "(() => { const c = document.querySelector('.grade-card[data-pack=core]');
               return [c.querySelector('.letter').textContent, c.classList.contains('tampered'),
                       c.querySelector('.tampered-note').textContent]; })()",
        );
        assert_eq!(card[0], "D", "{name}: the card shows the checks' letter: {card}");
        assert_eq!(card[1], true, "{name}: {card}");
        assert!(
            card[2].as_str().unwrap().starts_with("The record says A (3/4 points, 75%); its checks give D"),
            "{name}: {card}"
        );
        assert!(page.contains("PACK core GRADE D (3/4 points, 75%)"), "{name}: the heading too:\n{page}");
    }

    b.forget();
    let page = open(&mut b, &file_url(&dir.join("index.html")));
    assert!(page.contains("STANDARD") && page.contains(" s · sealmark "), "the run line: {page}");
    assert!(page.contains("Not graded: db ("), "{page}");
    assert_eq!(b.eval("document.querySelectorAll('.tampered, .tampered-note').length"), 0);
    // The bar is the formula's counts; the chips name the notices and lead to the rule.
    let core = b.eval(
        "(() => { const c = document.querySelector('.grade-card[data-pack=core]'); const s = c.querySelector('svg.bar');
           return [s.dataset.pass, s.dataset.part, s.dataset.fail, s.dataset.criticalFail, s.dataset.excluded,
                   c.querySelector('.points').textContent,
                   [...c.querySelectorAll('.notices a')].map(a => a.textContent + ' ' + a.getAttribute('href'))]; })()",
    );
    assert_eq!(
        core,
        serde_json::json!(["3", "0", "0", "1", "0", "3/4 points", ["capped at D #/methodology/critical-cap"]])
    );
    let svg = b.eval("document.querySelector('svg.badge title').textContent");
    assert_eq!(svg, "sealmark: core D · fs A · effects A", "the CLI's badge words");
    assert!(page.contains("What to fix (1)"), "{page}");

    // Filters: one verdict at a time, each chip with its count.
    let chips = b.eval("[...document.querySelectorAll('.filters button')].map(b => b.textContent)");
    assert_eq!(chips[1], "fail 1", "{chips}");
    b.eval("document.querySelector('.filters button.fail').click()");
    let shown = b.eval("[...document.querySelectorAll('li.check')].filter(l => !l.hidden).map(l => l.classList[1])");
    assert_eq!(shown, serde_json::json!(["fail"]));
    b.eval("document.querySelector('.filters button.all').click()");
    let hidden = b.eval("[...document.querySelectorAll('li.check')].filter(l => l.hidden).length");
    assert_eq!(hidden, 0);
    // Passes and n/a are folded away until asked for.
    let folded = b.eval("[...document.querySelectorAll('details.quiet')].every(d => !d.open && d.querySelector('li.check.pass, li.check.na'))");
    assert_eq!(folded, true);

    // A deep link scrolls to its check and focuses it; a card click names its pack in
    // the URL and the title; Back returns to where the reader was.
    b.forget();
    b.goto(&format!("{}#/at/check-secret-echo", file_url(&dir.join("index.html"))));
    b.wait_for("document.activeElement && document.activeElement.id === 'check-secret-echo'");
    let seen = b.eval("(() => { const r = document.getElementById('check-secret-echo').getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; })()");
    assert_eq!(seen, true);
    assert!(
        b.eval("document.title").as_str().unwrap().starts_with("sealmark report · Server A 1.0.0 · check secret-echo")
    );
    b.eval("document.querySelector('.grade-card[data-pack=fs] a.card-link').click()");
    b.wait_for("location.hash === '#/at/pack-fs' && document.activeElement.id === 'pack-fs'");
    assert!(b.eval("document.title").as_str().unwrap().ends_with("· pack fs"));
    let y = b.eval("scrollY").as_f64().unwrap();
    assert!(y > 0.0, "scrolled to the pack");
    b.eval("location.hash = '#/checks/fs-read-escape'");
    b.wait_for("document.title === 'sealmark · fs-read-escape'");
    b.eval("history.back()");
    b.wait_for("location.hash === '#/at/pack-fs' && document.querySelector('#pack-fs')");
    b.wait_for(&format!("Math.abs(scrollY - {y}) < 2"));

    // Search covers the record: a tool it classified, a check by its id.
    for (query, want) in [("secret-echo", "#/at/check-secret-echo"), ("read_file", "#/at/classification-h")] {
        b.eval(&format!(
            "(() => {{ const s = document.querySelector('input.search'); s.value = '{query}';
               s.dispatchEvent(new Event('input', {{ bubbles: true }})); }})()"
        ));
        b.wait_for("document.querySelector('.search-results li a')");
        let first = b.eval("document.querySelector('.search-results li a').getAttribute('href')");
        assert_eq!(first, want, "{query}");
    }
    b.eval("(() => { const s = document.querySelector('input.search'); s.value = ''; s.dispatchEvent(new Event('input', { bubbles: true })); })()");

    // One h1 on every page; no horizontal scroll at a phone's width or a laptop's.
    let mut places: Vec<String> =
        vec!["#/".into(), "#/checks".into(), "#/packs".into(), "#/checks/fs-read-escape".into()];
    places.extend(
        ["methodology", "grades", "observers", "sandbox", "configuration", "cli", "changelog", "safety"]
            .map(|p| format!("#/{p}")),
    );
    for width in [390, 1280] {
        b.call(
            "Emulation.setDeviceMetricsOverride",
            serde_json::json!({ "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500 }),
        );
        for place in &places {
            b.eval(&format!("location.hash = '{place}'"));
            b.wait_for(&format!("location.hash === '{place}' && document.querySelector('main h1')"));
            b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
            let fit =
                b.eval("[document.querySelectorAll('h1').length, document.documentElement.scrollWidth <= innerWidth]");
            assert_eq!(fit, serde_json::json!([1, true]), "{place} at {width}px: [h1s, fits]");
        }
        b.eval("location.hash = '#/'");
        b.screenshot(&format!("band-{width}"));
    }
    b.call("Emulation.clearDeviceMetricsOverride", serde_json::json!({}));
    assert!(b.exceptions().is_empty(), "{:?}", b.exceptions());
}
