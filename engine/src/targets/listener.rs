//! The loopback listener: an HTTP server on 127.0.0.1 (and [::1] when the machine has
//! it), on a port only the harness owns, recording every connection and request.
//!
//! Routes, by path: `/t/<token>` answers a small body; `/control…` answers the control
//! body (so `net.control_url` can point here), `…/redirect/<token>` redirects to
//! `/t/<token>`, and `…/big/<token>` streams 64 MiB, counting the bytes sent before the
//! client hung up.

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The size of the oversized reply.
pub const BIG_BYTES: u64 = 64 * 1024 * 1024;
/// The body of the control route; a control fetch must return it.
pub const CONTROL_BODY: &str = "sealmark-listener-control-ok";
/// At most this many requests are kept.
const MAX_RECORDED: usize = 10_000;

/// One connection the listener accepted, and what it sent.
#[derive(Debug, Clone, Default)]
pub struct Hit {
    /// The request line (`GET /t/sm001`), or the first bytes of a connection that did not speak HTTP.
    pub line: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// Bytes the client sent before the listener answered.
    pub received: usize,
    /// For the oversized route: bytes written before the client stopped reading, and
    /// whether all of them were written.
    pub sent: u64,
    pub completed: bool,
    /// Whether the request (or what a connection that does not speak HTTP sent) was read.
    pub headed: bool,
    /// Whether the listener has finished with this connection.
    pub done: bool,
}

#[derive(Default)]
struct Log {
    connections: u32,
    hits: Vec<Hit>,
    /// Source ports of the harness's own connections (`Listener::own`): not counted.
    own: std::collections::BTreeSet<u16>,
    /// The tokens probes have carried to the listener so far (`Listener::issue`).
    issued: std::collections::BTreeSet<String>,
}

