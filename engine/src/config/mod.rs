//! `sealmark.yaml`: parsing and validation.
//!
//! Validation collects every problem before anything runs, each with the file, the
//! line and the dotted key, so a user fixes a config in one pass. Nothing here does
//! I/O: the caller reads the file and passes its text.

use crate::classify::{Class, DeclaredClass};
pub use crate::judge::db::SqlShape;
use crate::judge::scope::{ScopeConfig, ScopedTool};
use crate::model::{Pack, Weight};
use crate::registry::{self, SettingKind, did_you_mean, did_you_mean_hint};
use serde_json::Value;
use serde_yaml_ng::Value as Yaml;
use std::collections::BTreeMap;
use std::fmt;

pub mod import;
pub mod probes;
mod program;
pub mod secrets;

/// The top-level keys of sealmark.yaml (the JSON Schema lists the same).
pub const TOP_KEYS: [&str; 13] = [
    "server",
    "servers",
    "packs",
    "tools",
    "classify",
    "checks",
    "net",
    "sql_tools",
    "upstream",
    "scope",
    "identities",
    "probes",
    "timeout_probe_sec",
];
/// The keys of `server:`.
pub const SERVER_KEYS: [&str; 7] = ["name", "version", "command", "args", "env", "url", "headers"];

/// A `${VARIABLE}` of sealmark's own environment inside a server string.
pub static ENV_REFERENCE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}").expect("valid"));

impl Config {
    /// Every `${VARIABLE}` in the server's command, args, env, url and headers (read when
    /// the server starts, never written into a report), with its dotted key.
    pub fn env_references(&self) -> Vec<(String, String)> {
        self.server_texts()
            .into_iter()
            .flat_map(|(key, text)| {
                ENV_REFERENCE.captures_iter(text).map(move |c| (key.clone(), c[1].to_string())).collect::<Vec<_>>()
            })
            .collect()
    }
}

/// Whether `name` may name a server of `servers:`.
pub fn is_server_name(name: &str) -> bool {
    // The files a report folder already holds cannot also be a server's folder.
    let reserved = name.starts_with("sealmark-report") || name.starts_with("viewer") || name == "index.html";
    !reserved
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Why an absolute path in the server's config is worth a warning.
const OUTSIDE: &str = "outside the sandbox: writes there are not observed (use {sandbox} or {sandbox_home})";

/// The default time to wait for the handshake and for each call.
pub const DEFAULT_TIMEOUT_PROBE_SEC: u64 = 10;

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file as named on the command line; `None` for the quick form.
    pub file: Option<String>,
    /// The server to run: `server:`, or the one of `servers:` this config was selected for.
    pub server: ServerConfig,
    /// `servers:`, in the file's order; empty for the single `server:` form and for a
    /// config already selected (`Config::each`, `Config::select`).
    pub servers: Vec<NamedServer>,
    /// The name under `servers:` of the selected server.
    pub selected: Option<String>,
    /// The packs asked for; `None` means the standard list.
    pub packs: Option<Vec<Pack>>,
    pub tools: ToolsFilter,
    /// `classify:`: tools placed by hand, for what the heuristics cannot see.
    pub classify: BTreeMap<String, DeclaredClass>,
    pub checks: BTreeMap<String, CheckConfig>,
    pub timeout_probe_sec: u64,
    /// The line of `server.command` (or `server.url`), for SARIF and JUnit locations.
    pub server_line: Option<usize>,
    /// `net.control_url`: a URL the url tools may fetch.
    pub net_control_url: Option<String>,
    /// `sql_tools`: when given, the SQL tools, replacing discovery.
    pub sql_tools: Vec<SqlTool>,
    /// `upstream:`: the stub the server's backend is pointed at.
    pub upstream: crate::upstream::UpstreamConfig,
    /// `scope:`: which identifiers the scoped tools may serve.
    pub scope: ScopeConfig,
    /// `identities:`: the callers' own tokens, for servers that refuse minted ones.
    pub identities: Identities,
    /// `probes:`: valid calls and custom checks, matrix and cases expanded.
    pub probes: Vec<crate::judge::custom::Probe>,
    /// The literal credentials the servers' url, args, env and headers hold (and those a
    /// converted client config held, `run --from`): passed to the server, hidden in the
    /// record, every report, error and log line (`secrets::hide`).
    pub secrets: Vec<String>,
}

/// One entry of `servers:`.
#[derive(Debug, Clone)]
pub struct NamedServer {
    pub name: String,
    pub server: ServerConfig,
}

/// `identities.a` / `identities.b`: each a `${VARIABLE}` read from sealmark's environment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Identities {
    pub a: Option<String>,
    pub b: Option<String>,
    /// The lines of `identities.a` and `identities.b`.
    pub lines: (usize, usize),
}

/// One `sql_tools` entry: a tool, the string argument that takes the SQL, and values
/// for the tool's other required arguments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SqlTool {
    pub tool: String,
    pub arg: String,
    /// `role: writer` says the tool writes by design, so the read-only checks leave it out.
    pub writer: bool,
    /// How the tool takes its SQL: one string, or a list of statements.
    pub shape: SqlShape,
    pub args: BTreeMap<String, Value>,
    /// The lines of `tool` and `arg`, for errors found once the server's tools are known.
    pub line: usize,
    pub arg_line: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            file: None,
            server: ServerConfig::default(),
            servers: Vec::new(),
            selected: None,
            packs: None,
            tools: ToolsFilter::default(),
            classify: BTreeMap::new(),
            checks: BTreeMap::new(),
            timeout_probe_sec: DEFAULT_TIMEOUT_PROBE_SEC,
            server_line: None,
            net_control_url: None,
            sql_tools: Vec::new(),
            upstream: crate::upstream::UpstreamConfig::default(),
            scope: ScopeConfig::default(),
            identities: Identities::default(),
            probes: Vec::new(),
            secrets: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ServerConfig {
    /// Where it is written: `server`, or `servers.<name>` (empty means `server`).
    pub key: String,
    /// The line of its `command` (or `url`), for `servers:` (`Config::server_line` for `server:`).
    pub line: Option<usize>,
    pub name: Option<String>,
    pub version: Option<String>,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub url: Option<String>,
    pub headers: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default)]
pub struct ToolsFilter {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl ServerConfig {
    /// The dotted key the server's settings sit under.
    pub fn key(&self) -> &str {
        if self.key.is_empty() { "server" } else { &self.key }
    }
}

impl ToolsFilter {
    /// Whether a tool is kept: listed by `include` (or no include list) and not excluded.
    /// Entries are exact names, or prefixes ending in `*`.
    pub fn keeps(&self, tool: &str) -> bool {
        let hit = |pat: &String| Self::matches(pat, tool);
        (self.include.is_empty() || self.include.iter().any(hit)) && !self.exclude.iter().any(hit)
    }

