//! The http pack: an HTTP server's own transport defences, each tested with a raw
//! request of its own, and where it listens.

use super::{References, declare_check};
use crate::model::{Pack, ProbeDoc, VerifiedBy, Weight};

const SCOPE: &str = "server (its HTTP transport, tested with raw requests)";
const OWASP: &str = "MCP07 Insufficient Authentication & Authorization";

declare_check! {
    /// DNS rebinding: a web page must not be able to drive a local server.
    HTTP_ORIGIN {
        id: "http-origin",
        pack: Pack::Http,
        label: "A foreign Origin is refused (DNS rebinding)",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: false,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Response],
        probes: &ORIGIN_PROBES,
        settings: &[],
        proves_pass: "An accepted control, then every foreign Origin refused with 403.",
        verdict: "The control (no Origin, as non-browser clients send) must be accepted, or the check is inconclusive: the MCP spec validates an Origin only when one is present. Then each foreign Origin: fail when any is accepted (2xx), pass when every one gets 403, part when they are refused with another status.",
        fix: "Check the Origin header on every request and answer 403 unless it is one you serve (for a local server: your own loopback origin). Bind to loopback as well: Origin checks and binding together stop rebinding.",
        false_positives: "A server that serves browsers from one of the probe origins; the origins are reserved names (.invalid) and null, so none should.",
        false_negatives: "Only three Origins are tried; a server that refuses these but trusts, say, any localhost port is not caught. The Host header is not probed.",
        references: References { owasp_mcp: OWASP, cwe: &[346, 350] },
    }
}

declare_check! {
    /// A server configured with a credential must ask for it.
    HTTP_AUTH_REQUIRED {
        id: "http-auth-required",
        pack: Pack::Http,
        label: "A missing or wrong credential gets 401 with WWW-Authenticate",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: false,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Response],
        probes: &AUTH_PROBES,
        settings: &[],
        proves_pass: "An accepted control with the credential, then the missing and the made-up credential each refused with 401 and a WWW-Authenticate challenge.",
        verdict: "Applies when server.headers carries a credential (Authorization, or a header named like a key, token, secret or cookie); na otherwise. The control (initialize with the credential) must be accepted. fail when initialize is accepted without the credential or with a made-up one; pass when both get 401 with a WWW-Authenticate challenge; part when they are refused another way (401 without a challenge, 403).",
        fix: "Check the credential before anything else on every request, and answer 401 with a WWW-Authenticate header naming the scheme, as the MCP authorization spec asks.",
        false_positives: "A header the harness takes for a credential that the server does not need (named like one, say X-Trace-Token): remove it from server.headers, or expect this check to fail.",
        false_negatives: "What an authorised caller may do, token scopes and OAuth flows are not tested; nor is a credential passed another way than a header.",
        references: References { owasp_mcp: OWASP, cwe: &[306, 287] },
    }
}

declare_check! {
    /// An unsupported protocol version must be refused, not guessed at.
    HTTP_PROTOCOL_VERSION {
        id: "http-protocol-version",
        pack: Pack::Http,
        label: "An unsupported MCP-Protocol-Version gets 400",
        scope: SCOPE,
        weight: Weight::Scored,
        candidate: false,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Response],
        probes: &VERSION_PROBES,
        settings: &[],
        proves_pass: "An accepted control, then the unsupported version refused with 400.",
        verdict: "The control (a supported version) must be accepted. fail when the request with MCP-Protocol-Version: 1999-01-01 is accepted; pass on 400; part on another refusal.",
        fix: "Compare the MCP-Protocol-Version header with the versions you implement and answer 400 for any other; assume 2025-03-26 only when the header is absent.",
        false_positives: "None: 1999-01-01 is no MCP version.",
        false_negatives: "Only one unsupported value is sent; a server that accepts some other unknown version is not caught.",
        references: References { owasp_mcp: "MCP09 Insecure Defaults", cwe: &[20] },
    }
}

declare_check! {
    /// Sessions must not be guessable or outlive their end.
    HTTP_SESSION {
        id: "http-session",
        pack: Pack::Http,
        label: "An unknown or ended Mcp-Session-Id gets 404",
        scope: SCOPE,
        weight: Weight::Scored,
        candidate: false,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Response],
        probes: &SESSION_PROBES,
        settings: &[],
        proves_pass: "An accepted control in the session, then the unknown and the ended session ids refused with 404.",
        verdict: "na when initialize issues no Mcp-Session-Id. The control (a request in the session) must be accepted. fail when a request with an id the server never issued, or with the id of a session DELETE ended, is accepted; pass when each gets 404 (a 405 to DELETE is allowed: the ended-session probe is then skipped and said so); part on another refusal.",
        fix: "Keep a table of live sessions; answer 404 for any id not in it, and remove an id when its session ends.",
        false_positives: "None: the unknown id is made up for the run.",
        false_negatives: "Session ids are not tested for guessability, and sessions are not tested for expiry.",
        references: References { owasp_mcp: OWASP, cwe: &[613, 384] },
    }
}

