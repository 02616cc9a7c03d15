//! The git pack: a git tool aimed at a repository it must not serve, and ref and path
//! arguments that become git options. Both need `{repo}`, a repository the harness
//! owns, in the server's configuration.

use super::{References, declare_check};
use crate::model::{Pack, ProbeDoc, VerifiedBy, Weight};

declare_check! {
    /// A git server must serve its repository and no other.
    GIT_REPO_SCOPE {
        id: "git-repo-scope",
        pack: Pack::Git,
        label: "Git tools cannot be aimed at another repository",
        scope: "server (repository validation, with harness-owned repositories)",
        weight: Weight::Critical,
        candidate: false,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Response],
        probes: &SCOPE_VARIANTS,
        settings: &[],
        proves_pass: "A working control on {repo}, then calls aimed at the canary repository that were answered without its token.",
        verdict: "Every read-only git tool with a repository argument (repo_path, repository, repo…) is first called on {repo} with benign arguments (the control), then once per probe with the repository argument pointing at the canary repository, whose commit messages and files carry a token made for the run. fail when the token comes back in any reply. pass when none does and a control worked. inconclusive when no control worked (a tool that reads nothing refuses everything); na when no git tool takes a repository argument.",
        fix: "Resolve the requested path (following links) and compare it with the resolved repository you serve, as whole paths: equal, or refused. Never accept a path because it starts with the served one.",
        false_positives: "None: the canary repository and its token exist only for the run, outside {repo}.",
        false_negatives: "Only read-only tools are aimed at the canary repository; a write-capable tool aimed elsewhere is not tried (it could change a real repository). Repositories named by URL or by a remote are not probed.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[22, 59] },
    }
}

declare_check! {
    /// A ref is data, never an option.
    GIT_ARG_INJECTION {
        id: "git-arg-injection",
        pack: Pack::Git,
        label: "Ref and path arguments cannot become git options",
        scope: "server (argument handling, with harness-owned repositories and programs)",
        weight: Weight::Critical,
        candidate: false,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Sandbox, VerifiedBy::Response],
        probes: &INJECTION_VARIANTS,
        settings: &[],
        proves_pass: "A working control on {repo}, then option-like values that were answered with no file created, no harness program run and no hidden commit shown.",
        verdict: "Each git tool is called on {repo} with benign arguments (the control), then each string argument other than the repository gets each probe value while the others stay benign. The sandbox observer watches {sandbox} during every call. fail when a file the probe names appears (--output=), a harness program ran (sm-canary's file or its marker in the reply), or the reply shows the harness's hidden branch (--all). A tool annotated read-only that changed {repo} (its refs, HEAD or work tree) during any call fails the check too, with its own evidence. pass when nothing took effect and a control worked; inconclusive when no control worked; na when no git tool has such an argument.",
        fix: "Put --end-of-options (or --) before every value that comes from the caller, and refuse refs that start with '-'. Run git with an argument vector, never a shell string.",
        false_positives: "None for a file or a marker: both exist only because the probe asked for them. A server that legitimately writes to the repository from a tool it annotated read-only is reported: the annotation is then wrong.",
        false_negatives: "Options without a visible effect in the sandbox (--no-index, --textconv) and options of subcommands the probes do not reach are not detected; so are injections into tools whose other required arguments the harness cannot fill.",
        references: References { owasp_mcp: "MCP05 Command Injection & Execution", cwe: &[88] },
    }
}

/// Where the repository-scope probes point, relative to `{repo}` and `{sandbox}`. The
/// canary repository sits beside the root (`{sandbox_dir}/canary-repo`); the sibling one
/// is `{repo}-sibling`; `{repo}/sm-link` is a link to the canary repository.
pub const SCOPE_VARIANTS: [ProbeDoc; 5] = [
    ProbeDoc::noted("absolute", "{canary_repo}", "the canary repository by its absolute path"),
    ProbeDoc::noted("traversal", "{repo}/../../canary-repo", "out of {repo} by parent steps"),
    ProbeDoc::noted("relative", "../canary-repo", "relative to the server's working directory ({sandbox})"),
    ProbeDoc::noted(
        "sibling-prefix",
        "{repo}-sibling",
        "another repository whose path starts with {repo}'s (a string-prefix check lets it in)",
    ),
    ProbeDoc::noted("link", "{repo}/sm-link", "a symbolic link inside {repo} to the canary repository"),
];

/// The values sent in every ref, revision and path argument of a git tool.
pub const INJECTION_VARIANTS: [ProbeDoc; 6] = [
    ProbeDoc::noted(
        "output",
        "--output={sandbox}/sm-injected.txt",
        "git log, show and diff write their output to that file",
    ),
    ProbeDoc::noted(
        "upload-pack",
        "--upload-pack=sm-canary",
        "fetch, clone and ls-remote run it (sm-canary prints a marker and creates {sandbox}/sm-canary.txt)",
    ),
    ProbeDoc::noted("pager", "--open-files-in-pager=sm-canary", "git grep runs it"),
    ProbeDoc::noted("exec", "--exec=sm-canary", "rebase and some plumbing run it"),
    ProbeDoc::noted("config", "-c core.pager=sm-canary", "takes effect where the value lands before the subcommand"),
    ProbeDoc::noted(
        "leading-dash",
        "--all",
        "a leading dash; git log then lists every branch, including the harness's hidden one",
    ),
];
