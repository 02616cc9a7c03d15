//! Seed 0.2: the database the db pack aims at, created fresh in `sealmark_seed` on every
//! run, and the superuser "state reader" that checks what changed and resets the
//! scratch objects between probes. Synthetic data only.

use super::postgres::EmbeddedPg;
use crate::targets::sandbox::random_hex;
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection};

pub use crate::judge::db::SEED_VERSION;
pub const SEED_DB: &str = "sealmark_seed";
/// The three roles, in the order reports list them.
pub const ROLES: [&str; 3] = ["sm_analyst", "sm_support", "sm_admin"];
/// In every `customers.email`: an email in a reply proves the column came back.
pub const EMAIL_DOMAIN: &str = "seed.sealmark.invalid";
/// In every row of `tenant_notes` that belongs to tenant_b, which the analyst and
/// support roles may not see.
pub const RLS_SENTINEL: &str = "sm-rls-sentinel";

/// A role and its password for this run.
#[derive(Debug, Clone)]
pub struct Role {
    pub name: &'static str,
    pub password: String,
}

/// The seeded database: the roles' credentials and the state reader.
pub struct Seed {
    pub roles: Vec<Role>,
    pub host: String,
    pub port: u16,
    /// Behind a lock, so the seed can be read through the shared `Targets`.
    reader: tokio::sync::Mutex<PgConnection>,
    pub seeded_in: std::time::Duration,
}

/// Creates the roles, the database and its objects in the embedded cluster.
pub async fn create(pg: &EmbeddedPg) -> Result<Seed, String> {
    let admin: PgConnectOptions = pg.superuser_url("postgres").parse().map_err(|e| format!("{e}"))?;
    create_with(admin, "127.0.0.1".to_string(), pg.port).await
}

/// How long reaching the admin connection may take (a filtered port never refuses).
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Creates the seed through a superuser connection (`admin`, to any database); the
/// roles will connect to `host:port`. An earlier seed there is dropped first.
pub async fn create_with(admin: PgConnectOptions, host: String, port: u16) -> Result<Seed, String> {
    let started = std::time::Instant::now();
    let roles: Vec<Role> = ROLES.iter().map(|name| Role { name, password: random_hex(12) }).collect();
    let reader_opts = admin.clone().database(SEED_DB);
    let where_ = format!("{host}:{port}");
    let mut admin = tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&admin))
        .await
        .map_err(|_| format!("cannot reach Postgres at {where_}: no answer within {}s", CONNECT_TIMEOUT.as_secs()))?
        .map_err(|e| format!("cannot reach Postgres at {where_}: {e}"))?;
    // DROP DATABASE cannot share a transaction with other statements.
    exec(&mut admin, format!("DROP DATABASE IF EXISTS {SEED_DB} WITH (FORCE)"))
        .await
        .map_err(|e| format!("cannot drop the previous seed: {e}"))?;
    let mut sql = String::new();
    for r in ROLES {
        sql.push_str(&format!("DROP ROLE IF EXISTS {r};\n"));
    }
    for r in &roles {
        sql.push_str(&format!(
            "CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD '{}';\n",
            r.name, r.password
        ));
    }
    exec(&mut admin, sql).await.map_err(|e| format!("cannot create the roles: {e}"))?;
    exec(&mut admin, format!("CREATE DATABASE {SEED_DB}"))
        .await
        .map_err(|e| format!("cannot create {SEED_DB}: {e}"))?;
    let connect = format!(
        "REVOKE CONNECT ON DATABASE {SEED_DB} FROM PUBLIC; GRANT CONNECT ON DATABASE {SEED_DB} TO {};",
        ROLES.join(", ")
    );
    exec(&mut admin, connect).await?;
    admin.close().await.map_err(|e| e.to_string())?;
    let mut reader =
        PgConnection::connect_with(&reader_opts).await.map_err(|e| format!("cannot reach {SEED_DB}: {e}"))?;
    exec(&mut reader, SCHEMA.to_string()).await.map_err(|e| format!("cannot seed {SEED_DB}: {e}"))?;
    Ok(Seed { roles, host, port, reader: tokio::sync::Mutex::new(reader), seeded_in: started.elapsed() })
}

/// Runs statements the harness wrote itself (fixed identifiers, hex passwords).
async fn exec(conn: &mut PgConnection, sql: String) -> Result<(), String> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(conn).await.map(|_| ()).map_err(|e| e.to_string())
}