    /// Whether one entry (an exact name, or a prefix ending in `*`) matches a tool.
    pub fn matches(pattern: &str, tool: &str) -> bool {
        match pattern.strip_suffix('*') {
            Some(prefix) => tool.starts_with(prefix),
            None => tool == pattern,
        }
    }
}

/// `checks.<id>` as written.
#[derive(Debug, Clone, Default)]
pub struct CheckConfig {
    pub enabled: Option<bool>,
    pub severity: Option<Weight>,
    /// The check's own settings, by key.
    pub settings: BTreeMap<String, Value>,
}

impl Config {
    /// The quick form: `sealmark run -- <command> [args…]`.
    /// A single http(s) URL is a server to reach (as `server.url` is), not one to start.
    pub fn quick(command: &str, args: &[String]) -> Config {
        let server = if args.is_empty() && is_http_url(command) {
            ServerConfig { url: Some(command.to_string()), ..Default::default() }
        } else {
            ServerConfig { command: Some(command.to_string()), args: args.to_vec(), ..Default::default() }
        };
        Config { secrets: secrets::of_server(&server), server, ..Default::default() }
    }

    /// One config per server to run: this one for the `server:` form, else one for each
    /// entry of `servers:`, in the file's order, sharing every other setting.
    pub fn each(&self) -> Vec<Config> {
        if self.servers.is_empty() {
            return vec![self.clone()];
        }
        self.servers
            .iter()
            .map(|s| Config {
                server: s.server.clone(),
                server_line: s.server.line,
                servers: Vec::new(),
                selected: Some(s.name.clone()),
                ..self.clone()
            })
            .collect()
    }

    /// The config for one server of `servers:`, by name, or why there is none (with a
    /// did-you-mean).
    pub fn select(&self, name: &str) -> Result<Config, String> {
        let file = self.file_name();
        if self.servers.is_empty() {
            return Err(format!("{file} declares one server (server:), not servers: by name; drop --server"));
        }
        match self.each().into_iter().find(|c| c.selected.as_deref() == Some(name)) {
            Some(c) => Ok(c),
            None => {
                let names = self.servers.iter().map(|s| s.name.as_str());
                let hint = did_you_mean_hint(name, names.clone());
                Err(format!(
                    "{file} declares no server \"{name}\"{hint}; its servers: {}",
                    names.collect::<Vec<_>>().join(", ")
                ))
            }
        }
    }

    /// The file the config came from, as messages name it (`sealmark.yaml` for the quick form).
    pub fn file_name(&self) -> &str {
        self.file.as_deref().unwrap_or("sealmark.yaml")
    }

    /// Whether the config has entries the tool list checks further (`CHECKED_WITH_TOOLS`).
    pub fn has_tool_entries(&self) -> bool {
        !(self.probes.is_empty()
            && self.sql_tools.is_empty()
            && self.classify.is_empty()
            && self.scope.tools.is_empty())
    }

    /// What `classify:` says that the server's tool list contradicts: a tool it does
    /// not list, or a param its schema does not declare (a schema that declares none
    /// may name any), each with a did-you-mean.
    pub fn classify_problems(&self, tools: &[crate::tools::ToolInfo]) -> Vec<Problem> {
        let mut out = Vec::new();
        for (name, d) in &self.classify {
            let Some(tool) = tools.iter().find(|t| &t.name == name) else {
                let hint = did_you_mean_hint(name, tools.iter().map(|t| t.name.as_str()));
                out.push(Problem::at(
                    d.line,
                    format!("classify.{name}"),
                    format!("the server lists no tool \"{name}\"{hint}"),
                ));
                continue;
            };
            if let Some(param) = &d.param
                && !tool.params.is_empty()
                && tool.param_type(param).is_none()
            {
                let names: Vec<&str> = tool.params.iter().map(|(n, _)| n.as_str()).collect();
                let hint = did_you_mean_hint(param, names.iter().copied());
                out.push(Problem::at(
                    d.param_line,
                    format!("classify.{name}.param"),
                    format!("{name} declares no parameter \"{param}\"{hint} (its parameters: {})", names.join(", ")),
                ));
            }
        }
        out
    }

    /// A check's setting: the configured value, else the registry default.
    pub fn setting(&self, check: &str, key: &str) -> Value {
        if let Some(v) = self.checks.get(check).and_then(|c| c.settings.get(key)) {
            return v.clone();
        }
        let def = registry::check(check)
            .and_then(|c| c.setting(key))
            .unwrap_or_else(|| panic!("{check}.{key} is not declared"));
        serde_yaml_ng::from_str(def.default).expect("registry defaults are valid YAML")
    }

    pub fn setting_u64(&self, check: &str, key: &str) -> u64 {
        self.setting(check, key).as_u64().unwrap_or_default()
    }

