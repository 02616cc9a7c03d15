//! The upstream pack: does each call reach the backend with its own caller's token?
//!
//! The harness opens sessions as caller a, caller b, a again and anonymously, makes the
//! same forwarding call in each, and reads the credentials on the requests the stub
//! recorded during that call. Token values never reach this module: the runtime says
//! which caller's token a request carried, and names credential headers, not values.

use super::Answer;
use super::Finding;
use crate::model::{Evidence, Verdict, VerifiedBy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Caller {
    A,
    B,
    Anonymous,
}

impl Caller {
    pub fn placeholder(self) -> &'static str {
        match self {
            Caller::A => "{bearer:a}",
            Caller::B => "{bearer:b}",
            Caller::Anonymous => "no credential",
        }
    }
}

/// What one request recorded during a caller's call carried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Carried {
    /// `METHOD path`.
    pub target: String,
    pub token_a: bool,
    pub token_b: bool,
    /// Headers that hold a credential (authorization, cookie, *token*, *key* …), by name.
    pub credential_headers: Vec<String>,
}

/// One call as one caller.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallerCall {
    pub probe: String,
    pub caller: Caller,
    pub tool: String,
    pub args: Value,
    /// Why the session could not be opened, when it could not.
    pub session_refused: Option<String>,
    pub answer: Answer,
    pub requests: Vec<Carried>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CredentialObservations {
    /// The server's headers hold `{bearer}`, so sessions can be opened per caller.
    pub bearer: bool,
    /// identities.a / identities.b replaced the minted tokens.
    pub identities: bool,
    /// The main session (as caller a) could not be opened: the server's words.
    pub main_refused: Option<String>,
    /// Why no forwarding call was found, when none was.
    pub no_call: Option<String>,
    pub calls: Vec<CallerCall>,
}

const HINT: &str = "a server that accepts only tokens it issued needs identities.a and identities.b from the environment (--identity-a '${TOKEN_A}' --identity-b '${TOKEN_B}')";

/// `upstream-credential`.
pub fn credential(obs: &CredentialObservations) -> Finding {
    if !obs.bearer {
        return Finding::new(
            Verdict::Na,
            "no server.headers value holds {bearer}, so the harness cannot call as two different callers",
            Vec::new(),
        );
    }
    let whose = if obs.identities { "the identities.a token" } else { "the minted token {bearer:a}" };
    if let Some(why) = &obs.main_refused {
        return Finding::new(
            Verdict::Inconclusive,
            format!("the server refused {whose} when the session opened ({why}); {HINT}"),
            Vec::new(),
        );
    }
    if obs.calls.is_empty() {
        let why = obs.no_call.clone().unwrap_or_else(|| "no call reached the upstream stub".to_string());
        return Finding::new(Verdict::Inconclusive, why, Vec::new());
    }
    let mut evidence = Vec::new();
    let mut problems = Vec::new();
    for call in &obs.calls {
        let ev = |outcome: String| {
            Evidence::new(&call.probe, outcome, VerifiedBy::Upstream).tool(&call.tool).args(call.args.clone())
        };
        if let Some(why) = &call.session_refused {
            if call.caller == Caller::Anonymous {
                evidence.push(ev(format!("the anonymous session was refused ({why})")).code("upstream.refused"));
                continue;
            }
            let token = if obs.identities { "its identities token" } else { "its minted token" };
            return Finding::new(
                Verdict::Inconclusive,
                format!("the server refused {token} for {} ({why}); {HINT}", call.caller.placeholder()),
                vec![ev(format!("session refused: {why}")).code("upstream.refused")],
            );
        }
        if call.requests.is_empty() {
            if call.caller == Caller::Anonymous {
                evidence
                    .push(ev(format!("nothing reached the upstream; {}", call.answer.brief())).code("upstream.kept"));
                continue;
            }
            return Finding::new(
                Verdict::Inconclusive,
                format!(
                    "the call as {} did not reach the upstream ({}); if the server refused the token, {HINT}",
                    call.caller.placeholder(),
                    call.answer.brief()
                ),
                vec![ev(format!("nothing reached the upstream; {}", call.answer.brief())).code("upstream.kept")],
            );
        }
        for r in &call.requests {
            let (ok, what) = judge_request(call.caller, r);
            let code = if ok { "upstream.credential" } else { "upstream.wrong-credential" };
            if !ok {
                problems.push(format!("{}: {what}", call.probe));
            }
            evidence.push(ev(format!("{} carried {what}", r.target)).code(code));
        }
    }
    if problems.is_empty() {
        Finding::new(
            Verdict::Pass,
            "each caller's calls reached the upstream with that caller's own token; the anonymous call carried none",
            evidence,
        )
    } else {
        problems.dedup();
        evidence.retain(|e| e.code.as_deref() != Some("upstream.credential"));
        Finding::new(Verdict::Fail, problems.join("; "), evidence)
    }
}

