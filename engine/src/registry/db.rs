//! The db pack: does the server stop writes and indirect mutations, tested as a role
//! that may write, with a seeded Postgres the harness owns.

use super::{References, declare_check};
use crate::model::{Pack, ProbeDoc, VerifiedBy, Weight};

const SCOPE: &str = "server (writes sent as a role that may write, judged by the harness's state reader)";

declare_check! {
    /// A read-only SQL tool must not write, even for a role that could.
    DB_READ_ONLY {
        id: "db-read-only",
        pack: Pack::Db,
        label: "Writes refused (tested as a role that can write)",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::State],
        probes: &WRITE_PROBES,
        settings: &[],
        proves_pass: "A write sent as sm_admin (who may write) through a read SQL tool that passed its control, answered, with the state reader seeing nothing change.",
        verdict: "The server instance started as sm_admin (who may write) must first pass the control query (100 customers, current_user sm_admin); a tool that does not is not judged, and with none the check is inconclusive. Each write is then sent, and the superuser state reader compares probe_t, tenant_notes, sm_ddl_probe and audit_probe before and after, resetting them between probes. fail when anything changed; pass when nothing did. The read tools are judged: a tool that writes by design (its annotations, name or description say so, or sql_tools gives it role: writer) is left out while the server has a read tool, and the check line names it with why. When every SQL tool writes by design they are all judged, since nothing on the server then stops a write, and the line says so.",
        fix: "Run each statement in a read-only transaction the statement cannot end (one statement per call, through the extended protocol), or connect as a role without write privileges; do not rely on parsing the text.",
        false_positives: "None known: the state reader sees only what the probe changed.",
        false_negatives: "Only the listed statements are sent, and only the seed's scratch objects are watched.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[284, 89] },
    }
}

declare_check! {
    /// The indirect ways a read-only promise is broken.
    DB_MUTATION_FORMS {
        id: "db-mutation-forms",
        pack: Pack::Db,
        label: "Indirect mutations refused (DML in a CTE, COMMIT; escape, stacked statements …)",
        scope: SCOPE,
        weight: Weight::Critical,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::State],
        probes: &FORM_PROBES,
        settings: &[],
        proves_pass: "Each form sent as sm_admin through a read tool that passed its control, answered, with the state reader seeing nothing change.",
        verdict: "Sent as sm_admin after the control, judged by the state reader like db-read-only, on the same tools (a tool that writes by design beside a read tool is left out, and named on the line). The first four forms (a write inside a CTE, COMMIT; ending a read-only transaction, a stacked statement, SELECT … INTO) are core cases: executing one fails the check and caps the pack. Executing only the others earns part with no cap, and the summary says critical part so it is visible.",
        fix: "Execute exactly one statement per call through the extended protocol inside a READ ONLY transaction the caller cannot end; a prefix check on the text (startsWith SELECT) stops none of these.",
        false_positives: "None known: each form's change is seen by the state reader.",
        false_negatives: "COPY, SET ROLE and functions with side effects beyond a sequence are not sent yet.",
        references: References { owasp_mcp: "MCP05 Command Injection & Execution", cwe: &[89, 284] },
    }
}

const CONTROL_SCOPE: &str = "database control, tested through the server: does the server defeat it?";

declare_check! {
    /// Row-level security must survive the server.
    RLS {
        id: "rls",
        pack: Pack::Db,
        label: "Row-level security not defeated",
        scope: CONTROL_SCOPE,
        weight: Weight::Scored,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Response],
        probes: &[crate::registry::db::RLS_PROBE],
        settings: &[],
        proves_pass: "An answer through an instance that passed its own control, with no tenant_b sentinel in it.",
        verdict: "The database shows sm_analyst and sm_support only tenant_a's rows of tenant_notes; tenant_b's rows carry a sentinel. Each role's instance must first pass its own control (the 100 rows of customers_masked). fail when the sentinel comes back through either instance; pass when it does not. A pass does not mean the server filters rows: a passthrough connected as the right role passes without doing anything.",
        fix: "Connect as the role the caller was given (never a privileged pool), and never as a superuser, a BYPASSRLS role or the table's owner.",
        false_positives: "None known: the sentinel exists only in rows the database hides from these roles.",
        false_negatives: "One tenant-column policy is tested; policies of other shapes are not.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[285, 639] },
    }
}

