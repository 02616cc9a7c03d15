//! Collection: one collector per pack aims that pack's probes at the targets through
//! the runner, and records what the targets saw as that pack's observations. No
//! collector judges; `judge::all` reads what they gathered.

pub mod backend;
pub mod call;
pub mod core;
pub mod db;
pub mod effects;
pub mod fs;
pub mod git;
pub mod http;
pub mod learn;
pub mod net;
pub mod probes;
pub mod sqlite;

use crate::applies::{Refusal, Situation, applies, found_nothing};
use crate::classify::{Classification, classify_declared};
use crate::config::{Config, ConfigError, Problem, ToolsFilter};
use crate::judge::backend::BackendObservations;
use crate::judge::core::{CoreObservations, HandshakeObs};
use crate::judge::credential::Caller;
use crate::judge::custom::{Probe, ProbeObs};
use crate::judge::fs::{BenignCall, FsObservations};
use crate::judge::git::GitObservations;
use crate::judge::net::NetObservations;
use crate::judge::sqlite::SqliteObservations;
use crate::judge::{Answer, OBSERVATIONS_VERSION, Observations, Settings};
use crate::model::Pack;
use crate::record::{ProbeCall, ServerLog, Unasked};
use crate::registry::CHECKS;
use crate::session::runner::{Live, Runner};
use crate::targets::{RunError, Targets};
use crate::tools::ToolInfo;
use std::collections::BTreeMap;

/// What collection produced: the observations the judges read (not yet redacted),
/// and what the record states about the run beside its verdicts.
pub struct Collected {
    pub observations: Observations,
    /// The tools as listed (and kept by `tools:`), their classes, and the ones filtered out.
    pub tools: Vec<ToolInfo>,
    pub classes: Vec<Classification>,
    pub filtered_out: Vec<String>,
    /// The valid calls of `probes:`, and the tools whose valid calls were answered.
    pub probe_calls: Vec<ProbeCall>,
    pub valid_calls: Vec<String>,
    /// The custom checks' probes and what each observed.
    pub custom: Vec<(Probe, ProbeObs)>,
    pub gaps: Vec<String>,
    pub leftovers: Vec<String>,
    pub server_log: ServerLog,
    pub unasked: Unasked,
}

/// Everything the server's tool list refutes in the config: `classify:`, `probes:`, and
/// `sql_tools` and `scope.tools` when a pack that reads them runs. Found before any tool
/// is called.
pub fn tool_problems(runner: &Runner<'_>, tools: &[ToolInfo], raw_tools: &[serde_json::Value]) -> Vec<Problem> {
    let config = runner.config;
    let mut problems = config.classify_problems(tools);
    problems.extend(probes::validate(runner, tools, raw_tools));
    if [Pack::Db, Pack::Sqlite, Pack::SqlGuard].into_iter().any(|p| config.runs_pack(p)) {
        problems.extend(db::sql_tools_problems(config, tools));
    }
    if config.runs_pack(Pack::Scope) {
        problems.extend(backend::scope_tools_problems(config, tools));
    }
    problems
}

/// The config refused for `problems`, said in the order of its lines.
pub fn refused(config: &Config, problems: Vec<Problem>) -> RunError {
    let file = config.file_name();
    RunError::Setup(ConfigError::new(file, problems).to_string())
}

/// Whether each requested pack collects in this run: asked of `applies` once, with the
/// tools as classified when the main session listed them. Every collector, and the
/// http and db packs outside the main session, asks it and nothing else.
pub struct Gate {
    requested: Vec<Pack>,
    refused: BTreeMap<Pack, Refusal>,
}

impl Gate {
    pub fn new(config: &Config, targets: &Targets, classes: Option<&[Classification]>) -> Gate {
        let known = situation(config, targets, classes);
        let requested: Vec<Pack> = Pack::ALL.into_iter().filter(|p| config.runs_pack(*p)).collect();
        let refused = requested.iter().filter_map(|p| applies(*p, &known).err().map(|why| (*p, why))).collect();
        Gate { requested, refused }
    }

