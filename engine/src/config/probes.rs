//! `probes:` in sealmark.yaml: valid calls (no `check`) and custom checks (with one),
//! parsed and validated before anything runs. `matrix` and `cases` are expanded here,
//! so the runtime and the judge see one flat list of probes.
//!
//! What can be refused without the server (keys, ids, regexes, placeholders, paths) is
//! refused here; what needs the server's tool list (unknown tools, literal targets,
//! schemas) is `validate_against_tools`, which the runtime calls before any probe.

use crate::classify::Class;
use crate::config::{Validator, join, kind_of, show};
use crate::judge::custom::{CheckMeta, Expect, HeaderExpect, Identity, ListenerExpect, Probe};
use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};
use serde_yaml_ng::Value as Yaml;

/// The placeholders a path may start with.
pub const PATH_PLACEHOLDERS: [&str; 3] = ["{sandbox_home}", "{sandbox}", "{canary}"];
/// Placeholders that belong to the db pack: a probe using one is inconclusive.
pub const DB_PLACEHOLDERS: [&str; 6] = ["{dsn}", "{host}", "{port}", "{user}", "{password}", "{db}"];
/// The programs the harness puts on a command tool's PATH.
pub const HARNESS_PROGRAMS: [&str; 4] = ["sm-echo", "sm-canary", "sm-sleep", "sm-spew"];

pub const PROBE_KEYS: [&str; 11] =
    ["id", "check", "tool", "args", "active", "timeout_ms", "expect", "identity", "matrix", "cases", "upstream"];
pub const EXPECT_KEYS: [&str; 8] =
    ["is_error", "text", "files", "listener", "duration_ms", "upstream", "log", "response"];

