//! The CI integration as CI runs it: `scripts/action-run` (the run step of action.yml and
//! of the GitLab template) against toy servers, with the files GitHub gives a step; the
//! SARIF it writes against the published 2.1.0 schema, and the job summary as
//! GitHub-flavoured markdown. The release workflow's archives against the names cargo
//! binstall looks for, and the check that gates a release.

mod common;

use common::{Scratch, sealmark};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs the action's step on `cfg`, as a GitHub runner would.
fn step(scratch: &Scratch, cfg: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(repo().join("scripts/action-run"));
    cmd.env("SEALMARK", sealmark())
        .env("SEALMARK_CONFIG", cfg)
        .env("SEALMARK_OUT", scratch.path().join("report"))
        .env("SEALMARK_ARGS", "--pack core,fs")
        .env("GITHUB_STEP_SUMMARY", scratch.path().join("summary.md"))
        .env("GITHUB_OUTPUT", scratch.path().join("outputs.txt"))
        .env("TMPDIR", scratch.path().join("tmp"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("scripts/action-run runs")
}

fn sarif_validator() -> jsonschema::Validator {
    // As the engine's SARIF test: the published schema with its stray `]` mended.
    let text = std::fs::read_to_string(repo().join("engine/testdata/sarif-2.1.0-rtm.5.json"))
        .unwrap()
        .replace("^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$", "^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
    jsonschema::draft4::new(&serde_json::from_str(&text).unwrap()).expect("the schema compiles")
}

#[test]
fn the_action_step_grades_a_server_writes_sarif_a_summary_and_outputs_and_exits_by_the_gate() {
    let scratch = Scratch::new();
    let cfg = scratch.config("good", "");
    let o = step(&scratch, &cfg, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("every graded pack met the A gate"), "{err}");
    let report = scratch.path().join("report");
    for f in ["index.html", "viewer.wasm", "sealmark-report.json", "sealmark-report.junit.xml"] {
        assert!(report.join(f).is_file(), "{f}");
    }
    let outputs = std::fs::read_to_string(scratch.path().join("outputs.txt")).unwrap();
    assert!(outputs.contains("exit-code=0\n"), "{outputs}");
    assert!(outputs.contains(&format!("sarif={}/sealmark-report.sarif", report.display())), "{outputs}");

    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("sealmark-report.sarif")).unwrap()).unwrap();
    let errors: Vec<String> =
        sarif_validator().iter_errors(&sarif).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{errors:#?}");

    // The job summary is the markdown report, and reads as GitHub-flavoured markdown: a
    // grade table whose rows are the packs, a table per pack, no stray HTML.
    let summary = std::fs::read_to_string(scratch.path().join("summary.md")).unwrap();
    assert_eq!(summary, std::fs::read_to_string(report.join("sealmark-report.md")).unwrap());
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut tables = Vec::new();
    let (mut rows, mut in_table) = (0, false);
    for ev in Parser::new_ext(&summary, Options::ENABLE_TABLES) {
        match ev {
            Event::Start(Tag::Table(_)) => (rows, in_table) = (0, true),
            Event::Start(Tag::TableRow) if in_table => rows += 1,
            Event::End(TagEnd::Table) => {
                tables.push(rows);
                in_table = false;
            }
            Event::Html(h) | Event::InlineHtml(h) => {
                assert!(
                    ["<details>", "<summary>", "</summary>", "</details>"].iter().any(|t| h.contains(t)),
                    "raw HTML {h}"
                )
            }
            _ => {}
        }
    }
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("sealmark-report.json")).unwrap()).unwrap();
    assert_eq!(tables[0], record["packs"].as_object().unwrap().len(), "one grade row per pack: {summary}");
    assert!(tables.len() >= 3, "a table per graded pack: {tables:?}");

    // A flaw fails the job: at once, or (as the action runs it) after the uploads.
    let flawed = scratch.config("env-echo", "");
    let o = step(&scratch, &flawed, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(scratch.path().join("outputs.txt")).unwrap();
    let deferred = step(&scratch, &flawed, &[("SEALMARK_DEFER_EXIT", "1")]);
    assert_eq!(deferred.status.code(), Some(0));
    let outputs = std::fs::read_to_string(scratch.path().join("outputs.txt")).unwrap();
    assert!(
        outputs
            .trim_end()
            .ends_with(&format!("sarif={}/sealmark-report.sarif", scratch.path().join("report").display()))
    );
    assert!(outputs.contains("exit-code=1\n"), "{outputs}");
}

#[test]
fn the_action_and_the_gitlab_template_run_that_step_and_gate_after_the_uploads() {
    let action: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(repo().join("action.yml")).unwrap()).unwrap();
    assert_eq!(action["runs"]["using"], "composite");
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let uses: Vec<&str> = steps.iter().filter_map(|s| s["uses"].as_str()).collect();
    assert!(uses.iter().any(|u| u.starts_with("github/codeql-action/upload-sarif@")), "{uses:?}");
    assert!(uses.iter().any(|u| u.starts_with("actions/upload-artifact@")), "{uses:?}");
    let run = steps.iter().find(|s| s["id"] == "run").unwrap();
    assert!(run["run"].as_str().unwrap().contains("scripts/action-run"));
    assert_eq!(run["env"]["SEALMARK_DEFER_EXIT"], "1", "the uploads run before the gate");
    let last = steps.last().unwrap();
    assert!(last["run"].as_str().unwrap().contains("steps.run.outputs.exit-code"), "the job fails by the gate");
    let gitlab: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(repo().join("ci/gitlab/sealmark.gitlab-ci.yml")).unwrap())
            .unwrap();
    let script: Vec<&str> =
        gitlab["sealmark"]["script"].as_sequence().unwrap().iter().filter_map(|s| s.as_str()).collect();
    assert!(script.iter().any(|s| s.contains("scripts/action-run")), "{script:?}");
    assert_eq!(gitlab["sealmark"]["artifacts"]["reports"]["junit"], "sealmark-report/sealmark-report.junit.xml");
}

