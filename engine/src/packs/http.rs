//! Collects what the http pack judges: one raw request per defence (so each is tested
//! on its own, not through a client library's habits), and the server's listening
//! sockets from the process table.

use crate::children::marked_pids;
use crate::judge::http::{Exchange, FOREIGN_ORIGINS, HttpObservations, TlsObs, on_loopback};
use crate::text::clip;
use regex::Regex;
use reqwest::Method;
use std::collections::BTreeSet;
use std::sync::LazyLock;
use std::time::Duration;

/// The protocol version the probes speak.
const VERSION: &str = "2025-06-18";
/// Response headers the judges read.
const KEPT: [&str; 4] =
    ["access-control-allow-origin", "access-control-allow-credentials", "www-authenticate", "mcp-session-id"];
/// Configured headers that carry a credential.
static CREDENTIAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("(?i)^authorization$|api[-_]?key|token|secret|cookie|auth").expect("valid"));

fn initialize() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{VERSION}","capabilities":{{}},"clientInfo":{{"name":"sealmark-http-pack","version":"{}"}}}}}}"#,
        crate::VERSION
    )
}
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

/// After this many requests went unanswered, the rest are not sent: a server that
/// hangs costs a bounded wait, not one timeout per probe.
const MAX_UNANSWERED: u32 = 2;

struct Prober {
    client: reqwest::Client,
    url: String,
    /// The configured headers, expanded (caller a's credential).
    headers: Vec<(String, String)>,
    unanswered: std::cell::Cell<u32>,
}

impl Prober {
    /// One request: the configured headers minus `drop`, plus `extra`.
    async fn send(
        &self,
        probe: &str,
        method: Method,
        body: Option<&str>,
        drop: &[&str],
        extra: &[(&str, &str)],
    ) -> Exchange {
        if self.unanswered.get() >= MAX_UNANSWERED {
            let why = format!("not sent: {MAX_UNANSWERED} earlier requests went unanswered");
            return Exchange { probe: probe.to_string(), status: Err(why), headers: Default::default() };
        }
        let mut req = self.client.request(method, &self.url);
        for (k, v) in self.headers.iter().filter(|(k, _)| !drop.iter().any(|d| d.eq_ignore_ascii_case(k))) {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(b.to_string());
        }
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        // Status and headers are the evidence; the body (often an open event stream) is dropped.
        match req.send().await {
            Ok(resp) => Exchange {
                probe: probe.to_string(),
                status: Ok(resp.status().as_u16()),
                headers: KEPT
                    .iter()
                    .filter_map(|h| Some((h.to_string(), clip(resp.headers().get(*h)?.to_str().ok()?, 200))))
                    .collect(),
            },
            Err(e) => {
                self.unanswered.set(self.unanswered.get() + u32::from(e.is_timeout()));
                let why = if e.is_timeout() { "no answer within the probe timeout".to_string() } else { e.to_string() };
                Exchange { probe: probe.to_string(), status: Err(why), headers: Default::default() }
            }
        }
    }
}

