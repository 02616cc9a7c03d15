//! Property tests over what a hostile server or a careless user can hand sealmark: the
//! stdout line reader, the JSON-RPC session's message handling, the config parser and
//! the saved-record reader. No input may panic; the session never takes an answer to an
//! id it did not send.
//!
//! CI runs a few cases per property (seconds); `scripts/fuzz CASES` runs many more.
//! `PROPTEST_CASES` sets the count.

use crate::session::process::{Line, read_lines};
use crate::session::{Reply, Session, Wire};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

/// Cases per property: `PROPTEST_CASES`, or a count that keeps the test run brief.
fn cases() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(48);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Bytes a JSON reader finds hard: structure, quotes, escapes, newlines, multi-byte
/// and invalid UTF-8, and long runs of one of them.
fn wire_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            b"{".to_vec(),
            b"}".to_vec(),
            b"[".to_vec(),
            b"]".to_vec(),
            b"\"".to_vec(),
            b"\\".to_vec(),
            b"\n".to_vec(),
            b"\r\n".to_vec(),
            b":".to_vec(),
            b",".to_vec(),
            b"0".to_vec(),
            b"\"id\":".to_vec(),
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n".to_vec(),
            "\u{202e}é".as_bytes().to_vec(),
            vec![0xff, 0xfe, 0x00],
        ]),
        (prop::sample::select(vec![b'[', b'{', b'x', b'"']), 1usize..200_000).prop_map(|(b, n)| vec![b; n]),
    ];
    prop::collection::vec(piece, 0..64).prop_map(|pieces| pieces.concat())
}

/// JSON values shaped like JSON-RPC messages, and not.
fn message() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[a-z\u{1b}\u{202e}]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(
                prop::sample::select(vec!["id", "method", "params", "result", "error", "jsonrpc", "code", "x"]),
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        ]
    })
}

/// What a hostile server sends around the one answer the harness waits for.
#[derive(Debug, Clone)]
enum Sent {
    Any(Value),
    /// An answer to an id the harness never sent.
    Forged(i64),
    /// A request of the server's own.
    Asks(String),
    Notification,
    Junk(String),
    /// An oversized line that names another id.
    TooLargeFor(i64),
}

fn sent() -> impl Strategy<Value = Sent> {
    prop_oneof![
        message().prop_map(Sent::Any),
        any::<i64>().prop_map(Sent::Forged),
        prop::sample::select(vec!["roots/list", "sampling/createMessage", "ping", "elicitation/create"])
            .prop_map(|m| Sent::Asks(m.to_string())),
        Just(Sent::Notification),
        "\\PC{0,40}".prop_map(Sent::Junk),
        any::<i64>().prop_map(Sent::TooLargeFor),
    ]
}

fn line_of(sent: &Sent) -> Line {
    match sent {
        Sent::Any(v) => Line::Json(v.clone()),
        Sent::Forged(id) => Line::Json(json!({"jsonrpc": "2.0", "id": id, "result": {"forged": true}})),
        Sent::Asks(method) => Line::Json(json!({"jsonrpc": "2.0", "id": "ask-1", "method": method})),
        Sent::Notification => Line::Json(json!({"jsonrpc": "2.0", "method": "notifications/message"})),
        Sent::Junk(text) => Line::Garbage(text.clone()),
        Sent::TooLargeFor(id) => Line::TooLarge { bytes: 9 << 20, id: Some(json!(id)), ends: String::new() },
    }
}

/// A runtime whose clock jumps ahead whenever every task waits, so timeouts cost nothing.
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().expect("runtime")
}

/// Sends one request to a scripted server that reads it, then sends `before`, the
/// answer (when `answer`), and `after`; returns the reply and the session.
fn exchange(before: Vec<Sent>, answer: bool, after: Vec<Sent>) -> (Reply, Session) {
    paused_runtime().block_on(async move {
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (tx, rx) = tokio::sync::mpsc::channel(2);
        let (_exit_tx, exited) = tokio::sync::watch::channel(None);
        let mut session = Session::new(Wire::stdio(client_end, rx, exited), Duration::from_secs(10), Arc::default());
        tokio::spawn(async move {
            let mut input = tokio::io::BufReader::new(server_end).lines();
            let Ok(Some(request)) = input.next_line().await else { return };
            let id = serde_json::from_str::<Value>(&request).expect("the harness sends JSON")["id"].clone();
            let lines = before
                .iter()
                .map(line_of)
                .chain(answer.then(|| Line::Json(json!({"jsonrpc": "2.0", "id": id, "result": {"marker": 7}}))))
                .chain(after.iter().map(line_of));
            for line in lines {
                if tx.send(line).await.is_err() {
                    return;
                }
            }
            // Keep reading what the harness answers, and keep stdout open.
            while let Ok(Some(_)) = input.next_line().await {}
            let _keep = tx;
            std::future::pending::<()>().await;
        });
        let reply = session.request("tools/list", Value::Null, "tools/list").await;
        (reply, session)
    })
}

