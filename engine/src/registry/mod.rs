//! The check registry: every check declared once, in code.
//!
//! `list-checks`, `describe`, `explain`, the reports, SARIF rules, JUnit cases and the
//! viewer read these declarations and nothing else, so the documentation of a check
//! cannot drift from the check.

pub mod backend;
pub mod core;
pub mod db;
pub mod fs;
pub mod git;
pub mod http;
pub mod net;
mod packs;
pub mod sqlite;

pub use packs::{PACKS, PackDoc, pack_doc};

use crate::model::{Pack, ProbeDoc, VerifiedBy, Weight};
use serde::Serialize;

/// One check, with everything its page in the checks reference says.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckDef {
    pub id: &'static str,
    pub pack: Pack,
    /// The one-line label printed on every report line.
    pub label: &'static str,
    /// What the check actually measures, printed under every report line.
    pub scope: &'static str,
    pub weight: Weight,
    /// Not yet part of the published standard: advisory in a standard pack.
    pub candidate: bool,
    /// The methodology version that introduced the check.
    pub since: &'static str,
    /// The observers whose evidence can decide the verdict, strongest first.
    pub decided_by: &'static [VerifiedBy],
    pub probes: &'static [ProbeDoc],
    /// Settings beyond `enabled` and `severity`, which every check has.
    pub settings: &'static [Setting],
    /// The observation a pass must rest on. A judge that has no such observation
    /// (zero probes judged, every probe refused for its form, calls never sent) gives
    /// inconclusive or n/a, never pass.
    pub proves_pass: &'static str,
    /// How the verdict is established.
    pub verdict: &'static str,
    pub fix: &'static str,
    pub false_positives: &'static str,
    pub false_negatives: &'static str,
    pub references: References,
    /// Where the declaration lives, for people reading `describe`.
    #[serde(skip)]
    pub declared_at: (&'static str, u32),
}

/// A setting a check reads: `checks.<id>.<key>` in sealmark.yaml, or a key of the
/// config itself (`net.control_url`, `sql_tools`), shared by a pack (see `is_global`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Setting {
    pub key: &'static str,
    pub kind: SettingKind,
    /// The default, as it would be written in YAML.
    pub default: &'static str,
    /// A locked setting changed from its default makes the run CUSTOM.
    pub locked: bool,
    /// A numeric limit a verdict is measured against.
    pub threshold: bool,
    pub meaning: &'static str,
}

impl Setting {
    /// A key of the config itself (`scope.allow`, `sql_tools`), not one under `checks.<id>`.
    pub fn is_global(&self) -> bool {
        self.key.contains('.') || self.key == "sql_tools"
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum SettingKind {
    Integer {
        min: i64,
        max: i64,
    },
    Bool,
    StringList,
    Text,
    /// A structured value, described in words (`sql_tools`).
    Entries {
        description: &'static str,
    },
}

impl SettingKind {
    pub fn describe(self) -> String {
        match self {
            SettingKind::Integer { min, max } => format!("an integer from {min} to {max}"),
            SettingKind::Bool => "true or false".to_string(),
            SettingKind::StringList => "a list of strings".to_string(),
            SettingKind::Text => "a string".to_string(),
            SettingKind::Entries { description } => description.to_string(),
        }
    }
}

/// Where the weakness a check looks for is catalogued.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct References {
    /// An OWASP MCP Top 10 id such as `MCP03`, with its title.
    pub owasp_mcp: &'static str,
    pub cwe: &'static [u32],
}

/// Declares a check as a `static CheckDef`. Every field is required (a missing one is
/// a compile error) and records where it was declared.
macro_rules! declare_check {
    ($(#[$meta:meta])* $name:ident { $($field:ident : $value:expr),* $(,)? }) => {
        $(#[$meta])*
        pub static $name: $crate::registry::CheckDef = $crate::registry::CheckDef {
            $($field: $value,)*
            declared_at: (file!(), line!()),
        };
    };
}
pub(crate) use declare_check;

/// Every check, in report order within each pack.
pub static CHECKS: &[&CheckDef] = &[
    &core::HANDSHAKE,
    &core::TOOL_POISONING,
    &core::ROBUST_INPUT,
    &core::SECRET_ECHO,
    &core::REFUSAL_QUALITY,
    &core::INSTRUCTIONS_HYGIENE,
    &db::DB_READ_ONLY,
    &db::DB_MUTATION_FORMS,
    &db::DB_ROW_CAP,
    &db::DB_TIMEOUT,
    &db::RLS,
    &db::PII,
    &db::PII_MASKED,
    &db::WRITE_GATE,
    &db::AUDIT,
    &db::DB_PRIVILEGE,
    &sqlite::SQLITE_READ_ONLY,
    &sqlite::SQLITE_MUTATION_FORMS,
    &sqlite::SQLITE_ATTACH,
    &sqlite::SQLITE_LOAD_EXTENSION,
    &sqlite::SQLITE_ROW_CAP,
    &sqlite::SQLITE_TIMEOUT,
    &fs::FS_READ_ESCAPE,
    &fs::FS_WRITE_ESCAPE,
    &fs::FS_SYMLINK_ESCAPE,
    &fs::FS_LARGE_READ,
    &net::NET_LOOPBACK_SSRF,
    &net::NET_SCHEME_ALLOWLIST,
    &net::NET_OVERSIZED_REPLY,
    &git::GIT_REPO_SCOPE,
    &git::GIT_ARG_INJECTION,
    &git::GIT_INIT_SCOPE,
    &git::GIT_ADD_SCOPE,
    &git::GIT_REF_OPTIONS,
    &http::HTTP_ORIGIN,
    &http::HTTP_AUTH_REQUIRED,
    &http::HTTP_PROTOCOL_VERSION,
    &http::HTTP_SESSION,
    &http::HTTP_CORS,
    &http::HTTP_BIND,
    &http::HTTP_TLS,
    &fs::EFFECTS_READ_ONLY,
    &fs::EFFECTS_CLOSED_WORLD,
    &fs::EFFECTS_UNANNOTATED,
    &backend::SCOPE_ESCAPE,
    &backend::SQL_GUARD_STATEMENTS,
    &backend::SQL_GUARD_REFERENCES,
    &backend::SQL_GUARD_ROWCAP,
    &backend::UPSTREAM_CREDENTIAL,
];

/// The check with this id.
pub fn check(id: &str) -> Option<&'static CheckDef> {
    CHECKS.iter().copied().find(|c| c.id == id)
}

/// The checks of one pack, in declaration order.
pub fn pack_checks(pack: Pack) -> impl Iterator<Item = &'static CheckDef> {
    CHECKS.iter().copied().filter(move |c| c.pack == pack)
}

impl CheckDef {
    /// Advisory in its pack: declared advisory, or a candidate in a standard pack.
    pub fn is_advisory(&self) -> bool {
        self.weight == Weight::Advisory || (self.candidate && !self.pack.is_candidate())
    }

