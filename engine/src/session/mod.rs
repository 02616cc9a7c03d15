//! A JSON-RPC client session over a server's stdio or streamable HTTP.
//!
//! The harness speaks the wire itself so that it sees every byte the server sends,
//! bounds every read and every wait, and can send what a typed client never would
//! (a line that is not JSON, a call whose name is a number). Message shapes come
//! from rmcp's model types. The `runner` starts, books and restarts the server a
//! session talks to.

pub mod json_cost;
pub mod observer;
pub mod process;
pub mod progress;
pub mod runner;

use crate::judge::core::HandshakeObs;
use crate::judge::core::{EchoScan, EchoScanner};
use crate::record::Unasked;
use crate::text::clip;
use process::{Line, MAX_LINE};
use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams, ProtocolVersion};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

/// How a request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Result(Value),
    Error {
        code: i64,
        message: String,
    },
    /// No answer within the timeout. `alive` when a ping sent while waiting was
    /// answered (or none could be sent): the server works, the call is slow. Otherwise
    /// the server stopped answering altogether.
    Timeout {
        alive: bool,
    },
    /// Nothing came and nothing more can come (an HTTP exchange that ended).
    Silence,
    /// The server exited or closed the connection.
    Gone(String),
    /// The answer was longer than the harness parses (`MAX_LINE`): `bytes` long (over
    /// HTTP, where reading stops at the bound, `MAX_LINE + 1`).
    TooLarge {
        bytes: u64,
    },
}

pub enum Wire {
    /// Messages go to a writer task that owns the server's stdin, so a server that stops
    /// reading never blocks the loop that reads its answers.
    Stdio {
        outbox: mpsc::Sender<Outgoing>,
        lines: mpsc::Receiver<Line>,
        exited: watch::Receiver<Option<String>>,
    },
    Http(HttpWire),
}

/// One message for the writer task; `done` hears how its write ended.
pub struct Outgoing {
    bytes: Vec<u8>,
    done: Option<oneshot::Sender<Result<(), String>>>,
}

/// The most items one `*/list` keeps, and what they may cost together.
const LISTED_MOST: usize = 1000;
const LISTED_COST: usize = 8 * 1024 * 1024;

/// How many messages may wait for a server that is not reading its stdin.
const OUTBOX: usize = 64;
/// How many of the server's own requests a session answers; the rest are only counted.
const SERVER_REQUESTS_ANSWERED: u64 = 256;
/// How many distinct methods of server requests are named; the rest are counted together.
const SERVER_REQUEST_METHODS: usize = 16;

impl Wire {
    /// The stdio wire of a started server: its stdin goes to a writer task.
    pub fn stdio(
        stdin: impl AsyncWrite + Send + Unpin + 'static,
        lines: mpsc::Receiver<Line>,
        exited: watch::Receiver<Option<String>>,
    ) -> Wire {
        let (outbox, queue) = mpsc::channel(OUTBOX);
        tokio::spawn(write_messages(stdin, queue));
        Wire::Stdio { outbox, lines, exited }
    }
}

/// Writes each message in order; stops at the first failed write (the pipe is closed).
async fn write_messages(mut stdin: impl AsyncWrite + Unpin, mut queue: mpsc::Receiver<Outgoing>) {
    while let Some(out) = queue.recv().await {
        let written = async {
            stdin.write_all(&out.bytes).await?;
            stdin.flush().await
        }
        .await
        .map_err(|e| e.to_string());
        let failed = written.is_err();
        if let Some(done) = out.done {
            let _ = done.send(written);
        }
        if failed {
            break;
        }
    }
}

/// Streamable HTTP: every message is a POST; answers come back as JSON or an SSE stream.
pub struct HttpWire {
    client: reqwest::Client,
    url: String,
    headers: Vec<(String, String)>,
    session_id: Option<String>,
    protocol_version: Option<String>,
    queue: VecDeque<Incoming>,
    pub exited: Option<watch::Receiver<Option<String>>>,
}

enum Incoming {
    Json(Value),
    Garbage(String),
    /// An answer longer than `MAX_LINE`, with the id its ends show and the ends as text.
    TooLarge {
        bytes: u64,
        id: Option<Value>,
        ends: String,
    },
}

/// What `next_message` brought.
enum Got {
    Message(Value),
    TooLarge { bytes: u64, id: Option<Value> },
}