    pub fn setting_strings(&self, check: &str, key: &str) -> Vec<String> {
        match self.setting(check, key) {
            Value::Array(items) => items.into_iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether the server's command, args, env, url or headers mention `text` (a
    /// placeholder, say).
    pub fn server_mentions(&self, text: &str) -> bool {
        let s = &self.server;
        s.command
            .iter()
            .chain(&s.args)
            .chain(s.env.values())
            .chain(s.url.iter())
            .chain(s.headers.values())
            .any(|t| t.contains(text))
    }

    /// Config values that name an absolute path outside the sandbox as data, with their
    /// key: writes there are not observed by any pack, so `run` and `doctor` warn about them.
    fn outside_sandbox(&self) -> Vec<(String, &str)> {
        let at = self.server.key();
        let (command, url, headers) = (format!("{at}.command"), format!("{at}.url"), format!("{at}.headers"));
        // Where the program is found is read, not written: only data paths are worth a word.
        let mut program: Vec<String> =
            program::program_args(self.server.command.as_deref().unwrap_or(""), &self.server.args)
                .into_iter()
                .map(|i| format!("{at}.args[{i}]"))
                .collect();
        program
            .extend(self.server.env.keys().filter(|k| program::locates_programs(k)).map(|k| format!("{at}.env.{k}")));
        self.server_texts()
            .into_iter()
            .filter(|(key, _)| *key != command && *key != url && !key.starts_with(&headers) && !program.contains(key))
            .filter_map(|(key, text)| {
                let value = text.split_once('=').map_or(text, |(_, v)| v);
                let absolute = value.starts_with('/') || value.starts_with("~/");
                (absolute && !probes::PATH_PLACEHOLDERS.iter().any(|p| value.starts_with(p))).then_some((key, value))
            })
            .collect()
    }

    /// The warnings for the console, each path named.
    pub fn paths_outside_sandbox(&self) -> Vec<String> {
        self.outside_sandbox().into_iter().map(|(key, value)| format!("{key} names {value}, {OUTSIDE}")).collect()
    }

    /// The same for a record, which is published: the key only, since the value may sit
    /// under a secret-looking name that reports hide.
    pub fn keys_outside_sandbox(&self) -> Vec<String> {
        self.outside_sandbox().into_iter().map(|(key, _)| format!("{key} names an absolute path, {OUTSIDE}")).collect()
    }

    /// Every string of the server's config with its dotted key.
    pub fn server_texts(&self) -> Vec<(String, &str)> {
        let s = &self.server;
        let at = s.key();
        let mut out: Vec<(String, &str)> = Vec::new();
        out.extend(s.command.as_deref().map(|c| (format!("{at}.command"), c)));
        out.extend(s.args.iter().enumerate().map(|(i, a)| (format!("{at}.args[{i}]"), a.as_str())));
        out.extend(s.env.iter().map(|(k, v)| (format!("{at}.env.{k}"), v.as_str())));
        out.extend(s.url.as_deref().map(|u| (format!("{at}.url"), u)));
        out.extend(s.headers.iter().map(|(k, v)| (format!("{at}.headers.{k}"), v.as_str())));
        out
    }

    /// Placeholders in the server's strings that sealmark does not fill, each as its
    /// key and a message with a did-you-mean. A `${VARIABLE}` is not a placeholder.
    pub fn placeholder_problems(&self) -> Vec<(String, String)> {
        static PLACEHOLDER: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| regex::Regex::new(r"(^|[^$])\{([A-Za-z_][A-Za-z0-9_:]*)\}").expect("valid"));
        let mut out = Vec::new();
        for (key, text) in self.server_texts() {
            for cap in PLACEHOLDER.captures_iter(text) {
                let name = &cap[2];
                if SERVER_PLACEHOLDERS.contains(&name) {
                    continue;
                }
                let hint = did_you_mean(name, SERVER_PLACEHOLDERS.iter().copied())
                    .map(|s| format!(" (did you mean `{{{s}}}`?)"))
                    .unwrap_or_default();
                out.push((
                    key.clone(),
                    format!("unknown placeholder {{{name}}}{hint}; sealmark fills {}", placeholder_list()),
                ));
            }
        }
        out
    }

    /// Why this config adds a candidate pack by itself, when it does.
    pub fn declares(&self, pack: Pack) -> Option<&'static str> {
        match pack {
            Pack::Scope if !self.scope.tools.is_empty() => {
                Some("scope was declared in the config (scope.tools), so the pack is included")
            }
            Pack::SqlGuard if self.upstream.kind.is_some() => Some(
                "sql-guard was declared in the config (upstream.kind, with a SQL tool to aim at), so the pack is included",
            ),
            Pack::Custom if self.probes.iter().any(|p| p.is_check()) => {
                Some("custom was declared in the config (a probe with a check), so the pack is included")
            }
            Pack::Upstream if self.upstream.kind.is_some() => {
                Some("upstream was declared in the config (upstream.kind), so the pack is included")
            }
            _ => None,
        }
    }

    /// Whether a pack runs: the pack list the user chose (`packs:`, `--pack`) decides
    /// alone; without one, the standard packs and the candidate packs the config declares.
    pub fn runs_pack(&self, pack: Pack) -> bool {
        match &self.packs {
            Some(list) => list.contains(&pack),
            None => Pack::STANDARD.contains(&pack) || self.declares(pack).is_some(),
        }
    }

    /// Whether a check runs (`checks.<id>.enabled`, default true).
    pub fn enabled(&self, check: &str) -> bool {
        self.checks.get(check).and_then(|c| c.enabled).unwrap_or(true)
    }
}

/// An `http://` or `https://` URL.
pub fn is_http_url(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// The placeholders sealmark fills in the server's command, args, env, url and headers.
pub const SERVER_PLACEHOLDERS: [&str; 16] = [
    "sandbox",
    "sandbox_home",
    "canary",
    "listener",
    "dsn",
    "host",
    "port",
    "user",
    "password",
    "db",
    "sqlite",
    "repo",
    "upstream",
    "bearer",
    "bearer:a",
    "bearer:b",
];

fn placeholder_list() -> String {
    SERVER_PLACEHOLDERS.iter().map(|p| format!("{{{p}}}")).collect::<Vec<_>>().join(", ")
}

/// One problem in a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub key: String,
    pub message: String,
}

impl Problem {
    pub fn at(line: usize, key: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem { line, key: key.into(), message: message.into() }
    }
}

/// Every problem found, with the file they were found in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: String,
    pub problems: Vec<Problem>,
}

impl ConfigError {
    /// The problems of `file` in the order of its lines, each said once (a probe that
    /// `matrix` expands is checked once per expansion).
    pub fn new(file: &str, mut problems: Vec<Problem>) -> ConfigError {
        problems.sort_by(|a, b| (a.line, &a.key, &a.message).cmp(&(b.line, &b.key, &b.message)));
        problems.dedup();
        ConfigError { file: file.to_string(), problems }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            if p.key.is_empty() {
                write!(f, "{}:{}: {}", self.file, p.line, p.message)?;
            } else {
                write!(f, "{}:{}: {}: {}", self.file, p.line, p.key, p.message)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Parses and validates a config. `file` names it in messages.
pub fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
    match parse_all(file, text)? {
        (config, problems) if problems.is_empty() => Ok(config),
        (_, problems) => Err(ConfigError::new(file, problems)),
    }
}

/// The keys whose entries the server's tool list is needed to check in full.
const CHECKED_WITH_TOOLS: [&str; 4] = ["probes", "sql_tools", "classify", "scope.tools"];

/// Whether every problem lies in entries the tool list checks further (`probes`,
/// `sql_tools`, `classify`, `scope.tools`): the rest of the config is then sound enough
/// to start the server and report what its tools refute with these.
pub fn only_tool_entries(problems: &[Problem]) -> bool {
    problems.iter().all(|p| {
        CHECKED_WITH_TOOLS
            .iter()
            .any(|k| p.key.strip_prefix(k).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '['])))
    })
}

