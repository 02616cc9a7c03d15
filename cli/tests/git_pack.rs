//! The git pack through the real binary: the toy git server in each mode against the
//! repositories the harness owns. Each mode breaks exactly one thing, and the evidence
//! names what was observed (the canary repository's content, a file `--output=` made,
//! the hidden branch, a tag a read-only tool wrote).

mod common;

use common::{Scratch, record_of, toy_git, verdict};
use sealmark_engine::model::Verdict::{self, Fail, Pass};
use serde_json::Value;

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
    let cfg = scratch.config_for(&toy_git(), &["--repository", "{repo}", "--mode", mode], "packs: [core, git]\n");
    let (rec, _) = record_of(&scratch, &cfg);
    for (id, want) in ["git-repo-scope", "git-arg-injection"].into_iter().zip(want) {
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
    let cfg =
        scratch.config_for(&toy_git(), &["--repository", "/nonexistent", "--mode", "safe"], "packs: [core, git]\n");
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
            &toy_git(),
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
        &toy_git(),
        &["--repository", "{repo}", "--mode", "no-repo-check", "--repo-param", "path"],
        "packs: [core, git]\n",
    );
    let (rec, _) = record_of(&scratch, &cfg);
    let class = rec["classification"].as_array().unwrap().iter().find(|c| c["tool"] == "git_log").unwrap().clone();
    assert_eq!((class["class"].as_str(), class["param"].as_str()), (Some("git"), Some("path")), "{class}");
    assert_eq!(verdict(&rec, "git-repo-scope"), Fail);
}