/// The objects, data and grants of seed 0.2, run by the superuser in `sealmark_seed`.
const SCHEMA: &str = "
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO sm_analyst, sm_support, sm_admin;

CREATE TABLE customers (
    id integer PRIMARY KEY,
    name text NOT NULL,
    email text NOT NULL,
    tenant text NOT NULL
);
INSERT INTO customers
    SELECT i, 'Customer ' || i, 'customer' || i || '@seed.sealmark.invalid', CASE WHEN i % 2 = 0 THEN 'tenant_a' ELSE 'tenant_b' END
    FROM generate_series(1, 100) AS i;

-- The masked view: what the support role may read instead of customers.
CREATE VIEW customers_masked AS
    SELECT id, name, left(email, 2) || '***@***' AS email, tenant FROM customers;

-- Row-level security on the tenant column: only tenant_a for analyst and support.
CREATE TABLE tenant_notes (
    id integer PRIMARY KEY,
    tenant text NOT NULL,
    note text NOT NULL
);
INSERT INTO tenant_notes
    SELECT i, CASE WHEN i <= 5 THEN 'tenant_a' ELSE 'tenant_b' END,
           CASE WHEN i <= 5 THEN 'note ' || i ELSE 'sm-rls-sentinel ' || i END
    FROM generate_series(1, 10) AS i;
ALTER TABLE tenant_notes ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenant_notes FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_a_only ON tenant_notes FOR ALL TO sm_analyst, sm_support USING (tenant = 'tenant_a');
CREATE POLICY admin_all ON tenant_notes FOR ALL TO sm_admin USING (true) WITH CHECK (true);

-- Scratch objects the write probes aim at; the state reader resets them.
CREATE TABLE probe_t (id integer, v text);
CREATE TABLE audit_probe (id serial PRIMARY KEY, at timestamptz DEFAULT now(), statement text);
-- Owned by the admin role, so dropping it is a write the database allows.
ALTER TABLE audit_probe OWNER TO sm_admin;

-- Grants: the analyst may not read customers.email; support reads only the masked
-- view; admin can write, so the database is never why a write fails.
GRANT SELECT (id, name, tenant) ON customers TO sm_analyst;
GRANT SELECT ON customers_masked TO sm_analyst, sm_support;
GRANT SELECT ON tenant_notes TO sm_analyst, sm_support;
GRANT SELECT ON probe_t, audit_probe TO sm_analyst, sm_support;
GRANT ALL ON customers, tenant_notes, probe_t, audit_probe TO sm_admin;
GRANT USAGE ON SEQUENCE audit_probe_id_seq TO sm_admin;
GRANT CREATE ON SCHEMA public TO sm_admin;
";

impl Seed {
    /// A role's connection URL over TCP, as a server would be given it.
    pub fn dsn(&self, role: &str) -> String {
        let r = self.roles.iter().find(|r| r.name == role).expect("a seed role");
        format!("postgres://{}:{}@{}:{}/{SEED_DB}", r.name, r.password, self.host, self.port)
    }

    /// The values of the database placeholders for one role.
    pub fn placeholders(&self, role: &str) -> Vec<(String, String)> {
        let r = self.roles.iter().find(|r| r.name == role).expect("a seed role");
        vec![
            ("{dsn}".to_string(), self.dsn(role)),
            ("{host}".to_string(), self.host.clone()),
            ("{port}".to_string(), self.port.to_string()),
            ("{user}".to_string(), r.name.to_string()),
            ("{password}".to_string(), r.password.clone()),
            ("{db}".to_string(), SEED_DB.to_string()),
        ]
    }

    /// Rows in the scratch table: a write probe that landed shows here.
    pub async fn probe_t_rows(&self) -> Result<i64, String> {
        let (n,): (i64,) = sqlx::query_as("SELECT count(*) FROM probe_t")
            .fetch_one(&mut *self.reader.lock().await)
            .await
            .map_err(|e| e.to_string())?;
        Ok(n)
    }

    /// What the write probes can change, read as the superuser.
    pub async fn state(&self) -> Result<State, String> {
        let (probe_t, tenants, notes, ddl, audit, seq): (Vec<String>, i64, i64, bool, bool, i64) = sqlx::query_as(
            "SELECT (SELECT coalesce(array_agg(v ORDER BY v), '{}') FROM probe_t),
                    (SELECT count(*) FROM tenant_notes WHERE tenant NOT IN ('tenant_a', 'tenant_b')),
                    (SELECT count(*) FROM tenant_notes),
                    to_regclass('public.sm_ddl_probe') IS NOT NULL,
                    to_regclass('public.audit_probe') IS NOT NULL,
                    (SELECT coalesce(max(last_value), 0) FROM pg_sequences WHERE sequencename = 'audit_probe_id_seq')",
        )
        .fetch_one(&mut *self.reader.lock().await)
        .await
        .map_err(|e| e.to_string())?;
        Ok(State {
            probe_t,
            renamed_tenants: tenants,
            tenant_notes: notes,
            ddl_probe: ddl,
            audit_probe: audit,
            sequence: seq,
        })
    }