/// Runs the http pack's requests against `url`; `run_id` is set when sealmark started
/// the server, so its sockets can be read.
pub async fn collect(
    url: &str,
    headers: Vec<(String, String)>,
    configured: &[String],
    timeout: Duration,
    run_id: Option<&str>,
) -> HttpObservations {
    let built =
        reqwest::Client::builder().no_proxy().redirect(reqwest::redirect::Policy::none()).timeout(timeout).build();
    // Without a client (a broken root store, say) nothing is sent and every check says so.
    let Ok(client) = built else { return HttpObservations::default() };
    let p = Prober { client, url: url.to_string(), headers, unanswered: Default::default() };
    let credentials: Vec<String> = configured.iter().filter(|h| CREDENTIAL.is_match(h)).cloned().collect();
    let mut obs = HttpObservations { credential_headers: credentials.clone(), ..Default::default() };
    let init = initialize();
    let control = p.send("control: initialize, no Origin", Method::POST, Some(&init), &[], &[]).await;
    let session = control.header("mcp-session-id").map(str::to_string);
    obs.session_issued = session.is_some();
    let in_session = |id: &str| vec![("mcp-session-id", id.to_string()), ("mcp-protocol-version", VERSION.to_string())];
    if let Some(id) = &session {
        let h = in_session(id);
        let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
        p.send("initialized", Method::POST, Some(INITIALIZED), &[], &h).await;
    }
    obs.control = Some(control);
    for origin in FOREIGN_ORIGINS {
        obs.origins
            .push(p.send(&format!("Origin: {origin}"), Method::POST, Some(&init), &[], &[("origin", origin)]).await);
    }
    if !credentials.is_empty() {
        let names: Vec<&str> = credentials.iter().map(String::as_str).collect();
        obs.no_credential = Some(p.send("no credential", Method::POST, Some(&init), &names, &[]).await);
        let made_up = format!("sm-invalid-{}", crate::targets::sandbox::random_hex(8));
        let wrong: Vec<(String, String)> = p
            .headers
            .iter()
            .filter(|(k, _)| names.iter().any(|n| n.eq_ignore_ascii_case(k)))
            .map(|(k, v)| {
                (k.clone(), if v.starts_with("Bearer ") { format!("Bearer {made_up}") } else { made_up.clone() })
            })
            .collect();
        let wrong: Vec<(&str, &str)> = wrong.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        obs.bad_credential = Some(p.send("a made-up credential", Method::POST, Some(&init), &names, &wrong).await);
    }
    let id = session.clone().unwrap_or_default();
    let with_version = |version: &'static str| {
        let mut h = vec![("mcp-protocol-version", version)];
        if session.is_some() {
            h.push(("mcp-session-id", id.as_str()));
        }
        h
    };
    obs.version_control = Some(
        p.send(
            &format!("tools/list, MCP-Protocol-Version: {VERSION}"),
            Method::POST,
            Some(LIST),
            &[],
            &with_version(VERSION),
        )
        .await,
    );
    obs.bad_version = Some(
        p.send(
            "tools/list, MCP-Protocol-Version: 1999-01-01",
            Method::POST,
            Some(LIST),
            &[],
            &with_version("1999-01-01"),
        )
        .await,
    );
    if session.is_some() {
        let unknown = format!("sm-unknown-{}", crate::targets::sandbox::random_hex(8));
        let h = [("mcp-session-id", unknown.as_str()), ("mcp-protocol-version", VERSION)];
        obs.unknown_session =
            Some(p.send("tools/list, an Mcp-Session-Id never issued", Method::POST, Some(LIST), &[], &h).await);
        let h = [("mcp-session-id", id.as_str()), ("mcp-protocol-version", VERSION)];
        let delete = p.send("DELETE the session", Method::DELETE, None, &[], &h).await;
        if delete.status.as_ref().is_ok_and(|s| (200..300).contains(s)) {
            obs.after_delete =
                Some(p.send("tools/list, the ended session's id", Method::POST, Some(LIST), &[], &h).await);
        }
        obs.delete = Some(delete);
    }
    // Sessions a probe should never have opened are ended again, as a client would.
    let strays: Vec<String> = obs
        .origins
        .iter()
        .chain(&obs.no_credential)
        .chain(&obs.bad_credential)
        .filter_map(|e| e.header("mcp-session-id").map(str::to_string))
        .collect();
    for stray in strays {
        p.send("DELETE a probe's session", Method::DELETE, None, &[], &[("mcp-session-id", stray.as_str())]).await;
    }
    // A browser's preflight carries no credential.
    let all: Vec<&str> = p.headers.iter().map(|(k, _)| k.as_str()).collect();
    let preflight = [
        ("origin", FOREIGN_ORIGINS[0]),
        ("access-control-request-method", "POST"),
        ("access-control-request-headers", "content-type, authorization, mcp-session-id"),
    ];
    obs.preflight =
        Some(p.send("OPTIONS preflight from a foreign Origin", Method::OPTIONS, None, &all, &preflight).await);
    obs.sockets = run_id.map(listening);
    obs.tls = transport_security(url, timeout).await;
    obs
}

