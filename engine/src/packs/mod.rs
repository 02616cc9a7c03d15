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

use crate::applies::{Situation, applies, collects};
use crate::classify::{Classification, classify_declared};
use crate::config::{Config, ConfigError, Problem, ToolsFilter};
use crate::judge::core::{CoreObservations, HandshakeObs};
use crate::judge::credential::Caller;
use crate::judge::custom::{Probe, ProbeObs};
use crate::judge::fs::FsObservations;
use crate::judge::net::NetObservations;
use crate::judge::{Answer, OBSERVATIONS_VERSION, Observations, Settings};
use crate::model::Pack;
use crate::record::{ProbeCall, ServerLog, Unasked};
use crate::registry::CHECKS;
use crate::session::runner::Runner;
use crate::targets::{RunError, Targets};
use crate::tools::ToolInfo;

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
    /// Why the db pack did not run, when it did not.
    pub db_reason: Option<String>,
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

/// Starts the server, runs every collector whose pack applies, and stops it.
pub async fn collect(config: &Config, targets: &Targets) -> Result<Collected, RunError> {
    let mut runner = Runner::new(config, targets, targets.db_placeholders(crate::targets::db::SESSION_ROLE));
    let mut obs = CoreObservations { canaries: targets.sandbox.canary_list(), ..Default::default() };
    crate::session::progress::stage("handshake");
    let mut live = runner.launch().await?;
    let (handshake, caps) = live.session.handshake().await;
    obs.handshake = handshake;
    let mut tools = Vec::new();
    let mut classes = Vec::new();
    // The tools as the packs aim them (with what was learned of their parameters).
    let mut aimed = Vec::new();
    let mut filtered_out = Vec::new();
    let mut fs_obs = FsObservations::default();
    let mut net_obs = NetObservations::default();
    let mut git_obs = crate::judge::git::GitObservations::default();
    let mut sqlite_obs = crate::judge::sqlite::SqliteObservations::default();
    let mut backend_obs = crate::judge::backend::BackendObservations::default();
    let mut probe_calls = Vec::new();
    let mut probe_answered = Vec::new();
    let mut custom = Vec::new();
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
        // Everything the tool list refutes in the config, reported at once.
        let problems = tool_problems(&runner, &tools, &obs.tools.tools);
        if !problems.is_empty() {
            return Err(refused(config, problems));
        }
        runner.begin_pack(&mut live, "robust-input").await;
        core::robust(&mut runner, &mut live, &tools, &mut obs).await;
        runner.begin_pack(&mut live, "probes").await;
        (probe_calls, probe_answered) = probes::valid_calls(&mut runner, &mut live).await;
        classes = tools.iter().map(|t| classify_declared(t, &config.classify)).collect();
        // The packs aim the tools with what was learned; the record lists them as listed.
        aimed = tools.clone();
        runner.begin_pack(&mut live, "classification").await;
        learn::params(&mut runner, &mut live, &mut aimed, &mut classes).await;
        let tools = &aimed;
        let listener = targets.listener.as_ref();
        let known = situation(config, targets, Some(&classes));
        let runs = |pack| collects(pack, &known);
        if runs(Pack::Fs) || runs(Pack::Effects) {
            runner.begin_pack(&mut live, "fs and effects").await;
            fs_obs = fs::collect(&mut runner, &mut live, tools, &classes).await;
        }
        if runs(Pack::Sqlite)
            && let Some(path) = &targets.sqlite
        {
            runner.begin_pack(&mut live, "sqlite").await;
            sqlite_obs = sqlite::collect(&mut runner, &mut live, tools, &classes, path).await;
        }
        let net = applies(Pack::Net, &situation(config, targets, None));
        match (config.runs_pack(Pack::Net), net, listener) {
            (true, Ok(_), Some(l)) => {
                runner.begin_pack(&mut live, "net").await;
                net_obs = net::collect(&mut runner, &mut live, tools, &classes, l).await;
                // A fetch may go on after its answer (a body still streaming, a client's
                // retry), into the benign calls the git and effects packs time: those
                // start on a fresh server, with nothing of the net pack's still running.
                if l.hits() > 0 && runs(Pack::Effects) && live.gone.is_none() && !runner.relaunch(&mut live).await {
                    runner.gaps.push("net: the server could not be restarted after the net pack".to_string());
                }
            }
            (true, Err(why), _) => runner.gaps.push(format!("net: {why}")),
            _ => {}
        }
        if config.runs_pack(Pack::Git) {
            match (applies(Pack::Git, &known), &targets.repos) {
                (Ok(_), Some(repos)) => {
                    runner.begin_pack(&mut live, "git").await;
                    let benign;
                    (git_obs, benign) = git::collect(&mut runner, &mut live, tools, &classes, repos).await;
                    fs_obs.benign.extend(benign);
                }
                // Git tools the pack could not be aimed at are a gap; no git tool is not.
                (Err(why), _) if classes.iter().any(|c| c.class == "git") => runner.gaps.push(why),
                _ => {}
            }
        }
        if runs(Pack::Effects) {
            runner.begin_pack(&mut live, "effects").await;
            let done: Vec<String> = fs_obs.benign.iter().map(|b| b.call.tool.clone()).collect();
            let (calls, noise) = effects::collect(&mut runner, &mut live, tools, &classes, &done).await;
            fs_obs.benign.extend(calls);
            for path in noise {
                if !fs_obs.noise.contains(&path) {
                    fs_obs.noise.push(path);
                }
            }
            fs_obs.listener |= listener.is_some();
        }
        if let Some(stub) = &targets.stub
            && [Pack::Scope, Pack::SqlGuard, Pack::Upstream].into_iter().any(|p| config.runs_pack(p))
        {
            runner.begin_pack(&mut live, "backend").await;
            backend_obs = backend::collect(&mut runner, &mut live, tools, &classes, stub).await?;
        }
        if runs(Pack::Custom) {
            runner.begin_pack(&mut live, "custom").await;
            custom = probes::custom_checks(&mut runner, &mut live).await;
        }
    } else if let HandshakeObs::NoAnswer { .. } = obs.handshake
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
            let started = config.server.command.as_ref().map(|_| targets.sandbox.run_id.as_str());
            let headers = runner.headers_as(Caller::A);
            crate::session::progress::stage("http");
            Some(http::collect(&runner.server_value(url), headers, &configured, runner.timeout, started).await)
        }
        _ => None,
    };
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
    let mut db_reason = applies(Pack::Db, &situation(config, targets, None)).err();
    let mut db_obs = crate::judge::db::DbObservations::default();
    if config.runs_pack(Pack::Db)
        && let Some(d) = targets.ready_database()
    {
        db_obs = db::collect(&mut runner, &d.seed, &aimed, &classes).await?;
        db_reason = db_obs.tools.is_empty().then(|| match db_obs.explainers.first() {
            Some(e) => format!("no SQL tool runs queries ({} only explains them)", e.tool),
            None => "no sql tool found".to_string(),
        });
    }
    runner.end_pack();
    obs.echo = std::mem::take(&mut runner.echo);
    obs.answered_calls = runner.answered;

    let mut gaps = std::mem::take(&mut runner.gaps);
    gaps.extend(config.keys_outside_sandbox());
    if !crate::children::PROCESS_TABLE {
        gaps.push(crate::children::NO_PROCESS_TABLE.to_string());
    }
    let fs_ran = !fs_obs.readers.is_empty() || !fs_obs.writers.is_empty() || !fs_obs.benign.is_empty();
    if fs_ran && config.runs_pack(Pack::Effects) {
        gaps.push("writes outside the observed sandbox directories are not seen by the effects pack".to_string());
    }
    let mut valid_calls = answered_valid_calls(&fs_obs, &net_obs);
    let writes = &git_obs.writes;
    let write_controls = writes.init.iter().chain(&writes.stage).chain(&writes.refs);
    valid_calls
        .extend(write_controls.filter(|r| matches!(r.control.answer, Answer::Success { .. })).map(|r| r.tool.clone()));
    valid_calls.extend(probe_answered);
    valid_calls.extend(
        backend_obs.scope.iter().chain(&backend_obs.statements).filter(|r| r.control_held()).map(|r| r.tool.clone()),
    );
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
        backend: targets.stub.is_some().then_some(backend_obs),
    };
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
        db_reason,
    })
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
