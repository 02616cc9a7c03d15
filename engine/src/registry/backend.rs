//! The candidate packs that read the upstream stub: scope, sql-guard and upstream. Each
//! is scored inside its own pack, which never reaches the badge.

use super::{References, Setting, SettingKind, declare_check};
use crate::model::{Pack, ProbeDoc, VerifiedBy, Weight};

const SCOPE: &str =
    "server (judged by what reached the harness's upstream stub, not by the server's reply; no SQL is parsed)";

const ALLOW: Setting = Setting {
    key: "scope.allow",
    kind: SettingKind::StringList,
    default: "[]",
    locked: false,
    threshold: false,
    meaning: "Identifiers the server may serve. An entry that ends with scope.separator is a prefix (sales.public.); any other entry is exact. Needed when scope.tools is not empty.",
};

const SEPARATOR: Setting = Setting {
    key: "scope.separator",
    kind: SettingKind::Text,
    default: "\".\"",
    locked: false,
    threshold: false,
    meaning: "The one character between the parts of an identifier; an allow entry ending in it is a prefix.",
};

const SQL_TOOLS: Setting = Setting {
    key: "sql_tools",
    kind: SettingKind::Entries { description: "a list of { tool, arg } entries" },
    default: "none",
    locked: false,
    threshold: false,
    meaning: "The tools that take a SQL string, as { tool, arg } (optional role: reader|writer|unknown, where writer leaves the tool out of the read-only checks; shape: string|array, where array sends each probe as a list of that one statement; args: { <parameter>: <string|number|boolean> } for the tool's other required parameters). When given, it replaces discovery: only these tools are probed; when omitted, SQL tools are found by classification.",
};

const UPSTREAM_KIND: Setting = Setting {
    key: "upstream.kind",
    kind: SettingKind::Text,
    default: "none",
    locked: false,
    threshold: false,
    meaning: "http starts a loopback stub that records every request the server forwards (flag --upstream); null starts none. The server must be one sealmark starts and must use {upstream} in its command, args, env, url or headers.",
};

declare_check! {
    /// Identifiers outside the declared scope never reach the backend.
    SCOPE_ESCAPE {
        id: "scope-escape",
        pack: Pack::Scope,
        label: "Identifiers outside the declared scope kept from the backend",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Upstream],
        probes: &NAME_PROBES,
        settings: &[
            Setting {
                key: "scope.tools",
                kind: SettingKind::Text,
                default: "[]",
                locked: false,
                threshold: false,
                meaning: "The tools that take an identifier, as { tool, param }: param is the argument that carries it. Declaring one adds the scope pack.",
            },
            ALLOW,
            Setting {
                key: "scope.deny",
                kind: SettingKind::StringList,
                default: "[]",
                locked: false,
                threshold: false,
                meaning: "Identifiers the server must never serve, exact; each is also sent in upper case and with its parts quoted.",
            },
            SEPARATOR,
            UPSTREAM_KIND,
        ],
        proves_pass: "A control name that reached the stub, then every out-of-scope name answered without its token reaching the stub.",
        verdict: "For each scoped tool the control comes first: the allowed name must be accepted and reach the stub, or the tool is not judged (and with no tool judged the check is inconclusive, with a hint to check the spelling of scope.allow and scope.tools). Then every name outside the scope is sent, each carrying a fresh token; a name that cannot carry one (a bare container, a deny entry) counts when a request made during its call names its last part. A built name the declared scope allows as written is never sent. fail when any name reached the stub; pass when every one was kept from it.",
        fix: "Parse the identifier the way the backend will (quotes, case, encoding, traversal) and check the parsed name against the allow list, part by part with the separator; refuse what the parser rejects instead of passing the raw text on.",
        false_positives: "A server that sends a refused name to the backend in a request that does not serve it (an audit or lookup call) fails: the stub cannot tell that request from one that serves the name.",
        false_negatives: "Only the listed families are tried, built from the first scope.allow entry; a name the server rewrites into something without its token or last part is not recognised.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[285, 22] },
    }
}