declare_check! {
    /// A browser must not be allowed to read a credentialed answer from another site.
    HTTP_CORS {
        id: "http-cors",
        pack: Pack::Http,
        label: "No wildcard or reflected CORS on credentialed endpoints",
        scope: SCOPE,
        weight: Weight::Scored,
        candidate: false,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Response],
        probes: &CORS_PROBES,
        settings: &[],
        proves_pass: "Answers to requests carrying a foreign Origin, none allowing it.",
        verdict: "fail when any answer's Access-Control-Allow-Origin is the foreign Origin it was sent (reflected), or * on a server that takes credentials (a credential in server.headers, or Access-Control-Allow-Credentials: true); part for * on a server without credentials; pass when no answer allows a foreign Origin. inconclusive when nothing with an Origin was answered.",
        fix: "Send no CORS headers unless browsers must call the server; then allow a fixed list of origins, never the request's Origin echoed back and never * with credentials.",
        false_positives: "None for a reflection: the origins are reserved names.",
        false_negatives: "Only POST and OPTIONS to the endpoint are examined; other paths of the same server are not.",
        references: References { owasp_mcp: "MCP09 Insecure Defaults", cwe: &[942] },
    }
}

declare_check! {
    /// A local server should not be reachable from the network.
    HTTP_BIND {
        id: "http-bind",
        pack: Pack::Http,
        label: "Listens on loopback, not all interfaces",
        scope: "server (its listening sockets, read from the process table)",
        weight: Weight::Scored,
        candidate: false,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Process],
        probes: &BIND_PROBES,
        settings: &[],
        proves_pass: "Listening sockets found for the server's processes, all on loopback.",
        verdict: "na when sealmark did not start the server (only server.url). Otherwise every listening TCP socket of every process carrying the run's marker is read: fail when any is bound beyond loopback (0.0.0.0, ::, or another address); pass when all are on 127.0.0.0/8 or ::1; inconclusive when none is found.",
        fix: "Bind to 127.0.0.1 (or ::1) by default and make any other address an explicit, documented choice.",
        false_positives: "A server meant to be reached from other machines fails this by design: the check says it can be.",
        false_negatives: "Sockets opened after the probes ran, UDP and Unix sockets are not read; a server started outside sealmark is not examined.",
        references: References { owasp_mcp: "MCP09 Insecure Defaults", cwe: &[1327] },
    }
}

declare_check! {
    /// What crosses a network must be encrypted.
    HTTP_TLS {
        id: "http-tls",
        pack: Pack::Http,
        label: "Non-loopback endpoints use TLS",
        scope: "server (its URL and TLS handshake)",
        weight: Weight::Scored,
        candidate: false,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Response],
        probes: &TLS_PROBES,
        settings: &[],
        proves_pass: "A completed TLS handshake with the endpoint.",
        verdict: "na when every address the URL's host resolves to is loopback. fail for plain http to any other host. For https, pass when a TLS handshake completes (whether this machine's roots trust the certificate is said beside it); inconclusive when none does.",
        fix: "Serve https on any address other machines can reach, or bind to loopback only.",
        false_positives: "A plain-http URL to a host that is only reachable through an encrypted tunnel (a VPN, a service mesh) fails: the check sees the URL, not the network.",
        false_negatives: "Certificate validity is reported, not graded; TLS versions and ciphers are not examined.",
        references: References { owasp_mcp: "MCP09 Insecure Defaults", cwe: &[319] },
    }
}

pub const ORIGIN_PROBES: [ProbeDoc; 4] = [
    ProbeDoc::new(
        "control",
        "initialize with the configured headers and no Origin (what a non-browser client sends): must be accepted",
    ),
    ProbeDoc::new("foreign", "initialize with Origin: http://sm-rebind.invalid"),
    ProbeDoc::noted("null", "initialize with Origin: null", "what a sandboxed page or a file sends"),
    ProbeDoc::noted("lookalike", "initialize with Origin: http://127.0.0.1.sm-rebind.invalid", "starts like loopback"),
];

pub const AUTH_PROBES: [ProbeDoc; 2] = [
    ProbeDoc::new("no-credential", "initialize without the configured credential headers"),
    ProbeDoc::new("bad-credential", "initialize with each credential replaced by a token the harness made up"),
];

pub const VERSION_PROBES: [ProbeDoc; 2] = [
    ProbeDoc::new("control", "tools/list in a session, with MCP-Protocol-Version: 2025-06-18"),
    ProbeDoc::new("unsupported", "the same request with MCP-Protocol-Version: 1999-01-01"),
];

pub const SESSION_PROBES: [ProbeDoc; 3] = [
    ProbeDoc::new("unknown", "tools/list with an Mcp-Session-Id the server never issued"),
    ProbeDoc::noted("delete", "DELETE with the session's id", "405 means clients may not end sessions"),
    ProbeDoc::new("ended", "tools/list with the id of the session just ended"),
];

pub const CORS_PROBES: [ProbeDoc; 2] = [
    ProbeDoc::new(
        "preflight",
        "OPTIONS with Origin: http://sm-rebind.invalid, Access-Control-Request-Method: POST, as a browser sends it (no credential)",
    ),
    ProbeDoc::new(
        "foreign",
        "the Access-Control-Allow-Origin of every answer to the foreign-Origin requests of http-origin",
    ),
];

pub const TLS_PROBES: [ProbeDoc; 2] = [
    ProbeDoc::new("host", "the URL's host, resolved: is every address it names on loopback?"),
    ProbeDoc::new(
        "handshake",
        "for https: a request that completes the TLS handshake whatever the certificate, then whether this machine's roots trust it",
    ),
];

pub const BIND_PROBES: [ProbeDoc; 1] = [ProbeDoc::new(
    "sockets",
    "the listening TCP sockets of every process carrying the run's marker (/proc/<pid>/fd and /proc/<pid>/net/tcp, tcp6)",
)];
