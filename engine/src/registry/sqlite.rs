//! The sqlite pack: the SQLite analogues of the db pack, against a seeded file in the
//! sandbox that the harness reads before and after every probe.

use super::{References, Setting, SettingKind, declare_check};
use crate::model::{Pack, ProbeDoc, VerifiedBy, Weight};

const SCOPE: &str = "server (judged by reading the seeded SQLite file itself)";

declare_check! {
    SQLITE_READ_ONLY {
        id: "sqlite-read-only",
        pack: Pack::Sqlite,
        label: "SQLite writes refused",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::State],
        probes: &WRITE_PROBES,
        settings: &[],
        proves_pass: "A write through a read tool that counted the seeded customers, answered, with the file unchanged. A tool that writes by design is not judged here.",
        verdict: "Each SQL tool must first count the 100 seeded customers. Each write is then sent, the harness reads probe_t, customers and the schema from the file before and after, and restores the file from its pristine copy. fail when anything changed; pass when nothing did.",
        fix: "Open the database read-only (SQLITE_OPEN_READONLY or mode=ro) and run one statement per call.",
        false_positives: "None known: the harness reads the file it seeded.",
        false_negatives: "Only the listed statements are sent.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[284, 89] },
    }
}

declare_check! {
    SQLITE_MUTATION_FORMS {
        id: "sqlite-mutation-forms",
        pack: Pack::Sqlite,
        label: "SQLite indirect mutations refused (DML after WITH, stacked statements, COMMIT; and PRAGMA escapes)",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::State],
        probes: &FORM_PROBES,
        settings: &[],
        proves_pass: "Each form through a read tool that passed its control, answered, with the file unchanged.",
        verdict: "Judged like sqlite-read-only: fail when any form changed the file.",
        fix: "Prepare exactly one statement per call (reject a tail) on a read-only connection; a text prefix check stops none of these.",
        false_positives: "None known.",
        false_negatives: "Only the listed forms are sent.",
        references: References { owasp_mcp: "MCP05 Command Injection & Execution", cwe: &[89] },
    }
}

declare_check! {
    SQLITE_ATTACH {
        id: "sqlite-attach",
        pack: Pack::Sqlite,
        label: "ATTACH and VACUUM INTO cannot create files outside the sandbox",
        scope: "server (judged by the sandbox observer)",
        weight: Weight::Critical,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Sandbox],
        probes: &ATTACH_PROBES,
        settings: &[],
        proves_pass: "An attempt through a SQL tool that passed its control, answered, with no file created outside the sandbox root.",
        verdict: "fail when the observer sees a file created outside the sandbox root (in {canary}) during the call; pass when it does not.",
        fix: "Set the attached-database limit to zero (sqlite3_limit SQLITE_LIMIT_ATTACHED) and refuse VACUUM; a read-only main database does not stop ATTACH from creating a file.",
        false_positives: "None known.",
        false_negatives: "Only new files are tried; ATTACH of an existing database elsewhere is not.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[73, 22] },
    }
}

declare_check! {
    SQLITE_LOAD_EXTENSION {
        id: "sqlite-load-extension",
        pack: Pack::Sqlite,
        label: "load_extension is disabled",
        scope: "server",
        weight: Weight::Scored,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Response],
        probes: &[LOAD_EXTENSION_PROBE],
        settings: &[],
        proves_pass: "An answer through a SQL tool that passed its control showing SQLite refused to load (not authorized) or the server refused the statement.",
        verdict: "The file named does not exist. fail when the error shows SQLite tried to open it (extension loading is on); pass when SQLite refused (not authorized) or the server refused the statement.",
        fix: "Leave extension loading off (do not call sqlite3_enable_load_extension).",
        false_positives: "A server that rewrites SQLite's error messages may hide the attempt, or fake one.",
        false_negatives: "Decided by the error text only: the harness loads no real extension.",
        references: References { owasp_mcp: "MCP05 Command Injection & Execution", cwe: &[94] },
    }
}

declare_check! {
    SQLITE_ROW_CAP {
        id: "sqlite-row-cap",
        pack: Pack::Sqlite,
        label: "SQLite runaway results capped",
        scope: "server (result size limit)",
        weight: Weight::Scored,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Response],
        probes: &ROW_CAP_PROBES,
        settings: &[Setting {
            key: "row_cap",
            kind: SettingKind::Integer { min: 1, max: 100_000 },
            default: "1000",
            locked: true,
            threshold: true,
            meaning: "The most rows an answer may carry.",
        }],
        proves_pass: "A runaway query that ran and came back cut: at least one marked row and no more than row_cap, or a refusal that names the size limit. A refusal for the statement's form proves nothing, so the next spelling is tried; when every spelling is refused so, the check is inconclusive.",
        verdict: "Through each read SQL tool that passed its control, the spellings are sent in turn until one decides, and the answer's distinct marked rows (sm-row-<n>) are counted once the statement's own text is removed. fail when more than row_cap came back, or an answer too large to parse; pass when at least one and at most row_cap came back, or the refusal names the size. A refusal that does not (\"Only SELECT queries are allowed\", even as success text) tells nothing about a cap, so the next spelling is sent; when none decides, the tool is inconclusive.",
        fix: "Stop stepping the statement after N rows and say the result was cut.",
        false_positives: "None known.",
        false_negatives: "Only the row count is measured.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[400, 770] },
    }
}

