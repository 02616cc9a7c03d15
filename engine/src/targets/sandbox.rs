//! The per-run sandbox: directories the server starts in, canary secrets, the
//! scrubbed environment, and its placeholders.

use crate::children::RUN_MARKER;
use crate::config::secrets;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Directories on PATH that count as "the system part".
const SYSTEM_PATH: [&str; 6] = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];
/// Variables passed through from sealmark's own environment, when set.
const PASSED_THROUGH: [&str; 1] = ["LANG"];

/// Where a package runner keeps what it downloaded, so a server started with `npx -y` or
/// `uvx` starts warm instead of downloading itself again into the empty sandbox HOME:
/// the variable, its default under the real home (`~/.cache` and `~/.local/share` as the
/// XDG variables say), and the name reports give it (never its path). None of these tools
/// can use a cache read-only, so a server may add to it: the only writes outside the
/// sandbox the harness arranges. `--no-package-caches` passes none.
/// (uv's own Pythons are left out: interpreters every later server would run, shared
/// with a server under test, are more than a cache.)
const PACKAGE_CACHES: [(&str, Base, &str, &str); 3] = [
    ("npm_config_cache", Base::Home, ".npm", "npm cache"),
    ("UV_CACHE_DIR", Base::Cache, "uv", "uv cache"),
    ("PIP_CACHE_DIR", Base::Cache, "pip", "pip cache"),
];

#[derive(Clone, Copy)]
enum Base {
    Home,
    Cache,
}

/// The package caches that exist here: the variable, the directory, and its name.
fn package_caches() -> Vec<(&'static str, PathBuf, &'static str)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let cache =
        std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from).or_else(|| home.as_ref().map(|h| h.join(".cache")));
    PACKAGE_CACHES
        .iter()
        .filter_map(|(var, base, default, name)| {
            let path = match std::env::var_os(var) {
                Some(set) => PathBuf::from(set),
                None => {
                    let base = match base {
                        Base::Home => home.clone(),
                        Base::Cache => cache.clone(),
                    }?;
                    base.join(default)
                }
            };
            path.is_dir().then_some((*var, path, *name))
        })
        .collect()
}
/// The canary variables planted in every server's environment.
pub const CANARY_VARS: [&str; 2] = ["SEALMARK_CANARY", "SEALMARK_FAKE_API_KEY"];

/// The control file in the root, which a control read must return.
pub const CONTROL_FILE: &str = "ok.txt";
/// The large file in the root, for fs-large-read.
pub const LARGE_FILE: &str = "large.txt";
/// The secret in the canary directory and in the sibling root.
pub const SECRET_FILE: &str = "secret.txt";

/// The tokens written into the sandbox's files, fresh per run.
#[derive(Debug, Clone)]
pub struct FileTokens {
    /// In `{sandbox}/ok.txt`.
    pub control: String,
    /// In `{canary}/secret.txt`.
    pub canary: String,
    /// In the sibling root's `secret.txt`.
    pub sibling: String,
    /// The name of a file that does not exist in `{canary}` (the target of `link-new`).
    pub new_name: String,
}

/// A fresh sandbox for one run. Removed on drop unless kept.
pub struct Sandbox {
    /// Whether the servers get the package caches (`PACKAGE_CACHES`).
    pub package_caches: bool,
    dir: Option<tempfile::TempDir>,
    kept_path: Option<PathBuf>,
    pub run_id: String,
    pub canaries: Vec<(String, String)>,
    pub files: FileTokens,
}

impl Sandbox {
    /// The environment canaries, as secret-echo looks for them.
    pub fn canary_list(&self) -> Vec<crate::judge::Canary> {
        self.canaries
            .iter()
            .map(|(name, value)| crate::judge::Canary { name: name.clone(), value: value.clone() })
            .collect()
    }

    /// Creates the tree: the allowed root with its control file, a subdirectory, a
    /// large file and links that point out of it; the canary directory and the sibling
    /// root (each with a secret), and the sandbox HOME.
    pub fn create(large_bytes: usize) -> std::io::Result<Sandbox> {
        let dir = tempfile::Builder::new().prefix("sealmark-").tempdir()?;
        let run_id = random_hex(8);
        let canaries = vec![
            (CANARY_VARS[0].to_string(), format!("sm-canary-{}", random_hex(12))),
            // Characters that URL encoding changes, so an encoded echo is recognisable.
            (CANARY_VARS[1].to_string(), format!("sk_sealmark/{}+{}=", random_hex(8), random_hex(8))),
        ];
        let files = FileTokens {
            control: format!("sm-control-{}", random_hex(8)),
            canary: format!("sm-fs-canary-{}", random_hex(8)),
            sibling: format!("sm-sibling-canary-{}", random_hex(8)),
            new_name: "not-yet.txt".to_string(),
        };
        let sandbox = Sandbox { package_caches: true, dir: Some(dir), kept_path: None, run_id, canaries, files };
        sandbox.build_tree(large_bytes)?;
        Ok(sandbox)
    }

