//! The runner starts the server for a run, restarts it when it goes away or stops
//! answering, and keeps the books every pack reads before it sends a call: how many
//! calls went unanswered, how often the server was restarted, and why a call was held
//! back. A held call is never judged (`Answer::NotSent`).

use super::process::{self, ServerProcess};
use super::{Reply, Session, Wire};
use crate::config::Config;
use crate::judge::core::{EchoScan, EchoScanner, HandshakeObs};
use crate::judge::credential::Caller;
use crate::record::ServerLog;
use crate::targets::{RunError, Targets};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// One started server and its session.
pub struct Live {
    pub(crate) process: Option<ServerProcess>,
    pub(crate) session: Session,
    /// Why the server is known to be gone or to have stopped answering, once it is, as
    /// evidence words: `the server went away (exited with status 3)`.
    pub(crate) gone: Option<String>,
    /// Calls of this session that got no answer in time from a server that still
    /// answered ping.
    pub(crate) unanswered: u32,
}

/// What the current pack's calls have cost (see `Runner::held`).
#[derive(Debug, Default)]
pub(crate) struct PackBooks {
    pub(crate) name: &'static str,
    /// The calls of this pack that went unanswered, in order.
    pub(crate) unanswered: Vec<String>,
    pub(crate) restarts: u32,
    /// Calls held back, and the first reason.
    pub(crate) not_sent: u32,
    pub(crate) why_not_sent: Option<String>,
}

/// Starts and restarts the server for one run, and keeps what every start leaves.
/// A server string of the config with each `${VARIABLE}` read from sealmark's own
/// environment (the CLI refuses a run whose variable is unset; reports keep the reference).
fn from_environment(value: &str) -> String {
    crate::config::ENV_REFERENCE
        .replace_all(value, |c: &regex::Captures| std::env::var(&c[1]).unwrap_or_else(|_| c[0].to_string()))
        .into_owned()
}

pub struct Runner<'a> {
    pub config: &'a Config,
    pub targets: &'a Targets,
    /// Values of the database placeholders for the role this runner starts servers as.
    pub(crate) vars: Vec<(String, String)>,
    pub(crate) timeout: Duration,
    pub(crate) leftovers: Vec<String>,
    pub(crate) log: ServerLog,
    pub(crate) gaps: Vec<String>,
    /// Tool calls of the whole run that were answered (a result, a tool error, a
    /// JSON-RPC error, an answer too large to read) and that were not.
    pub(crate) answered: u32,
    pub(crate) unanswered: u32,
    pub(crate) pack: PackBooks,
    /// Why the server cannot be restarted, once a restart failed.
    pub(crate) unrestartable: Option<String>,
    /// Whether a server of this run has stopped answering: from then on its pings get
    /// the short wait.
    pub(crate) wedged: bool,
    /// The canaries secret-echo looks for, shared by every session of the run.
    pub(crate) scanner: Arc<EchoScanner>,
    /// What the secret-echo scan found in every session of the run.
    pub(crate) echo: EchoScan,
    /// What the servers sent that answered nothing the harness asked, over all sessions.
    pub(crate) unasked: crate::record::Unasked,
}

/// A pack may leave this many calls unanswered before its remaining calls are held.
pub const UNANSWERED_PER_PACK: usize = 3;

/// A run whose first calls were all left unanswered stops calling after this many:
/// the server answers no call at all.
const NOTHING_ANSWERED_AFTER: u32 = 3;
/// A pack restarts a server that went away or stopped answering at most this often.
const RESTARTS_PER_PACK: u32 = 3;

impl<'a> Runner<'a> {
    /// A runner that starts servers with these database placeholder values.
    pub fn new(config: &'a Config, targets: &'a Targets, vars: Vec<(String, String)>) -> Self {
        Runner {
            config,
            targets,
            vars,
            timeout: Duration::from_secs(config.timeout_probe_sec),
            leftovers: Vec::new(),
            log: ServerLog::default(),
            gaps: Vec::new(),
            answered: 0,
            unanswered: 0,
            pack: PackBooks::default(),
            unrestartable: None,
            wedged: false,
            scanner: Arc::new(EchoScanner::new(&targets.sandbox.canary_list())),
            echo: EchoScan::default(),
            unasked: Default::default(),
        }
    }

