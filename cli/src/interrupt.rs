//! Runs the work that drives a server so that SIGINT, SIGTERM and SIGHUP end it alike:
//! the work is dropped, which stops the server's processes, the embedded Postgres and
//! the stub and removes the sandbox; sealmark then says what it cleaned and exits with
//! the conventional 128 + the signal's number. CI systems cancel jobs with SIGTERM.

use crate::usage_error;
use sealmark_engine::run::take_cleanup_notes;
use std::future::Future;
use tokio::signal::unix::{SignalKind, signal};

/// How long the runtime may take to wind down what the dropped work left running.
const WIND_DOWN: std::time::Duration = std::time::Duration::from_secs(5);

/// The work's output, or the exit code: 130, 143 or 129 after a signal, 2 when no
/// runtime could be started.
pub fn run_to_end<F: Future>(work: F) -> Result<F::Output, u8> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| usage_error(format!("cannot start the async runtime: {e}")))?;
    let outcome = runtime.block_on(async {
        // Registered before the work starts, so no signal finds the default action.
        let handlers = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()), signal(SignalKind::hangup()));
        let (Ok(mut int), Ok(mut term), Ok(mut hup)) = handlers else {
            return Err(("no signal handler could be installed", 2));
        };
        tokio::select! {
            out = work => Ok(out),
            _ = int.recv() => Err(("SIGINT", 130)),
            _ = term.recv() => Err(("SIGTERM", 143)),
            _ = hup.recv() => Err(("SIGHUP", 129)),
        }
    });
    runtime.shutdown_timeout(WIND_DOWN);
    match outcome {
        Ok(out) => Ok(out),
        Err((why, 2)) => Err(usage_error(why)),
        Err((signal, code)) => {
            let cleaned = take_cleanup_notes();
            let what = if cleaned.is_empty() { "nothing was running yet".to_string() } else { cleaned.join("; ") };
            say!("sealmark: interrupted by {signal}: {what}");
            Err(code)
        }
    }
}
