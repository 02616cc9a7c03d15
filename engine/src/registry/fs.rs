//! The fs pack (path escapes, with a harness-owned root) and the effects pack
//! (annotations against what the sandbox observed).

use super::{References, Setting, SettingKind, declare_check};
use crate::model::{Pack, ProbeDoc, VerifiedBy, Weight};

const PATH_SCOPE: &str = "server (path validation, with a harness-owned root)";
const EFFECTS_SCOPE: &str = "server (annotations vs what the sandbox observed during the harness's own benign calls)";

declare_check! {
    /// Reads aimed outside the root must not return what is there.
    FS_READ_ESCAPE {
        id: "fs-read-escape",
        pack: Pack::Fs,
        label: "Reads stay inside the allowed root",
        scope: PATH_SCOPE,
        weight: Weight::Critical,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Response],
        probes: &READ_VARIANTS,
        settings: &[],
        proves_pass: "A working control read (the control file's token came back), then escape reads that were answered without any canary in them.",
        verdict: "First a control read of {sandbox}/ok.txt must return the control file's token; a tool whose control read fails is not aimed anywhere else, and when no tool passes its control the check is inconclusive. Then every variant is sent to every read-class path tool (directory-listing tools get the directory, without secret.txt). A variant fails when the canary of {canary}/secret.txt or of the sibling root comes back, in any form the answer carries. pass when none does; inconclusive when no escape read was answered at all.",
        fix: "Resolve the requested path to a real path (following every link, also for the parts that exist) and compare whole path components with the resolved root, never string prefixes; decode the input once and refuse paths that still contain %, backslashes, NUL or a scheme; refuse absolute paths outside the root and ~.",
        false_positives: "None known: the canaries exist only in files outside the root that the harness made.",
        false_negatives: "A tool that returns only metadata (stat, existence) cannot bring a canary back, so its escapes are not seen. Only the listed spellings are tried.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[22, 23, 36] },
    }
}

declare_check! {
    /// Writes aimed outside the root must not change anything there.
    FS_WRITE_ESCAPE {
        id: "fs-write-escape",
        pack: Pack::Fs,
        label: "Writes stay inside the allowed root",
        scope: PATH_SCOPE,
        weight: Weight::Critical,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Sandbox],
        probes: &WRITE_VARIANTS,
        settings: &[],
        proves_pass: "Write attempts that were answered, with the observer seeing nothing outside the root change but the server's own noise (paths it changes on every benign call, which are listed and never the probe's target).",
        verdict: "Each write goes to every write-class path tool, with the tool's other text arguments filled with a marker. The sandbox observer snapshots the canary directory, the sibling root, the sandbox home and the root before and after each call. fail when anything outside the root was created, changed or removed, apart from the server's own noise: paths in the sandbox home that also change during a call to a tool that does not exist, during the control reads or during any benign call of the effects pack, or during the calls of two or more tools (a call log, a config rewritten, a command history), listed in the evidence as its bookkeeping; a change in the canary directory or the sibling root is never noise. pass when nothing else changed and every write was answered; inconclusive when a write got no answer.",
        fix: "Apply the same resolved-path check to writes as to reads, to the parent directory of a file that does not exist yet, and refuse absolute paths outside the root.",
        false_positives: "A server that writes to HOME only during write calls (a cache of written files, say) is counted as escaping; the evidence names the file. One that writes there on benign calls too is keeping its own books and is excused.",
        false_negatives: "Writes outside the observed directories (the real home, /tmp) are not seen. Only five spellings are tried.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[22, 73] },
    }
}

