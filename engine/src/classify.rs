//! Classification: which kind of target each tool can be aimed at, with the reason.
//!
//! A tool is placed by its parameter names first (the strongest sign), then its name
//! and description. Packs apply according to the classes found.

use crate::tools::ToolInfo;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The classes a tool can be placed in, in order of precedence. The packs, `applies`
/// and `classify:` all speak of tools by these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    Sql,
    Command,
    Git,
    Url,
    Path,
    Other,
}

impl Class {
    /// Every class, as `classify:` may declare them.
    pub const ALL: [Class; 6] = [Class::Sql, Class::Command, Class::Git, Class::Url, Class::Path, Class::Other];

    pub fn from_id(id: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.id() == id)
    }

    pub fn id(self) -> &'static str {
        match self {
            Class::Sql => "sql",
            Class::Command => "command",
            Class::Git => "git",
            Class::Url => "url",
            Class::Path => "path",
            Class::Other => "other",
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

struct Rule {
    class: Class,
    /// Parameter names that place a tool on their own.
    params: &'static [&'static str],
    /// Parameter names too common to place a tool without its name or description
    /// agreeing (`query` is a search as often as SQL; `path` names a repository only on
    /// a tool named for git).
    weak_params: &'static [&'static str],
    name: &'static str,
    name_re: LazyLock<Regex>,
    desc: &'static str,
    desc_re: LazyLock<Regex>,
}

macro_rules! rule {
    ($class:expr, $params:expr, $weak:expr, $name:literal, $desc:literal) => {
        Rule {
            class: $class,
            params: $params,
            weak_params: $weak,
            name: $name,
            name_re: LazyLock::new(|| Regex::new(concat!("(?i)", $name)).expect("valid")),
            desc: $desc,
            desc_re: LazyLock::new(|| Regex::new(concat!("(?i)", $desc)).expect("valid")),
        }
    };
}

static RULES: [Rule; 5] = [
    rule!(
        Class::Sql,
        &["sql", "statement", "sql_query"],
        &["query"],
        "sql|query|select|database|\\bdb\\b",
        "\\bsql\\b|database|\\btables?\\b|postgres|sqlite|mysql"
    ),
    rule!(
        Class::Command,
        &["command", "cmd", "script", "shell", "commandline"],
        &[],
        "exec|shell|command|bash|\\brun\\b",
        "shell|command|execut"
    ),
    rule!(
        Class::Git,
        &["repo_path", "repository", "repo", "repo_dir", "repository_path"],
        &["path"],
        "^git|git_|_git",
        "\\bgit\\b|repositor|commit"
    ),
    rule!(
        Class::Url,
        &["url", "uri", "endpoint", "href", "link", "target_url"],
        &[],
        "fetch|http|url|download|browse|request|scrape",
        "\\burl\\b|http|web page|fetch"
    ),
    rule!(
        Class::Path,
        &[
            "path",
            "file",
            "filename",
            "file_path",
            "filepath",
            "dir",
            "directory",
            "folder",
            "root",
            "source",
            "destination"
        ],
        &[],
        "read|write|file|dir|list|stat|path|mkdir|move|copy|delete",
        "\\bfile|director|folder|\\bpath"
    ),
];

/// Confidence steps, lowest first.
const CONFIDENCE: [&str; 3] = ["low", "medium", "high"];

/// A parameter whose schema says it takes a URL (`format: uri`, or a description that
/// speaks of one), whatever it is called.
fn url_by_schema(tool: &ToolInfo, name: &str) -> bool {
    static URL_DESC: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\burls?\b|\buri\b|https?://").expect("valid"));
    let Some(schema) = tool.param_schema(name) else { return false };
    if !matches!(tool.param_type(name), Some("string" | "any")) {
        return false;
    }
    let format = schema.get("format").and_then(serde_json::Value::as_str);
    matches!(format, Some("uri" | "uri-reference" | "url" | "iri"))
        || schema.get("description").and_then(serde_json::Value::as_str).is_some_and(|d| URL_DESC.is_match(d))
}

/// Whether a tool's schema declares nothing to aim at: empty, or not an object schema
/// (a known breakage: servers built with zod 4 publish only `$schema`).
pub fn schema_is_empty(tool: &ToolInfo) -> bool {
    tool.params.is_empty()
        && tool.raw.get("inputSchema").and_then(|s| s.get("type")).and_then(serde_json::Value::as_str) != Some("object")
}

