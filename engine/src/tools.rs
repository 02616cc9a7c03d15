//! A listed tool, read leniently from whatever JSON the server sent.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The parts of a tool definition the harness uses.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    /// Declared parameters in schema order: name and JSON type (`string`, `any`, …).
    pub params: Vec<(String, String)>,
    pub required: Vec<String>,
    pub annotations: BTreeMap<String, Value>,
    pub raw: Value,
}

impl ToolInfo {
    pub fn from_value(raw: &Value) -> ToolInfo {
        let str_of = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
        let schema = raw.get("inputSchema");
        let params = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|props| props.iter().map(|(k, v)| (k.clone(), json_type(v))).collect())
            .unwrap_or_default();
        let required = schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        let annotations = raw
            .get("annotations")
            .and_then(Value::as_object)
            .map(|a| a.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        ToolInfo {
            name: str_of(raw.get("name")),
            description: str_of(raw.get("description")),
            params,
            required,
            annotations,
            raw: raw.clone(),
        }
    }

    pub fn hint(&self, key: &str) -> Option<bool> {
        self.annotations.get(key).and_then(Value::as_bool)
    }

    /// The schema of one declared parameter.
    pub fn param_schema(&self, name: &str) -> Option<&Value> {
        self.raw.get("inputSchema")?.get("properties")?.get(name)
    }

    pub fn param_type(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, t)| t.as_str())
    }

    pub fn surface(&self) -> ToolSurface {
        let schema = self.raw.get("inputSchema").cloned().unwrap_or(Value::Null);
        ToolSurface {
            name: self.name.clone(),
            description_hash: sha256_tagged(self.description.as_bytes()),
            description_length: self.description.chars().count(),
            input_schema_hash: sha256_tagged(canonical_json(&schema).as_bytes()),
            required: self.required.clone(),
            params: self.params.iter().cloned().collect(),
            annotations: self.annotations.clone(),
        }
    }
}

/// The JSON type a property schema declares, or `any`.
fn json_type(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => {
            ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("any").to_string()
        }
        _ => "any".to_string(),
    }
}

/// `sha256:<hex>` of some bytes.
pub fn sha256_tagged(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::from("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// JSON with object keys sorted at every level, so equal values hash equally.
pub fn canonical_json(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let sorted: BTreeMap<&String, Value> = m.iter().map(|(k, v)| (k, sort(v))).collect();
                Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// A tool as listed, reduced to what drift detection compares.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolSurface {
    pub name: String,
    pub description_hash: String,
    pub description_length: usize,
    pub input_schema_hash: String,
    pub required: Vec<String>,
    pub params: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, Value>,
}
