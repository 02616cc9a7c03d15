//! The servers people already have, as a sealmark.yaml: an MCP client's configuration
//! (the `mcpServers` map of Claude Desktop, Cursor, Windsurf and others; VS Code's
//! `servers` map in `mcp.json`) or an MCP registry `server.json`. What would reach the
//! user's own files or database is aimed at the harness's targets instead (a path
//! becomes `{sandbox}`, a Postgres URL `{dsn}`, an SQLite file `{sqlite}`), and each such
//! change is listed. The output is text that `config::parse` reads like any config.

use super::secrets;
use serde_json::{Map, Value};

/// What to do with a value a client keeps secret (an environment variable whose name
/// says key, token, secret or password; a VS Code password input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secrets {
    /// Copy the value in, for a run that never writes the config down (`run --from`).
    Inline,
    /// Write `${NAME}`, read from sealmark's environment at run time (`init --from`).
    Referenced,
}

/// The config, and what was changed or left out on the way, one line each.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub yaml: String,
    pub notes: Vec<String>,
    /// With `Secrets::Inline`: the secret values copied in, for the run to redact.
    pub secrets: Vec<String>,
}

/// Converts a client configuration or a registry `server.json` (its text; `file` names
/// it in messages).
pub fn import(file: &str, text: &str, secrets: Secrets) -> Result<Imported, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("{file}:{}: not JSON: {e}", e.line()))?;
    let Some(top) = doc.as_object() else { return Err(format!("{file}: expected a JSON object")) };
    let mut notes = Vec::new();
    let mut found = Vec::new();
    let servers: Vec<Named> = if let Some(map) = top.get("mcpServers") {
        // Cursor's `${env:NAME}` as VS Code's.
        entries(file, "mcpServers", map)?.into_iter().map(|(n, s)| (n, vscode(s, &[]))).collect()
    } else if let Some(map) = top.get("servers") {
        let inputs = top.get("inputs").and_then(Value::as_array).cloned().unwrap_or_default();
        entries(file, "servers", map)?.into_iter().map(|(n, s)| (n, vscode(s, &inputs))).collect()
    } else if top.contains_key("packages") || top.contains_key("remotes") {
        vec![registry(file, top, &mut notes)?]
    } else {
        return Err(format!(
            "{file}: neither an MCP client configuration (mcpServers, or VS Code's servers) nor a registry server.json (packages, remotes)"
        ));
    };
    if servers.is_empty() {
        return Err(format!("{file}: lists no server"));
    }
    let mut yaml = format!("# Converted by sealmark from {file}.\nservers:\n");
    let mut taken: Vec<String> = Vec::new();
    for (raw_name, server) in servers {
        let name = unique(server_name(&raw_name), &taken);
        taken.push(name.clone());
        let at = format!("servers.{name}");
        yaml.push_str(&format!("  {}:\n", quoted(&name)));
        entry(&mut yaml, &at, &server, secrets, &mut notes, &mut found);
    }
    Ok(Imported { yaml, notes, secrets: found })
}

/// A server as a client names it, and its entry.
type Named = (String, Map<String, Value>);

fn entries(file: &str, key: &str, v: &Value) -> Result<Vec<Named>, String> {
    let Some(map) = v.as_object() else { return Err(format!("{file}: {key} is not an object")) };
    Ok(map.iter().filter_map(|(k, v)| v.as_object().map(|o| (k.clone(), o.clone()))).collect())
}