/// Where the URL leads and, for https, whether TLS is really spoken there.
async fn transport_security(url: &str, timeout: Duration) -> Option<TlsObs> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let host = parsed.host_str()?.to_string();
    let port = parsed.port_or_known_default().unwrap_or(80);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => Ok(on_loopback(&std::net::SocketAddr::new(ip, port).to_string())),
        Err(_) => match tokio::time::timeout(timeout, tokio::net::lookup_host((bare, port))).await {
            Ok(Ok(addrs)) => {
                let addrs: Vec<String> = addrs.map(|a| a.to_string()).collect();
                if addrs.is_empty() { Err("no address".to_string()) } else { Ok(addrs.iter().all(|a| on_loopback(a))) }
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("name resolution timed out".to_string()),
        },
    };
    let handshake = if parsed.scheme() == "https" && loopback == Ok(false) {
        let client = |check: bool| {
            reqwest::Client::builder().no_proxy().timeout(timeout).danger_accept_invalid_certs(!check).build()
        };
        Some(match (client(false), client(true)) {
            (Ok(any), Ok(verifying)) => match any.get(url).send().await {
                Ok(_) => Ok(verifying.get(url).send().await.is_ok()),
                Err(e) => Err(clip(&e.to_string(), 200)),
            },
            (Err(e), _) | (_, Err(e)) => Err(format!("no TLS client: {e}")),
        })
    } else {
        None
    };
    Some(TlsObs { scheme: parsed.scheme().to_string(), host, loopback, handshake })
}

/// The listening TCP addresses of every process carrying the run's marker.
fn listening(run_id: &str) -> Result<Vec<String>, String> {
    if !crate::children::PROCESS_TABLE {
        return Err("the server's listening sockets are read from /proc, which this OS lacks".to_string());
    }
    let pids = marked_pids(run_id);
    let Some(first) = pids.first() else { return Err("no process of the server is alive".to_string()) };
    let mut inodes = BTreeSet::new();
    for pid in &pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
        for fd in fds.flatten() {
            if let Some(inode) = std::fs::read_link(fd.path())
                .ok()
                .and_then(|l| l.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse::<u64>().ok())
            {
                inodes.insert(inode);
            }
        }
    }
    let mut out = BTreeSet::new();
    for (table, v6) in [("tcp", false), ("tcp6", true)] {
        let text =
            std::fs::read_to_string(format!("/proc/{first}/net/{table}")).map_err(|e| format!("{table}: {e}"))?;
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local address, state (0A = LISTEN), inode.
            let (Some(local), Some("0A"), Some(inode)) = (f.get(1), f.get(3).copied(), f.get(9)) else { continue };
            if inode.parse::<u64>().is_ok_and(|i| inodes.contains(&i))
                && let Some(addr) = decode(local, v6)
            {
                out.insert(addr);
            }
        }
    }
    Ok(out.into_iter().collect())
}

/// `0100007F:1F90` → `127.0.0.1:8080`; IPv6 as four little-endian words.
fn decode(hex: &str, v6: bool) -> Option<String> {
    let (ip, port) = hex.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |s: &str| u32::from_str_radix(s, 16).ok().map(u32::swap_bytes);
    if v6 {
        let words: Option<Vec<u32>> = (0..4).map(|i| ip.get(i * 8..i * 8 + 8).and_then(word)).collect();
        let bytes: Vec<u8> = words?.iter().flat_map(|w| w.to_be_bytes()).collect();
        let ip = std::net::Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?);
        Some(format!("[{ip}]:{port}"))
    } else {
        Some(format!("{}:{port}", std::net::Ipv4Addr::from(word(ip)?)))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn proc_net_addresses_decode() {
        assert_eq!(super::decode("0100007F:1F90", false).as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(super::decode("00000000:0050", false).as_deref(), Some("0.0.0.0:80"));
        assert_eq!(super::decode("00000000000000000000000001000000:1F90", true).as_deref(), Some("[::1]:8080"));
        assert_eq!(super::decode("00000000000000000000000000000000:0016", true).as_deref(), Some("[::]:22"));
    }
}
