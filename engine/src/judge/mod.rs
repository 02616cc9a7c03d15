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

use crate::model::{Evidence, Pack, Verdict, VerifiedBy};
use crate::registry::{self, CHECKS, CheckDef};
use crate::text::{clip, visible};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The layout of [`Observations`]; a record whose observations have another version is
/// re-graded from its stored verdicts, not re-judged.
pub const OBSERVATIONS_VERSION: u32 = 1;

/// Everything the judges read, as collection produced it: redacted and clipped exactly
/// as the record keeps it, so judging a run and judging its record give one answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Observations {
    pub version: u32,
    pub settings: Settings,
    pub core: core::CoreObservations,
    pub fs: fs::FsObservations,
    pub net: net::NetObservations,
    pub git: git::GitObservations,
    /// The http pack's raw requests; absent for a stdio server or when the pack did not run.
    pub http: Option<http::HttpObservations>,
    pub db: db::DbObservations,
    pub sqlite: sqlite::SqliteObservations,
    /// The calls aimed at the upstream stub; absent when the run had no stub.
    pub backend: Option<backend::BackendObservations>,
    /// Why each requested pack observed nothing its judges read, as collection decided
    /// it (`packs::Gate`, or what the pack found when it looked): the record's reason
    /// for a pack that is not graded.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub not_run: std::collections::BTreeMap<Pack, String>,
}

impl Observations {
    /// Whether `pack` observed what its judges need: its checks come out exactly then.
    /// The custom pack's probes are kept beside the observations, not in them.
    pub fn observed(&self, pack: Pack) -> bool {
        let (f, b) = (&self.fs, self.backend.as_ref());
        match pack {
            Pack::Core => true,
            Pack::Fs => !f.readers.is_empty() || !f.writers.is_empty(),
            Pack::Effects => !f.readers.is_empty() || !f.writers.is_empty() || !f.benign.is_empty(),
            Pack::Net => !self.net.tools.is_empty(),
            Pack::Git => !self.git.tools.is_empty(),
            Pack::Http => self.http.is_some(),
            Pack::Db => !self.db.tools.is_empty(),
            Pack::Sqlite => !self.sqlite.tools.is_empty() || !self.sqlite.write_tools.is_empty(),
            Pack::Scope => b.is_some_and(|b| !b.scope.is_empty()),
            Pack::SqlGuard => b.is_some_and(|b| !b.statements.is_empty()),
            Pack::Upstream => b.is_some(),
            Pack::Custom => false,
        }
    }
}

/// What of the configuration the judges read.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// The packs this run judged (`Config::runs_pack`).
    pub packs: Vec<Pack>,
    /// `checks.instructions-hygiene.deny`: the patterns instructions must not match.
    pub instructions_deny: Vec<String>,
    /// Checks turned off by `checks.<id>.enabled: false`.
    pub disabled: Vec<String>,
}

