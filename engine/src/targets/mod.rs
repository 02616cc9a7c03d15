//! What the harness owns and the server is aimed at: the sandbox tree with its canary
//! secrets, the loopback listener, the upstream stub, the harness's git repositories,
//! the seeded SQLite file, the seeded Postgres and the two callers' tokens. One
//! `Targets` value holds them for a run and is the placeholder table: what `{sandbox}`,
//! `{listener}`, `{repo}`… stand for, and what reports show instead of each value.

pub mod db;
pub mod listener;
pub mod postgres;
pub mod repos;
pub mod sandbox;
pub mod seed;
pub mod sqlite;
pub mod stub;

use crate::config::Config;
use db::{Database, DbOptions};
use listener::Listener;
use repos::GitRepos;
use sandbox::{Sandbox, random_hex};
use std::path::PathBuf;
use stub::Stub;

/// A problem with sealmark's own input or machine, not with the server (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Setup(String),
}

/// Every target of one run. Dropping it stops the listener, the stub and the
/// database and removes the sandbox.
pub struct Targets {
    pub sandbox: Sandbox,
    /// `{listener}`; `None` when loopback could not be bound (the net pack then has no target).
    pub listener: Option<Listener>,
    /// `{upstream}`, when `upstream.kind` asks for one.
    pub stub: Option<Stub>,
    /// `{repo}` and the canary repositories, when the server's config names `{repo}`.
    pub repos: Option<GitRepos>,
    /// `{sqlite}`, when the server's config names it.
    pub sqlite: Option<PathBuf>,
    /// The seeded Postgres, when the server's config holds a database placeholder, or
    /// why it is not available.
    pub database: Option<Result<Database, String>>,
    /// The two callers `{bearer}` stands for.
    pub callers: Callers,
    /// `--active`: probes that make the server run the harness's programs may run.
    pub active: bool,
}

/// What `Targets::start` needs beyond the config (command-line only).
pub struct Wanted<'o> {
    pub db: &'o DbOptions,
    pub identity_a: Option<String>,
    pub identity_b: Option<String>,
    pub active: bool,
    /// The size of the sandbox's large file.
    pub large_bytes: usize,
    /// Whether servers get the package caches (`--no-package-caches` says no).
    pub package_caches: bool,
    /// Whether a `--pg` database that cannot be used stops the start (a run), or is only
    /// reported (`doctor`, which says why the db pack would not run).
    pub strict_db: bool,
}

impl Targets {
    /// Starts what the config asks for: always the sandbox and the listener; the stub
    /// with `upstream.kind`; the repositories, the SQLite file and the database when a
    /// placeholder of theirs appears in the server's config.
    pub async fn start(config: &Config, wanted: Wanted<'_>) -> Result<Targets, RunError> {
        let mut sandbox = Sandbox::create(wanted.large_bytes)
            .map_err(|e| RunError::Setup(format!("cannot create the sandbox directory: {e}")))?;
        sandbox.package_caches = wanted.package_caches;
        let listener = Listener::start().await.ok();
        let stub = match config.upstream.kind.as_deref() {
            Some("http") => Some(
                Stub::start(config.upstream.clone())
                    .await
                    .map_err(|e| RunError::Setup(format!("cannot start the upstream stub: {e}")))?,
            ),
            _ => None,
        };
        let repos = match config.server_mentions("{repo}") {
            true => Some(repos::create(&sandbox).map_err(|e| RunError::Setup(format!("cannot create {{repo}}: {e}")))?),
            false => None,
        };
        let sqlite = match config.server_mentions("{sqlite}") {
            true => {
                Some(sqlite::seed(&sandbox).map_err(|e| RunError::Setup(format!("cannot seed the SQLite file: {e}")))?)
            }
            false => None,
        };
        let database = match db::config_uses_db(config) {
            true => Some(db::prepare(wanted.db).await),
            false => None,
        };
        // A database the user named and sealmark cannot use is a usage error, not a gap.
        if wanted.strict_db
            && wanted.db.pg.is_some()
            && let Some(Err(why)) = &database
        {
            return Err(RunError::Setup(why.clone()));
        }
        Ok(Targets {
            sandbox,
            listener,
            stub,
            repos,
            sqlite,
            database,
            callers: Callers::new(wanted.identity_a, wanted.identity_b),
            active: wanted.active,
        })
    }

