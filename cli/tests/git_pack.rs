//! The git pack through the real binary: the toy git server in each mode against the
//! repositories the harness owns. Each mode breaks exactly one thing, and the evidence
//! names what was observed (the canary repository's content, a file `--output=` made,
//! the hidden branch, a tag a read-only tool wrote).

mod common;

use common::{Scratch, record_of, toy, verdict};
use sealmark_engine::model::Verdict::{self, Fail, Inconclusive, Pass};
use serde_json::Value;

/// The checks of git-pack runs without the tools that write.
const READ_CHECKS: [&str; 2] = ["git-repo-scope", "git-arg-injection"];

/// Mode → (git-repo-scope, git-arg-injection).
const EXPECTED: &[(&str, [Verdict; 2])] = &[
    ("safe", [Pass, Pass]),
    ("no-repo-check", [Fail, Pass]),
    ("prefix-check", [Fail, Pass]),
    ("refs-unchecked", [Pass, Fail]),
    ("status-writes", [Pass, Fail]),
];

fn check(mode: &str) -> Value {
    let want = EXPECTED.iter().find(|(m, _)| *m == mode).expect("mode in table").1;
    let scratch = Scratch::new();
    let cfg = scratch.config_for(&toy("toy-git"), &["--repository", "{repo}", "--mode", mode], "packs: [core, git]\n");
    let (rec, _) = record_of(&scratch, &cfg);
    for (id, want) in READ_CHECKS.into_iter().zip(want) {
        let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap();
        assert_eq!(verdict(&rec, id), want, "mode {mode}, {id}: {}", c["summary"]);
    }
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes");
    assert!(scratch.sandbox_removed(), "mode {mode} left the sandbox");
    rec
}

fn evidence<'r>(rec: &'r Value, id: &str) -> &'r Vec<Value> {
    rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()["evidence"].as_array().unwrap()
}

#[test]
fn a_server_that_checks_its_repository_and_its_refs_passes() {
    let rec = check("safe");
    assert_eq!(rec["packs"]["git"]["grade"]["letter"], "A");
    let scope = evidence(&rec, "git-repo-scope");
    assert!(scope.iter().any(|e| e["probe"] == "sibling-prefix ({repo}-sibling)"), "{scope:#?}");
    assert_eq!(rec["server"]["command"].as_str().unwrap().split(' ').nth(2), Some("{repo}"), "placeholders unexpanded");
}

#[test]
fn a_server_that_opens_any_path_serves_the_canary_repository() {
    let rec = check("no-repo-check");
    let first = &evidence(&rec, "git-repo-scope")[0];
    assert_eq!(first["code"], "canary-repo-served");
    assert!(first["outcome"].as_str().unwrap().contains("<git-canary>"), "the canary is named, redacted: {first}");
    assert_eq!(rec["packs"]["git"]["grade"]["capped"], false, "50% is a D before any cap");
}

#[test]
fn a_string_prefix_check_lets_the_sibling_the_link_and_traversal_through() {
    let rec = check("prefix-check");
    let leaked: Vec<&str> = evidence(&rec, "git-repo-scope")
        .iter()
        .filter(|e| e["code"] == "canary-repo-served")
        .map(|e| e["probe"].as_str().unwrap().split(' ').next().unwrap())
        .collect();
    for variant in ["traversal", "sibling-prefix", "link"] {
        assert!(leaked.contains(&variant), "{variant} not among {leaked:?}");
    }
    assert!(!leaked.contains(&"absolute") && !leaked.contains(&"relative"), "{leaked:?}");
}

#[test]
fn refs_passed_unchecked_become_options_the_sandbox_sees() {
    let rec = check("refs-unchecked");
    let ev = evidence(&rec, "git-arg-injection");
    let output = ev.iter().find(|e| e["probe"] == "output in revision" && e["tool"] == "git_log").expect("--output=");
    assert_eq!(output["verifiedBy"], "sandbox");
    assert!(output["outcome"].as_str().unwrap().contains("{sandbox}/sm-injected.txt was created"), "{output}");
    let dash = ev.iter().find(|e| e["probe"] == "leading-dash in revision").expect("--all");
    assert!(dash["outcome"].as_str().unwrap().contains("hidden branch"), "{dash}");
}