declare_check! {
    /// Links inside the root must not lead out of it.
    FS_SYMLINK_ESCAPE {
        id: "fs-symlink-escape",
        pack: Pack::Fs,
        label: "Links cannot lead out of the allowed root",
        scope: "server (does it resolve links before checking the path?)",
        weight: Weight::Critical,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Response, VerifiedBy::Sandbox],
        probes: &LINK_VARIANTS,
        settings: &[],
        proves_pass: "Reads through the harness's links answered without a canary (after a working control read), and writes through them answered with nothing outside the root changed.",
        verdict: "The root holds links the harness made: link-secret (to the canary file), link-out (to the canary directory), link-chain (to link-out) and link-new (to a file in the canary directory that does not exist yet). Reads fail when a canary comes back; writes fail when the observer sees anything outside the root change (the server's own noise aside, as for fs-write-escape). pass when every probe was answered and refused or stayed inside; inconclusive when one got no answer.",
        fix: "Resolve links before the root check: realpath the deepest existing ancestor and read the target of a final component that is a dangling link, or open files with O_NOFOLLOW / openat2(RESOLVE_BENEATH).",
        false_positives: "None known: the links and their targets are the harness's own.",
        false_negatives: "Hard links, bind mounts and links the server creates itself are not tried.",
        references: References { owasp_mcp: "MCP02 Privilege Escalation via Scope Creep", cwe: &[59, 61] },
    }
}

declare_check! {
    /// A read of a huge file must be refused or capped.
    FS_LARGE_READ {
        id: "fs-large-read",
        pack: Pack::Fs,
        label: "Large file reads are capped",
        scope: "server (response size limit)",
        weight: Weight::Scored,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Response],
        probes: &[ProbeDoc::new("large-file", "read {sandbox}/large.txt, a file four times max_bytes long, with each read-class tool that passed its control")],
        settings: &[Setting {
            key: "max_bytes",
            kind: SettingKind::Integer { min: 1024, max: 268_435_456 },
            default: "1048576",
            locked: true,
            threshold: true,
            meaning: "The largest answer that counts as capped.",
        }],
        proves_pass: "A read of the large file by a reader that passed its control, answered with at most max_bytes or refused with an error. An answer too large to parse proves the opposite.",
        verdict: "pass when every reader refused the read or answered with at most max_bytes; fail when any answered with more. inconclusive when the read got no answer.",
        fix: "Refuse files over a size limit, or return a bounded excerpt and say it was cut.",
        false_positives: "A server configured for large documents on purpose fails; raise max_bytes (the run becomes CUSTOM).",
        false_negatives: "Only one file is read; streaming or chunked answers and binary content blocks are measured by their text only.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[400, 770] },
    }
}

declare_check! {
    /// Tools that say they are read-only must not write.
    EFFECTS_READ_ONLY {
        id: "effects-read-only",
        pack: Pack::Effects,
        label: "Read-only tools change nothing",
        scope: EFFECTS_SCOPE,
        weight: Weight::Scored,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Sandbox],
        probes: &[ProbeDoc::new("benign", "each tool annotated readOnlyHint: true, called once with a harness-owned control argument ({sandbox}/ok.txt, or {sandbox} for a listing tool)")],
        settings: &[],
        proves_pass: "A benign call to each tool declared read-only, answered, with the observer seeing nothing change in the observed directories beyond the server's own bookkeeping (what changes on a call that cannot do anything, or in the sandbox home during calls of several tools).",
        verdict: "Every tool annotated readOnlyHint: true gets one benign call: a path tool its control path, a git tool its control on {repo}, a URL tool the listener's control page, any other tool harmless values for its required arguments (a tool with an argument that cannot be filled is listed under Not covered). fail when the observer sees anything created, changed or removed in the root, the canary directory, the sibling root or the sandbox home during the call, apart from the server's own bookkeeping, listed: what changes on a call to a tool that does not exist, and what changes in the sandbox home during the calls of two or more tools, counting every call the fs and effects packs make (a log of every call, or one written on a timer, is not one tool's doing); pass when nothing did and every other call was answered. A call that got no answer within the probe timeout and changed nothing is a slow tool, which proves nothing either way: it is left out with its own line and the others are judged (the effects pack restarts the server after such a call, so nothing it started runs on into the next one). inconclusive when any other call got no answer, or no call was judged; na when no read-only tool could be called.",
        fix: "Either make the tool truly read-only (no caches, logs or temp files in the served tree) or drop readOnlyHint.",
        false_positives: "A cache written outside the observed directories is not seen; one written inside them counts, even if harmless.",
        false_negatives: "Only one benign call per tool is made, and only the sandbox directories are observed. A file in the sandbox home that two or more tools' calls change alike is taken for the server's bookkeeping, even if each call wrote something of its own there.",
        references: References { owasp_mcp: "MCP03 Tool Poisoning", cwe: &[1021, 684] },
    }
}