impl Validator<'_> {
    pub(crate) fn probes(&mut self, v: &Yaml) -> Vec<Probe> {
        let Yaml::Sequence(items) = v else {
            self.problem("probes", format!("expected a list of probes, found {}", kind_of(v)));
            return Vec::new();
        };
        let mut out: Vec<Probe> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            for p in self.probe(i, item) {
                if out.iter().any(|o| o.name == p.name) {
                    self.problem(&format!("probes[{i}].id"), format!("the probe id \"{}\" is used twice", p.name));
                }
                out.push(p);
            }
        }
        // Probes that share a check id share its label, scope and critical flag.
        for (i, p) in out.iter().enumerate() {
            let Some(meta) = &p.check else { continue };
            if let Some(first) = out[..i].iter().filter_map(|o| o.check.as_ref()).find(|m| m.id == meta.id)
                && first != meta
            {
                let key = format!("{}.check", p.key);
                self.problem(&key, format!(
                    "check \"{}\" is declared with another label, scope or critical flag elsewhere; probes of one check must agree",
                    meta.id
                ));
            }
        }
        out
    }

    /// One entry, expanded by `matrix` or `cases`.
    fn probe(&mut self, i: usize, v: &Yaml) -> Vec<Probe> {
        let path = format!("probes[{i}]");
        let mut base = Probe {
            name: String::new(),
            check: None,
            tool: String::new(),
            args: Map::new(),
            active: false,
            timeout_ms: None,
            expect: Expect::default(),
            identity: None,
            upstream_reply: None,
            line: self.lines.line_of(&path),
            key: path.clone(),
        };
        let mut id = None;
        let mut matrix: Vec<(String, Vec<String>)> = Vec::new();
        let mut cases: Option<&Yaml> = None;
        for (key, val) in self.mapping(&path, v, &PROBE_KEYS) {
            let kpath = join(&path, &key);
            match key.as_str() {
                "id" => id = self.string(&kpath, val),
                "check" => base.check = self.check_meta(&kpath, val),
                "tool" => base.tool = self.string(&kpath, val).unwrap_or_default(),
                "args" => base.args = self.args(&kpath, val),
                "active" => match val.as_bool() {
                    Some(b) => base.active = b,
                    None => self.problem(&kpath, format!("expected true or false, found {}", show(val))),
                },
                "timeout_ms" => match val.as_u64() {
                    Some(n) if (1..=600_000).contains(&n) => base.timeout_ms = Some(n),
                    _ => self.problem(&kpath, format!("expected milliseconds from 1 to 600000, found {}", show(val))),
                },
                "expect" => base.expect = self.expect(&kpath, val),
                "identity" => match val.as_str() {
                    Some("a") => base.identity = Some(Identity::A),
                    Some("b") => base.identity = Some(Identity::B),
                    Some("none") => base.identity = Some(Identity::Anonymous),
                    _ => self.problem(&kpath, format!("expected a, b or none, found {}", show(val))),
                },
                "matrix" => {
                    for (arg, values) in self.mapping(&kpath, val, &[]) {
                        let values = self.strings(&join(&kpath, &arg), values);
                        if values.is_empty() {
                            self.problem(&join(&kpath, &arg), "a matrix argument needs at least one value");
                        }
                        matrix.push((arg, values));
                    }
                }
                "cases" => cases = Some(val),
                _ => {
                    for (k, reply) in self.mapping(&kpath, val, &["reply"]) {
                        base.upstream_reply = Some(self.reply(&join(&kpath, &k), reply));
                    }
                }
            }
        }
        if base.tool.is_empty() {
            self.problem(&path, "each probe needs a tool");
        }
        if base.check.is_some() && id.is_none() {
            self.problem(&path, "a probe with a check needs an id, so its result can be matched");
        }
        if !matrix.is_empty() && cases.is_some() {
            self.problem(&path, "matrix and cases exclude each other; use one");
        }
        base.name = id.clone().unwrap_or_else(|| format!("{}#{}", base.tool, i + 1));
        let mut out = Vec::new();
        if let Some(list) = cases {
            let Yaml::Sequence(items) = list else {
                self.problem(&join(&path, "cases"), format!("expected a list of cases, found {}", kind_of(list)));
                return out;
            };
            for (n, case) in items.iter().enumerate() {
                let cpath = format!("{path}.cases[{n}]");
                let mut p = base.clone();
                p.name = format!("{}#{}", base.name, n + 1);
                p.key = cpath.clone();
                p.line = self.lines.line_of(&cpath);
                for (key, val) in self.mapping(&cpath, case, &["id", "args", "expect"]) {
                    let kpath = join(&cpath, &key);
                    match key.as_str() {
                        "id" => {
                            if let Some(s) = self.string(&kpath, val) {
                                p.name = s;
                            }
                        }
                        "args" => p.args.extend(self.args(&kpath, val)),
                        _ => p.expect.overlay(self.expect(&kpath, val)),
                    }
                }
                out.push(p);
            }
        } else if !matrix.is_empty() {
            let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
            for (arg, values) in &matrix {
                combos = combos
                    .into_iter()
                    .flat_map(|c| {
                        values.iter().map(move |v| {
                            let mut c = c.clone();
                            c.push((arg.clone(), v.clone()));
                            c
                        })
                    })
                    .collect();
            }
            for combo in combos {
                let mut p = base.clone();
                let label: Vec<String> = combo.iter().map(|(a, v)| format!("{a}={v}")).collect();
                p.name = format!("{}[{}]", base.name, label.join(","));
                p.args = fill_matrix(&base.args, &combo);
                out.push(p);
            }
        } else {
            out.push(base);
        }
        for p in &out {
            self.check_probe(p, &matrix);
        }
        out
    }

    /// The rules one expanded probe must follow whatever the server declares.
    fn check_probe(&mut self, p: &Probe, matrix: &[(String, Vec<String>)]) {
        if let Some(meta) = &p.check
            && p.expect.is_empty()
        {
            self.problem(&format!("{}.expect", p.key), format!("check {} needs at least one expect clause", meta.id));
        }
        for text in strings_in(&Value::Object(p.args.clone())) {
            if let Some(why) = arg_refusal(&text, matrix) {
                self.problem(&format!("{}.args", p.key), why);
            }
        }
        for path in p.expect.paths() {
            if !PATH_PLACEHOLDERS.iter().any(|ph| path.starts_with(ph)) {
                self.problem(
                    &format!("{}.expect.files", p.key),
                    format!("\"{path}\" must start with {{sandbox}}, {{sandbox_home}} or {{canary}}"),
                );
            } else if let Some(why) = path_refusal(path) {
                self.problem(&format!("{}.expect.files", p.key), why);
            }
        }
    }

    fn check_meta(&mut self, path: &str, v: &Yaml) -> Option<CheckMeta> {
        let mut meta = CheckMeta { id: String::new(), label: String::new(), scope: String::new(), critical: false };
        for (key, val) in self.mapping(path, v, &["id", "label", "scope", "critical"]) {
            let kpath = join(path, &key);
            match key.as_str() {
                "id" => meta.id = self.string(&kpath, val).unwrap_or_default(),
                "label" => meta.label = self.string(&kpath, val).unwrap_or_default(),
                "scope" => meta.scope = self.string(&kpath, val).unwrap_or_default(),
                _ => match val.as_bool() {
                    Some(b) => meta.critical = b,
                    None => self.problem(&kpath, format!("expected true or false, found {}", show(val))),
                },
            }
        }
        let id_path = join(path, "id");
        if meta.id.is_empty() {
            self.problem(path, "a check needs an id (letters, digits, '.', '_', '-'), such as custom-delete-scope");
        } else if !meta.id.chars().all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c)) {
            self.problem(&id_path, format!("\"{}\": an id is letters, digits, '.', '_' and '-' only", meta.id));
        } else if crate::registry::check(&meta.id).is_some() {
            self.problem(
                &id_path,
                format!("\"{0}\" is a built-in check; give yours its own id, such as custom-{0}", meta.id),
            );
        }
        if meta.label.trim().is_empty() {
            self.problem(path, "a check needs a label: the line reports print");
        }
        if !["server", "database", "environment"].iter().any(|s| meta.scope.starts_with(s)) {
            self.problem(
                &join(path, "scope"),
                format!("\"{}\": a scope starts with server, database or environment", meta.scope),
            );
        }
        Some(meta)
    }

    fn args(&mut self, path: &str, v: &Yaml) -> Map<String, Value> {
        match serde_json::to_value(v) {
            Ok(Value::Object(m)) => m,
            _ => {
                self.problem(path, format!("expected a mapping of arguments, found {}", kind_of(v)));
                Map::new()
            }
        }
    }

    fn ci_regex(&mut self, path: &str, v: &Yaml) -> Option<Regex> {
        let s = self.string(path, v)?;
        match RegexBuilder::new(&s).case_insensitive(true).build() {
            Ok(re) => Some(re),
            Err(e) => {
                let why = e.to_string().lines().last().unwrap_or("").to_string();
                self.problem(path, format!("\"{s}\" is not a valid regular expression: {why}"));
                None
            }
        }
    }

    fn expect(&mut self, path: &str, v: &Yaml) -> Expect {
        let mut e = Expect::default();
        for (key, val) in self.mapping(path, v, &EXPECT_KEYS) {
            let kpath = join(path, &key);
            match key.as_str() {
                "is_error" => match val.as_bool() {
                    Some(b) => e.is_error = Some(b),
                    None => self.problem(&kpath, format!("expected true or false, found {}", show(val))),
                },
                "text" | "log" => {
                    for (k, re) in self.mapping(&kpath, val, &["matches", "not_matches"]) {
                        let re = self.ci_regex(&join(&kpath, &k), re);
                        match (key.as_str(), k.as_str()) {
                            ("text", "matches") => e.text_matches = re,
                            ("text", _) => e.text_not_matches = re,
                            (_, "matches") => e.log_matches = re,
                            _ => e.log_not_matches = re,
                        }
                    }
                }
                "files" => {
                    for (k, list) in self.mapping(&kpath, val, &["unchanged", "created", "absent"]) {
                        let paths = self.strings(&join(&kpath, &k), list);
                        match k.as_str() {
                            "unchanged" => e.files_unchanged = paths,
                            "created" => e.files_created = paths,
                            _ => e.files_absent = paths,
                        }
                    }
                }
                "listener" => match val.as_str() {
                    Some("none") => e.listener = Some(ListenerExpect::None),
                    Some("hit") => e.listener = Some(ListenerExpect::Hit),
                    Some("any") => e.listener = Some(ListenerExpect::Any),
                    _ => self.problem(&kpath, format!("expected none, hit or any, found {}", show(val))),
                },
                "duration_ms" | "response" => {
                    let sub = if key == "duration_ms" { "max" } else { "max_bytes" };
                    for (k, n) in self.mapping(&kpath, val, &[sub]) {
                        match n.as_u64() {
                            Some(n) if n > 0 => {
                                if key == "duration_ms" {
                                    e.duration_max_ms = Some(n)
                                } else {
                                    e.response_max_bytes = Some(n)
                                }
                            }
                            _ => self.problem(
                                &join(&kpath, &k),
                                format!("expected a positive whole number, found {}", show(n)),
                            ),
                        }
                    }
                }
                _ => self.upstream_expect(&kpath, val, &mut e),
            }
        }
        e
    }

    fn upstream_expect(&mut self, path: &str, v: &Yaml, e: &mut Expect) {
        for (key, val) in
            self.mapping(path, v, &["requests", "none_matching", "all_matching", "header", "token_echoed"])
        {
            let kpath = join(path, &key);
            match key.as_str() {
                "requests" => match val.as_str() {
                    Some("none") => e.upstream_any = Some(false),
                    Some("any") => e.upstream_any = Some(true),
                    _ => self.problem(&kpath, format!("expected none or any, found {}", show(val))),
                },
                "none_matching" => e.upstream_none_matching = self.ci_regex(&kpath, val),
                "all_matching" => e.upstream_all_matching = self.ci_regex(&kpath, val),
                "token_echoed" => match val.as_bool() {
                    Some(b) => e.upstream_token_echoed = Some(b),
                    None => self.problem(&kpath, format!("expected true or false, found {}", show(val))),
                },
                _ => {
                    for (name, rule) in self.mapping(&kpath, val, &[]) {
                        let hpath = join(&kpath, &name);
                        for (k, x) in self.mapping(&hpath, rule, &["equals", "matches"]) {
                            let xpath = join(&hpath, &k);
                            let expect = if k == "equals" {
                                self.string(&xpath, x).map(HeaderExpect::Equals)
                            } else {
                                self.ci_regex(&xpath, x).map(HeaderExpect::Matches)
                            };
                            if let Some(h) = expect {
                                e.upstream_header.push((name.to_ascii_lowercase(), h));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `args` with every `{matrix.<arg>}` filled from one combination.
fn fill_matrix(args: &Map<String, Value>, combo: &[(String, String)]) -> Map<String, Value> {
    fn fill(v: &Value, combo: &[(String, String)]) -> Value {
        match v {
            Value::String(s) => Value::String(
                combo.iter().fold(s.clone(), |acc, (a, val)| acc.replace(&format!("{{matrix.{a}}}"), val)),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|x| fill(x, combo)).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), fill(x, combo))).collect()),
            other => other.clone(),
        }
    }
    args.iter().map(|(k, v)| (k.clone(), fill(v, combo))).collect()
}

/// Every string in a value, at any depth.
pub fn strings_in(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(strings_in).collect(),
        Value::Object(m) => m.values().flat_map(strings_in).collect(),
        _ => Vec::new(),
    }
}

/// Why an argument string is refused, whatever the tool.
fn arg_refusal(text: &str, matrix: &[(String, Vec<String>)]) -> Option<String> {
    if text.contains("{upstream}") {
        return Some(format!(
            "\"{text}\": {{upstream}} is the server's backend, not a target; aim probes at the server's tools"
        ));
    }
    if text.contains("{bearer") {
        return Some(format!("\"{text}\": {{bearer}} is chosen by identity, not written in args"));
    }
    let mut rest = text;
    while let Some(at) = rest.find("{matrix.") {
        let name = rest[at + 8..].split('}').next().unwrap_or("");
        if !matrix.iter().any(|(a, _)| a == name) {
            return Some(format!("\"{text}\": {{matrix.{name}}} names no matrix argument"));
        }
        rest = &rest[at + 8..];
    }
    if PATH_PLACEHOLDERS.iter().any(|ph| text.starts_with(ph)) {
        return path_refusal(text);
    }
    if let Some(after) = text.strip_prefix("{listener}")
        && !(after.is_empty() || after.starts_with('/'))
    {
        return Some(format!(
            "\"{text}\": a URL must continue {{listener}} with a path (/…); anything else may leave the listener"
        ));
    }
    None
}

/// Why a path that starts with a harness placeholder is refused: it climbs out of the
/// sandbox, hides a dot or slash in percent-encoding, or has a segment made only of dots.
pub fn path_refusal(path: &str) -> Option<String> {
    let lower = path.to_ascii_lowercase();
    if lower.contains("%2e") || lower.contains("%2f") || lower.contains("%5c") {
        return Some(format!("\"{path}\": a percent-encoded dot or slash is refused in a sandbox path"));
    }
    let rest = PATH_PLACEHOLDERS.iter().find_map(|ph| path.strip_prefix(ph)).unwrap_or(path);
    if rest.split(['/', '\\']).any(|seg| !seg.is_empty() && seg.chars().all(|c| c == '.')) {
        return Some(format!("\"{path}\": a segment made only of dots could climb out of the sandbox"));
    }
    None
}

/// Why a probe's argument is refused for the class of its tool (the classified
/// parameter must hold a harness target), when it is.
pub fn target_refusal(class: Class, value: &str, has_stub: bool) -> Option<String> {
    match class {
        Class::Path if !PATH_PLACEHOLDERS.iter().any(|ph| value.starts_with(ph)) => Some(format!(
            "\"{value}\": a path tool must be given a path that starts with {{sandbox}}, {{sandbox_home}} or {{canary}}"
        )),
        Class::Url if !value.starts_with("{listener}") => {
            Some(format!("\"{value}\": a URL tool must be given a URL that starts with {{listener}}"))
        }
        Class::Command if !value.split_whitespace().next().is_some_and(|w| HARNESS_PROGRAMS.contains(&w)) => Some(
            format!("\"{value}\": a command tool may run only the harness programs {}", HARNESS_PROGRAMS.join(", ")),
        ),
        Class::Sql if !has_stub => Some(format!(
            "\"{value}\": SQL is sent from probes only when upstream.kind declares a stub; the db and sqlite packs own SQL against the databases the harness seeds"
        )),
        _ => None,
    }
}

/// Where a valid call breaks the tool's input schema (missing required arguments,
/// primitive types, enums), each said as a sentence of its own.
pub fn schema_mismatch(schema: &Value, args: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for r in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        if !args.contains_key(r) {
            out.push(format!("the required argument {r} is missing"));
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    for (name, value) in args {
        let Some(prop) = props.and_then(|p| p.get(name)) else { continue };
        if let Some(ty) = prop.get("type").and_then(Value::as_str) {
            let placeholder = value.as_str().is_some_and(|s| s.starts_with('{'));
            let fits = match ty {
                "string" => value.is_string(),
                "integer" => value.is_i64() || value.is_u64(),
                "number" => value.is_number(),
                "boolean" => value.is_boolean(),
                "array" => value.is_array(),
                "object" => value.is_object(),
                _ => true,
            };
            if !fits && !placeholder {
                let article = if ty.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
                out.push(format!("{name} is {value}, where the schema asks for {article} {ty}"));
            }
        }
        if let Some(options) = prop.get("enum").and_then(Value::as_array)
            && !options.contains(value)
        {
            out.push(format!("{name} is {value}, where the schema allows only {}", Value::Array(options.clone())));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::config::parse;

    fn problems(yaml: &str) -> String {
        let text = format!("server:\n  command: x\nprobes:\n{yaml}");
        match parse("c.yaml", &text) {
            Ok(_) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn matrix_and_cases_expand_with_their_names() {
        let text = "server:\n  command: x\nprobes:\n  - id: rd\n    tool: read_file\n    matrix: { f: [a, b] }\n    args: { path: \"{sandbox}/{matrix.f}.txt\" }\n  - id: del\n    tool: delete_file\n    args: { path: \"{sandbox}/ok.txt\" }\n    cases:\n      - { args: { path: \"{canary}/secret.txt\" } }\n      - { id: del-home, args: { path: \"{sandbox_home}/x\" } }\n";
        let c = parse("c.yaml", text).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<&str> = c.probes.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["rd[f=a]", "rd[f=b]", "del#1", "del-home"]);
        assert_eq!(c.probes[1].args["path"], "{sandbox}/b.txt");
        assert_eq!(c.probes[2].args["path"], "{canary}/secret.txt");
    }

    #[test]
    fn static_refusals_name_line_and_key() {
        let cases = [
            (
                "  - { tool: t, args: { u: \"{upstream}/x\" } }\n",
                "c.yaml:4: probes[0].args: \"{upstream}/x\": {upstream} is the server's backend",
            ),
            ("  - { tool: t, args: { p: \"{sandbox}/../x\" } }\n", "a segment made only of dots"),
            ("  - { tool: t, args: { p: \"{sandbox}/%2e%2e/x\" } }\n", "a percent-encoded dot or slash"),
            ("  - { tool: t, args: { u: \"{listener}@evil.example/\" } }\n", "anything else may leave the listener"),
            ("  - { tool: t, expct: {} }\n", "probes[0].expct: unknown key (did you mean `expect`?)"),
            (
                "  - { id: x, tool: t, check: { id: handshake, label: l, scope: server }, expect: { is_error: true } }\n",
                "\"handshake\" is a built-in check",
            ),
            (
                "  - { id: x, tool: t, check: { id: c1, label: l, scope: server } }\n",
                "check c1 needs at least one expect clause",
            ),
            (
                "  - { tool: t, check: { id: c1, label: l, scope: server }, expect: { is_error: true } }\n",
                "a probe with a check needs an id",
            ),
            ("  - { id: x, tool: t, expect: { text: { matches: \"(\" } } }\n", "is not a valid regular expression"),
            ("  - { id: x, tool: t }\n  - { id: x, tool: t }\n", "the probe id \"x\" is used twice"),
            (
                "  - { id: x, tool: t, check: { id: c1, label: l, scope: server }, expect: { is_error: true } }\n  - { id: y, tool: t, check: { id: c1, label: other, scope: server }, expect: { is_error: true } }\n",
                "probes of one check must agree",
            ),
            (
                "  - { id: x, tool: t, check: { id: c1, label: l, scope: mine }, expect: { is_error: true } }\n",
                "a scope starts with server, database or environment",
            ),
            ("  - { tool: t, args: { p: \"{sandbox}/{matrix.nope}\" } }\n", "names no matrix argument"),
            ("  - { tool: t, expect: { files: { unchanged: [\"/etc/passwd\"] } } }\n", "must start with {sandbox}"),
        ];
        for (yaml, want) in cases {
            let got = problems(yaml);
            assert!(got.contains(want), "{yaml}: wanted {want:?}, got {got:?}");
        }
    }
}
