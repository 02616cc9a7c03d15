//! The git pack: a git tool aimed at a repository it must not serve, and ref and path
//! arguments that become git options. All need `{repo}`, a repository the harness
//! owns, in the server's configuration. The three candidates call tools that write, so
//! they run only under `--active`, with `{repo}` put back as built after every call.

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

declare_check! {
    /// A tool that creates repositories creates them where the server serves, or nowhere.
    GIT_INIT_SCOPE {
        id: "git-init-scope",
        pack: Pack::Git,
        label: "Repositories are created only inside the served one",
        scope: "server (path validation of repository creation, with harness-owned paths; --active)",
        weight: Weight::Advisory,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Sandbox],
        probes: &INIT_VARIANTS,
        settings: &[],
        proves_pass: "A control that created a repository inside {repo}, then paths outside it where no repository appeared.",
        verdict: "Runs only with --active. A git tool that creates a repository (its name says init, or create with repo or repository) is first asked for one at {repo}/sm-init-control, a new directory inside the repository it serves (the control), then once per probe at a fresh harness-owned path outside {repo}. After each call the harness looks at the path itself, where it lands against the server's working directory and, for a relative path, against {repo}: a .git directory there, or the HEAD and objects of a bare repository, means one was created. fail when a repository appears at any outside path (the evidence names the path). pass when none does, the control created one and every probe was answered. inconclusive when the control created nothing (a tool that creates nothing refuses everything) or a probe got no answer; na without --active or without such a tool.",
        fix: "Resolve the requested path (following links, after creating nothing) and require it to lie inside the repository you serve, compared as whole paths. Better still, do not offer repository creation to an agent at all.",
        false_positives: "None: every outside path is fresh and harness-owned, and the harness removes what a probe created before the next one.",
        false_negatives: "Only the listed spellings are tried. A tool that clones rather than initialises is not aimed at, and neither is one whose other required arguments the harness cannot fill.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[22, 59] },
    }
}

declare_check! {
    /// Staging reads a file into the repository: only the repository's own files may be staged.
    GIT_ADD_SCOPE {
        id: "git-add-scope",
        pack: Pack::Git,
        label: "Only files inside the repository can be staged",
        scope: "server (path validation of staging, with harness-owned files; --active)",
        weight: Weight::Advisory,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::State],
        probes: &ADD_VARIANTS,
        settings: &[],
        proves_pass: "A control that staged a new file inside {repo}, then paths outside it that left the index and the object database without the outside files.",
        verdict: "Runs only with --active. A git tool that stages files (its name says add or stage) is first given a new file the harness wrote into {repo} (the control), then each probe path, which names a harness-owned file outside {repo} whose content is a token made for the run. After each call the harness reads {repo} with git itself: the index (git ls-files --stage) and the object database (git cat-file -e of each outside file's blob id). fail when the index names a path outside {repo} or a blob of an outside file, or the object database holds one: the outside content was read into the repository, ready to be committed and pushed. pass when neither happened, the control's file was staged and every probe was answered. inconclusive when the control staged nothing, a probe got no answer, or git could not read {repo} afterwards; na without --active or without such a tool.",
        fix: "Resolve every path against the repository's working tree (following links) and refuse those that leave it, then run git add -- with the checked paths. git itself refuses paths outside the work tree; libraries that write the index directly (GitPython's index.add) do not.",
        false_positives: "None: each outside file holds a token made for the run, so its blob can only reach {repo} by being read from outside.",
        false_negatives: "Files outside {repo} reached by other spellings, or staged by a tool whose name does not say add or stage, are not tried.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[22, 59] },
    }
}