    /// One of the server's own strings (command, args, env, url, headers): its
    /// `${VARIABLE}`s read from the environment, then `expand`ed.
    pub fn server_value(&self, s: &str) -> String {
        self.expand(&from_environment(s))
    }

    /// A config value with the role's database placeholders and the targets' filled in.
    pub fn expand(&self, s: &str) -> String {
        let s = self.vars.iter().fold(s.to_string(), |acc, (k, v)| acc.replace(k, v));
        self.targets.expand(&s)
    }

    /// The server's headers for a session opened as `caller`: `{bearer}` is that caller's
    /// token; an anonymous session drops every header that holds one.
    pub(crate) fn headers_as(&self, caller: Caller) -> Vec<(String, String)> {
        use crate::judge::credential::Caller;
        let own = match caller {
            Caller::A => self.targets.callers.a.as_str(),
            Caller::B => self.targets.callers.b.as_str(),
            Caller::Anonymous => "",
        };
        self.config
            .server
            .headers
            .iter()
            .filter(|(_, v)| caller != Caller::Anonymous || !v.contains("{bearer"))
            .map(|(k, v)| {
                let v = v
                    .replace("{bearer}", own)
                    .replace("{bearer:a}", &self.targets.callers.a)
                    .replace("{bearer:b}", &self.targets.callers.b);
                (k.clone(), self.server_value(&v))
            })
            .collect()
    }

    /// Whether sessions can be opened per caller: an HTTP server whose headers use `{bearer}`.
    pub(crate) fn uses_bearer(&self) -> bool {
        self.config.server.url.is_some() && self.config.server.headers.values().any(|v| v.contains("{bearer}"))
    }

    /// A new session to the running HTTP server, opened as `caller` (handshake done),
    /// or why it could not be.
    pub(crate) async fn open_as(&self, live: &Live, caller: Caller) -> Result<Session, String> {
        let url = self.config.server.url.as_ref().ok_or("the server is not reached over HTTP")?;
        let exited = live.process.as_ref().map(|p| p.exited.clone());
        let mut session = Session::new(
            Session::http(&self.server_value(url), self.headers_as(caller), exited),
            self.timeout,
            self.scanner.clone(),
        );
        match session.handshake().await {
            (_, Some(_)) => Ok(session),
            (handshake, None) => Err(handshake.why_not_open()),
        }
    }

    pub(crate) async fn launch(&mut self) -> Result<Live, RunError> {
        let server = &self.config.server;
        let process = match &server.command {
            Some(cmd) => {
                let program = self.expand(cmd);
                let args: Vec<String> = server.args.iter().map(|a| self.expand(a)).collect();
                let configured =
                    server.env.iter().map(|(k, v)| (k.clone(), self.expand(&from_environment(v)))).collect();
                let (env, _) = self.targets.sandbox.environment(&configured);
                let stdio = server.url.is_none();
                Some(
                    ServerProcess::spawn(
                        &program,
                        &args,
                        &env,
                        &self.targets.sandbox.root(),
                        &self.targets.sandbox.run_id,
                        stdio,
                    )
                    .map_err(|e| RunError::Setup(e.to_string()))?,
                )
            }
            None => None,
        };
        let wire = match (&server.url, process) {
            (None, Some(mut p)) => {
                let wire = Wire::stdio(
                    p.stdin.take().expect("piped stdin"),
                    p.lines.take().expect("stdio lines"),
                    p.exited.clone(),
                );
                return Ok(self.live(Session::new(wire, self.timeout, self.scanner.clone()), Some(p)));
            }
            (Some(url), p) => {
                let url = self.server_value(url);
                if let Some(p) = &p {
                    wait_until_listening(&url, p, self.timeout).await;
                }
                let headers = self.headers_as(Caller::A);
                let exited = p.as_ref().map(|p| p.exited.clone());
                (Session::http(&url, headers, exited), p)
            }
            (None, None) => unreachable!("validation requires a command or a url"),
        };
        Ok(self.live(Session::new(wire.0, self.timeout, self.scanner.clone()), wire.1))
    }

    pub(crate) fn live(&self, mut session: Session, process: Option<ServerProcess>) -> Live {
        if self.wedged {
            session.ping_timeout = self.short_wait();
        }
        Live { session, process, gone: None, unanswered: 0 }
    }

