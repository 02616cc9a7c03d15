//! Collects what the scope, sql-guard and upstream packs judge: calls aimed through the
//! server at the upstream stub, each tied to the requests the stub recorded.
//!
//! A probe's token (or, for a name that cannot carry one, its last part during its
//! call) is looked for in every request recorded from the moment the call was sent,
//! percent-decoded and in any case. Nothing the server answers decides a verdict.

use super::call::{call_answer, plain_answer};
use super::db::sql_targets;
use crate::config::Problem;
use crate::judge::Answer;
use crate::judge::backend::{BackendObservations, Forward, Reached, ToolRun, hide_token};
use crate::judge::credential::{Caller, CallerCall, Carried, CredentialObservations};
use crate::judge::scope::ScopedTool;
use crate::judge::scope::{allowed_name, names};
use crate::judge::sql_guard::{CONTROL, fill};
use crate::model::Pack;
use crate::registry::backend::CALLER_PROBES;
use crate::registry::backend::{REFERENCE_PROBES, ROWCAP_PROBES, STATEMENT_PROBES};
use crate::session::runner::{Live, Runner};
use crate::targets::RunError;
use crate::targets::sandbox::random_hex;
use crate::targets::stub::Stub;
use crate::tools::ToolInfo;
use crate::upstream::Recorded;
use serde_json::{Map, Value, json};

/// At most this much of a forwarded body is kept as evidence (and read for a row cap).
const BODY_KEEP: usize = 4096;

/// What marks a request as this probe's arrival at the stub.
enum Mark {
    /// The probe's token, anywhere in a request recorded since the call was sent.
    Token(String),
    /// A name's last part, in a request recorded during the call.
    Named(String),
    /// Any request recorded during the call (the control of an exact allowed name).
    Any,
}

/// One call to aim: the real arguments, the arguments reports show, and its mark.
struct Shot {
    probe: String,
    tool: String,
    args: Map<String, Value>,
    shown: Value,
    mark: Mark,
}

struct Aimer<'r, 'a, 's> {
    runner: &'r mut Runner<'a>,
    live: &'r mut Live,
    stub: &'s Stub,
}

impl Aimer<'_, '_, '_> {
    /// Sends one call in the main session and reads what reached the stub.
    async fn fire(&mut self, shot: Shot) -> Forward {
        let mut forward = Forward {
            probe: shot.probe,
            tool: shot.tool,
            args: shot.shown,
            answer: Answer::Silence,
            reached: Vec::new(),
        };
        if let Some(held) = self.runner.held(self.live).await {
            forward.answer = held.not_sent();
            return forward;
        }
        let before = self.stub.count();
        let what = format!("{} on {}", forward.probe, forward.tool);
        let reply = self.runner.send_call(self.live, &forward.tool, Value::Object(shot.args), &what, true).await;
        forward.answer = call_answer(Ok(reply));
        // A request the server makes as it answers still belongs to this call.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        forward.reached = reached(&self.stub.since(before), &shot.mark);
        forward
    }
}

/// The requests of `log` that carry `mark`, as evidence shows them.
fn reached(log: &[Recorded], mark: &Mark) -> Vec<Reached> {
    let token = match mark {
        Mark::Token(t) => t.as_str(),
        _ => "",
    };
    log.iter()
        .filter(|r| match mark {
            Mark::Token(t) | Mark::Named(t) => searchable(r).contains(&t.to_ascii_lowercase()),
            Mark::Any => true,
        })
        .map(|r| {
            let query = if r.query.is_empty() { String::new() } else { format!("?{}", r.query) };
            let body = crate::text::clip(&r.body, BODY_KEEP);
            Reached {
                target: hide_token(&format!("{} {}{query}", r.method, r.path), token),
                body: hide_token(&body, token),
            }
        })
        .collect()
}

/// A request as one lower-case, percent-decoded text: target, header values, body.
fn searchable(r: &Recorded) -> String {
    let headers: Vec<&str> = r.headers.iter().map(|(_, v)| v.as_str()).collect();
    let raw = format!("{} {}?{} {} {}", r.method, r.path, r.query, headers.join(" "), r.body);
    crate::text::percent_decode(&raw).to_ascii_lowercase()
}

