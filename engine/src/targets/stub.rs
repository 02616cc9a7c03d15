//! The upstream stub: an HTTP server on 127.0.0.1 that a server's backend is pointed at
//! through `{upstream}`. It records every request and answers from `upstream:`; it never
//! proxies and never contacts anything else.

use crate::upstream::{Recorded, Reply, UpstreamConfig};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::sync::{Arc, Mutex};

/// At most this much of a request body is kept.
const MAX_BODY: usize = 8 * 1024 * 1024;
/// At most this much of all bodies together is kept; later bodies are kept empty.
const MAX_BODIES: usize = 64 * 1024 * 1024;
/// At most this many requests are kept.
const MAX_RECORDED: usize = 10_000;

#[derive(Clone)]
struct Shared {
    config: Arc<UpstreamConfig>,
    log: Arc<Mutex<Log>>,
    /// A probe's scripted reply, answering every request while it is set.
    scripted: Arc<Mutex<Option<Reply>>>,
}

/// What the stub recorded, bounded in count and bytes.
#[derive(Default)]
struct Log {
    requests: Vec<Recorded>,
    body_bytes: usize,
}

pub struct Stub {
    pub port: u16,
    log: Arc<Mutex<Log>>,
    scripted: Arc<Mutex<Option<Reply>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Stub {
    pub async fn start(config: UpstreamConfig) -> std::io::Result<Stub> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let log = Arc::new(Mutex::new(Log::default()));
        let scripted = Arc::new(Mutex::new(None));
        let shared = Shared { config: Arc::new(config), log: log.clone(), scripted: scripted.clone() };
        let app = axum::Router::new().fallback(answer).with_state(shared);
        let task = tokio::spawn(async move {
            // Small replies go out at once instead of waiting for the client's delayed ACK.
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let _ = axum::serve(listener, app).await;
        });
        Ok(Stub { port, log, scripted, task })
    }

    /// `{upstream}`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// How many requests were recorded.
    pub fn count(&self) -> usize {
        self.log.lock().expect("stub log").requests.len()
    }

    /// Everything recorded so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.since(0)
    }

    /// Answers every request with `reply` until it is set back to `None`.
    pub fn script(&self, reply: Option<Reply>) {
        *self.scripted.lock().expect("stub script") = reply;
    }

    /// What was recorded from the `from`th request on.
    pub fn since(&self, from: usize) -> Vec<Recorded> {
        self.log.lock().expect("stub log").requests.iter().skip(from).cloned().collect()
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(State(shared): State<Shared>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let mut recorded = Recorded {
        method: method.to_string(),
        path: uri.path().to_string(),
        query: uri.query().unwrap_or_default().to_string(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_ascii_lowercase(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
            .collect(),
        body: String::from_utf8_lossy(&body[..body.len().min(MAX_BODY)]).into_owned(),
    };
    let scripted = shared.scripted.lock().expect("stub script").clone();
    let reply = scripted.unwrap_or_else(|| shared.config.reply_for(&recorded).clone());
    {
        let mut log = shared.log.lock().expect("stub log");
        if log.body_bytes + recorded.body.len() > MAX_BODIES {
            recorded.body.clear();
        }
        if log.requests.len() < MAX_RECORDED {
            log.body_bytes += recorded.body.len();
            log.requests.push(recorded);
        }
    }
    let (bytes, content_type) = reply.render();
    let mut response = (StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK), bytes).into_response();
    let h = response.headers_mut();
    if let Ok(v) = content_type.parse() {
        h.insert("content-type", v);
    }
    for (k, v) in &reply.headers {
        if let (Ok(name), Ok(value)) = (k.parse::<axum::http::HeaderName>(), v.parse()) {
            h.insert(name, value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::{Body, Matcher, Reply, Scripted};

    /// The stub records what a client sent and answers the first matching entry.
    #[tokio::test]
    async fn records_and_answers_over_real_http() {
        let config = UpstreamConfig {
            kind: Some("http".into()),
            default_reply: Reply::default(),
            responses: vec![Scripted {
                id: None,
                matcher: Matcher { path: Some(regex::Regex::new("^/sql$").unwrap()), ..Default::default() },
                reply: Reply {
                    status: 201,
                    headers: [("x-stub".to_string(), "yes".to_string())].into(),
                    body: Body::Text("counted".into()),
                },
            }],
        };
        let stub = Stub::start(config).await.unwrap();
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let r = client
            .post(format!("{}/sql?x=1", stub.url()))
            .header("authorization", "Bearer t")
            .body("SELECT 1")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 201);
        assert_eq!(r.headers()["x-stub"], "yes");
        assert_eq!(r.text().await.unwrap(), "counted");
        let other = client.get(format!("{}/other", stub.url())).send().await.unwrap();
        assert_eq!(other.status().as_u16(), 200);
        let seen = stub.requests();
        assert_eq!(seen.len(), 2);
        assert_eq!(
            (seen[0].method.as_str(), seen[0].path.as_str(), seen[0].query.as_str(), seen[0].body.as_str()),
            ("POST", "/sql", "x=1", "SELECT 1")
        );
        assert!(seen[0].headers.iter().any(|(k, v)| k == "authorization" && v == "Bearer t"));
    }
}
