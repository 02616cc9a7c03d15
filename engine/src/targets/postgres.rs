//! The embedded Postgres: a throwaway cluster started from the machine's own binaries
//! for one run, and removed afterwards whatever happens.
//!
//! initdb is slow (about 1.5 s), so its output is cached once per Postgres version as a
//! template and copied per run; starting the copy takes a fraction of a second. As
//! root, Postgres will not run, so the cluster runs as the `postgres` user.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The cluster's superuser: only the harness's state reader uses it, over the socket.
pub const SUPERUSER: &str = "sm_super";

pub struct EmbeddedPg {
    dir: tempfile::TempDir,
    data: PathBuf,
    bin: PathBuf,
    run_as: Option<String>,
    pub port: u16,
    pub socket_dir: PathBuf,
    /// How long copying the template and starting the server took.
    pub startup: Duration,
    stopped: bool,
}

/// The directory holding initdb, pg_ctl and postgres: next to `pg_ctl` on PATH, or the
/// newest Debian install under /usr/lib/postgresql.
pub fn find_binaries() -> Option<PathBuf> {
    let has_all = |d: &Path| ["initdb", "pg_ctl", "postgres"].iter().all(|b| d.join(b).is_file());
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let pg_ctl = dir.join("pg_ctl");
            if let Ok(real) = pg_ctl.canonicalize()
                && let Some(parent) = real.parent()
                && has_all(parent)
            {
                return Some(parent.to_path_buf());
            }
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| has_all(d))
        .collect();
    versions.sort_by_key(|d| {
        d.parent().and_then(|v| v.file_name()).and_then(|n| n.to_str()).and_then(|n| n.parse::<u32>().ok()).unwrap_or(0)
    });
    versions.pop()
}

