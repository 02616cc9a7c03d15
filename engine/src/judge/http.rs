//! The http pack's judges: an HTTP server's own transport defences, each tested with a
//! raw request of its own (status and headers are the evidence), and its listening
//! sockets read from the process table.

use super::Finding;
use crate::model::{Evidence, Verdict, VerifiedBy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The Origins a DNS-rebinding page could send; none is the harness's or the server's.
pub const FOREIGN_ORIGINS: [&str; 3] = ["http://sm-rebind.invalid", "null", "http://127.0.0.1.sm-rebind.invalid"];

/// One raw HTTP exchange: what was sent, and the status and headers that came back.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Exchange {
    pub probe: String,
    /// The status, or why there was none.
    pub status: Result<u16, String>,
    /// Response headers that matter here, lower-case names.
    pub headers: BTreeMap<String, String>,
}

impl Exchange {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    fn ok(&self) -> bool {
        self.status.as_ref().is_ok_and(|s| (200..300).contains(s))
    }

    fn code(&self) -> Option<u16> {
        self.status.as_ref().ok().copied()
    }

    /// `HTTP 403`, or `no answer: …`.
    pub fn shown(&self) -> String {
        match &self.status {
            Ok(s) => format!("HTTP {s}"),
            Err(why) => format!("no answer: {why}"),
        }
    }

    fn evidence(&self, outcome: String) -> Evidence {
        Evidence::new(self.probe.clone(), outcome, VerifiedBy::Response)
    }
}

/// What the URL says about transport security.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TlsObs {
    pub scheme: String,
    pub host: String,
    /// Whether every address the host resolves to is loopback, or why that is unknown.
    pub loopback: Result<bool, String>,
    /// For https: whether a TLS handshake completed, and then whether the certificate is
    /// trusted by this machine's roots.
    pub handshake: Option<Result<bool, String>>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpObservations {
    pub tls: Option<TlsObs>,
    /// Names of the configured headers that carry a credential.
    pub credential_headers: Vec<String>,
    pub control: Option<Exchange>,
    pub origins: Vec<Exchange>,
    pub no_credential: Option<Exchange>,
    pub bad_credential: Option<Exchange>,
    pub version_control: Option<Exchange>,
    pub bad_version: Option<Exchange>,
    /// Whether initialize answered with an Mcp-Session-Id.
    pub session_issued: bool,
    pub unknown_session: Option<Exchange>,
    pub delete: Option<Exchange>,
    pub after_delete: Option<Exchange>,
    pub preflight: Option<Exchange>,
    /// The server's listening sockets; `None` when the harness did not start it.
    pub sockets: Option<Result<Vec<String>, String>>,
}

/// A control that was not accepted makes refusals meaningless.
fn control_failed(control: Option<&Exchange>, what: &str) -> Option<Finding> {
    match control {
        Some(c) if c.ok() => None,
        Some(c) => Some(Finding::new(
            Verdict::Inconclusive,
            format!("{what} was not accepted ({}), so a refusal proves nothing", c.shown()),
            vec![c.evidence(format!("control: {}", c.shown()))],
        )),
        None => Some(Finding::new(Verdict::Inconclusive, format!("{what} could not be sent"), vec![])),
    }
}

/// How a refusal compares with the one the spec asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Refusal {
    Right,
    Other,
    NoAnswer,
    Accepted,
}

fn refusal(e: &Exchange, right: impl Fn(&Exchange) -> bool) -> Refusal {
    match e.code() {
        None => Refusal::NoAnswer,
        Some(s) if (200..300).contains(&s) => Refusal::Accepted,
        _ if right(e) => Refusal::Right,
        _ => Refusal::Other,
    }
}

/// The verdict of a set of refusals: any acceptance fails; all as specified pass.
fn refusals(probes: &[&Exchange], right: impl Fn(&Exchange) -> bool, want: &str, ok_word: &str) -> Finding {
    let judged: Vec<(Refusal, &&Exchange)> = probes.iter().map(|e| (refusal(e, &right), e)).collect();
    let worst = judged.iter().map(|(r, _)| *r).max().unwrap_or(Refusal::NoAnswer);
    let evidence = judged
        .iter()
        .map(|(r, e)| {
            let what = match r {
                Refusal::Right => format!("{}: {ok_word}", e.shown()),
                Refusal::Other => format!("{}: refused, but not as the spec asks ({want})", e.shown()),
                Refusal::NoAnswer => e.shown(),
                Refusal::Accepted => format!("{}: accepted", e.shown()),
            };
            let ev = e.evidence(what);
            if *r == Refusal::Accepted { ev.code("accepted") } else { ev }
        })
        .collect::<Vec<_>>();
    let first = |r: Refusal| judged.iter().find(|(x, _)| *x == r).map(|(_, e)| e.probe.clone()).unwrap_or_default();
    match worst {
        Refusal::Accepted => Finding::new(Verdict::Fail, format!("accepted: {}", first(Refusal::Accepted)), evidence),
        Refusal::NoAnswer => {
            Finding::new(Verdict::Inconclusive, format!("no answer to {}", first(Refusal::NoAnswer)), evidence)
        }
        Refusal::Other => {
            Finding::new(Verdict::Part, format!("refused, but not with {want}: {}", first(Refusal::Other)), evidence)
        }
        Refusal::Right => {
            Finding::new(Verdict::Pass, format!("{} request(s) refused with {want}", judged.len()), evidence)
        }
    }
}