/// A VS Code entry in the shape of the others: `${input:ID}` becomes an environment
/// reference named after the input, `${env:NAME}` one to NAME.
fn vscode(mut s: Map<String, Value>, inputs: &[Value]) -> Map<String, Value> {
    fn rewrite(v: &mut Value, inputs: &[Value]) {
        match v {
            Value::String(text) => {
                for input in inputs {
                    if let Some(id) = input.get("id").and_then(Value::as_str) {
                        let var = id.to_ascii_uppercase().replace(['-', '.', ' '], "_");
                        *text = text.replace(&format!("${{input:{id}}}"), &format!("${{{var}}}"));
                    }
                }
                while let Some(start) = text.find("${env:") {
                    let Some(end) = text[start..].find('}') else { break };
                    let name = text[start + 6..start + end].to_string();
                    text.replace_range(start..start + end + 1, &format!("${{{name}}}"));
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| rewrite(i, inputs)),
            Value::Object(m) => m.values_mut().for_each(|i| rewrite(i, inputs)),
            _ => {}
        }
    }
    for v in s.values_mut() {
        rewrite(v, inputs);
    }
    s
}

/// A registry `server.json`: its first package the harness can start (npm with npx,
/// PyPI with uvx, OCI with docker), else its first remote.
fn registry(
    file: &str,
    top: &Map<String, Value>,
    notes: &mut Vec<String>,
) -> Result<(String, Map<String, Value>), String> {
    let name = top.get("name").and_then(Value::as_str).unwrap_or("server");
    let short = name.rsplit('/').next().unwrap_or(name).to_string();
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    for package in top.get("packages").and_then(Value::as_array).into_iter().flatten() {
        let kind = str_of(package, "registryType").unwrap_or_default();
        let Some(id) = str_of(package, "identifier") else { continue };
        let version = str_of(package, "version");
        // The runner's arguments: those before the runtime's own (runtimeArguments), and
        // the package after them.
        let spec = |sep: &str| version.as_ref().map_or(id.clone(), |v| format!("{id}{sep}{v}"));
        let (runner, head, tail): (&str, Vec<String>, Vec<String>) = match kind.as_str() {
            "npx" | "npm" => ("npx", vec!["-y".into()], vec![spec("@")]),
            "pypi" => ("uvx", vec![], vec![spec("==")]),
            "oci" => ("docker", vec!["run".into(), "-i".into(), "--rm".into()], vec![id.clone()]),
            other => {
                notes.push(format!(
                    "{file}: package {id} ({other}) left out: sealmark starts npm, pypi and oci packages"
                ));
                continue;
            }
        };
        // A hint that names another program than the usual runner starts the package
        // itself, with its own arguments only.
        let hint = str_of(package, "runtimeHint");
        let own = hint.as_ref().is_some_and(|h| !["npx", "uvx", "docker", "pipx", "bunx", "dnx"].contains(&h.as_str()));
        let command = hint.unwrap_or_else(|| runner.to_string());
        let runtime: Vec<String> = package
            .get("runtimeArguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|a| str_of(a, "value"))
            .collect();
        let mut args: Vec<String> = if own { runtime } else { head.into_iter().chain(runtime).chain(tail).collect() };
        for arg in package.get("packageArguments").and_then(Value::as_array).into_iter().flatten() {
            let value = str_of(arg, "value").or_else(|| str_of(arg, "default")).or_else(|| {
                // A required argument without a value is what the user must give: a path
                // the harness supplies, else its hint.
                let hint = str_of(arg, "valueHint").unwrap_or_default();
                Some(if hint.contains("path") || hint.contains("dir") { "{sandbox}".to_string() } else { hint })
            });
            match (str_of(arg, "type").as_deref(), str_of(arg, "name"), value) {
                (Some("named"), Some(flag), Some(v)) => args.extend([flag, v]),
                (_, _, Some(v)) if !v.is_empty() => args.push(v),
                _ => {}
            }
        }
        let mut env = Map::new();
        for var in package.get("environmentVariables").and_then(Value::as_array).into_iter().flatten() {
            let Some(n) = str_of(var, "name") else { continue };
            let secret = var.get("isSecret").and_then(Value::as_bool).unwrap_or(false);
            let value = match (secret, str_of(var, "value").or_else(|| str_of(var, "default"))) {
                (false, Some(v)) => v,
                _ => format!("${{{n}}}"),
            };
            env.insert(n, Value::String(value));
        }
        let mut s = Map::new();
        s.insert("command".into(), Value::String(command));
        s.insert("args".into(), Value::Array(args.into_iter().map(Value::String).collect()));
        if !env.is_empty() {
            s.insert("env".into(), Value::Object(env));
        }
        return Ok((short, s));
    }
    for remote in top.get("remotes").and_then(Value::as_array).into_iter().flatten() {
        if let Some(url) = str_of(remote, "url") {
            let mut s = Map::new();
            s.insert("url".into(), Value::String(url));
            return Ok((short, s));
        }
    }
    Err(format!("{file}: {name} has no package sealmark can start and no remote URL"))
}

/// One server's keys, as YAML under `at`.
fn entry(
    yaml: &mut String,
    at: &str,
    s: &Map<String, Value>,
    secrets: Secrets,
    notes: &mut Vec<String>,
    found: &mut Vec<String>,
) {
    // A secret: kept (and listed for redaction) in a run, a `${NAME}` in a written config.
    let mut secret = |path: &str, name: &str, value: &str, notes: &mut Vec<String>| -> String {
        match secrets {
            Secrets::Inline => {
                found.push(value.to_string());
                value.to_string()
            }
            Secrets::Referenced => {
                notes.push(format!("{path}: a secret, written as ${{{name}}}: set {name} in sealmark's environment"));
                format!("${{{name}}}")
            }
        }
    };
    let text = |v: &Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
    let url = s.get("url").or_else(|| s.get("serverUrl")).map(text);
    if let Some(command) = s.get("command").map(text) {
        yaml.push_str(&format!("    command: {}\n", quoted(&command)));
        let args: Vec<String> = s
            .get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, a)| aimed(&format!("{at}.args[{i}]"), &text(a), notes))
            .collect();
        // The values of secret-looking flags (`--api-key X`, `--token=X`) and URL passwords.
        let args: Vec<String> = (0..args.len())
            .map(|i| {
                let (arg, path) = (&args[i], format!("{at}.args[{i}]"));
                let found = secrets::in_arg(&args, i);
                secrets::replaced(arg, &found, |f| secret(&path, &f.name, &arg[f.at.clone()], notes))
            })
            .collect();
        if !args.is_empty() {
            let list: Vec<String> = args.iter().map(|a| quoted(a)).collect();
            yaml.push_str(&format!("    args: [{}]\n", list.join(", ")));
        }
    } else if let Some(url) = &url {
        let found = secrets::in_urls(url);
        let url = secrets::replaced(url, &found, |f| secret(&format!("{at}.url"), &f.name, &url[f.at.clone()], notes));
        yaml.push_str(&format!("    url: {}\n", quoted(&url)));
    }
    for (key, field) in [("env", "env"), ("headers", "headers")] {
        let Some(map) = s.get(field).and_then(Value::as_object).filter(|m| !m.is_empty()) else { continue };
        if key == "headers" && url.is_none() {
            continue;
        }
        yaml.push_str(&format!("    {key}:\n"));
        for (k, v) in map {
            let path = format!("{at}.{key}.{k}");
            let value = text(v);
            // An auth scheme word stays: `Bearer ${TOKEN}`.
            let value = if secrets::secret_name(k) { value } else { aimed(&path, &value, notes) };
            let found = secrets::in_value(k, &value);
            let value = secrets::replaced(&value, &found, |f| secret(&path, &f.name, &value[f.at.clone()], notes));
            if let Some(var) = crate::config::env_reference(&value)
                && secrets == Secrets::Inline
            {
                notes.push(format!("{path}: read from sealmark's environment ({var})"));
            }
            yaml.push_str(&format!("      {}: {}\n", quoted(k), quoted(&value)));
        }
    }
}