pub struct Session {
    wire: Wire,
    ids: Ids,
    /// How long a request waits for its answer.
    pub timeout: Duration,
    /// How long a ping waits: shorter once a server of this run has stopped answering,
    /// since a live server answers a ping at once.
    pub ping_timeout: Duration,
    /// The canaries secret-echo looks for, and what the scan of each message found.
    scanner: Arc<EchoScanner>,
    pub echo: EchoScan,
    /// Messages that arrived while waiting for another, not yet claimed.
    stray: Strays,
    /// What the server sent that answered nothing asked: lines that are not JSON,
    /// answers to ids never sent (dropped), its own requests.
    pub unasked: Unasked,
}

/// Messages kept for a later claim, bounded in number and in cost: the oldest go first.
#[derive(Default)]
struct Strays {
    kept: VecDeque<(Value, usize)>,
    cost: usize,
}

impl Strays {
    const MOST: usize = 256;
    const COST: usize = 2 * json_cost::MESSAGE_BUDGET;

    fn push(&mut self, msg: Value) {
        let cost = json_cost::of_value(&msg);
        self.cost += cost;
        self.kept.push_back((msg, cost));
        while self.kept.len() > Self::MOST || self.cost > Self::COST {
            let Some((_, old)) = self.kept.pop_front() else { break };
            self.cost -= old;
        }
    }

    fn count(&self) -> usize {
        self.kept.len()
    }

    /// The answer to `id`, if one is kept.
    fn take_answer(&mut self, id: &Value) -> Option<Value> {
        let pos = self.kept.iter().position(|(m, _)| m.get("id") == Some(id) && is_answer(m))?;
        let (msg, cost) = self.kept.remove(pos)?;
        self.cost -= cost;
        Some(msg)
    }

    /// Every message kept after the first `from`.
    fn take_from(&mut self, from: usize) -> Vec<Value> {
        let taken: Vec<Value> = self.kept.drain(from.min(self.kept.len())..).map(|(m, _)| m).collect();
        self.cost = self.kept.iter().map(|(_, c)| c).sum();
        taken
    }
}

/// Request ids a server cannot guess: a keyed hash of a counter, so no id says what the
/// next one will be, and the set of ids sent and not yet answered, so an answer to any
/// other id (one sent ahead of its request, a forgery) is told apart and dropped.
struct Ids {
    key: [u8; 16],
    counter: u64,
    open: std::collections::HashSet<String>,
    order: VecDeque<String>,
}

/// How many unanswered ids are remembered; the oldest is forgotten first.
const OPEN_IDS: usize = 4096;

impl Ids {
    fn new() -> Ids {
        let mut key = [0u8; 16];
        crate::targets::sandbox::fill_random(&mut key);
        Ids { key, counter: 0, open: Default::default(), order: VecDeque::new() }
    }

    /// The next id: 48 bits of the hash, so that JavaScript servers keep it exact.
    fn mint(&mut self) -> u64 {
        use sha2::Digest;
        self.counter += 1;
        let digest = sha2::Sha256::new().chain_update(self.key).chain_update(self.counter.to_le_bytes()).finalize();
        let mut n = [0u8; 8];
        n[2..].copy_from_slice(&digest[..6]);
        u64::from_be_bytes(n).max(1)
    }

    fn open(&mut self, id: &Value) {
        let key = id.to_string();
        if self.open.insert(key.clone()) {
            self.order.push_back(key);
        }
        while self.order.len() > OPEN_IDS {
            if let Some(old) = self.order.pop_front() {
                self.open.remove(&old);
            }
        }
    }

    /// Whether `id` was sent and not yet answered; it is answered from now on.
    fn close(&mut self, id: &Value) -> bool {
        self.open.remove(&id.to_string())
    }
}

impl Session {
    pub fn new(wire: Wire, timeout: Duration, scanner: Arc<EchoScanner>) -> Session {
        Session {
            ping_timeout: timeout,
            wire,
            ids: Ids::new(),
            timeout,
            scanner,
            echo: EchoScan::default(),
            stray: Strays::default(),
            unasked: Unasked::default(),
        }
    }

    pub fn http(url: &str, headers: Vec<(String, String)>, exited: Option<watch::Receiver<Option<String>>>) -> Wire {
        let builder = || reqwest::Client::builder().no_proxy().redirect(reqwest::redirect::Policy::none());
        // A root store that cannot be read leaves https unverifiable, not the run impossible.
        let client = builder()
            .build()
            .or_else(|_| builder().tls_built_in_root_certs(false).build())
            .expect("an HTTP client without TLS roots always builds");
        Wire::Http(HttpWire {
            client,
            url: url.to_string(),
            headers,
            session_id: None,
            protocol_version: None,
            queue: VecDeque::new(),
            exited,
        })
    }

