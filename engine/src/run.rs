//! A run: `Targets::start` → `packs::collect` → `judge::all` → `assemble`.
//!
//! Everything below is bounded: every wait has a deadline, every stream a size limit,
//! and the server's process group is stopped whatever happens (also when the run
//! future is dropped, as on Ctrl-C).

use crate::assemble::{RunFacts, assemble};
use crate::config::{Config, secrets};
use crate::judge::db::SEED_VERSION;
use crate::record::{Announced, DbRecord, Record, SandboxRecord, redacted};
use crate::targets::{Targets, Wanted, db, sandbox};
use serde_json::Value;
use std::time::Instant;

pub use crate::children::{become_subreaper, take_cleanup_notes};
pub use crate::targets::RunError;

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
    /// `--no-package-caches`: the servers start with no npm, uv or pip cache.
    pub no_package_caches: bool,
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput {
    pub record: Record,
    /// Where the sandbox was left, with `--keep-sandbox`.
    pub kept_sandbox: Option<std::path::PathBuf>,
}

/// The server's arguments as reports show them: credentials hidden.
fn shown_args(args: &[String]) -> Vec<String> {
    (0..args.len()).map(|i| secrets::hidden(&args[i], &secrets::in_arg(args, i))).collect()
}

/// The server's URL as reports show it: no userinfo, secret query values hidden.
pub fn shown_url(url: &str) -> String {
    let url = crate::text::without_userinfo(url);
    secrets::hidden(&url, &secrets::in_urls(&url))
}

/// Runs every requested pack this build carries against the configured server.
pub async fn run(config: &Config, options: &RunOptions) -> Result<RunOutput, RunError> {
    let started = Instant::now();
    let started_at = now_rfc3339();
    let wanted = Wanted {
        db: &options.db,
        identity_a: options.identity_a.clone(),
        identity_b: options.identity_b.clone(),
        active: options.active,
        large_bytes: 4 * config.setting_u64("fs-large-read", "max_bytes") as usize,
        package_caches: !options.no_package_caches,
        strict_db: true,
    };
    let mut targets = Targets::start(config, wanted).await?;
    let collected = crate::packs::collect(config, &targets).await?;
    let mut redactions = targets.redactions();
    // A value read from sealmark's environment is shown as the reference it came from,
    // and a secret a client's config held (run --from) as redacted.
    for secret in config.secrets.iter().filter(|s| secrets::hidden_everywhere(s)) {
        redactions.push((secret.clone(), "<redacted>".to_string()));
    }
    for (_, name) in config.env_references() {
        if let Ok(value) = std::env::var(&name)
            && value.len() >= secrets::HIDDEN_EVERYWHERE_FROM
        {
            redactions.push((value, format!("${{{name}}}")));
        }
    }
    // The judges read what the record will hold, so a replay of it judges the same.
    let observations = redacted(collected.observations, &redactions);
    let findings = crate::judge::all(&observations);
    let announced = observations.core.handshake.result().map(|r| Announced {
        name: r.pointer("/serverInfo/name").and_then(Value::as_str).unwrap_or_default().to_string(),
        version: r.pointer("/serverInfo/version").and_then(Value::as_str).unwrap_or_default().to_string(),
        protocol_version: r.get("protocolVersion").and_then(Value::as_str).unwrap_or_default().to_string(),
    });
    let (custom, custom_probes) = crate::judge::custom::findings(&collected.custom);
    let db = match &targets.database {
        None => DbRecord { used: false, summary: "not used".to_string(), ..DbRecord::default() },
        Some(Err(why)) => DbRecord { used: false, summary: format!("not available: {why}"), ..DbRecord::default() },
        Some(Ok(d)) => DbRecord {
            used: true,
            summary: d.summary.clone(),
            seed: Some(SEED_VERSION.to_string()),
            sql_tools: observations.db.tools.clone(),
        },
    };
    let (_, inherited) = targets.sandbox.environment(&config.server.env);
    let kept_at = if options.keep_sandbox { targets.sandbox.keep() } else { None };
    let kept = kept_at.is_some();
    let cleaned_up = if kept { false } else { targets.sandbox.clean_up() };
    let server = &config.server;
    let facts = RunFacts {
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        transport: if server.url.is_none() { "stdio" } else { "http" }.to_string(),
        command_display: server.command.as_ref().map(|c| shell_words(c, &shown_args(&server.args))).unwrap_or_default(),
        url: server.url.as_deref().map(shown_url),
        env_display: sandbox::env_display(&server.env, &server.headers, server.command.is_some()),
        tools: collected.tools,
        classification: collected.classes,
        filtered_out: collected.filtered_out,
        announced,
        sandbox: SandboxRecord {
            dir: "{sandbox_dir}".to_string(),
            env_mode: "scrubbed".to_string(),
            listener_port: targets.listener.as_ref().map(|l| l.port),
            cleaned_up,
            leftover_processes: collected.leftovers,
            active: options.active,
            enabled: true,
            kept,
            inherited,
        },
        server_log: collected.server_log,
        gaps: collected.gaps,
        valid_calls: collected.valid_calls,
        db,
        not_run: observations.not_run.clone(),
        upstream: targets.stub.as_ref().map(|s| crate::record::UpstreamRecord { url: s.url(), requests: s.count() }),
        probe_calls: collected.probe_calls,
        custom,
        custom_probes,
        unasked: collected.unasked,
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
        assert_eq!(shell_words("node", &["a b".into(), "{sandbox}".into()]), "node 'a b' {sandbox}");
        assert_eq!(now_rfc3339().len(), 24);
    }
}