/// A value aimed at the harness's targets where it would reach the user's own: an
/// absolute or home path becomes `{sandbox}` (`{sqlite}` for an SQLite file), a Postgres
/// URL `{dsn}`; VS Code's `${workspaceFolder}` is `{sandbox}` too.
fn aimed(path: &str, value: &str, notes: &mut Vec<String>) -> String {
    let (key, rest) = match value.split_once('=') {
        Some((k, r)) if k.starts_with('-') => (Some(k), r),
        _ => (None, value),
    };
    let lower = rest.to_ascii_lowercase();
    let target = if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
        Some("{dsn}")
    } else if rest.starts_with('/')
        || rest.starts_with("~/")
        || rest.contains("${workspaceFolder}")
        || is_windows_path(rest)
    {
        let sqlite = [".db", ".sqlite", ".sqlite3"].iter().any(|e| lower.ends_with(e));
        Some(if sqlite { "{sqlite}" } else { "{sandbox}" })
    } else {
        None
    };
    match target {
        Some(t) => {
            notes.push(format!("{path}: {rest} → {t} (the harness's own target)"));
            key.map_or(t.to_string(), |k| format!("{k}={t}"))
        }
        None => value.to_string(),
    }
}

fn is_windows_path(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
}

/// A client's name for a server as a name sealmark accepts (`config::is_server_name`).
fn server_name(raw: &str) -> String {
    let mut s: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect();
    s = s.trim_start_matches(['.', '_', '-']).chars().take(56).collect();
    match s.as_str() {
        "" => "server".to_string(),
        _ if crate::config::is_server_name(&s) => s,
        // A report file's name (index.html, viewer.js, …) cannot name a folder beside it.
        _ => format!("server-{s}"),
    }
}

fn unique(name: String, taken: &[String]) -> String {
    if !taken.contains(&name) {
        return name;
    }
    (2..).map(|n| format!("{name}-{n}")).find(|n| !taken.contains(n)).expect("a free name")
}