    /// Whether `pack` was requested and applies.
    pub fn collects(&self, pack: Pack) -> bool {
        self.requested.contains(&pack) && !self.refused.contains_key(&pack)
    }

    /// A pack refused for a target it needs (not for want of a tool) leaves the tools it
    /// would have probed unprobed: the net pack without its listener, the git pack
    /// without `{repo}` while git tools are listed. Those refusals are gaps.
    fn gaps(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (pack, why) in &self.refused {
            match (pack, why) {
                (Pack::Net, Refusal::Needs(_)) => out.push(format!("net: {why}")),
                (Pack::Git, Refusal::Needs(_)) => out.push(why.to_string()),
                _ => {}
            }
        }
        out
    }
}

/// The collectors of the main session, in the order they run: the fs pack's probes
/// first (its benign calls are the effects pack's), the net pack before the packs that
/// time benign calls, the effects pack after every pack whose benign calls it reuses.
const MAIN_SESSION: [Collector; 7] = [
    Collector::Fs,
    Collector::Sqlite,
    Collector::Net,
    Collector::Git,
    Collector::Effects,
    Collector::Backend,
    Collector::Custom,
];

/// One pack's (or one group of packs') collection in the main session.
#[derive(Debug, Clone, Copy)]
enum Collector {
    Fs,
    Sqlite,
    Net,
    Git,
    Effects,
    Backend,
    Custom,
}

impl Collector {
    /// The packs whose observations it gathers: it runs when any of them collects.
    fn packs(self) -> &'static [Pack] {
        match self {
            Collector::Fs => &[Pack::Fs, Pack::Effects],
            Collector::Sqlite => &[Pack::Sqlite],
            Collector::Net => &[Pack::Net],
            Collector::Git => &[Pack::Git],
            Collector::Effects => &[Pack::Effects],
            Collector::Backend => &[Pack::Scope, Pack::SqlGuard, Pack::Upstream],
            Collector::Custom => &[Pack::Custom],
        }
    }

    /// The name progress lines and the server log give its part of the run.
    fn stage(self) -> &'static str {
        match self {
            Collector::Fs => "fs and effects",
            Collector::Sqlite => "sqlite",
            Collector::Net => "net",
            Collector::Git => "git",
            Collector::Effects => "effects",
            Collector::Backend => "backend",
            Collector::Custom => "custom",
        }
    }

    async fn collect(self, ctx: &mut Ctx<'_, '_>, so_far: &Gathered) -> Result<Got, RunError> {
        let Ctx { runner, live, tools, classes, gate } = ctx;
        let (tools, classes, owned) = (*tools, *classes, runner.targets);
        let missing = |what: &str| format!("{}: {what} was not made, so the pack was not run", self.stage());
        Ok(match self {
            Collector::Fs => Got::Fs(fs::collect(runner, live, tools, classes).await),
            Collector::Sqlite => match &owned.sqlite {
                Some(path) => Got::Sqlite(sqlite::collect(runner, live, tools, classes, path).await),
                None => Got::Gap(missing("the SQLite file")),
            },
            Collector::Net => match &owned.listener {
                Some(l) => {
                    let obs = net::collect(runner, live, tools, classes, l).await;
                    // A fetch may go on after its answer (a body still streaming, a client's
                    // retry), into the benign calls the git and effects packs time: those
                    // start on a fresh server, with nothing of the net pack's still running.
                    if l.hits() > 0
                        && gate.collects(Pack::Effects)
                        && live.gone.is_none()
                        && !runner.relaunch(live).await
                    {
                        runner.gaps.push("net: the server could not be restarted after the net pack".to_string());
                    }
                    Got::Net(obs)
                }
                None => Got::Gap(missing("the listener")),
            },
            Collector::Git => match &owned.repos {
                Some(repos) => {
                    let (obs, benign) = git::collect(runner, live, tools, classes, repos).await;
                    Got::Git(obs, benign)
                }
                None => Got::Gap(missing("{repo}")),
            },
            Collector::Effects => {
                let done: Vec<String> = so_far.fs.benign.iter().map(|b| b.call.tool.clone()).collect();
                let (calls, noise) = effects::collect(runner, live, tools, classes, &done).await;
                Got::Effects { calls, noise, listener: owned.listener.is_some() }
            }
            Collector::Backend => match &owned.stub {
                Some(stub) => Got::Backend(backend::collect(runner, live, tools, classes, stub).await?),
                None => Got::Gap(missing("the upstream stub")),
            },
            Collector::Custom => Got::Custom(probes::custom_checks(runner, live).await),
        })
    }
}