    /// The initialize request the harness sends, from rmcp's types.
    pub fn initialize_params() -> Value {
        let mut info = Implementation::default();
        info.name = "sealmark".to_string();
        info.version = crate::VERSION.to_string();
        let mut params = InitializeRequestParams::default();
        params.protocol_version = ProtocolVersion::LATEST_WITH_INITIALIZE;
        params.capabilities = ClientCapabilities::default();
        params.client_info = info;
        serde_json::to_value(params).expect("initialize params serialise")
    }

    pub fn offered_version() -> String {
        ProtocolVersion::LATEST_WITH_INITIALIZE.to_string()
    }

    /// After a successful initialize: remember the negotiated version (HTTP sends it
    /// as a header) and send `notifications/initialized`.
    pub async fn initialized(&mut self, negotiated: &str) {
        if let Wire::Http(h) = &mut self.wire {
            h.protocol_version = Some(negotiated.to_string());
        }
        let _ = self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    }

    /// Sends a request and waits for its answer, within `timeout`.
    pub async fn request(&mut self, method: &str, params: Value, what: &str) -> Reply {
        let wait = if method == "ping" { self.ping_timeout } else { self.timeout };
        self.request_within(method, params, what, wait).await
    }

    /// `request`, waiting at most `wait` for the answer.
    pub async fn request_within(&mut self, method: &str, params: Value, what: &str, wait: Duration) -> Reply {
        let id = self.fresh_id();
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        if let Err(gone) = self.send(&msg).await {
            return Reply::Gone(gone);
        }
        self.wait_for(&json!(id), what, method == "tools/call", wait).await
    }

    /// A fresh numeric request id, expected from now on.
    pub fn fresh_id(&mut self) -> u64 {
        let id = self.ids.mint();
        self.ids.open(&json!(id));
        id
    }

    /// A fresh string request id (`sealmark-<hex>`), for messages the harness writes by
    /// hand, expected from now on.
    pub fn fresh_tag(&mut self) -> String {
        let tag = format!("sealmark-{:012x}", self.ids.mint());
        self.ids.open(&json!(tag));
        tag
    }

    /// Sends any JSON value as one message.
    pub async fn send(&mut self, msg: &Value) -> Result<(), String> {
        let mut line = serde_json::to_vec(msg).expect("JSON serialises");
        line.push(b'\n');
        self.send_raw(&line).await
    }

