//! Judges of the net pack, and the probes it sends. Every probe addresses the
//! harness's own loopback listener and nothing else.

use super::Finding;
use super::refusal::{self, Delivery, Outcome};
use crate::model::{Evidence, Verdict, VerifiedBy};
use crate::registry::net::FAR;
use crate::text::{clip, visible};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A template with the listener's port, the probe's token and the sandbox paths filled in.
pub fn expand(template: &str, port: u16, token: &str, canary: &str, control: &str) -> String {
    template
        .replace("{port}", &port.to_string())
        .replace("{token_base64}", &base64(data_secret(token).as_bytes()))
        .replace("{token}", token)
        .replace("{canary}", canary)
        .replace("{control_url}", control)
}

/// What a fetched `data:` probe decodes to: only a real fetch can show it.
pub fn data_secret(token: &str) -> String {
    format!("sealmark-data-{token}")
}

/// Padded base64, as a data: URL carries it.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// One call of the net pack.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetProbe {
    pub probe: String,
    pub tool: String,
    pub url: String,
    pub delivery: Delivery,
    /// The reply's text (bounded).
    pub text: String,
    /// Requests the listener received for this probe's token.
    pub hits: Vec<String>,
    /// Connections the listener accepted during the call.
    pub connections: u32,
    /// Whether a secret (the canary, the data: token, the control body) came back.
    pub leaked: bool,
    /// Whether the harness itself could resolve and reach the URL's host on this
    /// machine; a spelling it cannot reach tells nothing by failing.
    pub reachable: bool,
}

impl NetProbe {
    fn verdict_line(&self) -> (Outcome, &'static str) {
        let (outcome, rule) = refusal::judge(&self.text, self.delivery, std::slice::from_ref(&self.url));
        (outcome, rule.describe())
    }

    fn reply(&self) -> String {
        match self.delivery {
            Delivery::NoAnswer => "no answer".to_string(),
            _ => format!("\"{}\"", clip(&visible(self.text.trim()), 100)),
        }
    }

    fn evidence(&self, outcome: String, by: VerifiedBy, code: &str) -> Evidence {
        Evidence::new(format!("{}: {} \"{}\"", self.probe, self.tool, visible(&self.url)), outcome, by)
            .tool(&self.tool)
            .args(serde_json::json!({ "url": self.url }))
            .code(code)
    }
}

/// A fetch of the oversized reply.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BigProbe {
    pub call: NetProbe,
    /// Bytes the listener had written when the client stopped reading, if it fetched.
    pub sent: Option<u64>,
    pub completed: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetObservations {
    pub tools: Vec<String>,
    pub control_url: Option<String>,
    /// One control fetch per tool, when `net.control_url` is set.
    pub controls: Vec<NetProbe>,
    pub ssrf: Vec<NetProbe>,
    pub schemes: Vec<NetProbe>,
    pub big: Vec<BigProbe>,
    /// Probes left out on this machine, with why.
    pub skipped: Vec<String>,
}

/// Whether `tool` is shown to fetch: its control fetch worked, or a probe reached the
/// listener through it.
fn fetches(obs: &NetObservations, tool: &str) -> bool {
    obs.control_worked(tool) || obs.ssrf.iter().any(|p| p.tool == tool && !p.hits.is_empty())
}

impl NetObservations {
    fn control_worked(&self, tool: &str) -> bool {
        self.controls.iter().any(|c| c.tool == tool && c.leaked)
    }

    fn control_evidence(&self) -> Vec<Evidence> {
        self.controls
            .iter()
            .map(|c| {
                if c.leaked {
                    c.evidence(
                        "the control fetch worked: the listener's control body came back".to_string(),
                        VerifiedBy::Listener,
                        "net.control.ok",
                    )
                } else if c.verdict_line().0 == Outcome::Refused {
                    c.evidence(
                        format!(
                            "the control URL was refused as the target it is (loopback), as a guarded tool should refuse it: {}",
                            c.reply()
                        ),
                        VerifiedBy::Response,
                        "net.control.refused",
                    )
                } else {
                    c.evidence(
                        format!("the control fetch did not work: {}", c.reply()),
                        VerifiedBy::Response,
                        "net.control.failed",
                    )
                }
            })
            .collect()
    }
}