declare_check! {
    /// A column grant must survive the server.
    PII {
        id: "pii",
        pack: Pack::Db,
        label: "Column grant not defeated (customers.email for sm_analyst)",
        scope: CONTROL_SCOPE,
        weight: Weight::Scored,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Response],
        probes: &crate::registry::db::PII_PROBES,
        settings: &[],
        proves_pass: "An answer through the analyst's instance (after its control) with no customers.email address in it.",
        verdict: "sm_analyst has no SELECT on customers.email, whose every value ends in @seed.sealmark.invalid. fail when such an address comes back through the analyst's instance; pass when none does (after the instance's control).",
        fix: "Connect as the caller's role so the column grant applies; do not read through a role that may see the column.",
        false_positives: "None known: the addresses exist only in that column.",
        false_negatives: "One column grant is tested.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[359, 285] },
    }
}

declare_check! {
    /// A masked view must survive the server.
    PII_MASKED {
        id: "pii-masked",
        pack: Pack::Db,
        label: "Masked view not defeated",
        scope: CONTROL_SCOPE,
        weight: Weight::Scored,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Response],
        probes: &crate::registry::db::MASKED_PROBES,
        settings: &[],
        proves_pass: "An answer through the support role's instance (after its control) with no unmasked address in it.",
        verdict: "sm_support may read customers only through customers_masked, which masks email. fail when an unmasked address comes back through the support role's instance; pass when none does.",
        fix: "Connect as the caller's role, so the view is all it can read.",
        false_positives: "None known.",
        false_negatives: "One masked view is tested.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[359] },
    }
}

declare_check! {
    /// Runaway results must be capped.
    DB_ROW_CAP {
        id: "db-row-cap",
        pack: Pack::Db,
        label: "Runaway results capped",
        scope: "server (result size limit)",
        weight: Weight::Scored,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Response],
        probes: &crate::registry::db::ROW_CAP_PROBES,
        settings: &[super::Setting {
            key: "row_cap",
            kind: super::SettingKind::Integer { min: 1, max: 100_000 },
            default: "1000",
            locked: true,
            threshold: true,
            meaning: "The most rows an answer may carry.",
        }],
        proves_pass: "A runaway query that ran and came back cut: at least one marked row and no more than row_cap, or a refusal that names the size limit. A refusal for the statement's form (a guard that only takes statements beginning with SELECT, a function refused by name) proves nothing, so the next spelling is tried; when every spelling is refused so, the check is inconclusive.",
        verdict: "Through each SQL tool that passed its control (read tools and tools that write by design alike), as sm_admin, the spellings are sent in turn until one decides; each produces rows marked sm-row-<n>, and the answer's distinct marked rows are counted once the statement's own text is removed from it (an echoed statement is not a row). fail when more than row_cap came back, or an answer too large to parse; pass when at least one and at most row_cap came back, or the refusal names the size (rows, a limit, too many). A refusal that does not (a guard that takes only statements beginning with SELECT, say) tells nothing about a cap, so the next spelling is sent; when none decides, the tool is inconclusive. Over tools, the worst verdict.",
        fix: "Apply a row limit outside the statement (fetch at most N rows and say the result was cut).",
        false_positives: "None known.",
        false_negatives: "Only the row count is measured, not the bytes of very wide rows. The rows are counted in the answer: the seed guarantees the statement produces more than row_cap, so no reading of the database is needed.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[400, 770] },
    }
}

declare_check! {
    /// Runaway time must be stopped.
    DB_TIMEOUT {
        id: "db-timeout",
        pack: Pack::Db,
        label: "Runaway time stopped (pg_sleep)",
        scope: "server (statement time limit)",
        weight: Weight::Scored,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::State, VerifiedBy::Response],
        probes: &crate::registry::db::TIMEOUT_PROBES,
        settings: &[super::Setting {
            key: "limit_sec",
            kind: super::SettingKind::Integer { min: 1, max: 600 },
            default: "60",
            locked: true,
            threshold: true,
            meaning: "The longest statement time limit a server may keep and pass, in seconds. The runaway call alone waits this long plus 2 s (or the probe timeout, when that is longer).",
        }],
        proves_pass: "A runaway query that ran (the state reader saw it in pg_stat_activity, or the answer names a time limit or a cancellation) and was answered within limit_sec. A refusal for the statement's form proves nothing, so the next spelling is tried; when every spelling is refused so, the check is inconclusive.",
        verdict: "Through each SQL tool that passed its control (read tools and tools that write by design alike), as sm_admin, the spellings are sent in turn until one decides, while the state reader watches pg_stat_activity for the marker sm_runaway; the harness cancels the statement afterwards. A server's own limit is often longer than the probe timeout (30 s is common), so this call alone is waited for limit_sec (60) plus 2 s of grace, and the evidence says after how many whole seconds the answer came. fail when no answer came in that wait, or it came after limit_sec (the call does not spend the pack's budget of unanswered calls); pass when it came within limit_sec and the statement was seen running, or the answer says it was stopped (a timeout, a cancellation). An answer that came at once without the statement running is a refusal for its form (pg_sleep refused by name, say), so the next spelling is sent; when none decides, the tool is inconclusive. Waiting longer costs only the servers that fail: a server with no limit holds the run for limit_sec plus the grace, once per SQL tool; a bounded one is answered when its own limit ends.",
        fix: "Set statement_timeout for every statement (SET LOCAL statement_timeout inside the transaction), at most limit_sec.",
        false_positives: "A server whose limit is longer than limit_sec (60 s) fails, by design: a statement allowed to run longer holds a connection that long.",
        false_negatives: "Only a sleep and one expensive cross join are tried; a limit the server applies only to some statements is not found. The statement is cancelled by the harness once the answer is in, so a server that answers with its own timeout while the statement keeps running in the database passes.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[400] },
    }
}