#[test]
fn a_read_only_tool_that_writes_a_tag_is_reported() {
    let rec = check("status-writes");
    let ev = evidence(&rec, "git-arg-injection");
    assert_eq!(ev[0]["code"], "read-only-changed-repo");
    assert_eq!(ev[0]["tool"], "git_status");
    assert!(ev[0]["outcome"].as_str().unwrap().contains("refs/tags/toy-last-status"), "{}", ev[0]);
}

#[test]
fn without_repo_the_git_pack_says_what_it_needs() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(
        &toy("toy-git"),
        &["--repository", "/nonexistent", "--mode", "safe"],
        "packs: [core, git]\n",
    );
    let (rec, _) = record_of(&scratch, &cfg);
    assert_eq!(rec["packs"]["git"]["status"], "na", "{}", rec["packs"]["git"]);
    let gaps = rec["notCovered"].to_string();
    assert!(gaps.contains("no {repo} placeholder"), "{gaps}");
}

/// The effects pack judges the git tools by their benign calls: read-only and
/// closed-world as annotated, until one writes.
#[test]
fn the_effects_pack_judges_the_git_tools() {
    for (mode, want) in [("safe", Pass), ("status-writes", Fail)] {
        let scratch = Scratch::new();
        let cfg = scratch.config_for(
            &toy("toy-git"),
            &["--repository", "{repo}", "--mode", mode],
            "packs: [core, git, effects]\n",
        );
        let (rec, _) = record_of(&scratch, &cfg);
        let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "effects-read-only").unwrap().clone();
        assert_eq!(verdict(&rec, "effects-read-only"), want, "{mode}: {}", c["summary"]);
        assert_eq!(verdict(&rec, "effects-closed-world"), Pass, "{mode}");
        if want == Fail {
            assert!(c["summary"].as_str().unwrap().contains("git_status declared read-only but changed the sandbox: {repo}/.git/refs/tags/toy-last-status was created"), "{}", c["summary"]);
        }
    }
}

/// Published git servers call the repository parameter `path`: a tool named for git
/// with one is a git tool, aimed through it.
#[test]
fn a_git_tool_whose_repository_parameter_is_path_is_a_git_tool() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(
        &toy("toy-git"),
        &["--repository", "{repo}", "--mode", "no-repo-check", "--repo-param", "path"],
        "packs: [core, git]\n",
    );
    let (rec, _) = record_of(&scratch, &cfg);
    let class = rec["classification"].as_array().unwrap().iter().find(|c| c["tool"] == "git_log").unwrap().clone();
    assert_eq!((class["class"].as_str(), class["param"].as_str()), (Some("git"), Some("path")), "{class}");
    assert_eq!(verdict(&rec, "git-repo-scope"), Fail);
}

/// The write checks' modes of toy-git (with `--write-tools`, under `--active`) →
/// (git-init-scope, git-add-scope, git-ref-options), and the git pack's letter, which the
/// candidates never move: the read-only checks judge as without the tools that write.
const WRITES_EXPECTED: &[(&str, [Verdict; 3], &str)] = &[
    ("safe", [Pass, Pass, Pass], "A"),
    ("init-anywhere", [Fail, Pass, Pass], "A"),
    ("add-unchecked", [Pass, Fail, Pass], "A"),
    ("write-refs-unchecked", [Pass, Pass, Fail], "A"),
    ("refs-unchecked", [Pass, Pass, Fail], "D"),
    // Every write refused: no control worked, so nothing is proven either way.
    ("writes-refused", [Inconclusive, Inconclusive, Inconclusive], "A"),
];
const WRITE_CHECKS: [&str; 3] = ["git-init-scope", "git-add-scope", "git-ref-options"];