/// What the probes of one check established, tool by tool.
fn judge_probes(
    obs: &NetObservations,
    probes: &[NetProbe],
    hit_of: impl Fn(&NetProbe) -> Option<String>,
    label: &str,
) -> Finding {
    if obs.tools.is_empty() {
        return Finding::new(Verdict::Na, "no url tool", vec![]);
    }
    let mut evidence = obs.control_evidence();
    let mut failed = Vec::new();
    let mut unproven: Vec<&NetProbe> = Vec::new();
    for p in probes {
        if let Some(what) = hit_of(p) {
            failed.push(format!("{} on {}", p.probe, p.tool));
            evidence.push(p.evidence(what, VerifiedBy::Listener, "net.reached"));
            continue;
        }
        let (outcome, rule) = p.verdict_line();
        if outcome != Outcome::Refused && !p.reachable {
            evidence.push(p.evidence(
                format!(
                    "not judged: this machine cannot resolve or reach that host itself, so a failed fetch tells nothing ({})",
                    p.reply()
                ),
                VerifiedBy::Response,
                "net.unreachable",
            ));
            continue;
        }
        let code = if outcome == Outcome::Refused { "net.refused" } else { "net.unproven" };
        if outcome != Outcome::Refused && !obs.control_worked(&p.tool) {
            unproven.push(p);
        }
        let word = match outcome {
            Outcome::Refused => "refused",
            Outcome::Answered => "not refused",
            Outcome::Failed => "not refused",
        };
        evidence.push(p.evidence(format!("{word}, {rule}: {}", p.reply()), VerifiedBy::Response, code));
    }
    evidence.sort_by_key(|e| match e.code.as_deref() {
        Some("net.reached") => 0,
        Some("net.unproven") => 1,
        _ => 2,
    });
    if !failed.is_empty() {
        return Finding::new(
            Verdict::Fail,
            format!(
                "{} of {} {label} reached the harness: {}",
                failed.len(),
                probes.len(),
                clip(&failed.join(", "), 160)
            ),
            evidence,
        );
    }
    if probes.is_empty() {
        return Finding::new(Verdict::Inconclusive, "no probe could be sent", evidence);
    }
    if let Some(first) = unproven.first() {
        // A control refused as loopback is the defence at work, not a tool that cannot fetch.
        let refused_control =
            obs.controls.iter().any(|c| c.tool == first.tool && c.verdict_line().0 == Outcome::Refused);
        let no_control = obs.control_url.is_some() && !obs.control_worked(&first.tool) && !refused_control;
        let why = if no_control {
            format!("{} cannot fetch the control URL, so it fetches nothing and its refusals prove nothing", first.tool)
        } else {
            format!(
                "{} of {} replies did not say the target was refused (first: {} on {}); a reply that only reports a failed fetch is not read as a refusal, and net.control_url would show whether the tool can fetch at all",
                unproven.len(),
                probes.len(),
                first.probe,
                first.tool
            )
        };
        return Finding::new(Verdict::Inconclusive, why, evidence);
    }
    let tools = obs.tools.join(", ");
    let by = if obs.tools.iter().all(|t| obs.control_worked(t)) {
        "a control fetch worked and nothing reached the listener"
    } else {
        "refused"
    };
    Finding::new(Verdict::Pass, format!("{} {label} on {tools}: {by}", probes.len()), evidence)
}

pub fn loopback_ssrf(obs: &NetObservations) -> Finding {
    judge_probes(
        obs,
        &obs.ssrf,
        |p| {
            (!p.hits.is_empty()).then(|| format!("the listener received {} whatever the reply said", p.hits.join(", ")))
        },
        "spellings of the listener's address",
    )
}

/// What shows a scheme probe was not fetched, and why, if anything does.
fn scheme_proof(obs: &NetObservations, p: &NetProbe) -> Option<&'static str> {
    let declined = matches!(p.delivery, Delivery::ToolError | Delivery::RpcError(_));
    if refusal::refuses_scheme(&p.text, p.delivery, std::slice::from_ref(&p.url)) {
        return Some("the reply refuses the scheme or protocol");
    }
    // Reading a file or decoding data needs no network: a declined reply without the
    // secret shows it was not read, whatever the wording.
    if matches!(p.probe.as_str(), "file" | "file-localhost" | "data") && declined {
        return Some("declined, and the secret the URL leads to did not come back: it was not read");
    }
    if !matches!(p.probe.as_str(), "file" | "file-localhost" | "data")
        && p.delivery != Delivery::NoAnswer
        && fetches(obs, &p.tool)
    {
        return Some(
            "the tool fetches http (shown by the control or a probe that reached the listener), and this scheme reached nothing",
        );
    }
    if far_twin(obs, p)
        .is_some_and(|far| refusal::refuses_scheme(&far.text, far.delivery, std::slice::from_ref(&far.url)))
    {
        return Some(
            "its far twin (the same scheme at a .invalid host, which no address rule refuses as loopback) was refused for its scheme",
        );
    }
    None
}

/// The far twin of a listener spelling (`gopher-far` of `gopher`) on the same tool.
fn far_twin<'o>(obs: &'o NetObservations, p: &NetProbe) -> Option<&'o NetProbe> {
    let name = format!("{}{FAR}", p.probe);
    obs.schemes.iter().find(|f| f.tool == p.tool && f.probe == name)
}