/// Every check the observations let the judges decide, in `CHECKS` order: a pack's
/// checks all come out when it ran and observed what it needs, none otherwise.
pub fn all(obs: &Observations) -> Vec<(&'static CheckDef, Finding)> {
    let runs = |p: Pack| obs.settings.packs.contains(&p);
    let mut found: Vec<(&'static str, Finding)> = Vec::new();
    let mut judge = |id: &'static str, f: Finding| found.push((id, f));
    let c = &obs.core;
    let deny: Vec<regex::Regex> = obs
        .settings
        .instructions_deny
        .iter()
        .filter_map(|p| regex::RegexBuilder::new(p).case_insensitive(true).build().ok())
        .collect();
    judge("handshake", core::handshake(c));
    judge("tool-poisoning", core::tool_poisoning(c));
    judge("robust-input", core::robust_input(c));
    judge("secret-echo", core::secret_echo(c));
    judge("refusal-quality", core::refusal_quality(c));
    judge("instructions-hygiene", core::instructions_hygiene(c, &deny));
    let f = &obs.fs;
    if obs.observed(Pack::Fs) {
        judge("fs-read-escape", fs::read_escape(f));
        judge("fs-write-escape", fs::write_escape(f));
        judge("fs-symlink-escape", fs::symlink_escape(f));
        judge("fs-large-read", fs::large_read(f));
    }
    if obs.observed(Pack::Effects) {
        judge("effects-read-only", fs::effects_read_only(f));
        judge("effects-closed-world", fs::effects_closed_world(f));
        judge("effects-unannotated", fs::effects_unannotated(f));
    }
    let n = &obs.net;
    if obs.observed(Pack::Net) {
        judge("net-loopback-ssrf", net::loopback_ssrf(n));
        judge("net-scheme-allowlist", net::scheme_allowlist(n));
        judge("net-oversized-reply", net::oversized_reply(n));
    }
    let g = &obs.git;
    if obs.observed(Pack::Git) {
        judge("git-repo-scope", git::repo_scope(g));
        judge("git-arg-injection", git::arg_injection(g));
        judge("git-init-scope", git::init_scope(g));
        judge("git-add-scope", git::add_scope(g));
        judge("git-ref-options", git::ref_options(g));
    }
    if let Some(h) = &obs.http {
        judge("http-origin", http::origin(h));
        judge("http-auth-required", http::auth_required(h));
        judge("http-protocol-version", http::protocol_version(h));
        judge("http-session", http::session(h));
        judge("http-cors", http::cors(h));
        judge("http-bind", http::bind(h));
        judge("http-tls", http::tls(h));
    }
    let d = &obs.db;
    if obs.observed(Pack::Db) {
        // A lock the harness had to break changed the ground under every db check.
        let mut caveated = |id: &'static str, mut finding: Finding| {
            for caveat in &d.caveats {
                finding.evidence.push(Evidence::new("caveat", caveat.clone(), VerifiedBy::State).code("db.caveat"));
            }
            judge(id, finding)
        };
        caveated("db-row-cap", db::row_cap(d));
        caveated("db-timeout", db::timeout(d));
        caveated("rls", db::rls(d));
        caveated("pii", db::pii(d));
        caveated("pii-masked", db::pii_masked(d));
        caveated("write-gate", db::write_gate(d));
        caveated("audit", db::audit(d));
        caveated("db-privilege", db::privilege(d));
        caveated("db-read-only", db::read_only(d));
        caveated("db-mutation-forms", db::mutation_forms(d));
    }
    let s = &obs.sqlite;
    if obs.observed(Pack::Sqlite) {
        judge("sqlite-read-only", sqlite::read_only(s));
        judge("sqlite-mutation-forms", sqlite::mutation_forms(s));
        judge("sqlite-attach", sqlite::attach(s));
        judge("sqlite-load-extension", sqlite::load_extension(s));
        judge("sqlite-row-cap", sqlite::row_cap(s));
        judge("sqlite-timeout", sqlite::timeout(s));
    }
    if let Some(b) = &obs.backend {
        if !b.scope.is_empty() {
            judge("scope-escape", scope::escape(&b.scope));
        }
        if !b.statements.is_empty() {
            judge("sql-guard-statements", sql_guard::statements(&b.statements));
            judge("sql-guard-references", sql_guard::references(&b.references, b.references_na.as_deref()));
            judge("sql-guard-rowcap", sql_guard::rowcap(&b.rowcap, b.row_cap));
        }
        judge("upstream-credential", credential::credential(&b.credential));
    }
    let mut findings: Vec<(&'static CheckDef, Finding)> = found
        .into_iter()
        .map(|(id, f)| (registry::check(id).expect("every judged id is declared"), f))
        .filter(|(def, _)| runs(def.pack))
        .map(|(def, f)| match obs.settings.disabled.iter().any(|d| d == def.id) {
            true => (def, Finding::new(Verdict::Na, format!("turned off by checks.{}.enabled", def.id), Vec::new())),
            false => (def, f),
        })
        .collect();
    findings.sort_by_key(|(def, _)| CHECKS.iter().position(|c| c.id == def.id));
    findings
}

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

/// What came back for one message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Answer {
    Success {
        text: String,
    },
    ToolError {
        text: String,
    },
    RpcError {
        code: i64,
        message: String,
    },
    /// Nothing, though the server answered the ping that followed.
    Silence,
    /// No answer within the probe timeout.
    Timeout,
    /// The process exited or closed its output.
    Died {
        reason: String,
    },
    /// The harness did not send it (the server had already left calls unanswered).
    NotSent {
        reason: String,
    },
    /// The answer was longer than the harness parses (8 MiB): this many bytes.
    TooLarge {
        bytes: u64,
    },
}

