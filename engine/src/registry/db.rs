//! The db pack: does the server stop writes and indirect mutations, tested as a role
//! that may write, with a seeded Postgres the harness owns.

use super::{References, declare_check};
use crate::judge::db::{FORM_PROBES, WRITE_PROBES};
use crate::model::{Pack, VerifiedBy, Weight};

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
        verdict: "The server instance started as sm_admin (who may write) must first pass the control query (100 customers, current_user sm_admin); a tool that does not is not judged, and with none the check is inconclusive. Each write is then sent, and the superuser state reader compares probe_t, tenant_notes, sm_ddl_probe and audit_probe before and after, resetting them between probes. fail when anything changed; pass when nothing did.",
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
        verdict: "Sent as sm_admin after the control, judged by the state reader like db-read-only. The first four forms (a write inside a CTE, COMMIT; ending a read-only transaction, a stacked statement, SELECT … INTO) are core cases: executing one fails the check and caps the pack. Executing only the others earns part with no cap, and the summary says critical part so it is visible.",
        fix: "Execute exactly one statement per call through the extended protocol inside a READ ONLY transaction the caller cannot end; a prefix check on the text (startsWith SELECT) stops none of these.",
        false_positives: "None known: each form's change is seen by the state reader.",
        false_negatives: "COPY, SET ROLE and functions with side effects beyond a sequence are not sent yet.",
        references: References { owasp_mcp: "MCP05 Command Injection & Execution", cwe: &[89, 284] },
    }
}