/// A YAML double-quoted string.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_desktop_config_becomes_servers_aimed_at_the_harness() {
        let text = r#"{"mcpServers": {
            "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]},
            "my db": {"command": "uvx", "args": ["mcp-server-postgres", "postgresql://me:pw@localhost/prod"], "env": {"API_TOKEN": "s3cret", "LOG": "debug"}},
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}}
        }}"#;
        let got = import("claude.json", text, Secrets::Referenced).unwrap();
        let config = crate::config::parse("claude.json", &got.yaml).unwrap_or_else(|e| panic!("{e}\n{}", got.yaml));
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["filesystem", "my-db", "remote"]);
        let odd = import(
            "c.json",
            r#"{"mcpServers": {"true": {"command": "x"}, "index.html": {"command": "y"}}}"#,
            Secrets::Inline,
        )
        .unwrap();
        let c = crate::config::parse("c.json", &odd.yaml).unwrap_or_else(|e| panic!("{e}\n{}", odd.yaml));
        assert_eq!(c.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["true", "server-index.html"]);
        assert_eq!(config.servers[0].server.args[2], "{sandbox}");
        assert_eq!(config.servers[1].server.args[1], "{dsn}");
        assert_eq!(config.servers[1].server.env["API_TOKEN"], "${API_TOKEN}");
        assert_eq!(config.servers[1].server.env["LOG"], "debug");
        assert_eq!(config.servers[2].server.url.as_deref(), Some("https://example.com/mcp"));
        assert!(!got.yaml.contains("s3cret") && !got.yaml.contains("/Users/me"), "{}", got.yaml);
        assert!(
            got.notes
                .iter()
                .any(|n| n == "servers.filesystem.args[2]: /Users/me/Desktop → {sandbox} (the harness's own target)")
        );
        let inline = import("claude.json", text, Secrets::Inline).unwrap();
        assert!(inline.yaml.contains("\"s3cret\""), "a run keeps the value in memory");
        assert!(
            inline.secrets.contains(&"s3cret".to_string()) && inline.secrets.contains(&"x".to_string()),
            "{:?}",
            inline.secrets
        );
        // Secrets in arguments, URLs and headers become references, the scheme kept.
        let leaky = r#"{"mcpServers": {
            "a": {"command": "srv", "args": ["--api-key", "k-123456", "--token=t-654321", "mongodb://me:pw-9999@db/x"]},
            "b": {"url": "https://h/mcp?api_key=q-1111&x=1", "headers": {"Authorization": "Bearer b-2222"}}
        }}"#;
        let got = import("l.json", leaky, Secrets::Referenced).unwrap();
        for value in ["k-123456", "t-654321", "pw-9999", "q-1111", "b-2222"] {
            assert!(
                !got.yaml.lines().any(|l| !l.starts_with('#') && l.contains(value)),
                "{value} written: {}",
                got.yaml
            );
        }
        let c = crate::config::parse("l.json", &got.yaml).unwrap_or_else(|e| panic!("{e}\n{}", got.yaml));
        assert_eq!(
            c.servers[0].server.args,
            ["--api-key", "${API_KEY}", "--token=${TOKEN}", "mongodb://me:${MONGODB_PASSWORD}@db/x"]
        );
        assert_eq!(c.servers[1].server.url.as_deref(), Some("https://h/mcp?api_key=${API_KEY}&x=1"));
        assert_eq!(c.servers[1].server.headers["Authorization"], "Bearer ${AUTHORIZATION}");
        let inline = import("l.json", leaky, Secrets::Inline).unwrap();
        assert_eq!(inline.secrets.len(), 5, "{:?}", inline.secrets);
    }

    #[test]
    fn vscode_inputs_and_a_registry_server_json_convert() {
        let vscode = r#"{"inputs": [{"type": "promptString", "id": "api-key", "password": true}],
            "servers": {"gh": {"type": "stdio", "command": "docker", "args": ["run", "-i", "ghcr.io/x"], "env": {"KEY": "${input:api-key}", "ROOT": "${workspaceFolder}"}}}}"#;
        let got = import("mcp.json", vscode, Secrets::Inline).unwrap();
        let c = crate::config::parse("mcp.json", &got.yaml).unwrap();
        assert_eq!(c.servers[0].server.env["KEY"], "${API_KEY}");
        assert_eq!(c.servers[0].server.env["ROOT"], "{sandbox}");
        let registry = r#"{"name": "io.github.me/files", "version": "1.2.0", "packages": [
            {"registryType": "nuget", "identifier": "X"},
            {"registryType": "npm", "identifier": "@me/files", "version": "1.2.0",
             "packageArguments": [{"type": "positional", "valueHint": "directory_path", "isRequired": true}],
             "environmentVariables": [{"name": "FILES_TOKEN", "isSecret": true}, {"name": "MODE", "default": "ro"}]}]}"#;
        let got = import("server.json", registry, Secrets::Inline).unwrap();
        let c = crate::config::parse("server.json", &got.yaml).unwrap();
        assert_eq!(c.servers[0].name, "files");
        assert_eq!(c.servers[0].server.command.as_deref(), Some("npx"));
        assert_eq!(c.servers[0].server.args, ["-y", "@me/files@1.2.0", "{sandbox}"]);
        assert_eq!(c.servers[0].server.env["FILES_TOKEN"], "${FILES_TOKEN}");
        assert_eq!(c.servers[0].server.env["MODE"], "ro");
        assert!(got.notes[0].contains("package X (nuget) left out"), "{:?}", got.notes);
        assert!(import("x.json", "{\"other\": 1}", Secrets::Inline).unwrap_err().contains("neither an MCP client"));
    }
}
