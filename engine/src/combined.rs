//! A run of several servers: each server's own record, and the combined record that
//! lists them in the config's order. Shards of one config (`--shard I/N`) each write a
//! combined record of their part; `merge` puts the parts back in that order.

use crate::record::{Producer, Record, SavedRecordError, SchemaVersion};
use serde::{Deserialize, Serialize};

/// The combined record of a run of several servers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Combined {
    pub sealmark: Producer,
    pub combined: CombinedInfo,
    pub servers: Vec<ServerEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CombinedInfo {
    #[schemars(with = "String")]
    pub schema_version: SchemaVersion,
    /// The config file the servers were declared in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// How many servers that config declares (a shard runs some of them).
    pub declared: usize,
    /// `I/N` when this record holds one shard's servers only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
}

/// One server of the run: its record, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerEntry {
    /// Its name under `servers:`.
    pub name: String,
    /// Its position under `servers:` (from 0), which orders a merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<Record>,
    /// Why the run of this server produced no record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ServerEntry {
    /// Why there is no record (for an entry without one).
    pub fn why_none(&self) -> &str {
        self.error.as_deref().unwrap_or("the run did not finish")
    }
}

impl PartialEq for Record {
    /// Records compare by their JSON: the record types hold floats nowhere, so this is
    /// exact, and it spares every nested type a derive it needs nowhere else.
    fn eq(&self, other: &Record) -> bool {
        serde_json::to_value(self).ok() == serde_json::to_value(other).ok()
    }
}

/// A saved file: one server's record, or a combined record.
#[derive(Debug, Clone)]
pub enum Saved {
    One(Box<Record>),
    Several(Combined),
}

/// Only whether a document is a combined record, read without building its values.
#[derive(Deserialize)]
struct Kind {
    #[serde(default)]
    combined: Option<serde::de::IgnoredAny>,
}

/// A saved record or combined record, each record held to `record::read_saved`'s rules.
pub fn read_any(text: &str) -> Result<Saved, SavedRecordError> {
    read_with(text, false)
}

/// The same for a baseline: records of another methodology are read (`read_baseline`).
pub fn read_any_baseline(text: &str) -> Result<Saved, SavedRecordError> {
    read_with(text, true)
}

fn read_with(text: &str, any_methodology: bool) -> Result<Saved, SavedRecordError> {
    let is_combined = serde_json::from_str::<Kind>(text).is_ok_and(|k| k.combined.is_some());
    if !is_combined {
        let read = if any_methodology { crate::record::read_baseline } else { crate::record::read_saved };
        return read(text).map(|r| Saved::One(Box::new(r)));
    }
    let c: Combined = serde_json::from_str(text).map_err(|e| SavedRecordError::NotARecord {
        line: e.line(),
        column: e.column(),
        message: format!("not a combined record: {e}"),
    })?;
    if c.combined.schema_version.major > crate::SCHEMA_VERSION.major {
        return Err(SavedRecordError::NewerVersion { found: c.combined.schema_version });
    }
    for entry in &c.servers {
        if let Some(r) = &entry.record {
            crate::record::check_saved(r, any_methodology)
                .map_err(|e| SavedRecordError::InServer { name: entry.name.clone(), source: Box::new(e) })?;
        }
    }
    if let Some(name) = repeated_name(&c.servers) {
        return Err(SavedRecordError::RepeatedServer { name: name.clone() });
    }
    // A name becomes a report folder (DIR/NAME/): one that is not a plain word could
    // lead out of it.
    if let Some(e) = c.servers.iter().find(|e| !crate::config::is_server_name(&e.name)) {
        return Err(SavedRecordError::BadServerName { name: e.name.clone() });
    }
    Ok(Saved::Several(c))
}

fn repeated_name(entries: &[ServerEntry]) -> Option<&String> {
    let mut seen = std::collections::BTreeSet::new();
    entries.iter().map(|e| &e.name).find(|n| !seen.insert(n.as_str()))
}

impl Combined {
    /// The combined record of the servers that ran, in the config's order.
    pub fn new(file: Option<String>, declared: usize, shard: Option<String>, servers: Vec<ServerEntry>) -> Combined {
        Combined {
            sealmark: Producer { version: crate::VERSION.to_string(), methodology: crate::METHODOLOGY.to_string() },
            combined: CombinedInfo { schema_version: crate::SCHEMA_VERSION, file, declared, shard },
            servers,
        }
    }

    /// Every record it holds, with the server's name.
    pub fn records(&self) -> impl Iterator<Item = (&str, &Record)> {
        self.servers.iter().filter_map(|e| e.record.as_ref().map(|r| (e.name.as_str(), r)))
    }

    pub fn entry(&self, name: &str) -> Option<&ServerEntry> {
        self.servers.iter().find(|e| e.name == name)
    }
}

/// Why saved files cannot be merged into one combined record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give the records (or combined records) of the shards")]
    Nothing,
    #[error("{second} holds the server \"{name}\" that {first} already holds; merge each shard once")]
    Repeated { name: String, first: String, second: String },
    #[error(
        "{file} is one server's record with no name under servers: (it was not run as one of several); run it with --server NAME, or merge combined records"
    )]
    Unnamed { file: String },
    #[error("{file} is a record of sealmark {found}, {first} of sealmark {expected}; merge records of one release")]
    MixedVersion { file: String, found: String, first: String, expected: String },
}