/// A config and every problem it has as written. The config holds what validated (an
/// entry with a problem may be missing or partly filled); it is usable only when there
/// are no problems, or to check the rest against the server's tools. Err only for text
/// that is not YAML.
pub fn parse_all(file: &str, text: &str) -> Result<(Config, Vec<Problem>), ConfigError> {
    let fail = |problems| Err(ConfigError { file: file.to_string(), problems });
    let doc: Yaml = match serde_yaml_ng::from_str(text) {
        Ok(doc) => doc,
        Err(e) => {
            // The parser places a duplicate key at its mapping; name the duplicate's own line.
            if e.to_string().contains("duplicate entry")
                && let Some((key, line, first)) = KeyLines::scan(text).repeated.into_iter().next()
            {
                let message = format!("this key appears twice (first on line {first}); keep one");
                return fail(vec![Problem { line, key, message }]);
            }
            let line = e.location().map_or(1, |l| l.line());
            return fail(vec![Problem { line, key: String::new(), message: format!("not valid YAML: {e}") }]);
        }
    };
    let lines = KeyLines::scan(text);
    let mut v = Validator { lines: &lines, problems: Vec::new() };
    let mut config = v.config(&doc);
    config.file = Some(file.to_string());
    config.server_line = lines.exact("server.command").or_else(|| lines.exact("server.url"));
    for s in &mut config.servers {
        s.server.line = lines
            .exact(&format!("{}.command", s.server.key()))
            .or_else(|| lines.exact(&format!("{}.url", s.server.key())));
    }
    let servers = std::iter::once(&config.server).chain(config.servers.iter().map(|s| &s.server));
    config.secrets = servers.flat_map(secrets::of_server).collect();
    Ok((config, v.problems))
}

pub(crate) struct Validator<'a> {
    pub(crate) lines: &'a KeyLines,
    problems: Vec<Problem>,
}

pub(crate) fn kind_of(v: &Yaml) -> &'static str {
    match v {
        Yaml::Null => "nothing",
        Yaml::Bool(_) => "a boolean",
        Yaml::Number(_) => "a number",
        Yaml::String(_) => "a string",
        Yaml::Sequence(_) => "a list",
        Yaml::Mapping(_) => "a mapping",
        Yaml::Tagged(_) => "a tagged value",
    }
}

pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

