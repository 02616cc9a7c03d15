//! The JSON record: the complete result of a run. Every report format renders from it.
//!
//! Wall-clock and port numbers live only in the volatile fields (`startedAt`,
//! `durationMs`, `sandbox.listenerPort`); everything else is a function of the
//! server's behaviour, so two runs of the same server render the same text.

use crate::classify::Classification;
use crate::grading::Grade;
use crate::judge::custom::CustomProbe;
use crate::model::{Evidence, Verdict};
use crate::tools::ToolSurface;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    pub sealmark: Producer,
    pub server: ServerRecord,
    pub options: Options,
    pub started_at: String,
    pub duration_ms: u64,
    pub packs: BTreeMap<String, PackResult>,
    pub checks: Vec<CheckResult>,
    pub classification: Vec<Classification>,
    pub sandbox: SandboxRecord,
    pub db: DbRecord,
    pub config: ConfigRecord,
    pub coverage: Coverage,
    pub badge: Badge,
    pub not_covered: Vec<String>,
    pub server_log: ServerLog,
    /// The upstream stub, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<UpstreamRecord>,
    /// The valid calls of `probes:` (probes without a check), in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probes: Option<ProbesRecord>,
    /// The custom checks' probes, each with its verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<CustomRecord>,
    /// What the server sent besides answers to the harness's requests (advisory).
    #[serde(default, skip_serializing_if = "Unasked::is_empty")]
    pub unasked: Unasked,
    /// What the judges read (`judge::Observations`), so every verdict can be re-derived
    /// from the record alone. Kept as JSON and read on demand: a record whose
    /// observations this build cannot read is still a record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::judge::Observations>")]
    pub observations: Option<Value>,
    /// Why the record carries no observations, when the run had them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations_omitted: Option<String>,
    /// What a replay found when it judged this record again (`run --replay`); a live
    /// run's record has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayRecord>,
}

/// A saved record judged again by this build: how much was re-judged, and every stored
/// result, grade and weight that is not what the record's own checks and observations
/// give (`rederive::replay`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplayRecord {
    /// How many checks were re-judged from the record's observations.
    pub rejudged: usize,
    /// Why the stored verdicts were re-graded without being re-judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_rejudged: Option<String>,
    /// Each check whose stored result the observations contradict, as one line.
    pub checks: Vec<String>,
    /// The stored grades and weights the checks contradict.
    #[serde(flatten)]
    pub distrust: Distrust,
}

/// What was found untrustworthy while grading a record again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Distrust {
    /// Each stored grade the checks do not give.
    pub grades: Vec<GradeMismatch>,
    /// Each check of a standard run stored with a weight the registry does not give it.
    pub weights: Vec<WeightMismatch>,
}

impl Distrust {
    pub fn is_empty(&self) -> bool {
        self.grades.is_empty() && self.weights.is_empty()
    }

    pub fn grade(&self, pack: &str) -> Option<&GradeMismatch> {
        self.grades.iter().find(|g| g.pack == pack)
    }
}

impl ReplayRecord {
    /// Whether anything stored is not what the record's checks give.
    pub fn differs(&self) -> bool {
        !(self.checks.is_empty() && self.distrust.is_empty())
    }

    /// What the replay found, one line each, as stderr and every report format say it.
    pub fn lines(&self) -> Vec<String> {
        let head = match &self.not_rejudged {
            Some(why) => format!("replay re-graded the stored verdicts, not re-judged: {why}"),
            None => format!(
                "replay re-judged {} check(s) from the record's observations; {} differ from the stored result",
                self.rejudged,
                self.checks.len()
            ),
        };
        let grades = self
            .distrust
            .grades
            .iter()
            .map(|g| format!("{}: stored grade {}, its checks give {}", g.pack, g.stored, g.recomputed));
        let weights = self
            .distrust
            .weights
            .iter()
            .map(|w| format!("{}: stored as {}, the registry weighs it {}", w.id, w.stored.id(), w.registry.id()));
        std::iter::once(head).chain(self.checks.iter().cloned()).chain(grades).chain(weights).collect()
    }
}

/// A stored grade the record's checks do not give.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GradeMismatch {
    pub pack: String,
    /// What the record stored (`A (4/4)`, `not graded`, `absent`).
    pub stored: String,
    /// What its checks give.
    pub recomputed: String,
}

/// A check of a standard run stored with a weight its registry entry does not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WeightMismatch {
    pub id: String,
    pub stored: crate::model::Weight,
    pub registry: crate::model::Weight,
}