    /// The seeded database, when it is ready.
    pub fn ready_database(&self) -> Option<&Database> {
        self.database.as_ref().and_then(|d| d.as_ref().ok())
    }

    /// The database placeholders for a server started as `role` (empty without a database).
    pub fn db_placeholders(&self, role: &str) -> Vec<(String, String)> {
        match self.ready_database() {
            Some(d) => d.seed.placeholders(role),
            None => db::empty_placeholders(),
        }
    }

    /// Expands every placeholder but the database's (those depend on the role a server
    /// is started as) in one string.
    pub fn expand(&self, s: &str) -> String {
        let mut s = self.sandbox.expand(s);
        let table = [
            ("{upstream}", self.stub.as_ref().map(Stub::url)),
            ("{sqlite}", self.sqlite.as_ref().map(|p| p.to_string_lossy().into_owned())),
            ("{repo}", self.repos.as_ref().map(|g| g.repo.to_string_lossy().into_owned())),
            ("{listener}", self.listener.as_ref().map(Listener::url)),
        ];
        for (placeholder, value) in table {
            if let Some(value) = value {
                s = s.replace(placeholder, &value);
            }
        }
        s
    }

    /// What reports show instead of this run's paths, ports, tokens and passwords,
    /// longest first.
    pub fn redactions(&self) -> Vec<(String, String)> {
        let mut reps = self.sandbox.redactions();
        if let Some(g) = &self.repos {
            for (path, shown) in
                [(&g.repo, "{repo}"), (&g.sibling, "{repo}-sibling"), (&g.canary_repo, "{canary_repo}")]
            {
                reps.extend(sandbox::path_redactions(path, shown));
            }
            for (token, shown) in
                [(&g.canary, "<git-canary>"), (&g.control, "<repo-control>"), (&g.hidden, "<hidden-commit>")]
            {
                reps.push((token.clone(), shown.to_string()));
            }
        }
        if let Some(stub) = &self.stub {
            reps.push((format!("127.0.0.1:{}", stub.port), "127.0.0.1:{upstream_port}".to_string()));
        }
        if let Some(l) = &self.listener {
            // Every spelling of the listener's address carries its port.
            reps.push((format!(":{}", l.port), ":{listener_port}".to_string()));
        }
        reps.extend(self.callers.redactions());
        if let Some(d) = self.ready_database() {
            for r in &d.seed.roles {
                reps.push((r.password.clone(), "<password>".to_string()));
            }
            reps.push((format!(":{}/", d.seed.port), ":{db_port}/".to_string()));
        }
        reps.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        reps
    }
}

/// A run's two callers.
#[derive(Debug, Clone)]
pub struct Callers {
    pub a: String,
    pub b: String,
    /// The tokens came from identities.a / identities.b, not minted.
    pub identities: bool,
}

impl Callers {
    /// Two fresh tokens, or the identities given.
    pub fn new(identity_a: Option<String>, identity_b: Option<String>) -> Callers {
        let identities = identity_a.is_some() || identity_b.is_some();
        Callers {
            a: identity_a.unwrap_or_else(|| format!("sm_a_{}", random_hex(16))),
            b: identity_b.unwrap_or_else(|| format!("sm_b_{}", random_hex(16))),
            identities,
        }
    }

    /// What reports show instead of the tokens.
    pub fn redactions(&self) -> Vec<(String, String)> {
        vec![(self.a.clone(), "{bearer:a}".to_string()), (self.b.clone(), "{bearer:b}".to_string())]
    }
}