impl Validator<'_> {
    pub(crate) fn problem(&mut self, key: &str, message: impl Into<String>) {
        self.problems.push(Problem { line: self.lines.line_of(key), key: key.to_string(), message: message.into() });
    }

    /// The entries of a mapping; unknown keys are reported with a did-you-mean.
    pub(crate) fn mapping<'y>(&mut self, path: &str, v: &'y Yaml, known: &[&str]) -> Vec<(String, &'y Yaml)> {
        let Yaml::Mapping(m) = v else {
            self.problem(path, format!("expected a mapping, found {}", kind_of(v)));
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, val) in m {
            let Some(k) = k.as_str() else {
                self.problem(path, "keys must be strings");
                continue;
            };
            if known.is_empty() || known.contains(&k) {
                out.push((k.to_string(), val));
            } else {
                let hint = did_you_mean_hint(k, known.iter().copied());
                self.problem(&join(path, k), format!("unknown key{hint}; expected one of: {}", known.join(", ")));
            }
        }
        out
    }

    pub(crate) fn string(&mut self, path: &str, v: &Yaml) -> Option<String> {
        match v {
            Yaml::String(s) => Some(s.clone()),
            Yaml::Number(n) => Some(n.to_string()),
            Yaml::Bool(b) => Some(b.to_string()),
            _ => {
                self.problem(path, format!("expected a string, found {}", kind_of(v)));
                None
            }
        }
    }

    pub(crate) fn strings(&mut self, path: &str, v: &Yaml) -> Vec<String> {
        let Yaml::Sequence(items) = v else {
            self.problem(path, format!("expected a list of strings, found {}", kind_of(v)));
            return Vec::new();
        };
        items.iter().enumerate().filter_map(|(i, item)| self.string(&format!("{path}[{i}]"), item)).collect()
    }

    fn string_map(&mut self, path: &str, v: &Yaml) -> BTreeMap<String, String> {
        self.mapping(path, v, &[])
            .into_iter()
            .filter_map(|(k, val)| self.string(&join(path, &k), val).map(|s| (k, s)))
            .collect()
    }

    fn config(&mut self, doc: &Yaml) -> Config {
        let mut config = Config::default();
        if matches!(doc, Yaml::Null) {
            self.problem("", "the file is empty; it needs at least server.command or server.url");
            return config;
        }
        let mut has_server = false;
        for (key, v) in self.mapping("", doc, &TOP_KEYS) {
            match key.as_str() {
                "server" => {
                    has_server = true;
                    config.server = self.server("server", v);
                }
                "servers" => config.servers = self.servers(v),
                "packs" => config.packs = Some(self.packs(v)),
                "tools" => {
                    for (k, list) in self.mapping("tools", v, &["include", "exclude"]) {
                        let items = self.strings(&join("tools", &k), list);
                        if k == "include" { config.tools.include = items } else { config.tools.exclude = items }
                    }
                }
                "checks" => config.checks = self.checks(v),
                "classify" => config.classify = self.classify(v),
                "net" => {
                    for (_, url) in self.mapping("net", v, &["control_url"]) {
                        config.net_control_url = self.string("net.control_url", url);
                        if let Some(u) = &config.net_control_url
                            && !(is_http_url(u) || u.starts_with("{listener}"))
                        {
                            self.problem(
                                "net.control_url",
                                format!(
                                    "expected an http(s) URL or {{listener}}/…, found \"{}\"",
                                    secrets::hide(u, &[])
                                ),
                            );
                        }
                    }
                }
                "sql_tools" => config.sql_tools = self.sql_tools(v),
                "upstream" => config.upstream = self.upstream(v),
                "scope" => config.scope = self.scope(v),
                "identities" => config.identities = self.identities(v),
                "probes" => config.probes = self.probes(v),
                "timeout_probe_sec" => match v.as_u64() {
                    Some(n) if (1..=600).contains(&n) => config.timeout_probe_sec = n,
                    _ => self.problem(
                        "timeout_probe_sec",
                        format!("expected whole seconds from 1 to 600, found {}", show(v)),
                    ),
                },
                _ => unreachable!("filtered by mapping"),
            }
        }
        if !config.scope.tools.is_empty() && config.scope.allow.is_empty() {
            self.problem("scope.allow", "scope.tools names a tool, so scope.allow must say what it may serve");
        }
        match (has_server, config.servers.is_empty()) {
            (false, true) if !matches!(doc, Yaml::Mapping(m) if m.contains_key("servers")) => self.problem(
                "server",
                "missing: the config must say how to reach the server (server.command or server.url), or list several under servers:",
            ),
            (true, false) => self.problem(
                "servers",
                "give either server: (one server) or servers: (several, by name), not both",
            ),
            _ => {}
        }
        for each in config.each() {
            self.server_settings(&each);
        }
        config
    }

    /// What is checked of each server against the settings every server shares.
    fn server_settings(&mut self, config: &Config) {
        let at = config.server.key();
        if config.upstream.kind.is_some() {
            if !config.server_mentions("{upstream}") {
                self.problem(
                    "upstream.kind",
                    format!("the stub would be unused by {at}: put {{upstream}} where the server reads its backend address (command, args, env, url or headers)"),
                );
            }
            if config.server.command.is_none() {
                self.problem("upstream.kind", format!("the stub needs a server sealmark starts: set {at}.command"));
            }
        }
        if config.identities != Identities::default() && !config.server.headers.values().any(|h| h.contains("{bearer}"))
        {
            self.problem(
                "identities",
                format!("identities replace the {{bearer}} tokens, but no {at}.headers value holds {{bearer}}"),
            );
        }
        for (key, message) in config.placeholder_problems() {
            self.problem(&key, message);
        }
        for (key, text) in config.server_texts() {
            if text.contains("{bearer") && !key.starts_with(&format!("{at}.headers")) {
                self.problem(&key, format!("{{bearer}} is the caller's credential and belongs in {at}.headers only"));
            }
        }
    }

    /// `servers:`: a name (a word a directory and `--server` can carry) for each server.
    fn servers(&mut self, v: &Yaml) -> Vec<NamedServer> {
        let entries = self.mapping("servers", v, &[]);
        if entries.is_empty() && matches!(v, Yaml::Mapping(_)) {
            self.problem("servers", "lists no server; give each a name and its command or url");
        }
        let mut out = Vec::new();
        for (name, val) in entries {
            let path = join("servers", &name);
            if !is_server_name(&name) {
                self.problem(
                    &path,
                    "a server's name is up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, and not a report file's name (index.html, viewer…, sealmark-report…): it names a report folder and --server",
                );
                continue;
            }
            let server = self.server(&path, val);
            out.push(NamedServer { name, server });
        }
        out
    }

    fn server(&mut self, at: &str, v: &Yaml) -> ServerConfig {
        let mut s = ServerConfig { key: at.to_string(), ..ServerConfig::default() };
        for (key, val) in self.mapping(at, v, &SERVER_KEYS) {
            let path = join(at, &key);
            match key.as_str() {
                "name" => s.name = self.string(&path, val),
                "version" => s.version = self.string(&path, val),
                "command" => {
                    s.command = self.string(&path, val);
                    if s.command.as_deref().is_some_and(|c| c.trim().is_empty()) {
                        self.problem(&path, "must not be empty");
                    }
                }
                "args" => s.args = self.strings(&path, val),
                "env" => s.env = self.string_map(&path, val),
                "url" => {
                    s.url = self.string(&path, val);
                    if let Some(u) = &s.url
                        && !is_http_url(u)
                    {
                        let shown = secrets::hide(u, &[]);
                        self.problem(&path, format!("expected an http:// or https:// URL, found \"{shown}\""));
                    }
                }
                "headers" => s.headers = self.string_map(&path, val),
                _ => unreachable!("filtered by mapping"),
            }
        }
        if s.command.is_none() && s.url.is_none() && matches!(v, Yaml::Mapping(_)) {
            self.problem(at, format!("needs {at}.command (a stdio server) or {at}.url (an HTTP server)"));
        }
        if !s.headers.is_empty() && s.url.is_none() && matches!(v, Yaml::Mapping(_)) {
            self.problem(&join(at, "headers"), format!("headers are sent over HTTP only; set {at}.url too"));
        }
        s
    }

    fn classify(&mut self, v: &Yaml) -> BTreeMap<String, DeclaredClass> {
        let mut out = BTreeMap::new();
        for (tool, entry) in self.mapping("classify", v, &[]) {
            let path = join("classify", &tool);
            let mut d = DeclaredClass {
                line: self.lines.line_of(&path),
                param_line: self.lines.line_of(&join(&path, "param")),
                ..DeclaredClass::default()
            };
            for (key, val) in self.mapping(&path, entry, &["class", "param", "writes"]) {
                let kpath = join(&path, &key);
                match key.as_str() {
                    "class" => match val.as_str() {
                        Some(c) if Class::from_id(c).is_some() => d.class = Class::from_id(c),
                        _ => {
                            let shown = val.as_str().unwrap_or_default();
                            let ids = Class::ALL.map(Class::id);
                            let hint = did_you_mean_hint(shown, ids);
                            self.problem(
                                &kpath,
                                format!("expected one of {}, found {}{hint}", ids.join(", "), show(val)),
                            );
                        }
                    },
                    "param" => d.param = self.string(&kpath, val),
                    _ => match val.as_bool() {
                        Some(b) => d.writes = Some(b),
                        None => self.problem(&kpath, format!("expected true or false, found {}", show(val))),
                    },
                }
            }
            let has_class = entry.as_mapping().is_some_and(|m| m.contains_key("class"));
            if !has_class && matches!(entry, Yaml::Mapping(_)) {
                self.problem(&path, "each entry needs a class");
            }
            if let Some(class) = d.class.filter(|c| *c != Class::Other && d.param.is_none()) {
                self.problem(&path, format!("a {class} tool needs the param the packs aim (param: NAME)"));
            }
            if d.writes.is_some() && d.class != Some(Class::Sql) {
                self.problem(&join(&path, "writes"), "writes applies to SQL tools only");
            }
            out.insert(tool, d);
        }
        out
    }

    fn sql_tools(&mut self, v: &Yaml) -> Vec<SqlTool> {
        let Yaml::Sequence(items) = v else {
            self.problem("sql_tools", format!("expected a list of {{ tool, arg }} entries, found {}", kind_of(v)));
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = format!("sql_tools[{i}]");
            let mut entry = SqlTool {
                line: self.lines.line_of(&format!("{path}.tool")),
                arg_line: self.lines.line_of(&format!("{path}.arg")),
                ..Default::default()
            };
            for (key, val) in self.mapping(&path, item, &["tool", "arg", "role", "shape", "args"]) {
                let kpath = join(&path, &key);
                match key.as_str() {
                    "tool" => entry.tool = self.string(&kpath, val).unwrap_or_default(),
                    "arg" => entry.arg = self.string(&kpath, val).unwrap_or_default(),
                    "role" => match val.as_str() {
                        Some("writer") => entry.writer = true,
                        Some("reader" | "unknown") => {}
                        _ => self.problem(&kpath, format!("expected reader, writer or unknown, found {}", show(val))),
                    },
                    "shape" => match val.as_str() {
                        Some("string") => entry.shape = SqlShape::String,
                        Some("array") => entry.shape = SqlShape::Array,
                        _ => self.problem(&kpath, format!("expected string or array, found {}", show(val))),
                    },
                    _ => {
                        for (name, value) in self.mapping(&kpath, val, &[]) {
                            match value {
                                Yaml::String(s) => entry.args.insert(name, Value::from(s.clone())),
                                Yaml::Bool(b) => entry.args.insert(name, Value::from(*b)),
                                Yaml::Number(n) => {
                                    entry.args.insert(name, serde_json::to_value(n).unwrap_or(Value::Null))
                                }
                                other => {
                                    self.problem(
                                        &join(&kpath, &name),
                                        format!("expected a string, number or boolean, found {}", kind_of(other)),
                                    );
                                    None
                                }
                            };
                        }
                    }
                }
            }
            if entry.tool.is_empty() || entry.arg.is_empty() {
                self.problem(&path, "each entry needs tool and arg");
            }
            out.push(entry);
        }
        out
    }

    fn upstream(&mut self, v: &Yaml) -> crate::upstream::UpstreamConfig {
        use crate::upstream::{Scripted, UpstreamConfig};
        let mut up = UpstreamConfig::default();
        for (key, val) in self.mapping("upstream", v, &["kind", "default_reply", "responses"]) {
            let path = join("upstream", &key);
            match key.as_str() {
                "kind" => match val {
                    Yaml::Null => up.kind = None,
                    Yaml::String(k) if k == "http" => up.kind = Some(k.clone()),
                    other => self.problem(&path, format!("expected http or null, found {}", show(other))),
                },
                "default_reply" => up.default_reply = self.reply(&path, val),
                _ => {
                    let Yaml::Sequence(items) = val else {
                        self.problem(
                            &path,
                            format!("expected a list of {{ match, reply }} entries, found {}", kind_of(val)),
                        );
                        continue;
                    };
                    for (i, item) in items.iter().enumerate() {
                        let ipath = format!("{path}[{i}]");
                        let mut entry = Scripted { id: None, matcher: Default::default(), reply: Default::default() };
                        for (k, x) in self.mapping(&ipath, item, &["id", "match", "reply"]) {
                            let kpath = join(&ipath, &k);
                            match k.as_str() {
                                "id" => entry.id = self.string(&kpath, x),
                                "match" => entry.matcher = self.matcher(&kpath, x),
                                _ => entry.reply = self.reply(&kpath, x),
                            }
                        }
                        up.responses.push(entry);
                    }
                }
            }
        }
        up
    }

    fn scope(&mut self, v: &Yaml) -> ScopeConfig {
        let mut scope = ScopeConfig::default();
        for (key, val) in self.mapping("scope", v, &["tools", "allow", "deny", "separator"]) {
            let path = join("scope", &key);
            match key.as_str() {
                "tools" => {
                    let Yaml::Sequence(items) = val else {
                        self.problem(
                            &path,
                            format!("expected a list of {{ tool, param }} entries, found {}", kind_of(val)),
                        );
                        continue;
                    };
                    for (i, item) in items.iter().enumerate() {
                        let ipath = format!("{path}[{i}]");
                        let mut entry =
                            ScopedTool { line: self.lines.line_of(&format!("{ipath}.tool")), ..Default::default() };
                        for (k, x) in self.mapping(&ipath, item, &["tool", "param"]) {
                            let text = self.string(&join(&ipath, &k), x).unwrap_or_default();
                            if k == "tool" { entry.tool = text } else { entry.param = text }
                        }
                        if entry.tool.is_empty() || entry.param.is_empty() {
                            self.problem(&ipath, "each entry needs tool and param");
                        }
                        scope.tools.push(entry);
                    }
                }
                "allow" | "deny" => {
                    let names = self.strings(&path, val);
                    for (i, n) in names.iter().enumerate() {
                        if n.trim().is_empty() {
                            self.problem(&format!("{path}[{i}]"), "an empty name matches nothing");
                        }
                    }
                    if key == "allow" { scope.allow = names } else { scope.deny = names }
                }
                _ => match self.string(&path, val) {
                    Some(s) if s.chars().count() == 1 => scope.separator = s.chars().next().expect("one char"),
                    Some(s) => self.problem(&path, format!("expected exactly one character, found \"{s}\"")),
                    None => {}
                },
            }
        }
        scope
    }

    fn identities(&mut self, v: &Yaml) -> Identities {
        let mut ids = Identities::default();
        for (key, val) in self.mapping("identities", v, &["a", "b"]) {
            let path = join("identities", &key);
            let line = self.lines.line_of(&path);
            let Some(text) = self.string(&path, val) else { continue };
            if env_reference(&text).is_none() {
                self.problem(
                    &path,
                    "write the token as ${VARIABLE} (read from sealmark's environment), so no token is kept in the file",
                );
                continue;
            }
            if key == "a" {
                ids.a = Some(text);
                ids.lines.0 = line;
            } else {
                ids.b = Some(text);
                ids.lines.1 = line;
            }
        }
        ids
    }

    pub(crate) fn regex(&mut self, path: &str, v: &Yaml) -> Option<regex::Regex> {
        let s = self.string(path, v)?;
        match regex::Regex::new(&s) {
            Ok(re) => Some(re),
            Err(e) => {
                self.problem(
                    path,
                    format!(
                        "\"{s}\" is not a valid regular expression: {}",
                        e.to_string().lines().last().unwrap_or("")
                    ),
                );
                None
            }
        }
    }

    fn matcher(&mut self, path: &str, v: &Yaml) -> crate::upstream::Matcher {
        let mut m = crate::upstream::Matcher::default();
        for (key, val) in self.mapping(path, v, &["method", "path", "body", "header"]) {
            let kpath = join(path, &key);
            match key.as_str() {
                "method" => m.method = self.string(&kpath, val),
                "path" => m.path = self.regex(&kpath, val),
                "body" => m.body = self.regex(&kpath, val),
                _ => {
                    for (name, re) in self.mapping(&kpath, val, &[]) {
                        if let Some(re) = self.regex(&join(&kpath, &name), re) {
                            m.header.insert(name, re);
                        }
                    }
                }
            }
        }
        m
    }

    pub(crate) fn reply(&mut self, path: &str, v: &Yaml) -> crate::upstream::Reply {
        use crate::upstream::{Body, Reply};
        let mut r = Reply::default();
        let (mut body, mut json, mut bytes) = (None, None, None);
        for (key, val) in self.mapping(path, v, &["status", "headers", "body", "json", "bytes"]) {
            let kpath = join(path, &key);
            match key.as_str() {
                "status" => match val.as_u64() {
                    Some(n) if (100..=599).contains(&n) => r.status = n as u16,
                    _ => self.problem(&kpath, format!("expected an HTTP status from 100 to 599, found {}", show(val))),
                },
                "headers" => r.headers = self.string_map(&kpath, val),
                "body" => body = self.string(&kpath, val),
                "json" => json = serde_json::to_value(val).ok(),
                _ => match val.as_u64() {
                    Some(n) if n <= 256 * 1024 * 1024 => bytes = Some(n as usize),
                    _ => self.problem(&kpath, format!("expected a size in bytes up to 268435456, found {}", show(val))),
                },
            }
        }
        r.body = match (body, json, bytes) {
            (_, Some(_), Some(_)) => {
                self.problem(path, "give one of body, json or bytes (bytes may come with body)");
                Body::Json(serde_json::json!({}))
            }
            (Some(_), Some(_), None) => {
                self.problem(path, "give one of body, json or bytes (bytes may come with body)");
                Body::Json(serde_json::json!({}))
            }
            (start, None, Some(size)) => Body::Padded { size, start: start.unwrap_or_default() },
            (Some(text), None, None) => Body::Text(text),
            (None, Some(v), None) => Body::Json(v),
            (None, None, None) => Body::Json(serde_json::json!({})),
        };
        r
    }

    fn packs(&mut self, v: &Yaml) -> Vec<Pack> {
        let ids: Vec<&str> = Pack::ALL.iter().map(|p| p.id()).collect();
        let mut out = Vec::new();
        for (i, name) in self.strings("packs", v).into_iter().enumerate() {
            match Pack::from_id(&name) {
                Some(p) if !out.contains(&p) => out.push(p),
                Some(_) => self.problem(&format!("packs[{i}]"), format!("\"{name}\" is listed twice")),
                None => {
                    let hint = did_you_mean_hint(&name, ids.iter().copied());
                    self.problem(
                        &format!("packs[{i}]"),
                        format!("unknown pack \"{name}\"{hint}; packs are: {}", ids.join(", ")),
                    );
                }
            }
        }
        out
    }

    fn checks(&mut self, v: &Yaml) -> BTreeMap<String, CheckConfig> {
        let ids: Vec<&str> = registry::CHECKS.iter().map(|c| c.id).collect();
        let mut out = BTreeMap::new();
        for (id, body) in self.mapping("checks", v, &[]) {
            let path = join("checks", &id);
            let Some(def) = registry::check(&id) else {
                let hint = did_you_mean_hint(&id, ids.iter().copied());
                self.problem(&path, format!("unknown check{hint}; `sealmark list-checks` prints them all"));
                continue;
            };
            let mut known = vec!["enabled", "severity"];
            known.extend(def.own_settings().map(|s| s.key));
            let mut cc = CheckConfig::default();
            for (key, val) in self.mapping(&path, body, &known) {
                let kpath = join(&path, &key);
                match key.as_str() {
                    "enabled" => match val {
                        Yaml::Bool(b) => cc.enabled = Some(*b),
                        _ => self.problem(&kpath, format!("expected true or false, found {}", show(val))),
                    },
                    "severity" => match val.as_str().and_then(Weight::from_id) {
                        Some(w) => cc.severity = Some(w),
                        None => {
                            self.problem(&kpath, format!("expected critical, scored or advisory, found {}", show(val)))
                        }
                    },
                    _ => {
                        let setting = def.setting(&key).expect("listed as known");
                        match setting_value(setting.kind, val) {
                            Ok(value) => {
                                cc.settings.insert(key, value);
                            }
                            Err(msg) => self.problem(&kpath, msg),
                        }
                    }
                }
            }
            out.insert(id, cc);
        }
        out
    }
}