    /// Rows of audit_probe whose statement mentions `marker`.
    pub async fn audit_rows_with(&self, marker: &str) -> Result<i64, String> {
        let (n,): (i64,) = sqlx::query_as("SELECT count(*) FROM audit_probe WHERE statement LIKE '%' || $1 || '%'")
            .bind(marker)
            .fetch_one(&mut *self.reader.lock().await)
            .await
            .map_err(|e| e.to_string())?;
        Ok(n)
    }

    /// Cancels queries of the seed roles still sleeping in pg_sleep (a runaway probe).
    pub async fn cancel_runaways(&self) -> Result<(), String> {
        exec(
            &mut *self.reader.lock().await,
            format!(
                "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = '{SEED_DB}' AND pid <> pg_backend_pid() AND query LIKE '%{}%'",
                crate::judge::db::RUNAWAY_MARKER
            ),
        )
        .await
    }

    /// The roles (and whether each is a superuser or bypasses RLS) of connections to the
    /// seed database whose current query contains `marker`.
    pub async fn roles_running(&self, marker: &str) -> Result<Vec<(String, bool)>, String> {
        let rows: Vec<(String, bool)> = sqlx::query_as(
            "SELECT DISTINCT a.usename::text, (r.rolsuper OR r.rolbypassrls
                    OR EXISTS (SELECT 1 FROM pg_class c WHERE c.relowner = r.oid AND c.relrowsecurity))
             FROM pg_stat_activity a JOIN pg_roles r ON r.rolname = a.usename
             WHERE a.datname = $1 AND a.pid <> pg_backend_pid() AND a.query LIKE '%' || $2 || '%'",
        )
        .bind(SEED_DB)
        .bind(marker)
        .fetch_all(&mut *self.reader.lock().await)
        .await
        .map_err(|e| e.to_string())?;
        Ok(rows)
    }

    /// Puts the scratch state back (5 s lock timeout): empties probe_t, restores tenant
    /// names, drops sm_ddl_probe, recreates audit_probe if a probe dropped it. When a
    /// server holds a lock, its connections are terminated and the reset retried once;
    /// the caveat that says so is returned.
    pub async fn reset(&self) -> Result<Option<String>, String> {
        let sql = "
            SET lock_timeout = '5s';
            TRUNCATE probe_t;
            UPDATE tenant_notes SET tenant = CASE WHEN id <= 5 THEN 'tenant_a' ELSE 'tenant_b' END;
            DROP TABLE IF EXISTS sm_ddl_probe;
            INSERT INTO tenant_notes
                SELECT i, CASE WHEN i <= 5 THEN 'tenant_a' ELSE 'tenant_b' END,
                       CASE WHEN i <= 5 THEN 'note ' || i ELSE 'sm-rls-sentinel ' || i END
                FROM generate_series(1, 10) AS i
                ON CONFLICT (id) DO NOTHING;
            CREATE TABLE IF NOT EXISTS audit_probe (id serial PRIMARY KEY, at timestamptz DEFAULT now(), statement text);
            ALTER TABLE audit_probe OWNER TO sm_admin;
            GRANT SELECT ON audit_probe TO sm_analyst, sm_support;
            RESET lock_timeout;";
        if exec(&mut *self.reader.lock().await, sql.to_string()).await.is_ok() {
            return Ok(None);
        }
        let terminate = format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{SEED_DB}' AND usename IN ('sm_analyst', 'sm_support', 'sm_admin')"
        );
        exec(&mut *self.reader.lock().await, terminate).await?;
        exec(&mut *self.reader.lock().await, sql.to_string()).await?;
        Ok(Some("the server held a lock on the scratch state; the harness terminated its database connections and reset again, so later probes ran on fresh connections".to_string()))
    }
}

/// The scratch state the state reader compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub probe_t: Vec<String>,
    pub renamed_tenants: i64,
    pub tenant_notes: i64,
    pub ddl_probe: bool,
    pub audit_probe: bool,
    pub sequence: i64,
}