proptest! {
    #![proptest_config(cases())]

    /// Any byte stream, in any chunks: every line is read or named too large, none is
    /// held whole beyond the bound, and nothing panics.
    #[test]
    fn the_line_reader_takes_any_bytes(bytes in wire_bytes(), chunk in 1usize..70_000) {
        let newlines = bytes.iter().filter(|b| **b == b'\n').count();
        let lines = paused_runtime().block_on(async move {
            let (mut writer, reader) = tokio::io::duplex(1 << 16);
            let (tx, mut rx) = tokio::sync::mpsc::channel(4);
            tokio::spawn(read_lines(reader, tx));
            tokio::spawn(async move {
                for piece in bytes.chunks(chunk) {
                    if writer.write_all(piece).await.is_err() {
                        return;
                    }
                }
            });
            let mut lines = Vec::new();
            while let Some(line) = rx.recv().await {
                lines.push(line);
            }
            lines
        });
        prop_assert!(lines.len() <= newlines + 1);
        for line in &lines {
            match line {
                Line::Json(v) => prop_assert!(crate::session::json_cost::of_value(v) <= 2 * crate::session::json_cost::MESSAGE_BUDGET),
                Line::Garbage(g) => prop_assert!(g.chars().count() <= 201),
                Line::TooLarge { bytes, ends, .. } => prop_assert!(*bytes > 0 && ends.len() <= 3 * 64 * 1024),
            }
        }
    }

    /// Whatever surrounds it, the answer to the id sent is the reply, and nothing else
    /// is: forged answers are dropped and counted, requests and notifications are noted.
    #[test]
    fn the_session_takes_only_the_answer_it_asked_for(
        before in prop::collection::vec(sent(), 0..24),
        answer in any::<bool>(),
        after in prop::collection::vec(sent(), 0..8),
    ) {
        let forged = before.iter().chain(&after).filter(|s| matches!(s, Sent::Forged(_))).count() as u64;
        let before_has_forged = before.iter().filter(|s| matches!(s, Sent::Forged(_))).count() as u64;
        let (reply, session) = exchange(before, answer, after);
        if answer {
            prop_assert_eq!(reply, Reply::Result(json!({"marker": 7})));
            prop_assert!(session.unasked.unsolicited_answers >= before_has_forged);
        } else {
            prop_assert_eq!(reply, Reply::Timeout { alive: true });
            prop_assert!(session.unasked.unsolicited_answers >= forged);
        }
    }

    /// Any text as a config: a config or an error naming the file, never a panic.
    #[test]
    fn the_config_parser_takes_any_text(text in config_text()) {
        if let Err(e) = crate::config::parse("fuzz.yaml", &text) {
            prop_assert!(e.to_string().contains("fuzz.yaml"), "{}", e);
        }
    }

    /// A saved record with any part replaced or removed: refused with a reason, or read,
    /// re-graded and rendered in every format without a panic.
    #[test]
    fn the_record_reader_takes_any_record(edits in prop::collection::vec((any::<prop::sample::Index>(), message(), any::<bool>()), 1..6)) {
        let mut record = serde_json::to_value(crate::sample::capped()).expect("a record serialises");
        for (at, value, remove) in edits {
            edit(&mut record, at, value, remove);
        }
        if let Ok(mut saved) = crate::record::read_saved(&record.to_string()) {
            crate::assemble::regrade(&mut saved);
            for rendered in [
                crate::render::text::render(&saved),
                crate::render::markdown::render(&saved),
                crate::render::markdown::summary(&saved),
                crate::render::sarif::render(&saved),
                crate::render::junit::render(&saved),
                crate::render::badge::svg(&saved),
                crate::render::badge::shields(&saved),
            ] {
                prop_assert!(!rendered.is_empty());
            }
        }
    }
}

/// Config text: a valid config cut, spliced and salted with YAML's hard parts, or any
/// text at all.
fn config_text() -> impl Strategy<Value = String> {
    const VALID: &str = "server:\n  name: S\n  command: ./s\n  args: [\"{sandbox}\", \"--db\", \"{dsn}\"]\n  env:\n    K: \"{sqlite}\"\ntimeout_probe_sec: 5\nchecks:\n  fs-large-read:\n    max_bytes: 100\nclassify:\n  read_file: {class: path, param: path}\n";
    let salt = prop::sample::select(vec![
        "\n",
        ": ",
        "- ",
        "  ",
        "{",
        "}",
        "[",
        "]",
        "&a ",
        "*a",
        "!!binary ",
        "<<: ",
        "\"",
        "'",
        "#",
        "\t",
        "~",
        "?",
        "%YAML 1.2\n---\n",
        "\u{0}",
    ]);
    prop_oneof![
        "\\PC{0,200}",
        (0..VALID.len(), 0..VALID.len(), prop::collection::vec(salt, 0..6)).prop_map(|(a, b, salt)| {
            let (a, b) = (a.min(b), a.max(b));
            let cut = |i: usize| (0..=i).rev().find(|i| VALID.is_char_boundary(*i)).unwrap_or(0);
            format!("{}{}{}", &VALID[..cut(a)], salt.concat(), &VALID[cut(b)..])
        }),
    ]
}

/// Replaces (or removes) the node at `at` of every node in `doc`, counted depth first.
fn edit(doc: &mut Value, at: prop::sample::Index, value: Value, remove: bool) {
    fn pointers(v: &Value, here: String, out: &mut Vec<String>) {
        out.push(here.clone());
        match v {
            Value::Array(items) => items.iter().enumerate().for_each(|(i, x)| pointers(x, format!("{here}/{i}"), out)),
            Value::Object(map) => map
                .iter()
                .for_each(|(k, x)| pointers(x, format!("{here}/{}", k.replace('~', "~0").replace('/', "~1")), out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    pointers(doc, String::new(), &mut all);
    let target = all[at.index(all.len())].clone();
    let Some((parent, key)) = target.rsplit_once('/') else {
        *doc = value;
        return;
    };
    match doc.pointer_mut(parent) {
        Some(Value::Object(map)) if remove => {
            map.remove(&key.replace("~1", "/").replace("~0", "~"));
        }
        Some(Value::Array(items)) if remove => {
            if let Ok(i) = key.parse::<usize>() {
                items.remove(i);
            }
        }
        _ => {
            if let Some(node) = doc.pointer_mut(&target) {
                *node = value;
            }
        }
    }
}
