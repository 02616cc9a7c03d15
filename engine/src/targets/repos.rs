//! The repositories the git pack aims at: `{repo}`, which the server may serve, a
//! canary repository beside the root that it must not, and a sibling whose path
//! starts with `{repo}`'s. A pristine copy of `{repo}` puts it back as built after a
//! tool that writes, and the harness reads `{repo}` with git itself (bounded, with
//! hooks and the fsmonitor off, since the server may have planted either).

use crate::targets::sandbox::{Sandbox, random_hex};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the harness waits for one git command of its own on `{repo}`.
const GIT_READ_LIMIT: Duration = Duration::from_secs(10);

/// The repositories of one run and the tokens they carry.
pub struct GitRepos {
    /// `{repo}`: inside the root; the repository the server may serve.
    pub repo: PathBuf,
    /// Beside the root: a repository the server must never serve.
    pub canary_repo: PathBuf,
    /// `{repo}-sibling`: another repository whose path starts with `{repo}`'s.
    pub sibling: PathBuf,
    /// In `{repo}`'s README and first commit.
    pub control: String,
    /// In every file and commit of the canary and sibling repositories.
    pub canary: String,
    /// The message of the one commit on `{repo}`'s branch sm-hidden.
    pub hidden: String,
    /// `{repo}` as built, beside the root.
    pristine: PathBuf,
    /// The sandbox HOME, for the harness's own git commands.
    home: PathBuf,
}

/// One entry of `{repo}`'s index: its blob id and path.
pub struct IndexEntry {
    pub blob: String,
    pub path: String,
}

fn git_command(dir: &Path, home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(["-c", "user.name=sealmark", "-c", "user.email=sealmark@invalid", "-c", "init.defaultBranch=main"])
        .args(["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"])
        .args(args)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0");
    cmd
}

