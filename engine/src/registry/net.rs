//! The net pack: SSRF, other schemes and an oversized reply, proven with a loopback
//! listener only the harness owns.

use super::{References, Setting, SettingKind, declare_check};
use crate::model::{Pack, ProbeDoc, VerifiedBy, Weight};

/// The SSRF corpus plus the redirect probe, as `explain` lists them.
static SSRF_PROBES: [ProbeDoc; 24] = ProbeDoc::concat(
    SSRF_VARIANTS,
    [
        REDIRECT_VARIANT,
        ProbeDoc::noted(
            "control",
            "net.control_url",
            "once per tool before the probes: when it works the tool can fetch, so a probe that did not reach the listener was stopped",
        ),
    ],
);

const SCOPE: &str = "server (URL validation, with a harness-owned loopback listener)";

declare_check! {
    /// A fetch tool must not reach the loopback address, however it is spelled.
    NET_LOOPBACK_SSRF {
        id: "net-loopback-ssrf",
        pack: Pack::Net,
        label: "Fetch tools refuse the harness's loopback listener, every spelling",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Listener, VerifiedBy::Response],
        probes: &SSRF_PROBES,
        settings: &[Setting {
            key: "net.control_url",
            kind: SettingKind::Text,
            default: "none",
            locked: false,
            threshold: false,
            meaning: "A URL each url tool may fetch. When it works, a probe that did not reach the listener passes without a refusal; when it is served by the listener ({listener}/control), the redirect and oversized probes go through it too.",
        }],
        proves_pass: "Every spelling the harness could itself reach sent and either refused by the refusal rule or, when a control fetch worked, not arriving at the listener. A spelling this machine cannot resolve counts only when it reaches the listener or is refused.",
        verdict: "Each spelling is sent to every url-class tool, with a fresh token in its path. A request for that token at the listener fails the probe, whatever the reply says. Otherwise the reply is judged by the refusal rule: the probe URL is removed in every spelling; a declined reply naming the class of address refused is a refusal (rule 2); a failure word (ECONN…, timed out, proxy, socket, DNS, TLS) makes it a failed fetch unless rule 2 applied (rule 3); a refusal word with a target noun in the first 300 characters is a refusal (rule 4); a validation error naming a loopback address with a refusal word is a refusal (rule 5); anything else failed (rule 6). pass when nothing reached the listener and every probe was refused, or the control fetch worked. A tool that fetches nothing (its control fails, or it only reports failed fetches) is inconclusive. Each evidence line names the rule that decided it.",
        fix: "Resolve the host, check every resolved address (and every redirect hop) against loopback, private, link-local and unspecified ranges before connecting, connect to the checked address, and refuse in words that name the target (\"refused: 127.0.0.1 is a loopback address\").",
        false_positives: "None for a hit: the listener's address and token exist only in the probe. A guard that refuses in words the rule does not know makes the check inconclusive, not failed. A spelling this machine cannot resolve itself (localhost. where the resolver refuses it) is still sent, but its failed fetch is set aside: it fails only by reaching the listener.",
        false_negatives: "Octal spellings (0177.0.0.1, 017700000001) and the other 127/8 addresses are not probed; redirects from public hosts and DNS rebinding are not tested, because the harness contacts only its own listener.",
        references: References { owasp_mcp: "MCP05 Command Injection & Execution", cwe: &[918] },
    }
}

