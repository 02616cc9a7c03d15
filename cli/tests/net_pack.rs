//! The net pack through the real binary: each toy fetch server mode gets the verdicts
//! the table expects, with the deciding rule or the listener's record in the evidence.

mod common;

use common::{Scratch, record_of, toy, verdict};
use sealmark_engine::model::Verdict::{self, Fail, Inconclusive, Pass};

const CHECKS: [&str; 3] = ["net-loopback-ssrf", "net-scheme-allowlist", "net-oversized-reply"];

/// With `net.control_url` on the listener (and the server allowed to fetch it):
/// mode → verdicts for ssrf, schemes, oversized.
const WITH_CONTROL: &[(&str, [Verdict; 3])] = &[
    ("good", [Pass, Pass, Pass]),
    ("unguarded", [Fail, Fail, Fail]),
    ("localhost-only", [Fail, Fail, Pass]),
    ("follows-redirects", [Fail, Pass, Pass]),
    ("fetches-file", [Pass, Fail, Pass]),
    ("buffers-whole", [Pass, Pass, Fail]),
    ("guarded-vague", [Pass, Pass, Pass]),
];

/// Without a control URL, refusals alone decide.
const WITHOUT_CONTROL: &[(&str, [Verdict; 3])] = &[
    ("good", [Pass, Pass, Inconclusive]),
    ("guarded-vague", [Inconclusive, Inconclusive, Inconclusive]),
    // A published fetch server's shape: it fetches (robots.txt first), so a scheme it
    // could not fetch is shown unfetched; loopback reaches the listener.
    ("robots-first", [Fail, Pass, Pass]),
    // A spelling this machine cannot resolve fails to resolve in the server too: that
    // failed lookup is no evidence, and the explicit refusals of the rest decide.
    ("resolves-first", [Pass, Pass, Inconclusive]),
    // Loopback refused for its address before any scheme is looked at: the far twins
    // (a .invalid host) are refused for their scheme, which shows the rest.
    ("address-first", [Pass, Pass, Inconclusive]),
    // An address guard on http(s) only, and gopher fetched by hand: it reaches the listener.
    ("fetches-gopher", [Pass, Fail, Inconclusive]),
];

const CONTROL: &str = "net:\n  control_url: \"{listener}/control\"\n";

fn run(mode: &str, control: bool) -> serde_json::Value {
    let scratch = Scratch::new();
    let cfg = if control {
        scratch.config_for(&toy("toy-fetch"), &["--mode", mode, "--allow", "{listener}/control"], CONTROL)
    } else {
        scratch.config_for(&toy("toy-fetch"), &["--mode", mode], "")
    };
    let (rec, _) = record_of(&scratch, &cfg);
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes");
    rec
}

fn check(mode: &str, control: bool) -> serde_json::Value {
    let table = if control { WITH_CONTROL } else { WITHOUT_CONTROL };
    let want = table.iter().find(|(m, _)| *m == mode).expect("mode in table").1;
    let rec = run(mode, control);
    for (id, want) in CHECKS.iter().zip(want) {
        let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == *id).unwrap();
        assert_eq!(verdict(&rec, id), want, "mode {mode} (control {control}), {id}: {}", c["summary"]);
        let first = &c["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["code"] != "net.control.ok")
            .cloned()
            .unwrap_or_default();
        match want {
            Fail => assert!(
                first["verifiedBy"] == "listener" || first["outcome"].as_str().unwrap().contains("came back"),
                "mode {mode}, {id}: a fail is proven by the listener or a secret: {first}"
            ),
            Pass if !control && *id == "net-loopback-ssrf" => {
                assert!(first["outcome"].as_str().unwrap().contains("(rule "), "the deciding rule is named: {first}")
            }
            Pass if *id == "net-scheme-allowlist" => {
                assert!(first["outcome"].as_str().unwrap().starts_with("not fetched: "), "the proof is named: {first}")
            }
            _ => {}
        }
    }
    rec
}

#[test]
fn good_guard_passes_with_a_control_url() {
    let rec = check("good", true);
    let blind = rec["notCovered"].as_array().unwrap();
    assert!(blind.iter().any(|l| l.as_str().unwrap().starts_with("SSRF beyond the corpus")), "{blind:?}");
}

#[test]
fn good_guard_passes_on_its_refusals_alone() {
    let rec = check("good", false);
    let ssrf = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-loopback-ssrf").unwrap().clone();
    assert!(
        ssrf["evidence"][0]["outcome"].as_str().unwrap().starts_with("refused, names the address class (rule 2)"),
        "{}",
        ssrf["evidence"][0]
    );
}