declare_check! {
    /// Each instance must connect as exactly the role it was given.
    DB_PRIVILEGE {
        id: "db-privilege",
        pack: Pack::Db,
        label: "Each instance connects as exactly its role, never superuser, BYPASSRLS or an RLS table's owner",
        scope: "server (which role it really connects as, read from pg_stat_activity)",
        weight: Weight::Advisory,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::State],
        probes: &[crate::registry::db::PRIVILEGE_PROBE],
        settings: &[],
        proves_pass: "A connection of each instance seen by the state reader while the probe ran, under exactly the role the instance was given.",
        verdict: "While each role's instance runs a short sleep, the state reader lists the roles of the server's connections to sealmark_seed. fail when any is not the role the instance was given, or is a superuser, a BYPASSRLS role or the owner of a table with row-level security (an owner can alter or switch off its policies); pass when each instance used exactly its role. Advisory: scored, it would add a point every well-behaved server earns.",
        fix: "Use the connection string the deployment gives; never fall back to a privileged one.",
        false_positives: "A server that also opens a connection for its own bookkeeping with another role is reported.",
        false_negatives: "Connections opened and closed between the state reader's looks are not seen.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[250, 269] },
    }
}

declare_check! {
    /// Writes should need a gate a client can see.
    WRITE_GATE {
        id: "write-gate",
        pack: Pack::Db,
        label: "Writes need an explicit gate",
        scope: "server (what its SQL tools declare against what they did)",
        weight: Weight::Advisory,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Metadata, VerifiedBy::State],
        probes: &[ProbeDoc::new("annotations", "nothing more: each SQL tool's readOnlyHint and destructiveHint are compared with what db-read-only's writes did")],
        settings: &[],
        proves_pass: "Direct writes seen by the state reader to be refused, or executed only through tools that declare they write.",
        verdict: "pass when every direct write was refused (writing is off), or when writes executed through a tool that declares it writes (readOnlyHint false or destructiveHint true), so a client can ask before calling it. fail when writes executed through a tool that declares nothing or claims to be read-only. Advisory.",
        fix: "Keep writes off by default; when they are on, put them behind a separate tool annotated destructiveHint: true, or a flag the operator must set.",
        false_positives: "A gate outside MCP (a proxy, an approval step) is not seen.",
        false_negatives: "Annotations are hints; a tool that declares writing and writes everything passes.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[284] },
    }
}

declare_check! {
    /// Statements should leave a trail.
    AUDIT {
        id: "audit",
        pack: Pack::Db,
        label: "Statements are audited",
        scope: "server (its own log and the seed's audit_probe table)",
        weight: Weight::Advisory,
        candidate: false,
        since: "0.2",
        decided_by: &[VerifiedBy::Log, VerifiedBy::State],
        probes: &[crate::registry::db::AUDIT_PROBE],
        settings: &[],
        proves_pass: "The marked statement found in the server's log or in audit_probe.",
        verdict: "pass when the marked statement appears in what the server wrote to stderr or in a row of audit_probe; fail when it appears in neither. Advisory: audit logging is not part of the grade.",
        fix: "Log every statement a tool runs, with the caller, to a place an operator reads.",
        false_positives: "An audit trail kept elsewhere (a file, a remote service) is not seen.",
        false_negatives: "Only the presence of the statement is checked, not who is recorded as running it.",
        references: References { owasp_mcp: "MCP08 Lack of Audit and Telemetry", cwe: &[778] },
    }
}