/// The most serialised observations a record keeps; a run that observed more keeps
/// none and says so (its verdicts are then re-graded, not re-judged, on replay).
pub const OBSERVATIONS_KEPT_BYTES: usize = 4 << 20;

/// A record layout version, written `"major.minor"` (records before 1.1 wrote a bare
/// major number, which reads as `major.0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SchemaVersion {
    pub major: u32,
    pub minor: u32,
}

impl std::fmt::Display for SchemaVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl Serialize for SchemaVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SchemaVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        SchemaVersion::from_value(&Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl SchemaVersion {
    fn from_value(v: &Value) -> Result<SchemaVersion, String> {
        let bad = || format!("a record version is \"major.minor\" (e.g. \"1.1\"), not {v}");
        match v {
            Value::Number(n) => {
                n.as_u64().and_then(|m| u32::try_from(m).ok()).map(|major| SchemaVersion { major, minor: 0 })
            }
            Value::String(s) => s
                .split_once('.')
                .and_then(|(a, b)| Some(SchemaVersion { major: a.parse().ok()?, minor: b.parse().ok()? })),
            _ => None,
        }
        .ok_or_else(bad)
    }
}

/// `value` with every string redacted as a record is (`Record::redact`).
pub fn redacted<T: Serialize + serde::de::DeserializeOwned>(value: T, replacements: &[(String, String)]) -> T {
    let mut v = serde_json::to_value(&value).expect("observations serialise");
    redact_strings(&mut v, replacements);
    serde_json::from_value(v).expect("redaction keeps the shape")
}

fn redact_strings(v: &mut Value, reps: &[(String, String)]) {
    match v {
        Value::String(s) => {
            for (from, to) in reps {
                if !from.is_empty() && s.contains(from.as_str()) {
                    *s = s.replace(from.as_str(), to);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| redact_strings(i, reps)),
        Value::Object(m) => m.values_mut().for_each(|i| redact_strings(i, reps)),
        _ => {}
    }
}

/// What a server sent that answered nothing the harness asked: advisory, never a
/// verdict. Each is a sign of a server that is broken or that tries to steer its client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Unasked {
    /// Lines on stdout that are not JSON.
    pub junk_lines: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_junk_line: Option<String>,
    /// Answers to request ids the harness never sent, or a second answer to one; they
    /// were dropped, never taken as an answer.
    pub unsolicited_answers: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_unsolicited_answer: Option<String>,
    /// Requests the server sent to the harness, by method (the harness offers no client
    /// capabilities and refuses them, answering `ping` only).
    pub server_requests: BTreeMap<String, u64>,
    /// Of those, how many got no answer: past the per-session bound, or while the server
    /// was not reading its stdin.
    pub server_requests_unanswered: u64,
    /// Notifications the server sent (read, scanned for canaries, otherwise ignored).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub notifications: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// More notifications than this in one run are reported: a flood, not a server's chatter.
const NOTIFICATION_FLOOD: u64 = 1000;

impl Unasked {
    /// Nothing worth a report line (a server's ordinary notifications are not).
    pub fn is_empty(&self) -> bool {
        self.lines().is_empty()
    }

    /// Adds what another session saw; the first line and answer stay the earliest.
    pub fn absorb(&mut self, other: Unasked) {
        self.junk_lines += other.junk_lines;
        self.first_junk_line = self.first_junk_line.take().or(other.first_junk_line);
        self.unsolicited_answers += other.unsolicited_answers;
        self.first_unsolicited_answer = self.first_unsolicited_answer.take().or(other.first_unsolicited_answer);
        for (method, n) in other.server_requests {
            *self.server_requests.entry(method).or_default() += n;
        }
        self.server_requests_unanswered += other.server_requests_unanswered;
        self.notifications += other.notifications;
    }

    /// One line per kind, for the reports.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.junk_lines > 0 {
            let first = self.first_junk_line.as_deref().unwrap_or_default();
            out.push(format!("{} line(s) on stdout that are not JSON, the first: \"{first}\"", self.junk_lines));
        }
        if self.unsolicited_answers > 0 {
            let first = self.first_unsolicited_answer.as_deref().unwrap_or_default();
            out.push(format!(
                "{} answer(s) to request ids the harness never sent (or answered twice), dropped; the first: {first}",
                self.unsolicited_answers
            ));
        }
        if !self.server_requests.is_empty() {
            let asked: Vec<String> = self.server_requests.iter().map(|(m, n)| format!("{m} ×{n}")).collect();
            let mut line = format!("requests from the server: {}", asked.join(", "));
            if self.server_requests_unanswered > 0 {
                line.push_str(&format!(
                    "; {} left unanswered (over the bound, or it was not reading)",
                    self.server_requests_unanswered
                ));
            }
            out.push(line);
        }
        if self.notifications > NOTIFICATION_FLOOD {
            out.push(format!("{} notifications, a flood (each was read and scanned, none judged)", self.notifications));
        }
        out
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProbesRecord {
    pub calls: Vec<ProbeCall>,
}

/// One valid call of `probes:`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeCall {
    pub name: String,
    pub tool: String,
    /// What came back, in one short line.
    pub outcome: String,
    /// Volatile: how long the call took.
    pub elapsed_ms: u64,
    /// `expect` clauses that did not hold: warnings, never a verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CustomRecord {
    pub probes: Vec<CustomProbe>,
}

/// Why a saved record cannot be read (replay, baselines, the viewer).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SavedRecordError {
    #[error("{line}:{column}: not a sealmark record: {message}")]
    NotARecord { line: usize, column: usize, message: String },
    #[error(
        "a record of methodology {found}; this sealmark grades by methodology {} and does not re-grade another (use a sealmark release of methodology {found})",
        crate::METHODOLOGY
    )]
    OtherMethodology { found: String },
    #[error(
        "record version {found} is newer than this sealmark reads (version {}.x); update sealmark",
        crate::SCHEMA_VERSION.major
    )]
    NewerVersion { found: SchemaVersion },
    /// Two results for one check: which one counts would be a guess, so neither does.
    #[error("checks[{again}] repeats the check id \"{id}\" of checks[{first}]; a record holds one result per check")]
    RepeatedCheck { id: String, first: usize, again: usize },
    /// A combined record's server whose record is refused.
    #[error("servers[{name}]: {source}")]
    InServer { name: String, source: Box<SavedRecordError> },
    #[error("a combined record lists the server \"{name}\" twice; which one counts would be a guess")]
    RepeatedServer { name: String },
    #[error(
        "a combined record names a server \"{name}\"; a name is up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"
    )]
    BadServerName { name: String },
}

