//! The runtime: config → targets → session → evidence → checks → grade → record.
//!
//! Everything here is bounded: every wait has a deadline, every stream a size limit,
//! and the server's process group is stopped whatever happens (also when the run
//! future is dropped, as on Ctrl-C).

mod backend;
mod core;
pub mod db;
mod dbpack;
pub mod doctor;
mod effects;
mod fs;
mod git;
mod http;
pub(crate) mod json_cost;
mod learn;
mod listener;
mod net;
mod observer;
pub mod postgres;
mod probes;
pub(crate) mod process;
pub mod sandbox;
pub mod seed;
pub(crate) mod session;
mod sqlite;
pub mod upstream;

use crate::assemble::{RunFacts, assemble};
use crate::classify::classify_declared;
use crate::config::{Config, ToolsFilter};
use crate::judge::core as judge;
use crate::judge::core::{CoreObservations, EchoScan, EchoScanner};
use crate::judge::fs::FsObservations;
use crate::judge::{OBSERVATIONS_VERSION, Observations, Settings};
use crate::model::Pack;
use crate::record::{Announced, DbRecord, Record, SandboxRecord, ServerLog};
use crate::registry::CHECKS;
use crate::tools::ToolInfo;
use process::ServerProcess;
pub use process::become_subreaper;
use sandbox::Sandbox;
use serde_json::Value;
use session::{Reply, Session, Wire};
use std::time::{Duration, Instant};

/// Options that are not part of the config (command-line only).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Leave the sandbox directory in place and say where it is.
    pub keep_sandbox: bool,
    /// Where the seeded database comes from.
    pub db: db::DbOptions,
    /// The callers' tokens from identities.a / identities.b (already read from the
    /// environment); `None` mints one.
    pub identity_a: Option<String>,
    pub identity_b: Option<String>,
    /// `--active`: probes that make the server run commands may run.
    pub active: bool,
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput {
    pub record: Record,
    /// Where the sandbox was left, with `--keep-sandbox`.
    pub kept_sandbox: Option<std::path::PathBuf>,
}

/// A problem with sealmark's own input or machine, not with the server (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Setup(String),
}

/// One started server and its session.
pub struct Live {
    process: Option<ServerProcess>,
    session: Session,
    /// Why the server is known to be gone or to have stopped answering, once it is, as
    /// evidence words: `the server went away (exited with status 3)`.
    gone: Option<String>,
    /// Calls of this session that got no answer in time from a server that still
    /// answered ping.
    unanswered: u32,
}

/// What the current pack's calls have cost (see `Runner::held`).
#[derive(Debug, Default)]
struct PackBooks {
    name: &'static str,
    /// The calls of this pack that went unanswered, in order.
    unanswered: Vec<String>,
    restarts: u32,
    /// Calls held back, and the first reason.
    not_sent: u32,
    why_not_sent: Option<String>,
}

/// Starts and restarts the server for one run, and keeps what every start leaves.
pub struct Runner<'a> {
    config: &'a Config,
    sandbox: &'a Sandbox,
    /// Values of the database placeholders for the role this runner starts servers as.
    vars: Vec<(String, String)>,
    timeout: Duration,
    leftovers: Vec<String>,
    log: ServerLog,
    gaps: Vec<String>,
    /// Tool calls of the whole run that were answered (a result, a tool error, a
    /// JSON-RPC error, an answer too large to read) and that were not.
    answered: u32,
    unanswered: u32,
    pack: PackBooks,
    /// Why the server cannot be restarted, once a restart failed.
    unrestartable: Option<String>,
    /// Whether a server of this run has stopped answering: from then on its pings get
    /// the short wait.
    wedged: bool,
    /// The canaries secret-echo looks for, shared by every session of the run.
    scanner: std::sync::Arc<EchoScanner>,
    /// What the secret-echo scan found in every session of the run.
    echo: EchoScan,
    /// What the servers sent that answered nothing the harness asked, over all sessions.
    unasked: crate::record::Unasked,
    /// The two callers whose tokens `{bearer}` stands for.
    callers: backend::Callers,
}