    /// The wait for a ping once a server has stopped answering, and for a call while no
    /// call has been answered and one already went unanswered: a server that answers
    /// nothing must not cost a full timeout per call.
    pub(crate) fn short_wait(&self) -> Duration {
        (self.timeout / 5).max(Duration::from_secs(1))
    }

    /// Notes that the server stopped answering (not merely slow): pings wait briefly from now on.
    pub(crate) fn stopped_answering(&mut self, live: &mut Live, why: String) {
        self.wedged = true;
        live.session.ping_timeout = self.short_wait();
        if live.gone.is_none() {
            live.gone = Some(why);
        }
    }

    /// Stops a live server and keeps its log, its messages and whatever it left behind.
    pub(crate) async fn retire(&mut self, live: &mut Live) {
        self.absorb(&mut live.session);
        if let Some(mut p) = live.process.take() {
            let left = p.stop().await;
            self.leftovers.extend(left);
            let (head, total) = p.log_snapshot();
            self.log.bytes += total;
            let room = process::LOG_KEEP.saturating_sub(self.log.head.len());
            let text = String::from_utf8_lossy(&head);
            let mut cut = room.min(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            self.log.head.push_str(&text[..cut]);
            self.log.truncated |= total as usize > head.len() || cut < text.len();
        }
    }

    /// Keeps what a session's scan found and what its server sent unasked.
    pub(crate) fn absorb(&mut self, session: &mut Session) {
        self.unasked.absorb(std::mem::take(&mut session.unasked));
        self.echo.absorb(std::mem::take(&mut session.echo));
    }

    /// Closes the current pack's books (a gap names calls it held back) and opens the
    /// next pack's on a session with nothing pending: a server that went away, stopped
    /// answering or still owes answers is restarted first, so no pack's verdicts depend
    /// on how an earlier pack left the server.
    pub(crate) async fn begin_pack(&mut self, live: &mut Live, name: &'static str) {
        super::progress::stage(name);
        self.end_pack();
        self.pack = PackBooks { name, ..PackBooks::default() };
        if live.unanswered > 0 && live.gone.is_none() {
            live.gone = Some(format!("the server left {} call(s) unanswered", live.unanswered));
        }
        if live.gone.is_some() && self.unrestartable.is_none() {
            self.relaunch(live).await;
        }
    }

    /// Reports the calls the current pack held back, once.
    pub(crate) fn end_pack(&mut self) {
        let books = std::mem::take(&mut self.pack);
        if let Some(why) = books.why_not_sent {
            self.gaps.push(format!("{}: {} call(s) not sent: {why}", books.name, books.not_sent));
        }
    }

    /// Why the next call must not be sent, if it must not. The books behind it: a run
    /// whose calls have all gone unanswered stops calling; a pack may leave
    /// `UNANSWERED_PER_PACK` calls unanswered; a server that went away or stopped
    /// answering is restarted (at most `RESTARTS_PER_PACK` times a pack). Every pack
    /// asks this before each call; a held call is never judged (`Answer::NotSent`).
    pub(crate) async fn held(&mut self, live: &mut Live) -> Option<Held> {
        let held = if self.answered == 0 && self.unanswered >= NOTHING_ANSWERED_AFTER {
            Some(Held::NothingAnswered(self.unanswered))
        } else if self.pack.unanswered.len() >= UNANSWERED_PER_PACK {
            Some(Held::Budget { first: self.pack.unanswered[0].clone() })
        } else if let Some(why) = live.gone.clone() {
            if let Some(cannot) = &self.unrestartable {
                Some(Held::Gone(format!("{why}, and {cannot}")))
            } else if self.pack.restarts >= RESTARTS_PER_PACK {
                Some(Held::Gone(format!("{why} (restarted {RESTARTS_PER_PACK} times in this pack)")))
            } else {
                self.pack.restarts += 1;
                (!self.relaunch(live).await)
                    .then(|| Held::Gone(format!("{why}, and {}", self.unrestartable.clone().unwrap_or_default())))
            }
        } else {
            None
        };
        if let Some(h) = &held {
            self.pack.not_sent += 1;
            self.pack.why_not_sent.get_or_insert_with(|| h.reason());
        }
        held
    }

    /// Replaces a server that went away or stopped answering with a fresh one that has
    /// completed the handshake; false (and no more restarts this run) when it cannot.
    pub(crate) async fn relaunch(&mut self, live: &mut Live) -> bool {
        self.retire(live).await;
        let mut fresh = match self.launch().await {
            Ok(fresh) => fresh,
            Err(e) => {
                self.unrestartable = Some(format!("a restart failed ({e})"));
                return false;
            }
        };
        let (handshake, _) = fresh.session.handshake().await;
        if !matches!(handshake, HandshakeObs::Answered { .. }) {
            let why = format!("the restarted server did not complete the handshake ({})", handshake.why_not_open());
            fresh.gone = Some(why.clone());
            self.unrestartable = Some(why);
        }
        *live = fresh;
        live.gone.is_none()
    }

    /// Sends one tools/call in `live`'s session unless the pack's calls are held, and
    /// keeps the books `held` reads. `counted`: whether no answer spends the pack's
    /// budget (a probe meant to run long does not).
    pub(crate) async fn call_tool(
        &mut self,
        live: &mut Live,
        tool: &str,
        args: Value,
        what: &str,
        counted: bool,
    ) -> Result<Reply, Held> {
        if let Some(held) = self.held(live).await {
            return Err(held);
        }
        Ok(self.send_call(live, tool, args, what, counted).await)
    }

    /// `call_tool` for a caller that asked `held` itself (to look at its targets between
    /// the restart a held check may make and the call).
    pub(crate) async fn send_call(
        &mut self,
        live: &mut Live,
        tool: &str,
        args: Value,
        what: &str,
        counted: bool,
    ) -> Reply {
        let wait = if self.answered == 0 && self.unanswered > 0 { self.short_wait() } else { self.timeout };
        self.send_call_within(live, tool, args, what, counted, wait).await
    }

    /// `send_call` with its own wait: a probe whose verdict needs a longer one (a runaway
    /// statement a server may stop only after the probe timeout).
    pub(crate) async fn send_call_within(
        &mut self,
        live: &mut Live,
        tool: &str,
        args: Value,
        what: &str,
        counted: bool,
        wait: Duration,
    ) -> Reply {
        let params = serde_json::json!({"name": tool, "arguments": args});
        let reply = live.session.request_within("tools/call", params, what, wait).await;
        self.note(live, &reply, what, counted);
        reply
    }

    /// Books one call's reply: answered or not, and a server that stopped answering
    /// (no answer to a ping sent while waiting) or went away is marked for a restart.
    pub(crate) fn note(&mut self, live: &mut Live, reply: &Reply, what: &str, counted: bool) {
        match reply {
            Reply::Result(_) | Reply::Error { .. } | Reply::TooLarge { .. } => self.answered += 1,
            Reply::Timeout { alive } => {
                if counted {
                    self.unanswered += 1;
                    live.unanswered += 1;
                    self.pack.unanswered.push(what.to_string());
                }
                if !alive {
                    self.stopped_answering(live, format!("the server stopped answering after {what}"));
                }
            }
            Reply::Silence => {}
            Reply::Gone(why) => live.gone = Some(format!("the server went away after {what} ({why})")),
        }
    }
}

/// Why a call was held back (`Runner::held`).
pub enum Held {
    /// This many calls went unanswered, and none was ever answered.
    NothingAnswered(u32),
    /// `UNANSWERED_PER_PACK` calls of this pack went unanswered, the first of them this one.
    Budget { first: String },
    /// The server went away or stopped answering, and could not be restarted (again).
    Gone(String),
}

impl Held {
    /// The reason as evidence words, after `not sent: `.
    pub(crate) fn reason(&self) -> String {
        match self {
            Held::NothingAnswered(n) => format!("no call of this run was answered ({n} went unanswered)"),
            Held::Budget { first } => {
                format!("{UNANSWERED_PER_PACK} calls of this pack went unanswered, the first {first}")
            }
            Held::Gone(why) => why.clone(),
        }
    }

    /// The held call as an answer: not sent, never evidence.
    pub(crate) fn not_sent(&self) -> crate::judge::Answer {
        crate::judge::Answer::NotSent { reason: self.reason() }
    }
}

/// Waits until an HTTP server the harness started accepts connections.
async fn wait_until_listening(url: &str, p: &ServerProcess, timeout: Duration) {
    let Some(addr) = url.split("://").nth(1).and_then(|rest| rest.split('/').next()).map(str::to_string) else {
        return;
    };
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::time::Instant::now() < deadline && p.exit_status().is_none() {
        if tokio::net::TcpStream::connect(&addr).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