/// A saved record, refused when it is not JSON of a record, comes from another
/// methodology, has a newer record version than this build reads, or holds two results
/// for one check.
pub fn read_saved(text: &str) -> Result<Record, SavedRecordError> {
    read(text, false)
}

/// A saved record to compare against (`--baseline`): as `read_saved`, but one of another
/// methodology is read, because comparing is not re-grading; the comparison notes it.
pub fn read_baseline(text: &str) -> Result<Record, SavedRecordError> {
    read(text, true)
}

fn read(text: &str, any_methodology: bool) -> Result<Record, SavedRecordError> {
    let newer = |found: SchemaVersion| found.major > crate::SCHEMA_VERSION.major;
    let record: Record = serde_json::from_str(text).map_err(|e| {
        // A newer major may not parse at all: say that, not what failed to parse.
        let found = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.pointer("/config/schemaVersion").and_then(|v| SchemaVersion::from_value(v).ok()));
        match found {
            Some(found) if newer(found) => SavedRecordError::NewerVersion { found },
            _ => SavedRecordError::NotARecord { line: e.line(), column: e.column(), message: e.to_string() },
        }
    })?;
    check_saved(&record, any_methodology)?;
    Ok(record)
}

/// The rules a parsed record is held to: this methodology (unless `any_methodology`), a
/// record version this build reads, one result per check.
pub(crate) fn check_saved(record: &Record, any_methodology: bool) -> Result<(), SavedRecordError> {
    if record.sealmark.methodology != crate::METHODOLOGY && !any_methodology {
        return Err(SavedRecordError::OtherMethodology { found: record.sealmark.methodology.clone() });
    }
    if record.config.schema_version.major > crate::SCHEMA_VERSION.major {
        return Err(SavedRecordError::NewerVersion { found: record.config.schema_version });
    }
    let mut seen = std::collections::BTreeMap::new();
    for (i, check) in record.checks.iter().enumerate() {
        if let Some(first) = seen.insert(check.id.as_str(), i) {
            return Err(SavedRecordError::RepeatedCheck { id: check.id.clone(), first, again: i });
        }
    }
    Ok(())
}