declare_check! {
    /// Statements a read-only guard must stop before the backend.
    SQL_GUARD_STATEMENTS {
        id: "sql-guard-statements",
        pack: Pack::SqlGuard,
        label: "SQL guard: writes, DDL and hidden statements blocked before the backend",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Upstream],
        probes: &STATEMENT_PROBES,
        settings: &[SQL_TOOLS, UPSTREAM_KIND],
        proves_pass: "A control statement that reached the stub, then every statement answered without its token reaching the stub.",
        verdict: "Each SQL tool must first forward the control (SELECT * FROM {a} WHERE 'sm-{token}' = 'sm-{token}') with its token; a tool that does not is not judged, and with none the check is inconclusive. Every statement is then sent with a fresh token placed in the part that must be stopped. fail when any token reached the stub; pass when none did.",
        fix: "Parse the statement with the backend's grammar and forward it only when it is exactly one read-only SELECT; refuse what does not parse, and do not look for keywords in the text.",
        false_positives: "None known: a statement whose token reached the stub was forwarded.",
        false_negatives: "Only the listed statements are sent; a server that rewrites a write into something without its token is not caught.",
        references: References { owasp_mcp: "MCP05 Command Injection & Execution", cwe: &[89, 284] },
    }
}

declare_check! {
    /// Out-of-scope table references in every position a guard can overlook.
    SQL_GUARD_REFERENCES {
        id: "sql-guard-references",
        pack: Pack::SqlGuard,
        label: "SQL guard: out-of-scope references blocked in every position",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Upstream],
        probes: &REFERENCE_PROBES,
        settings: &[ALLOW, SEPARATOR, SQL_TOOLS, UPSTREAM_KIND],
        proves_pass: "A control statement that reached the stub, then every reference answered without its token reaching the stub.",
        verdict: "After the control (as for sql-guard-statements), each of the twelve statements names one out-of-scope table {o} that carries the probe's token, in a different position. fail when any token reached the stub; pass when none did. n/a until scope.allow is set.",
        fix: "Check every table reference of the parsed statement against the scope, not only the first: FROM, JOIN, comma joins, subqueries in FROM, WHERE and the select list, EXISTS, CTEs, UNION branches, quoted and differently cased names, and names hidden behind an alias; refuse the whole statement when any one is out of scope.",
        false_positives: "None known: an out-of-scope name that reached the upstream was let through, whatever the server meant to do.",
        false_negatives: "Only these twelve positions are tried, each against one out-of-scope name. n/a without scope.allow.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[285, 89] },
    }
}

declare_check! {
    /// A huge LIMIT is capped before the backend.
    SQL_GUARD_ROWCAP {
        id: "sql-guard-rowcap",
        pack: Pack::SqlGuard,
        label: "SQL guard: row cap applied before the backend",
        scope: SCOPE,
        weight: Weight::Scored,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Upstream],
        probes: &ROWCAP_PROBES,
        settings: &[
            Setting {
                key: "row_cap",
                kind: SettingKind::Integer { min: 1, max: 1_000_000 },
                default: "1000",
                locked: false,
                threshold: true,
                meaning: "The most rows a forwarded statement may ask for.",
            },
            SQL_TOOLS,
            UPSTREAM_KIND,
        ],
        proves_pass: "A forwarded statement whose cap, as it reached the stub, is at most row_cap, or a refusal.",
        verdict: "After the control, each statement is sent with a fresh token, and the cap is read from the text that reached the stub with it: LIMIT n, FETCH FIRST n or TOP n, the smallest found. pass when it is at most row_cap, or the statement was refused; fail when every cap found is larger; part when none of those spellings is there (the server may cap another way).",
        fix: "Wrap or rewrite the statement so the backend returns at most row_cap rows (SELECT * FROM (…) LIMIT row_cap), whatever LIMIT the caller wrote.",
        false_positives: "A server that caps rows after the backend answers (reading at most row_cap from a cursor) reads as part or fail: only the forwarded text is read.",
        false_negatives: "A cap in a part of the text that the backend ignores (a comment) reads as a cap.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[400, 770] },
    }
}

