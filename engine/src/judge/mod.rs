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

#[cfg(test)]
mod tests {
    use super::*;

    /// No pass without evidence: every judge, given observations in which nothing was
    /// sent or seen, says n/a or inconclusive (or fail), never pass.
    #[test]
    fn no_judge_passes_on_nothing() {
        let core = core::CoreObservations::default();
        let fs = fs::FsObservations {
            readers: vec!["read_file".into()],
            writers: vec!["write_file".into()],
            ..Default::default()
        };
        let net = net::NetObservations { tools: vec!["fetch".into()], ..Default::default() };
        let db = db::DbObservations { tools: vec!["query".into()], ..Default::default() };
        let sqlite = sqlite::SqliteObservations { tools: vec!["query".into()], ..Default::default() };
        let git = git::GitObservations::default();
        let http = http::HttpObservations::default();
        let credential = credential::CredentialObservations::default();
        let findings: Vec<(&str, Finding)> = vec![
            ("handshake", core::handshake(&core)),
            ("tool-poisoning", core::tool_poisoning(&core)),
            ("robust-input", core::robust_input(&core)),
            ("secret-echo", core::secret_echo(&core)),
            ("refusal-quality", core::refusal_quality(&core)),
            ("instructions-hygiene", core::instructions_hygiene(&core, &[])),
            ("fs-read-escape", fs::read_escape(&fs)),
            ("fs-write-escape", fs::write_escape(&fs)),
            ("fs-symlink-escape", fs::symlink_escape(&fs)),
            ("fs-large-read", fs::large_read(&fs)),
            ("effects-read-only", fs::effects_read_only(&fs)),
            ("effects-closed-world", fs::effects_closed_world(&fs)),
            ("effects-unannotated", fs::effects_unannotated(&fs)),
            ("net-loopback-ssrf", net::loopback_ssrf(&net)),
            ("net-scheme-allowlist", net::scheme_allowlist(&net)),
            ("net-oversized-reply", net::oversized_reply(&net)),
            ("db-read-only", db::read_only(&db)),
            ("db-mutation-forms", db::mutation_forms(&db)),
            ("db-row-cap", db::row_cap(&db)),
            ("db-timeout", db::timeout(&db)),
            ("rls", db::rls(&db)),
            ("pii", db::pii(&db)),
            ("pii-masked", db::pii_masked(&db)),
            ("db-privilege", db::privilege(&db)),
            ("write-gate", db::write_gate(&db)),
            ("audit", db::audit(&db)),
            ("sqlite-read-only", sqlite::read_only(&sqlite)),
            ("sqlite-mutation-forms", sqlite::mutation_forms(&sqlite)),
            ("sqlite-attach", sqlite::attach(&sqlite)),
            ("sqlite-load-extension", sqlite::load_extension(&sqlite)),
            ("sqlite-row-cap", sqlite::row_cap(&sqlite)),
            ("sqlite-timeout", sqlite::timeout(&sqlite)),
            ("git-repo-scope", git::repo_scope(&git)),
            ("git-arg-injection", git::arg_injection(&git)),
            ("http-origin", http::origin(&http)),
            ("http-auth-required", http::auth_required(&http)),
            ("http-protocol-version", http::protocol_version(&http)),
            ("http-session", http::session(&http)),
            ("http-cors", http::cors(&http)),
            ("http-bind", http::bind(&http)),
            ("http-tls", http::tls(&http)),
            ("scope-escape", scope::escape(&[])),
            ("sql-guard-statements", sql_guard::statements(&[])),
            ("sql-guard-references", sql_guard::references(&[])),
            ("sql-guard-rowcap", sql_guard::rowcap(&[], 1000)),
            ("upstream-credential", credential::credential(&credential)),
        ];
        for (id, f) in &findings {
            assert_ne!(f.verdict, Verdict::Pass, "{id} passed on nothing: {}", f.summary);
        }
        // Every check of the registry (but custom ones) is in the list above.
        for c in crate::registry::CHECKS {
            assert!(findings.iter().any(|(id, _)| id == &c.id), "{} is not judged here", c.id);
        }
    }
}