/// A fresh token: lower-case hex, so any spelling of it can be found.
fn mint() -> String {
    random_hex(6)
}

/// Runs the probes of every candidate pack that runs, in the main session (caller a),
/// then the caller sessions of the upstream pack.
pub async fn collect(
    runner: &mut Runner<'_>,
    live: &mut Live,
    tools: &[ToolInfo],
    classes: &[crate::classify::Classification],
    stub: &Stub,
) -> Result<BackendObservations, RunError> {
    let config = runner.config;
    let mut obs =
        BackendObservations { row_cap: config.setting_u64("sql-guard-rowcap", "row_cap"), ..Default::default() };
    let scoped = if config.runs_pack(Pack::Scope) { scoped_tools(runner, tools)? } else { Vec::new() };
    let mut sql =
        if config.runs_pack(Pack::SqlGuard) { sql_targets(runner, tools, classes, "sql-guard")? } else { Vec::new() };
    // sql-guard judges what a read tool lets through; a tool that writes by design is named.
    sql.retain(|t| match &t.writer {
        Some(why) => {
            runner.gaps.push(format!(
                "{}: a SQL tool that writes by design ({why}); the sql-guard pack judges read tools only",
                t.tool
            ));
            false
        }
        None => true,
    });
    let scope = &config.scope;
    let mut aimer = Aimer { runner, live, stub };
    let allowed = allowed_name(scope);
    for (tool, param) in &scoped {
        let exact = scope.allow.iter().any(|e| e == &allowed);
        let control = aimer
            .fire(Shot {
                probe: "control".into(),
                tool: tool.clone(),
                args: one_arg(param, &allowed),
                shown: Value::Object(one_arg(param, &allowed)),
                mark: if exact { Mark::Any } else { Mark::Named(allowed.to_ascii_lowercase()) },
            })
            .await;
        let mut run = ToolRun { tool: tool.clone(), control, probes: Vec::new() };
        if run.control_held() {
            for n in names(scope, mint) {
                let needle = n.needle(scope.separator);
                let shown = n.token.as_deref().map_or(n.name.clone(), |t| hide_token(&n.name, t));
                let mark = if n.token.is_some() { Mark::Token(needle) } else { Mark::Named(needle) };
                let shot = Shot {
                    probe: n.probe.to_string(),
                    tool: tool.clone(),
                    args: one_arg(param, &n.name),
                    shown: Value::Object(one_arg(param, &shown)),
                    mark,
                };
                run.probes.push(aimer.fire(shot).await);
            }
        }
        obs.scope.push(run);
    }
    if scope.allow.is_empty() {
        obs.references_na = Some("n/a until scope.allow is set: the references need an in-scope name".to_string());
    }
    for target in &sql {
        let statement = |probe: &str, template: &str| {
            let token = mint();
            Shot {
                probe: probe.to_string(),
                tool: target.tool.clone(),
                args: target.args(&fill(template, scope, &token)),
                shown: Value::Object(target.args(&fill(template, scope, "{token}"))),
                mark: Mark::Token(token),
            }
        };
        let control = aimer.fire(statement("control", CONTROL)).await;
        let mut runs = [
            ToolRun { tool: target.tool.clone(), control: control.clone(), probes: Vec::new() },
            ToolRun { tool: target.tool.clone(), control: control.clone(), probes: Vec::new() },
            ToolRun { tool: target.tool.clone(), control, probes: Vec::new() },
        ];
        if runs[0].control_held() {
            for p in &STATEMENT_PROBES {
                runs[0].probes.push(aimer.fire(statement(p.name, p.sends)).await);
            }
            if obs.references_na.is_none() {
                for p in &REFERENCE_PROBES {
                    runs[1].probes.push(aimer.fire(statement(p.name, p.sends)).await);
                }
            }
            for p in &ROWCAP_PROBES {
                runs[2].probes.push(aimer.fire(statement(p.name, p.sends)).await);
            }
        }
        let [statements, references, rowcap] = runs;
        obs.statements.push(statements);
        obs.references.push(references);
        obs.rowcap.push(rowcap);
    }
    if config.runs_pack(Pack::Upstream) {
        let mut candidates: Vec<(String, Map<String, Value>)> = config
            .probes
            .iter()
            .filter(|p| !p.is_check())
            .map(|p| {
                let args = p
                    .args
                    .iter()
                    .map(|(k, v)| (k.clone(), super::probes::fill(aimer.runner, v, &mint())))
                    .collect::<Map<String, Value>>();
                (p.tool.clone(), args)
            })
            .collect();
        candidates.extend(scoped.iter().map(|(tool, param)| (tool.clone(), one_arg(param, &allowed))));
        candidates.extend(sql.iter().map(|t| (t.tool.clone(), t.args(&fill(CONTROL, scope, &mint())))));
        obs.credential = credential(aimer.runner, aimer.live, aimer.stub, &candidates).await;
    }
    Ok(obs)
}

