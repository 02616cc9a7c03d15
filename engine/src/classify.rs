//! Classification: which kind of target each tool can be aimed at, with the reason.
//!
//! A tool is placed by its parameter names first (the strongest sign), then its name
//! and description. Packs apply according to the classes found.

use crate::record::Classification;
use crate::tools::ToolInfo;
use regex::Regex;
use std::sync::LazyLock;

/// The classes a tool can be placed in, in order of precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Sql,
    Command,
    Git,
    Url,
    Path,
    Other,
}

impl Class {
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

struct Rule {
    class: Class,
    params: &'static [&'static str],
    name: &'static str,
    name_re: LazyLock<Regex>,
    desc: &'static str,
    desc_re: LazyLock<Regex>,
}

macro_rules! rule {
    ($class:expr, $params:expr, $name:literal, $desc:literal) => {
        Rule {
            class: $class,
            params: $params,
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
        &["sql", "query", "statement", "sql_query"],
        "sql|query|select|database|\\bdb\\b",
        "\\bsql\\b|database|table"
    ),
    rule!(
        Class::Command,
        &["command", "cmd", "script", "shell", "commandline"],
        "exec|shell|command|bash|\\brun\\b",
        "shell|command|execut"
    ),
    rule!(Class::Git, &["repo_path", "repository", "repo", "repo_dir"], "^git|git_|_git", "\\bgit\\b|repositor|commit"),
    rule!(
        Class::Url,
        &["url", "uri", "endpoint", "href", "link", "target_url"],
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
        "read|write|file|dir|list|stat|path|mkdir|move|copy|delete",
        "\\bfile|director|folder|\\bpath"
    ),
];

/// Confidence steps, lowest first.
const CONFIDENCE: [&str; 3] = ["low", "medium", "high"];

/// Places one tool.
pub fn classify(tool: &ToolInfo) -> Classification {
    let param_of = |rule: &Rule| {
        tool.params.iter().map(|(n, _)| n.as_str()).find(|p| {
            let p = p.to_ascii_lowercase();
            rule.params.iter().any(|want| p == *want || p.ends_with(&format!("_{want}")))
        })
    };
    let mut matches: Vec<(Class, usize, Vec<String>, String)> = Vec::new();
    for rule in &RULES {
        let mut reasons = Vec::new();
        let mut strength = 0usize;
        let param = param_of(rule);
        if let Some(p) = param {
            reasons.push(format!("param \"{p}\""));
            strength += 1;
        }
        let by_name = rule.name_re.is_match(&tool.name);
        if by_name {
            reasons.push(format!("name matches /{}/", matching_alternatives(rule.name, &tool.name)));
        }
        let by_desc = !by_name && rule.desc_re.is_match(&tool.description);
        if by_desc {
            reasons.push(format!("description matches /{}/", matching_alternatives(rule.desc, &tool.description)));
        }
        if strength == 0 {
            // Without a parameter to aim at, a name alone is too weak to probe with.
            continue;
        }
        if by_name || by_desc {
            strength += 1;
        }
        matches.push((rule.class, strength, reasons, param.unwrap_or_default().to_string()));
    }
    let annotations = annotation_tags(tool);
    let Some((class, strength, mut reasons, param)) = matches.first().cloned() else {
        return Classification {
            tool: tool.name.clone(),
            class: Class::Other.id().to_string(),
            param: None,
            confidence: "high".to_string(),
            annotations,
            reason: "no parameter names a path, url, sql, command or repository".to_string(),
            secondary: None,
        };
    };
    // strength 1 (param only) is medium, 2 (param and name/description) is high.
    let mut level = strength;
    if tool.hint("destructiveHint") == Some(true) && class != Class::Command {
        level -= 1;
        reasons.push("destructiveHint is true: confidence lowered one step".to_string());
    }
    Classification {
        tool: tool.name.clone(),
        class: class.id().to_string(),
        param: Some(param),
        confidence: CONFIDENCE[level].to_string(),
        annotations,
        reason: reasons.join(", "),
        secondary: matches.get(1).map(|(c, _, _, _)| c.id().to_string()),
    }
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
        assert_eq!((c.class.as_str(), c.confidence.as_str()), ("path", "high"));
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
        assert_eq!(c.class, "url");
        assert_eq!(c.secondary.as_deref(), Some("path"));
    }

    #[test]
    fn no_target_parameter_is_other() {
        let c = tool(json!({"name": "read_weather", "inputSchema": {"type": "object", "properties": {"city": {}}}}));
        assert_eq!(c.class, "other");
    }
}