    /// Sends raw bytes as one message: a line on stdio, a POST body over HTTP.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        progress::sent();
        let timeout = self.timeout;
        match &mut self.wire {
            Wire::Stdio { outbox, exited, .. } => {
                if let Some(e) = exited.borrow().clone() {
                    return Err(e);
                }
                let (done, written) = oneshot::channel();
                let out = Outgoing { bytes: bytes.to_vec(), done: Some(done) };
                let sent = tokio::time::timeout(timeout, async {
                    outbox.send(out).await.map_err(|_| "the pipe is closed".to_string())?;
                    written.await.map_err(|_| "the pipe is closed".to_string())?
                })
                .await;
                match sent {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(e)) => {
                        // A closed stdin usually means the process is exiting: name how.
                        let mut settle = exited.clone();
                        let _ =
                            tokio::time::timeout(Duration::from_millis(500), settle.wait_for(Option::is_some)).await;
                        Err(exited.borrow().clone().unwrap_or_else(|| format!("its stdin closed ({e})")))
                    }
                    Err(_) => Err("it stopped reading its stdin".to_string()),
                }
            }
            Wire::Http(h) => h.post(bytes, timeout).await,
        }
    }

    /// Waits for the answer to `id`, keeping everything else that arrives. With
    /// `watch`, a stdio server that has not answered after a third of
    /// the timeout is sent a ping, so a call that times out can tell a slow tool (the
    /// ping was answered) from a server that stopped answering altogether.
    async fn wait_for(&mut self, id: &Value, what: &str, watch: bool, timeout: Duration) -> Reply {
        if let Some(msg) = self.stray.take_answer(id) {
            return to_reply(msg);
        }
        let start = Instant::now();
        let deadline = start + timeout;
        let mut ping_at = (watch && matches!(self.wire, Wire::Stdio { .. })).then(|| start + timeout / 3);
        let mut ping: Option<Value> = None;
        let mut alive = true;
        loop {
            let until = ping_at.map_or(deadline, |at| at.min(deadline));
            match self.next_message(until, what).await {
                Ok(Got::Message(msg)) => {
                    if msg.get("id") == Some(id) && is_answer(&msg) {
                        self.ids.close(id);
                        return to_reply(msg);
                    }
                    if let Some(p) = &ping
                        && msg.get("id") == Some(p)
                        && is_answer(&msg)
                    {
                        self.ids.close(p);
                        alive = true;
                        continue;
                    }
                    self.handle_other(msg).await;
                }
                // An oversized line answers the request awaited unless it names another.
                Ok(Got::TooLarge { bytes, id: seen }) if seen.as_ref().is_none_or(|s| s == id) => {
                    return Reply::TooLarge { bytes };
                }
                Ok(Got::TooLarge { .. }) => {}
                Err(Reply::Timeout { .. }) if ping_at.is_some() && Instant::now() < deadline => {
                    ping_at = None;
                    let ping_id = json!(self.fresh_tag());
                    if self.send(&json!({"jsonrpc": "2.0", "id": ping_id, "method": "ping"})).await.is_ok() {
                        ping = Some(ping_id);
                        alive = false;
                    }
                }
                Err(Reply::Timeout { .. }) => return Reply::Timeout { alive },
                Err(reply) => return reply,
            }
        }
    }

    /// An answer to `id` arriving within `grace`: a server that handles messages
    /// concurrently may answer a ping before the request sent just ahead of it.
    pub async fn late_answer(&mut self, id: &Value, grace: Duration) -> Option<Reply> {
        let reply = self.wait_for(id, "late answer", false, grace).await;
        matches!(reply, Reply::Result(_) | Reply::Error { .. }).then_some(reply)
    }

    /// Sends a ping and collects everything that arrives before its answer. The ping
    /// is the fence that tells silence from a slow answer for input that has no id.
    pub async fn fence(&mut self) -> (Vec<Value>, Reply) {
        let before = self.stray.count();
        let reply = self.request("ping", Value::Null, "ping").await;
        let arrived = self.stray.take_from(before);
        (arrived, reply)
    }

    /// The next message, or why none will come before `deadline`.
    async fn next_message(&mut self, deadline: Instant, what: &str) -> Result<Got, Reply> {
        loop {
            let incoming = match &mut self.wire {
                Wire::Stdio { lines, exited, .. } => {
                    let mut exit_watch = exited.clone();
                    tokio::select! {
                        line = lines.recv() => match line {
                            Some(line) => Incoming::from(line),
                            None => {
                                // Stdout closed; the exit status usually follows within moments.
                                let mut settle = exited.clone();
                                let _ = tokio::time::timeout(Duration::from_millis(300), settle.wait_for(Option::is_some)).await;
                                let why = exited.borrow().clone().unwrap_or_else(|| "it closed its stdout".to_string());
                                return Err(Reply::Gone(why));
                            }
                        },
                        _ = exit_watch.wait_for(Option::is_some) => {
                            // Give output already written a moment to be read.
                            match tokio::time::timeout(Duration::from_millis(100), lines.recv()).await {
                                Ok(Some(line)) => Incoming::from(line),
                                _ => return Err(Reply::Gone(exited.borrow().clone().unwrap_or_default())),
                            }
                        }
                        _ = tokio::time::sleep_until(deadline) => return Err(Reply::Timeout { alive: true }),
                    }
                }
                Wire::Http(h) => match h.queue.pop_front() {
                    Some(i) => i,
                    None => {
                        if let Some(e) = h.exited.as_ref().and_then(|x| x.borrow().clone()) {
                            return Err(Reply::Gone(e));
                        }
                        return Err(Reply::Silence);
                    }
                },
            };
            match incoming {
                Incoming::Json(v) => {
                    self.scan_value(what, &v);
                    return Ok(Got::Message(v));
                }
                Incoming::Garbage(g) => {
                    self.unasked.junk_lines += 1;
                    self.scan_text(what, &g);
                    self.unasked.first_junk_line.get_or_insert(g);
                }
                Incoming::TooLarge { bytes, id, ends } => {
                    self.scan_text(what, &ends);
                    return Ok(Got::TooLarge { bytes, id });
                }
            }
        }
    }

    /// A message that is not the awaited answer: answer the server's own requests
    /// (the harness offers no client capabilities) and keep the rest.
    async fn handle_other(&mut self, msg: Value) {
        let is_request = msg.get("method").is_some() && msg.get("id").is_some();
        if is_request {
            let method = match msg["method"].as_str() {
                Some(m)
                    if self.unasked.server_requests.len() < SERVER_REQUEST_METHODS
                        || self.unasked.server_requests.contains_key(m) =>
                {
                    clip(m, 64)
                }
                _ => "(other)".to_string(),
            };
            *self.unasked.server_requests.entry(method).or_default() += 1;
            let asked: u64 = self.unasked.server_requests.values().sum();
            let id = msg["id"].clone();
            let reply = if msg["method"] == "ping" {
                json!({"jsonrpc": "2.0", "id": id, "result": {}})
            } else {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "sealmark offers no client capabilities"}})
            };
            if asked > SERVER_REQUESTS_ANSWERED || !self.reply_without_waiting(&reply).await {
                self.unasked.server_requests_unanswered += 1;
            }
        } else if msg.get("method").is_some() {
            self.unasked.notifications += 1;
        } else {
            // An answer to an id never sent (or sent and already answered) is forged or
            // premature: dropped, and counted as evidence.
            if let Some(id) = msg.get("id").filter(|id| !id.is_null())
                && is_answer(&msg)
                && !self.ids.close(id)
            {
                self.unasked.unsolicited_answers += 1;
                if self.unasked.first_unsolicited_answer.is_none() {
                    // The id a forger guesses follows the harness's own, which changes
                    // every run: shown as a placeholder, so reports stay deterministic.
                    let mut shown = msg;
                    shown["id"] = json!("{id}");
                    self.unasked.first_unsolicited_answer = Some(clip(&shown.to_string(), 200));
                }
                return;
            }
            // Answers to other ids, and unattributed errors, may belong to a probe.
            self.stray.push(msg);
        }
    }

    /// Answers a request of the server's without waiting on it: on stdio the answer is
    /// queued, or dropped when the server is not reading (false).
    async fn reply_without_waiting(&mut self, reply: &Value) -> bool {
        match &self.wire {
            Wire::Stdio { outbox, .. } => {
                let mut bytes = serde_json::to_vec(reply).expect("JSON serialises");
                bytes.push(b'\n');
                outbox.try_send(Outgoing { bytes, done: None }).is_ok()
            }
            Wire::Http(_) => self.send(reply).await.is_ok(),
        }
    }

    fn scan_value(&mut self, what: &str, v: &Value) {
        self.scanner.scan_value(what, v, &mut self.echo);
    }

    fn scan_text(&mut self, what: &str, text: &str) {
        self.scanner.scan_text(what, text, &mut self.echo);
    }

    /// Paginates a `*/list` method; returns the items, the page count and why the list
    /// is incomplete, if it is. At most `LISTED_MOST` items, costing at most
    /// `LISTED_COST`, are kept: a list past them is incomplete.
    pub async fn list_all(&mut self, method: &str, key: &str) -> (Vec<Value>, u32, Option<String>) {
        let mut items = Vec::new();
        let mut cost = 0;
        let mut cursor: Option<String> = None;
        for page in 1..=50u32 {
            let params = cursor.as_ref().map_or(Value::Null, |c| json!({"cursor": c}));
            match self.request(method, params, method).await {
                Reply::Result(mut r) => {
                    match r.get_mut(key).and_then(Value::as_array_mut) {
                        Some(list) => {
                            for item in list.drain(..) {
                                cost += json_cost::of_value(&item);
                                if items.len() == LISTED_MOST || cost > LISTED_COST {
                                    let why = format!(
                                        "the list was read no further than {} {key}, the most the harness keeps",
                                        items.len()
                                    );
                                    return (items, page, Some(why));
                                }
                                items.push(item);
                            }
                        }
                        None => return (items, page, Some(format!("the answer has no {key} list"))),
                    }
                    match r.get("nextCursor").and_then(Value::as_str) {
                        Some(next) if Some(next) == cursor.as_deref() => {
                            return (items, page, Some("nextCursor repeats itself".to_string()));
                        }
                        Some(next) => cursor = Some(next.to_string()),
                        None => return (items, page, None),
                    }
                }
                Reply::Error { code, message } => {
                    return (items, page, Some(format!("JSON-RPC error {code}: {}", clip(&message, 120))));
                }
                Reply::Timeout { .. } => {
                    return (items, page, Some(format!("no answer within {}s", self.timeout.as_secs())));
                }
                Reply::Silence => return (items, page, Some("no answer".to_string())),
                Reply::TooLarge { bytes } => {
                    return (
                        items,
                        page,
                        Some(format!("an answer of {bytes} bytes, too large for the harness to parse")),
                    );
                }
                Reply::Gone(why) => return (items, page, Some(format!("the server went away: {why}"))),
            }
        }
        (items, 50, Some("more than 50 pages".to_string()))
    }
}