    pub fn setting(&self, key: &str) -> Option<&'static Setting> {
        self.settings.iter().find(|s| s.key == key)
    }

    /// The settings written under `checks.<id>`.
    pub fn own_settings(&self) -> impl Iterator<Item = &'static Setting> {
        self.settings.iter().filter(|s| !s.is_global())
    }

    /// Whether a setting is part of the standard profile: locked, and not a candidate's
    /// (a candidate's settings never are).
    pub fn locks(&self, setting: &Setting) -> bool {
        setting.locked && !self.candidate
    }

    /// The weight column of its page: `critical`, `scored`, `advisory`, plus `candidate`.
    pub fn weight_line(&self) -> String {
        let mut s = self.weight.id().to_string();
        if self.candidate {
            s.push_str(", candidate");
        }
        if self.is_advisory() {
            s.push_str(" (advisory, not scored)");
        }
        s
    }
}

/// The closest of `candidates` to `input`, when close enough to be a likely typo.
pub fn did_you_mean<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = strsim::levenshtein(&input.to_lowercase(), &c.to_lowercase());
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    let limit = (input.chars().count() / 3).max(2);
    best.filter(|(d, _)| *d <= limit).map(|(_, c)| c)
}

/// ` (did you mean `x`?)` when one of `candidates` is a likely typo of `input`, else nothing.
pub fn did_you_mean_hint<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    did_you_mean(input, candidates).map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_declaration_is_complete() {
        for c in CHECKS {
            let fields = [
                ("id", c.id),
                ("label", c.label),
                ("scope", c.scope),
                ("since", c.since),
                ("verdict", c.verdict),
                ("proves_pass", c.proves_pass),
                ("fix", c.fix),
                ("false_positives", c.false_positives),
                ("false_negatives", c.false_negatives),
                ("references.owasp_mcp", c.references.owasp_mcp),
            ];
            for (name, value) in fields {
                assert!(!value.trim().is_empty(), "{} lacks {name}", c.id);
            }
            assert!(!c.probes.is_empty(), "{} declares no probes", c.id);
            assert!(!c.decided_by.is_empty(), "{} names no observer", c.id);
            assert!(!c.references.cwe.is_empty(), "{} names no CWE", c.id);
            assert!(c.references.owasp_mcp.starts_with("MCP"), "{}", c.id);
            assert!(
                c.scope.starts_with("server") || c.scope.starts_with("database"),
                "{}: a scope line says what is measured",
                c.id
            );
            for p in c.probes {
                assert!(!p.name.is_empty() && !p.sends.is_empty(), "{}", c.id);
            }
            for s in c.settings {
                assert!(!s.meaning.is_empty() && !s.default.is_empty(), "{}.{}", c.id, s.key);
                assert!(!["enabled", "severity"].contains(&s.key), "{}.{}", c.id, s.key);
            }
        }
    }

    #[test]
    fn ids_are_unique_and_packs_are_documented() {
        let mut seen = BTreeSet::new();
        for c in CHECKS {
            assert!(seen.insert(c.id), "duplicate check id {}", c.id);
            assert!(PACKS.iter().any(|p| p.pack == c.pack), "{}", c.id);
        }
    }

    #[test]
    fn candidates_in_standard_packs_are_advisory() {
        for c in CHECKS.iter().filter(|c| c.candidate) {
            assert!(c.is_advisory() || c.pack.is_candidate(), "{}", c.id);
        }
    }

    #[test]
    fn did_you_mean_finds_typos_only() {
        let ids = CHECKS.iter().map(|c| c.id);
        assert_eq!(did_you_mean("handshak", ids.clone()), Some("handshake"));
        assert_eq!(did_you_mean("secret-eco", ids.clone()), Some("secret-echo"));
        assert_eq!(did_you_mean("zzzzzzzzzz", ids), None);
    }
}