/// A run of toy-git with its tools that write, with or without `--active`.
fn writes_run(mode: &str, active: bool) -> (Value, String) {
    let scratch = Scratch::new();
    let args = ["--repository", "{repo}", "--mode", mode, "--write-tools"];
    let cfg = scratch.config_for(&toy("toy-git"), &args, "packs: [core, git]\n");
    let mut run = vec!["run", "--format", "json", "--config", cfg.to_str().unwrap()];
    if active {
        run.push("--active");
    }
    let out = scratch.run(&run);
    let rec: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{mode}: no record ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    common::assert_rederived(&scratch, &rec);
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes");
    assert!(scratch.sandbox_removed(), "mode {mode} left the sandbox");
    let saved = scratch.path().join("record.json");
    std::fs::write(&saved, rec.to_string()).unwrap();
    let text = scratch.run(&["run", "--replay", saved.to_str().unwrap(), "--format", "text"]);
    (rec, String::from_utf8_lossy(&text.stdout).into_owned())
}

#[test]
fn the_write_checks_are_candidates_of_the_git_pack() {
    let scratch = Scratch::new();
    let listed = String::from_utf8(scratch.run(&["list-checks"]).stdout).unwrap();
    for id in WRITE_CHECKS {
        let def = sealmark_engine::registry::check(id).expect("declared");
        assert!(def.candidate && def.is_advisory(), "{id}");
        let line = listed.lines().find(|l| l.starts_with(id)).unwrap_or_else(|| panic!("{id} not listed"));
        assert!(line.contains("git") && line.contains("candidate"), "{line}");
    }
}