impl From<Line> for Incoming {
    fn from(line: Line) -> Incoming {
        match line {
            Line::Json(v) => Incoming::Json(v),
            Line::Garbage(g) => Incoming::Garbage(g),
            Line::TooLarge { bytes, id, ends } => Incoming::TooLarge { bytes, id, ends },
        }
    }
}

fn is_answer(msg: &Value) -> bool {
    msg.get("result").is_some() || msg.get("error").is_some()
}

fn to_reply(mut msg: Value) -> Reply {
    if let Some(err) = msg.get("error") {
        Reply::Error {
            code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: err.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
        }
    } else {
        Reply::Result(msg.get_mut("result").map(Value::take).unwrap_or(Value::Null))
    }
}

impl HttpWire {
    /// POSTs one message and queues whatever comes back.
    async fn post(&mut self, body: &[u8], timeout: Duration) -> Result<(), String> {
        if let Some(e) = self.exited.as_ref().and_then(|x| x.borrow().clone()) {
            return Err(e);
        }
        let mut req = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_vec());
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(s) = &self.session_id {
            req = req.header("mcp-session-id", s.as_str());
        }
        if let Some(v) = &self.protocol_version {
            req = req.header("mcp-protocol-version", v.as_str());
        }
        let sent_id = serde_json::from_slice::<Value>(body).ok().and_then(|v| v.get("id").cloned());
        let exchange = async {
            let mut resp = req.send().await.map_err(|e| format!("the HTTP request failed: {e}"))?;
            if let Some(s) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
                self.session_id = Some(s.to_string());
            }
            let status = resp.status();
            let sse = resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|c| c.starts_with("text/event-stream"));
            let mut body = Vec::new();
            let mut sse_buf = Vec::new();
            // What the events of this one answer may cost queued: a stream of events that
            // never brings the answer is read no further once they are spent.
            let mut room = 2 * json_cost::MESSAGE_BUDGET;
            while let Some(chunk) = resp.chunk().await.map_err(|e| format!("reading the HTTP answer failed: {e}"))? {
                if sse {
                    sse_buf.extend_from_slice(&chunk);
                    let got_answer = self.take_sse_events(&mut sse_buf, sent_id.as_ref(), &mut room);
                    if got_answer || room == 0 {
                        break;
                    }
                } else {
                    body.extend_from_slice(&chunk);
                }
                if body.len() + sse_buf.len() > MAX_LINE {
                    let ends = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]).into_owned();
                    self.queue.push_back(Incoming::TooLarge { bytes: MAX_LINE as u64 + 1, id: sent_id.clone(), ends });
                    return Ok(());
                }
            }
            if sse {
                sse_buf.extend_from_slice(b"\n\n");
                self.take_sse_events(&mut sse_buf, sent_id.as_ref(), &mut room);
            } else if json_cost::of_line(&body) > json_cost::MESSAGE_BUDGET {
                let ends = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]).into_owned();
                self.queue.push_back(Incoming::TooLarge { bytes: body.len() as u64, id: sent_id.clone(), ends });
            } else if !body.trim_ascii().is_empty() {
                match serde_json::from_slice::<Value>(&body) {
                    Ok(Value::Array(batch)) => self.queue.extend(batch.into_iter().map(Incoming::Json)),
                    Ok(v) => self.queue.push_back(Incoming::Json(v)),
                    Err(_) if !status.is_success() => {
                        self.queue.push_back(Incoming::Json(http_error(sent_id.as_ref(), status, &body)))
                    }
                    Err(_) => self.queue.push_back(Incoming::Garbage(clip(&String::from_utf8_lossy(&body), 200))),
                }
            } else if !status.is_success() {
                self.queue.push_back(Incoming::Json(http_error(sent_id.as_ref(), status, &body)));
            }
            Ok::<(), String>(())
        };
        match tokio::time::timeout(timeout, exchange).await {
            Ok(r) => r,
            // A timed-out exchange leaves nothing queued; the waiter sees silence.
            Err(_) => Ok(()),
        }
    }

    /// Queues complete SSE events from `buf`, while their cost fits in `room`; true once
    /// the answer to `id` is among them.
    fn take_sse_events(&mut self, buf: &mut Vec<u8>, id: Option<&Value>, room: &mut usize) -> bool {
        let mut answered = false;
        let mut consumed = 0;
        while *room > 0
            && let Some((end, next)) = event_end(&buf[consumed..])
        {
            let event = String::from_utf8_lossy(&buf[consumed..consumed + end]).replace("\r\n", "\n");
            consumed += next;
            let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
            if data.is_empty() {
                continue;
            }
            let joined = data.join("\n");
            let cost = json_cost::of_line(joined.as_bytes());
            *room = room.saturating_sub(cost);
            if cost > json_cost::MESSAGE_BUDGET {
                let ends = clip(&joined, 64 * 1024);
                self.queue.push_back(Incoming::TooLarge { bytes: joined.len() as u64, id: None, ends });
                answered |= id.is_some();
                continue;
            }
            match serde_json::from_str::<Value>(&joined) {
                Ok(v) => {
                    answered |= id.is_some() && v.get("id") == id && is_answer(&v);
                    self.queue.push_back(Incoming::Json(v));
                }
                Err(_) if joined.trim().is_empty() => {}
                Err(_) => self.queue.push_back(Incoming::Garbage(clip(&joined, 200))),
            }
        }
        buf.drain(..consumed);
        answered
    }
}