/// A far twin's line: what came of it, as evidence for its listener spelling.
fn far_evidence(p: &NetProbe) -> Evidence {
    let refused = refusal::refuses_scheme(&p.text, p.delivery, std::slice::from_ref(&p.url));
    let what = if refused { "refused for its scheme" } else { "not refused for its scheme" };
    p.evidence(format!("{what}: {}", p.reply()), VerifiedBy::Response, "net.far")
}

pub fn scheme_allowlist(obs: &NetObservations) -> Finding {
    if obs.tools.is_empty() {
        return Finding::new(Verdict::Na, "no url tool", vec![]);
    }
    let mut evidence = obs.control_evidence();
    let (mut failed, mut unproven) = (Vec::new(), Vec::new());
    let mut judged = 0;
    for p in &obs.schemes {
        let far = p.probe.ends_with(FAR);
        judged += usize::from(!far);
        if far && !p.leaked && p.hits.is_empty() {
            evidence.push(far_evidence(p));
        } else if p.leaked || p.connections > 0 || !p.hits.is_empty() {
            let what = if p.leaked {
                format!("the secret came back in the reply: {}", p.reply())
            } else {
                format!("the listener accepted {} connection(s) during the call", p.connections)
            };
            failed.push(format!("{} on {}", p.probe, p.tool));
            evidence.push(p.evidence(
                what,
                if p.leaked { VerifiedBy::Response } else { VerifiedBy::Listener },
                "net.reached",
            ));
        } else if let Some(why) = scheme_proof(obs, p) {
            evidence.push(p.evidence(
                format!("not fetched: {why}: {}", p.reply()),
                VerifiedBy::Response,
                "net.refused",
            ));
        } else {
            let (outcome, rule) = p.verdict_line();
            let why = if outcome == Outcome::Refused {
                format!(
                    "refused, but for its address rather than its scheme ({rule}), which does not show the scheme is refused"
                )
            } else {
                format!("not shown refused ({rule})")
            };
            evidence.push(p.evidence(format!("{why}: {}", p.reply()), VerifiedBy::Response, "net.unproven"));
            unproven.push(p);
        }
    }
    evidence.sort_by_key(|e| match e.code.as_deref() {
        Some("net.reached") => 0,
        Some("net.unproven") => 1,
        Some("net.far") => 3,
        _ => 2,
    });
    let n = judged;
    if !failed.is_empty() {
        return Finding::new(
            Verdict::Fail,
            format!("{} of {n} non-http(s) URLs were fetched: {}", failed.len(), clip(&failed.join(", "), 160)),
            evidence,
        );
    }
    if n == 0 {
        return Finding::new(Verdict::Inconclusive, "no probe could be sent", evidence);
    }
    if let Some(first) = unproven.first() {
        return Finding::new(
            Verdict::Inconclusive,
            format!(
                "{} of {n} probes were not shown to be refused for their scheme (first: {} on {}); a refusal of the address, or a reply that only reports a failed fetch, does not show it",
                unproven.len(),
                first.probe,
                first.tool
            ),
            evidence,
        );
    }
    Finding::new(
        Verdict::Pass,
        format!("{n} non-http(s) URLs on {}: none fetched, each for a reason shown", obs.tools.join(", ")),
        evidence,
    )
}

/// `under N of 64 MiB`, with N the smallest power of two from 8 that is at least the
/// MiB sent, so the line does not change with buffer sizes.
pub fn under_mib(sent: u64) -> String {
    let mib = sent.div_ceil(1024 * 1024);
    let mut n = 8;
    while n < mib && n < 64 {
        n *= 2;
    }
    format!("under {n} of 64 MiB")
}

