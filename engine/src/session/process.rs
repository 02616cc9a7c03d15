//! The server process: started in its own process group with a scrubbed environment,
//! its output drained and bounded, stopped as a group, and anything it left behind
//! found and named.

use crate::children::{cleanup_note, descendants, disown, group_alive, kill_leftovers, own, signal_group};
use regex::Regex;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, watch};

/// The longest stdout line parsed; a longer one is reported as too large and
/// attributed to the request it answers.
pub const MAX_LINE: usize = 8 * 1024 * 1024;
/// How much of each end of an oversized line is kept, to find its id and for the
/// secret-echo scan.
const OVERSIZED_KEEP: usize = 64 * 1024;
/// How much of stderr is kept as the server log.
pub const LOG_KEEP: usize = 64 * 1024;
/// How long a stopping server gets between TERM and KILL.
const TERM_GRACE: Duration = Duration::from_millis(1500);

/// One thing read from the server's stdout.
#[derive(Debug)]
pub enum Line {
    /// A line that parsed as JSON.
    Json(serde_json::Value),
    /// A line that did not, with an excerpt.
    Garbage(String),
    /// A line longer than `MAX_LINE`: its length, the JSON-RPC id read from its ends
    /// (when they show one), and both ends as text.
    TooLarge { bytes: u64, id: Option<serde_json::Value>, ends: String },
}

/// The server's stderr (or, for an HTTP server, both streams), bounded.
#[derive(Debug, Default)]
pub struct LogBuf {
    pub head: Vec<u8>,
    pub total: u64,
}

pub struct ServerProcess {
    pub pgid: i32,
    pub stdin: Option<ChildStdin>,
    /// Lines from stdout (stdio servers only).
    pub lines: Option<mpsc::Receiver<Line>>,
    /// Set to the exit description once the process has exited.
    pub exited: watch::Receiver<Option<String>>,
    pub log: Arc<Mutex<LogBuf>>,
    run_id: String,
    stopped: bool,
}

impl ServerProcess {
    /// Starts `program args` in `cwd` with exactly `env`, in a new process group.
    /// With `stdio`, stdout carries the protocol; otherwise both streams are logged.
    pub fn spawn(
        program: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
        run_id: &str,
        stdio: bool,
    ) -> std::io::Result<ServerProcess> {
        let resolved = resolve_program(program, cwd);
        let mut cmd = Command::new(&resolved);
        cmd.args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .process_group(0)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child =
            cmd.spawn().map_err(|e| std::io::Error::new(e.kind(), format!("cannot start {program}: {e}")))?;
        let pid = child.id().map(|p| p as i32).unwrap_or(-1);
        own(pid);
        let log = Arc::new(Mutex::new(LogBuf::default()));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        tokio::spawn(drain_log(stderr, log.clone()));
        let lines = if stdio {
            // Few lines wait parsed: each may cost up to `json_cost::MESSAGE_BUDGET`.
            let (tx, rx) = mpsc::channel(2);
            tokio::spawn(read_lines(stdout, tx));
            Some(rx)
        } else {
            tokio::spawn(drain_log(stdout, log.clone()));
            None
        };
        let (exit_tx, exited) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await;
            let desc = match status {
                Ok(s) => describe_exit(s),
                Err(e) => format!("could not be waited for: {e}"),
            };
            let _ = exit_tx.send(Some(desc));
        });
        Ok(ServerProcess { pgid: pid, stdin, lines, exited, log, run_id: run_id.to_string(), stopped: false })
    }

    /// The exit description, if the process has exited.
    pub fn exit_status(&self) -> Option<String> {
        self.exited.borrow().clone()
    }

    /// Stops the whole process group (TERM, then KILL), then finds processes that
    /// escaped the group but carry this run's marker, kills them and names them.
    pub async fn stop(&mut self) -> Vec<String> {
        if self.stopped {
            return Vec::new();
        }
        self.stopped = true;
        self.stdin = None;
        // Everything under the server now, whatever session or group it moved to.
        let below = if self.pgid > 0 { descendants(&[self.pgid]) } else { Vec::new() };
        if self.pgid > 0 {
            signal_group(self.pgid, libc::SIGTERM);
            let deadline = tokio::time::Instant::now() + TERM_GRACE;
            while group_alive(self.pgid) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            if group_alive(self.pgid) {
                signal_group(self.pgid, libc::SIGKILL);
            }
        }
        let mut exited = self.exited.clone();
        let _ = tokio::time::timeout(Duration::from_secs(2), exited.wait_for(Option::is_some)).await;
        disown(self.pgid);
        kill_leftovers(&below, &self.run_id)
    }

    pub fn log_snapshot(&self) -> (Vec<u8>, u64) {
        let log = self.log.lock().expect("log lock");
        (log.head.clone(), log.total)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Last resort for an early return or a panic: never leave the group running.
        if !self.stopped && self.pgid > 0 {
            let below = descendants(&[self.pgid]);
            signal_group(self.pgid, libc::SIGKILL);
            disown(self.pgid);
            let left = kill_leftovers(&below, &self.run_id);
            cleanup_note(format!("stopped the server (process group {})", self.pgid));
            if !left.is_empty() {
                cleanup_note(format!("killed what it left behind: {}", left.join(", ")));
            }
        }
    }
}

