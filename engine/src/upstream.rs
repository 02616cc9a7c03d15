//! The upstream stub's configuration (`upstream:` in sealmark.yaml) and the pure
//! matching of a recorded request against it. The stub itself is in `run::upstream`.

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;

/// `upstream:` as written.
#[derive(Debug, Clone, Default)]
pub struct UpstreamConfig {
    /// `http` starts the stub; `None` (or `null`) starts none.
    pub kind: Option<String>,
    pub default_reply: Reply,
    pub responses: Vec<Scripted>,
}

/// One `upstream.responses` entry.
#[derive(Debug, Clone)]
pub struct Scripted {
    pub id: Option<String>,
    pub matcher: Matcher,
    pub reply: Reply,
}

/// When a scripted reply applies: every given part must match.
#[derive(Debug, Clone, Default)]
pub struct Matcher {
    pub method: Option<String>,
    pub path: Option<Regex>,
    pub body: Option<Regex>,
    pub header: BTreeMap<String, Regex>,
}

/// What the stub answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Body,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Text(String),
    Json(Value),
    /// `bytes`: a body padded to this many bytes (starting with `body` when given).
    Padded {
        size: usize,
        start: String,
    },
}

impl Default for Reply {
    fn default() -> Self {
        Reply { status: 200, headers: BTreeMap::new(), body: Body::Json(serde_json::json!({})) }
    }
}

impl Reply {
    /// The bytes of the body and its content type.
    pub fn render(&self) -> (Vec<u8>, &'static str) {
        match &self.body {
            Body::Text(t) => (t.clone().into_bytes(), "text/plain"),
            Body::Json(v) => (v.to_string().into_bytes(), "application/json"),
            Body::Padded { size, start } => {
                let mut b = start.clone().into_bytes();
                b.resize((*size).max(b.len()), b' ');
                (b, "application/octet-stream")
            }
        }
    }
}

/// One request the stub received.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl UpstreamConfig {
    /// The reply for a request: the first scripted entry whose matcher holds, else the default.
    pub fn reply_for(&self, req: &Recorded) -> &Reply {
        self.responses.iter().find(|s| s.matcher.holds(req)).map_or(&self.default_reply, |s| &s.reply)
    }
}

impl Matcher {
    pub fn holds(&self, req: &Recorded) -> bool {
        self.method.as_ref().is_none_or(|m| m.eq_ignore_ascii_case(&req.method))
            && self.path.as_ref().is_none_or(|re| re.is_match(&req.path))
            && self.body.as_ref().is_none_or(|re| re.is_match(&req.body))
            && self
                .header
                .iter()
                .all(|(name, re)| req.headers.iter().any(|(k, v)| k.eq_ignore_ascii_case(name) && re.is_match(v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(path: &str, body: &str) -> Recorded {
        Recorded {
            method: "POST".into(),
            path: path.into(),
            query: String::new(),
            headers: vec![("authorization".into(), "Bearer x".into())],
            body: body.into(),
        }
    }

    #[test]
    fn the_first_matching_entry_answers_else_the_default() {
        let count = Reply {
            status: 200,
            headers: BTreeMap::new(),
            body: Body::Json(serde_json::json!({"rows": [{"count": 3}]})),
        };
        let cfg = UpstreamConfig {
            kind: Some("http".into()),
            default_reply: Reply::default(),
            responses: vec![Scripted {
                id: Some("count".into()),
                matcher: Matcher {
                    path: Some(Regex::new("^/sql$").unwrap()),
                    body: Some(Regex::new(r"count\(\*\)").unwrap()),
                    header: [("Authorization".to_string(), Regex::new("^Bearer ").unwrap())].into(),
                    ..Default::default()
                },
                reply: count.clone(),
            }],
        };
        assert_eq!(cfg.reply_for(&req("/sql", "SELECT count(*) FROM t")), &count);
        assert_eq!(cfg.reply_for(&req("/sql", "SELECT 1")), &Reply::default());
        assert_eq!(cfg.reply_for(&req("/other", "count(*)")), &Reply::default());
    }

    #[test]
    fn padded_bodies_have_the_size_asked_for() {
        let r = Reply {
            status: 200,
            headers: BTreeMap::new(),
            body: Body::Padded { size: 1000, start: "{\"rows\":[]}".into() },
        };
        let (bytes, _) = r.render();
        assert_eq!(bytes.len(), 1000);
        assert!(bytes.starts_with(b"{\"rows\":[]}"));
    }
}
