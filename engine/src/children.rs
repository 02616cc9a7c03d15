//! Every process the harness starts is owned until it is reaped: the server's process
//! group, what the server left behind (found by the run marker in its environment,
//! or as descendants of sealmark, which is their subreaper), and the embedded
//! Postgres. What a cleanup did is kept for the message of an interrupted run.

use std::sync::Mutex;
use std::time::Duration;

/// Marks every process the server starts, so ones that leave its process group are found.
pub const RUN_MARKER: &str = "SEALMARK_RUN_ID";

/// What the cleanup of the current run did, for the message of an interrupted run.
static CLEANUP: Mutex<Vec<String>> = Mutex::new(Vec::new());

pub(crate) fn cleanup_note(what: String) {
    CLEANUP.lock().expect("cleanup lock").push(what);
}

/// What was cleaned up since the last call, in order: an interrupted run's drops stop
/// the server, the database and the stub, and remove the sandbox.
pub fn take_cleanup_notes() -> Vec<String> {
    std::mem::take(&mut *CLEANUP.lock().expect("cleanup lock"))
}

pub(crate) fn signal_group(pgid: i32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

pub(crate) fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// Processes sealmark started itself and still owns (servers, the embedded Postgres):
/// never taken for strays.
static OWNED: Mutex<std::collections::BTreeSet<i32>> = Mutex::new(std::collections::BTreeSet::new());

pub fn own(pid: i32) {
    OWNED.lock().expect("owned lock").insert(pid);
}

pub fn disown(pid: i32) {
    OWNED.lock().expect("owned lock").remove(&pid);
}

/// Whether this OS shows the harness every process (/proc) and lets it adopt orphans.
pub const PROCESS_TABLE: bool = cfg!(target_os = "linux");

/// The gap every record of a run without a process table carries.
pub const NO_PROCESS_TABLE: &str = "processes outside the server's process group: this OS has no /proc, so a descendant that leaves the group (setsid, a daemon) is neither found, reported nor killed, and http-bind cannot see the server's listening sockets";

/// Makes sealmark the reaper of its orphaned descendants, so a server's child that
/// leaves its session and scrubs its environment (`setsid env -i …`) is reparented to
/// sealmark rather than to init, and is found. Linux only; elsewhere a no-op.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) takes integers and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// Each live process's parent, from /proc.
fn parents() -> Vec<(i32, i32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The fields after the command name, which may itself hold spaces and ')'.
            let rest = stat.rsplit_once(')')?.1;
            let ppid = rest.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// Every descendant of `roots`, in pid order.
pub(crate) fn descendants(roots: &[i32]) -> Vec<i32> {
    descendants_in(&parents(), roots)
}

/// `descendants`, in a tree already read.
fn descendants_in(tree: &[(i32, i32)], roots: &[i32]) -> Vec<i32> {
    let mut found: std::collections::BTreeSet<i32> = std::collections::BTreeSet::new();
    let mut frontier: Vec<i32> = roots.to_vec();
    while let Some(p) = frontier.pop() {
        for (pid, _) in tree.iter().filter(|(_, pp)| *pp == p) {
            if found.insert(*pid) {
                frontier.push(*pid);
            }
        }
    }
    found.into_iter().collect()
}

/// After the server's group was stopped: kills what is left of it, each process once,
/// and names it. `below` are the server's descendants seen before the stop; strays are
/// processes reparented to sealmark; marked ones carry the run's marker in their
/// environment (the only trace of a process whose parent chain is gone).
pub(crate) fn kill_leftovers(below: &[i32], run_id: &str) -> Vec<String> {
    let mut killed: Vec<(i32, String)> = Vec::new();
    let kill = |pid: i32, how: &str, killed: &mut Vec<(i32, String)>| {
        if alive(pid) && !killed.iter().any(|(p, _)| *p == pid) {
            killed.push((pid, kill_named(pid, how)));
        }
    };
    for pid in below {
        kill(*pid, "left the server's process group", &mut killed);
    }
    let strays = stop_strays();
    for pid in &strays {
        kill(*pid, "escaped to sealmark", &mut killed);
    }
    for pid in marked_pids(run_id) {
        kill(pid, "outside the server's process group", &mut killed);
    }
    // Strays that had already exited are sealmark's zombies: reaped with the killed.
    let mut ended: Vec<i32> = killed.iter().map(|(p, _)| *p).collect();
    ended.extend(strays);
    reap(&ended);
    killed.into_iter().map(|(_, name)| name).collect()
}

/// The processes reparented to sealmark that it did not start, with everything under
/// them: the descendants of a server whose parent exited. Stopped (SIGSTOP) here so that
/// they cannot fork while they are listed, and returned for `kill_leftovers`.
fn stop_strays() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut found = Vec::new();
    let owned = OWNED.lock().expect("owned lock").clone();
    let tree = parents();
    let strays: Vec<i32> =
        tree.iter().filter(|(pid, pp)| *pp == me && !owned.contains(pid)).map(|(pid, _)| *pid).collect();
    for pid in strays.iter().copied().chain(descendants_in(&tree, &strays)) {
        // SAFETY: kill(2) on a pid just read; no memory is touched.
        unsafe {
            libc::kill(pid, libc::SIGSTOP);
        }
        found.push(pid);
    }
    found
}

/// Kills every process below sealmark, stopping each first so that none forks while the
/// tree is read, and names them: what a run killed mid-cleanup (a run of several, past its
/// wind-down) left behind, reparented here because sealmark is their subreaper.
pub fn kill_descendants() -> Vec<String> {
    let me = std::process::id() as i32;
    let below = descendants(&[me]);
    for pid in &below {
        // SAFETY: kill(2) on a pid just read; no memory is touched.
        unsafe {
            libc::kill(*pid, libc::SIGSTOP);
        }
    }
    let mut killed = Vec::new();
    for pid in descendants(&[me]) {
        if alive(pid) {
            killed.push(kill_named(pid, "left behind by a killed run"));
        }
    }
    reap(&below);
    killed
}

/// Whether `pid` is alive and not a zombie (for a process table; false without one).
pub fn is_alive(pid: i32) -> bool {
    alive(pid)
}

/// Collects the exit of each of `pids` that is sealmark's child (a stray reparented to
/// it, the postmaster), so no zombie is left; others are reaped by their own parents.
pub fn reap(pids: &[i32]) {
    for pid in pids {
        for _ in 0..50 {
            // SAFETY: waitpid on one pid with WNOHANG; a pid that is not our child fails at once.
            let r = unsafe { libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG) };
            if r != 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Alive and not a zombie.
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
}

/// Kills one process (SIGKILL also ends a stopped one) and names it for the record.
fn kill_named(pid: i32, how: &str) -> String {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_string();
    // SAFETY: kill(2) on a pid just read; no memory is touched.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
    }
    format!("{name} ({how}; killed)")
}

/// The live processes (not sealmark, not zombies) whose environment carries this run's
/// marker, in pid order.
pub fn marked_pids(run_id: &str) -> Vec<i32> {
    let needle = format!("{RUN_MARKER}={run_id}");
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let me = std::process::id() as i32;
    let mut pids: Vec<i32> = entries.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    pids.sort_unstable();
    pids.retain(|pid| {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { return false };
        *pid != me && environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()) && alive(*pid)
    });
    pids
}