/// A program name without a slash is looked up on sealmark's own PATH (the server
/// gets only the system part), so `node` or `npx` from a user install still start.
fn resolve_program(program: &str, cwd: &Path) -> std::path::PathBuf {
    if program.contains('/') {
        let p = Path::new(program);
        // Relative paths are relative to where sealmark was started, not the sandbox.
        return if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| cwd.join(p))
        };
    }
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(program)).find(|p| p.is_file()))
        .unwrap_or_else(|| program.into())
}

fn describe_exit(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (_, Some(sig)) => format!("killed by signal {sig}"),
        _ => "exited".to_string(),
    }
}

async fn drain_log(stream: impl AsyncRead + Unpin, log: Arc<Mutex<LogBuf>>) {
    let mut stream = stream;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut log = log.lock().expect("log lock");
                log.total += n as u64;
                let room = LOG_KEEP.saturating_sub(log.head.len());
                log.head.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// Reads stdout line by line, never holding more than `MAX_LINE` bytes of one line.
/// An oversized line is drained to its end and reported with its two ends.
pub(crate) async fn read_lines(stdout: impl AsyncRead + Unpin, tx: mpsc::Sender<Line>) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::new();
    // Of an oversized line: its length so far and its last bytes.
    let mut oversized: Option<(u64, Vec<u8>)> = None;
    loop {
        let buf = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => buf,
        };
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        match &mut oversized {
            None if line.len() + chunk.len() > MAX_LINE => {
                let mut tail = line.split_off(line.len().saturating_sub(OVERSIZED_KEEP));
                tail.extend_from_slice(chunk);
                let bytes = (line.len() + tail.len()) as u64;
                line.truncate(OVERSIZED_KEEP);
                keep_tail(&mut tail);
                oversized = Some((bytes, tail));
            }
            None => line.extend_from_slice(chunk),
            Some((bytes, tail)) => {
                *bytes += chunk.len() as u64;
                tail.extend_from_slice(chunk);
                keep_tail(tail);
            }
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            let item = match oversized.take() {
                Some((bytes, tail)) => Some(oversized_line(bytes, &line, &tail)),
                None => parse_line(&line),
            };
            line.clear();
            if let Some(item) = item
                && tx.send(item).await.is_err()
            {
                break;
            }
        }
    }
    // Keep draining after the receiver is gone so the server never blocks on a full pipe.
    let mut sink = tokio::io::sink();
    let _ = tokio::io::copy(&mut reader, &mut sink).await;
}

fn keep_tail(tail: &mut Vec<u8>) {
    if tail.len() > 2 * OVERSIZED_KEEP {
        tail.drain(..tail.len() - OVERSIZED_KEEP);
    }
}

/// An oversized line as the session sees it: the id its ends show, if any. Answers put
/// the id first (`{"jsonrpc":"2.0","id":7,…`) or last (`…,"jsonrpc":"2.0","id":7}`).
fn oversized_line(bytes: u64, head: &[u8], tail: &[u8]) -> Line {
    static FIRST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)"#).expect("valid")
    });
    static LAST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*\}\s*$"#).expect("valid"));
    let head = String::from_utf8_lossy(&head[..head.len().min(OVERSIZED_KEEP)]).into_owned();
    let tail = String::from_utf8_lossy(&tail[tail.len().saturating_sub(OVERSIZED_KEEP)..]).into_owned();
    let id = FIRST.captures(&head).or_else(|| LAST.captures(&tail)).and_then(|c| serde_json::from_str(&c[1]).ok());
    Line::TooLarge { bytes, id, ends: format!("{head}\n…\n{tail}") }
}

fn parse_line(line: &[u8]) -> Option<Line> {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return None;
    }
    if super::json_cost::of_line(trimmed) > super::json_cost::MESSAGE_BUDGET {
        // Dense enough that parsing it would cost more than the harness allows.
        return Some(oversized_line(trimmed.len() as u64, trimmed, trimmed));
    }
    Some(match serde_json::from_slice(trimmed) {
        Ok(v) => Line::Json(v),
        Err(_) => Line::Garbage(crate::text::clip(&String::from_utf8_lossy(trimmed), 200)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_oversized_line_names_its_id_from_either_end() {
        let pad = "x".repeat(100);
        match oversized_line(9_000_000, format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"{pad}").as_bytes(), b"") {
            Line::TooLarge { bytes, id, .. } => assert_eq!((bytes, id), (9_000_000, Some(json!(7)))),
            _ => panic!("too large"),
        }
        match oversized_line(
            9_000_000,
            format!("{{\"result\":{{\"t\":\"{pad}").as_bytes(),
            b"x\"}},\"jsonrpc\":\"2.0\",\"id\":\"a-1\"}",
        ) {
            Line::TooLarge { id, .. } => assert_eq!(id, Some(json!("a-1"))),
            _ => panic!("too large"),
        }
        match oversized_line(9_000_000, b"not json at all", b"still not") {
            Line::TooLarge { id, .. } => assert_eq!(id, None),
            _ => panic!("too large"),
        }
    }

    #[tokio::test]
    async fn the_reader_reports_an_oversized_line_and_goes_on() {
        let mut input = Vec::new();
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"");
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        input.extend_from_slice(b"\"}\n{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n");
        let (tx, mut rx) = mpsc::channel(4);
        read_lines(&input[..], tx).await;
        match rx.recv().await {
            Some(Line::TooLarge { bytes, id, .. }) => {
                assert_eq!(bytes as usize, input.len() - 1 - b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\n".len());
                assert_eq!(id, Some(json!(3)));
            }
            _ => panic!("expected an oversized line first"),
        }
        assert!(matches!(rx.recv().await, Some(Line::Json(_))));
    }
}