fn git(dir: &Path, home: &Path, args: &[&str]) -> Result<(), String> {
    let out = git_command(dir, home, args)
        .output()
        .map_err(|e| format!("git could not be started ({e}); the git pack needs git on PATH"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// A git command's exit code and stdout, when it ended within `GIT_READ_LIMIT`.
fn git_read(dir: &Path, home: &Path, args: &[&str]) -> Result<(i32, Vec<u8>), String> {
    let what = || format!("git {}", args.first().unwrap_or(&""));
    let mut child = git_command(dir, home, args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{} could not start: {e}", what()))?;
    let mut stdout = child.stdout.take().ok_or_else(what)?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.by_ref().take(16 * 1024 * 1024).read_to_end(&mut out);
        out
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < GIT_READ_LIMIT => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let out = reader.join().map_err(|_| what())?;
    match status {
        Some(status) => Ok((status.code().unwrap_or(-1), out)),
        None => Err(format!("{} did not end within {} s", what(), GIT_READ_LIMIT.as_secs())),
    }
}

/// A git command's stdout when it succeeded, else why not.
fn git_ok(dir: &Path, home: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    match git_read(dir, home, args)? {
        (0, out) => Ok(out),
        (code, _) => Err(format!("git {} on {{repo}} exited {code}", args.first().unwrap_or(&""))),
    }
}

/// A regular file's text, up to 1 MiB: a server may have put a FIFO, a device or a huge
/// file where the harness reads.
pub fn read_small(path: &Path) -> Option<String> {
    let bytes = crate::targets::sandbox::read_regular(path, 1024 * 1024)?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Copies a tree as it is: directories, files with their modes, links as links.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

fn commit_repo(dir: &Path, home: &Path, file: &str, text: &str, message: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    git(dir, home, &["init", "-q"])?;
    std::fs::write(dir.join(file), text).map_err(|e| e.to_string())?;
    git(dir, home, &["add", "-A"])?;
    git(dir, home, &["commit", "-q", "-m", message])
}

/// Builds the repositories inside a fresh sandbox.
pub fn create(sandbox: &Sandbox) -> Result<GitRepos, String> {
    let home = sandbox.home();
    let repos = GitRepos {
        repo: sandbox.root().join("repo"),
        canary_repo: sandbox.base().join("canary-repo"),
        sibling: sandbox.root().join("repo-sibling"),
        control: format!("sm-repo-control-{}", random_hex(8)),
        canary: format!("sm-git-canary-{}", random_hex(8)),
        hidden: format!("sm-hidden-{}", random_hex(8)),
        pristine: sandbox.base().join("repo-pristine"),
        home: home.clone(),
    };
    let readme = format!("sealmark test repository\n{}\n", repos.control);
    commit_repo(&repos.repo, &home, "README.md", &readme, &format!("first commit {}", repos.control))?;
    git(&repos.repo, &home, &["checkout", "-q", "-b", "sm-hidden"])?;
    git(&repos.repo, &home, &["commit", "-q", "--allow-empty", "-m", &repos.hidden])?;
    git(&repos.repo, &home, &["checkout", "-q", "main"])?;
    for dir in [&repos.canary_repo, &repos.sibling] {
        let secret = format!("{}\n", repos.canary);
        commit_repo(dir, &home, "secret.md", &secret, &format!("canary commit {}", repos.canary))?;
    }
    std::os::unix::fs::symlink(&repos.canary_repo, repos.repo.join("sm-link")).map_err(|e| e.to_string())?;
    std::fs::write(repos.repo.join(".git/info/exclude"), "sm-link\n").map_err(|e| e.to_string())?;
    copy_tree(&repos.repo, &repos.pristine).map_err(|e| format!("cannot copy {{repo}}: {e}"))?;
    Ok(repos)
}

impl GitRepos {
    /// Puts `{repo}` back as built, whatever a tool did to it.
    pub fn reset(&self) -> Result<(), String> {
        crate::targets::sandbox::make_writable(&self.repo);
        match std::fs::remove_dir_all(&self.repo) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("cannot remove {{repo}} to put it back: {e}"));
            }
            _ => {}
        }
        copy_tree(&self.pristine, &self.repo).map_err(|e| format!("cannot put {{repo}} back: {e}"))
    }

    /// The ref `{repo}`'s HEAD names, or `None` when it is detached.
    pub fn head(&self) -> Result<Option<String>, String> {
        let head = read_small(&self.repo.join(".git/HEAD")).ok_or("{repo}/.git/HEAD is not a readable file")?;
        Ok(head.trim().strip_prefix("ref: ").map(str::to_string))
    }

    /// Every ref of `{repo}`, by name.
    pub fn refs(&self) -> Result<Vec<String>, String> {
        let out = git_ok(&self.repo, &self.home, &["for-each-ref", "--format=%(refname)"])?;
        Ok(String::from_utf8_lossy(&out).lines().map(str::to_string).collect())
    }

    /// `{repo}`'s index as git reads it.
    pub fn index(&self) -> Result<Vec<IndexEntry>, String> {
        let out = git_ok(&self.repo, &self.home, &["ls-files", "--stage", "-z"])?;
        Ok(out
            .split(|b| *b == 0)
            .filter_map(|line| {
                let line = String::from_utf8_lossy(line);
                let (meta, path) = line.split_once('\t')?;
                let blob = meta.split(' ').nth(1)?.to_string();
                Some(IndexEntry { blob, path: path.to_string() })
            })
            .collect())
    }

    /// The blob id a file's content would have (nothing is written), computed in the
    /// pristine copy, which no server is pointed at.
    pub fn blob_id(&self, file: &Path) -> Result<String, String> {
        let path = file.to_string_lossy();
        let out = git_ok(&self.pristine, &self.home, &["hash-object", "--no-filters", "--", &path])?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// Whether `{repo}`'s object database holds this object (`cat-file -e` exits 1 when
    /// it does not; anything else means git could not read the repository).
    pub fn has_object(&self, id: &str) -> Result<bool, String> {
        match git_read(&self.repo, &self.home, &["cat-file", "-e", id])? {
            (0, _) => Ok(true),
            (1, _) => Ok(false),
            (code, _) => Err(format!("git cat-file on {{repo}} exited {code}")),
        }
    }
}