/// `http-origin`: a present foreign Origin gets 403; no Origin is served.
pub fn origin(obs: &HttpObservations) -> Finding {
    if let Some(f) = control_failed(obs.control.as_ref(), "initialize without an Origin") {
        return f;
    }
    let probes: Vec<&Exchange> = obs.origins.iter().collect();
    refusals(&probes, |e| e.code() == Some(403), "403", "refused")
}

/// `http-auth-required`: without the credential, or with a wrong one, 401 and a challenge.
pub fn auth_required(obs: &HttpObservations) -> Finding {
    if obs.credential_headers.is_empty() {
        return Finding::new(
            Verdict::Na,
            "the server config sends no credential header, so there is none to require",
            vec![],
        );
    }
    if let Some(f) = control_failed(obs.control.as_ref(), "initialize with the configured credential") {
        return f;
    }
    let probes: Vec<&Exchange> = [&obs.no_credential, &obs.bad_credential].into_iter().flatten().collect();
    refusals(
        &probes,
        |e| e.code() == Some(401) && e.header("www-authenticate").is_some(),
        "401 with WWW-Authenticate",
        "refused with a challenge",
    )
}

/// `http-protocol-version`: an unsupported MCP-Protocol-Version gets 400.
pub fn protocol_version(obs: &HttpObservations) -> Finding {
    if let Some(f) = control_failed(obs.version_control.as_ref(), "a request with a supported MCP-Protocol-Version") {
        return f;
    }
    let probes: Vec<&Exchange> = obs.bad_version.iter().collect();
    refusals(&probes, |e| e.code() == Some(400), "400", "refused")
}

/// `http-session`: an unknown or ended session id gets 404.
pub fn session(obs: &HttpObservations) -> Finding {
    if !obs.session_issued {
        return Finding::new(Verdict::Na, "initialize issued no Mcp-Session-Id: the server keeps no sessions", vec![]);
    }
    if let Some(f) = control_failed(obs.version_control.as_ref(), "a request in the session") {
        return f;
    }
    let mut probes: Vec<&Exchange> = obs.unknown_session.iter().collect();
    let mut notes = Vec::new();
    match &obs.delete {
        Some(d) if d.ok() => probes.extend(obs.after_delete.iter()),
        Some(d) if d.code() == Some(405) => {
            notes.push(d.evidence("HTTP 405: clients may not end sessions here, so no ended session was tried".into()))
        }
        Some(d) => notes.push(d.evidence(format!("{}: the session could not be ended", d.shown()))),
        None => {}
    }
    let mut f = refusals(&probes, |e| e.code() == Some(404), "404", "refused");
    f.evidence.extend(notes);
    f
}

