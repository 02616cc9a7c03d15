//! The `sealmark` binary: parses the command line and dispatches; the work is in
//! `sealmark-engine`.

/// `eprintln!` with the loaded configs' credentials hidden: everything sealmark itself
/// says on stderr goes through it.
macro_rules! say {
    ($($arg:tt)*) => { eprintln!("{}", $crate::hidden(&format!($($arg)*))) };
}

mod args;
mod interrupt;
mod publish;
mod reference;
mod run;
mod setup;
mod several;
mod terminal;

use clap::Parser;
use std::process::ExitCode;
use std::sync::Mutex;

/// Exit codes, as documented in `sealmark run --help`.
pub mod exit {
    /// Every graded pack met the gate.
    pub const OK: u8 = 0;
    /// A graded pack is below the gate.
    pub const BELOW_GATE: u8 = 1;
    /// Bad usage, a bad config or record, or a machine problem.
    pub const USAGE: u8 = 2;
}

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    // Orphaned descendants of the servers sealmark starts are reparented to it, so they
    // are found and killed when the server is stopped.
    sealmark_engine::run::become_subreaper();
    let code = match cli.command {
        args::Command::Run(a) => run::run(*a),
        args::Command::Doctor(a) => setup::doctor(a),
        args::Command::Init(a) => setup::init(a),
        args::Command::Standard => {
            print!("{}", sealmark_engine::assemble::standard_yaml());
            exit::OK
        }
        args::Command::Schema { of } => {
            print!(
                "{}",
                match of {
                    args::SchemaOf::Record => sealmark_engine::schema::record_schema(),
                    args::SchemaOf::Combined => sealmark_engine::schema::combined_schema(),
                    args::SchemaOf::Config => sealmark_engine::schema::config_schema(),
                }
            );
            exit::OK
        }
        args::Command::ListChecks => reference::list_checks(),
        args::Command::Describe => reference::describe(),
        args::Command::Explain { check } => reference::explain(&check),
        args::Command::Merge(a) => run::merge(a),
        args::Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut args::Cli::command(), "sealmark", &mut std::io::stdout());
            exit::OK
        }
        args::Command::Man => {
            use clap::CommandFactory;
            match clap_mangen::Man::new(args::Cli::command()).render(&mut std::io::stdout()) {
                Ok(()) => exit::OK,
                Err(e) => usage_error(format!("cannot write the man page: {e}")),
            }
        }
    };
    ExitCode::from(code)
}

/// Prints an error in the one format sealmark uses for its own input problems.
pub fn usage_error(message: impl std::fmt::Display) -> u8 {
    say!("sealmark: error: {message}");
    exit::USAGE
}

/// The literal credentials of every config loaded (`Config::secrets`).
static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Hides a config's credentials from everything printed from now on.
pub fn keep_hidden(secrets: &[String]) {
    SECRETS.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(secrets);
}

/// Text sealmark prints, with the known credentials and any URL's password hidden.
pub fn hidden(text: &str) -> String {
    sealmark_engine::config::secrets::hide(text, &SECRETS.lock().unwrap_or_else(|e| e.into_inner()))
}