impl Answer {
    fn describe(&self) -> String {
        match self {
            Answer::Success { text } => format!("accepted: the tool reported success ({})", quote(text)),
            Answer::ToolError { text } => format!("rejected with isError ({})", quote(text)),
            Answer::RpcError { code, message } => format!("rejected with JSON-RPC error {code} ({})", quote(message)),
            Answer::Silence => "no answer, and the server answered ping afterwards".to_string(),
            Answer::Timeout => "no answer within the probe timeout".to_string(),
            Answer::Died { reason } => format!("the server went away: {reason}"),
            Answer::NotSent { reason } => format!("not sent: {reason}"),
            Answer::TooLarge { bytes } => {
                format!("an answer of {bytes} bytes, longer than the 8 MiB the harness parses")
            }
        }
    }

    /// A short line for evidence: what came back, its text clipped and made visible.
    pub fn brief(&self) -> String {
        match self {
            Answer::Success { text } => format!("answered: \"{}\"", clip(&visible(text.trim()), 80)),
            Answer::ToolError { text } => format!("refused with isError: \"{}\"", clip(&visible(text.trim()), 80)),
            Answer::RpcError { code, message } => {
                format!("refused with JSON-RPC error {code}: \"{}\"", clip(&visible(message), 80))
            }
            Answer::Silence => "no answer".to_string(),
            Answer::Timeout => "no answer within the probe timeout".to_string(),
            Answer::Died { reason } => format!("the server went away: {reason}"),
            Answer::NotSent { reason } => format!("not sent: {reason}"),
            Answer::TooLarge { bytes } => format!("an answer of {bytes} bytes, too large to parse"),
        }
    }

    /// Whether the server answered at all: a result, a tool error, a JSON-RPC error, or
    /// an answer too large to parse. Anything else is no evidence of what it would do.
    pub fn was_answered(&self) -> bool {
        matches!(
            self,
            Answer::Success { .. } | Answer::ToolError { .. } | Answer::RpcError { .. } | Answer::TooLarge { .. }
        )
    }