/// What a collector is handed: the runner, the live main session, the tools as the
/// packs aim them with their classes, and the gate.
struct Ctx<'c, 'a> {
    runner: &'c mut Runner<'a>,
    live: &'c mut Live,
    tools: &'c [ToolInfo],
    classes: &'c [Classification],
    gate: &'c Gate,
}

/// What one collector returns.
enum Got {
    Fs(FsObservations),
    Sqlite(SqliteObservations),
    Net(NetObservations),
    /// The git pack's observations, and its benign calls (the effects pack's too).
    Git(GitObservations, Vec<BenignCall>),
    /// The effects pack's benign calls, the server's noise, and whether the listener ran.
    Effects {
        calls: Vec<BenignCall>,
        noise: Vec<String>,
        listener: bool,
    },
    Backend(BackendObservations),
    Custom(Vec<(Probe, ProbeObs)>),
    /// A target the gate let through was not there: the pack is a gap.
    Gap(String),
}

/// The main session's observations as they are gathered.
#[derive(Default)]
struct Gathered {
    fs: FsObservations,
    sqlite: SqliteObservations,
    net: NetObservations,
    git: GitObservations,
    backend: BackendObservations,
    custom: Vec<(Probe, ProbeObs)>,
    gaps: Vec<String>,
}

impl Gathered {
    /// The one place one pack's observations feed another's: the git pack's and the
    /// effects pack's benign calls join the fs pack's (the effects judges read them
    /// all), and the server's noise is kept once.
    fn take(&mut self, got: Got) {
        match got {
            Got::Fs(obs) => self.fs = obs,
            Got::Sqlite(obs) => self.sqlite = obs,
            Got::Net(obs) => self.net = obs,
            Got::Git(obs, benign) => {
                self.git = obs;
                self.fs.benign.extend(benign);
            }
            Got::Effects { calls, noise, listener } => {
                self.fs.benign.extend(calls);
                for path in noise {
                    if !self.fs.noise.contains(&path) {
                        self.fs.noise.push(path);
                    }
                }
                self.fs.listener |= listener;
            }
            Got::Backend(obs) => self.backend = obs,
            Got::Custom(probes) => self.custom = probes,
            Got::Gap(why) => self.gaps.push(why),
        }
    }
}

/// What the main session found before any pack collects (nothing, when it never opened).
#[derive(Default)]
struct Opened {
    /// The tools as listed (and kept by `tools:`), and as the packs aim them.
    tools: Vec<ToolInfo>,
    aimed: Vec<ToolInfo>,
    classes: Vec<Classification>,
    filtered_out: Vec<String>,
    probe_calls: Vec<ProbeCall>,
    probe_answered: Vec<String>,
}

