//! The per-run sandbox: directories the server starts in, canary secrets, the
//! scrubbed environment, and placeholder expansion.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Directories on PATH that count as "the system part".
const SYSTEM_PATH: [&str; 6] = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];
/// Variables passed through from sealmark's own environment, when set.
const PASSED_THROUGH: [&str; 3] = ["LANG", "npm_config_cache", "UV_CACHE_DIR"];
/// The canary variables planted in every server's environment.
pub const CANARY_VARS: [&str; 2] = ["SEALMARK_CANARY", "SEALMARK_FAKE_API_KEY"];
/// Marks every process the server starts, so ones that leave its process group are found.
pub const RUN_MARKER: &str = "SEALMARK_RUN_ID";

/// A fresh sandbox for one run. Removed on drop unless kept.
pub struct Sandbox {
    dir: Option<tempfile::TempDir>,
    kept_path: Option<PathBuf>,
    pub run_id: String,
    pub canaries: Vec<(String, String)>,
}

impl Sandbox {
    pub fn create() -> std::io::Result<Sandbox> {
        let dir = tempfile::Builder::new().prefix("sealmark-").tempdir()?;
        for sub in ["root", "home"] {
            std::fs::create_dir_all(dir.path().join(sub))?;
        }
        let run_id = random_hex(8);
        let canaries = vec![
            (CANARY_VARS[0].to_string(), format!("sm-canary-{}", random_hex(12))),
            // Characters that URL encoding changes, so an encoded echo is recognisable.
            (CANARY_VARS[1].to_string(), format!("sk_sealmark/{}+{}=", random_hex(8), random_hex(8))),
        ];
        Ok(Sandbox { dir: Some(dir), kept_path: None, run_id, canaries })
    }

    pub fn base(&self) -> &Path {
        self.dir.as_ref().map(|d| d.path()).or(self.kept_path.as_deref()).expect("a sandbox has a directory")
    }

    /// `{sandbox}`: the server's working directory and allowed root.
    pub fn root(&self) -> PathBuf {
        self.base().join("root")
    }

    /// `{sandbox_home}`: the server's HOME.
    pub fn home(&self) -> PathBuf {
        self.base().join("home")
    }

    /// What reports show instead of this run's paths and canary values, longest first.
    pub fn redactions(&self) -> Vec<(String, String)> {
        let mut reps = Vec::new();
        for (path, name) in
            [(self.root(), "{sandbox}"), (self.home(), "{sandbox_home}"), (self.base().to_path_buf(), "{sandbox_dir}")]
        {
            if let Ok(real) = path.canonicalize() {
                reps.push((real.to_string_lossy().into_owned(), name.to_string()));
            }
            reps.push((path.to_string_lossy().into_owned(), name.to_string()));
        }
        for (_, value) in &self.canaries {
            reps.push((value.clone(), "<canary>".to_string()));
        }
        reps.push((self.run_id.clone(), "<run-id>".to_string()));
        reps.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        reps
    }

    /// Expands the placeholders the foundation knows in one string.
    pub fn expand(&self, s: &str) -> String {
        s.replace("{sandbox_home}", &self.home().to_string_lossy()).replace("{sandbox}", &self.root().to_string_lossy())
    }

    /// The scrubbed environment: system PATH, the passed-through variables, HOME, the
    /// canaries, the run marker, then what the config sets (expanded). Also returns the
    /// names of inherited variables for the report.
    pub fn environment(&self, configured: &BTreeMap<String, String>) -> (Vec<(String, String)>, Vec<String>) {
        let mut env = Vec::new();
        let mut inherited = Vec::new();
        let path: Vec<String> = std::env::var("PATH")
            .unwrap_or_default()
            .split(':')
            .filter(|p| SYSTEM_PATH.contains(p))
            .map(str::to_string)
            .collect();
        let path = if path.is_empty() { SYSTEM_PATH.join(":") } else { path.join(":") };
        env.push(("PATH".to_string(), path));
        inherited.push("PATH (system part)".to_string());
        for var in PASSED_THROUGH {
            if let Ok(v) = std::env::var(var) {
                env.push((var.to_string(), v));
                inherited.push(var.to_string());
            }
        }
        env.push(("HOME".to_string(), self.home().to_string_lossy().into_owned()));
        env.extend(self.canaries.iter().cloned());
        env.push((RUN_MARKER.to_string(), self.run_id.clone()));
        for (k, v) in configured {
            env.retain(|(name, _)| name != k);
            env.push((k.clone(), self.expand(v)));
        }
        (env, inherited)
    }

    /// Keeps the directory after the run (`--keep-sandbox`); returns its path.
    pub fn keep(&mut self) -> Option<PathBuf> {
        let dir = self.dir.take()?;
        let path = dir.keep();
        self.kept_path = Some(path.clone());
        Some(path)
    }

    /// Removes the directory now; true when it is gone.
    pub fn clean_up(&mut self) -> bool {
        match self.dir.take() {
            Some(dir) => {
                let path = dir.path().to_path_buf();
                // A hostile server may have made files read-only; make them writable first.
                make_writable(&path);
                dir.close().is_ok() && !path.exists()
            }
            None => self.kept_path.is_none(),
        }
    }
}

fn make_writable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.is_dir()
    {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700));
        if let Ok(entries) = std::fs::read_dir(path) {
            for e in entries.flatten() {
                make_writable(&e.path());
            }
        }
    }
}

/// `n` random bytes as hex, from the kernel.
pub fn random_hex(n: usize) -> String {
    use std::io::Read;
    let mut buf = vec![0u8; n];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut buf)).expect("/dev/urandom is readable");
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// How the environment is shown in reports: canaries as `<canary>`, secret-looking
/// configured values as `<redacted>`, headers as `header:<Name>`.
pub fn env_display(
    configured: &BTreeMap<String, String>,
    headers: &BTreeMap<String, String>,
    stdio: bool,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if stdio {
        for var in CANARY_VARS {
            out.insert(var.to_string(), "<canary>".to_string());
        }
    }
    for (k, v) in configured {
        out.insert(k.clone(), redact(k, v));
    }
    for (k, v) in headers {
        out.insert(format!("header:{k}"), redact(k, v));
    }
    out
}

fn redact(key: &str, value: &str) -> String {
    let k = key.to_ascii_lowercase();
    let secret = ["key", "token", "secret", "password", "passwd", "auth", "credential", "cookie", "session"]
        .iter()
        .any(|w| k.contains(w));
    if secret && !value.starts_with('{') { "<redacted>".to_string() } else { value.to_string() }
}