    /// The text of a rejection, when it has one.
    fn rejection_text(&self) -> Option<&str> {
        match self {
            Answer::ToolError { text } => Some(text.as_str()),
            Answer::RpcError { message, .. } => Some(message.as_str()),
            _ => None,
        }
        .filter(|t| !t.trim().is_empty())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Canary {
    pub name: String,
    /// Never written to a record: the scan has used it by then.
    #[serde(skip)]
    pub value: String,
}

/// A server's text as evidence quotes it: trimmed, made visible, clipped.
fn quote(text: &str) -> String {
    format!("\"{}\"", clip(&visible(text.trim()), 120))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Observations in which every pack found its tools and then saw nothing at all.
    fn every_pack_saw_nothing() -> Observations {
        let nothing = backend::ToolRun {
            tool: "query".into(),
            control: backend::Forward {
                probe: "control".into(),
                tool: "query".into(),
                args: serde_json::Value::Null,
                answer: Answer::Silence,
                reached: Vec::new(),
            },
            probes: Vec::new(),
        };
        Observations {
            version: OBSERVATIONS_VERSION,
            settings: Settings { packs: Pack::ALL.to_vec(), ..Default::default() },
            fs: fs::FsObservations {
                readers: vec!["read_file".into()],
                writers: vec!["write_file".into()],
                ..Default::default()
            },
            net: net::NetObservations { tools: vec!["fetch".into()], ..Default::default() },
            git: git::GitObservations { tools: vec!["git_log".into()], ..Default::default() },
            http: Some(http::HttpObservations::default()),
            db: db::DbObservations { tools: vec!["query".into()], ..Default::default() },
            sqlite: sqlite::SqliteObservations { tools: vec!["query".into()], ..Default::default() },
            backend: Some(backend::BackendObservations {
                scope: vec![nothing.clone()],
                statements: vec![nothing],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// Every check of the registry (custom ones aside) is judged exactly once, in
    /// `CHECKS` order, when its pack ran and found its tools.
    #[test]
    fn every_declared_check_is_judged_once_in_registry_order() {
        let ids: Vec<&str> = all(&every_pack_saw_nothing()).iter().map(|(d, _)| d.id).collect();
        let declared: Vec<&str> = CHECKS.iter().map(|c| c.id).collect();
        assert_eq!(ids, declared);
    }

    /// A pack that did not run yields no finding; a turned-off check is n/a, not judged.
    #[test]
    fn packs_that_did_not_run_and_checks_turned_off() {
        let mut obs = every_pack_saw_nothing();
        obs.settings.packs.retain(|p| *p != Pack::Fs);
        obs.settings.disabled = vec!["secret-echo".into()];
        let found = all(&obs);
        assert!(found.iter().all(|(d, _)| d.pack != Pack::Fs));
        assert!(found.iter().any(|(d, _)| d.pack == Pack::Effects), "effects reads the same observations");
        let (_, off) = found.iter().find(|(d, _)| d.id == "secret-echo").unwrap();
        assert_eq!((off.verdict, off.summary.as_str()), (Verdict::Na, "turned off by checks.secret-echo.enabled"));
        let none = all(&Observations { settings: obs.settings.clone(), ..Default::default() });
        assert!(none.iter().all(|(d, _)| d.pack == Pack::Core), "packs that found no tools judge nothing");
    }

    /// No pass without evidence: every judge, given observations in which nothing was
    /// sent or seen, says n/a or inconclusive (or fail), never pass.
    #[test]
    fn no_judge_passes_on_nothing() {
        for (def, f) in all(&every_pack_saw_nothing()) {
            assert_ne!(f.verdict, Verdict::Pass, "{} passed on nothing: {}", def.id, f.summary);
        }
    }

    /// Observations survive the record: what is written reads back to the same verdicts.
    #[test]
    fn observations_read_back_to_the_same_findings() {
        let obs = every_pack_saw_nothing();
        let text = serde_json::to_string(&obs).unwrap();
        let back: Observations = serde_json::from_str(&text).unwrap();
        let findings = |o: &Observations| all(o).into_iter().map(|(d, f)| (d.id, f)).collect::<Vec<_>>();
        assert_eq!(findings(&back), findings(&obs));
    }

    /// A lock the harness had to break changes the ground under every db check, so the
    /// caveat is in the evidence of each of them, not only of the write checks.
    #[test]
    fn the_lock_caveat_reaches_every_db_check() {
        let mut obs = every_pack_saw_nothing();
        obs.db.caveats = vec!["the server held a lock on the scratch state".into()];
        let db: Vec<_> = all(&obs).into_iter().filter(|(d, _)| d.pack == Pack::Db).collect();
        assert_eq!(db.len(), CHECKS.iter().filter(|c| c.pack == Pack::Db).count());
        for (def, f) in db {
            let caveats = f.evidence.iter().filter(|e| e.code.as_deref() == Some("db.caveat")).count();
            assert_eq!(caveats, 1, "{}: {:?}", def.id, f.evidence);
        }
    }
}
