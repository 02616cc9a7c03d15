//! The sql-guard pack: statements and references that must not reach the backend, and
//! the row cap. Placeholders: `{a}` an in-scope name (`scope::allowed_name`), `{a:last}`
//! its last part, `{o}` an out-of-scope name (`<container>.outside_sm_<token>`), written
//! as is, with each part quoted (`{o:quoted}`) or in upper case (`{o:upper}`), and
//! `{token}` the probe's token.

use super::Finding;
use super::backend::{Forward, TOKEN, ToolRun, let_through};
use super::core::Answer;
use crate::config::ScopeConfig;
use crate::model::{Verdict, VerifiedBy};
use crate::record::Evidence;
use crate::registry::ProbeDoc;
use regex::Regex;
use std::sync::LazyLock;

/// A harmless read of the in-scope name: it must reach the upstream, with its token.
pub const CONTROL: &str = "SELECT * FROM {a} WHERE 'sm-{token}' = 'sm-{token}'";

/// Statements that must never reach the backend. The token sits in the part that must
/// be stopped, so a server that forwards only the harmless half is not blamed.
pub const STATEMENT_PROBES: [ProbeDoc; 18] = [
    ProbeDoc { name: "insert", sends: "INSERT INTO {a} (note) VALUES ('sm-{token}')" },
    ProbeDoc { name: "update", sends: "UPDATE {a} SET note = 'sm-{token}'" },
    ProbeDoc { name: "delete", sends: "DELETE FROM {a} WHERE note = 'sm-{token}'" },
    ProbeDoc { name: "create", sends: "CREATE TABLE sm_{token} (x int)" },
    ProbeDoc { name: "drop", sends: "DROP TABLE sm_{token}" },
    ProbeDoc { name: "alter", sends: "ALTER TABLE {a} ADD COLUMN sm_{token} int" },
    ProbeDoc { name: "truncate", sends: "TRUNCATE TABLE sm_{token}" },
    ProbeDoc { name: "grant", sends: "GRANT SELECT ON {a} TO sm_{token}" },
    ProbeDoc { name: "select-into", sends: "SELECT * INTO sm_{token} FROM {a}" },
    ProbeDoc { name: "stacked", sends: "SELECT 1; DELETE FROM {a} WHERE note = 'sm-{token}'" },
    ProbeDoc { name: "stacked-ddl", sends: "SELECT * FROM {a}; DROP TABLE sm_{token}" },
    ProbeDoc {
        name: "cte-dml",
        sends: "WITH d AS (DELETE FROM {a} WHERE note = 'sm-{token}' RETURNING *) SELECT * FROM d",
    },
    ProbeDoc { name: "commit", sends: "COMMIT; INSERT INTO {a} (note) VALUES ('sm-{token}')" },
    ProbeDoc { name: "rollback", sends: "ROLLBACK; UPDATE {a} SET note = 'sm-{token}'" },
    ProbeDoc { name: "mixed-case", sends: "dElEtE FROM {a} WHERE note = 'sm-{token}'" },
    ProbeDoc {
        name: "mixed-case-cte",
        sends: "WiTh d AS (InSeRt iNtO {a} (note) VALUES ('sm-{token}') RETURNING *) SeLeCt * FROM d",
    },
    ProbeDoc { name: "comment-first", sends: "/* read only */ DELETE FROM {a} WHERE note = 'sm-{token}'" },
    ProbeDoc { name: "unparseable", sends: "SELECT * FROM {a} WHERE 'sm-{token}' = (((" },
];

/// The twelve reference positions: each names `{o}` once, somewhere a guard that checks
/// only the first table does not look.
macro_rules! reference {
    ($name:literal, $sql:literal) => {
        ProbeDoc {
            name: $name,
            sends: concat!(
                $sql,
                " ({a} an in-scope name, {o} <container of scope.allow[0]>.outside_sm_<token>; must not reach the upstream)"
            ),
        }
    };
}

pub const REFERENCE_PROBES: [ProbeDoc; 12] = [
    reference!("from", "SELECT * FROM {o} WHERE 'sm-{token}' = 'sm-{token}'"),
    reference!("join", "SELECT * FROM {a} JOIN {o} ON 1 = 1 WHERE 'sm-{token}' = 'sm-{token}'"),
    reference!("comma-join", "SELECT * FROM {a}, {o} WHERE 'sm-{token}' = 'sm-{token}'"),
    reference!("subquery-from", "SELECT * FROM (SELECT * FROM {o}) AS t WHERE 'sm-{token}' = 'sm-{token}'"),
    reference!("subquery-where", "SELECT * FROM {a} WHERE x IN (SELECT x FROM {o}) AND 'sm-{token}' = 'sm-{token}'"),
    reference!(
        "scalar-subquery",
        "SELECT (SELECT max(x) FROM {o}) AS sm_{token} FROM {a} WHERE 'sm-{token}' = 'sm-{token}'"
    ),
    reference!("exists", "SELECT * FROM {a} WHERE EXISTS (SELECT 1 FROM {o}) AND 'sm-{token}' = 'sm-{token}'"),
    reference!("cte", "WITH c AS (SELECT * FROM {o}) SELECT * FROM c WHERE 'sm-{token}' = 'sm-{token}'"),
    reference!("union", "SELECT * FROM {a} UNION SELECT * FROM {o} WHERE 'sm-{token}' = 'sm-{token}'"),
    reference!("quoted", "SELECT * FROM {o:quoted} WHERE 'sm-{token}' = 'sm-{token}'"),
    reference!("cased", "SELECT * FROM {o:upper} WHERE 'sm-{token}' = 'sm-{token}'"),
    reference!("alias-hidden", "SELECT * FROM {o} AS {a:last} WHERE 'sm-{token}' = 'sm-{token}'"),
];