declare_check! {
    /// A branch name is data, also for the tools that move refs.
    GIT_REF_OPTIONS {
        id: "git-ref-options",
        pack: Pack::Git,
        label: "Refs given to tools that write cannot become git options",
        scope: "server (argument handling of checkout, branch, reset and other writing tools; --active)",
        weight: Weight::Advisory,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::State, VerifiedBy::Sandbox],
        probes: &REF_OPTION_VARIANTS,
        settings: &[],
        proves_pass: "A control on a checkout, switch, reset, branch, log, show or diff tool that was answered and changed none of what the probes look for, then answered option-like values after which HEAD, the refs, main's upstream, the harness's uncommitted change and the file the output value names were as before.",
        verdict: "Runs only with --active. Each git tool that writes (by its annotations or its name) and takes a ref, branch, revision or path string is called on {repo} with benign arguments (the control), then with each probe value in each such argument. Before every call {repo} is as built plus one uncommitted line in README.md. After it the harness reads the repository (HEAD, the refs with git, .git/config) and {sandbox}: HEAD naming the probe's branch or detached, the probe's branch created, main's upstream set to sm-hidden, the uncommitted line discarded, or {sandbox}/sm-injected.txt created, means the option took effect; what the tool's own control did is not charged to its probes. fail when an option took effect. pass when none did on a tool whose name says checkout, switch, reset, branch, log, show or diff (the commands the values act on), whose control was answered without producing any of those itself, and every probe was answered. inconclusive otherwise (other tools may fail the check, never pass it); na without --active or without such a tool. Read-only tools get the same kind of values from git-arg-injection.",
        fix: "Put --end-of-options before every caller-supplied ref, and refuse refs that start with '-'; check a branch name with git check-ref-format --branch before using it.",
        false_positives: "None: each effect is one the probe's option names and the benign control did not produce.",
        false_negatives: "Options whose effect the harness does not look for (other config changes, a pruned reflog, a moved branch other than main's upstream) are not detected, and tools that push or fetch are not aimed at a remote.",
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

/// Where repository creation is asked for, all outside `{repo}` and all the harness's:
/// fresh directories the harness removes again.
pub const INIT_VARIANTS: [ProbeDoc; 5] = [
    ProbeDoc::noted("absolute", "{canary}/sm-init", "a directory beside the root, by its absolute path"),
    ProbeDoc::noted("traversal", "{repo}/../sm-init", "out of {repo} by a parent step, into {sandbox}"),
    ProbeDoc::noted("relative", "../sm-init", "relative to the server's working directory ({sandbox})"),
    ProbeDoc::noted(
        "sibling-prefix",
        "{repo}-sibling/sm-init",
        "inside a repository whose path starts with {repo}'s (a string-prefix check lets it in)",
    ),
    ProbeDoc::noted("link", "{repo}/sm-link/sm-init", "through the link inside {repo} to the canary repository"),
];

/// The control of git-init-scope: a new directory inside `{repo}`.
pub const INIT_CONTROL: &str = "{repo}/sm-init-control";

/// The paths given to a staging tool, each naming a harness-owned file outside `{repo}`.
pub const ADD_VARIANTS: [ProbeDoc; 4] = [
    ProbeDoc::noted("traversal", "../../canary/secret.txt", "{canary}/secret.txt, by parent steps from {repo}"),
    ProbeDoc::noted("absolute", "{canary}/secret.txt", "the canary directory's secret, by its absolute path"),
    ProbeDoc::noted(
        "sibling-prefix",
        "{repo}-sibling/secret.md",
        "a file of the repository whose path starts with {repo}'s (a string-prefix check lets it in)",
    ),
    ProbeDoc::noted("link", "sm-link/secret.md", "the canary repository's file, through the link inside {repo}"),
];

/// The control of git-add-scope: a new file the harness writes into `{repo}` first.
pub const ADD_CONTROL: &str = "sm-stage-control.txt";

/// The values sent in every ref, branch, revision and path argument of a git tool that
/// writes. `sm-option-branch` exists nowhere until an option makes it.
pub const REF_OPTION_VARIANTS: [ProbeDoc; 6] = [
    ProbeDoc::noted("orphan", "--orphan=sm-option-branch", "git checkout makes a new branch and points HEAD at it"),
    ProbeDoc::noted("detach", "--detach", "git checkout and switch detach HEAD"),
    ProbeDoc::noted("force", "--force", "git checkout throws away the uncommitted line in README.md"),
    ProbeDoc::noted("hard", "--hard", "git reset throws away the uncommitted line in README.md"),
    ProbeDoc::noted(
        "upstream",
        "--set-upstream-to=sm-hidden",
        "git branch makes sm-hidden the upstream of main, the branch checked out",
    ),
    ProbeDoc::noted("output", "--output={sandbox}/sm-injected.txt", "git log, show and diff write that file"),
];

/// The branch the `orphan` value names.
pub const OPTION_BRANCH: &str = "sm-option-branch";
/// The branch the `upstream` value names: `{repo}`'s hidden branch.
pub const UPSTREAM: &str = "sm-hidden";