/// A pack may leave this many calls unanswered before its remaining calls are held.
pub const UNANSWERED_PER_PACK: usize = 3;

/// A run whose first calls were all left unanswered stops calling after this many:
/// the server answers no call at all.
const NOTHING_ANSWERED_AFTER: u32 = 3;
/// A pack restarts a server that went away or stopped answering at most this often.
const RESTARTS_PER_PACK: u32 = 3;

/// What the cleanup of the current run did, for the message of an interrupted run.
static CLEANUP: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

pub(crate) fn cleanup_note(what: String) {
    CLEANUP.lock().expect("cleanup lock").push(what);
}

/// What was cleaned up since the last call, in order: an interrupted run's drops stop
/// the server, the database and the stub, and remove the sandbox.
pub fn take_cleanup_notes() -> Vec<String> {
    std::mem::take(&mut *CLEANUP.lock().expect("cleanup lock"))
}

/// The tools of the valid calls in a pack's observations that were answered without error.
fn answered_valid_calls(fs: &FsObservations, net: &crate::judge::net::NetObservations) -> Vec<String> {
    use crate::judge::Answer;
    let mut out: Vec<String> = fs
        .benign
        .iter()
        .filter(|b| matches!(b.call.answer, Answer::Success { .. }))
        .map(|b| b.call.tool.clone())
        .collect();
    out.extend(net.controls.iter().filter(|c| c.leaked).map(|c| c.tool.clone()));
    out
}

impl<'a> Runner<'a> {
    /// A runner that starts servers with these database placeholder values.
    fn new(config: &'a Config, sandbox: &'a Sandbox, vars: Vec<(String, String)>, options: &RunOptions) -> Self {
        Runner {
            config,
            sandbox,
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
            scanner: std::sync::Arc::new(EchoScanner::new(&sandbox.canary_list())),
            echo: EchoScan::default(),
            unasked: Default::default(),
            callers: backend::Callers::new(options.identity_a.clone(), options.identity_b.clone()),
        }
    }

    /// A config value with the role's database placeholders and the sandbox's filled in.
    fn expand(&self, s: &str) -> String {
        let s = self.vars.iter().fold(s.to_string(), |acc, (k, v)| acc.replace(k, v));
        self.sandbox.expand(&s)
    }

