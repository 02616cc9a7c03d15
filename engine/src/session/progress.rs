//! What the run is doing now, for the CLI's progress line: the stage (the pack being
//! collected) and how many messages the harness has sent the server. Process-wide on
//! purpose (one run per process; a run of several has a process per server), read
//! while the run works, and never part of the record.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

static STAGE: Mutex<&str> = Mutex::new("starting");
static SENT: AtomicU64 = AtomicU64::new(0);

pub(crate) fn stage(name: &'static str) {
    *STAGE.lock().expect("stage lock") = name;
}

pub(crate) fn sent() {
    SENT.fetch_add(1, Ordering::Relaxed);
}

/// The stage and the messages sent so far.
pub fn now() -> (&'static str, u64) {
    (*STAGE.lock().expect("stage lock"), SENT.load(Ordering::Relaxed))
}