/// Where the first SSE event in `buf` ends (a blank line, `\n` or `\r\n`): the event's
/// length and where the next one starts.
fn event_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(i) = buf[from..].iter().position(|b| *b == b'\n').map(|i| from + i) {
        match &buf[i + 1..] {
            [b'\n', ..] => return Some((i, i + 2)),
            [b'\r', b'\n', ..] => return Some((i, i + 3)),
            _ => from = i + 1,
        }
    }
    None
}

/// An HTTP refusal without a JSON-RPC body, as an error answer to the message sent.
fn http_error(id: Option<&Value>, status: reqwest::StatusCode, body: &[u8]) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id.cloned().unwrap_or(Value::Null),
        "error": {"code": -i64::from(status.as_u16()), "message": format!("HTTP {status}: {}", clip(&String::from_utf8_lossy(body), 200))}
    })
}

impl Session {
    /// Sends initialize and, when it is answered, the initialized notification: the
    /// handshake as the core pack judges it, and the server's capabilities when it
    /// completed.
    pub async fn handshake(&mut self) -> (HandshakeObs, Option<Value>) {
        let offered = Session::offered_version();
        match self.request("initialize", Session::initialize_params(), "initialize").await {
            Reply::Result(result) => {
                let negotiated = result.get("protocolVersion").and_then(Value::as_str).unwrap_or(&offered).to_string();
                self.initialized(&negotiated).await;
                let caps = result.get("capabilities").cloned();
                (HandshakeObs::Answered { offered, result }, caps)
            }
            Reply::Error { code, message } => (HandshakeObs::Rejected { offered, code, message }, None),
            Reply::Timeout { .. } => {
                let mut reason = format!("no answer within {}s", self.timeout.as_secs());
                if let Some(first) = &self.unasked.first_junk_line {
                    let n = self.unasked.junk_lines;
                    reason.push_str(&format!(
                        "; it wrote {n} line(s) that are not JSON, the first: \"{}\"",
                        clip(first, 60)
                    ));
                }
                if let Some(first) = &self.unasked.first_unsolicited_answer {
                    reason.push_str(&format!("; it answered a request id never sent: {}", clip(first, 80)));
                }
                (HandshakeObs::NoAnswer { reason }, None)
            }
            Reply::Silence => (HandshakeObs::NoAnswer { reason: "the server answered nothing".to_string() }, None),
            Reply::TooLarge { bytes } => (
                HandshakeObs::NoAnswer {
                    reason: format!("its answer was {bytes} bytes, too large for the harness to parse"),
                },
                None,
            ),
            Reply::Gone(why) => (HandshakeObs::NoAnswer { reason: format!("the server went away ({why})") }, None),
        }
    }
}