pub struct Listener {
    pub port: u16,
    /// Whether the [::1] side is listening too.
    pub ipv6: bool,
    log: Arc<Mutex<Log>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Listener {
    pub async fn start() -> std::io::Result<Listener> {
        let v4 = TcpListener::bind("127.0.0.1:0").await?;
        let port = v4.local_addr()?.port();
        let v6 = TcpListener::bind(("::1", port)).await.ok();
        let log = Arc::new(Mutex::new(Log::default()));
        let mut tasks = vec![tokio::spawn(accept(v4, log.clone(), port))];
        let ipv6 = v6.is_some();
        if let Some(v6) = v6 {
            tasks.push(tokio::spawn(accept(v6, log.clone(), port)));
        }
        Ok(Listener { port, ipv6, log, tasks })
    }

    /// `{listener}`: the base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Says that a connection from this source port is the harness's own, before it
    /// connects, so that it is never counted as the server's however late it is
    /// accepted; `false` takes that back when the connection failed.
    pub fn own(&self, port: u16, own: bool) {
        let mut log = self.log.lock().expect("listener log");
        // Bounded: a port never accepted (a connect cut off by its timeout) is forgotten
        // once the set is full.
        if own && log.own.len() >= 256 {
            log.own.clear();
        }
        if own {
            log.own.insert(port);
        } else {
            log.own.remove(&port);
        }
    }

    /// Notes that a probe carries `token` to the listener: a request that names it
    /// later is that probe's, arriving late.
    pub fn issue(&self, token: &str) {
        let mut log = self.log.lock().expect("listener log");
        if log.issued.len() < MAX_RECORDED {
            log.issued.insert(token.to_string());
        }
    }

    /// Which earlier probe a request belongs to: the issued token its path names.
    pub fn earlier_probe(&self, hit: &Hit) -> Option<String> {
        let log = self.log.lock().expect("listener log");
        log.issued.iter().find(|t| hit.path.contains(t.as_str())).cloned()
    }

    /// The connections accepted from index `from` on, once each has sent its request
    /// (waiting at most `limit` for the ones that have not).
    pub async fn headed_since(&self, from: usize, limit: std::time::Duration) -> Vec<Hit> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let hits = self.since(from);
            if tokio::time::Instant::now() >= deadline || hits.iter().all(|h| h.headed) {
                return hits;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// Connections seen so far, the harness's own left out.
    pub fn hits(&self) -> u32 {
        self.log.lock().expect("listener log").connections
    }

    /// Everything recorded from index `from` on.
    pub fn since(&self, from: usize) -> Vec<Hit> {
        self.log.lock().expect("listener log").hits.iter().skip(from).cloned().collect()
    }

    pub fn recorded(&self) -> usize {
        self.log.lock().expect("listener log").hits.len()
    }

    /// Waits (at most `limit`) until every connection from index `from` on is finished,
    /// so an oversized reply's byte count is final.
    pub async fn settle(&self, from: usize, limit: std::time::Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while tokio::time::Instant::now() < deadline && self.since(from).iter().any(|h| !h.done) {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

async fn accept(socket: TcpListener, log: Arc<Mutex<Log>>, port: u16) {
    while let Ok((conn, peer)) = socket.accept().await {
        {
            let mut log = log.lock().expect("listener log");
            if log.own.remove(&peer.port()) {
                continue;
            }
            log.connections += 1;
        }
        // Recorded as it is accepted, so a connection belongs to the call during which it
        // arrived, however late its request follows.
        let index = record(&log, Hit::default());
        let _ = conn.set_nodelay(true);
        tokio::spawn(serve(conn, log.clone(), port, index));
    }
}

async fn serve(mut conn: TcpStream, log: Arc<Mutex<Log>>, port: u16, index: Option<usize>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    // Read the head (bounded in size and time).
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break Some(i);
        }
        if buf.len() > 64 * 1024 {
            break None;
        }
        match tokio::time::timeout(std::time::Duration::from_secs(3), conn.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
            _ => break None,
        }
    };
    let Some(end) = head_end else {
        // Not HTTP (a gopher or dict client, say): keep what it sent.
        let line = String::from_utf8_lossy(&buf[..buf.len().min(200)]).trim().to_string();
        let hit = Hit { path: line.clone(), line, received: buf.len(), headed: true, done: true, ..Hit::default() };
        update(&log, index, hit);
        return;
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_string();
    let path = request_line.split_whitespace().nth(1).unwrap_or_default().to_string();
    let method = request_line.split_whitespace().next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':').map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string())))
        .collect();
    let mut hit = Hit {
        line: format!("{method} {path}"),
        path: path.clone(),
        headers,
        received: buf.len(),
        sent: 0,
        completed: false,
        headed: true,
        done: false,
    };
    // Recorded at once, so a probe sees the hit even while a big reply still streams.
    update(&log, index, hit.clone());
    if let Some(token) = path.split("/redirect/").nth(1) {
        let location = format!("http://127.0.0.1:{port}/t/{token}");
        let reply =
            format!("HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        let _ = conn.write_all(reply.as_bytes()).await;
    } else if path.contains("/big/") {
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {BIG_BYTES}\r\nconnection: close\r\n\r\n"
        );
        let _ = conn.write_all(head.as_bytes()).await;
        let block = vec![b'x'; 64 * 1024];
        while hit.sent < BIG_BYTES {
            match tokio::time::timeout(std::time::Duration::from_secs(5), conn.write_all(&block)).await {
                Ok(Ok(())) => hit.sent += block.len() as u64,
                _ => break,
            }
        }
        hit.completed = hit.sent >= BIG_BYTES;
    } else {
        let body =
            if path.starts_with("/control") { CONTROL_BODY.to_string() } else { "sealmark listener".to_string() };
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = conn.write_all(reply.as_bytes()).await;
    }
    let _ = conn.shutdown().await;
    hit.done = true;
    update(&log, index, hit);
}

fn update(log: &Arc<Mutex<Log>>, index: Option<usize>, hit: Hit) {
    if let Some(i) = index {
        log.lock().expect("listener log").hits[i] = hit;
    }
}

fn record(log: &Arc<Mutex<Log>>, hit: Hit) -> Option<usize> {
    let mut log = log.lock().expect("listener log");
    if log.hits.len() < MAX_RECORDED {
        log.hits.push(hit);
        Some(log.hits.len() - 1)
    } else {
        None
    }
}