pub fn oversized_reply(obs: &NetObservations) -> Finding {
    if obs.tools.is_empty() {
        return Finding::new(Verdict::Na, "no url tool", vec![]);
    }
    let mut evidence = Vec::new();
    let mut verdicts = Vec::new();
    for b in &obs.big {
        let (v, outcome) = match (b.sent, b.completed) {
            (None, _) => (
                Verdict::Inconclusive,
                format!("the tool did not fetch the listener ({}), so the cap could not be measured", b.call.reply()),
            ),
            (Some(_), true) => (Verdict::Fail, "the whole 64 MiB reply was read".to_string()),
            (Some(sent), false) => (Verdict::Pass, format!("the server hung up after {}", under_mib(sent))),
        };
        evidence.push(b.call.evidence(
            outcome.clone(),
            VerifiedBy::Listener,
            if v == Verdict::Fail { "net.big.read" } else { "net.big.cut" },
        ));
        verdicts.push((v, format!("{}: {outcome}", b.call.tool)));
    }
    let Some(worst) = verdicts.iter().map(|(v, _)| *v).min_by_key(|v| v.severity_rank()) else {
        return Finding::new(Verdict::Inconclusive, "no oversized fetch was sent", evidence);
    };
    let summary = verdicts.iter().filter(|(v, _)| *v == worst).map(|(_, s)| s.as_str()).collect::<Vec<_>>().join("; ");
    Finding::new(worst, summary, evidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::net::{REDIRECT_VARIANT, SCHEME_VARIANTS, SSRF_VARIANTS};
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// The host of a probe URL, as a fetcher following the URL standard would read it:
    /// it must be the listener (127.0.0.1, [::1], 0.0.0.0 or localhost) on its port.
    fn addresses_only_the_listener(url: &str, port: u16) -> bool {
        let rest = url.to_ascii_lowercase().replace('\\', "/");
        let rest = rest
            .strip_prefix("http://")
            .or_else(|| rest.strip_prefix("http:/"))
            .unwrap_or(&rest)
            .trim_start_matches('/')
            .to_string();
        let authority = rest.split('/').next().unwrap_or_default();
        let hostport = authority.rsplit('@').next().unwrap_or_default();
        let (host, p) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(':') || h.starts_with('[') => (h, p),
            _ => return false,
        };
        if p != port.to_string() {
            return false;
        }
        let host = crate::text::percent_decode(host);
        let host = host.trim_end_matches('.');
        if host == "localhost" {
            return true;
        }
        if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let Ok(a) = v6.parse::<Ipv6Addr>() else { return false };
            return a.is_loopback() || a.to_ipv4_mapped() == Some(Ipv4Addr::LOCALHOST);
        }
        ipv4_of(host).is_some_and(|a| a == Ipv4Addr::LOCALHOST || a == Ipv4Addr::UNSPECIFIED)
    }

    /// The WHATWG IPv4 parser, without octal (which the corpus never uses).
    fn ipv4_of(host: &str) -> Option<Ipv4Addr> {
        let parts: Vec<u64> = host
            .split('.')
            .map(|p| if let Some(h) = p.strip_prefix("0x") { u64::from_str_radix(h, 16).ok() } else { p.parse().ok() })
            .collect::<Option<_>>()?;
        let (last, head) = parts.split_last()?;
        let mut n: u64 = 0;
        for (i, p) in head.iter().enumerate() {
            n |= p << (24 - 8 * i);
        }
        Some(Ipv4Addr::from((n | last) as u32))
    }

    #[test]
    fn every_ssrf_probe_addresses_only_the_listener() {
        for v in SSRF_VARIANTS {
            let url = expand(v.sends, 40123, "sm001", "/c", "");
            assert!(addresses_only_the_listener(&url, 40123), "{} addresses something else: {url}", v.name);
        }
        // The redirect probe goes to the control URL, which must itself be the listener's.
        let url = expand(REDIRECT_VARIANT.sends, 40123, "sm001", "/c", "http://127.0.0.1:40123/control");
        assert!(addresses_only_the_listener(&url, 40123));
    }

    /// The listener, the sandbox, or (for a far twin, and only for one) a host under
    /// .invalid, which resolves nowhere; every listener scheme has its twin.
    #[test]
    fn scheme_probes_target_only_the_listener_the_sandbox_or_nowhere() {
        for v in SCHEME_VARIANTS {
            let url = expand(v.sends, 40123, "sm001", "/sandbox/canary", "");
            let rest = url.split("://").nth(1).unwrap_or_default();
            let ok = if v.name.ends_with(FAR) {
                rest.starts_with("sm001.sealmark.invalid/")
            } else {
                url.starts_with("file://localhost/sandbox/canary/")
                    || url.starts_with("file:///sandbox/canary/")
                    || url.starts_with("data:")
                    || rest.starts_with("127.0.0.1:40123/")
            };
            assert!(ok, "{} aims elsewhere: {url}", v.name);
            if rest.starts_with("127.0.0.1:") {
                let twin = format!("{}{FAR}", v.name);
                assert!(SCHEME_VARIANTS.iter().any(|f| f.name == twin), "{} has no far twin", v.name);
            }
        }
    }

    #[test]
    fn the_corpus_leaves_out_what_the_blind_spots_say() {
        for v in SSRF_VARIANTS {
            for absent in ["0177", "017700000001", "127.0.0.2", "127.000"] {
                assert!(
                    !v.sends.contains(absent),
                    "{} probes {absent}, which the methodology lists as not probed",
                    v.name
                );
            }
        }
    }

    #[test]
    fn under_n_rounds_up_to_a_power_of_two_from_eight() {
        assert_eq!(under_mib(3 * 1024 * 1024), "under 8 of 64 MiB");
        assert_eq!(under_mib(9 * 1024 * 1024), "under 16 of 64 MiB");
        assert_eq!(under_mib(40 * 1024 * 1024), "under 64 of 64 MiB");
    }
}