declare_check! {
    /// Each call reaches the backend with its own caller's credential.
    UPSTREAM_CREDENTIAL {
        id: "upstream-credential",
        pack: Pack::Upstream,
        label: "Calls reach the backend with the caller's own credential",
        scope: "server (judged by the credentials on the requests the harness's upstream stub recorded)",
        weight: Weight::Critical,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Upstream],
        probes: &CALLER_PROBES,
        settings: &[
            Setting {
                key: "identities.a",
                kind: SettingKind::Text,
                default: "none",
                locked: false,
                threshold: false,
                meaning: "Caller a's token as ${VARIABLE} from sealmark's environment (flag --identity-a), for a server that accepts only tokens it issued; replaces the minted {bearer:a}.",
            },
            Setting {
                key: "identities.b",
                kind: SettingKind::Text,
                default: "none",
                locked: false,
                threshold: false,
                meaning: "Caller b's token, as identities.a (flag --identity-b).",
            },
            UPSTREAM_KIND,
        ],
        proves_pass: "Forwarded requests, each carrying exactly the calling session's own token, and an anonymous call forwarded with none.",
        verdict: "The forwarding call is the first that reaches the stub among the probes: entries, the scope control and the SQL control. It is made in a session opened as caller a, as caller b, as a again and anonymously. fail when a request carried the other caller's token, a credential that is no caller's (a fixed one) or none at all, or when the anonymous call was forwarded with any credential; pass otherwise. n/a when no server.headers value holds {bearer}; inconclusive, pointing at identities, when the server refuses the tokens.",
        fix: "Forward each call with the credential of the caller who made it (token exchange or pass-through), never with a service credential of the server's own, and never one cached from another session.",
        false_positives: "A server that exchanges the caller's token for a backend token (OAuth token exchange) fails unless the exchanged token carries the original: the stub sees only what was forwarded.",
        false_negatives: "Only one call per caller is made; a credential mixed up under concurrency is not tried.",
        references: References { owasp_mcp: "MCP07 Insufficient Authentication & Authorization", cwe: &[441, 863] },
    }
}

pub const CALLER_PROBES: [ProbeDoc; 4] = [
    ProbeDoc::new(
        "caller-a",
        "a forwarding call in a session opened with {bearer:a}; every request must carry {bearer:a}",
    ),
    ProbeDoc::new(
        "caller-b",
        "the same call in a session opened with {bearer:b}; every request must carry {bearer:b}, never {bearer:a}",
    ),
    ProbeDoc::new("caller-a-again", "the same call as caller a once more; never {bearer:b}"),
    ProbeDoc::new(
        "anonymous",
        "the same call with every header holding {bearer} dropped; refused, or forwarded with no credential",
    ),
];

/// The families of names, as the reference lists them. `<c>` is the container of the
/// first `scope.allow` entry (the prefix without its separator, or an exact entry's
/// parent), `<p>` the container of `<c>`, `<control>` the allowed name, `.` the separator.
pub const NAME_PROBES: [ProbeDoc; 10] = [
    ProbeDoc::new(
        "control",
        "<control>: the first exact scope.allow entry, else the first prefix followed by sm_control; must reach the upstream",
    ),
    ProbeDoc::new(
        "sibling",
        "<c>.sm_{token} and <p>.sm_{token}.<leaf>: a sibling of the allowed name and of its container",
    ),
    ProbeDoc::new("bare-container", "<c> and <p>: a container named without a member"),
    ProbeDoc::new("partial", "<c without its first part>.sm_{token}, and sm_{token} alone"),
    ProbeDoc::new("prefix-no-separator", "<c>sm_{token}: the prefix without its separator"),
    ProbeDoc::new("other-case", "the container sibling in upper case, and every scope.deny entry in upper case"),
    ProbeDoc::new(
        "quoted",
        "\"<c>.sm_{token}\" and \"<c>\".sm_{token} (a quote hiding a separator), and every scope.deny entry with each part quoted",
    ),
    ProbeDoc::new("encoded-separator", "the parts of <c>.sm_{token} joined by the percent-encoded separator"),
    ProbeDoc::new("traversal", "sm_{token}/../<control> and <control>/../../sm_{token}"),
    ProbeDoc::new("deny", "every scope.deny entry as written"),
];

