//! Parameters learned from the server itself, for tools whose published schema declares
//! none (a known breakage: servers built with zod 4 publish only `$schema` while their
//! code still validates `path`). The handshake check reports the schema as it is; this
//! lets the packs still aim the tools that their names and descriptions place.

use crate::classify::{Class, Classification};
use crate::classify::{class_params, params_in_error, schema_is_empty};
use crate::judge::Answer;
use crate::session::runner::{Live, Runner};
use crate::tools::ToolInfo;
use regex::Regex;
use serde_json::json;
use std::sync::LazyLock;

/// For each placed tool with an empty schema: a `{}` call, whose validation error names
/// the parameters the code expects (or, failing that, the description does). The tool
/// then takes them as required, its class the one its class aims, at low confidence.
pub async fn params(runner: &mut Runner<'_>, live: &mut Live, tools: &mut [ToolInfo], classes: &mut [Classification]) {
    for (tool, class) in tools.iter_mut().zip(classes.iter_mut()) {
        if class.class == Class::Other || !schema_is_empty(tool) {
            continue;
        }
        let what = format!("learn on {}", tool.name);
        let answer = super::call::call_answer(runner.call_tool(live, &tool.name, json!({}), &what, true).await);
        let text = match &answer {
            Answer::Success { text } | Answer::ToolError { text } => text.clone(),
            Answer::RpcError { message, .. } => message.clone(),
            _ => String::new(),
        };
        let (mut learned, from) = (params_in_error(&text), "its validation error to a {} call");
        let from = if learned.is_empty() {
            learned = params_in_description(&tool.description);
            "its description"
        } else {
            from
        };
        if learned.is_empty() {
            runner.gaps.push(format!(
                "{}: its inputSchema declares no parameters and neither a {{}} call ({}) nor its description names one; not probed",
                tool.name,
                answer.brief()
            ));
            continue;
        }
        let wanted = class_params(class.class);
        let param = class
            .param
            .clone()
            .or_else(|| {
                wanted
                    .iter()
                    .find_map(|w| learned.iter().find(|(n, _)| n.eq_ignore_ascii_case(w)).map(|(n, _)| n.clone()))
            })
            .unwrap_or_else(|| learned[0].0.clone());
        let names: Vec<&str> = learned.iter().map(|(n, _)| n.as_str()).collect();
        class.reason.push_str(&format!("; parameters {} learned from {from}", names.join(", ")));
        if class.confidence != "declared" {
            class.confidence = "low".to_string();
        }
        class.param = Some(param);
        tool.required = learned.iter().map(|(n, _)| n.clone()).collect();
        tool.params = learned;
    }
}

/// Parameter names a description writes as code: `path`, `content`.
fn params_in_description(description: &str) -> Vec<(String, String)> {
    static CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([A-Za-z_][A-Za-z0-9_]*)`").expect("valid"));
    let mut out: Vec<(String, String)> = Vec::new();
    for c in CODE.captures_iter(description) {
        if !out.iter().any(|(n, _)| n == &c[1]) {
            out.push((c[1].to_string(), "string".to_string()));
        }
    }
    out
}
