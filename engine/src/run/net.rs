//! Collects what the net pack judges: a control fetch, every spelling of the listener's
//! address, other schemes and an oversized reply, each tied to the listener's record.

use super::core::{MAX_TIMEOUTS, call_text};
use super::listener::{CONTROL_BODY, Listener};
use super::sandbox::Sandbox;
use super::session::Reply;
use super::{Held, Live, Runner};
use crate::judge::net::{
    BigProbe, NetObservations, NetProbe, OVERSIZED_VARIANT, REDIRECT_VARIANT, SCHEME_VARIANTS, SSRF_VARIANTS, expand,
};
use crate::judge::refusal::Delivery;
use crate::record::Classification;
use crate::tools::ToolInfo;
use serde_json::{Map, Value, json};

/// How long the listener is given to finish an oversized reply after the call returned.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(6);

struct Caller<'r, 'a, 'l> {
    runner: &'r mut Runner<'a>,
    live: &'r mut Live,
    listener: &'l Listener,
    next_token: u32,
    skipped: u32,
}

impl Caller<'_, '_, '_> {
    fn token(&mut self) -> String {
        self.next_token += 1;
        format!("sm{:03}", self.next_token)
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
        };
        match self.runner.held(self.live).await {
            Some(held @ Held::Budget) => {
                self.skipped += 1;
                p.text = format!("not sent: {}", held.reason());
                return p;
            }
            Some(held) => {
                p.text = held.reason();
                return p;
            }
            None => {}
        }
        let (from, conns) = (self.listener.recorded(), self.listener.hits());
        let mut args = Map::new();
        args.insert(param.to_string(), Value::String(url.to_string()));
        let reply = self
            .live
            .session
            .request("tools/call", json!({"name": tool, "arguments": args}), &format!("{probe} on {tool}"))
            .await;
        let whole = match reply {
            Reply::Result(r) => {
                let (text, is_error) = call_text(&r);
                p.delivery = if is_error { Delivery::ToolError } else { Delivery::Success };
                p.text = crate::judge::text::clip(&text, 4000);
                r.to_string()
            }
            Reply::Error { code, message } => {
                p.delivery = Delivery::RpcError(code);
                p.text = crate::judge::text::clip(&message, 4000);
                message
            }
            Reply::Timeout => {
                self.runner.timeouts += 1;
                String::new()
            }
            Reply::Silence | Reply::TooLarge => String::new(),
            Reply::Gone(why) => {
                self.live.gone = Some(why);
                String::new()
            }
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

/// Runs the net probes on every url tool.
pub async fn collect(
    runner: &mut Runner<'_>,
    live: &mut Live,
    tools: &[ToolInfo],
    classes: &[Classification],
    sandbox: &Sandbox,
    listener: &Listener,
) -> NetObservations {
    let control_url = runner.config.net_control_url.as_ref().map(|u| sandbox.expand(u));
    let mut obs = NetObservations { control_url: control_url.clone(), ..Default::default() };
    let mut targets = Vec::new();
    for (tool, class) in tools.iter().zip(classes) {
        if class.class != "url" {
            continue;
        }
        let Some(param) = class.param.clone() else { continue };
        let unfillable: Vec<&str> = tool.required.iter().filter(|r| **r != param).map(String::as_str).collect();
        if !unfillable.is_empty() {
            runner.gaps.push(format!(
                "{}: required argument(s) {} cannot be filled with a harness-owned value; not probed by the net pack",
                tool.name,
                unfillable.join(", ")
            ));
            continue;
        }
        obs.tools.push(tool.name.clone());
        targets.push((tool.name.clone(), param));
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
    let mut c = Caller { runner, live, listener, next_token: 0, skipped: 0 };
    for (tool, param) in &targets {
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
        let url = format!("{base}/big/{token}");
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
    if c.skipped > 0 {
        let n = c.skipped;
        c.runner.gaps.push(format!("net: {n} call(s) not sent after {MAX_TIMEOUTS} calls went unanswered"));
    }
    let skipped = obs.skipped.clone();
    c.runner.gaps.extend(skipped);
    obs
}
