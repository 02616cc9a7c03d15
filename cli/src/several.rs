//! A run of several servers. Each server runs in its own `sealmark run --server NAME`
//! process, so runs share nothing (not the sandbox, the listener, the database, nor the
//! processes sealmark reaps as a subreaper) and one that crashes costs only its own
//! record. `--jobs N` bounds how many run at once. Their stderr is relayed line by line
//! under the server's name; a signal is passed on to each, which cleans up as a single
//! run does, and the parent exits as that run would.

use crate::args::RunArgs;
use sealmark_engine::combined::ServerEntry;
use sealmark_engine::record::read_saved;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::signal::unix::{SignalKind, signal};

/// How long the runs may take to clean up after a signal is passed on:
/// 30 s, or `SEALMARK_WIND_DOWN_MS` (the tests' way to reach what follows it).
fn wind_down() -> Duration {
    std::env::var("SEALMARK_WIND_DOWN_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(Duration::from_secs(30), Duration::from_millis)
}

/// One server to run: its position under `servers:` and its name.
#[derive(Debug, Clone)]
pub struct Planned {
    pub index: usize,
    pub name: String,
}

/// The pids of the runs now going, for passing a signal on.
type Running = Arc<Mutex<BTreeSet<i32>>>;

/// Runs every planned server, at most `jobs` at once, and returns their entries in plan
/// order; after a signal, the exit code 128 + its number once every run has ended.
pub fn run_all(args: &RunArgs, config: &Path, plan: &[Planned], jobs: usize) -> Result<Vec<ServerEntry>, u8> {
    let scratch = tempfile::Builder::new()
        .prefix("sealmark-several-")
        .tempdir()
        .map_err(|e| crate::usage_error(format!("cannot create a temporary directory: {e}")))?;
    let exe = std::env::current_exe()
        .map_err(|e| crate::usage_error(format!("cannot find the sealmark binary to start each run: {e}")))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::usage_error(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let (Ok(mut int), Ok(mut term), Ok(mut hup)) =
            (signal(SignalKind::interrupt()), signal(SignalKind::terminate()), signal(SignalKind::hangup()))
        else {
            return Err(crate::usage_error("no signal handler could be installed"));
        };
        let running: Running = Arc::default();
        let finished = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let progress = {
            let (running, finished, total) = (running.clone(), finished.clone(), plan.len());
            Arc::new(crate::terminal::Progress::start(args.quiet, move || {
                let going = running.lock().expect("running lock").len();
                format!("{} of {total} server(s) done, {going} running", finished.load(Ordering::Relaxed))
            }))
        };
        let stopping = Arc::new(AtomicBool::new(false));
        let permits = Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        for (position, p) in plan.iter().enumerate() {
            let out = scratch.path().join(format!("{}.json", p.index));
            // Each run's sandbox goes under this directory, so that what a run killed
            // mid-cleanup leaves is removed with it.
            let tmp = scratch.path().join(format!("{}.tmp", p.index));
            std::fs::create_dir(&tmp)
                .map_err(|e| crate::usage_error(format!("cannot create a temporary directory: {e}")))?;
            let argv = child_args(args, config, &p.name, &out);
            let (exe, running, stopping, permits, p) =
                (exe.clone(), running.clone(), stopping.clone(), permits.clone(), p.clone());
            let (finished, progress) = (finished.clone(), progress.clone());
            tasks.spawn(async move {
                let _permit = permits.acquire_owned().await;
                let entry = if stopping.load(Ordering::SeqCst) {
                    entry(&p, Err("not started: sealmark was interrupted".to_string()))
                } else {
                    one(&exe, argv, &tmp, &p, &out, &running, &progress).await
                };
                finished.fetch_add(1, Ordering::Relaxed);
                (position, entry)
            });
        }
        let mut entries: Vec<Option<ServerEntry>> = vec![None; plan.len()];
        let all = async move {
            while let Some(done) = tasks.join_next().await {
                if let Ok((position, e)) = done {
                    entries[position] = Some(e);
                }
            }
            entries
        };
        tokio::pin!(all);
        let (name, signum, code) = tokio::select! {
            entries = &mut all => {
                drop(progress);
                return Ok(finish(entries, plan));
            }
            _ = int.recv() => ("SIGINT", libc::SIGINT, 130),
            _ = term.recv() => ("SIGTERM", libc::SIGTERM, 143),
            _ = hup.recv() => ("SIGHUP", libc::SIGHUP, 129),
        };
        stopping.store(true, Ordering::SeqCst);
        let pids: Vec<i32> = running.lock().expect("running lock").iter().copied().collect();
        say!("sealmark: interrupted by {name}: passing it on to {} run(s), which clean up", pids.len());
        for pid in &pids {
            // SAFETY: kill(2) on the pid of a child this process started and has not reaped.
            unsafe {
                libc::kill(*pid, signum);
            }
        }
        let wind_down = wind_down();
        if tokio::time::timeout(wind_down, &mut all).await.is_err() {
            let killed: Vec<i32> = running.lock().expect("running lock").iter().copied().collect();
            for pid in &killed {
                say!("sealmark: run {pid} did not end within {:?} of {name}; killed", wind_down);
                // SAFETY: as above.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
            // What the killed runs had started (servers, Postgres) is reparented here, the
            // subreaper, once they are gone: killed and named rather than left running.
            let gone = tokio::time::timeout(Duration::from_secs(2), async {
                while killed.iter().any(|pid| sealmark_engine::children::is_alive(*pid)) {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            });
            let _ = gone.await;
            for left in sealmark_engine::children::kill_descendants() {
                say!("sealmark: {left}");
            }
            // Their sandboxes are under this run's own temporary directory, removed below.
            say!("sealmark: removed the temporary directories of the killed run(s) with sealmark's own");
        }
        Err(code)
    })
}

/// The entries in plan order; a task that panicked leaves a gap, named as such.
fn finish(entries: Vec<Option<ServerEntry>>, plan: &[Planned]) -> Vec<ServerEntry> {
    entries
        .into_iter()
        .zip(plan)
        .map(|(e, p)| e.unwrap_or_else(|| entry(p, Err("the run's task failed inside sealmark".to_string()))))
        .collect()
}

fn entry(p: &Planned, outcome: Result<sealmark_engine::record::Record, String>) -> ServerEntry {
    let (record, error) = match outcome {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e)),
    };
    ServerEntry { name: p.name.clone(), index: Some(p.index), record, error }
}