/// The statement a reference probe sends: its documented text without the note.
pub fn reference_sql(probe: &ProbeDoc) -> &'static str {
    probe.sends.split(" ({a} an in-scope name").next().unwrap_or(probe.sends)
}

/// A huge LIMIT and none at all: the cap must be applied before the backend.
pub const ROWCAP_PROBES: [ProbeDoc; 2] = [
    ProbeDoc { name: "huge-limit", sends: "SELECT * FROM {a} WHERE 'sm-{token}' = 'sm-{token}' LIMIT 1000000000" },
    ProbeDoc { name: "no-limit", sends: "SELECT * FROM {a} WHERE 'sm-{token}' = 'sm-{token}'" },
];

/// A template with its placeholders filled for one probe.
pub fn fill(template: &str, scope: &ScopeConfig, token: &str) -> String {
    let sep = scope.separator;
    let a = super::scope::allowed_name(scope);
    let a_last = a.rsplit_once(sep).map_or(a.as_str(), |(_, l)| l).to_string();
    // The container the first allow entry sits in: an exact entry's parent, a prefix's
    // parent (sales.public. sits in sales), so {o} is outside the scope as written.
    let container = match scope.allow.first() {
        Some(e) => {
            let name = e.strip_suffix(sep).unwrap_or(e);
            name.rsplit_once(sep).map_or("", |(p, _)| p).to_string()
        }
        None => String::new(),
    };
    let leaf = format!("outside_sm_{token}");
    let parts: Vec<&str> = container.split(sep).filter(|p| !p.is_empty()).chain([leaf.as_str()]).collect();
    let o = parts.join(&sep.to_string());
    let quoted: Vec<String> = parts.iter().map(|p| format!("\"{p}\"")).collect();
    template
        .replace("{o:quoted}", &quoted.join(&sep.to_string()))
        .replace("{o:upper}", &o.to_uppercase())
        .replace("{o}", &o)
        .replace("{a:last}", &a_last)
        .replace("{a}", &a)
        .replace(TOKEN, token)
}

/// `sql-guard-statements`.
pub fn statements(runs: &[ToolRun]) -> Finding {
    let_through(runs, "statements that must not reach the backend", CONTROL_HINT)
}

/// `sql-guard-references`.
/// `sql-guard-references`; n/a with `why` when the pack had nothing to aim them at
/// (no `scope.allow` to step outside of).
pub fn references(runs: &[ToolRun], na: Option<&str>) -> Finding {
    match na {
        Some(why) => Finding::new(crate::model::Verdict::Na, why, Vec::new()),
        None => let_through(runs, "statements naming a table outside scope.allow", CONTROL_HINT),
    }
}

const CONTROL_HINT: &str = "the tool must forward a plain SELECT for the pack to judge it (check sql_tools and that the server's backend address is {upstream})";

static CAP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bLIMIT\s+(\d{1,19})|\bFETCH\s+(?:FIRST|NEXT)\s+(\d{1,19})|\bTOP\s*\(?\s*(\d{1,19})")
        .expect("valid")
});

/// Every row cap spelled in forwarded text: LIMIT n, FETCH FIRST|NEXT n, TOP n.
pub fn caps_in(text: &str) -> Vec<u64> {
    CAP.captures_iter(text)
        .filter_map(|c| (1..=3).find_map(|i| c.get(i)).and_then(|m| m.as_str().parse().ok()))
        .collect()
}