/// Statements that must never reach the backend. The token sits in the part that must
/// be stopped, so a server that forwards only the harmless half is not blamed.
pub const STATEMENT_PROBES: [ProbeDoc; 18] = [
    ProbeDoc::new("insert", "INSERT INTO {a} (note) VALUES ('sm-{token}')"),
    ProbeDoc::new("update", "UPDATE {a} SET note = 'sm-{token}'"),
    ProbeDoc::new("delete", "DELETE FROM {a} WHERE note = 'sm-{token}'"),
    ProbeDoc::new("create", "CREATE TABLE sm_{token} (x int)"),
    ProbeDoc::new("drop", "DROP TABLE sm_{token}"),
    ProbeDoc::new("alter", "ALTER TABLE {a} ADD COLUMN sm_{token} int"),
    ProbeDoc::new("truncate", "TRUNCATE TABLE sm_{token}"),
    ProbeDoc::new("grant", "GRANT SELECT ON {a} TO sm_{token}"),
    ProbeDoc::new("select-into", "SELECT * INTO sm_{token} FROM {a}"),
    ProbeDoc::new("stacked", "SELECT 1; DELETE FROM {a} WHERE note = 'sm-{token}'"),
    ProbeDoc::new("stacked-ddl", "SELECT * FROM {a}; DROP TABLE sm_{token}"),
    ProbeDoc::new("cte-dml", "WITH d AS (DELETE FROM {a} WHERE note = 'sm-{token}' RETURNING *) SELECT * FROM d"),
    ProbeDoc::new("commit", "COMMIT; INSERT INTO {a} (note) VALUES ('sm-{token}')"),
    ProbeDoc::new("rollback", "ROLLBACK; UPDATE {a} SET note = 'sm-{token}'"),
    ProbeDoc::new("mixed-case", "dElEtE FROM {a} WHERE note = 'sm-{token}'"),
    ProbeDoc::new(
        "mixed-case-cte",
        "WiTh d AS (InSeRt iNtO {a} (note) VALUES ('sm-{token}') RETURNING *) SeLeCt * FROM d",
    ),
    ProbeDoc::new("comment-first", "/* read only */ DELETE FROM {a} WHERE note = 'sm-{token}'"),
    ProbeDoc::new("unparseable", "SELECT * FROM {a} WHERE 'sm-{token}' = ((("),
];

/// The twelve reference positions: each names `{o}` once, somewhere a guard that checks
/// only the first table does not look.
macro_rules! reference {
    ($name:literal, $sql:literal) => {
        ProbeDoc::noted(
            $name,
            $sql,
            "{a} an in-scope name, {o} <container of scope.allow[0]>.outside_sm_<token>; must not reach the upstream",
        )
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

/// A huge LIMIT and none at all: the cap must be applied before the backend.
pub const ROWCAP_PROBES: [ProbeDoc; 2] = [
    ProbeDoc::new("huge-limit", "SELECT * FROM {a} WHERE 'sm-{token}' = 'sm-{token}' LIMIT 1000000000"),
    ProbeDoc::new("no-limit", "SELECT * FROM {a} WHERE 'sm-{token}' = 'sm-{token}'"),
];
