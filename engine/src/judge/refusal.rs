//! The refusal rule of the methodology (steps 1–6): when does a declined reply count as
//! a refusal of the target, rather than a fetch that merely failed?
//!
//! A correctly guarded tool refuses the harness's listener and says so in terms of the
//! target. A reply that reports a failed fetch, or names the mechanism that failed (a
//! proxy, a socket, DNS, a timeout), proves nothing about a guard.

use crate::text::percent_decode;
use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// How the reply was delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// A tools/call result without isError.
    Success,
    /// A result with isError: true.
    ToolError,
    /// A JSON-RPC error, with its code.
    RpcError(i64),
    /// No answer in time, or the connection closed.
    NoAnswer,
}

/// What the rule made of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Refused,
    /// Not declined: the tool returned a result.
    Answered,
    /// Declined without tying the refusal to the target, or no answer at all.
    Failed,
}

/// Which step decided, as evidence lines name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Step 1: a result that is not declined.
    NotDeclined,
    /// Step 1: a timeout or a closed connection.
    NoAnswer,
    /// Step 2.
    AddressClass,
    /// Step 3.
    FailureWord,
    /// Step 4.
    RefusalTiedToHost,
    /// Step 5.
    ValidationNamingAddress,
    /// Step 6.
    Otherwise,
}

impl Rule {
    /// The words an evidence line uses for the deciding rule.
    pub fn describe(self) -> &'static str {
        match self {
            Rule::NotDeclined => "answered: the reply was not declined (rule 1)",
            Rule::NoAnswer => "failed: no answer or a closed connection (rule 1)",
            Rule::AddressClass => "names the address class (rule 2)",
            Rule::FailureWord => "reports a failed fetch, not a refused target (rule 3)",
            Rule::RefusalTiedToHost => "refusal tied to the host (rule 4)",
            Rule::ValidationNamingAddress => "validation error naming the address (rule 5)",
            Rule::Otherwise => "failed without saying the target was refused (rule 6)",
        }
    }
}

macro_rules! re {
    ($name:ident, $pat:literal) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| Regex::new($pat).expect("valid refusal pattern"));
    };
}

// Step 2: the class of address refused.
re!(
    ADDRESS_CLASS,
    r"(?i)\bloop-?back\b|\blink-?local\b|\b(private|internal|reserved|local)\s+(ip\s+)?(address|addresses|network|networks|range|ranges|ip|ips|host|hosts)\b|\bnon-?routable\b|\bnot\s+a\s+public\s+(ip\s+)?(address|host)\b|\bunsafe\s+(destination|host|address|target)\b|\bssrf\b|\bmetadata\s+(endpoint|service|address)\b|\bresolves?\s+to\s+(an?\s+)?(\w+\s+)?(address|ip)\b|\brefused\s+to\s+fetch\b|\bonly\s+[^;\n]{1,80}?\s+(are|is)\s+(allowed|permitted|supported)\b"
);
// Step 3: the mechanism that failed.
re!(
    FAILURE_WORD,
    r"(?i)\bECONN[A-Z]*\b|\bENOTFOUND\b|\bETIMEDOUT\b|\bEHOSTUNREACH\b|\bconnection\s+(was\s+)?(refused|reset|failed|blocked|closed|aborted)\b|\bnetwork\s+is\s+unreachable\b|\btimed?\s*-?\s*out\b|\bproxy\b|\bsocket\b|\bdns\b|\bcertificate\b|\btls\b|\bssl\b|\bhandshake\b"
);
// Step 4: a refusal word …
re!(
    REFUSAL_WORD,
    r"(?i)\bblocked\b|\bnot\s+allowed\b|\bdisallowed\b|\bforbidden\b|\bdenied\b|\brejected\b|\brestricted\b|\binvalid\b|\bunsafe\b|\bbad\s+request\b|\bnot\s+permitted\b|\bprohibited\b|\brefused?\b|\bunsupported\b|\bnot\s+supported\b"
);
// … tied to a target noun.
re!(
    TARGET_NOUN,
    r"(?i)\bhosts?\b|\bhostnames?\b|\baddress(es)?\b|\bdestinations?\b|\btargets?\b|\burls?\b|\buris?\b|\bdomains?\b|\bips?\b|\borigins?\b|\bschemes?\b|\bprotocols?\b"
);
// Step 5: a loopback address named.
re!(LOOPBACK, r"(?i)\blocalhost\b|\b127(\.\d{1,3}){1,3}\b|::1\b|\b0\.0\.0\.0\b|::ffff:127");

