//! Headless Chromium (Debian's `chromium`) driven over the DevTools protocol, for the
//! viewer's end-to-end tests and its render benchmark: open pages, run script, pick
//! files, emulate a phone or print, and list every request a page made.

#![allow(dead_code, reason = "the tests and the benchmark use different parts")]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, ErrorKind};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// How long any one wait may take before the test fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(30);

pub struct Browser {
    child: Child,
    ws: WebSocket<TcpStream>,
    next_id: u64,
    session: String,
    /// Events received so far (requests, exceptions).
    events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium with a throwaway profile and opens one blank page.
    pub fn launch() -> Browser {
        let profile = tempfile::tempdir().expect("a profile directory");
        let mut cmd = Command::new("chromium");
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Its own process group, so every helper process it starts dies with it.
        .process_group(0);
        let mut child = cmd.spawn().expect("chromium is installed (scripts/test installs it)");
        // Chromium says where DevTools listens on stderr ("DevTools listening on ws://…");
        // a thread reads that line, then drains the rest so Chromium never blocks on it.
        let stderr = BufReader::new(child.stderr.take().expect("stderr is piped"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let url = rx.recv_timeout(PATIENCE).expect("chromium did not open its DevTools port");
        let host = url.trim_start_matches("ws://").split('/').next().expect("a host and port").to_string();
        let stream = TcpStream::connect(&host).expect("connect to chromium");
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let (ws, _) = tungstenite::client(url, stream).expect("DevTools handshake");
        let mut b = Browser { child, ws, next_id: 0, session: String::new(), events: Vec::new(), _profile: profile };
        let target = b.send("Target.createTarget", json!({ "url": "about:blank" }), false);
        let attached =
            b.send("Target.attachToTarget", json!({ "targetId": target["targetId"], "flatten": true }), false);
        b.session = attached["sessionId"].as_str().expect("a session").to_string();
        for domain in ["Page.enable", "Runtime.enable", "Network.enable", "DOM.enable"] {
            b.call(domain, json!({}));
        }
        b
    }

    fn send(&mut self, method: &str, params: Value, in_page: bool) -> Value {
        self.try_send(method, params, in_page).unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    /// Sends a command and returns its result, or the error DevTools answered with.
    fn try_send(&mut self, method: &str, params: Value, in_page: bool) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if in_page {
            msg["sessionId"] = json!(self.session);
        }
        self.ws.send(Message::text(msg.to_string())).expect("send to chromium");
        let start = Instant::now();
        loop {
            assert!(start.elapsed() < PATIENCE, "no answer to {method}");
            let msg = match self.ws.read() {
                Ok(Message::Text(t)) => t,
                Ok(_) => continue,
                Err(tungstenite::Error::Io(e)) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    panic!("chromium went quiet waiting for {method}")
                }
                Err(e) => panic!("the DevTools connection failed during {method}: {e}"),
            };
            let v: Value = serde_json::from_str(msg.as_str()).expect("DevTools sends JSON");
            if v["id"] == json!(id) {
                return if v["error"].is_null() { Ok(v["result"].clone()) } else { Err(v["error"].clone()) };
            }
            if v["method"].is_string() {
                self.events.push(v);
            }
        }
    }

    /// A command to the page.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.send(method, params, true)
    }