/// Whether one request carried the right credential for `caller`, and what it carried.
fn judge_request(caller: Caller, r: &Carried) -> (bool, String) {
    let headers = if r.credential_headers.is_empty() {
        String::new()
    } else {
        format!(" in {}", r.credential_headers.join(", "))
    };
    let (own, other) = match caller {
        Caller::A => (r.token_a, r.token_b),
        Caller::B => (r.token_b, r.token_a),
        Caller::Anonymous => {
            return match (r.token_a || r.token_b, r.credential_headers.is_empty()) {
                (true, _) => (false, "a caller's token on an anonymous call".to_string()),
                (false, false) => (false, format!("a credential that is no caller's (a fixed one){headers}")),
                (false, true) => (true, "no credential".to_string()),
            };
        }
    };
    let other_name = if caller == Caller::A { Caller::B } else { Caller::A }.placeholder();
    match (own, other) {
        (_, true) => (false, format!("the other caller's token {other_name}")),
        (true, false) => (true, format!("its own token {}{headers}", caller.placeholder())),
        (false, false) if !r.credential_headers.is_empty() => {
            (false, format!("a credential that is not the caller's (a fixed one){headers}"))
        }
        (false, false) => (false, "no credential".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn carried(a: bool, b: bool, headers: &[&str]) -> Carried {
        Carried {
            target: "POST /sql".into(),
            token_a: a,
            token_b: b,
            credential_headers: headers.iter().map(|h| h.to_string()).collect(),
        }
    }

    fn call(probe: &str, caller: Caller, requests: Vec<Carried>) -> CallerCall {
        CallerCall {
            probe: probe.into(),
            caller,
            tool: "count_rows".into(),
            args: json!({"table": "sales.public.orders"}),
            session_refused: None,
            answer: Answer::Success { text: "3".into() },
            requests,
        }
    }

    fn obs(calls: Vec<CallerCall>) -> CredentialObservations {
        CredentialObservations { bearer: true, calls, ..Default::default() }
    }

    #[test]
    fn own_tokens_pass_and_every_wrong_credential_fails() {
        let good = obs(vec![
            call("caller-a", Caller::A, vec![carried(true, false, &["authorization"])]),
            call("caller-b", Caller::B, vec![carried(false, true, &["authorization"])]),
            call("anonymous", Caller::Anonymous, vec![carried(false, false, &[])]),
        ]);
        assert_eq!(credential(&good).verdict, Verdict::Pass);
        let first_caller = obs(vec![
            call("caller-a", Caller::A, vec![carried(true, false, &["authorization"])]),
            call("caller-b", Caller::B, vec![carried(true, false, &["authorization"])]),
        ]);
        let f = credential(&first_caller);
        assert_eq!(f.verdict, Verdict::Fail);
        assert!(f.summary.contains("caller-b: the other caller's token {bearer:a}"), "{}", f.summary);
        let fixed = obs(vec![call("caller-a", Caller::A, vec![carried(false, false, &["authorization"])])]);
        assert!(credential(&fixed).summary.contains("a fixed one"));
        let none = obs(vec![call("caller-a", Caller::A, vec![carried(false, false, &[])])]);
        assert!(credential(&none).summary.contains("no credential"));
        let lent = obs(vec![call("anonymous", Caller::Anonymous, vec![carried(false, false, &["x-api-key"])])]);
        assert_eq!(credential(&lent).verdict, Verdict::Fail);
    }

    #[test]
    fn refused_tokens_point_at_identities() {
        let mut o = obs(Vec::new());
        o.main_refused = Some("HTTP 401".into());
        let f = credential(&o);
        assert_eq!(f.verdict, Verdict::Inconclusive);
        assert!(f.summary.contains("identities.a"), "{}", f.summary);
        assert_eq!(credential(&CredentialObservations::default()).verdict, Verdict::Na);
    }
}