/// `http-cors`: no answer allows a foreign Origin, by reflecting it or by a wildcard
/// on a server that takes credentials.
pub fn cors(obs: &HttpObservations) -> Finding {
    let credentialed = !obs.credential_headers.is_empty();
    let answers: Vec<&Exchange> =
        obs.preflight.iter().chain(&obs.origins).chain(&obs.control).filter(|e| e.status.is_ok()).collect();
    if answers.is_empty() {
        return Finding::new(Verdict::Inconclusive, "no request with an Origin was answered", vec![]);
    }
    let mut worst = Verdict::Pass;
    let mut evidence = Vec::new();
    for e in &answers {
        let Some(acao) = e.header("access-control-allow-origin") else { continue };
        let with_credentials = e.header("access-control-allow-credentials") == Some("true");
        let (verdict, why) = if FOREIGN_ORIGINS.contains(&acao) {
            (Verdict::Fail, format!("allows the foreign Origin it was sent ({acao}): reflected"))
        } else if acao == "*" && (credentialed || with_credentials) {
            (Verdict::Fail, "allows every Origin (*) on a server that takes credentials".to_string())
        } else if acao == "*" {
            (Verdict::Part, "allows every Origin (*)".to_string())
        } else {
            continue;
        };
        worst = if verdict == Verdict::Fail || worst == Verdict::Fail { Verdict::Fail } else { Verdict::Part };
        let creds = if with_credentials { ", with Access-Control-Allow-Credentials: true" } else { "" };
        evidence.push(e.evidence(format!("{}: {why}{creds}", e.shown())).code("cors-allows-foreign"));
    }
    match worst {
        Verdict::Pass => {
            evidence.extend(
                answers.iter().map(|e| e.evidence(format!("{}: no Access-Control-Allow-Origin for it", e.shown()))),
            );
            Finding::new(Verdict::Pass, format!("{} answer(s) allow no foreign Origin", answers.len()), evidence)
        }
        v => {
            let first = evidence[0].outcome.clone();
            Finding::new(v, first, evidence)
        }
    }
}

/// `http-tls`: a URL that leaves the machine uses TLS.
pub fn tls(obs: &HttpObservations) -> Finding {
    let Some(t) = &obs.tls else { return Finding::new(Verdict::Inconclusive, "the URL could not be read", vec![]) };
    let ev = |outcome: String| Evidence::new(format!("{}://{}", t.scheme, t.host), outcome, VerifiedBy::Response);
    match (&t.loopback, t.scheme.as_str(), &t.handshake) {
        (Err(why), ..) => {
            Finding::new(Verdict::Inconclusive, format!("{} could not be resolved: {why}", t.host), vec![])
        }
        (Ok(true), ..) => Finding::new(
            Verdict::Na,
            format!("{} is loopback: the traffic never leaves this machine", t.host),
            vec![ev("every address is loopback".to_string())],
        ),
        (Ok(false), "https", Some(Ok(trusted))) => {
            let trust =
                if *trusted { "trusted by this machine's roots" } else { "not trusted by this machine's roots" };
            Finding::new(
                Verdict::Pass,
                format!("TLS to {} (the certificate is {trust})", t.host),
                vec![ev(format!("a TLS handshake completed; the certificate is {trust}"))],
            )
        }
        (Ok(false), "https", Some(Err(why))) => Finding::new(
            Verdict::Inconclusive,
            format!("no TLS handshake with {} completed: {why}", t.host),
            vec![ev(why.clone())],
        ),
        _ => Finding::new(
            Verdict::Fail,
            format!(
                "plain {} to {}, which is not loopback: credentials and tool traffic cross the network unencrypted",
                t.scheme, t.host
            ),
            vec![ev("not loopback, and no TLS".to_string()).code("plain-http-beyond-loopback")],
        ),
    }
}

/// Whether a listening address (`127.0.0.1:8080`, `[::1]:8080`) is on loopback.
pub fn on_loopback(addr: &str) -> bool {
    addr.parse::<std::net::SocketAddr>().is_ok_and(|a| match a.ip() {
        std::net::IpAddr::V4(ip) => ip.is_loopback(),
        std::net::IpAddr::V6(ip) => ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    })
}

/// `http-bind`: every listening socket of the server is on loopback.
pub fn bind(obs: &HttpObservations) -> Finding {
    let sockets = match &obs.sockets {
        None => {
            return Finding::new(
                Verdict::Na,
                "sealmark did not start the server (no server.command), so it cannot read its sockets",
                vec![],
            );
        }
        Some(Err(why)) => {
            return Finding::new(Verdict::Inconclusive, format!("the sockets could not be read: {why}"), vec![]);
        }
        Some(Ok(s)) if s.is_empty() => {
            return Finding::new(
                Verdict::Inconclusive,
                "no listening TCP socket was found among the server's processes",
                vec![],
            );
        }
        Some(Ok(s)) => s,
    };
    let evidence = |addr: &String| {
        let ev = Evidence::new("listening socket", addr.clone(), VerifiedBy::Process);
        if on_loopback(addr) { ev } else { ev.code("listens-beyond-loopback") }
    };
    let open: Vec<&String> = sockets.iter().filter(|a| !on_loopback(a)).collect();
    let all = sockets.iter().map(evidence).collect();
    if open.is_empty() {
        Finding::new(Verdict::Pass, format!("listens on loopback only ({})", join(sockets.iter())), all)
    } else {
        Finding::new(Verdict::Fail, format!("listens beyond loopback: {}", join(open.into_iter())), all)
    }
}

