//! Sealmark's engine.
//!
//! The pure part — record types, the check registry, grading, classification, the
//! judges that turn recorded observations into verdicts, config validation and the
//! renderers — does no I/O and builds for `wasm32-unknown-unknown`, so the viewer
//! renders exactly what the CLI renders. The `runtime` feature adds the part that
//! starts targets and servers, speaks MCP and collects observations.

pub mod applies;
pub mod assemble;
pub mod classify;
pub mod combined;
pub mod compare;
pub mod config;
pub mod explain;
pub mod glance;
pub mod grading;
pub mod judge;
pub mod model;
pub mod record;
pub mod rederive;
pub mod registry;
pub mod render;
#[doc(hidden)]
pub mod sample;
pub mod schema;
pub mod text;
pub mod tools;
pub mod upstream;

// The runtime, bottom up: the processes it owns, the targets it aims at, the session
// and runner that speak to the server, the collectors, and a run and the doctor.
#[cfg(feature = "runtime")]
pub mod children;
#[cfg(feature = "runtime")]
pub mod doctor;
#[cfg(feature = "runtime")]
pub mod packs;
#[cfg(feature = "runtime")]
pub mod run;
#[cfg(feature = "runtime")]
pub mod session;
#[cfg(feature = "runtime")]
pub mod targets;

#[cfg(all(test, feature = "runtime"))]
mod fuzz;

/// The version of sealmark itself, printed in every report header.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The methodology these checks and this grading formula implement.
pub const METHODOLOGY: &str = "0.3-draft";
/// The version of the JSON record layout (`config.schemaVersion`): a reader takes any
/// record of its major version (a newer minor only adds members) and refuses a newer
/// major. 1.1 added `observations`; 1.2 `db.seed` and `db.sqlTools`; 1.3
/// `server.selected` and the combined record of a run of several servers.
pub const SCHEMA_VERSION: record::SchemaVersion = record::SchemaVersion { major: 1, minor: 9 };
