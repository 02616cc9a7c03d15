//! The published JSON Schemas: the record (derived from the record types) and
//! sealmark.yaml (built from the key tables the validator reads and from the check
//! registry). The committed copies in `site/schema/` are compared with these by a test.

use crate::config::probes::{EXPECT_KEYS, PROBE_KEYS};
use crate::config::{SERVER_KEYS, TOP_KEYS};
use crate::model::Pack;
use crate::record::Record;
use crate::registry::{CHECKS, SettingKind};
use serde_json::{Map, Value, json};

const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("serialises");
    s.push('\n');
    s
}

/// The record's schema, from its types.
pub fn record_schema() -> String {
    let mut schema = serde_json::to_value(schemars::schema_for!(Record)).expect("a schema serialises");
    schema["$id"] = json!(format!("https://sealmark.dev/schema/record-v{}.json", crate::SCHEMA_VERSION.major));
    schema["title"] = json!("sealmark record");
    schema["description"] =
        json!(format!("The complete result of one sealmark run (record version {}).", crate::SCHEMA_VERSION));
    pretty(&schema)
}

/// The combined record's schema (a run of several servers), from its types.
pub fn combined_schema() -> String {
    let mut schema =
        serde_json::to_value(schemars::schema_for!(crate::combined::Combined)).expect("a schema serialises");
    schema["$id"] = json!(format!("https://sealmark.dev/schema/combined-v{}.json", crate::SCHEMA_VERSION.major));
    schema["title"] = json!("sealmark combined record");
    schema["description"] = json!(format!(
        "A run of several servers: each server's record, in the config's order (record version {}).",
        crate::SCHEMA_VERSION
    ));
    pretty(&schema)
}

fn string() -> Value {
    json!({ "type": "string" })
}

fn strings() -> Value {
    json!({ "type": "array", "items": { "type": "string" } })
}

fn object(props: &[(&str, Value)], required: &[&str]) -> Value {
    let mut p = Map::new();
    for (k, v) in props {
        p.insert((*k).to_string(), v.clone());
    }
    let mut o = json!({ "type": "object", "properties": p, "additionalProperties": false });
    if !required.is_empty() {
        o["required"] = json!(required);
    }
    o
}

fn setting(kind: SettingKind) -> Value {
    match kind {
        SettingKind::Integer { min, max } => json!({ "type": "integer", "minimum": min, "maximum": max }),
        SettingKind::Bool => json!({ "type": "boolean" }),
        SettingKind::StringList => strings(),
        SettingKind::Text => string(),
        // The key's own schema is written out where the key is (sql_tools).
        SettingKind::Entries { .. } => json!({}),
    }
}

fn reply() -> Value {
    object(
        &[
            ("status", json!({ "type": "integer", "minimum": 100, "maximum": 599 })),
            ("headers", json!({ "type": "object", "additionalProperties": { "type": "string" } })),
            ("body", string()),
            ("json", json!({})),
            ("bytes", json!({ "type": "integer", "minimum": 0, "maximum": 268435456 })),
        ],
        &[],
    )
}

fn expect() -> Value {
    let regexes = || object(&[("matches", string()), ("not_matches", string())], &[]);
    let clauses: Vec<(&str, Value)> = EXPECT_KEYS
        .iter()
        .map(|k| {
            let v = match *k {
                "is_error" => json!({ "type": "boolean" }),
                "text" | "log" => regexes(),
                "files" => object(&[("unchanged", strings()), ("created", strings()), ("absent", strings())], &[]),
                "listener" => json!({ "enum": ["none", "hit", "any"] }),
                "duration_ms" => object(&[("max", json!({ "type": "integer", "minimum": 1 }))], &[]),
                "response" => object(&[("max_bytes", json!({ "type": "integer", "minimum": 1 }))], &[]),
                _ => object(
                    &[
                        ("requests", json!({ "enum": ["none", "any"] })),
                        ("none_matching", string()),
                        ("all_matching", string()),
                        (
                            "header",
                            json!({ "type": "object", "additionalProperties": object(&[("equals", string()), ("matches", string())], &[]) }),
                        ),
                        ("token_echoed", json!({ "type": "boolean" })),
                    ],
                    &[],
                ),
            };
            (*k, v)
        })
        .collect();
    object(&clauses, &[])
}