/// What the upstream stub did.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamRecord {
    /// Its URL (volatile: the port changes every run).
    pub url: String,
    /// How many requests reached it during the run.
    pub requests: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Producer {
    pub version: String,
    pub methodology: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerRecord {
    pub name: String,
    /// Its name under the config's `servers:`, when it was one of several (record 1.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected: Option<String>,
    pub version: String,
    /// The command as written, placeholders unexpanded (empty for a URL-only server).
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Environment and headers as configured, canaries as `<canary>`, secrets `<redacted>`.
    pub env: BTreeMap<String, String>,
    pub transport: String,
    pub tools: Vec<String>,
    pub surface: Vec<ToolSurface>,
    /// What the server said about itself in its initialize answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub announced: Option<Announced>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Announced {
    pub name: String,
    pub version: String,
    pub protocol_version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Options {
    pub packs_requested: Vec<String>,
    /// Candidate packs the config declared: added by themselves, or skipped because
    /// the user chose a pack list without them; one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pack_notes: Vec<String>,
    pub timeout_probe_sec: u64,
    pub active: bool,
    pub sandbox: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PackStatus {
    Graded,
    Na,
    Inconclusive,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PackResult {
    pub status: PackStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade: Option<Grade>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckResult {
    pub id: String,
    pub pack: String,
    pub label: String,
    pub critical: bool,
    /// Shown, never counted in the grade.
    pub advisory: bool,
    pub candidate: bool,
    pub scope: String,
    pub verdict: Verdict,
    pub summary: String,
    pub evidence: Vec<Evidence>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxRecord {
    /// Always the placeholder `{sandbox_dir}`: the real path changes every run.
    pub dir: String,
    pub env_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listener_port: Option<u16>,
    pub cleaned_up: bool,
    /// Processes of the server still alive after it was stopped, and what was done.
    pub leftover_processes: Vec<String>,
    pub active: bool,
    pub enabled: bool,
    pub kept: bool,
    /// Variables the server inherited from sealmark's environment.
    pub inherited: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DbRecord {
    pub used: bool,
    pub summary: String,
    /// The seed the database was built from, when one was used (record 1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// The SQL tools the db pack sent its probes through (record 1.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sql_tools: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigRecord {
    pub hash: String,
    pub profile: String,
    pub standard: bool,
    pub standard_diff: Vec<String>,
    pub methodology: String,
    #[schemars(with = "String")]
    pub schema_version: SchemaVersion,
    /// The config file, as given on the command line (absent for the quick form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The line of the server's `command` or `url` in that file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_line: Option<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    pub valid_calls: u32,
    pub tools_called_valid: u32,
    pub tools_total: u32,
    /// `covered` (every tool reached with a valid call), `partial`, or `hygiene-only`.
    pub level: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Badge {
    pub eligible: bool,
    pub reason: String,
}

/// What the server printed on stderr, kept bounded.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerLog {
    pub bytes: u64,
    pub truncated: bool,
    pub head: String,
}

impl Record {
    /// Replaces each `from` with its `to` in every string of the record, so run-specific
    /// paths and secrets that a server echoed never reach a report.
    pub fn redact(self, replacements: &[(String, String)]) -> Record {
        redacted(self, replacements)
    }

    /// Keeps the observations the judges read, unless they are larger than
    /// `OBSERVATIONS_KEPT_BYTES`, in which case the record says so instead.
    pub fn keep_observations(&mut self, observations: &crate::judge::Observations) {
        let value = serde_json::to_value(observations).expect("observations serialise");
        let bytes = value.to_string().len();
        if bytes > OBSERVATIONS_KEPT_BYTES {
            self.observations_omitted = Some(format!(
                "the run observed {bytes} bytes, more than the {} MiB a record keeps",
                OBSERVATIONS_KEPT_BYTES >> 20
            ));
        } else {
            self.observations = Some(value);
        }
    }

    /// The observations this build's judges can read, or why there are none.
    pub fn observations(&self) -> Result<crate::judge::Observations, String> {
        let Some(value) = &self.observations else {
            return Err(match &self.observations_omitted {
                Some(why) => format!("the record carries no observations ({why})"),
                None => "the record carries no observations (it was made before record version 1.1)".to_string(),
            });
        };
        let version = value.get("version").and_then(Value::as_u64);
        if version != Some(u64::from(crate::judge::OBSERVATIONS_VERSION)) {
            return Err(format!(
                "the record's observations are of version {}, and this build reads version {}",
                version.map_or("(none)".to_string(), |v| v.to_string()),
                crate::judge::OBSERVATIONS_VERSION
            ));
        }
        crate::judge::Observations::deserialize(value)
            .map_err(|e| format!("the record's observations cannot be read: {e}"))
    }

    /// The checks of one pack, in record order.
    pub fn pack_checks<'a>(&'a self, pack: &'a str) -> impl Iterator<Item = &'a CheckResult> {
        self.checks.iter().filter(move |c| c.pack == pack)
    }
}