fn join<'a>(items: impl Iterator<Item = &'a String>) -> String {
    items.map(String::as_str).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(probe: &str, status: u16, headers: &[(&str, &str)]) -> Exchange {
        Exchange {
            probe: probe.into(),
            status: Ok(status),
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    fn safe() -> HttpObservations {
        HttpObservations {
            credential_headers: vec!["Authorization".into()],
            control: Some(ex("control", 200, &[("mcp-session-id", "s1")])),
            origins: FOREIGN_ORIGINS.iter().map(|o| ex(o, 403, &[])).collect(),
            no_credential: Some(ex("no-credential", 401, &[("www-authenticate", "Bearer")])),
            bad_credential: Some(ex("bad-credential", 401, &[("www-authenticate", "Bearer")])),
            version_control: Some(ex("control", 200, &[])),
            bad_version: Some(ex("unsupported", 400, &[])),
            session_issued: true,
            unknown_session: Some(ex("unknown", 404, &[])),
            delete: Some(ex("delete", 202, &[])),
            after_delete: Some(ex("ended", 404, &[])),
            preflight: Some(ex("preflight", 401, &[])),
            sockets: Some(Ok(vec!["127.0.0.1:8080".into()])),
            tls: Some(TlsObs {
                scheme: "https".into(),
                host: "mcp.example".into(),
                loopback: Ok(false),
                handshake: Some(Ok(true)),
            }),
        }
    }

    #[test]
    fn a_server_with_every_defence_passes_every_check() {
        let obs = safe();
        for f in [
            origin(&obs),
            auth_required(&obs),
            protocol_version(&obs),
            session(&obs),
            cors(&obs),
            bind(&obs),
            tls(&obs),
        ] {
            assert_eq!(f.verdict, Verdict::Pass, "{}", f.summary);
        }
    }

    #[test]
    fn each_missing_defence_fails_its_own_check() {
        let mut o = safe();
        o.origins[0].status = Ok(200);
        assert_eq!(origin(&o).verdict, Verdict::Fail);
        let mut o = safe();
        o.no_credential = Some(ex("no-credential", 200, &[]));
        assert_eq!(auth_required(&o).verdict, Verdict::Fail);
        let mut o = safe();
        o.bad_version = Some(ex("unsupported", 200, &[]));
        assert_eq!(protocol_version(&o).verdict, Verdict::Fail);
        let mut o = safe();
        o.after_delete = Some(ex("ended", 200, &[]));
        assert_eq!(session(&o).verdict, Verdict::Fail);
        let mut o = safe();
        o.origins[0].headers.insert("access-control-allow-origin".into(), FOREIGN_ORIGINS[0].into());
        assert_eq!(cors(&o).verdict, Verdict::Fail);
        let mut o = safe();
        o.sockets = Some(Ok(vec!["0.0.0.0:8080".into()]));
        let f = bind(&o);
        assert_eq!((f.verdict, f.summary.as_str()), (Verdict::Fail, "listens beyond loopback: 0.0.0.0:8080"));
        let mut o = safe();
        o.tls.as_mut().unwrap().scheme = "http".into();
        assert_eq!(tls(&o).verdict, Verdict::Fail);
        o.tls.as_mut().unwrap().loopback = Ok(true);
        assert_eq!(tls(&o).verdict, Verdict::Na, "loopback needs no TLS");
    }

    #[test]
    fn half_measures_are_part_and_missing_controls_inconclusive() {
        let mut o = safe();
        o.no_credential = Some(ex("no-credential", 401, &[]));
        assert_eq!(auth_required(&o).verdict, Verdict::Part, "a 401 without a challenge");
        o.origins[1].status = Ok(400);
        assert_eq!(origin(&o).verdict, Verdict::Part);
        o.control = Some(ex("control", 403, &[]));
        assert_eq!(origin(&o).verdict, Verdict::Inconclusive);
        let mut o = safe();
        o.origins[0].headers.insert("access-control-allow-origin".into(), "*".into());
        assert_eq!(cors(&o).verdict, Verdict::Fail, "a wildcard where credentials are taken");
        o.credential_headers.clear();
        assert_eq!(cors(&o).verdict, Verdict::Part);
        assert_eq!(auth_required(&o).verdict, Verdict::Na);
        let mut o = safe();
        o.session_issued = false;
        assert_eq!(session(&o).verdict, Verdict::Na);
        o.sockets = None;
        assert_eq!(bind(&o).verdict, Verdict::Na);
        assert!(on_loopback("[::1]:1") && on_loopback("[::ffff:127.0.0.1]:1") && !on_loopback("[::]:1"));
    }
}