/// Runs one server in its own sealmark process and reads the record it wrote.
async fn one(
    exe: &Path,
    argv: Vec<OsString>,
    tmp: &Path,
    p: &Planned,
    out: &Path,
    running: &Running,
    progress: &crate::terminal::Progress,
) -> ServerEntry {
    let spawned = tokio::process::Command::new(exe)
        .args(argv)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return entry(p, Err(format!("sealmark could not start a run for it: {e}"))),
    };
    let pid = child.id().map(|id| id as i32);
    if let Some(pid) = pid {
        running.lock().expect("running lock").insert(pid);
    }
    let mut last_error = None;
    if let Some(stderr) = child.stderr.take() {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(why) = line.strip_prefix("sealmark: error: ") {
                last_error = Some(why.to_string());
            }
            if relayed(&line) {
                // A run's stderr can carry a server's text (tool names in a refusal).
                progress.println(&sealmark_engine::text::visible(&format!("[{}] {line}", p.name)));
            }
        }
    }
    let status = child.wait().await;
    if let Some(pid) = pid {
        running.lock().expect("running lock").remove(&pid);
    }
    let record = std::fs::read_to_string(out).map_err(|_| ()).and_then(|t| read_saved(&t).map_err(|_| ()));
    match record {
        Ok(r) => entry(p, Ok(r)),
        Err(()) => {
            let how = match status.ok().and_then(|s| s.code()) {
                Some(code) => format!("its run exited with status {code}"),
                None => "its run was killed by a signal".to_string(),
            };
            entry(p, Err(last_error.map_or(how.clone(), |why| format!("{why} ({how})"))))
        }
    }
}

/// Whether a line of a run's stderr is passed on: not where it wrote its record (this
/// process's business), nor its grades and gate, which this process prints for all.
fn relayed(line: &str) -> bool {
    const OURS: [&str; 4] =
        ["sealmark: report written to ", "sealmark: below the ", "sealmark: no pack was graded", "  "];
    !OURS.iter().any(|p| line.starts_with(p))
}

/// The command line of one server's run: the flags of this one that shape a run, for
/// that server, writing its record to `out`.
fn child_args(args: &RunArgs, config: &Path, name: &str, out: &Path) -> Vec<OsString> {
    // Each run reads the servers where this one did (converting --from again, so no
    // secret of it is ever written down).
    let source = if args.from.is_some() { "--from" } else { "--config" };
    let mut a: Vec<OsString> = vec!["run".into(), source.into()];
    a.push(args.from.as_deref().unwrap_or(config).into());
    a.extend(["--server".into(), name.into(), "--format".into(), "json".into(), "--out".into()]);
    a.push(PathBuf::from(out).into());
    if !args.packs.is_empty() {
        a.extend(["--pack".into(), args.packs.join(",").into()]);
    }
    let flags = [
        (args.keep_sandbox, "--keep-sandbox"),
        (args.no_embedded, "--no-embedded"),
        (args.upstream, "--upstream"),
        (args.active, "--active"),
        (args.no_package_caches, "--no-package-caches"),
    ];
    a.extend(flags.into_iter().filter(|(on, _)| *on).map(|(_, flag)| OsString::from(flag)));
    let valued = [("--pg", &args.pg), ("--identity-a", &args.identity_a), ("--identity-b", &args.identity_b)];
    for (flag, value) in valued {
        if let Some(v) = value {
            a.extend([flag.into(), v.into()]);
        }
    }
    a
}
