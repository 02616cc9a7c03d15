//! Collects what the net pack judges: a control fetch, every spelling of the listener's
//! address, other schemes and an oversized reply, each tied to the listener's record.

use super::call::call_text;
use crate::classify::url_flag;
use crate::classify::{Class, Classification};
use crate::judge::net::{BigProbe, NetObservations, NetProbe, expand};
use crate::judge::refusal::Delivery;
use crate::registry::net::{OVERSIZED_VARIANT, REDIRECT_VARIANT, SCHEME_VARIANTS, SSRF_VARIANTS};
use crate::session::Reply;
use crate::session::runner::{Live, Runner};
use crate::targets::listener::{CONTROL_BODY, Listener};
use crate::tools::ToolInfo;
use serde_json::{Map, Value};

/// How long the listener is given to finish an oversized reply after the call returned.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(6);

struct Caller<'r, 'a, 'l> {
    runner: &'r mut Runner<'a>,
    live: &'r mut Live,
    listener: &'l Listener,
    next_token: u32,
    /// The target's other arguments (a flag that makes a path tool fetch URLs).
    extra: Map<String, Value>,
}

impl Caller<'_, '_, '_> {
    fn token(&mut self) -> String {
        self.next_token += 1;
        let token = format!("sm{:03}", self.next_token);
        self.listener.issue(&token);
        token
    }

    /// Calls `tool` with `url`; returns the probe with what the listener saw for `token`.
    async fn call(
        &mut self,
        probe: &str,
        tool: &str,
        param: &str,
        url: &str,
        token: &str,
        secrets: &[&str],
    ) -> NetProbe {
        let mut p = NetProbe {
            probe: probe.into(),
            tool: tool.into(),
            url: url.into(),
            delivery: Delivery::NoAnswer,
            text: String::new(),
            hits: vec![],
            connections: 0,
            leaked: false,
            reachable: reachable(url, self.listener).await,
        };
        if let Some(held) = self.runner.held(self.live).await {
            p.text = format!("not sent: {}", held.reason());
            return p;
        }
        let (from, conns) = (self.listener.recorded(), self.listener.hits());
        let mut args = self.extra.clone();
        args.insert(param.to_string(), Value::String(url.to_string()));
        let what = format!("{probe} on {tool}");
        let reply = self.runner.send_call(self.live, tool, Value::Object(args), &what, true).await;
        let whole = match reply {
            Reply::Result(r) => {
                let (text, is_error) = call_text(&r);
                p.delivery = if is_error { Delivery::ToolError } else { Delivery::Success };
                p.text = crate::text::clip(&text, 4000);
                r.to_string()
            }
            Reply::Error { code, message } => {
                p.delivery = Delivery::RpcError(code);
                p.text = crate::text::clip(&message, 4000);
                message
            }
            Reply::Timeout { .. } | Reply::Silence | Reply::TooLarge { .. } | Reply::Gone(_) => String::new(),
        };
        // A connection the server made at the very end of its call still counts.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        p.hits = self
            .listener
            .since(from)
            .into_iter()
            .filter(|h| !token.is_empty() && h.path.contains(token))
            .map(|h| h.line)
            .collect();
        p.connections = self.listener.hits() - conns;
        p.leaked = secrets.iter().any(|s| !s.is_empty() && whole.contains(s));
        p
    }
}

/// Whether the harness itself can resolve a URL's host and connect to it, as a fetcher
/// following the URL standard would read the host (lower case, percent-decoded, `\`
/// as `/`, userinfo dropped). Spellings this machine cannot reach (`localhost.` where
/// the resolver refuses it) prove nothing when a fetch of them fails. The connection
/// is announced to the listener first, so it is not counted as the server's.
async fn reachable(url: &str, listener: &Listener) -> bool {
    let lower = url.to_ascii_lowercase().replace('\\', "/");
    let Some((scheme, rest)) = lower.split_once(':') else { return false };
    // Only http(s) spellings are tried: the other schemes are judged by the listener's
    // connection count, which a connection of the harness's own would disturb.
    if !["http", "https"].contains(&scheme) {
        return true;
    }
    let authority = rest.trim_start_matches('/').split('/').next().unwrap_or_default();
    let hostport = crate::text::percent_decode(authority.rsplit('@').next().unwrap_or_default());
    let connect = async {
        let addrs = tokio::net::lookup_host(hostport.as_str()).await.ok()?.collect::<Vec<_>>();
        let addr = *addrs.first()?;
        let (socket, any) = if addr.is_ipv4() {
            (tokio::net::TcpSocket::new_v4().ok()?, "0.0.0.0:0")
        } else {
            (tokio::net::TcpSocket::new_v6().ok()?, "[::]:0")
        };
        socket.bind(any.parse().ok()?).ok()?;
        let port = socket.local_addr().ok()?.port();
        // Only a connection to the listener's port can be mistaken for the server's (any
        // address: 0.0.0.0 and the machine's own addresses reach it too).
        let to_listener = addr.port() == listener.port;
        listener.own(port, to_listener);
        let stream = socket.connect(addr).await.ok();
        if stream.is_none() {
            listener.own(port, false);
        }
        stream
    };
    matches!(tokio::time::timeout(std::time::Duration::from_secs(2), connect).await, Ok(Some(_)))
}

