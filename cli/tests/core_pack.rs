//! Every core check passes on the well-behaved toy server and fails (or scores part)
//! on the mode that has exactly the flaw it exists to catch. Through the real binary.

mod common;

use common::{Scratch, record, verdict};
use sealmark_engine::model::Verdict::{self, Fail, Part};

/// The core checks, in registry order.
const CORE: [&str; 6] =
    ["handshake", "tool-poisoning", "robust-input", "secret-echo", "refusal-quality", "instructions-hygiene"];

/// Server mode × check → expected verdict. Checks a row does not name must pass.
const EXPECTED: &[(&str, &[(&str, Verdict)])] = &[
    ("good", &[]),
    ("poisoned", &[("tool-poisoning", Fail)]),
    ("poisoned-prompt", &[("tool-poisoning", Fail)]),
    ("poisoned-resource", &[("tool-poisoning", Fail)]),
    ("env-echo", &[("secret-echo", Fail)]),
    ("env-echo-base64", &[("secret-echo", Fail)]),
    ("crash-on-bad-input", &[("robust-input", Fail)]),
    ("accepts-anything", &[("robust-input", Part), ("refusal-quality", Part)]),
    ("malformed-schema", &[("handshake", Fail)]),
    ("bad-version", &[("handshake", Fail)]),
    ("vague-errors", &[("refusal-quality", Fail)]),
    ("bossy-instructions", &[("instructions-hygiene", Fail)]),
    // An echo in a file listing of the fs pack, not in robust-input's answers.
    ("env-in-listing", &[("secret-echo", Fail)]),
    // Refusals as JSON-RPC errors are answers: secret-echo has read them all.
    ("rpc-errors", &[]),
];

fn check_mode(mode: &str) {
    let row = EXPECTED.iter().find(|(m, _)| *m == mode).expect("mode in table").1;
    let scratch = Scratch::new();
    let (rec, _) = record(&scratch, mode, "");
    for id in CORE {
        let want = row.iter().find(|(c, _)| *c == id).map_or(Verdict::Pass, |(_, v)| *v);
        let check = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap();
        assert_eq!(verdict(&rec, id), want, "mode {mode}, check {id}: {}", check["summary"]);
        if want != Verdict::Pass {
            assert!(
                !check["evidence"].as_array().unwrap().is_empty(),
                "mode {mode}, check {id}: a verdict needs evidence"
            );
        }
    }
    assert!(scratch.survivors().is_empty(), "mode {mode} left processes: {:?}", scratch.survivors());
    assert!(scratch.sandbox_removed(), "mode {mode}: sandbox not removed");
}

#[test]
fn good_server_passes_every_core_check() {
    check_mode("good");
}

#[test]
fn poisoned_description_fails_tool_poisoning() {
    check_mode("poisoned");
}

#[test]
fn poisoned_prompt_fails_tool_poisoning() {
    check_mode("poisoned-prompt");
}

#[test]
fn poisoned_resource_fails_tool_poisoning() {
    check_mode("poisoned-resource");
}

#[test]
fn echoed_environment_fails_secret_echo() {
    check_mode("env-echo");
}

#[test]
fn base64_echoed_environment_fails_secret_echo() {
    check_mode("env-echo-base64");
}

#[test]
fn crash_on_bad_input_fails_robust_input() {
    check_mode("crash-on-bad-input");
}

#[test]
fn accepting_wrong_types_scores_part_on_robust_input() {
    check_mode("accepts-anything");
}

#[test]
fn malformed_schema_fails_handshake() {
    check_mode("malformed-schema");
}

#[test]
fn unpublished_protocol_version_fails_handshake() {
    check_mode("bad-version");
}

#[test]
fn vague_errors_fail_refusal_quality() {
    check_mode("vague-errors");
}

#[test]
fn steering_instructions_fail_instructions_hygiene() {
    check_mode("bossy-instructions");
}

#[test]
fn an_echo_in_another_packs_answer_fails_secret_echo() {
    check_mode("env-in-listing");
    let scratch = Scratch::new();
    let (rec, _) = record(&scratch, "env-in-listing", "");
    let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "secret-echo").unwrap().clone();
    assert!(c["summary"].as_str().unwrap().contains("on list_dir"), "{}", c["summary"]);
}

#[test]
fn refusals_sent_as_json_rpc_errors_still_let_secret_echo_pass() {
    check_mode("rpc-errors");
    let scratch = Scratch::new();
    let (rec, _) = record(&scratch, "rpc-errors", "");
    let robust = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == "robust-input").unwrap().clone();
    assert!(
        robust["evidence"].as_array().unwrap().iter().all(|e| !e["outcome"].as_str().unwrap().contains("isError")),
        "every robust-input answer is a JSON-RPC error: {robust}"
    );
}

#[test]
fn the_table_covers_every_core_check_failing() {
    for id in CORE {
        assert!(
            EXPECTED.iter().any(|(_, row)| row.iter().any(|(c, v)| *c == id && *v == Fail)),
            "no fixture mode makes {id} fail"
        );
    }
}

#[test]
fn grades_follow_the_formula() {
    let scratch = Scratch::new();
    let (good, code) = record(&scratch, "good", "");
    assert_eq!(code, 0);
    assert_eq!(good["packs"]["core"]["grade"]["letter"], "A");
    assert_eq!(good["packs"]["core"]["grade"]["points"], 4);
    // A critical fail (secret-echo) with 3 of 4 points caps a B at D.
    let (echo, code) = record(&scratch, "env-echo", "");
    assert_eq!(code, 1);
    let g = &echo["packs"]["core"]["grade"];
    assert_eq!((g["raw"].as_str(), g["letter"].as_str(), g["capped"].as_bool()), (Some("B"), Some("D"), Some(true)));
    assert_eq!(g["criticalFails"], serde_json::json!(["secret-echo"]));
}

#[test]
fn the_table_is_the_registrys_and_fails_every_check() {
    use sealmark_engine::model::Pack;
    let rows: Vec<(&str, Vec<Verdict>)> = common::sparse_rows(&CORE, EXPECTED);
    common::assert_table_covers_registry(&CORE, &[Pack::Core], &rows);
}
