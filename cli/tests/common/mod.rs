//! Helpers for tests that run the real `sealmark` binary against the toy servers.

#![allow(dead_code, reason = "each test file uses a different subset")]

use sealmark_engine::model::Verdict;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn sealmark() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_sealmark"))
}

/// A toy server of `fixtures/` (`toy-server`, `toy-fetch`, `toy-sql`, `toy-http`,
/// `toy-git`, `toy-sqlite`, `toy-data`), built beside sealmark by `cargo build --workspace`.
pub fn toy(bin: &str) -> PathBuf {
    let path = sealmark().with_file_name(bin);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace --bins` first (scripts/test does)",
        path.display()
    );
    path
}

/// A loopback port for a server a test starts on a port of its choosing. Taken below the
/// kernel's ephemeral range (32768 and up here), which every `bind(0)` and outgoing
/// connection of the test binaries running beside this one draws from: a port found free
/// there can be taken before the server binds it. Each process starts at its own place.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    const LOW: u32 = 20_000;
    const SPAN: u32 = 12_000;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (LOW + (std::process::id().wrapping_mul(7919).wrapping_add(n.wrapping_mul(37))) % SPAN) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A scratch directory for one test: its config, its TMPDIR (so the sandbox can be
/// checked for removal), and a unique tag planted in the server's environment.
pub struct Scratch {
    pub dir: tempfile::TempDir,
    pub tag: String,
    /// Set by `Scratch::watching_starts`; the other scratches keep their configs free of
    /// it, so records and line numbers are the same in every run.
    starts: Option<Starts>,
}

/// Where the toy servers of a scratch say they started (`TOY_STARTED_ADDR` in its configs):
/// each connects once and writes its pid, so a test that must act while its server runs
/// waits for that instead of polling the process table.
struct Starts {
    addr: std::net::SocketAddr,
    pids: std::sync::Mutex<std::sync::mpsc::Receiver<u32>>,
}

impl Starts {
    fn listen() -> Starts {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut line = String::new();
                let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stream), &mut line);
                // An empty line is the scratch's own goodbye (see Drop).
                match line.trim().parse() {
                    Ok(pid) if tx.send(pid).is_ok() => {}
                    _ => return,
                }
            }
        });
        Starts { addr, pids: std::sync::Mutex::new(rx) }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Ends the thread that listens for starts.
        if let Some(starts) = &self.starts {
            let _ = std::net::TcpStream::connect(starts.addr);
        }
    }
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch::made(None)
    }

    /// A scratch whose toy servers announce their start, for tests that act while one runs.
    pub fn watching_starts() -> Scratch {
        Scratch::made(Some(Starts::listen()))
    }

    fn made(starts: Option<Starts>) -> Scratch {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir(dir.path().join("tmp")).expect("tmp");
        let tag = dir.path().file_name().unwrap().to_string_lossy().into_owned();
        Scratch { dir, tag, starts }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a config for the toy server in `mode`, with extra YAML appended.
    pub fn config(&self, mode: &str, extra: &str) -> PathBuf {
        self.config_args(&["--mode", mode, "{sandbox}"], extra)
    }

    /// Writes a config for the toy server with these arguments.
    pub fn config_args(&self, args: &[&str], extra: &str) -> PathBuf {
        self.config_for(&toy("toy-server"), args, extra)
    }

    /// Writes a config that starts `binary` with these arguments.
    pub fn config_for(&self, binary: &Path, args: &[&str], extra: &str) -> PathBuf {
        self.config_named("sealmark", binary, args, extra)
    }

    /// As `config_for`, into `<name>.yaml`, for tests that keep several configs.
    pub fn config_named(&self, name: &str, binary: &Path, args: &[&str], extra: &str) -> PathBuf {
        let args: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
        let announce = match &self.starts {
            Some(starts) => format!("    TOY_STARTED_ADDR: \"{}\"\n", starts.addr),
            None => String::new(),
        };
        let text = format!(
            "server:\n  command: {}\n  args: [{}]\n  env:\n    TEST_TAG: \"{}\"\n{announce}{extra}",
            binary.display(),
            args.join(", "),
            self.tag,
        );
        let path = self.path().join(format!("{name}.yaml"));
        std::fs::write(&path, text).expect("write config");
        path
    }

    /// Runs sealmark with `args`, TMPDIR pointed into the scratch directory.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(sealmark()).args(args).env("TMPDIR", self.path().join("tmp")).output().expect("sealmark runs")
    }

    /// Starts sealmark with `args`, waits until the server it starts is running, calls
    /// `while_running` with sealmark's pid, then sends `signal` and returns what sealmark
    /// printed and how it exited.
    pub fn interrupted(&self, args: &[&str], signal: i32, while_running: impl FnOnce(u32)) -> Output {
        let child = Command::new(sealmark())
            .args(args)
            .env("TMPDIR", self.path().join("tmp"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("sealmark starts");
        self.wait_for_starts(1);
        while_running(child.id());
        // SAFETY: signalling a child we spawned.
        unsafe {
            libc::kill(child.id() as i32, signal);
        }
        child.wait_with_output().expect("sealmark ends")
    }

    /// The address a toy server started by hand-written configs announces itself to.
    pub fn starts_addr(&self) -> String {
        self.starts().addr.to_string()
    }

    /// Waits until `n` toy servers of this scratch have started (at most 30 s each).
    pub fn wait_for_starts(&self, n: usize) {
        let pids = self.starts().pids.lock().unwrap();
        for i in 0..n {
            let waited = pids.recv_timeout(std::time::Duration::from_secs(30));
            assert!(waited.is_ok(), "{i} of {n} servers started within 30 s");
        }
    }

    fn starts(&self) -> &Starts {
        self.starts.as_ref().expect("make this scratch with Scratch::watching_starts to wait on its servers")
    }

    /// Processes still alive that carry this test's tag in their environment.
    pub fn survivors(&self) -> Vec<String> {
        let needle = format!("TEST_TAG={}", self.tag);
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(env) = std::fs::read(e.path().join("environ")) else { continue };
            if env.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
                let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
                if !stat.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')) {
                    out.push(std::fs::read_to_string(e.path().join("cmdline")).unwrap_or_default().replace('\0', " "));
                }
            }
        }
        out
    }

    /// Whether the sandbox directories sealmark made under TMPDIR are gone.
    pub fn sandbox_removed(&self) -> bool {
        std::fs::read_dir(self.path().join("tmp"))
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().starts_with("sealmark-"))
    }
}

/// Every file under `dir`, as text: to search all the reports a run wrote.
pub fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&all_text(&p));
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
    out
}

/// Runs the toy server in `mode` and returns the JSON record and the exit code.
pub fn record(scratch: &Scratch, mode: &str, extra: &str) -> (Value, i32) {
    record_of(scratch, &scratch.config(mode, extra))
}

/// Runs sealmark with a config and returns the JSON record and the exit code.
pub fn record_of(scratch: &Scratch, cfg: &Path) -> (Value, i32) {
    let mode = cfg.display();
    let out = scratch.run(&["run", "--format", "json", "--config", cfg.to_str().unwrap()]);
    let code = out.status.code().unwrap_or(-1);
    let record: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("mode {mode}: no JSON record ({e}); stderr:\n{}", String::from_utf8_lossy(&out.stderr))
    });
    assert_rederived(scratch, &record);
    (record, code)
}

/// Replays `record` and asserts that this build's judges, reading only the record's
/// observations, give every check exactly the stored verdict, summary and evidence,
/// and every pack the stored grade.
pub fn assert_rederived(scratch: &Scratch, record: &Value) {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = scratch.path().join(format!("rederive-{n}.json"));
    std::fs::write(&path, record.to_string()).unwrap();
    let out = scratch.run(&["run", "--replay", path.to_str().unwrap(), "--format", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let replayed: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("replay wrote no record ({e}): {stderr}"));
    let server = &record["server"]["command"];
    if record["observationsOmitted"].is_string() {
        assert!(stderr.contains("re-graded the stored verdicts"), "{server}: {stderr}");
        return;
    }
    assert_decided_as_declared(record);
    assert!(stderr.contains("; 0 differ from the stored result"), "{server}: replay disagrees with the run:\n{stderr}");
    assert_eq!(replayed["checks"], record["checks"], "{server}: the re-derived checks differ");
    assert_eq!(replayed["packs"], record["packs"], "{server}: the re-derived grades differ");
}

/// The verdict of one check in a record.
pub fn verdict(record: &Value, id: &str) -> Verdict {
    let check =
        record["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no check {id}"));
    serde_json::from_value(check["verdict"].clone()).expect("a known verdict")
}

/// Every check that reached a verdict rests on evidence of the kinds its page declares
/// ("decided by"), so the reference cannot drift from what the judges do. A control
/// (the call that must work before a check is judged) and a caveat gate a verdict but
/// do not decide it.
pub fn assert_decided_as_declared(record: &Value) {
    let mut drift = std::collections::BTreeSet::new();
    for c in record["checks"].as_array().unwrap() {
        let Some(def) = sealmark_engine::registry::CHECKS.iter().find(|d| d.id == c["id"]) else { continue };
        if !matches!(c["verdict"].as_str(), Some("pass" | "part" | "fail")) {
            continue;
        }
        for e in c["evidence"].as_array().unwrap() {
            let code = e["code"].as_str().unwrap_or_default();
            let kind = e["verifiedBy"].as_str().unwrap();
            if !code.contains("control") && !code.contains("caveat") && !def.decided_by.iter().any(|v| v.id() == kind) {
                drift.insert(format!("{}: [{kind}] evidence ({code})", def.id));
            }
        }
    }
    assert!(
        drift.is_empty(),
        "evidence of kinds a check does not declare in decided_by:\n{}",
        drift.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// The registry's checks of `packs`, in report order.
pub fn registry_checks(packs: &[sealmark_engine::model::Pack]) -> Vec<&'static str> {
    sealmark_engine::registry::CHECKS.iter().filter(|c| packs.contains(&c.pack)).map(|c| c.id).collect()
}

/// A pack test's table: its checks are the registry's checks of `packs` (in any order),
/// and each has a toy mode the table expects to fail it (`rows`: mode → the
/// verdict of each check in `checks`' order). Every declared check thus has its failing
/// toy mode, run through the binary by the pack's tests.
pub fn assert_table_covers_registry(
    checks: &[&str],
    packs: &[sealmark_engine::model::Pack],
    rows: &[(&str, Vec<Verdict>)],
) {
    let (mut listed, mut declared) = (checks.to_vec(), registry_checks(packs));
    listed.sort_unstable();
    declared.sort_unstable();
    assert_eq!(listed, declared, "the table's checks are not the registry's of {packs:?}");
    for (i, id) in checks.iter().enumerate() {
        let failing: Vec<&str> =
            rows.iter().filter(|(_, v)| v.get(i) == Some(&Verdict::Fail)).map(|(m, _)| *m).collect();
        assert!(!failing.is_empty(), "{id}: no toy mode in the table is expected to fail it");
    }
}

/// Rows given as the checks each mode does not pass (the rest pass), as
/// `assert_table_covers_registry` reads them.
pub fn sparse_rows<'a>(checks: &[&str], table: &[(&'a str, &[(&str, Verdict)])]) -> Vec<(&'a str, Vec<Verdict>)> {
    table
        .iter()
        .map(|(mode, row)| {
            let of = |id: &&str| row.iter().find(|(c, _)| c == id).map_or(Verdict::Pass, |(_, v)| *v);
            (*mode, checks.iter().map(of).collect())
        })
        .collect()
}