fn probe() -> Value {
    let fields: Vec<(&str, Value)> = PROBE_KEYS
        .iter()
        .map(|k| {
            let v = match *k {
                "check" => object(
                    &[
                        ("id", json!({ "type": "string", "pattern": "^[A-Za-z0-9._-]+$" })),
                        ("label", string()),
                        ("scope", json!({ "type": "string", "pattern": "^(server|database|environment)" })),
                        ("critical", json!({ "type": "boolean" })),
                    ],
                    &["id", "label", "scope"],
                ),
                "args" => json!({ "type": "object" }),
                "active" => json!({ "type": "boolean" }),
                "timeout_ms" => json!({ "type": "integer", "minimum": 1, "maximum": 600000 }),
                "expect" => expect(),
                "identity" => json!({ "enum": ["a", "b", "none"] }),
                "matrix" => json!({ "type": "object", "additionalProperties": strings() }),
                "cases" => json!({ "type": "array", "items": object(&[("id", string()), ("args", json!({ "type": "object" })), ("expect", expect())], &[]) }),
                "upstream" => object(&[("reply", reply())], &[]),
                _ => string(),
            };
            (*k, v)
        })
        .collect();
    object(&fields, &["tool"])
}

/// The schema of sealmark.yaml.
pub fn config_schema() -> String {
    let server: Vec<(&str, Value)> = SERVER_KEYS
        .iter()
        .map(|k| {
            let v = match *k {
                "args" => strings(),
                "env" | "headers" => json!({ "type": "object", "additionalProperties": { "type": "string" } }),
                "url" => json!({ "type": "string", "pattern": "^https?://" }),
                _ => string(),
            };
            (*k, v)
        })
        .collect();
    let mut checks = Map::new();
    for def in CHECKS {
        let mut fields: Vec<(&str, Value)> = vec![
            ("enabled", json!({ "type": "boolean" })),
            ("severity", json!({ "enum": ["critical", "scored", "advisory"] })),
        ];
        fields.extend(def.own_settings().map(|s| (s.key, setting(s.kind))));
        let mut entry = object(&fields, &[]);
        entry["description"] = json!(def.label);
        checks.insert(def.id.to_string(), entry);
    }
    let packs: Vec<&str> = Pack::ALL.iter().map(|p| p.id()).collect();
    let top: Vec<(&str, Value)> = TOP_KEYS
        .iter()
        .map(|k| {
            let v = match *k {
                "server" => object(&server, &[]),
                "servers" => json!({
                    "type": "object",
                    "minProperties": 1,
                    "propertyNames": { "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$" },
                    "additionalProperties": object(&server, &[]),
                }),
                "packs" => json!({ "type": "array", "items": { "enum": packs }, "uniqueItems": true }),
                "tools" => object(&[("include", strings()), ("exclude", strings())], &[]),
                "classify" => json!({ "type": "object", "additionalProperties": object(&[
                    ("class", json!({ "enum": crate::classify::Class::ALL.map(crate::classify::Class::id) })),
                    ("param", string()),
                    ("writes", json!({ "type": "boolean" })),
                ], &["class"]) }),
                "checks" => json!({ "type": "object", "properties": checks, "additionalProperties": false }),
                "net" => object(&[("control_url", string())], &[]),
                "sql_tools" => json!({ "type": "array", "items": object(&[
                    ("tool", string()),
                    ("arg", string()),
                    ("role", json!({ "enum": ["reader", "writer", "unknown"] })),
                    ("shape", json!({ "enum": ["string", "array"] })),
                    ("args", json!({ "type": "object", "additionalProperties": { "type": ["string", "number", "boolean"] } })),
                ], &["tool", "arg"]) }),
                "upstream" => object(
                    &[
                        ("kind", json!({ "enum": ["http", null] })),
                        ("default_reply", reply()),
                        ("responses", json!({ "type": "array", "items": object(&[
                            ("id", string()),
                            ("match", object(&[("method", string()), ("path", string()), ("body", string()), ("header", json!({ "type": "object", "additionalProperties": { "type": "string" } }))], &[])),
                            ("reply", reply()),
                        ], &[]) })),
                    ],
                    &[],
                ),
                "scope" => object(
                    &[
                        ("tools", json!({ "type": "array", "items": object(&[("tool", string()), ("param", string())], &["tool", "param"]) })),
                        ("allow", strings()),
                        ("deny", strings()),
                        ("separator", json!({ "type": "string", "minLength": 1, "maxLength": 1 })),
                    ],
                    &[],
                ),
                "identities" => {
                    let env = json!({ "type": "string", "pattern": "^\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}$" });
                    object(&[("a", env.clone()), ("b", env)], &[])
                }
                "probes" => json!({ "type": "array", "items": probe() }),
                _ => json!({ "type": "integer", "minimum": 1, "maximum": 600 }),
            };
            (*k, v)
        })
        .collect();
    let mut schema = object(&top, &[]);
    // One server (server:) or several by name (servers:), never both.
    schema["oneOf"] = json!([{ "required": ["server"] }, { "required": ["servers"] }]);
    schema["$schema"] = json!(DRAFT);
    schema["$id"] = json!("https://sealmark.dev/schema/sealmark.yaml.json");
    schema["title"] = json!("sealmark.yaml");
    schema["description"] = json!(format!(
        "How sealmark starts a server and what it checks (methodology {}). Validation also checks what a schema cannot: placeholders, paths, regexes, tools the server declares.",
        crate::METHODOLOGY
    ));
    pretty(&schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_schemas_are_fresh() {
        crate::render::assert_fresh("site/schema/record.schema.json", &record_schema());
        crate::render::assert_fresh("site/schema/sealmark.schema.json", &config_schema());
        crate::render::assert_fresh("site/schema/combined.schema.json", &combined_schema());
    }

    /// The hand-written configuration page (site/configuration.md) names every key the
    /// validator accepts: a key added without its documentation fails here.
    #[test]
    fn the_configuration_page_documents_every_key() {
        let page =
            std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../site/configuration.md"))
                .expect("site/configuration.md");
        let schema: Value = serde_json::from_str(&config_schema()).unwrap();
        let mut missing = Vec::new();
        let mut walk = vec![(String::new(), &schema)];
        while let Some((at, node)) = walk.pop() {
            let Some(props) = node["properties"].as_object() else { continue };
            for (key, sub) in props {
                // Check ids are documented on their own pages, generated from the registry.
                if at == "checks" {
                    continue;
                }
                if !page.contains(&format!("`{key}`")) && !page.contains(&format!("{key}`")) {
                    missing.push(format!("{at}.{key}"));
                }
                walk.push((key.clone(), sub));
                walk.push((key.clone(), &sub["items"]));
            }
        }
        assert!(missing.is_empty(), "site/configuration.md does not mention {missing:?}");
    }

    #[test]
    fn sample_records_validate_against_the_record_schema() {
        let schema: Value = serde_json::from_str(&record_schema()).unwrap();
        let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
        for rec in [crate::sample::capped(), crate::sample::provisional()] {
            let doc = serde_json::to_value(&rec).unwrap();
            let errors: Vec<String> =
                validator.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{errors:#?}");
        }
    }

    #[test]
    fn a_combined_record_validates_against_its_schema() {
        let schema: Value = serde_json::from_str(&combined_schema()).unwrap();
        let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
        let entry = |name: &str, record| crate::combined::ServerEntry {
            name: name.into(),
            index: Some(0),
            record,
            error: None,
        };
        let c = crate::combined::Combined::new(
            Some("servers.yaml".into()),
            2,
            Some("1/2".into()),
            vec![entry("a", Some(crate::sample::capped())), entry("b", None)],
        );
        let doc = serde_json::to_value(&c).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }

    #[test]
    fn the_fixture_configs_validate_and_a_typo_does_not() {
        let schema: Value = serde_json::from_str(&config_schema()).unwrap();
        let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
        for name in ["server-a.yaml", "sql-good.yaml", "config/scoped-http.yaml"] {
            let text = std::fs::read_to_string(root.join(name)).unwrap();
            crate::config::parse(name, &text).unwrap_or_else(|e| panic!("{e}"));
            let doc: Value = serde_yaml_ng::from_str(&text).unwrap();
            let errors: Vec<String> =
                validator.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path())).collect();
            assert!(errors.is_empty(), "{name}: {errors:#?}");
        }
        let typo: Value = serde_yaml_ng::from_str("server: { comand: x }\n").unwrap();
        assert!(!validator.is_valid(&typo));
    }
}