/// The `sealmark` package as `cargo metadata` reads cli/Cargo.toml.
fn package_metadata() -> serde_json::Value {
    let o = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--locked"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    meta["packages"].as_array().unwrap().iter().find(|p| p["name"] == "sealmark").unwrap().clone()
}

#[test]
fn a_release_builds_every_platform_and_names_its_archives_as_cargo_binstall_expects() {
    let text = std::fs::read_to_string(repo().join(".github/workflows/release.yml")).unwrap();
    let flow: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    let tags = &flow["on"]["push"]["tags"][0];
    assert!(tags.as_str().is_some_and(|t| t.starts_with('v')), "{tags:?}");
    let create = flow["jobs"]["create-release"]["steps"].as_sequence().unwrap();
    assert!(
        create.iter().any(|s| s["run"].as_str().is_some_and(|r| r.starts_with("scripts/release-check "))),
        "the release is gated by scripts/release-check"
    );

    let job = &flow["jobs"]["upload-assets"];
    let targets: Vec<&str> = job["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "x86_64-apple-darwin", "aarch64-apple-darwin"]
    );
    let steps = job["steps"].as_sequence().unwrap();
    let upload = steps
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("taiki-e/upload-rust-binary-action@")))
        .expect("an upload step");
    let with = &upload["with"];
    assert_eq!(with["checksum"].as_str(), Some("sha256"));
    assert_eq!(with["bin"].as_str(), Some("sealmark"));
    assert_eq!(with["locked"].as_bool(), Some(true));
    let grade =
        steps.iter().position(|s| s["run"].as_str().is_some_and(|r| r.contains("scripts/demo"))).expect("a grade");
    let upload_at = steps.iter().position(|s| s == upload).unwrap();
    assert!(grade < upload_at, "each binary grades the toy server before it is attached");

    // The archive the action names ($bin-$target, .tar.gz on these platforms) is the one
    // binstall's template asks for, with the binary at its top.
    let package = package_metadata();
    let binstall = &package["metadata"]["binstall"];
    assert_eq!(binstall["pkg-fmt"], "tgz");
    assert_eq!(binstall["bin-dir"], "{ bin }{ binary-ext }");
    for target in targets {
        let archive = with["archive"].as_str().unwrap().replace("$bin", "sealmark").replace("$target", target);
        let url = binstall["pkg-url"]
            .as_str()
            .unwrap()
            .replace("{ repo }", "https://github.com/o/sealmark")
            .replace("{ version }", package["version"].as_str().unwrap())
            .replace("{ name }", "sealmark")
            .replace("{ target }", target)
            .replace("{ archive-suffix }", ".tar.gz");
        assert_eq!(
            url,
            format!(
                "https://github.com/o/sealmark/releases/download/v{}/{archive}.tar.gz",
                package["version"].as_str().unwrap()
            )
        );
    }
}

#[test]
fn a_release_is_refused_for_a_tag_that_is_not_the_version_or_a_repository_not_named_in_cargo_toml() {
    let version = package_metadata()["version"].as_str().unwrap().to_string();
    let check = |tag: &str, repository: Option<&str>| {
        let mut cmd = Command::new(repo().join("scripts/release-check"));
        cmd.arg(tag).env_remove("GITHUB_REPOSITORY");
        if let Some(r) = repository {
            cmd.env("GITHUB_REPOSITORY", r);
        }
        cmd.output().unwrap()
    };
    // The version and repository pass; the viewer bundle's freshness, checked last, is
    // scripts/test's own first check.
    let o = check(&format!("v{version}"), None);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("v{version} is the version and the repository is named")), "{out}");

    let o = check("v99.0.0", None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("the tag is v99.0.0 but Cargo.toml's version is {version}")), "{err}");

    let o = check(&format!("v{version}"), Some("someone/else"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("Set repository = \"https://github.com/someone/else\""), "{err}");
}
