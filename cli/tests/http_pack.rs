//! The http pack through the real binary: the toy streamable-HTTP server with every
//! defence on, then with each turned off in turn. Each check fails on exactly the mode
//! that removes its defence, with evidence naming what was observed (a 200 for a
//! foreign Origin, a reflected CORS header, a socket on 0.0.0.0).

mod common;

use common::{Scratch, free_port, record_of, toy, verdict};
use sealmark_engine::model::Verdict::{self, Fail, Na, Pass};
use serde_json::Value;
use std::net::TcpListener;

const CHECKS: [&str; 7] = [
    "http-origin",
    "http-auth-required",
    "http-protocol-version",
    "http-session",
    "http-cors",
    "http-bind",
    "http-tls",
];

/// Mode → verdicts, in the order of CHECKS.
/// The URL is loopback, so http-tls does not apply; it has its own test below.
const EXPECTED: &[(&str, [Verdict; 7])] = &[
    ("safe", [Pass, Pass, Pass, Pass, Pass, Pass, Na]),
    ("origin-unchecked", [Fail, Pass, Pass, Pass, Pass, Pass, Na]),
    ("no-auth", [Pass, Fail, Pass, Pass, Pass, Pass, Na]),
    ("any-protocol-version", [Pass, Pass, Fail, Pass, Pass, Pass, Na]),
    ("any-session-id", [Pass, Pass, Pass, Fail, Pass, Pass, Na]),
    ("cors-reflect", [Pass, Pass, Pass, Pass, Fail, Pass, Na]),
    ("bind-all", [Pass, Pass, Pass, Pass, Pass, Fail, Na]),
];

/// The toy in `mode` on 127.0.0.1, started by sealmark, with its credential in server.headers.
fn config(scratch: &Scratch, mode: &str, with_credential: bool) -> std::path::PathBuf {
    config_at(scratch, mode, "http://127.0.0.1", &[], with_credential)
}

/// The toy in `mode` with `extra` arguments, reached at `base` (scheme and host).
fn config_at(scratch: &Scratch, mode: &str, base: &str, extra: &[String], with_credential: bool) -> std::path::PathBuf {
    let port = free_port();
    let headers = if with_credential { "  headers: { Authorization: \"Bearer toy-secret-1\" }\n" } else { "" };
    let extra: String = extra.iter().map(|a| format!(", \"{a}\"")).collect();
    let text = format!(
        "server:\n  command: {}\n  args: [\"--port\", \"{port}\", \"--mode\", \"{mode}\"{extra}]\n  env: {{ TOY_TOKEN: toy-secret-1, TEST_TAG: \"{}\" }}\n  url: {base}:{port}/mcp\n{headers}packs: [core, http]\ntimeout_probe_sec: 3\n",
        toy("toy-http").display(),
        scratch.tag
    );
    let path = scratch.path().join("sealmark.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

fn evidence<'r>(rec: &'r Value, id: &str) -> &'r Vec<Value> {
    rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()["evidence"].as_array().unwrap()
}