/// The variable name of a `${NAME}` reference, when the whole text is one.
pub fn env_reference(text: &str) -> Option<&str> {
    let name = text.strip_prefix("${")?.strip_suffix('}')?;
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

pub(crate) fn show(v: &Yaml) -> String {
    match v {
        Yaml::String(s) => format!("\"{s}\""),
        Yaml::Number(n) => n.to_string(),
        Yaml::Bool(b) => b.to_string(),
        other => kind_of(other).to_string(),
    }
}

fn setting_value(kind: SettingKind, v: &Yaml) -> Result<Value, String> {
    match kind {
        SettingKind::Integer { min, max } => match v.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(Value::from(n)),
            _ => Err(format!("expected {}, found {}", kind.describe(), show(v))),
        },
        SettingKind::Bool => {
            v.as_bool().map(Value::from).ok_or_else(|| format!("expected true or false, found {}", show(v)))
        }
        SettingKind::Text => v.as_str().map(Value::from).ok_or_else(|| format!("expected a string, found {}", show(v))),
        SettingKind::Entries { description } => Err(format!("expected {description}, written at its own key")),
        SettingKind::StringList => {
            let Yaml::Sequence(items) = v else {
                return Err(format!("expected a list of strings, found {}", show(v)));
            };
            let mut out = Vec::new();
            for item in items {
                let s = item
                    .as_str()
                    .ok_or_else(|| format!("expected a list of strings, found an item that is {}", kind_of(item)))?;
                if let Err(e) = regex::Regex::new(s) {
                    return Err(format!(
                        "\"{s}\" is not a valid regular expression: {}",
                        e.to_string().lines().last().unwrap_or("")
                    ));
                }
                out.push(Value::from(s));
            }
            Ok(Value::Array(out))
        }
    }
}

