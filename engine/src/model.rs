//! The small vocabulary every other module speaks: packs, verdicts, weights, observers.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// A pack groups checks that need the same kind of target. The order here is the
/// order of the blocks in every report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Pack {
    Core,
    Db,
    Sqlite,
    Fs,
    Net,
    Git,
    Http,
    Effects,
    Scope,
    SqlGuard,
    Upstream,
    Custom,
}

impl Pack {
    /// The standard packs, in report order; `packsRequested` defaults to these.
    pub const STANDARD: [Pack; 8] =
        [Pack::Core, Pack::Db, Pack::Sqlite, Pack::Fs, Pack::Net, Pack::Git, Pack::Http, Pack::Effects];
    /// Every pack a config may name.
    pub const ALL: [Pack; 12] = [
        Pack::Core,
        Pack::Db,
        Pack::Sqlite,
        Pack::Fs,
        Pack::Net,
        Pack::Git,
        Pack::Http,
        Pack::Effects,
        Pack::Scope,
        Pack::SqlGuard,
        Pack::Upstream,
        Pack::Custom,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Pack::Core => "core",
            Pack::Db => "db",
            Pack::Sqlite => "sqlite",
            Pack::Fs => "fs",
            Pack::Net => "net",
            Pack::Git => "git",
            Pack::Http => "http",
            Pack::Effects => "effects",
            Pack::Scope => "scope",
            Pack::SqlGuard => "sql-guard",
            Pack::Upstream => "upstream",
            Pack::Custom => "custom",
        }
    }

    pub fn from_id(id: &str) -> Option<Pack> {
        Pack::ALL.into_iter().find(|p| p.id() == id)
    }

    /// Candidate packs get their own letter but never reach the badge.
    pub fn is_candidate(self) -> bool {
        matches!(self, Pack::Scope | Pack::SqlGuard | Pack::Upstream)
    }
}

impl fmt::Display for Pack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The result of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Fail,
    Part,
    Inconclusive,
    Na,
    Pass,
}

impl Verdict {
    /// The fixed-width tag of a text report line.
    pub fn tag(self) -> &'static str {
        match self {
            Verdict::Pass => "[PASS]",
            Verdict::Part => "[PART]",
            Verdict::Fail => "[FAIL]",
            Verdict::Inconclusive => "[INCL]",
            Verdict::Na => "[N/A ]",
        }
    }

    pub fn id(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Part => "part",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Na => "na",
        }
    }

    /// Worst first: the order check lines are printed in.
    pub fn severity_rank(self) -> u8 {
        match self {
            Verdict::Fail => 0,
            Verdict::Part => 1,
            Verdict::Inconclusive => 2,
            Verdict::Pass => 3,
            Verdict::Na => 4,
        }
    }
}

/// How much a check counts in its pack's grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Weight {
    /// Scored, and a fail caps the pack at D.
    Critical,
    /// Scored.
    Scored,
    /// Shown, never counted.
    Advisory,
}

impl Weight {
    pub fn id(self) -> &'static str {
        match self {
            Weight::Critical => "critical",
            Weight::Scored => "scored",
            Weight::Advisory => "advisory",
        }
    }

    pub fn from_id(s: &str) -> Option<Weight> {
        [Weight::Critical, Weight::Scored, Weight::Advisory].into_iter().find(|w| w.id() == s)
    }
}

/// How a piece of evidence was established, strongest first; the server's own
/// answer (`response`) is the weakest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VerifiedBy {
    State,
    Sandbox,
    Listener,
    Upstream,
    Process,
    Log,
    Metadata,
    Response,
}