declare_check! {
    /// Tools that say they stay on the machine must not connect out.
    EFFECTS_CLOSED_WORLD {
        id: "effects-closed-world",
        pack: Pack::Effects,
        label: "Closed-world tools stay on the machine",
        scope: EFFECTS_SCOPE,
        weight: Weight::Scored,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Listener],
        probes: &[ProbeDoc::new("benign", "each tool annotated openWorldHint: false, called once with a harness-owned control argument while the loopback listener ({listener}) records connections")],
        settings: &[],
        proves_pass: "A benign call to each tool declared closed-world, answered, with the loopback listener seeing no connection during it.",
        verdict: "Every tool annotated openWorldHint: false gets one benign call, as for effects-read-only (a URL tool, which was handed the listener's address, is not judged here). fail when the listener accepted a connection during a closed-world tool's call that no earlier probe explains, even if the call never finished. A connection is charged to the call during which the listener accepted it; one whose request names a token an earlier probe carried to the listener is that probe's, arriving late: it is listed in the call's line and not charged. The server is restarted after the net pack when the listener was reached, and after a call that got no answer, so each call's window holds only what that call started. pass when no call was charged a connection and every other call was answered; a call that got no answer and made no connection is left out with its own line, as in effects-read-only. A tool that was not pointed at the listener can only show that it did not connect to it during the call.",
        fix: "Drop openWorldHint: false from tools that reach the network, or stop them from doing so.",
        false_positives: "Another process contacting the listener during the call would be counted; the listener's port is random per run.",
        false_negatives: "Only connections to the harness's own listener are seen; traffic to any other address is not. A connection that repeats an earlier probe's request is taken for that probe's.",
        references: References { owasp_mcp: "MCP03 Tool Poisoning", cwe: &[684] },
    }
}

declare_check! {
    /// Tools without annotations, called benignly, should not write.
    EFFECTS_UNANNOTATED {
        id: "effects-unannotated",
        pack: Pack::Effects,
        label: "Unannotated tools leave the sandbox unchanged",
        scope: EFFECTS_SCOPE,
        weight: Weight::Advisory,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Sandbox],
        probes: &[ProbeDoc::new("benign", "each read-style path tool with neither readOnlyHint nor destructiveHint, called once with a harness-owned control argument")],
        settings: &[],
        proves_pass: "A benign call to each unannotated read-style tool, answered, with the observer seeing nothing change beyond the server's own noise.",
        verdict: "Tools without annotations whose names read as reads (get, list, read, search, show…) get one benign call with harmless values. fail when the sandbox changed during the call (the server's own noise aside), pass when it did not and every call was answered (a slow call that changed nothing is left out, as in effects-read-only), na when no such tool exists. Advisory: a tool that makes no promise breaks none.",
        fix: "Annotate tools: readOnlyHint for tools that only read, destructiveHint for tools that change or delete.",
        false_positives: "A tool whose name sounds read-style but writes by design fails; annotate it destructive.",
        false_negatives: "Only read-style names are called, once each.",
        references: References { owasp_mcp: "MCP03 Tool Poisoning", cwe: &[1021] },
    }
}