fn one_arg(param: &str, value: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(param.to_string(), Value::String(value.to_string()));
    m
}

/// What the tool list refutes in `scope.tools`: a tool or parameter the server does not
/// declare.
pub fn scope_tools_problems(config: &crate::config::Config, tools: &[ToolInfo]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (i, ScopedTool { tool, param, line }) in config.scope.tools.iter().enumerate() {
        let Some(t) = tools.iter().find(|t| &t.name == tool) else {
            let hint = crate::registry::did_you_mean_hint(tool, tools.iter().map(|t| t.name.as_str()));
            let message = format!("the server declares no tool \"{tool}\"{hint}");
            problems.push(Problem::at(*line, format!("scope.tools[{i}].tool"), message));
            continue;
        };
        if !t.params.iter().any(|(n, _)| n == param) {
            let names: Vec<&str> = t.params.iter().map(|(n, _)| n.as_str()).collect();
            let hint = crate::registry::did_you_mean_hint(param, names.iter().copied());
            let message = format!(
                "{tool} has no parameter \"{param}\"{hint} (its parameters: {})",
                if names.is_empty() { "none".to_string() } else { names.join(", ") }
            );
            problems.push(Problem::at(*line, format!("scope.tools[{i}].param"), message));
        }
    }
    problems
}

/// `scope.tools` checked against what the server declares: a tool or parameter that does
/// not exist is a config error (exit 2); a tool with other required arguments is a gap.
fn scoped_tools(runner: &mut Runner<'_>, tools: &[ToolInfo]) -> Result<Vec<(String, String)>, RunError> {
    let problems = scope_tools_problems(runner.config, tools);
    if !problems.is_empty() {
        return Err(super::refused(runner.config, problems));
    }
    let mut out = Vec::new();
    for ScopedTool { tool, param, .. } in &runner.config.scope.tools {
        let Some(t) = tools.iter().find(|t| &t.name == tool) else { continue };
        let others: Vec<&str> = t.required.iter().filter(|r| *r != param).map(String::as_str).collect();
        if others.is_empty() {
            out.push((tool.clone(), param.clone()));
        } else {
            runner
                .gaps
                .push(format!("{tool}: requires {} besides {param}; not probed by the scope pack", others.join(", ")));
        }
    }
    Ok(out)
}