/// The main session's opening: the tool list, the config checked against it, the
/// malformed inputs, the valid calls of `probes:`, and the tools classified.
async fn open(
    runner: &mut Runner<'_>,
    live: &mut Live,
    caps: &serde_json::Value,
    obs: &mut CoreObservations,
) -> Result<Opened, RunError> {
    let config = runner.config;
    core::list_metadata(&mut live.session, caps, obs).await;
    let (mut tools, mut filtered_out) = (Vec::new(), Vec::new());
    for raw in &obs.tools.tools {
        let t = ToolInfo::from_value(raw);
        if config.tools.keeps(&t.name) { tools.push(t) } else { filtered_out.push(t.name) }
    }
    for wanted in &config.tools.include {
        if !tools.iter().any(|t| ToolsFilter::matches(wanted, &t.name)) {
            runner.gaps.push(format!("tools.include names \"{wanted}\", which matches no tool the server lists"));
        }
    }
    // Everything the tool list refutes in the config, reported at once.
    let problems = tool_problems(runner, &tools, &obs.tools.tools);
    if !problems.is_empty() {
        return Err(refused(config, problems));
    }
    runner.begin_pack(live, "robust-input").await;
    core::robust(runner, live, &tools, obs).await;
    runner.begin_pack(live, "probes").await;
    let (probe_calls, probe_answered) = probes::valid_calls(runner, live).await;
    let mut classes: Vec<Classification> = tools.iter().map(|t| classify_declared(t, &config.classify)).collect();
    // The packs aim the tools with what was learned; the record lists them as listed.
    let mut aimed = tools.clone();
    runner.begin_pack(live, "classification").await;
    learn::params(runner, live, &mut aimed, &mut classes).await;
    Ok(Opened { tools, aimed, classes, filtered_out, probe_calls, probe_answered })
}

/// Starts the server, opens the main session, runs every collector the gate lets
/// through, then the http pack's raw requests and the db pack's own servers, and
/// finishes: the gaps, the reasons packs did not run, and the observations.
pub async fn collect(config: &Config, targets: &Targets) -> Result<Collected, RunError> {
    let mut runner = Runner::new(config, targets, targets.db_placeholders(crate::targets::db::SESSION_ROLE));
    let mut obs = CoreObservations { canaries: targets.sandbox.canary_list(), ..Default::default() };
    crate::session::progress::stage("handshake");
    let mut live = runner.launch().await?;
    let (handshake, caps) = live.session.handshake().await;
    obs.handshake = handshake;
    let mut gathered = Gathered::default();
    let opened = match &caps {
        Some(caps) => Some(open(&mut runner, &mut live, caps, &mut obs).await?),
        None => None,
    };
    let gate = Gate::new(config, targets, opened.as_ref().map(|o| o.classes.as_slice()));
    runner.gaps.extend(gate.gaps());
    if let Some(o) = &opened {
        let mut ctx = Ctx { runner: &mut runner, live: &mut live, tools: &o.aimed, classes: &o.classes, gate: &gate };
        for collector in MAIN_SESSION {
            if collector.packs().iter().any(|p| gate.collects(*p)) {
                ctx.runner.begin_pack(ctx.live, collector.stage()).await;
                let got = collector.collect(&mut ctx, &gathered).await?;
                gathered.take(got);
            }
        }
    } else if let HandshakeObs::NoAnswer { .. } = obs.handshake
        && let Some(g) = &live.session.unasked.first_junk_line
    {
        runner.gaps.push(format!(
            "the server wrote {} line(s) that are not JSON to stdout, the first: {g}",
            live.session.unasked.junk_lines
        ));
    }
    // The http pack's raw requests, while the server still runs (also when it refused
    // the handshake: a missing credential is what the pack checks).
    let http_obs = match &config.server.url {
        Some(url) if gate.collects(Pack::Http) && live.gone.is_none() => {
            let configured: Vec<String> = config.server.headers.keys().cloned().collect();
            let started = config.server.command.as_ref().map(|_| targets.sandbox.run_id.as_str());
            let headers = runner.headers_as(Caller::A);
            crate::session::progress::stage("http");
            Some(http::collect(&runner.server_value(url), headers, &configured, runner.timeout, started).await)
        }
        _ => None,
    };
    let mut backend_obs = std::mem::take(&mut gathered.backend);
    if obs.handshake.result().is_none() {
        // The main session is caller a's: a server that refused it refused the token.
        backend_obs.credential.bearer = runner.uses_bearer();
        backend_obs.credential.identities = targets.callers.identities;
        backend_obs.credential.main_refused = Some(obs.handshake.why_not_open());
    }
    runner.end_pack();
    runner.retire(&mut live).await;
    // The db pack starts its own server once per role, and aims at the SQL tools the
    // main session classified.
    let mut db_obs = crate::judge::db::DbObservations::default();
    if gate.collects(Pack::Db)
        && let Some(d) = targets.ready_database()
    {
        let (aimed, classes) = opened.as_ref().map_or((&[][..], &[][..]), |o| (&o.aimed[..], &o.classes[..]));
        db_obs = db::collect(&mut runner, &d.seed, aimed, classes).await?;
    }
    runner.end_pack();
    obs.echo = std::mem::take(&mut runner.echo);
    obs.answered_calls = runner.answered;

    let mut gaps = std::mem::take(&mut runner.gaps);
    gaps.append(&mut gathered.gaps);
    gaps.extend(config.keys_outside_sandbox());
    if !crate::children::PROCESS_TABLE {
        gaps.push(crate::children::NO_PROCESS_TABLE.to_string());
    }
    let Gathered { fs: fs_obs, sqlite: sqlite_obs, net: net_obs, git: git_obs, custom, .. } = gathered;
    let Opened { tools, classes, filtered_out, probe_calls, probe_answered, .. } = opened.unwrap_or_default();
    let mut valid_calls = answered_valid_calls(&fs_obs, &net_obs);
    let writes = &git_obs.writes;
    let write_controls = writes.init.iter().chain(&writes.stage).chain(&writes.refs);
    valid_calls
        .extend(write_controls.filter(|r| matches!(r.control.answer, Answer::Success { .. })).map(|r| r.tool.clone()));
    valid_calls.extend(probe_answered);
    valid_calls.extend(
        backend_obs.scope.iter().chain(&backend_obs.statements).filter(|r| r.control_held()).map(|r| r.tool.clone()),
    );
    let mut observations = Observations {
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
        backend: targets.stub.is_some().then_some(backend_obs),
        not_run: BTreeMap::new(),
    };
    observations.not_run = not_run(&gate, &observations, !custom.is_empty(), caps.is_some());
    if observations.observed(Pack::Effects) && config.runs_pack(Pack::Effects) {
        gaps.push("writes outside the observed sandbox directories are not seen by the effects pack".to_string());
    }
    Ok(Collected {
        observations,
        tools,
        classes,
        filtered_out,
        probe_calls,
        valid_calls,
        custom,
        gaps,
        leftovers: std::mem::take(&mut runner.leftovers),
        server_log: std::mem::take(&mut runner.log),
        unasked: std::mem::take(&mut runner.unasked),
    })
}