/// Runs the net probes on every url tool.
pub async fn collect(
    runner: &mut Runner<'_>,
    live: &mut Live,
    tools: &[ToolInfo],
    classes: &[Classification],
    listener: &Listener,
) -> NetObservations {
    let targets = runner.targets;
    let sandbox = &targets.sandbox;
    let control_url = runner.config.net_control_url.as_ref().map(|u| targets.expand(u));
    let mut obs = NetObservations { control_url: control_url.clone(), ..Default::default() };
    let mut targets = Vec::new();
    for (tool, class) in tools.iter().zip(classes) {
        // A url tool, or a file tool whose flag switches its path argument to a URL.
        let flag = (class.class == Class::Path).then(|| url_flag(tool)).flatten();
        if class.class != Class::Url && flag.is_none() {
            continue;
        }
        let Some(param) = class.param.clone() else { continue };
        let mut extra = Map::new();
        if let Some(flag) = flag {
            extra.insert(flag.to_string(), Value::Bool(true));
        }
        let unfillable: Vec<&str> =
            tool.required.iter().filter(|r| **r != param && !extra.contains_key(*r)).map(String::as_str).collect();
        if !unfillable.is_empty() {
            runner.gaps.push(format!(
                "{}: required argument(s) {} cannot be filled with a harness-owned value; not probed by the net pack",
                tool.name,
                unfillable.join(", ")
            ));
            continue;
        }
        obs.tools.push(tool.name.clone());
        targets.push((tool.name.clone(), param, extra));
    }
    if targets.is_empty() {
        return obs;
    }
    if !listener.ipv6 {
        obs.skipped.push("ipv6: this machine has no [::1], so the [::1] spelling was not sent".to_string());
    }
    let port = listener.port;
    let canary_dir = sandbox.canary_dir().to_string_lossy().into_owned();
    let fs_canary = sandbox.files.canary.clone();
    let on_listener = control_url.as_ref().filter(|u| u.starts_with(&format!("{}/control", listener.url()))).cloned();
    let mut c = Caller { runner, live, listener, next_token: 0, extra: Map::new() };
    for (tool, param, extra) in &targets {
        c.extra = extra.clone();
        if let Some(url) = &control_url {
            let mut probe = c.call("control", tool, param, url, "", &[CONTROL_BODY]).await;
            if on_listener.is_none() {
                probe.leaked = probe.delivery == Delivery::Success;
            }
            obs.controls.push(probe);
        }
        for v in SSRF_VARIANTS.iter().filter(|v| listener.ipv6 || v.name != "ipv6") {
            let token = c.token();
            let url = expand(v.sends, port, &token, &canary_dir, "");
            obs.ssrf.push(c.call(v.name, tool, param, &url, &token, &[]).await);
        }
        if let Some(control) = &on_listener {
            let token = c.token();
            let url = expand(REDIRECT_VARIANT.sends, port, &token, &canary_dir, control);
            let mut probe = c.call(REDIRECT_VARIANT.name, tool, param, &url, &token, &[]).await;
            // The redirect itself is allowed; only the hop to /t/<token> is a hit.
            probe.hits.retain(|h| h.contains(&format!("/t/{token}")));
            obs.ssrf.push(probe);
        }
        for v in &SCHEME_VARIANTS {
            let token = c.token();
            let url = expand(v.sends, port, &token, &canary_dir, "");
            let secret = if v.name == "data" { crate::judge::net::data_secret(&token) } else { fs_canary.clone() };
            obs.schemes.push(c.call(v.name, tool, param, &url, &token, &[secret.as_str()]).await);
        }
        let token = c.token();
        let base = on_listener.clone().unwrap_or_else(|| listener.url());
        let url = expand(OVERSIZED_VARIANT.sends, port, &token, &canary_dir, &base);
        let from = listener.recorded();
        let probe = c.call(OVERSIZED_VARIANT.name, tool, param, &url, &token, &[]).await;
        listener.settle(from, SETTLE).await;
        let hit = listener.since(from).into_iter().find(|h| h.path.contains(&format!("/big/{token}")));
        obs.big.push(BigProbe {
            call: probe,
            sent: hit.as_ref().map(|h| h.sent),
            completed: hit.is_some_and(|h| h.completed),
        });
    }
    let skipped = obs.skipped.clone();
    c.runner.gaps.extend(skipped);
    obs
}