    /// Opens `url` and waits until the viewer has drawn (or given up on) a record.
    pub fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        self.wait_for("document.readyState === 'complete' && document.querySelector('main') !== null");
    }

    /// Evaluates `js` in the page (promises awaited) and returns its value.
    pub fn eval(&mut self, js: &str) -> Value {
        let r = self.call("Runtime.evaluate", json!({ "expression": js, "returnByValue": true, "awaitPromise": true }));
        assert!(r["exceptionDetails"].is_null(), "{js} threw: {}", r["exceptionDetails"]);
        r["result"]["value"].clone()
    }

    /// Waits until `js` is truthy; panics after PATIENCE with the page's text.
    ///
    /// The page itself waits: `js` is tested again on every change that can make it
    /// true (the DOM, the document's loading, the location, focus, scrolling), and the
    /// promise settles on the first success or at the deadline. A navigation that
    /// replaces the page under the wait ends it early; the wait is then set up again in
    /// the new page.
    pub fn wait_for(&mut self, js: &str) {
        let start = Instant::now();
        loop {
            let left = PATIENCE.saturating_sub(start.elapsed()).saturating_sub(Duration::from_secs(2));
            let expression = format!(
                "new Promise(resolve => {{
                    const test = () => {{ try {{ return !!({js}); }} catch (_) {{ return false; }} }};
                    if (test()) return resolve(true);
                    const check = () => {{ if (test()) {{ stop(); resolve(true); }} }};
                    const observer = new MutationObserver(check);
                    const events = [[document, 'readystatechange'], [window, 'load'], [window, 'hashchange'],
                        [window, 'popstate'], [document, 'focusin'], [window, 'scroll']];
                    const stop = () => {{
                        observer.disconnect();
                        events.forEach(([t, e]) => t.removeEventListener(e, check, true));
                    }};
                    observer.observe(document, {{ subtree: true, childList: true, attributes: true, characterData: true }});
                    events.forEach(([t, e]) => t.addEventListener(e, check, true));
                    setTimeout(() => {{ stop(); resolve(test()); }}, {});
                }})",
                left.as_millis()
            );
            let r = self.try_send(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
                true,
            );
            if matches!(&r, Ok(r) if r["result"]["value"] == json!(true)) {
                return;
            }
            if start.elapsed() + Duration::from_secs(2) >= PATIENCE {
                let text = self.text();
                panic!("timed out waiting for {js}; the page says:\n{text}");
            }
        }
    }

    /// Waits until the page's text contains `needle`, then returns the text.
    pub fn wait_for_text(&mut self, needle: &str) -> String {
        self.wait_for(&format!("document.body && document.body.innerText.includes({})", json!(needle)));
        self.text()
    }

    /// The page's visible text, whitespace collapsed to single spaces.
    pub fn text(&mut self) -> String {
        let t = self.eval("document.body ? document.body.innerText : ''");
        t.as_str().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The page's markup as it stands.
    pub fn html(&mut self) -> String {
        self.eval("document.documentElement.outerHTML").as_str().unwrap_or_default().to_string()
    }

    /// Puts `files` into the file input `selector`, as a user picking them would.
    pub fn pick_files(&mut self, selector: &str, files: &[&Path]) {
        let doc = self.call("DOM.getDocument", json!({}));
        let node = self.call("DOM.querySelector", json!({ "nodeId": doc["root"]["nodeId"], "selector": selector }));
        assert_ne!(node["nodeId"], json!(0), "no {selector} on the page");
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        self.call("DOM.setFileInputFiles", json!({ "nodeId": node["nodeId"], "files": files }));
    }

    /// Every URL the page asked for since the last `forget`.
    pub fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_string))
            .collect()
    }

    /// Uncaught exceptions the page threw since the last `forget`.
    pub fn exceptions(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Runtime.exceptionThrown")
            .map(|e| e["params"]["exceptionDetails"].to_string())
            .collect()
    }

    /// Starts the request and exception lists afresh. The page is left for about:blank
    /// first: Chromium asks for a favicon after the load event, and that late request
    /// would otherwise land in the next page's list.
    pub fn forget(&mut self) {
        self.call("Page.navigate", json!({ "url": "about:blank" }));
        self.wait_for("location.href === 'about:blank' && document.readyState === 'complete'");
        self.events.clear();
    }

    /// Saves a PNG of the page when SEALMARK_SCREENSHOTS names a directory: screenshots
    /// are for a person judging the design, never part of the repository.
    pub fn screenshot(&mut self, name: &str) {
        let Some(dir) = std::env::var_os("SEALMARK_SCREENSHOTS") else { return };
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let bytes = base64::Engine::decode(
            &base64::engine::general_purpose::STANDARD,
            shot["data"].as_str().unwrap_or_default(),
        )
        .expect("a base64 screenshot");
        std::fs::write(Path::new(&dir).join(format!("{name}.png")), bytes).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group this browser was started in.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}