// A refusal of the scheme itself (net-scheme-allowlist): a refusal word, or "missing",
// together with the words scheme or protocol.
re!(SCHEME_NOUN, r"(?i)\bschemes?\b|\bprotocols?\b|\bhttps?\s*(and|or|/)\s*https?\b|\bhttp\(s\)|\bonly\s+https?\b");
re!(ANY_URL, r#"(?i)\b[a-z][a-z0-9+.-]*://[^\s'")]+"#);
re!(MISSING, r"(?i)\bmissing\b|\bmust\s+(be|use|start)\b|\bonly\b");

/// Whether a declined reply refuses the URL's scheme or protocol ("unsupported protocol
/// 'gopher://'", "missing an 'http://' or 'https://' protocol"), the probe URL removed
/// first. A refusal of the address alone does not say the scheme is refused.
pub fn refuses_scheme(text: &str, delivery: Delivery, urls: &[String]) -> bool {
    if !matches!(delivery, Delivery::ToolError | Delivery::RpcError(_)) {
        return false;
    }
    let text = strip_urls(text, urls);
    // The scheme named on its own ("not gopher:"), not as part of another URL.
    let bare = ANY_URL.replace_all(&text, " ");
    let names_scheme = urls
        .iter()
        .filter_map(|u| u.split_once(':').map(|(s, _)| s.to_lowercase()))
        .any(|scheme| Regex::new(&format!(r"(?i)\b{}\b", regex::escape(&scheme))).is_ok_and(|re| re.is_match(&bare)));
    (SCHEME_NOUN.is_match(&text) || names_scheme) && (REFUSAL_WORD.is_match(&text) || MISSING.is_match(&text))
}

/// Judges one reply. `urls` are the spellings of the probe URL, removed from the text
/// before anything is matched so an echoed URL cannot supply the words.
pub fn judge(text: &str, delivery: Delivery, urls: &[String]) -> (Outcome, Rule) {
    match delivery {
        Delivery::Success => return (Outcome::Answered, Rule::NotDeclined),
        Delivery::NoAnswer => return (Outcome::Failed, Rule::NoAnswer),
        Delivery::ToolError | Delivery::RpcError(_) => {}
    }
    let text = strip_urls(text, urls);
    if ADDRESS_CLASS.is_match(&text) {
        return (Outcome::Refused, Rule::AddressClass);
    }
    if FAILURE_WORD.is_match(&text) {
        return (Outcome::Failed, Rule::FailureWord);
    }
    let head: String = text.chars().take(300).collect();
    if REFUSAL_WORD.is_match(&head) && TARGET_NOUN.is_match(&head) {
        return (Outcome::Refused, Rule::RefusalTiedToHost);
    }
    let validation = matches!(delivery, Delivery::ToolError | Delivery::RpcError(-32602));
    if validation && LOOPBACK.is_match(&text) && REFUSAL_WORD.is_match(&text) {
        return (Outcome::Refused, Rule::ValidationNamingAddress);
    }
    (Outcome::Failed, Rule::Otherwise)
}

/// `text` without any spelling of the probe URLs: as sent, percent-decoded, lower-cased,
/// without a trailing slash, and without the scheme.
pub fn strip_urls(text: &str, urls: &[String]) -> String {
    let mut spellings: Vec<String> = Vec::new();
    for u in urls {
        for v in [u.clone(), percent_decode(u), u.to_lowercase(), percent_decode(u).to_lowercase()] {
            let bare = v.trim_end_matches('/').to_string();
            let no_scheme = bare.split_once("://").map(|(_, r)| r.to_string()).unwrap_or_default();
            spellings.extend([v, bare, no_scheme]);
        }
    }
    spellings.retain(|s| s.len() > 3);
    spellings.sort_by_key(|s| std::cmp::Reverse(s.len()));
    spellings.dedup();
    let mut out = text.to_string();
    for s in &spellings {
        // Case-insensitive removal: servers often lower-case what they echo.
        let lower = out.to_lowercase();
        let needle = s.to_lowercase();
        if lower.len() == out.len() {
            let mut rebuilt = String::new();
            let mut last = 0;
            for (i, _) in lower.match_indices(&needle) {
                if i >= last {
                    rebuilt.push_str(&out[last..i]);
                    rebuilt.push_str(" … ");
                    last = i + needle.len();
                }
            }
            rebuilt.push_str(&out[last..]);
            out = rebuilt;
        } else {
            out = out.replace(s.as_str(), " … ");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Delivery::*;
    use Outcome::*;

    const URL: &str = "http://127.0.0.1:40000/t/sm001";

    /// Replies, how they arrive, and the outcome and deciding rule each must get.
    const TABLE: &[(&str, Delivery, Outcome, Rule)] = &[
        // The methodology page's own examples.
        ("connections to a private address are not allowed", ToolError, Refused, Rule::AddressClass),
        ("connection blocked by proxy", ToolError, Failed, Rule::FailureWord),
        ("network access is restricted in this environment", ToolError, Failed, Rule::Otherwise),
        ("This URL is blocked", ToolError, Refused, Rule::RefusalTiedToHost),
        // Step 1.
        ("<html>hello</html>", Success, Answered, Rule::NotDeclined),
        ("Error: host not allowed", Success, Answered, Rule::NotDeclined),
        ("", NoAnswer, Failed, Rule::NoAnswer),
        // Step 2: address classes, each wins over failure words.
        (
            "Refusing http://127.0.0.1:40000/t/sm001: loopback addresses are blocked",
            ToolError,
            Refused,
            Rule::AddressClass,
        ),
        ("destination is link-local", ToolError, Refused, Rule::AddressClass),
        ("target is an internal network address", ToolError, Refused, Rule::AddressClass),
        ("169.254.169.254 is a metadata endpoint", ToolError, Refused, Rule::AddressClass),
        ("the host resolves to a private address", ToolError, Refused, Rule::AddressClass),
        ("host is non-routable", ToolError, Refused, Rule::AddressClass),
        ("127.0.0.1 is not a public address", ToolError, Refused, Rule::AddressClass),
        ("unsafe destination", ToolError, Refused, Rule::AddressClass),
        ("possible SSRF attempt rejected", ToolError, Refused, Rule::AddressClass),
        ("Refused to fetch the resource", ToolError, Refused, Rule::AddressClass),
        ("only https URLs to api.example.com are allowed", ToolError, Refused, Rule::AddressClass),
        ("Only public hosts are permitted", ToolError, Refused, Rule::AddressClass),
        ("reserved address range; connection refused", ToolError, Refused, Rule::AddressClass),
        ("proxy error: destination resolves to a loopback address", ToolError, Refused, Rule::AddressClass),
        ("connections to a private address are not allowed", RpcError(-32602), Refused, Rule::AddressClass),
        // Step 3: failure words veto the generic tier.
        ("fetch failed: ECONNREFUSED 127.0.0.1:40000", ToolError, Failed, Rule::FailureWord),
        ("getaddrinfo ENOTFOUND localhost.", ToolError, Failed, Rule::FailureWord),
        ("request timed out", ToolError, Failed, Rule::FailureWord),
        ("connection reset by peer", ToolError, Failed, Rule::FailureWord),
        ("network is unreachable", ToolError, Failed, Rule::FailureWord),
        ("DNS lookup failed for host", ToolError, Failed, Rule::FailureWord),
        ("TLS handshake failed: invalid certificate for host", ToolError, Failed, Rule::FailureWord),
        ("socket hang up; host blocked", ToolError, Failed, Rule::FailureWord),
        ("connection refused: URL not allowed", ToolError, Failed, Rule::FailureWord),
        // Step 4: refusal word and target noun in the first 300 characters.
        ("Host not allowed", ToolError, Refused, Rule::RefusalTiedToHost),
        ("Forbidden destination", RpcError(-32000), Refused, Rule::RefusalTiedToHost),
        ("Access denied for this domain", ToolError, Refused, Rule::RefusalTiedToHost),
        ("Invalid URL", ToolError, Refused, Rule::RefusalTiedToHost),
        ("the requested IP is restricted", ToolError, Refused, Rule::RefusalTiedToHost),
        ("unsupported URL scheme gopher", ToolError, Refused, Rule::RefusalTiedToHost),
        ("Bad request: origin rejected", ToolError, Refused, Rule::RefusalTiedToHost),
        ("fetch failed", ToolError, Failed, Rule::Otherwise),
        ("Request failed with status 500", ToolError, Failed, Rule::Otherwise),
        ("something went wrong", RpcError(-32603), Failed, Rule::Otherwise),
        // The echoed URL cannot supply the words: "url" and the address come only from it.
        ("blocked: http://127.0.0.1:40000/t/sm001", ToolError, Failed, Rule::Otherwise),
        ("Blocked HTTP://127.0.0.1:40000/T/SM001/", ToolError, Failed, Rule::Otherwise),
        // Step 5: a validation error that names a loopback address and refuses.
        ("Validation error: 127.0.0.1 rejected", RpcError(-32602), Refused, Rule::ValidationNamingAddress),
        ("Input error: localhost is denied", ToolError, Refused, Rule::ValidationNamingAddress),
        ("localhost is denied", RpcError(-32000), Failed, Rule::Otherwise),
        // A refusal word far from a target noun.
        (
            concat!(
                "denied. ",
                "padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding ",
                "the host"
            ),
            ToolError,
            Failed,
            Rule::Otherwise,
        ),
    ];

    #[test]
    fn scheme_refusals_name_the_scheme_not_the_address() {
        let gopher = ["gopher://127.0.0.1:40000/_sm001".to_string()];
        for text in [
            "Only http and https URLs are allowed, not gopher:",
            "Failed to fetch gopher://127.0.0.1:40000/_sm001: UnsupportedProtocol(\"Request URL has an unsupported protocol 'gopher://'.\")",
            "Request URL is missing an 'http://' or 'https://' protocol.",
            "scheme gopher is not allowed",
        ] {
            assert!(refuses_scheme(text, ToolError, &gopher), "{text:?}");
        }
        for text in [
            "Refused to fetch gopher://127.0.0.1:40000/robots.txt: 127.0.0.1 resolves to 127.0.0.1, which is not a public address.",
            "Failed to fetch robots.txt file:///robots.txt due to a connection issue",
            "blocked: gopher://127.0.0.1:40000/_sm001",
        ] {
            assert!(!refuses_scheme(text, ToolError, &gopher), "{text:?}");
        }
        assert!(!refuses_scheme("Only http and https URLs are allowed", Success, &gopher), "a result is not declined");
    }

    #[test]
    fn the_refusal_table() {
        assert!(TABLE.len() >= 40);
        for (text, delivery, outcome, rule) in TABLE {
            assert_eq!(judge(text, *delivery, &[URL.to_string()]), (*outcome, *rule), "{text:?}");
        }
    }
}