declare_check! {
    /// Only http and https should be fetched.
    NET_SCHEME_ALLOWLIST {
        id: "net-scheme-allowlist",
        pack: Pack::Net,
        label: "Only http(s) is fetched (file:, gopher:, ftp:, data: …)",
        scope: SCOPE,
        weight: Weight::Scored,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Listener, VerifiedBy::Response],
        probes: &SCHEME_VARIANTS,
        settings: &[],
        proves_pass: "For each probe, an observation that it was not fetched and why: a refusal naming the scheme or protocol; or, for file: and data:, a declined reply without the file's canary or the data's token (reading them needs no network); or, for a scheme aimed at the listener, its far twin (the same scheme at a host under .invalid) refused naming the scheme, or no connection there from a tool shown to fetch (a control fetch worked, or an http probe reached the listener). A refusal for the address alone does not show that the scheme is refused.",
        verdict: "fail when the canary of {canary}/secret.txt or the token of a data: URL comes back, or the listener accepts a connection during the call. Otherwise each probe needs a reason it was not fetched: a declined reply that refuses the scheme or protocol (\"only http and https\", \"unsupported protocol\", \"missing an http:// or https:// protocol\"); for file: and data:, a declined reply without the secret (reading a file needs no network, so it was not read, whatever the wording: \"Failed to fetch robots.txt file:///robots.txt due to a connection issue\" passes this way); for the schemes aimed at the listener, a refusal naming the scheme of the same scheme's far twin (sent to {token}.sealmark.invalid, a name that resolves nowhere, so that a guard which refuses loopback addresses has no address to refuse), or no connection there from a tool shown to fetch (its control worked, or an http probe reached the listener). A refusal of the listener's address alone does not show the scheme is refused. A far twin fails only when its token comes back or reaches the listener; it is otherwise evidence for its listener spelling, not a probe of its own. pass when every probe has its reason; inconclusive otherwise.",
        fix: "Parse the URL and allow only the http and https schemes before doing anything else with it.",
        false_positives: "None for a canary or a connection: both exist only because of the probe.",
        false_negatives: "A server with an address guard in front of a client that fetches other schemes refuses the listener-addressed probes for their address; unless it refuses the far twins in words that name the scheme, it is left inconclusive, never passed (a failed lookup of the .invalid host, or a reply that only reports a failed fetch, shows nothing). Schemes beyond the seven are not tried.",
        references: References { owasp_mcp: "MCP05 Command Injection & Execution", cwe: &[918, 73] },
    }
}

declare_check! {
    /// A huge reply must be cut off, not read into memory.
    NET_OVERSIZED_REPLY {
        id: "net-oversized-reply",
        pack: Pack::Net,
        label: "A 64 MiB reply is cut off, not buffered",
        scope: "server (response size limit, measured at the harness's listener)",
        weight: Weight::Scored,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Listener],
        probes: &[OVERSIZED_VARIANT],
        settings: &[],
        proves_pass: "The listener seeing the tool fetch the 64 MiB reply and hang up before its end.",
        verdict: "The listener counts the bytes it had written when the client stopped reading. pass when the server hung up before 64 MiB (the evidence says under N of 64 MiB, N rounded up to a power of two from 8 so reports stay identical); fail when it read the whole reply; inconclusive when the tool did not fetch the listener at all (a guarded tool needs net.control_url served by the listener for this to be measured).",
        fix: "Stream the body with a size limit and stop reading past it; never buffer a whole reply of unknown size.",
        false_positives: "A server whose documented job is downloading large files fails; that is the finding.",
        false_negatives: "Compressed bodies and slow trickles are not tried.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[400, 770] },
    }
}