    fn build_tree(&self, large_bytes: usize) -> std::io::Result<()> {
        let (root, canary, sibling) = (self.root(), self.canary_dir(), self.sibling());
        for d in [&root, &canary, &sibling, &self.home(), &root.join("docs")] {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(root.join(CONTROL_FILE), format!("{}\n", self.files.control))?;
        std::fs::write(root.join("docs").join("notes.txt"), "notes\n")?;
        let line = "sealmark large file line, padding to make a big read\n";
        std::fs::write(root.join(LARGE_FILE), line.repeat(large_bytes / line.len() + 1))?;
        self.write_programs()?;
        self.restore()
    }

    /// The harness programs a command tool may be given (first on the server's PATH):
    /// `sm-echo ARGS` prints its arguments, `sm-canary` prints a marker and creates
    /// `{sandbox}/sm-canary.txt`, `sm-sleep SECONDS` sleeps, `sm-spew BYTES` prints that
    /// many bytes.
    fn write_programs(&self) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let bin = self.programs_dir();
        std::fs::create_dir_all(&bin)?;
        let root = self.root();
        let programs = [
            ("sm-echo", "echo \"$@\"".to_string()),
            (
                "sm-canary",
                format!("echo sm-canary-ran\n: > '{}'", root.join("sm-canary.txt").to_string_lossy().replace('\'', "")),
            ),
            ("sm-sleep", "sleep \"${1:-1}\"".to_string()),
            ("sm-spew", "head -c \"${1:-1048576}\" /dev/zero | tr '\\0' x".to_string()),
        ];
        for (name, body) in programs {
            let path = bin.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n"))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
        Ok(())
    }

    /// Where the harness programs are.
    pub fn programs_dir(&self) -> PathBuf {
        self.base().join("bin")
    }

    /// Puts the canary directory, the sibling root and the root's links back as built,
    /// after a probe that may have changed them.
    pub fn restore(&self) -> std::io::Result<()> {
        use std::os::unix::fs::symlink;
        let (root, canary, sibling) = (self.root(), self.canary_dir(), self.sibling());
        for (dir, token) in [(&canary, &self.files.canary), (&sibling, &self.files.sibling)] {
            make_writable(dir);
            if let Ok(entries) = std::fs::read_dir(dir) {
                for e in entries.flatten() {
                    let p = e.path();
                    let _ = if p.is_dir() && !p.is_symlink() {
                        std::fs::remove_dir_all(&p)
                    } else {
                        std::fs::remove_file(&p)
                    };
                }
            }
            std::fs::create_dir_all(dir)?;
            std::fs::write(dir.join(SECRET_FILE), format!("{token}\n"))?;
            // The token in a file name too, so a directory listing that escapes shows it.
            std::fs::write(dir.join(format!("{token}.marker")), "")?;
        }
        let links = [
            ("link-out", canary.clone()),
            ("link-secret", canary.join(SECRET_FILE)),
            // A link to a link: resolution must follow every hop.
            ("link-chain", PathBuf::from("link-out")),
            // A link to a file that does not exist yet: a write through it must not create it.
            ("link-new", canary.join(&self.files.new_name)),
        ];
        for (name, target) in links {
            let at = root.join(name);
            if std::fs::read_link(&at).ok().as_deref() != Some(target.as_path()) {
                let _ = std::fs::remove_file(&at);
                let _ = std::fs::remove_dir_all(&at);
                symlink(&target, &at)?;
            }
        }
        Ok(())
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

    /// `{canary}`: a directory outside the root holding `secret.txt`.
    pub fn canary_dir(&self) -> PathBuf {
        self.base().join("canary")
    }

    /// The sibling root: its path is the root's path plus `-sibling`.
    pub fn sibling(&self) -> PathBuf {
        self.base().join("root-sibling")
    }

    /// The directories the observer watches, with the names reports use for them.
    pub fn observed(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("{sandbox}", self.root()),
            ("{canary}", self.canary_dir()),
            ("{sandbox}-sibling", self.sibling()),
            ("{sandbox_home}", self.home()),
        ]
    }

    /// What reports show instead of this run's paths and canary values, longest first.
    pub fn redactions(&self) -> Vec<(String, String)> {
        let mut reps = Vec::new();
        let places = vec![
            (self.sibling(), "{sandbox}-sibling"),
            (self.root(), "{sandbox}"),
            (self.home(), "{sandbox_home}"),
            (self.canary_dir(), "{canary}"),
            (self.base().to_path_buf(), "{sandbox_dir}"),
        ];
        for (path, name) in places {
            reps.extend(path_redactions(&path, name));
        }
        for (_, value) in &self.canaries {
            reps.push((value.clone(), "<canary>".to_string()));
        }
        // A record names a cache, never where it is on this machine.
        for (var, path, _) in package_caches() {
            reps.extend(path_redactions(&path, &format!("{{{var}}}")));
        }
        reps.push((self.files.canary.clone(), "<canary>".to_string()));
        reps.push((self.files.sibling.clone(), "<sibling-canary>".to_string()));
        reps.push((self.files.control.clone(), "<control>".to_string()));
        reps.push((self.run_id.clone(), "<run-id>".to_string()));
        if let Some(name) = self.base().file_name() {
            reps.push((name.to_string_lossy().into_owned(), "{sandbox_dir_name}".to_string()));
        }
        reps
    }

    /// Expands the sandbox's own placeholders in one string (`Targets::expand` adds the rest).
    pub fn expand(&self, s: &str) -> String {
        s.replace("{sandbox_home}", &self.home().to_string_lossy())
            .replace("{sandbox}", &self.root().to_string_lossy())
            .replace("{canary}", &self.canary_dir().to_string_lossy())
    }

    /// The scrubbed environment: system PATH, the passed-through variables, HOME, the
    /// canaries, the run marker, then what the config sets (expanded by the caller). Also returns the
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
        let path = format!("{}:{path}", self.programs_dir().to_string_lossy());
        env.push(("PATH".to_string(), path));
        inherited.push("PATH (system part)".to_string());
        for var in PASSED_THROUGH {
            if let Ok(v) = std::env::var(var) {
                env.push((var.to_string(), v));
                inherited.push(var.to_string());
            }
        }
        if self.package_caches {
            for (var, path, name) in package_caches() {
                env.push((var.to_string(), path.to_string_lossy().into_owned()));
                inherited.push(format!("{name} ({var})"));
            }
        }
        env.push(("HOME".to_string(), self.home().to_string_lossy().into_owned()));
        env.extend(self.canaries.iter().cloned());
        env.push((RUN_MARKER.to_string(), self.run_id.clone()));
        for (k, v) in configured {
            env.retain(|(name, _)| name != k);
            env.push((k.clone(), v.clone()));
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

impl Drop for Sandbox {
    /// An abandoned run (interrupted, or an early return) removes its tree too.
    fn drop(&mut self) {
        if self.dir.is_some() && self.clean_up() {
            crate::children::cleanup_note("removed the sandbox directory".to_string());
        }
    }
}

/// Up to `limit` bytes of a regular file, or `None` for anything else. Opened without
/// blocking and checked after opening, so a FIFO or device a server swapped in cannot
/// stall the harness, and a file that grows is read only so far.
pub fn read_regular(path: &Path, limit: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut out = Vec::new();
    file.take(limit).read_to_end(&mut out).ok()?;
    Some(out)
}

/// Makes a tree's directories writable again, so a server's chmod cannot keep it.
pub fn make_writable(path: &Path) {
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

/// A path as reports show it, in both spellings (as made, and with links resolved).
pub fn path_redactions(path: &Path, shown: &str) -> Vec<(String, String)> {
    let mut reps = Vec::new();
    if let Ok(real) = path.canonicalize() {
        reps.push((real.to_string_lossy().into_owned(), shown.to_string()));
    }
    reps.push((path.to_string_lossy().into_owned(), shown.to_string()));
    reps
}

/// `n` random bytes as hex, from the kernel.
pub fn random_hex(n: usize) -> String {
    let mut buf = vec![0u8; n];
    fill_random(&mut buf);
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Fills `buf` from the kernel's random source.
pub fn fill_random(buf: &mut [u8]) {
    use std::io::Read;
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(buf)).expect("/dev/urandom is readable");
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
        out.insert(k.clone(), secrets::hidden(v, &secrets::in_value(k, v)));
    }
    for (k, v) in headers {
        out.insert(format!("header:{k}"), secrets::hidden(v, &secrets::in_value(k, v)));
    }
    out
}