    /// The server's headers for a session opened as `caller`: `{bearer}` is that caller's
    /// token; an anonymous session drops every header that holds one.
    fn headers_as(&self, caller: crate::judge::credential::Caller) -> Vec<(String, String)> {
        use crate::judge::credential::Caller;
        let own = match caller {
            Caller::A => self.callers.a.as_str(),
            Caller::B => self.callers.b.as_str(),
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
                    .replace("{bearer:a}", &self.callers.a)
                    .replace("{bearer:b}", &self.callers.b);
                (k.clone(), self.expand(&v))
            })
            .collect()
    }

    /// Whether sessions can be opened per caller: an HTTP server whose headers use `{bearer}`.
    fn uses_bearer(&self) -> bool {
        self.config.server.url.is_some() && self.config.server.headers.values().any(|v| v.contains("{bearer}"))
    }

    /// A new session to the running HTTP server, opened as `caller` (handshake done),
    /// or why it could not be.
    async fn open_as(&self, live: &Live, caller: crate::judge::credential::Caller) -> Result<Session, String> {
        let url = self.config.server.url.as_ref().ok_or("the server is not reached over HTTP")?;
        let exited = live.process.as_ref().map(|p| p.exited.clone());
        let mut session = Session::new(
            Session::http(&self.expand(url), self.headers_as(caller), exited),
            self.timeout,
            self.scanner.clone(),
        );
        match core::open(&mut session).await {
            (_, Some(_)) => Ok(session),
            (handshake, None) => Err(handshake.why_not_open()),
        }
    }

    async fn launch(&mut self) -> Result<Live, RunError> {
        let server = &self.config.server;
        let process = match &server.command {
            Some(cmd) => {
                let program = self.expand(cmd);
                let args: Vec<String> = server.args.iter().map(|a| self.expand(a)).collect();
                let configured = server
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), self.vars.iter().fold(v.clone(), |acc, (p, x)| acc.replace(p, x))))
                    .collect();
                let (env, _) = self.sandbox.environment(&configured);
                let stdio = server.url.is_none();
                Some(
                    ServerProcess::spawn(&program, &args, &env, &self.sandbox.root(), &self.sandbox.run_id, stdio)
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
                let url = self.expand(url);
                if let Some(p) = &p {
                    wait_until_listening(&url, p, self.timeout).await;
                }
                let headers = self.headers_as(crate::judge::credential::Caller::A);
                let exited = p.as_ref().map(|p| p.exited.clone());
                (Session::http(&url, headers, exited), p)
            }
            (None, None) => unreachable!("validation requires a command or a url"),
        };
        Ok(self.live(Session::new(wire.0, self.timeout, self.scanner.clone()), wire.1))
    }

    fn live(&self, mut session: Session, process: Option<ServerProcess>) -> Live {
        if self.wedged {
            session.ping_timeout = self.short_wait();
        }
        Live { session, process, gone: None, unanswered: 0 }
    }

    /// The wait for a ping once a server has stopped answering, and for a call while no
    /// call has been answered and one already went unanswered: a server that answers
    /// nothing must not cost a full timeout per call.
    fn short_wait(&self) -> Duration {
        (self.timeout / 5).max(Duration::from_secs(1))
    }

    /// Notes that the server stopped answering (not merely slow): pings wait briefly from now on.
    pub(super) fn stopped_answering(&mut self, live: &mut Live, why: String) {
        self.wedged = true;
        live.session.ping_timeout = self.short_wait();
        if live.gone.is_none() {
            live.gone = Some(why);
        }
    }

    /// Stops a live server and keeps its log, its messages and whatever it left behind.
    async fn retire(&mut self, live: &mut Live) {
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
    fn absorb(&mut self, session: &mut Session) {
        self.unasked.absorb(std::mem::take(&mut session.unasked));
        self.echo.absorb(std::mem::take(&mut session.echo));
    }

    /// Closes the current pack's books (a gap names calls it held back) and opens the
    /// next pack's on a session with nothing pending: a server that went away, stopped
    /// answering or still owes answers is restarted first, so no pack's verdicts depend
    /// on how an earlier pack left the server.
    async fn begin_pack(&mut self, live: &mut Live, name: &'static str) {
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
    fn end_pack(&mut self) {
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
    async fn held(&mut self, live: &mut Live) -> Option<Held> {
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
    async fn relaunch(&mut self, live: &mut Live) -> bool {
        self.retire(live).await;
        let mut fresh = match self.launch().await {
            Ok(fresh) => fresh,
            Err(e) => {
                self.unrestartable = Some(format!("a restart failed ({e})"));
                return false;
            }
        };
        let (handshake, _) = core::open(&mut fresh.session).await;
        if !matches!(handshake, judge::HandshakeObs::Answered { .. }) {
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
    async fn call_tool(
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
    async fn send_call(&mut self, live: &mut Live, tool: &str, args: Value, what: &str, counted: bool) -> Reply {
        let wait = if self.answered == 0 && self.unanswered > 0 { self.short_wait() } else { self.timeout };
        let params = serde_json::json!({"name": tool, "arguments": args});
        let reply = live.session.request_within("tools/call", params, what, wait).await;
        self.note(live, &reply, what, counted);
        reply
    }

    /// Books one call's reply: answered or not, and a server that stopped answering
    /// (no answer to a ping sent while waiting) or went away is marked for a restart.
    fn note(&mut self, live: &mut Live, reply: &Reply, what: &str, counted: bool) {
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
enum Held {
    /// This many calls went unanswered, and none was ever answered.
    NothingAnswered(u32),
    /// `UNANSWERED_PER_PACK` calls of this pack went unanswered, the first of them this one.
    Budget { first: String },
    /// The server went away or stopped answering, and could not be restarted (again).
    Gone(String),
}

impl Held {
    /// The reason as evidence words, after `not sent: `.
    fn reason(&self) -> String {
        match self {
            Held::NothingAnswered(n) => format!("no call of this run was answered ({n} went unanswered)"),
            Held::Budget { first } => {
                format!("{UNANSWERED_PER_PACK} calls of this pack went unanswered, the first {first}")
            }
            Held::Gone(why) => why.clone(),
        }
    }

    /// The held call as an answer: not sent, never evidence.
    fn not_sent(&self) -> crate::judge::Answer {
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

/// The targets every start of the server needs: the sandbox tree, the loopback
/// listener, the upstream stub and the seeded SQLite file when the config asks for them.
async fn start_targets(
    config: &Config,
    large_bytes: usize,
) -> Result<(Sandbox, Option<listener::Listener>, Option<upstream::Stub>), RunError> {
    let mut sandbox = Sandbox::create(large_bytes)
        .map_err(|e| RunError::Setup(format!("cannot create the sandbox directory: {e}")))?;
    let listener = listener::Listener::start().await.ok();
    sandbox.listener = listener.as_ref().map(listener::Listener::url);
    let stub = match config.upstream.kind.as_deref() {
        Some("http") => Some(
            upstream::Stub::start(config.upstream.clone())
                .await
                .map_err(|e| RunError::Setup(format!("cannot start the upstream stub: {e}")))?,
        ),
        _ => None,
    };
    sandbox.upstream = stub.as_ref().map(upstream::Stub::url);
    if config.server_mentions("{repo}") {
        sandbox.git = Some(git::create(&sandbox).map_err(|e| RunError::Setup(format!("cannot create {{repo}}: {e}")))?);
    }
    if config.server_mentions("{sqlite}") {
        sandbox.sqlite =
            Some(sqlite::seed(&sandbox).map_err(|e| RunError::Setup(format!("cannot seed the SQLite file: {e}")))?);
    }
    Ok((sandbox, listener, stub))
}

/// Runs every requested pack this build carries against the configured server.
pub async fn run(config: &Config, options: &RunOptions) -> Result<RunOutput, RunError> {
    let started = Instant::now();
    let started_at = now_rfc3339();
    let large = 4 * config.setting_u64("fs-large-read", "max_bytes") as usize;
    let (mut sandbox, listener, stub) = start_targets(config, large).await?;
    let (_, inherited) = sandbox.environment(&config.server.env);
    // The database, when the server's config asks for one through a placeholder.
    let uses_db = db::config_uses_db(config);
    let mut database = if uses_db { Some(db::prepare(&options.db).await) } else { None };
    // A database the user named and sealmark cannot use is a usage error, not a gap.
    if options.db.pg.is_some()
        && let Some(Err(why)) = &database
    {
        return Err(RunError::Setup(why.clone()));
    }
    let (vars, db_record, db_reason) = match &database {
        None => (
            Vec::new(),
            DbRecord { used: false, summary: "not used".to_string() },
            "server config has no {dsn}/{host}/... placeholder, so the harness cannot start the server once per role"
                .to_string(),
        ),
        Some(Err(why)) => {
            (db::empty_placeholders(), DbRecord { used: false, summary: format!("not available: {why}") }, why.clone())
        }
        Some(Ok(d)) => (
            d.seed.placeholders(db::SESSION_ROLE),
            DbRecord { used: true, summary: d.summary.clone() },
            "no SQL tool found".to_string(),
        ),
    };
    let mut db_reason = Some(db_reason);
    let mut runner = Runner::new(config, &sandbox, vars, options);

    let mut obs = CoreObservations { canaries: sandbox.canary_list(), ..Default::default() };
    let mut live = runner.launch().await?;
    let (handshake, caps) = core::open(&mut live.session).await;
    obs.handshake = handshake;
    let mut tools = Vec::new();
    let mut classes = Vec::new();
    let mut filtered_out = Vec::new();
    let mut fs_obs = FsObservations::default();
    let mut net_obs = crate::judge::net::NetObservations::default();
    let mut git_obs = crate::judge::git::GitObservations::default();
    let mut sqlite_obs = crate::judge::sqlite::SqliteObservations::default();
    let mut backend_obs = crate::judge::backend::BackendObservations::default();
    let mut probe_calls = Vec::new();
    let mut probe_answered = Vec::new();
    let mut custom_obs = Vec::new();
    if let Some(caps) = caps {
        core::list_metadata(&mut live.session, &caps, &mut obs).await;
        for raw in &obs.tools.tools {
            let t = ToolInfo::from_value(raw);
            if config.tools.keeps(&t.name) { tools.push(t) } else { filtered_out.push(t.name) }
        }
        for wanted in &config.tools.include {
            if !tools.iter().any(|t| ToolsFilter::matches(wanted, &t.name)) {
                runner.gaps.push(format!("tools.include names \"{wanted}\", which matches no tool the server lists"));
            }
        }
        let contradicted = config.classify_problems(&tools);
        if !contradicted.is_empty() {
            return Err(RunError::Setup(contradicted.join("\n")));
        }
        probes::validate(&runner, &tools, &obs.tools.tools)?;
        runner.begin_pack(&mut live, "robust-input").await;
        core::robust(&mut runner, &mut live, &tools, &mut obs).await;
        runner.begin_pack(&mut live, "probes").await;
        let targets = probes::Targets {
            sandbox: &sandbox,
            listener: listener.as_ref(),
            stub: stub.as_ref(),
            active: options.active,
        };
        (probe_calls, probe_answered) = probes::valid_calls(&mut runner, &mut live, &targets).await;
        classes = tools.iter().map(|t| classify_declared(t, &config.classify)).collect();
        // The packs aim the tools with what was learned; the record lists them as listed.
        let mut aimed = tools.clone();
        runner.begin_pack(&mut live, "classification").await;
        learn::params(&mut runner, &mut live, &mut aimed, &mut classes).await;
        let tools = &aimed;
        if config.runs_pack(Pack::Fs) || config.runs_pack(Pack::Effects) {
            runner.begin_pack(&mut live, "fs and effects").await;
            fs_obs = fs::collect(&mut runner, &mut live, tools, &classes, &sandbox, listener.as_ref()).await;
        }
        if config.runs_pack(Pack::Sqlite)
            && let Some(path) = &sandbox.sqlite
        {
            runner.begin_pack(&mut live, "sqlite").await;
            sqlite_obs = sqlite::collect(&mut runner, &mut live, tools, &classes, &sandbox, path).await;
        }
        if config.runs_pack(Pack::Net)
            && let Some(l) = &listener
        {
            runner.begin_pack(&mut live, "net").await;
            net_obs = net::collect(&mut runner, &mut live, tools, &classes, &sandbox, l).await;
        }
        if config.runs_pack(Pack::Git) {
            match &sandbox.git {
                Some(repos) => {
                    runner.begin_pack(&mut live, "git").await;
                    let benign;
                    (git_obs, benign) =
                        git::collect(&mut runner, &mut live, tools, &classes, &sandbox, repos, listener.as_ref()).await;
                    fs_obs.benign.extend(benign);
                }
                None if classes.iter().any(|c| c.class == "git") => runner.gaps.push(
                    "the server config has no {repo} placeholder, so the git pack has no repository of the harness's to give it (e.g. --repository {repo})".to_string(),
                ),
                None => {}
            }
        }
        if config.runs_pack(Pack::Effects) {
            runner.begin_pack(&mut live, "effects").await;
            let done: Vec<String> = fs_obs.benign.iter().map(|b| b.call.tool.clone()).collect();
            let (calls, noise) =
                effects::collect(&mut runner, &mut live, tools, &classes, &sandbox, listener.as_ref(), &done).await;
            fs_obs.benign.extend(calls);
            for path in noise {
                if !fs_obs.noise.contains(&path) {
                    fs_obs.noise.push(path);
                }
            }
            fs_obs.listener |= listener.is_some();
        }
        if let Some(stub) = &stub
            && [Pack::Scope, Pack::SqlGuard, Pack::Upstream].into_iter().any(|p| config.runs_pack(p))
        {
            runner.begin_pack(&mut live, "backend").await;
            backend_obs = backend::collect(&mut runner, &mut live, tools, stub).await?;
        }
        if config.runs_pack(Pack::Custom) {
            runner.begin_pack(&mut live, "custom").await;
            let targets = probes::Targets {
                sandbox: &sandbox,
                listener: listener.as_ref(),
                stub: stub.as_ref(),
                active: options.active,
            };
            custom_obs = probes::custom_checks(&mut runner, &mut live, &targets).await;
        }
    } else if let judge::HandshakeObs::NoAnswer { .. } = obs.handshake
        && let Some(g) = &live.session.unasked.first_junk_line
    {
        runner.gaps.push(format!(
            "the server wrote {} line(s) that are not JSON to stdout, the first: {g}",
            live.session.unasked.junk_lines
        ));
    }
    // The http pack's raw requests, while the server still runs.
    let http_obs = match &config.server.url {
        Some(url) if config.runs_pack(Pack::Http) && live.gone.is_none() => {
            let configured: Vec<String> = config.server.headers.keys().cloned().collect();
            let started = config.server.command.as_ref().map(|_| sandbox.run_id.as_str());
            let headers = runner.headers_as(crate::judge::credential::Caller::A);
            Some(http::collect(&runner.expand(url), headers, &configured, runner.timeout, started).await)
        }
        _ => None,
    };
    if obs.handshake.result().is_none() {
        // The main session is caller a's: a server that refused it refused the token.
        backend_obs.credential.bearer = runner.uses_bearer();
        backend_obs.credential.identities = runner.callers.identities;
        backend_obs.credential.main_refused = Some(obs.handshake.why_not_open());
    }
    runner.end_pack();
    runner.retire(&mut live).await;
    let mut db_obs = crate::judge::db::DbObservations::default();
    if config.runs_pack(Pack::Db)
        && let Some(Ok(d)) = database.as_mut()
    {
        db_obs = dbpack::collect(&mut runner, &mut d.seed).await?;
        if !db_obs.tools.is_empty() {
            db_reason = None;
        }
    }
    runner.end_pack();
    obs.echo = std::mem::take(&mut runner.echo);
    obs.answered_calls = runner.answered;
    let caller_redactions = runner.callers.redactions();
    let leftovers = std::mem::take(&mut runner.leftovers);
    let server_log = std::mem::take(&mut runner.log);
    let unasked = std::mem::take(&mut runner.unasked);
    let mut gaps = std::mem::take(&mut runner.gaps);
    drop(runner);

    let announced = obs.handshake.result().map(|r| Announced {
        name: r.pointer("/serverInfo/name").and_then(Value::as_str).unwrap_or_default().to_string(),
        version: r.pointer("/serverInfo/version").and_then(Value::as_str).unwrap_or_default().to_string(),
        protocol_version: r.get("protocolVersion").and_then(Value::as_str).unwrap_or_default().to_string(),
    });

    let fs_ran = !fs_obs.readers.is_empty() || !fs_obs.writers.is_empty() || !fs_obs.benign.is_empty();
    if fs_ran && config.runs_pack(Pack::Effects) {
        gaps.push("writes outside the observed sandbox directories are not seen by the effects pack".to_string());
    }
    let mut valid_calls = answered_valid_calls(&fs_obs, &net_obs);
    valid_calls.extend(probe_answered);
    let (custom, custom_probes) = crate::judge::custom::findings(&custom_obs);
    valid_calls.extend(
        backend_obs.scope.iter().chain(&backend_obs.statements).filter(|r| r.control_held()).map(|r| r.tool.clone()),
    );
    let mut redactions = sandbox.redactions();
    redactions.extend(caller_redactions);
    if let Some(Ok(d)) = &database {
        for r in &d.seed.roles {
            redactions.push((r.password.clone(), "<password>".to_string()));
        }
        redactions.push((format!(":{}/", d.seed.port), ":{db_port}/".to_string()));
    }
    redactions.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    let observations = Observations {
        version: OBSERVATIONS_VERSION,
        settings: Settings {
            packs: Pack::ALL.into_iter().filter(|p| config.runs_pack(*p)).collect(),
            instructions_deny: config.setting_strings("instructions-hygiene", "deny"),
            disabled: CHECKS.iter().filter(|c| !config.enabled(c.id)).map(|c| c.id.to_string()).collect(),
        },
        core: obs,
        fs: fs_obs,
        net: net_obs,
        git: git_obs,
        http: http_obs,
        db: db_obs,
        sqlite: sqlite_obs,
        backend: stub.is_some().then_some(backend_obs),
    };
    // The judges read what the record will hold, so a replay of it judges the same.
    let observations = crate::record::redacted(observations, &redactions);
    let findings = crate::judge::all(&observations);
    let kept_at = if options.keep_sandbox { sandbox.keep() } else { None };
    let kept = kept_at.is_some();
    let cleaned_up = if kept { false } else { sandbox.clean_up() };
    let server = &config.server;
    let stdio = server.url.is_none();
    let facts = RunFacts {
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        transport: if stdio { "stdio" } else { "http" }.to_string(),
        command_display: server.command.as_ref().map(|c| shell_words(c, &server.args)).unwrap_or_default(),
        url: server.url.as_deref().map(strip_userinfo),
        env_display: sandbox::env_display(&server.env, &server.headers, server.command.is_some()),
        tools,
        classification: classes,
        filtered_out,
        announced,
        sandbox: SandboxRecord {
            dir: "{sandbox_dir}".to_string(),
            env_mode: "scrubbed".to_string(),
            listener_port: listener.as_ref().map(|l| l.port),
            cleaned_up,
            leftover_processes: leftovers,
            active: options.active,
            enabled: true,
            kept,
            inherited,
        },
        server_log,
        gaps,
        valid_calls,
        db: db_record,
        db_reason,
        upstream: stub.as_ref().map(|s| crate::record::UpstreamRecord { url: s.url(), requests: s.count() }),
        probe_calls,
        custom,
        custom_probes,
        unasked,
    };
    let mut record = assemble(config, facts, findings);
    record.keep_observations(&observations);
    Ok(RunOutput { record: record.redact(&redactions), kept_sandbox: kept_at })
}

/// The command as a user would type it, placeholders unexpanded.
fn shell_words(cmd: &str, args: &[String]) -> String {
    std::iter::once(cmd)
        .chain(args.iter().map(String::as_str))
        .map(|w| {
            if w.is_empty() || w.contains([' ', '"', '\'']) {
                format!("'{}'", w.replace('\'', "'\\''"))
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A URL without any `user:password@`.
fn strip_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_string(),
    }
}

/// The current UTC time as `2026-10-12T09:30:00.000Z`.
fn now_rfc3339() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z", rem / 3600, rem % 3600 / 60, rem % 60, now.subsec_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_stripped_and_words_quoted() {
        assert_eq!(strip_userinfo("http://u:p@127.0.0.1:8080/mcp"), "http://127.0.0.1:8080/mcp");
        assert_eq!(shell_words("node", &["a b".into(), "{sandbox}".into()]), "node 'a b' {sandbox}");
        assert_eq!(now_rfc3339().len(), 24);
    }
}