/// Spellings of the listener's address. `{port}` is its port and `{token}` ties a hit
/// to one probe. Octal spellings and the other 127/8 addresses are deliberately absent
/// (a documented blind spot), as is every name that is not the listener's.
pub const SSRF_VARIANTS: [ProbeDoc; 22] = [
    ProbeDoc::new("ipv4", "http://127.0.0.1:{port}/t/{token}"),
    ProbeDoc::new("localhost", "http://localhost:{port}/t/{token}"),
    ProbeDoc::new("localhost-upper", "http://LOCALHOST:{port}/t/{token}"),
    ProbeDoc::new("localhost-mixed", "http://LocalHost:{port}/t/{token}"),
    ProbeDoc::new("localhost-dot", "http://localhost.:{port}/t/{token}"),
    ProbeDoc::new("ipv4-dot", "http://127.0.0.1.:{port}/t/{token}"),
    ProbeDoc::new("ipv6", "http://[::1]:{port}/t/{token}"),
    ProbeDoc::new("ipv4-mapped", "http://[::ffff:127.0.0.1]:{port}/t/{token}"),
    ProbeDoc::new("ipv4-mapped-hex", "http://[::ffff:7f00:1]:{port}/t/{token}"),
    ProbeDoc::new("ipv4-mapped-long", "http://[0:0:0:0:0:ffff:7f00:1]:{port}/t/{token}"),
    ProbeDoc::new("short-2", "http://127.1:{port}/t/{token}"),
    ProbeDoc::new("short-3", "http://127.0.1:{port}/t/{token}"),
    ProbeDoc::new("hex-short", "http://0x7f.1:{port}/t/{token}"),
    ProbeDoc::new("hex-octets", "http://0x7f.0x0.0x0.0x1:{port}/t/{token}"),
    ProbeDoc::new("decimal", "http://2130706433:{port}/t/{token}"),
    ProbeDoc::new("hex-whole", "http://0x7f000001:{port}/t/{token}"),
    ProbeDoc::new("unspecified", "http://0.0.0.0:{port}/t/{token}"),
    ProbeDoc::new("userinfo", "http://x@127.0.0.1:{port}/t/{token}"),
    ProbeDoc::new("userinfo-password", "http://x:y@localhost:{port}/t/{token}"),
    ProbeDoc::new("encoded-host", "http://%6c%6f%63%61%6c%68%6f%73%74:{port}/t/{token}"),
    ProbeDoc::new("scheme-upper", "HTTP://127.0.0.1:{port}/t/{token}"),
    ProbeDoc::new("backslashes", "http:\\\\127.0.0.1:{port}\\t\\{token}"),
];

/// The redirect probe, sent only when `net.control_url` is served by the listener:
/// the allowed control URL redirects to a loopback path that is not allowed.
pub const REDIRECT_VARIANT: ProbeDoc =
    ProbeDoc::noted("redirect", "{control_url}/redirect/{token}", "302 to http://127.0.0.1:{port}/t/{token}");

/// Schemes other than http(s). `{canary}` is the fs canary directory.
pub const SCHEME_VARIANTS: [ProbeDoc; 11] = [
    ProbeDoc::new("file", "file://{canary}/secret.txt"),
    ProbeDoc::new("file-localhost", "file://localhost{canary}/secret.txt"),
    ProbeDoc::new("gopher", "gopher://127.0.0.1:{port}/_{token}"),
    ProbeDoc::new("ftp", "ftp://127.0.0.1:{port}/t/{token}"),
    ProbeDoc::new("dict", "dict://127.0.0.1:{port}/d:{token}"),
    ProbeDoc::new("ldap", "ldap://127.0.0.1:{port}/{token}"),
    ProbeDoc::noted(
        "data",
        "data:text/plain;base64,{token_base64}",
        "the token, encoded, so only a decoded fetch shows it",
    ),
    // The far twins of the listener's schemes: a host under .invalid resolves nowhere, so
    // no address rule can refuse it as loopback, and a refusal of it is for its scheme.
    ProbeDoc::noted("gopher-far", "gopher://{token}.sealmark.invalid/_{token}", FAR_NOTE),
    ProbeDoc::noted("ftp-far", "ftp://{token}.sealmark.invalid/t/{token}", FAR_NOTE),
    ProbeDoc::noted("dict-far", "dict://{token}.sealmark.invalid/d:{token}", FAR_NOTE),
    ProbeDoc::noted("ldap-far", "ldap://{token}.sealmark.invalid/{token}", FAR_NOTE),
];

/// What a far twin is for, on the check page.
const FAR_NOTE: &str = "the same scheme at a host under .invalid, which resolves nowhere: a refusal naming the scheme here shows the listener's spelling was refused for its scheme too";

/// The suffix of a far twin's name (`gopher-far` is `gopher`'s).
pub const FAR: &str = "-far";

/// The oversized reply, through the listener's own URL when no control URL is on it.
pub const OVERSIZED_VARIANT: ProbeDoc = ProbeDoc::noted(
    "oversized",
    "{control_url}/big/{token}",
    "{control_url} is net.control_url when the listener serves it, else http://127.0.0.1:{port}; a 64 MiB body",
);