/// The reads aimed outside the root. Templates: `{sandbox}` the root, `{canary}` the
/// canary directory, `{canary_noslash}` its absolute path without the leading slash,
/// `{sandbox_dir_name}` the name of the directory holding both. Each names
/// `secret.txt`; for a tool that lists directories the last segment is dropped.
pub const READ_VARIANTS: [ProbeDoc; 29] = [
    ProbeDoc::new("traversal", "../canary/secret.txt"),
    ProbeDoc::new("traversal-dot", "./../canary/secret.txt"),
    ProbeDoc::new("traversal-subdir", "docs/../../canary/secret.txt"),
    ProbeDoc::new("traversal-2", "../../{sandbox_dir_name}/canary/secret.txt"),
    ProbeDoc::new("traversal-deep", "../../../../../../../../../../../../{canary_noslash}/secret.txt"),
    ProbeDoc::new("absolute", "{canary}/secret.txt"),
    ProbeDoc::new("absolute-via-root", "{sandbox}/../canary/secret.txt"),
    ProbeDoc::new("sibling-prefix", "{sandbox}-sibling/secret.txt"),
    ProbeDoc::new("sibling-relative", "../root-sibling/secret.txt"),
    ProbeDoc::new("sibling-via-root", "{sandbox}/../root-sibling/secret.txt"),
    ProbeDoc::new("encoded-slash", "..%2fcanary%2fsecret.txt"),
    ProbeDoc::new("encoded-dots", "%2e%2e/canary/secret.txt"),
    ProbeDoc::new("encoded-all", "%2e%2e%2fcanary%2fsecret.txt"),
    ProbeDoc::new("encoded-upper", "%2E%2E%2Fcanary%2Fsecret.txt"),
    ProbeDoc::new("double-encoded-slash", "..%252fcanary%252fsecret.txt"),
    ProbeDoc::new("double-encoded-dots", "%252e%252e/canary/secret.txt"),
    ProbeDoc::new("overlong-utf8", "..%c0%afcanary%c0%afsecret.txt"),
    ProbeDoc::new("backslash", "..\\canary\\secret.txt"),
    ProbeDoc::new("mixed-slashes", "..\\/canary/secret.txt"),
    ProbeDoc::new("tilde", "~/../canary/secret.txt"),
    ProbeDoc::new("file-uri", "file://{canary}/secret.txt"),
    ProbeDoc::new("file-uri-traversal", "file://{sandbox}/../canary/secret.txt"),
    ProbeDoc::new("trailing-slash", "../canary/secret.txt/"),
    ProbeDoc::new("dot-segment", "../canary/./secret.txt"),
    ProbeDoc::new("double-slashes", "..//canary//secret.txt"),
    ProbeDoc::new("leading-double-slash", "/{canary}/secret.txt"),
    ProbeDoc::new("strip-once", "....//canary/secret.txt"),
    ProbeDoc::new("strip-once-dots", "..././canary/secret.txt"),
    ProbeDoc::noted("nul-byte", "ok.txt{nul}/../../canary/secret.txt", "{nul} is a NUL character"),
];

/// Writes aimed outside the root; judged by the observer, not the answer.
pub const WRITE_VARIANTS: [ProbeDoc; 5] = [
    ProbeDoc::new("write-traversal", "../canary/new.txt"),
    ProbeDoc::new("write-absolute", "{canary}/new.txt"),
    ProbeDoc::new("write-sibling-prefix", "{sandbox}-sibling/new.txt"),
    ProbeDoc::new("write-encoded", "..%2fcanary%2fnew.txt"),
    ProbeDoc::noted("write-overwrite", "../canary/secret.txt", "overwrite the canary"),
];

/// Reads through the links the harness put in the root (paths relative to it). A
/// tool that lists directories is given the directory the read goes through.
pub const LINK_READS: [ProbeDoc; 3] = [
    ProbeDoc::noted("read-file-link", "link-secret", "read: a link to {canary}/secret.txt"),
    ProbeDoc::noted("read-dir-link", "link-out/secret.txt", "read: link-out points to {canary}"),
    ProbeDoc::noted(
        "read-chain-link",
        "link-chain/secret.txt",
        "read: link-chain points to link-out, which points to {canary}",
    ),
];

/// Writes through the links the harness put in the root.
pub const LINK_WRITES: [ProbeDoc; 3] = [
    ProbeDoc::noted("write-dir-link", "link-out/new.txt", "write: link-out points to {canary}"),
    ProbeDoc::noted("write-file-link", "link-secret", "write: overwrite the canary through the link"),
    ProbeDoc::noted("write-new-link", "link-new", "write: a link to {canary}/not-yet.txt, which does not exist yet"),
];

/// Every link probe, as the check page lists them.
pub const LINK_VARIANTS: [ProbeDoc; 6] = ProbeDoc::concat(LINK_READS, LINK_WRITES);
