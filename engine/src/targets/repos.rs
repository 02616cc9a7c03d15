//! The repositories the git pack aims at: `{repo}`, which the server may serve, a
//! canary repository beside the root that it must not, and a sibling whose path
//! starts with `{repo}`'s.

use crate::targets::sandbox::{Sandbox, random_hex};
use std::path::{Path, PathBuf};
use std::process::Command;

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
}

fn git(dir: &Path, home: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=sealmark", "-c", "user.email=sealmark@invalid", "-c", "init.defaultBranch=main"])
        .args(args)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("git could not be started ({e}); the git pack needs git on PATH"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
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
    Ok(repos)
}