#[test]
fn each_defence_passes_when_on_and_fails_when_off() {
    let runs: Vec<(&str, Value)> = std::thread::scope(|s| {
        let handles: Vec<_> = EXPECTED
            .iter()
            .map(|(mode, _)| {
                s.spawn(move || {
                    let scratch = Scratch::new();
                    let (rec, _) = record_of(&scratch, &config(&scratch, mode, true));
                    assert!(scratch.survivors().is_empty(), "mode {mode} left processes");
                    (*mode, rec)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (mode, rec) in &runs {
        let want = EXPECTED.iter().find(|(m, _)| m == mode).unwrap().1;
        for (id, want) in CHECKS.iter().zip(want) {
            let c = rec["checks"].as_array().unwrap().iter().find(|c| c["id"] == *id).unwrap();
            assert_eq!(verdict(rec, id), want, "mode {mode}, {id}: {}", c["summary"]);
        }
    }
    let rec = |mode: &str| &runs.iter().find(|(m, _)| *m == mode).unwrap().1;
    assert_eq!(rec("safe")["packs"]["http"]["grade"]["letter"], "A");
    // A graded http pack checked the transport: what stays uncovered is authorization.
    let blind: Vec<&str> = rec("safe")["notCovered"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(!blind.contains(&"authentication and transport security"), "{blind:?}");
    assert!(blind.iter().any(|l| l.starts_with("authorization: what an authorised caller may do")), "{blind:?}");

    let origin = evidence(rec("origin-unchecked"), "http-origin");
    let accepted = origin.iter().find(|e| e["code"] == "accepted").expect("an accepted probe");
    assert_eq!(accepted["probe"], "Origin: http://sm-rebind.invalid");
    assert!(accepted["outcome"].as_str().unwrap().starts_with("HTTP 200"), "{accepted}");
    assert_eq!(rec("origin-unchecked")["packs"]["http"]["grade"]["capped"], true, "a critical fail caps at D");

    let cors = &evidence(rec("cors-reflect"), "http-cors")[0];
    assert!(
        cors["outcome"]
            .as_str()
            .unwrap()
            .contains("allows the foreign Origin it was sent (http://sm-rebind.invalid): reflected"),
        "{cors}"
    );
    let bind = evidence(rec("bind-all"), "http-bind");
    assert!(
        bind.iter().any(|e| e["verifiedBy"] == "process" && e["outcome"].as_str().unwrap().starts_with("0.0.0.0:")),
        "{bind:?}"
    );
    let auth = evidence(rec("no-auth"), "http-auth-required");
    assert!(auth.iter().any(|e| e["probe"] == "no credential" && e["code"] == "accepted"), "{auth:?}");
    let text = rec("safe").to_string();
    assert!(!text.contains("toy-secret-1"), "the credential never reaches the record");
}

#[test]
fn without_a_credential_or_a_command_those_checks_do_not_apply() {
    let scratch = Scratch::new();
    let (rec, _) = record_of(&scratch, &config(&scratch, "no-auth", false));
    assert_eq!(verdict(&rec, "http-auth-required"), Na);
    assert_eq!(verdict(&rec, "http-origin"), Pass);

    // A server sealmark did not start: its sockets are not sealmark's to read.
    let port = free_port();
    let mut toy = listening(port, &[]);
    let cfg = scratch.path().join("url-only.yaml");
    std::fs::write(
        &cfg,
        format!("server:\n  url: http://127.0.0.1:{port}/mcp\n  headers: {{ Authorization: \"Bearer toy-secret-1\" }}\npacks: [core, http]\n"),
    )
    .unwrap();
    let (rec, _) = record_of(&scratch, &cfg);
    let _ = toy.kill();
    let _ = toy.wait();
    assert_eq!(verdict(&rec, "http-bind"), Na, "{}", rec["checks"]);
    assert_eq!(verdict(&rec, "http-origin"), Pass);

    // A stdio server: the pack says what it needs.
    let cfg = scratch.config_for(&common::toy("toy-server"), &["{sandbox}"], "packs: [core, http]\n");
    let (rec, _) = record_of(&scratch, &cfg);
    assert_eq!(rec["packs"]["http"]["reason"], "a stdio server: the http pack needs server.url");
}

/// toy-http in its safe mode on `port`, started by the test (not by sealmark), once it
/// listens; its credential is TOY_TOKEN=toy-secret-1, and `env` adds to its environment.
fn listening(port: u16, env: &[(&str, &str)]) -> std::process::Child {
    let mut toy = std::process::Command::new(toy("toy-http"))
        .args(["--port", &port.to_string()])
        .env("TOY_TOKEN", "toy-secret-1")
        .envs(env.iter().copied())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // It says on stderr once it listens (or exits, which ends the wait); the rest drains.
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(toy.stderr.take().unwrap()));
    assert!(lines.by_ref().map_while(Result::ok).any(|l| l.contains("listening on")), "toy-http never listened");
    std::thread::spawn(move || lines.for_each(drop));
    toy
}

/// `sealmark run -- URL` reaches an HTTP server (its user and password sent as the
/// credential), and the password is in no report of any format, nor on stdout or stderr,
/// when the run works or when it fails.
#[test]
fn the_quick_form_takes_a_url_and_never_shows_its_password() {
    const PASSWORD: &str = "s3cret-pw";
    let scratch = Scratch::new();
    let port = free_port();
    let mut toy = listening(port, &[("TOY_BASIC", "user:s3cret-pw")]);
    let url = format!("http://user:{PASSWORD}@127.0.0.1:{port}/mcp");
    let dir = scratch.path().join("reports");
    let formats = "text,json,markdown,junit,sarif,summary,badge,shields,html";
    let out = scratch.run(&["run", "--format", formats, "--out-dir", dir.to_str().unwrap(), "--", &url]);
    let _ = toy.kill();
    let _ = toy.wait();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let rec: Value = serde_json::from_slice(&std::fs::read(dir.join("sealmark-report.json")).unwrap()).unwrap();
    assert_eq!(rec["server"]["transport"], "http", "{said}");
    assert_eq!(rec["server"]["url"], format!("http://127.0.0.1:{port}/mcp"));
    assert_eq!(verdict(&rec, "handshake"), Pass, "the URL's credential reached the server: {}", rec["checks"]);
    assert!(dir.join("index.html").exists() && dir.join("sealmark-report.svg").exists(), "{said}");
    let written = common::all_text(&dir);
    assert!(!written.contains(PASSWORD) && !said.contains(PASSWORD), "the password was shown:\n{said}");

    // Nothing listens: the error names the address, not the password.
    let out = scratch.run(&["run", "--", &format!("http://user:{PASSWORD}@127.0.0.1:{}/mcp", free_port())]);
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("http://127.0.0.1:") && !said.contains(PASSWORD), "{said}");

    // A URL the config refuses is quoted without its password.
    let cfg = scratch.path().join("ftp.yaml");
    std::fs::write(&cfg, format!("server:\n  url: ftp://user:{PASSWORD}@127.0.0.1/mcp\n")).unwrap();
    let out = scratch.run(&["run", "--config", cfg.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("server.url") && said.contains("ftp://user:<redacted>@") && !said.contains(PASSWORD),
        "{said}"
    );
}

/// A server that accepts connections and never answers costs two timeouts, not one per
/// probe: the rest are not sent, and every check says it could not tell.
#[test]
fn a_server_that_never_answers_is_inconclusive_within_a_bounded_wait() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in listener.incoming().flatten() {
            held.push(s); // accepted, read never, answered never
        }
    });
    let scratch = Scratch::new();
    let cfg = scratch.path().join("silent.yaml");
    std::fs::write(
        &cfg,
        format!("server:\n  url: http://127.0.0.1:{port}/mcp\npacks: [core, http]\ntimeout_probe_sec: 1\n"),
    )
    .unwrap();
    let (rec, _) = record_of(&scratch, &cfg);
    for id in ["http-origin", "http-protocol-version"] {
        assert_eq!(verdict(&rec, id), Verdict::Inconclusive, "{id}: {}", rec["checks"]);
    }
    let all = rec["checks"].to_string();
    assert!(all.contains("no answer within the probe timeout"), "{all}");
    assert_eq!(verdict(&rec, "http-session"), Na, "no session was issued");
}

/// This machine's own address on its default route (a UDP connect sends nothing), so a
/// URL can leave loopback without traffic leaving the machine.
fn own_address() -> std::net::IpAddr {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    s.connect("192.0.2.1:9").expect("a default route: the TLS test needs this machine's interface address");
    let ip = s.local_addr().unwrap().ip();
    assert!(!ip.is_loopback() && !ip.is_unspecified(), "{ip}");
    ip
}

/// The bind-all mode served beyond loopback: scheme → http-tls verdict.
const TLS_EXPECTED: [(&str, Verdict); 2] = [("http", Fail), ("https", Pass)];

/// Plain http to a non-loopback address fails http-tls; https there passes, with the
/// certificate's standing said (the toy's is self-signed).
#[test]
fn a_url_beyond_loopback_must_use_tls() {
    let ip = own_address();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/tls");
    let (cert, key) = (fixtures.join("cert.pem"), fixtures.join("key.pem"));
    let run = |scheme: &str| {
        let scratch = Scratch::new();
        let tls = match scheme {
            "https" => vec!["--tls".to_string(), cert.display().to_string(), key.display().to_string()],
            _ => vec![],
        };
        let cfg = config_at(&scratch, "bind-all", &format!("{scheme}://{ip}"), &tls, true);
        let (rec, _) = record_of(&scratch, &cfg);
        assert!(scratch.survivors().is_empty(), "{scheme}: left processes");
        rec
    };
    let [(_, plain_want), (_, tls_want)] = TLS_EXPECTED;
    let plain = run("http");
    assert_eq!(verdict(&plain, "http-tls"), plain_want, "{}", plain["checks"]);
    assert_eq!(evidence(&plain, "http-tls")[0]["code"], "plain-http-beyond-loopback");
    assert_eq!(verdict(&plain, "http-origin"), Pass, "the other defences still hold");
    let tls = run("https");
    assert_eq!(verdict(&tls, "http-tls"), tls_want, "{}", tls["checks"]);
    let outcome = evidence(&tls, "http-tls")[0]["outcome"].as_str().unwrap().to_string();
    assert!(outcome.contains("not trusted by this machine's roots"), "{outcome}");
}

#[test]
fn the_table_is_the_registrys_and_fails_every_check() {
    use sealmark_engine::model::Pack;
    let mut rows: Vec<(&str, Vec<Verdict>)> = EXPECTED.iter().map(|(m, v)| (*m, v.to_vec())).collect();
    // http-tls beyond loopback, in its own test: only its column is judged there.
    let tls = CHECKS.iter().position(|c| *c == "http-tls").unwrap();
    for (scheme, want) in TLS_EXPECTED {
        let mut row = vec![Pass; CHECKS.len()];
        row[tls] = want;
        rows.push((scheme, row));
    }
    common::assert_table_covers_registry(&CHECKS, &[Pack::Http], &rows);
}