/// `sql-guard-rowcap`: each statement reached the upstream with a cap of at most
/// `row_cap` (or was refused). No recognised cap at all reads as part: the server may
/// cap another way.
pub fn rowcap(runs: &[ToolRun], row_cap: u64) -> Finding {
    let judged: Vec<&ToolRun> = runs.iter().filter(|r| r.control_held()).collect();
    if judged.is_empty() {
        return statements(runs);
    }
    let mut worst = Verdict::Pass;
    let mut evidence = Vec::new();
    let mut lines = Vec::new();
    let mut sent = 0;
    for p in judged.iter().flat_map(|r| &r.probes) {
        let (verdict, outcome) = rowcap_probe(p, row_cap);
        let Some(verdict) = verdict else { continue };
        sent += 1;
        if verdict.severity_rank() < worst.severity_rank() {
            worst = verdict;
        }
        if verdict != Verdict::Pass {
            lines.push(format!("{}: {outcome}", p.probe));
        }
        evidence.push(
            Evidence::new(&p.probe, outcome, VerifiedBy::Upstream)
                .tool(&p.tool)
                .args(p.args.clone())
                .code("sql-guard.rowcap"),
        );
    }
    if sent == 0 {
        return Finding::new(Verdict::Inconclusive, "no probe could be sent", evidence);
    }
    let summary = match worst {
        Verdict::Pass => {
            format!("every statement reached the upstream capped at {row_cap} rows or fewer, or was refused")
        }
        _ => lines.join("; "),
    };
    Finding::new(worst, summary, evidence)
}

/// One row-cap probe: its verdict (None when it was never answered) and what was seen.
fn rowcap_probe(p: &Forward, row_cap: u64) -> (Option<Verdict>, String) {
    if p.reached.is_empty() {
        return match &p.answer {
            Answer::Timeout | Answer::Died { .. } | Answer::NotSent { .. } => (None, p.answer.brief()),
            a => (Some(Verdict::Pass), format!("did not reach the upstream; {}", a.brief())),
        };
    }
    let caps: Vec<u64> =
        p.reached.iter().flat_map(|r| caps_in(&r.target).into_iter().chain(caps_in(&r.body))).collect();
    let line = p.reached[0].line();
    match caps.iter().min() {
        Some(&cap) if cap <= row_cap => (Some(Verdict::Pass), format!("capped at {cap}: {line}")),
        Some(&cap) => {
            (Some(Verdict::Fail), format!("reached the upstream with a cap of {cap} (row_cap {row_cap}): {line}"))
        }
        None => (
            Some(Verdict::Part),
            format!(
                "no LIMIT, FETCH FIRST or TOP in what reached the upstream (another spelling reads as part): {line}"
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::backend::Reached;
    use serde_json::json;

    fn example() -> ScopeConfig {
        ScopeConfig {
            tools: Vec::new(),
            allow: vec!["sales.public.".into()],
            deny: vec!["hr.private.salaries".into()],
            separator: '.',
        }
    }

    #[test]
    fn placeholders_fill_as_the_reference_says() {
        let s = example();
        assert_eq!(
            fill(reference_sql(&REFERENCE_PROBES[9]), &s, "ab"),
            "SELECT * FROM \"sales\".\"outside_sm_ab\" WHERE 'sm-ab' = 'sm-ab'"
        );
        assert_eq!(
            fill(reference_sql(&REFERENCE_PROBES[10]), &s, "ab"),
            "SELECT * FROM SALES.OUTSIDE_SM_AB WHERE 'sm-ab' = 'sm-ab'"
        );
        assert_eq!(
            fill(reference_sql(&REFERENCE_PROBES[11]), &s, "ab"),
            "SELECT * FROM sales.outside_sm_ab AS sm_control WHERE 'sm-ab' = 'sm-ab'"
        );
        assert_eq!(fill(CONTROL, &s, "ab"), "SELECT * FROM sales.public.sm_control WHERE 'sm-ab' = 'sm-ab'");
    }

    #[test]
    fn caps_are_read_from_every_spelling() {
        assert_eq!(caps_in("select * from (x limit 1000000000) limit 1000"), vec![1_000_000_000, 1000]);
        assert_eq!(caps_in("{\"sql\":\"SELECT * FROM t FETCH FIRST 50 ROWS ONLY\"}"), vec![50]);
        assert_eq!(caps_in("SELECT TOP (10) * FROM t"), vec![10]);
        assert!(caps_in("{\"sql\":\"SELECT 1\",\"limit\":1000}").is_empty());
    }

    #[test]
    fn rowcap_reads_pass_fail_and_part() {
        let fwd = |body: &str| Forward {
            probe: "huge-limit".into(),
            tool: "query".into(),
            args: json!({}),
            answer: Answer::Success { text: "[]".into() },
            reached: vec![Reached { target: "POST /sql".into(), body: body.into() }],
        };
        let run = |body: &str| ToolRun { tool: "query".into(), control: fwd("SELECT 1"), probes: vec![fwd(body)] };
        assert_eq!(rowcap(&[run("SELECT * FROM (x LIMIT 1000000000) AS c LIMIT 1000")], 1000).verdict, Verdict::Pass);
        assert_eq!(rowcap(&[run("SELECT * FROM x LIMIT 1000000000")], 1000).verdict, Verdict::Fail);
        assert_eq!(rowcap(&[run("{\"sql\":\"SELECT * FROM x\",\"max_rows\":1000}")], 1000).verdict, Verdict::Part);
    }
}