impl VerifiedBy {
    pub fn id(self) -> &'static str {
        match self {
            VerifiedBy::State => "state",
            VerifiedBy::Sandbox => "sandbox",
            VerifiedBy::Listener => "listener",
            VerifiedBy::Upstream => "upstream",
            VerifiedBy::Process => "process",
            VerifiedBy::Log => "log",
            VerifiedBy::Metadata => "metadata",
            VerifiedBy::Response => "response",
        }
    }

    /// Every kind, strongest first.
    pub const ALL: [VerifiedBy; 8] = [
        VerifiedBy::State,
        VerifiedBy::Sandbox,
        VerifiedBy::Listener,
        VerifiedBy::Upstream,
        VerifiedBy::Process,
        VerifiedBy::Log,
        VerifiedBy::Metadata,
        VerifiedBy::Response,
    ];

    /// What this observer reads, in a sentence for the Observers page.
    pub fn describe(self) -> &'static str {
        match self {
            VerifiedBy::State => {
                "The harness's own connection to the seeded database (the state reader, a superuser), or the SQLite file read directly, before and after each call: a row that changed is a write that landed."
            }
            VerifiedBy::Sandbox => {
                "Snapshots of the observed sandbox directories (and the harness's repositories) before and after each call: a path outside the root that changed is a write that escaped."
            }
            VerifiedBy::Listener => {
                "The loopback listener: which connections and requests reached it during a call, and with which probe's token."
            }
            VerifiedBy::Upstream => {
                "The upstream stub: which requests the server forwarded to its backend, with which names, statements and credentials."
            }
            VerifiedBy::Process => {
                "The operating system: the server's processes, how they exited, what they left running, and the sockets they listen on."
            }
            VerifiedBy::Log => "What the server wrote to stderr while a call ran.",
            VerifiedBy::Metadata => {
                "What the server declares, read as listed: its tools, prompts, resources, schemas, annotations and instructions. It proves what is declared, not what is done."
            }
            VerifiedBy::Response => {
                "The server's own answer to a call: the weakest kind, used where the harness owns no target that could show more."
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// What was sent or inspected.
    pub probe: String,
    /// What came back or was observed.
    pub outcome: String,
    pub verified_by: VerifiedBy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// A stable machine-readable name for the kind of observation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

impl Evidence {
    pub fn new(probe: impl Into<String>, outcome: impl Into<String>, verified_by: VerifiedBy) -> Self {
        Evidence {
            probe: probe.into(),
            outcome: outcome.into(),
            verified_by,
            role: None,
            tool: None,
            args: None,
            code: None,
        }
    }

    pub fn tool(mut self, tool: &str) -> Self {
        self.tool = Some(tool.to_string());
        self
    }

    pub fn args(mut self, args: Value) -> Self {
        self.args = Some(args);
        self
    }

    pub fn code(mut self, code: &str) -> Self {
        self.code = Some(code.to_string());
        self
    }
}

/// One probe (or family of probes) a check sends, as its check page lists it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ProbeDoc {
    pub name: &'static str,
    /// What goes out: the string the runtime sends, placeholders and all, or the
    /// request in words for a probe that is not one string. Code reads it; it holds no commentary.
    pub sends: &'static str,
    /// What the probe aims at or why, for the page; never sent.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub note: &'static str,
}

impl ProbeDoc {
    pub const fn new(name: &'static str, sends: &'static str) -> Self {
        ProbeDoc { name, sends, note: "" }
    }

    pub const fn noted(name: &'static str, sends: &'static str, note: &'static str) -> Self {
        ProbeDoc { name, sends, note }
    }

    /// `a` then `b`, for a check page that lists two corpora as one (`N` must be their
    /// total; a wrong `N` fails to compile).
    pub const fn concat<const A: usize, const B: usize, const N: usize>(a: [Self; A], b: [Self; B]) -> [Self; N] {
        assert!(A + B == N, "N must be the length of both lists");
        let mut all = [ProbeDoc::new("", ""); N];
        let mut i = 0;
        while i < N {
            all[i] = if i < A { a[i] } else { b[i - A] };
            i += 1;
        }
        all
    }

    /// The probe as its page prints it: what it sends, then the note in parentheses.
    pub fn described(&self) -> String {
        if self.note.is_empty() { self.sends.to_string() } else { format!("{} ({})", self.sends, self.note) }
    }
}