/// A guard that refuses loopback before it looks at the scheme passes on the far twins:
/// the gopher spelling's line names its twin, and the twin's own line says why.
#[test]
fn an_address_guard_in_front_of_a_scheme_rule_passes_on_the_far_twins() {
    let rec = check("address-first", false);
    let check = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-scheme-allowlist").unwrap().clone();
    let line = |probe: &str| {
        let e = check["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["probe"].as_str().unwrap().starts_with(&format!("{probe}: ")));
        e.unwrap_or_else(|| panic!("no {probe} line: {check}"))["outcome"].as_str().unwrap().to_string()
    };
    assert!(line("gopher").contains("its far twin (the same scheme at a .invalid host"), "{}", line("gopher"));
    assert!(line("gopher-far").starts_with("refused for its scheme: \"Only http and https"), "{}", line("gopher-far"));
}

/// A server that fetches gopher still fails on the listener's spelling; the far twin,
/// whose host resolves nowhere, reaches nothing and fails nothing.
#[test]
fn fetching_gopher_fails_the_scheme_check_behind_an_http_guard() {
    let rec = check("fetches-gopher", false);
    let check = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-scheme-allowlist").unwrap().clone();
    assert!(check["summary"].as_str().unwrap().ends_with("were fetched: gopher on fetch"), "{}", check["summary"]);
}

#[test]
fn unguarded_fetcher_fails_everything() {
    check("unguarded", true);
}

#[test]
fn a_guard_on_the_string_localhost_fails() {
    let rec = check("localhost-only", true);
    let ssrf = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-loopback-ssrf").unwrap().clone();
    assert!(ssrf["summary"].as_str().unwrap().contains("ipv4 on fetch"), "{}", ssrf["summary"]);
}

#[test]
fn following_redirects_to_loopback_fails() {
    let rec = check("follows-redirects", true);
    let ssrf = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-loopback-ssrf").unwrap().clone();
    assert!(ssrf["summary"].as_str().unwrap().contains("redirect on fetch"), "{}", ssrf["summary"]);
}

#[test]
fn reading_file_urls_fails_the_scheme_check() {
    check("fetches-file", true);
}

#[test]
fn buffering_the_whole_reply_fails() {
    check("buffers-whole", true);
}

#[test]
fn a_reply_that_only_reports_a_failed_fetch_is_inconclusive_without_a_control() {
    let rec = check("guarded-vague", false);
    let ssrf = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-loopback-ssrf").unwrap().clone();
    assert!(
        ssrf["summary"].as_str().unwrap().contains("a reply that only reports a failed fetch is not read as a refusal")
    );
    assert!(
        ssrf["evidence"][0]["outcome"]
            .as_str()
            .unwrap()
            .contains("reports a failed fetch, not a refused target (rule 3)")
    );
}

#[test]
fn the_same_vague_guard_passes_once_a_control_fetch_works() {
    check("guarded-vague", true);
}

#[test]
fn a_fetcher_that_checks_robots_first_fails_ssrf_and_passes_schemes() {
    let rec = check("robots-first", false);
    let schemes = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-scheme-allowlist").unwrap().clone();
    let file = schemes["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["probe"].as_str().unwrap().starts_with("file:"))
        .unwrap();
    assert!(file["outcome"].as_str().unwrap().contains("Failed to fetch robots.txt file:///robots.txt"), "{file}");
}

#[test]
fn a_spelling_the_machine_cannot_resolve_is_not_judged_by_its_failure() {
    let rec = check("resolves-first", false);
    let ssrf = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-loopback-ssrf").unwrap().clone();
    // On a machine whose resolver refuses `localhost.`, that probe is set aside, said so.
    let dot = ssrf["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["probe"].as_str().unwrap().starts_with("localhost-dot:"))
        .unwrap();
    let outcome = dot["outcome"].as_str().unwrap();
    assert!(outcome.starts_with("not judged: this machine cannot resolve") || outcome.starts_with("refused"), "{dot}");
}

/// A control URL on loopback, refused as loopback by a guarded tool, is the defence at
/// work: the advice to set one never makes a correct server worse.
#[test]
fn a_loopback_control_refused_as_loopback_is_no_failed_control() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(&toy("toy-fetch"), &["--mode", "good"], CONTROL);
    let (rec, _) = record_of(&scratch, &cfg);
    let ssrf = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "net-loopback-ssrf").unwrap().clone();
    assert_eq!(verdict(&rec, "net-loopback-ssrf"), Pass, "{}", ssrf["summary"]);
    assert_eq!(verdict(&rec, "net-scheme-allowlist"), Pass);
    assert!(ssrf["evidence"].as_array().unwrap().iter().any(|e| e["code"] == "net.control.refused"), "{ssrf}");
}

#[test]
fn a_read_only_fetch_tool_is_judged_by_the_effects_pack() {
    for (mode, want) in [("good", Pass), ("caches-in-home", Fail)] {
        let scratch = Scratch::new();
        let cfg = scratch.config_for(&toy("toy-fetch"), &["--mode", mode], "");
        let (rec, _) = record_of(&scratch, &cfg);
        let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "effects-read-only").unwrap().clone();
        assert_eq!(verdict(&rec, "effects-read-only"), want, "{mode}: {}", c["summary"]);
        if want == Fail {
            assert!(c["summary"].as_str().unwrap().contains("{sandbox_home}/.fetch-cache was"), "{}", c["summary"]);
        }
    }
}

#[test]
fn net_reports_are_byte_identical() {
    let scratch = Scratch::new();
    let cfg = scratch.config_for(&toy("toy-fetch"), &["--mode", "unguarded", "--allow", "{listener}/control"], CONTROL);
    let a = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    let b = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    assert_eq!(String::from_utf8_lossy(&a.stdout), String::from_utf8_lossy(&b.stdout));
    assert!(String::from_utf8_lossy(&a.stdout).contains("listener 127.0.0.1:{listener_port}"));
}

#[test]
fn the_table_is_the_registrys_and_fails_every_check() {
    use sealmark_engine::model::Pack;
    let rows: Vec<(&str, Vec<Verdict>)> =
        WITH_CONTROL.iter().chain(WITHOUT_CONTROL).map(|(m, v)| (*m, v.to_vec())).collect();
    common::assert_table_covers_registry(&CHECKS, &[Pack::Net], &rows);
}
