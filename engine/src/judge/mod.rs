//! Judges: pure functions from recorded observations to verdicts with evidence.
//!
//! Nothing here does I/O. The runtime collects observations; a judge reads them.
//! That split is what lets a verdict be re-derived from a record, and tested without
//! a server.

pub mod backend;
pub mod core;
pub mod credential;
pub mod custom;
pub mod db;
pub mod fs;
pub mod git;
pub mod http;
pub mod net;
pub mod refusal;
pub mod scope;
pub mod sql_guard;
pub mod sqlite;
pub mod text;

use crate::model::Verdict;
use crate::record::Evidence;

/// What a judge decided about one check.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub verdict: Verdict,
    /// The one-line summary printed after the label.
    pub summary: String,
    pub evidence: Vec<Evidence>,
}

impl Finding {
    pub fn new(verdict: Verdict, summary: impl Into<String>, evidence: Vec<Evidence>) -> Self {
        Finding { verdict, summary: summary.into(), evidence }
    }
}