declare_check! {
    SQLITE_TIMEOUT {
        id: "sqlite-timeout",
        pack: Pack::Sqlite,
        label: "SQLite runaway time stopped",
        scope: "server (statement time limit)",
        weight: Weight::Scored,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Response],
        probes: &TIMEOUT_PROBES,
        settings: &[],
        proves_pass: "A query that never ends, answered before the probe timeout with an error that names a time limit or an interruption. A refusal for the statement's form proves nothing, so the next spelling is tried; when every spelling is refused so, the check is inconclusive.",
        verdict: "Sent last, because a server that does not stop it stays busy (one that stops answering ping meanwhile is restarted afterwards). The spellings are sent in turn until one decides. fail when no answer came within the probe timeout; pass when the answer came before it and names a time limit or an interruption. An answer that does not (a refusal for its form) is followed by the next spelling; when none decides, the tool is inconclusive.",
        fix: "Interrupt long statements (a progress handler or sqlite3_interrupt after a deadline).",
        false_positives: "A probe timeout shorter than the server's own limit; keep timeout_probe_sec above it.",
        false_negatives: "Only these never-ending queries are tried. A limit whose error does not say it was a limit reads as a refusal for the form.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[400] },
    }
}

pub const WRITE_PROBES: [ProbeDoc; 5] = [
    ProbeDoc::new("insert", "INSERT INTO probe_t VALUES (1, 'sm-write')"),
    ProbeDoc::new("update", "UPDATE customers SET name = 'sm-write' WHERE id = 1"),
    ProbeDoc::new("delete", "DELETE FROM customers WHERE id = 2"),
    ProbeDoc::new("create", "CREATE TABLE sm_ddl_probe (id integer)"),
    ProbeDoc::new("drop", "DROP TABLE probe_t"),
];

pub const FORM_PROBES: [ProbeDoc; 4] = [
    ProbeDoc::new("cte-insert", "WITH x AS (SELECT 1) INSERT INTO probe_t SELECT 2, 'sm-cte' FROM x"),
    ProbeDoc::new("stacked", "SELECT 1; INSERT INTO probe_t VALUES (4, 'sm-stacked')"),
    ProbeDoc::new("commit-escape", "SELECT 1; COMMIT; INSERT INTO probe_t VALUES (3, 'sm-commit')"),
    ProbeDoc::new("pragma-escape", "SELECT 1; PRAGMA query_only = OFF; INSERT INTO probe_t VALUES (6, 'sm-pragma')"),
];

/// Files created outside the sandbox root. `{canary}` is the canary directory.
pub const ATTACH_PROBES: [ProbeDoc; 2] = [
    ProbeDoc::new("attach-new", "ATTACH DATABASE '{canary}/sm-attach.db' AS sm_attached"),
    ProbeDoc::new("vacuum-into", "VACUUM INTO '{canary}/sm-vacuum.db'"),
];

pub const LOAD_EXTENSION_PROBE: ProbeDoc =
    ProbeDoc::new("load-extension", "SELECT load_extension('/nonexistent/sm-extension')");

/// Runaway results, tried in turn until one decides (see `db::ROW_CAP_PROBES`): the
/// recursive CTE, the same wrapped in a subquery so it begins with SELECT, and a cross
/// join of the seeded customers.
pub const ROW_CAP_PROBES: [ProbeDoc; 3] = [
    ProbeDoc::new(
        "row-cap",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT 'sm-row-' || x AS r FROM c",
    ),
    ProbeDoc::new(
        "row-cap-subquery",
        "SELECT r FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT 'sm-row-' || x AS r FROM c)",
    ),
    ProbeDoc::new(
        "row-cap-cross-join",
        "SELECT 'sm-row-' || (a.id * 1000 + b.id) AS r FROM customers a CROSS JOIN customers b",
    ),
];

/// Queries that never end, tried in turn: the recursive CTE, the same wrapped in a
/// subquery, and a cross join of five copies of the seeded customers.
pub const TIMEOUT_PROBES: [ProbeDoc; 3] = [
    ProbeDoc::new("runaway", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"),
    ProbeDoc::new(
        "runaway-subquery",
        "SELECT count(*) AS n FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c)",
    ),
    ProbeDoc::new(
        "runaway-cross-join",
        "SELECT count(*) AS n FROM customers a, customers b, customers c, customers d, customers e",
    ),
];