/// The line each dotted key path starts on, read from block-style YAML.
///
/// serde_yaml_ng gives values without positions; this scan recovers them for the
/// block style configs are written in. A key it cannot place (flow style, anchors)
/// falls back to the line of its nearest placed ancestor.
#[derive(Debug, Default)]
pub struct KeyLines {
    lines: BTreeMap<String, usize>,
    /// Keys met a second time: the key, its new line, the first line.
    repeated: Vec<(String, usize, usize)>,
}

impl KeyLines {
    pub fn scan(text: &str) -> KeyLines {
        struct Open {
            col: usize,
            path: String,
            item: bool,
            next_index: usize,
        }
        let mut stack: Vec<Open> = Vec::new();
        let mut lines = BTreeMap::new();
        let mut repeated = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            let lineno = n + 1;
            let trimmed = raw.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("---") {
                continue;
            }
            let mut col = raw.len() - trimmed.len();
            let mut rest = trimmed;
            loop {
                if let Some(after) = rest.strip_prefix("- ").or_else(|| (rest == "-").then_some("")) {
                    while stack.last().is_some_and(|o| o.col > col || (o.col == col && o.item)) {
                        stack.pop();
                    }
                    let parent = stack.last_mut();
                    let (ppath, index) = match parent {
                        Some(p) => {
                            p.next_index += 1;
                            (p.path.clone(), p.next_index - 1)
                        }
                        None => (String::new(), 0),
                    };
                    let path = format!("{ppath}[{index}]");
                    lines.entry(path.clone()).or_insert(lineno);
                    stack.push(Open { col, path, item: true, next_index: 0 });
                    let inner = after.trim_start();
                    col += 2 + (after.len() - inner.len());
                    rest = inner;
                    if rest.is_empty() {
                        break;
                    }
                    continue;
                }
                if let Some(key) = mapping_key(rest) {
                    while stack.last().is_some_and(|o| o.col >= col) {
                        stack.pop();
                    }
                    let path = join(stack.last().map_or("", |o| o.path.as_str()), &key);
                    match lines.get(&path) {
                        Some(first) => repeated.push((path.clone(), lineno, *first)),
                        None => {
                            lines.insert(path.clone(), lineno);
                        }
                    }
                    stack.push(Open { col, path, item: false, next_index: 0 });
                }
                break;
            }
        }
        KeyLines { lines, repeated }
    }

    /// The line of exactly this key, if it was placed.
    pub fn exact(&self, path: &str) -> Option<usize> {
        self.lines.get(path).copied()
    }

    /// The line of this key or, failing that, of its nearest placed ancestor (else 1).
    pub fn line_of(&self, path: &str) -> usize {
        let mut p = path.to_string();
        loop {
            if let Some(l) = self.lines.get(&p) {
                return *l;
            }
            match p.rfind(['.', '[']) {
                Some(i) => p.truncate(i),
                None => return 1,
            }
        }
    }
}