impl EmbeddedPg {
    /// Starts a fresh cluster on a free loopback port, with its socket in its own directory.
    pub fn start() -> Result<EmbeddedPg, String> {
        let bin = find_binaries().ok_or("no Postgres binaries (initdb, pg_ctl, postgres) on PATH or under /usr/lib/postgresql; install postgresql or pass --pg DSN")?;
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let run_as = root.then(|| "postgres".to_string());
        let template = template(&bin, run_as.as_deref())?;
        let started = Instant::now();
        // Run as another user, the cluster must be reachable by it: under /tmp, not a
        // TMPDIR that may be private to this user.
        let parent = if run_as.is_some() { PathBuf::from("/tmp") } else { std::env::temp_dir() };
        let dir = tempfile::Builder::new()
            .prefix("sealmark-pg-")
            .tempdir_in(&parent)
            .map_err(|e| format!("cannot create the cluster directory: {e}"))?;
        set_mode(dir.path(), 0o755)?;
        let data = dir.path().join("data");
        let socket_dir = dir.path().join("sock");
        let copied = Command::new("cp").arg("-a").arg(&template).arg(&data).status().map_err(|e| e.to_string())?;
        if !copied.success() {
            return Err("cannot copy the Postgres template cluster".to_string());
        }
        std::fs::create_dir(&socket_dir).map_err(|e| e.to_string())?;
        if let Some(user) = &run_as {
            // The server writes its socket and log here.
            chown(dir.path(), user)?;
            chown(&socket_dir, user)?;
        }
        let mut pg = EmbeddedPg { dir, data, bin, run_as, port: 0, socket_dir, startup: Duration::ZERO, stopped: true };
        let mut last = String::new();
        for _ in 0..3 {
            pg.port = free_port()?;
            let opts = format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                pg.port,
                pg.socket_dir.display()
            );
            let log = pg.dir.path().join("server.log");
            let out = pg
                .command("pg_ctl")
                .arg("-D")
                .arg(&pg.data)
                .arg("-o")
                .arg(&opts)
                .arg("-l")
                .arg(&log)
                .args(["-w", "-t", "20", "start"])
                .output()
                .map_err(|e| e.to_string())?;
            if out.status.success() {
                pg.stopped = false;
                // pg_ctl has exited, so the postmaster is sealmark's child now (sealmark
                // reaps orphans): it is the harness's own, never a server's stray.
                if let Some(pid) = pg.postmaster() {
                    crate::children::own(pid);
                }
                pg.startup = started.elapsed();
                return Ok(pg);
            }
            last = std::fs::read_to_string(&log).unwrap_or_default();
        }
        Err(format!("the embedded Postgres did not start: {}", last.lines().last().unwrap_or("no log")))
    }

    fn command(&self, tool: &str) -> Command {
        match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(self.bin.join(tool));
                c
            }
            None => Command::new(self.bin.join(tool)),
        }
    }

    /// The superuser's connection URL, over the socket (trusted locally).
    pub fn superuser_url(&self, db: &str) -> String {
        format!("postgres://{SUPERUSER}@localhost:{}/{db}?host={}", self.port, self.socket_dir.display())
    }

    /// Stops the server at once and removes the cluster.
    pub fn stop(&mut self) {
        if !self.stopped {
            self.stopped = true;
            let postmaster = self.postmaster();
            let _ = self
                .command("pg_ctl")
                .arg("-D")
                .arg(&self.data)
                .args(["-m", "immediate", "-w", "-t", "10", "stop"])
                .output();
            // If pg_ctl could not stop it, kill the postmaster named in its pid file.
            if let Some(pid) = self.postmaster() {
                // SAFETY: kill(2) on the postmaster's pid; no memory is touched.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            if let Some(pid) = postmaster {
                // Our child once pg_ctl exited: its exit is collected, and it is ours no more.
                crate::children::reap(&[pid]);
                crate::children::disown(pid);
            }
            crate::children::cleanup_note("stopped the embedded Postgres and removed its data directory".to_string());
        }
    }

    /// The postmaster's pid, from its pid file while it runs.
    fn postmaster(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// Where the cluster lives (for tests that check it is removed).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for EmbeddedPg {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The cached initdb output for these binaries, created on first use.
fn template(bin: &Path, run_as: Option<&str>) -> Result<PathBuf, String> {
    let version = Command::new(bin.join("pg_ctl")).arg("--version").output().map_err(|e| e.to_string())?;
    let version = String::from_utf8_lossy(&version.stdout).split_whitespace().last().unwrap_or("unknown").to_string();
    // As root the cluster runs as another user, which must be able to reach the cache:
    // root's HOME is closed to it, so the cache lives in /var/tmp then.
    let cache = std::env::var_os("SEALMARK_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        match (run_as, std::env::var_os("HOME")) {
            (None, Some(home)) => PathBuf::from(home).join(".cache/sealmark"),
            _ => PathBuf::from("/var/tmp/sealmark-cache"),
        }
    });
    let template = cache.join(format!("pg-{version}-template"));
    if template.join("PG_VERSION").is_file() {
        return Ok(template);
    }
    std::fs::create_dir_all(&cache).map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let work = tempfile::Builder::new().prefix(".pg-template-").tempdir_in(&cache).map_err(|e| e.to_string())?;
    set_mode(work.path(), 0o755)?;
    if let Some(user) = run_as {
        set_mode(&cache, 0o755)?;
        chown(work.path(), user)?;
    }
    let data = work.path().join("data");
    let mut initdb = match run_as {
        Some(user) => {
            let mut c = Command::new("runuser");
            c.args(["-u", user, "--"]).arg(bin.join("initdb"));
            c
        }
        None => Command::new(bin.join("initdb")),
    };
    let out = initdb
        .arg("-D")
        .arg(&data)
        .args([
            "-U",
            SUPERUSER,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ])
        .output()
        .map_err(|e| format!("cannot run initdb: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or_default()
        ));
    }
    // Another run may have made the template meanwhile; either copy will do.
    if std::fs::rename(&data, &template).is_err() && !template.join("PG_VERSION").is_file() {
        return Err(format!("cannot store the template in {}", template.display()));
    }
    Ok(template)
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn chown(path: &Path, user: &str) -> Result<(), String> {
    let ok = Command::new("chown").arg(user).arg(path).status().map_err(|e| e.to_string())?.success();
    if ok { Ok(()) } else { Err(format!("cannot give {} to the {user} user", path.display())) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Connection;

    /// A real cluster starts, answers as its superuser, and is gone after stop.
    #[tokio::test]
    async fn a_cluster_starts_answers_and_is_removed() {
        if find_binaries().is_none() {
            panic!("Postgres binaries are required (scripts/test installs them)");
        }
        let mut pg = EmbeddedPg::start().expect("the cluster starts");
        let mut conn = sqlx::PgConnection::connect(&pg.superuser_url("postgres")).await.expect("connect");
        let (n,): (i32,) = sqlx::query_as("select 40 + 2").fetch_one(&mut conn).await.expect("query");
        assert_eq!(n, 42);
        drop(conn);
        let path = pg.path().to_path_buf();
        pg.stop();
        drop(pg);
        assert!(!path.exists(), "the cluster directory is removed");
    }
}