/// Places one tool by the heuristics alone.
pub fn classify(tool: &ToolInfo) -> Classification {
    classify_declared(tool, &BTreeMap::new())
}

/// Places one tool: as `classify:` declares it when it does, else by its parameters
/// first (the strongest sign), then its name and description.
pub fn classify_declared(tool: &ToolInfo, declared: &BTreeMap<String, DeclaredClass>) -> Classification {
    let annotations = annotation_tags(tool);
    if let Some(d) = declared.get(&tool.name) {
        return Classification {
            tool: tool.name.clone(),
            class: d.class.unwrap_or(Class::Other),
            param: d.param.clone(),
            confidence: "declared".to_string(),
            annotations,
            reason: format!("declared in the config (classify.{})", tool.name),
            secondary: None,
        };
    }
    let param_of = |names: &[&str]| {
        tool.params.iter().map(|(n, _)| n.as_str()).find(|p| {
            let p = p.to_ascii_lowercase();
            names.iter().any(|want| p == *want || p.ends_with(&format!("_{want}")))
        })
    };
    let mut matches: Vec<(Class, usize, Vec<String>, String)> = Vec::new();
    for rule in &RULES {
        let mut reasons = Vec::new();
        let by_name = rule.name_re.is_match(&tool.name);
        let by_desc = !by_name && rule.desc_re.is_match(&tool.description);
        let mut param = param_of(rule.params).map(str::to_string);
        // A weak parameter needs the tool's name to agree (for SQL, its description may).
        if param.is_none() && (by_name || (by_desc && rule.class == Class::Sql)) {
            param = param_of(rule.weak_params).map(str::to_string);
        }
        if param.is_none() && rule.class == Class::Url {
            param = tool.params.iter().map(|(n, _)| n.as_str()).find(|n| url_by_schema(tool, n)).map(str::to_string);
            if let Some(p) = &param {
                reasons.push(format!("param \"{p}\" takes a URL by its schema"));
            }
        } else if let Some(p) = &param {
            reasons.push(format!("param \"{p}\""));
        }
        if by_name {
            reasons.push(format!("name matches /{}/", matching_alternatives(rule.name, &tool.name)));
        }
        if by_desc {
            reasons.push(format!("description matches /{}/", matching_alternatives(rule.desc, &tool.description)));
        }
        let Some(param) = param else {
            // Without a parameter to aim at, a name alone is too weak to probe with,
            // unless the schema declares none at all (see `learn` in the runtime).
            if schema_is_empty(tool) && by_name && rule.desc_re.is_match(&tool.description) {
                reasons.push("inputSchema declares no parameters: placed by name and description alone".to_string());
                matches.push((rule.class, 0, reasons, String::new()));
            }
            continue;
        };
        let strength = 1 + usize::from(by_name || by_desc);
        matches.push((rule.class, strength, reasons, param));
    }
    let Some((class, strength, mut reasons, param)) = matches.first().cloned() else {
        return Classification {
            tool: tool.name.clone(),
            class: Class::Other,
            param: None,
            confidence: "high".to_string(),
            annotations,
            reason: "no parameter names a path, url, sql, command or repository".to_string(),
            secondary: None,
        };
    };
    // strength 0 (name and description only) is low, 1 (param only) medium, 2 high.
    let mut level = strength;
    if level > 0 && tool.hint("destructiveHint") == Some(true) && class != Class::Command {
        level -= 1;
        reasons.push("destructiveHint is true: confidence lowered one step".to_string());
    }
    // A path tool with a switch that makes it fetch URLs is a url tool too: the net pack
    // aims at it (`applies` counts it by this secondary class).
    let secondary = match class == Class::Path && url_flag(tool).is_some() {
        true => Some(Class::Url),
        false => matches.get(1).map(|(c, _, _, _)| *c),
    };
    Classification {
        tool: tool.name.clone(),
        class,
        param: (!param.is_empty()).then_some(param),
        confidence: CONFIDENCE[level].to_string(),
        annotations,
        reason: reasons.join(", "),
        secondary,
    }
}

/// The parameter names that place a tool in `class` (strong and weak), strongest first.
pub fn class_params(class: Class) -> Vec<&'static str> {
    RULES.iter().filter(|r| r.class == class).flat_map(|r| r.params.iter().chain(r.weak_params)).copied().collect()
}