/// The key of a `key: value` or `key:` line, unquoted.
fn mapping_key(s: &str) -> Option<String> {
    let (key, _) = if let Some(q) = s.strip_prefix('"') {
        let end = q.find('"')?;
        let after = &q[end + 1..];
        after.strip_prefix(':').filter(|a| a.is_empty() || a.starts_with(' '))?;
        return Some(q[..end].to_string());
    } else if let Some(q) = s.strip_prefix('\'') {
        let end = q.find('\'')?;
        let after = &q[end + 1..];
        after.strip_prefix(':').filter(|a| a.is_empty() || a.starts_with(' '))?;
        return Some(q[..end].to_string());
    } else {
        let i = s.find(": ").or_else(|| s.strip_suffix(':').map(str::len))?;
        (&s[..i], ())
    };
    if key.is_empty() || key.starts_with(['{', '[', '#']) { None } else { Some(key.trim_end().to_string()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "\
server:
  name: Server A
  command: ./server-a
  args: [\"{sandbox}\"]
  env:
    LOG: debug
packs: [core]
checks:
  robust-input:
    max_tools: 5
timeout_probe_sec: 5
";

    #[test]
    fn a_good_config_parses() {
        let c = parse("sealmark.yaml", GOOD).unwrap();
        assert_eq!(c.server.command.as_deref(), Some("./server-a"));
        assert_eq!(c.server.args, vec!["{sandbox}"]);
        assert_eq!(c.server_line, Some(3));
        assert_eq!(c.setting_u64("robust-input", "max_tools"), 5);
        assert_eq!(c.setting_u64("robust-input", "oversized_bytes"), 1_048_576);
        assert_eq!(c.timeout_probe_sec, 5);
    }

    #[test]
    fn every_problem_is_collected_with_line_and_key() {
        let text = "\
server:
  comand: ./x
  args:
    - a
    - {b: 1}
packs: [core, fss]
checks:
  robust-inpt: {}
  secret-echo:
    severity: loud
timeout_probe_sec: 0
";
        let err = parse("cfg.yaml", text).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("cfg.yaml:2: server.comand: unknown key (did you mean `command`?)"), "{shown}");
        assert!(shown.contains("cfg.yaml:5: server.args[1]: expected a string, found a mapping"), "{shown}");
        assert!(shown.contains("cfg.yaml:6: packs[1]: unknown pack \"fss\" (did you mean `fs`?)"), "{shown}");
        assert!(
            shown.contains("cfg.yaml:8: checks.robust-inpt: unknown check (did you mean `robust-input`?)"),
            "{shown}"
        );
        assert!(
            shown.contains(
                "cfg.yaml:10: checks.secret-echo.severity: expected critical, scored or advisory, found \"loud\""
            ),
            "{shown}"
        );
        assert!(shown.contains("cfg.yaml:11: timeout_probe_sec:"), "{shown}");
        assert!(shown.contains("server: needs server.command"), "{shown}");
    }

    #[test]
    fn yaml_syntax_errors_name_the_line() {
        let err = parse("c.yaml", "server:\n  command: [unclosed\n").unwrap_err();
        assert_eq!(err.problems.len(), 1);
        assert!(err.problems[0].message.starts_with("not valid YAML"));
    }

    #[test]
    fn invalid_regex_settings_are_refused() {
        let err =
            parse("c.yaml", "server: {command: x}\nchecks:\n  instructions-hygiene:\n    deny: [\"(unclosed\"]\n")
                .unwrap_err();
        assert!(
            err.to_string()
                .contains("checks.instructions-hygiene.deny: \"(unclosed\" is not a valid regular expression"),
            "{err}"
        );
    }

    #[test]
    fn key_lines_handle_lists_at_the_key_column() {
        let lines = KeyLines::scan("a:\n- x\n- y: 1\n  z: 2\nb:\n  c: 3\n");
        assert_eq!(lines.exact("a[1]"), Some(3));
        assert_eq!(lines.exact("a[1].z"), Some(4));
        assert_eq!(lines.exact("b.c"), Some(6));
        assert_eq!(lines.line_of("b.c.d[3]"), 6);
    }

    #[test]
    fn upstream_is_parsed_and_an_unused_stub_is_refused() {
        let good = "server:\n  command: node\n  env: { BACKEND_URL: \"{upstream}\" }\nupstream:\n  kind: http\n  default_reply: { status: 200, json: { rows: [] } }\n  responses:\n    - id: count\n      match: { path: \"^/sql$\", body: \"count\\\\(\\\\*\\\\)\" }\n      reply: { status: 200, json: { rows: [{ count: 3 }] } }\n";
        let c = parse("c.yaml", good).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.upstream.kind.as_deref(), Some("http"));
        assert_eq!(c.upstream.responses.len(), 1);
        let unused = "server:\n  command: node\nupstream:\n  kind: http\n  responses:\n    - match: { path: \"(\" }\n";
        let err = parse("c.yaml", unused).unwrap_err().to_string();
        assert!(err.contains("c.yaml:4: upstream.kind: the stub would be unused"), "{err}");
        assert!(err.contains("upstream.responses[0].match.path: \"(\" is not a valid regular expression"), "{err}");
    }

    #[test]
    fn tools_filter_include_exclude() {
        let f = ToolsFilter { include: vec!["read_*".into(), "stat".into()], exclude: vec!["read_secret".into()] };
        assert!(f.keeps("read_file") && f.keeps("stat"));
        assert!(!f.keeps("read_secret") && !f.keeps("write_file"));
    }
}
