//! The database the db pack aims at: an embedded cluster (or the user's, with --pg),
//! seeded fresh, and the placeholders that point a server instance at it as one role.

use super::postgres::EmbeddedPg;
use super::seed::{self, SEED_VERSION, Seed};
use crate::config::Config;

/// The placeholders a server config uses to receive a database connection.
pub const PLACEHOLDERS: [&str; 6] = ["{dsn}", "{host}", "{port}", "{user}", "{password}", "{db}"];

/// The role the core, fs, effects and net packs' session connects as.
pub const SESSION_ROLE: &str = "sm_analyst";

/// Whether the server's command, args, env, url or headers hold a database placeholder.
pub fn config_uses_db(config: &Config) -> bool {
    PLACEHOLDERS.iter().any(|p| config.server_mentions(p))
}

/// Where the database comes from.
#[derive(Debug, Clone, Default)]
pub struct DbOptions {
    /// `--pg DSN`: a superuser connection to a Postgres the user controls.
    pub pg: Option<String>,
    /// `--no-embedded`: start no cluster; placeholders expand to empty strings.
    pub no_embedded: bool,
}

/// A seeded database, with the cluster that holds it when it is the harness's own.
pub struct Database {
    pub seed: Seed,
    /// Dropped after the seed's connections: stops and removes the cluster.
    _cluster: Option<EmbeddedPg>,
    /// The `db:` line of the report.
    pub summary: String,
}

/// Starts (or reaches) the database and seeds it; the error says why the db pack
/// cannot run and how to fix it.
pub async fn prepare(options: &DbOptions) -> Result<Database, String> {
    let roles = seed::ROLES.join(", ");
    if let Some(dsn) = &options.pg {
        let opts: sqlx::postgres::PgConnectOptions =
            dsn.parse().map_err(|e| format!("--pg: not a Postgres URL ({e})"))?;
        // Servers reach the database over TCP; a socket path is not a host they can use.
        let host = match opts.get_host() {
            h if h.starts_with('/') => "127.0.0.1".to_string(),
            h => h.to_string(),
        };
        let port = opts.get_port();
        let seed = seed::create_with(opts, host, port).await.map_err(|e| format!("--pg: {e}"))?;
        return Ok(Database {
            seed,
            _cluster: None,
            summary: format!("Postgres from --pg · seed {SEED_VERSION} · roles {roles}"),
        });
    }
    if options.no_embedded {
        return Err("--no-embedded and no --pg: no database, so the placeholders expanded to empty strings".to_string());
    }
    let cluster = tokio::task::spawn_blocking(EmbeddedPg::start).await.map_err(|e| e.to_string())??;
    let seed = seed::create(&cluster).await?;
    let summary = format!("embedded Postgres · seed {SEED_VERSION} in {} · roles {roles}", seed::SEED_DB);
    Ok(Database { seed, _cluster: Some(cluster), summary })
}

/// Empty values for every placeholder, when there is no database.
pub fn empty_placeholders() -> Vec<(String, String)> {
    PLACEHOLDERS.iter().map(|p| (p.to_string(), String::new())).collect()
}