/// Why each requested pack observed nothing its judges read, said once, here: the
/// gate's refusal; for a pack of the main session that never opened, that; else what
/// the pack found when it looked.
fn not_run(gate: &Gate, obs: &Observations, custom_ran: bool, opened: bool) -> BTreeMap<Pack, String> {
    let in_main_session = |pack: Pack| MAIN_SESSION.iter().any(|c| c.packs().contains(&pack));
    let mut out = BTreeMap::new();
    for &pack in &gate.requested {
        let observed = if pack == Pack::Custom { custom_ran } else { obs.observed(pack) };
        if observed {
            continue;
        }
        let why = match gate.refused.get(&pack) {
            Some(refusal) => refusal.to_string(),
            None if !opened && in_main_session(pack) => "the server could not be reached".to_string(),
            None => found_nothing(pack, obs),
        };
        out.insert(pack, why);
    }
    out
}

/// What the targets of this run let the packs do, with the tools once they are classified.
pub fn situation<'a>(config: &'a Config, targets: &'a Targets, classes: Option<&'a [Classification]>) -> Situation<'a> {
    Situation {
        config,
        classes,
        database: targets.database.as_ref().map(|d| d.as_ref().map(|_| ()).map_err(String::as_str)),
        listener: targets.listener.is_some(),
    }
}

/// The tools of the valid calls in a pack's observations that were answered without error.
fn answered_valid_calls(fs: &FsObservations, net: &NetObservations) -> Vec<String> {
    let mut out: Vec<String> = fs
        .benign
        .iter()
        .filter(|b| matches!(b.call.answer, Answer::Success { .. }))
        .map(|b| b.call.tool.clone())
        .collect();
    out.extend(net.controls.iter().filter(|c| c.leaked).map(|c| c.tool.clone()));
    out
}
