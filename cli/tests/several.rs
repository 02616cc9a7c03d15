//! Runs of several servers: a config's `servers:` run in parallel, each in its own
//! process, with a record each and a combined record; shards of the list merged give
//! the unsharded run; badge and shields refuse; `--server` picks one.

mod common;

use common::{Scratch, toy};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Three different toy servers under `servers:`, the fetch server in `fetch_mode`.
fn three(scratch: &Scratch, fetch_mode: &str) -> PathBuf {
    let text = format!(
        "servers:\n  files:\n    command: {}\n    args: [\"{{sandbox}}\"]\n  fetch:\n    command: {}\n    args: [\"--mode\", \"{fetch_mode}\"]\n  sqlite:\n    command: {}\n    args: [\"--mode\", \"good\", \"{{sqlite}}\"]\n",
        toy("toy-server").display(),
        toy("toy-fetch").display(),
        toy("toy-sqlite").display(),
    );
    let path = scratch.path().join("three.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A record without what changes from run to run: times and ports.
fn stable(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for k in ["startedAt", "durationMs", "listenerPort", "elapsedMs", "elapsed_ms"] {
                    m.remove(k);
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// Where two JSON values first differ, for a readable failure.
fn first_difference(a: &Value, b: &Value, at: String) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                if x.get(k) != y.get(k) {
                    return first_difference(
                        x.get(k).unwrap_or(&Value::Null),
                        y.get(k).unwrap_or(&Value::Null),
                        format!("{at}.{k}"),
                    );
                }
            }
            String::new()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            let i = x.iter().zip(y).position(|(p, q)| p != q).unwrap_or(0);
            first_difference(&x[i], &y[i], format!("{at}[{i}]"))
        }
        _ => format!("{at}: {a} vs {b}"),
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

#[test]
fn three_servers_run_in_parallel_with_a_record_each_a_combined_one_and_a_table() {
    let scratch = Scratch::new();
    let cfg = three(&scratch, "unguarded");
    let out_dir = scratch.path().join("out");
    let out = scratch.run(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--jobs",
        "3",
        "--format",
        "text,json,markdown,summary,junit,sarif",
        "--out-dir",
        out_dir.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    // fetch has no guard: net fails, so the gate does.
    assert_eq!(out.status.code(), Some(1), "{err}");
    for name in ["files", "fetch", "sqlite"] {
        assert!(err.contains(&format!("[{name}] sealmark: running ")), "{name} relayed: {err}");
        let own = read(&out_dir.join(name).join("sealmark-report.json"));
        assert_eq!(own["server"]["selected"], name);
        assert!(out_dir.join(name).join("sealmark-report.txt").is_file());
    }
    let combined = read(&out_dir.join("sealmark-report.json"));
    let names: Vec<&str> =
        combined["servers"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["files", "fetch", "sqlite"], "the config's order, whichever finished first");
    for (i, e) in combined["servers"].as_array().unwrap().iter().enumerate() {
        assert_eq!(e["index"], i);
        let own = read(&out_dir.join(names[i]).join("sealmark-report.json"));
        assert_eq!(e["record"], own, "{}: the combined record holds the server's own record", names[i]);
    }
    assert_eq!(combined["combined"]["declared"], 3);

    let text = std::fs::read_to_string(out_dir.join("sealmark-report.txt")).unwrap();
    let table: Vec<&str> = text.lines().skip(2).take(4).collect();
    assert!(table[0].split_whitespace().eq(["server", "core", "sqlite", "fs", "net", "effects"]), "{table:?}");
    assert!(table[1].starts_with("  files   A ") && table[3].starts_with("  sqlite  A"), "{table:?}");
    let fetch_row: Vec<&str> = table[2].split_whitespace().collect();
    assert_eq!(fetch_row[0], "fetch");
    assert!(fetch_row.contains(&"F") || fetch_row.contains(&"D"), "fetch fails net: {table:?}");
    let sections: Vec<&str> = text.lines().filter(|l| l.starts_with("=== ")).collect();
    assert_eq!(sections, ["=== files ===", "=== fetch ===", "=== sqlite ==="]);
    for name in ["files", "fetch", "sqlite"] {
        let own = std::fs::read_to_string(out_dir.join(name).join("sealmark-report.txt")).unwrap();
        let body = own.lines().take_while(|l| !l.starts_with("An A means")).collect::<Vec<_>>().join("\n");
        assert!(text.contains(&body), "{name}'s section is its own report");
    }
    let sarif = read(&out_dir.join("sealmark-report.sarif"));
    assert_eq!(sarif["runs"].as_array().unwrap().len(), 3);
    let junit = std::fs::read_to_string(out_dir.join("sealmark-report.junit.xml")).unwrap();
    assert!(junit.contains("name=\"fetch.sealmark.net\""), "{junit}");
    let md = std::fs::read_to_string(out_dir.join("sealmark-report.md")).unwrap();
    assert!(md.contains("| server | core | sqlite | fs | net | effects |"), "{md}");
    assert!(scratch.sandbox_removed(), "every run removed its sandbox");
    assert!(scratch.survivors().is_empty(), "{:?}", scratch.survivors());
}

#[test]
fn two_shards_merged_equal_the_unsharded_run() {
    let scratch = Scratch::new();
    // A guarded fetch server: how often an unguarded one reaches the listener varies.
    let cfg = three(&scratch, "good");
    let cfg = cfg.to_str().unwrap();
    let run = |extra: &[&str], out: &Path| {
        let mut args = vec!["run", "--config", cfg, "--format", "json", "--out", out.to_str().unwrap()];
        args.extend(extra);
        let o = scratch.run(&args);
        assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
        read(out)
    };
    let whole = run(&["--jobs", "2"], &scratch.path().join("whole.json"));
    let first = run(&["--shard", "1/2"], &scratch.path().join("s1.json"));
    let second = run(&["--shard", "2/2"], &scratch.path().join("s2.json"));
    let names = |v: &Value| -> Vec<String> {
        v["servers"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(names(&first), ["files", "sqlite"], "every second server from the first");
    assert_eq!(names(&second), ["fetch"]);
    assert_eq!(first["combined"]["shard"], "1/2");

    let merged_path = scratch.path().join("merged.json");
    let s1 = scratch.path().join("s1.json");
    let s2 = scratch.path().join("s2.json");
    // In either order: the config's order comes back.
    let o = scratch.run(&["merge", s2.to_str().unwrap(), s1.to_str().unwrap(), "--out", merged_path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let merged = read(&merged_path);
    let (merged_stable, whole_stable) = (stable(merged.clone()), stable(whole.clone()));
    assert!(merged_stable == whole_stable, "{}", first_difference(&merged_stable, &whole_stable, String::new()));

    // The text of the merged record is the unsharded run's, byte for byte.
    let text = |record: &Path| {
        let o = scratch.run(&["run", "--replay", record.to_str().unwrap()]);
        String::from_utf8(o.stdout).unwrap()
    };
    assert_eq!(text(&merged_path), text(&scratch.path().join("whole.json")));

    // A shard that never wrote its record is not a pass: the merge holds 2 of 3 servers.
    let partial = scratch.path().join("partial.json");
    assert_eq!(
        scratch.run(&["merge", s1.to_str().unwrap(), "--out", partial.to_str().unwrap()]).status.code(),
        Some(0)
    );
    let replayed = scratch.run(&["run", "--replay", partial.to_str().unwrap()]);
    assert_eq!(replayed.status.code(), Some(2), "{}", stderr(&replayed));
    assert!(
        stderr(&replayed).contains("the record holds 2 of the 3 servers its config declares"),
        "{}",
        stderr(&replayed)
    );
    let again = scratch.run(&["merge", s1.to_str().unwrap(), merged_path.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("holds the server \"files\""), "{}", stderr(&again));
    let mut other = merged.clone();
    other["servers"][0]["record"]["sealmark"]["methodology"] = "0.1".into();
    let other_path = scratch.path().join("other.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    let refused = scratch.run(&["merge", other_path.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("servers[files]: a record of methodology 0.1"), "{}", stderr(&refused));
}

#[test]
fn badge_and_shields_refuse_a_run_of_several_and_server_picks_one() {
    let scratch = Scratch::new();
    let cfg = three(&scratch, "good");
    let cfg = cfg.to_str().unwrap();
    for format in ["badge", "shields"] {
        let o = scratch.run(&["run", "--config", cfg, "--format", format]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("a badge stands for one server's grade"), "{}", stderr(&o));
        assert!(scratch.survivors().is_empty() && scratch.sandbox_removed(), "refused before anything started");
    }
    let typo = scratch.run(&["run", "--config", cfg, "--server", "fetc"]);
    assert_eq!(typo.status.code(), Some(2));
    assert!(stderr(&typo).contains("declares no server \"fetc\" (did you mean `fetch`?)"), "{}", stderr(&typo));
    let one = scratch.run(&["run", "--config", cfg, "--server", "files", "--format", "badge"]);
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    assert!(String::from_utf8_lossy(&one.stdout).starts_with("<svg"));
    let doctor = scratch.run(&["doctor", "--config", cfg]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    let sections: Vec<&str> = report.lines().filter(|l| l.starts_with("=== ")).collect();
    assert_eq!(sections, ["=== files ===", "=== fetch ===", "=== sqlite ==="], "{report}");
    assert_eq!(doctor.status.code(), Some(0), "{}", stderr(&doctor));
    let shard = scratch.run(&["run", "--config", cfg, "--shard", "3/2"]);
    assert_eq!(shard.status.code(), Some(2));
    assert!(stderr(&shard).contains("--shard: expected I/N"), "{}", stderr(&shard));
}

#[test]
fn a_servers_config_is_validated_with_lines_and_keys() {
    let scratch = Scratch::new();
    let path = scratch.path().join("bad.yaml");
    std::fs::write(
        &path,
        "servers:\n  good:\n    command: ./x\n    args: [\"{sandboxx}\"]\n  \"no/slash\":\n    command: ./y\n  nothing: {}\n",
    )
    .unwrap();
    let o = scratch.run(&["run", "--config", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("bad.yaml:4: servers.good.args[0]: unknown placeholder {sandboxx} (did you mean `{sandbox}`?)"),
        "{err}"
    );
    assert!(err.contains("bad.yaml:5: servers.no/slash: a server's name is"), "{err}");
    assert!(err.contains("bad.yaml:7: servers.nothing: needs servers.nothing.command"), "{err}");
    std::fs::write(&path, "server:\n  command: ./x\nservers:\n  a:\n    command: ./y\n").unwrap();
    let both = scratch.run(&["run", "--config", path.to_str().unwrap()]);
    assert!(
        stderr(&both).contains("bad.yaml:3: servers: give either server: (one server) or servers:"),
        "{}",
        stderr(&both)
    );
}

#[test]
fn a_signal_is_passed_on_to_every_run_which_cleans_up() {
    let scratch = Scratch::watching_starts();
    let server = toy("toy-server");
    let entry = |name: &str| {
        format!(
            "  {name}:\n    command: {}\n    args: [\"--mode\", \"hang-init\", \"{{sandbox}}\"]\n    env:\n      TEST_TAG: \"{}\"\n      TOY_STARTED_ADDR: \"{}\"\n",
            server.display(),
            scratch.tag,
            scratch.starts_addr()
        )
    };
    let cfg = scratch.path().join("hanging.yaml");
    std::fs::write(&cfg, format!("servers:\n{}{}timeout_probe_sec: 30\n", entry("one"), entry("two"))).unwrap();
    let out = scratch.interrupted(&["run", "--config", cfg.to_str().unwrap(), "--jobs", "2"], libc::SIGTERM, |_| {
        // Both runs are going before the signal (the first start was awaited already).
        scratch.wait_for_starts(1);
    });
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted by SIGTERM: passing it on to 2 run(s)"), "{err}");
    for name in ["one", "two"] {
        assert!(err.contains(&format!("[{name}] sealmark: interrupted by SIGTERM: stopped the server")), "{err}");
    }
    assert!(scratch.survivors().is_empty(), "left: {:?}", scratch.survivors());
    assert!(scratch.sandbox_removed());
}

#[test]
fn what_a_run_killed_past_its_wind_down_left_running_is_killed_named_and_its_sandbox_removed() {
    let scratch = Scratch::watching_starts();
    let cfg = scratch.path().join("stubborn.yaml");
    std::fs::write(
        &cfg,
        format!(
            "servers:\n  stubborn:\n    command: {}\n    args: [\"--mode\", \"ignore-sigterm\", \"{{sandbox}}\"]\n    env:\n      TEST_TAG: \"{}\"\n      TOY_STARTED_ADDR: \"{}\"\n",
            toy("toy-server").display(),
            scratch.tag,
            scratch.starts_addr()
        ),
    )
    .unwrap();
    // The server's run is stopped (SIGSTOP) before the signal, so it cannot clean up in
    // its wind-down and is killed with its server, which ignores SIGTERM, still up.
    let child = std::process::Command::new(common::sealmark())
        .args(["run", "--config", cfg.to_str().unwrap()])
        .env("TMPDIR", scratch.path().join("tmp"))
        .env("SEALMARK_WIND_DOWN_MS", "200")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    scratch.wait_for_starts(1);
    let runs: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                == Some(child.id())
        })
        .collect();
    assert_eq!(runs.len(), 1, "one run under sealmark: {runs:?}");
    // SAFETY: signalling processes this test started.
    unsafe {
        libc::kill(runs[0], libc::SIGSTOP);
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(err.contains("did not end within 200ms of SIGTERM; killed"), "{err}");
    assert!(
        err.contains("sealmark: toy-server (left behind by a killed run; killed)"),
        "{err} {:?}",
        scratch.survivors()
    );
    assert!(scratch.survivors().is_empty(), "left: {:?}", scratch.survivors());
    assert!(scratch.sandbox_removed());
}

/// sealmark run --from / init --from with the sample client files, the toy servers on PATH.
fn from_fixture(scratch: &Scratch, args: &[&str], env: &[(&str, &str)]) -> Output {
    let bins = toy("toy-server").parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bins.display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = std::process::Command::new(common::sealmark());
    cmd.args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/clients"))
        .env("PATH", path)
        .env("TMPDIR", scratch.path().join("tmp"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn the_servers_a_client_already_has_are_graded_from_its_config() {
    let scratch = Scratch::new();
    // Claude Desktop: two servers, a run of several; the home path aimed at the sandbox.
    let o = from_fixture(&scratch, &["run", "--from", "claude_desktop_config.json", "--format", "json"], &[]);
    let err = stderr(&o);
    // files echoes its environment: secret-echo fails it, so the gate does.
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("servers.files.args[2]: /Users/someone/Documents → {sandbox}"), "{err}");
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = c["servers"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["files", "web-fetch"]);
    assert_eq!(c["servers"][0]["record"]["packs"]["fs"]["grade"]["letter"], "A");
    let all = String::from_utf8_lossy(&o.stdout);
    assert!(all.contains("SEALMARK_CANARY"), "the environment was echoed");
    for secret in ["sk-not-a-real-key", "tok-not-a-real-token-1234"] {
        assert!(!all.contains(secret), "{secret} reached the record");
    }
    // --server picks one of them.
    let one = from_fixture(
        &scratch,
        &["run", "--from", "claude_desktop_config.json", "--server", "web-fetch", "--pack", "core"],
        &[],
    );
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    // VS Code: the password input is read from the environment, and refused when unset.
    let unset = from_fixture(&scratch, &["run", "--from", "mcp.json"], &[]);
    assert_eq!(unset.status.code(), Some(2));
    assert!(
        stderr(&unset).contains("servers.notes.env.NOTES_KEY: the environment variable SQLITE_KEY is not set"),
        "{}",
        stderr(&unset)
    );
    let vs =
        from_fixture(&scratch, &["run", "--from", "mcp.json", "--format", "json"], &[("SQLITE_KEY", "notes-key-1234")]);
    assert_eq!(vs.status.code(), Some(0), "{}", stderr(&vs));
    let c: Value = serde_json::from_slice(&vs.stdout).unwrap();
    assert_eq!(c["servers"][0]["record"]["packs"]["sqlite"]["grade"]["letter"], "A", "the .db path became {{sqlite}}");
    assert!(!vs.stdout.windows(14).any(|w| w == b"notes-key-1234"));
    // The registry's server.json: its package started by the hint, its path argument the sandbox.
    let reg = from_fixture(&scratch, &["run", "--from", "server.json", "--pack", "core,fs", "--format", "json"], &[]);
    assert_eq!(reg.status.code(), Some(0), "{}", stderr(&reg));
    let c: Value = serde_json::from_slice(&reg.stdout).unwrap();
    assert_eq!(c["servers"][0]["name"], "toy-server");
    assert_eq!(c["servers"][0]["record"]["packs"]["fs"]["grade"]["letter"], "A");
    assert!(scratch.survivors().is_empty() && scratch.sandbox_removed());
}

#[test]
fn init_from_writes_the_equivalent_config_with_secrets_as_references() {
    let scratch = Scratch::new();
    let out = scratch.path().join("sealmark.yaml");
    let o = from_fixture(
        &scratch,
        &["init", "--from", "claude_desktop_config.json", "--config", out.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let yaml = std::fs::read_to_string(&out).unwrap();
    assert!(yaml.contains("\"FETCH_API_KEY\": \"${FETCH_API_KEY}\""), "{yaml}");
    assert!(!yaml.contains("sk-not-a-real-key"), "{yaml}");
    assert!(
        yaml.lines().all(|l| l.starts_with('#') || !l.contains("/Users/someone")),
        "only the note names the path: {yaml}"
    );
    assert!(yaml.contains("#   servers.files.args[2]: /Users/someone/Documents → {sandbox}"), "{yaml}");
    let again = from_fixture(
        &scratch,
        &["init", "--from", "claude_desktop_config.json", "--config", out.to_str().unwrap()],
        &[],
    );
    assert_eq!(again.status.code(), Some(2), "never overwrites");
    // The written config runs (the secret now from the environment).
    let run = from_fixture(
        &scratch,
        &["run", "--config", out.to_str().unwrap(), "--server", "web-fetch", "--pack", "core"],
        &[("FETCH_API_KEY", "sk-env-0000")],
    );
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
}