/// The parameters a server's validation error names, with the JSON type it expected
/// (`string` when it does not say): zod's issue lists (`"expected": "string", …,
/// "path": ["path"]`) and its pretty form (`expected string … → at path`), pydantic's
/// `path\n  Field required`, and plain "missing required argument 'path'".
pub fn params_in_error(text: &str) -> Vec<(String, String)> {
    static ISSUE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\{[^{}]*\}").expect("valid"));
    static ISSUE_PATH: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""path"\s*:\s*\[\s*"([A-Za-z_][A-Za-z0-9_]*)""#).expect("valid"));
    static ISSUE_EXPECTED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""expected"\s*:\s*"([a-z]+)""#).expect("valid"));
    static PRETTY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"expected ([a-z]+), received [a-z]+\s*→ at ([A-Za-z_][A-Za-z0-9_]*)").expect("valid")
    });
    static PYDANTIC: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^([A-Za-z_][A-Za-z0-9_]*)\s*\n\s+(?:Field required|Input should be a valid ([a-z]+))")
            .expect("valid")
    });
    static PLAIN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?i)(?:missing|required)(?: required)? (?:argument|parameter|field|property|key)s?:? ['"`]?([A-Za-z_][A-Za-z0-9_]*)|['"`]([A-Za-z_][A-Za-z0-9_]*)['"`] is (?:a )?required"#)
            .expect("valid")
    });
    let mut out: Vec<(String, String)> = Vec::new();
    let mut add = |name: &str, kind: Option<&str>| {
        let kind = match kind {
            Some(k @ ("string" | "array" | "number" | "integer" | "boolean" | "object")) => k,
            Some("str") | None => "string",
            Some("int") => "integer",
            Some("list") => "array",
            Some("dict") => "object",
            Some("bool") => "boolean",
            Some(_) => "any",
        };
        if !out.iter().any(|(n, _)| n == name) {
            out.push((name.to_string(), kind.to_string()));
        }
    };
    for issue in ISSUE.find_iter(text) {
        if let Some(p) = ISSUE_PATH.captures(issue.as_str()) {
            let expected =
                ISSUE_EXPECTED.captures(issue.as_str()).map(|c| c.get(1).map_or("", |m| m.as_str()).to_string());
            add(&p[1], expected.as_deref());
        }
    }
    for c in PRETTY.captures_iter(text) {
        add(&c[2], Some(&c[1]));
    }
    for c in PYDANTIC.captures_iter(text) {
        add(&c[1], c.get(2).map(|m| m.as_str()));
    }
    for c in PLAIN.captures_iter(text) {
        if let Some(name) = c.get(1).or(c.get(2)) {
            add(name.as_str(), None);
        }
    }
    out
}

/// A boolean parameter that switches a file tool's path argument to a URL
/// (`isUrl: true`), when the tool has one.
pub fn url_flag(tool: &ToolInfo) -> Option<&str> {
    tool.params.iter().find(|(n, t)| t == "boolean" && has_word(n, &["url", "uri", "remote"])).map(|(n, _)| n.as_str())
}

/// The words of a tool name: `git_diff_staged` → git, diff, staged; `readFile` → read, file.
pub fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            prev_lower = false;
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// The first word of a name that is one of `words`.
pub fn word_from(name: &str, words: &[&str]) -> Option<String> {
    name_words(name).into_iter().find(|w| words.contains(&w.as_str()))
}

/// Whether a name has a word from `words`.
pub fn has_word(name: &str, words: &[&str]) -> bool {
    word_from(name, words).is_some()
}

/// Why a SQL tool writes by design (an `execute` or `write_query` beside a read-only
/// `query`), if it does: such a tool is not judged by the read-only checks. Read from
/// its annotations first, then a description that says read-only, then its name and
/// description.
pub fn sql_writes(tool: &ToolInfo, declared: &BTreeMap<String, DeclaredClass>) -> Option<String> {
    match declared.get(&tool.name).and_then(|d| d.writes) {
        Some(true) => return Some(format!("declared in the config (classify.{}.writes)", tool.name)),
        Some(false) => return None,
        None => {}
    }
    static READ_ONLY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)read[- ]?only|only select|select (queries|statements) only|\bselect (query|queries|statement)")
            .expect("valid")
    });
    static WRITES: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(insert|update|delete|create|alter|drop)\b|\bwrites?\b|\bmodif|any sql").expect("valid")
    });
    if tool.hint("readOnlyHint") == Some(true) {
        return None;
    }
    if tool.hint("destructiveHint") == Some(true) || tool.hint("readOnlyHint") == Some(false) {
        return Some("its annotations say it writes".to_string());
    }
    if READ_ONLY.is_match(&tool.description) {
        return None;
    }
    const WRITE_WORDS: [&str; 11] =
        ["write", "execute", "exec", "insert", "update", "delete", "modify", "mutate", "create", "alter", "drop"];
    if let Some(w) = name_words(&tool.name).into_iter().find(|w| WRITE_WORDS.contains(&w.as_str())) {
        return Some(format!("its name says it writes (\"{w}\")"));
    }
    WRITES.find(&tool.description).map(|m| format!("its description says it writes (\"{}\")", m.as_str()))
}

/// The alternatives of a pattern that match `text` on their own, so a reason shows
/// what actually matched (`/read|file/`), not the whole rule.
fn matching_alternatives(pattern: &str, text: &str) -> String {
    let hits: Vec<&str> =
        pattern.split('|').filter(|alt| Regex::new(&format!("(?i){alt}")).is_ok_and(|re| re.is_match(text))).collect();
    if hits.is_empty() { pattern.to_string() } else { hits.join("|") }
}

/// `readOnly`, `destructive`, `idempotent`, `closedWorld` / `openWorld`, from the hints.
fn annotation_tags(tool: &ToolInfo) -> Vec<String> {
    let mut tags = Vec::new();
    for (hint, tag) in
        [("readOnlyHint", "readOnly"), ("destructiveHint", "destructive"), ("idempotentHint", "idempotent")]
    {
        if tool.hint(hint) == Some(true) {
            tags.push(tag.to_string());
        }
    }
    match tool.hint("openWorldHint") {
        Some(false) => tags.push("closedWorld".to_string()),
        Some(true) => tags.push("openWorld".to_string()),
        None => {}
    }
    tags
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Classification {
    pub tool: String,
    pub class: Class,
    /// The parameter that placed the tool (the one probes are aimed through).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
    pub confidence: String,
    pub annotations: Vec<String>,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secondary: Option<Class>,
}

/// One `classify:` entry: the class a tool is placed in and the argument the packs aim,
/// with the lines to name when the server's tool list contradicts it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeclaredClass {
    /// Unset only in a config already refused for it.
    pub class: Option<Class>,
    pub param: Option<String>,
    /// For a SQL tool: whether it writes by design (`true`) or promises to read only.
    pub writes: Option<bool>,
    pub line: usize,
    pub param_line: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: serde_json::Value) -> Classification {
        classify(&ToolInfo::from_value(&v))
    }

    #[test]
    fn path_tool_with_matching_name_is_high() {
        let c = tool(
            json!({"name": "read_file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            "annotations": {"readOnlyHint": true, "openWorldHint": false}}),
        );
        assert_eq!((c.class.id(), c.confidence.as_str()), ("path", "high"));
        assert_eq!(c.reason, "param \"path\", name matches /read|file/");
        assert_eq!(c.annotations, vec!["readOnly", "closedWorld"]);
    }

    #[test]
    fn destructive_hint_lowers_confidence() {
        let c = tool(
            json!({"name": "write_file", "inputSchema": {"type": "object", "properties": {"path": {}, "content": {}}},
            "annotations": {"destructiveHint": true}}),
        );
        assert_eq!(c.confidence, "medium");
        assert!(c.reason.ends_with("confidence lowered one step"));
    }

    #[test]
    fn url_beats_path_and_is_secondary() {
        let c =
            tool(json!({"name": "fetch", "inputSchema": {"type": "object", "properties": {"url": {}, "path": {}}}}));
        assert_eq!(c.class.id(), "url");
        assert_eq!(c.secondary.map(Class::id), Some("path"));
    }

    #[test]
    fn a_search_query_is_not_sql_and_a_sql_query_is() {
        let search = tool(
            json!({"name": "search_nodes", "description": "Search for nodes in the knowledge graph based on a query",
            "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}}),
        );
        assert_eq!(search.class.id(), "other", "{}", search.reason);
        let sql = tool(json!({"name": "query", "description": "Run a read-only SQL query",
            "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}}));
        assert_eq!(sql.class.id(), "sql");
    }

    #[test]
    fn a_git_tool_may_name_its_repository_path() {
        let c = tool(json!({"name": "git_status", "description": "Shows the working tree status",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}));
        assert_eq!((c.class.id(), c.param.as_deref()), ("git", Some("path")));
        // A file tool whose description mentions a repository is still a file tool.
        let f = tool(json!({"name": "read_file", "description": "Read a file of the repository",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}));
        assert_eq!(f.class.id(), "path");
    }

    #[test]
    fn a_url_parameter_is_found_by_its_schema() {
        let c = tool(json!({"name": "convert", "inputSchema": {"type": "object",
            "properties": {"data": {"type": "string", "format": "uri"}}}}));
        assert_eq!((c.class.id(), c.param.as_deref()), ("url", Some("data")));
        let flag = tool(json!({"name": "read_file", "inputSchema": {"type": "object",
            "properties": {"path": {"type": "string"}, "isUrl": {"type": "boolean", "description": "path is a URL"}}}}));
        assert_eq!((flag.class.id(), flag.secondary.map(Class::id)), ("path", Some("url")));
    }

    #[test]
    fn an_empty_schema_is_placed_by_name_and_description_at_low_confidence() {
        let c = tool(json!({"name": "read_file", "description": "Read the complete contents of a file",
            "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#"}}));
        assert_eq!((c.class.id(), c.param.as_deref(), c.confidence.as_str()), ("path", None, "low"));
    }

    #[test]
    fn name_words_split_snake_kebab_and_camel_case() {
        assert_eq!(name_words("git_diff_staged"), ["git", "diff", "staged"]);
        assert_eq!(name_words("readFile"), ["read", "file"]);
        assert_eq!(name_words("list-dir"), ["list", "dir"]);
        assert!(!has_word("git_diff_staged", &["tag"]), "staged is no tag");
    }

    #[test]
    fn parameters_are_read_from_validation_errors() {
        let zod = r#"Invalid arguments for tool write_file: [
  {"code": "invalid_type", "expected": "string", "received": "undefined", "path": ["path"], "message": "Required"},
  {"code": "invalid_type", "expected": "array", "received": "undefined", "path": ["edits"], "message": "Required"}
]"#;
        assert_eq!(
            params_in_error(zod),
            [("path".to_string(), "string".to_string()), ("edits".to_string(), "array".to_string())]
        );
        let pretty = "✖ Invalid input: expected string, received undefined\n  → at path";
        assert_eq!(params_in_error(pretty), [("path".to_string(), "string".to_string())]);
        let pydantic = "1 validation error for read_fileArguments\npath\n  Field required [type=missing]";
        assert_eq!(params_in_error(pydantic), [("path".to_string(), "string".to_string())]);
        assert_eq!(params_in_error("missing required argument 'url'"), [("url".to_string(), "string".to_string())]);
        assert!(params_in_error("something went wrong").is_empty());
    }

    #[test]
    fn sql_tools_that_write_by_design_are_told_from_readers() {
        let t = |v: serde_json::Value| sql_writes(&ToolInfo::from_value(&v), &BTreeMap::new());
        assert!(
            t(json!({"name": "write_query", "description": "Execute an INSERT, UPDATE, or DELETE query"})).is_some()
        );
        assert!(t(json!({"name": "execute", "description": "Execute SQL"})).is_some());
        assert!(
            t(json!({"name": "read_query", "description": "Execute a SELECT query on the SQLite database"})).is_none()
        );
        assert!(t(json!({"name": "execute_sql", "description": "Execute a read-only SQL query"})).is_none());
        assert!(t(json!({"name": "query", "description": "Run a read-only SQL query"})).is_none());
        assert!(t(json!({"name": "run", "annotations": {"destructiveHint": true}})).is_some());
        let declared = BTreeMap::from([(
            "execute".to_string(),
            DeclaredClass {
                class: Some(Class::Sql),
                param: Some("sql".into()),
                writes: Some(false),
                ..Default::default()
            },
        )]);
        assert!(sql_writes(&ToolInfo::from_value(&json!({"name": "execute"})), &declared).is_none());
    }

    #[test]
    fn no_target_parameter_is_other() {
        let c = tool(json!({"name": "read_weather", "inputSchema": {"type": "object", "properties": {"city": {}}}}));
        assert_eq!(c.class.id(), "other");
    }
}