/// Each mode breaks one write check, proven by what the harness found on disk and in
/// the repository's index, HEAD and refs; the safe mode passes all three, and a
/// candidate never moves the git pack's letter.
#[test]
fn tools_that_write_are_judged_by_the_repository_they_left() {
    let modes: Vec<&str> = WRITES_EXPECTED.iter().map(|(m, ..)| *m).collect();
    let runs: Vec<(Value, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = modes.iter().map(|m| s.spawn(move || writes_run(m, true))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for ((mode, want, letter), (rec, _)) in WRITES_EXPECTED.iter().zip(&runs) {
        for (id, want) in WRITE_CHECKS.into_iter().zip(want) {
            let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap();
            assert_eq!(verdict(rec, id), *want, "mode {mode}, {id}: {}", c["summary"]);
        }
        assert_eq!(rec["packs"]["git"]["grade"]["letter"], *letter, "mode {mode}: candidates never count");
        if *mode != "writes-refused" {
            assert!(
                !rec["notCovered"].to_string().contains("valid calls of git_init"),
                "{mode}: {}",
                rec["notCovered"]
            );
        }
    }
    assert_eq!(verdict(by_mode_of(&modes, &runs, "write-refs-unchecked"), "git-arg-injection"), Pass);
    let by_mode = |m: &str| by_mode_of(&modes, &runs, m);
    let outcomes = |m: &str, id: &str| -> Vec<String> {
        evidence(by_mode(m), id)
            .iter()
            .filter(|e| e["code"].is_string())
            .map(|e| format!("{} | {}", e["probe"].as_str().unwrap(), e["outcome"].as_str().unwrap()))
            .collect()
    };
    let init = outcomes("init-anywhere", "git-init-scope");
    assert_eq!(init.len(), 5, "every outside spelling made a repository: {init:#?}");
    assert!(init[0].starts_with("absolute in repo_path ({canary}/sm-init) | a repository was created outside {repo}: a repository at {canary}/sm-init"), "{init:#?}");
    let add = outcomes("add-unchecked", "git-add-scope");
    assert!(
        add.iter().any(|o| o.starts_with("link in files (sm-link/secret.md)")
            && o.contains("the object database holds the content of the canary repositories' secret.md")),
        "{add:#?}"
    );
    assert!(add[0].contains("the index holds {canary}/secret.txt as secret.txt"), "{add:#?}");
    let refs = outcomes("write-refs-unchecked", "git-ref-options");
    for seen in
        ["HEAD names refs/heads/sm-option-branch", "HEAD is detached", "README.md's uncommitted line was discarded"]
    {
        assert!(refs.iter().any(|o| o.contains(seen)), "{seen} not among {refs:#?}");
    }
    // git branch takes --set-upstream-to= as an option: create_branch fails on its own.
    let upstream = evidence(by_mode("write-refs-unchecked"), "git-ref-options")
        .iter()
        .find(|e| e["tool"] == "git_create_branch" && e["code"].is_string())
        .cloned()
        .expect("git_create_branch fails too");
    assert_eq!(upstream["probe"], "upstream in branch_name (--set-upstream-to=sm-hidden)");
    assert!(upstream["outcome"].as_str().unwrap().contains("main's upstream was set to sm-hidden"), "{upstream}");
    let refused = by_mode("writes-refused");
    let summary =
        |id: &str| refused["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()["summary"].clone();
    assert!(summary("git-init-scope").as_str().unwrap().starts_with("no tool created a repository inside {repo}"));
    // The safe mode's pass rests on its controls: a repository made and a file staged inside {repo}.
    let safe = by_mode("safe");
    let controls = |id: &str| -> Vec<String> {
        evidence(safe, id)
            .iter()
            .filter(|e| e["probe"].as_str().unwrap().starts_with("control"))
            .map(|e| e["outcome"].to_string())
            .collect()
    };
    assert!(
        controls("git-init-scope")[0].contains("a repository at {repo}/sm-init-control"),
        "{:?}",
        controls("git-init-scope")
    );
    assert!(controls("git-add-scope")[0].contains("sm-stage-control.txt staged"), "{:?}", controls("git-add-scope"));
}

/// Without --active nothing that writes is called: the three checks are n/a naming
/// the tools they would call, and the report says what was skipped.
#[test]
fn without_active_the_tools_that_write_are_named_and_left_alone() {
    let (rec, text) = writes_run("init-anywhere", false);
    for id in WRITE_CHECKS {
        assert_eq!(verdict(&rec, id), Verdict::Na, "{id}");
    }
    let summary =
        |id: &str| rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()["summary"].clone();
    assert_eq!(
        summary("git-init-scope"),
        "runs only with --active: these probes make the server write (it would call git_init)"
    );
    assert!(summary("git-ref-options").as_str().unwrap().ends_with("(it would call git_checkout, git_create_branch)"));
    assert!(text.contains("[N/A ] Repositories are created only inside the served one — runs only with --active: these probes make the server write (it would call git_init)"), "{text}");
    assert!(text.contains("probed only with --active"), "{text}");
    let gaps = rec["notCovered"].to_string();
    assert!(gaps.contains("git_init, git_add, git_checkout, git_create_branch write to the repository; git-init-scope, git-add-scope and git-ref-options call them only with --active"), "{gaps}");
    assert!(rec["observations"]["git"]["writes"]["init"].as_array().unwrap().is_empty(), "no write call was made");
}

fn by_mode_of<'r>(modes: &[&str], runs: &'r [(Value, String)], mode: &str) -> &'r Value {
    &runs[modes.iter().position(|m| *m == mode).expect("mode in table")].0
}

#[test]
fn the_tables_are_the_registrys_and_fail_every_check() {
    use sealmark_engine::model::Pack;
    let checks: Vec<&str> = READ_CHECKS.into_iter().chain(WRITE_CHECKS).collect();
    // A run without the tools that write judges only the read checks, and the other way round.
    let reads = EXPECTED.iter().map(|(m, v)| (*m, [v.as_slice(), &[Pass; 3]].concat()));
    let writes = WRITES_EXPECTED.iter().map(|(m, v, _)| (*m, [&[Pass; 2], v.as_slice()].concat()));
    common::assert_table_covers_registry(&checks, &[Pack::Git], &reads.chain(writes).collect::<Vec<_>>());
}