/// The shards' records as one combined record, in the config's order: by position
/// under `servers:`, then by name for records that carry none. Each part is named by
/// its file, for the messages.
pub fn merge(parts: Vec<(String, Saved)>) -> Result<Combined, MergeError> {
    let mut entries: Vec<(ServerEntry, String)> = Vec::new();
    let mut files = Vec::new();
    let mut declared = 0;
    let mut producer: Option<(Producer, String)> = None;
    for (source, saved) in parts {
        let (version, these) = match saved {
            Saved::One(record) => {
                let Some(name) = record.server.selected.clone().filter(|n| crate::config::is_server_name(n)) else {
                    return Err(MergeError::Unnamed { file: source });
                };
                let p = record.sealmark.clone();
                (p, vec![ServerEntry { name, index: None, record: Some(*record), error: None }])
            }
            Saved::Several(c) => {
                files.push(c.combined.file.clone());
                declared = declared.max(c.combined.declared);
                (c.sealmark, c.servers)
            }
        };
        match &producer {
            Some((first, first_file)) if first.version != version.version => {
                return Err(MergeError::MixedVersion {
                    file: source,
                    found: version.version,
                    first: first_file.clone(),
                    expected: first.version.clone(),
                });
            }
            Some(_) => {}
            None => producer = Some((version, source.clone())),
        }
        for entry in these {
            if let Some((_, first)) = entries.iter().find(|(e, _)| e.name == entry.name) {
                return Err(MergeError::Repeated { name: entry.name, first: first.clone(), second: source });
            }
            entries.push((entry, source.clone()));
        }
    }
    let Some((producer, _)) = producer else { return Err(MergeError::Nothing) };
    entries.sort_by(|(a, _), (b, _)| (a.index.is_none(), a.index, &a.name).cmp(&(b.index.is_none(), b.index, &b.name)));
    let servers: Vec<ServerEntry> = entries.into_iter().map(|(e, _)| e).collect();
    let file = match files.first() {
        Some(first) if files.iter().all(|f| f == first) => first.clone(),
        _ => None,
    };
    let mut combined = Combined::new(file, declared.max(servers.len()), None, servers);
    combined.sealmark = producer;
    Ok(combined)
}

/// `I/N` of `--shard`: shard I (from 1) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || format!("expected I/N with 1 ≤ I ≤ N (say 2/4), found \"{text}\"");
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count) =
            (i.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether the server at `position` (from 0) under `servers:` is this shard's: every
    /// Nth, starting with the Ith, so shards stay balanced as the list grows.
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index - 1
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str, index: Option<usize>) -> ServerEntry {
        let mut r = crate::sample::capped();
        r.server.selected = Some(name.to_string());
        ServerEntry { name: name.to_string(), index, record: Some(r), error: None }
    }

    fn part(file: Option<&str>, declared: usize, servers: Vec<ServerEntry>) -> Saved {
        Saved::Several(Combined::new(file.map(str::to_string), declared, Some("x".into()), servers))
    }

    #[test]
    fn shards_take_every_nth_and_together_take_each_once() {
        for count in 1..5 {
            for position in 0..11 {
                let owners = (1..=count).filter(|&index| Shard { index, count }.takes(position)).count();
                assert_eq!(owners, 1, "{position} in {count} shards");
            }
        }
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "1", "a/b", "1/0", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_merge_restores_the_config_order_and_refuses_a_server_twice() {
        let a = part(Some("s.yaml"), 3, vec![named("one", Some(0)), named("three", Some(2))]);
        let b = part(Some("s.yaml"), 3, vec![named("two", Some(1))]);
        let merged = merge(vec![("b.json".into(), b.clone()), ("a.json".into(), a.clone())]).unwrap();
        let names: Vec<&str> = merged.servers.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["one", "two", "three"]);
        assert_eq!(merged.combined.shard, None);
        assert_eq!(merged.combined.file.as_deref(), Some("s.yaml"));
        let err = merge(vec![("a.json".into(), a.clone()), ("again.json".into(), a)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "again.json holds the server \"one\" that a.json already holds; merge each shard once"
        );
        assert_eq!(merge(Vec::new()), Err(MergeError::Nothing));
    }

    #[test]
    fn a_lone_record_merges_by_its_selected_name_or_is_refused() {
        let mut lone = crate::sample::capped();
        assert!(matches!(
            merge(vec![("x.json".into(), Saved::One(Box::new(lone.clone())))]),
            Err(MergeError::Unnamed { .. })
        ));
        lone.server.selected = Some("solo".into());
        let merged = merge(vec![("x.json".into(), Saved::One(Box::new(lone)))]).unwrap();
        assert_eq!(merged.servers[0].name, "solo");
    }

    #[test]
    fn a_combined_record_reads_back_and_a_doctored_entry_is_named() {
        let c = Combined::new(None, 2, None, vec![named("one", Some(0)), named("two", Some(1))]);
        let text = crate::render::combined::json(&c);
        let Ok(Saved::Several(back)) = read_any(&text) else { panic!("not read back") };
        assert_eq!(back, c);
        let Ok(Saved::One(_)) = read_any(&crate::render::json(&crate::sample::capped())) else { panic!("one record") };
        let mut doctored: serde_json::Value = serde_json::from_str(&text).unwrap();
        doctored["servers"][1]["record"]["sealmark"]["methodology"] = "0.1".into();
        let err = read_any(&doctored.to_string()).unwrap_err();
        assert!(err.to_string().starts_with("servers[two]: a record of methodology 0.1"), "{err}");
        let mut escaping: serde_json::Value = serde_json::from_str(&text).unwrap();
        escaping["servers"][0]["name"] = "../../outside".into();
        assert_eq!(
            read_any(&escaping.to_string()).unwrap_err(),
            SavedRecordError::BadServerName { name: "../../outside".into() }
        );
    }
}