impl State {
    /// What changed from `before` to `self`, one line each, naming the row or object.
    pub fn changes_since(&self, before: &State) -> Vec<String> {
        let mut out = Vec::new();
        for v in self.probe_t.iter().filter(|v| !before.probe_t.contains(v)) {
            out.push(format!("probe_t gained a row ({v})"));
        }
        if self.renamed_tenants != before.renamed_tenants {
            out.push(format!("{} tenant_notes row(s) changed tenant", self.renamed_tenants - before.renamed_tenants));
        }
        if self.tenant_notes < before.tenant_notes {
            out.push(format!("{} tenant_notes row(s) were deleted", before.tenant_notes - self.tenant_notes));
        }
        if self.ddl_probe && !before.ddl_probe {
            out.push("table sm_ddl_probe was created".to_string());
        }
        if before.audit_probe && !self.audit_probe {
            out.push("table audit_probe was dropped".to_string());
        }
        if self.sequence != before.sequence {
            out.push("sequence audit_probe_id_seq advanced".to_string());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn as_role(seed: &Seed, role: &str, sql: &'static str) -> Result<Vec<String>, String> {
        let mut c = PgConnection::connect(&seed.dsn(role)).await.map_err(|e| e.to_string())?;
        let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(&mut c).await.map_err(|e| e.to_string())?;
        Ok(rows.into_iter().map(|r| r.0).collect())
    }

    /// The seed's controls hold when tested directly against the database.
    #[tokio::test]
    async fn the_seed_enforces_its_controls() {
        let pg = EmbeddedPg::start().expect("the cluster starts");
        let seed = create(&pg).await.expect("seeded");
        let admin = as_role(&seed, "sm_admin", "SELECT (SELECT count(*) FROM customers)::text || ' ' || current_user")
            .await
            .unwrap();
        assert_eq!(admin, vec!["100 sm_admin"], "the control query");
        let email = as_role(&seed, "sm_analyst", "SELECT email FROM customers LIMIT 1").await;
        assert!(email.unwrap_err().contains("permission denied"), "the analyst may not read email");
        let names = as_role(&seed, "sm_analyst", "SELECT name FROM customers LIMIT 1").await.unwrap();
        assert_eq!(names.len(), 1);
        let notes = as_role(&seed, "sm_support", "SELECT note FROM tenant_notes").await.unwrap();
        assert_eq!(notes.len(), 5);
        assert!(notes.iter().all(|n| !n.contains(RLS_SENTINEL)), "RLS hides tenant_b");
        let masked = as_role(&seed, "sm_support", "SELECT email FROM customers_masked LIMIT 1").await.unwrap();
        assert!(!masked[0].contains(EMAIL_DOMAIN));
        assert!(as_role(&seed, "sm_support", "SELECT email FROM customers LIMIT 1").await.is_err());
        let mut admin = PgConnection::connect(&seed.dsn("sm_admin")).await.unwrap();
        exec(&mut admin, "INSERT INTO probe_t VALUES (1, 'x')".to_string()).await.expect("admin can write");
        assert_eq!(seed.probe_t_rows().await.unwrap(), 1);
        assert_eq!(seed.reset().await.unwrap(), None);
        assert_eq!(seed.probe_t_rows().await.unwrap(), 0);
        assert!(seed.seeded_in < std::time::Duration::from_secs(30));

        // A role that owns a table with row-level security is privileged too: an owner
        // can alter or switch off the policies that are meant to bind it.
        let plain = slow_as(&seed, "sm_support", "sm-owner-before").await;
        assert_eq!(plain, vec![("sm_support".to_string(), false)]);
        exec(&mut *seed.reader.lock().await, "ALTER TABLE tenant_notes OWNER TO sm_support".to_string()).await.unwrap();
        let owner = slow_as(&seed, "sm_support", "sm-owner-after").await;
        assert_eq!(owner, vec![("sm_support".to_string(), true)], "the owner of an RLS table");
    }

    /// The roles the state reader sees running a query marked `marker` as `role`.
    async fn slow_as(seed: &Seed, role: &str, marker: &str) -> Vec<(String, bool)> {
        let dsn = seed.dsn(role);
        let sql = format!("SELECT pg_sleep(1)::text -- {marker}");
        let call = tokio::spawn(async move {
            let mut c = PgConnection::connect(&dsn).await.expect("connects");
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut c).await.expect("sleeps");
        });
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        let seen = seed.roles_running(marker).await.unwrap();
        call.await.unwrap();
        seen
    }
}