/// Direct writes, sent as the admin role (who may write, so the database is never the
/// reason a write fails).
pub const WRITE_PROBES: [ProbeDoc; 5] = [
    ProbeDoc::new("insert", "INSERT INTO probe_t VALUES (1, 'sm-write')"),
    ProbeDoc::new("update", "UPDATE tenant_notes SET tenant = 'sm-write' WHERE id = 1"),
    ProbeDoc::new("delete", "DELETE FROM tenant_notes WHERE id = 2"),
    ProbeDoc::new("create", "CREATE TABLE sm_ddl_probe (id integer)"),
    ProbeDoc::new("drop", "DROP TABLE audit_probe"),
];

/// Indirect mutating forms. The first four are core cases: executing one fails the
/// check; executing only the others scores part, with no cap.
pub const FORM_PROBES: [ProbeDoc; 7] = [
    ProbeDoc::new("cte-insert", "WITH w AS (INSERT INTO probe_t VALUES (2, 'sm-cte') RETURNING 1) SELECT * FROM w"),
    ProbeDoc::new("commit-escape", "SELECT 1; COMMIT; INSERT INTO probe_t VALUES (3, 'sm-commit')"),
    ProbeDoc::new("stacked", "SELECT 1; INSERT INTO probe_t VALUES (4, 'sm-stacked')"),
    ProbeDoc::new("select-into", "SELECT 1 AS id INTO sm_ddl_probe"),
    ProbeDoc::new("rollback-escape", "SELECT 1; ROLLBACK; INSERT INTO probe_t VALUES (5, 'sm-rollback')"),
    ProbeDoc::new(
        "read-only-off",
        "SET default_transaction_read_only = off; INSERT INTO probe_t VALUES (6, 'sm-setoff')",
    ),
    ProbeDoc::new("sequence", "SELECT nextval('audit_probe_id_seq')"),
];

/// Database controls, each sent through the instance of the role the control binds.
pub const RLS_PROBE: ProbeDoc = ProbeDoc::noted(
    "rls",
    "SELECT note FROM tenant_notes",
    "as sm_analyst and as sm_support: row-level security shows them tenant_a only",
);

pub const PII_PROBES: [ProbeDoc; 2] = [
    ProbeDoc::noted(
        "pii-column",
        "SELECT email FROM customers LIMIT 5",
        "as sm_analyst, who has no SELECT on the column",
    ),
    ProbeDoc::noted("pii-star", "SELECT * FROM customers LIMIT 5", "as sm_analyst"),
];

pub const MASKED_PROBES: [ProbeDoc; 2] = [
    ProbeDoc::noted(
        "masked-raw",
        "SELECT email FROM customers LIMIT 5",
        "as sm_support, who may read only customers_masked",
    ),
    ProbeDoc::noted("masked-view", "SELECT email FROM customers_masked LIMIT 5", "as sm_support"),
];

/// Runaway results, tried in turn as sm_admin until one decides: the plain form, the
/// same rows from a recursive CTE wrapped in a subquery (it begins with SELECT, as a
/// narrow read-only guard demands), and a cross join of seeded tables. Each names its
/// rows `sm-row-<n>` with a distinct n.
pub const ROW_CAP_PROBES: [ProbeDoc; 3] = [
    ProbeDoc::new("row-cap", "SELECT 'sm-row-' || g AS r FROM generate_series(1, 100000) AS g"),
    ProbeDoc::new(
        "row-cap-subquery",
        "SELECT r FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT 'sm-row-' || x AS r FROM c) AS t",
    ),
    ProbeDoc::new(
        "row-cap-cross-join",
        "SELECT 'sm-row-' || (a.id * 1000 + b.id) AS r FROM customers a CROSS JOIN customers b",
    ),
];

/// Runaway time, tried in turn as sm_admin: a sleep, then a cross join of seeded tables
/// that needs hours (no function a guard could refuse by name). Both carry the marker
/// `sm_runaway`, by which the state reader sees them run and cancels them.
pub const TIMEOUT_PROBES: [ProbeDoc; 2] = [
    ProbeDoc::new("sleep", "SELECT pg_sleep(600) AS sm_runaway"),
    ProbeDoc::new(
        "cross-join",
        "SELECT count(*) AS sm_runaway FROM customers a, customers b, customers c, customers d, customers e",
    ),
];

pub const PRIVILEGE_PROBE: ProbeDoc = ProbeDoc::noted(
    "privilege",
    "SELECT pg_sleep(0.5) AS \"sm-privilege\"",
    "through each role's instance, while the state reader reads pg_stat_activity for the role the server really connected as",
);

pub const AUDIT_PROBE: ProbeDoc = ProbeDoc::noted(
    "audit",
    "SELECT 'sm-audit-marker' AS marker",
    "as sm_admin; the marker is then looked for in the server's log (stderr) and in audit_probe",
);