/// The upstream pack: find a call that reaches the stub as caller a, then make it as b,
/// as a again and anonymously, each in its own session.
async fn credential(
    runner: &mut Runner<'_>,
    live: &mut Live,
    stub: &Stub,
    candidates: &[(String, Map<String, Value>)],
) -> CredentialObservations {
    let mut obs = CredentialObservations {
        bearer: runner.uses_bearer(),
        identities: runner.targets.callers.identities,
        ..Default::default()
    };
    if !obs.bearer {
        return obs;
    }
    if candidates.is_empty() {
        obs.no_call = Some(
            "no call to make: list one under probes:, or declare scope.tools or a SQL tool, so a call can reach the upstream"
                .to_string(),
        );
        return obs;
    }
    let mut tried = Vec::new();
    let mut chosen = None;
    for (tool, args) in candidates.iter().take(3) {
        let call = call_as(runner, live, stub, Caller::A, CALLER_PROBES[0].name, tool, args).await;
        if call.session_refused.is_some() {
            obs.calls.push(call);
            return obs;
        }
        if !call.requests.is_empty() {
            obs.calls.push(call);
            chosen = Some((tool, args));
            break;
        }
        tried.push(format!("{tool} ({})", call.answer.brief()));
    }
    let Some((tool, args)) = chosen else {
        obs.no_call = Some(format!("no call reached the upstream stub as caller a; tried {}", tried.join("; ")));
        return obs;
    };
    for (caller, probe) in
        [(Caller::B, &CALLER_PROBES[1]), (Caller::A, &CALLER_PROBES[2]), (Caller::Anonymous, &CALLER_PROBES[3])]
    {
        obs.calls.push(call_as(runner, live, stub, caller, probe.name, tool, args).await);
    }
    obs
}

/// One call in a fresh session opened as `caller`, with what the stub saw during it.
async fn call_as(
    runner: &mut Runner<'_>,
    live: &mut Live,
    stub: &Stub,
    caller: Caller,
    probe: &str,
    tool: &str,
    args: &Map<String, Value>,
) -> CallerCall {
    let mut call = CallerCall {
        probe: probe.to_string(),
        caller,
        tool: tool.to_string(),
        args: Value::Object(args.clone()),
        session_refused: None,
        answer: Answer::Silence,
        requests: Vec::new(),
    };
    if let Some(held) = runner.held(live).await {
        call.answer = held.not_sent();
        return call;
    }
    let mut session = match runner.open_as(live, caller).await {
        Ok(s) => s,
        Err(why) => {
            call.session_refused = Some(why);
            return call;
        }
    };
    let before = stub.count();
    let what = format!("{probe} on {tool}");
    let reply = session.request("tools/call", json!({"name": tool, "arguments": args}), &what).await;
    // The caller's session is another session of the same server: its books are the run's.
    runner.note(live, &reply, &what, true);
    runner.absorb(&mut session);
    call.answer = plain_answer(reply);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let (a, b) = (runner.targets.callers.a.as_str(), runner.targets.callers.b.as_str());
    call.requests = stub
        .since(before)
        .iter()
        .map(|r| {
            let text = format!("{}?{} {:?} {}", r.path, r.query, r.headers, r.body);
            Carried {
                target: format!("{} {}", r.method, r.path),
                token_a: text.contains(a),
                token_b: text.contains(b),
                credential_headers: r
                    .headers
                    .iter()
                    .filter(|(name, _)| is_credential_header(name))
                    .map(|(name, _)| name.clone())
                    .collect(),
            }
        })
        .collect();
    call
}

/// Whether a header (lower-case name) carries a credential.
fn is_credential_header(name: &str) -> bool {
    matches!(name, "authorization" | "proxy-authorization" | "cookie")
        || ["token", "auth", "api-key", "apikey", "api_key", "secret", "password"].iter().any(|w| name.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(path: &str, body: &str) -> Recorded {
        Recorded { method: "POST".into(), path: path.into(), query: String::new(), headers: vec![], body: body.into() }
    }

    #[test]
    fn tokens_are_found_decoded_in_any_case_and_hidden_in_evidence() {
        let log = vec![req("/other", ""), req("/tables/sales%2Esm_AB12", ""), req("/sql", "SELECT 1 FROM SM_AB12")];
        let got = reached(&log[1..], &Mark::Token("ab12".into()));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].target, "POST /tables/sales%2Esm_{token}");
        assert_eq!(got[1].body, "SELECT 1 FROM SM_{token}");
        assert_eq!(reached(&log, &Mark::Any).len(), 3);
        assert_eq!(crate::text::percent_decode("a%2Eb%zz%4%+1"), "a.b%zz%4%+1");
    }
}
