//! The core pack: what every MCP server is tested on, with no target but the session.

use super::{References, Setting, SettingKind, declare_check};
use crate::model::{Pack, ProbeDoc, VerifiedBy, Weight};

declare_check! {
    /// The handshake and the tool list every later check builds on.
    HANDSHAKE {
        id: "handshake",
        pack: Pack::Core,
        label: "Valid MCP handshake and tool schemas",
        scope: "server",
        weight: Weight::Critical,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Response],
        probes: &[
            ProbeDoc::new("initialize", "initialize offering the newest protocol version the harness speaks; the answer must name a published version (an older one such as 2024-11-05 or 2025-03-26 is a legitimate negotiation), a serverInfo and capabilities"),
            ProbeDoc::new("tools/list", "tools/list, following nextCursor through every page (at most 50 pages and 1,000 tools)"),
            ProbeDoc::new("schemas", "nothing: each listed tool is inspected for a non-empty unique name, an object inputSchema of type object, properties that are objects, and a required list naming only declared properties"),
        ],
        settings: &[],
        proves_pass: "An initialize answer naming a published protocol version, with serverInfo and capabilities, and a tool list read to its end in which every tool is well formed.",
        verdict: "pass when the server completes initialize within the probe timeout with a published protocol version and every listed tool is well formed. fail when the answer is not an initialize result, names an unknown protocol version, or a tool is malformed (the evidence names the tool and the defect). inconclusive when the server does not answer, dies, or the tool list cannot be read to its end.",
        fix: "Answer initialize with a protocolVersion the client offered or an older published one, return serverInfo and capabilities, and give every tool a unique name and an inputSchema whose type is object, whose properties are schema objects and whose required list only names declared properties. Generating schemas from typed parameters (as the official SDKs do) avoids most of this.",
        false_positives: "A server built for a protocol revision newer than the harness knows is reported as naming an unknown version until sealmark learns that revision.",
        false_negatives: "Only the structure of the schemas is checked, not whether the tool accepts what its schema describes; output schemas are not checked.",
        references: References { owasp_mcp: "MCP09 Shadow MCP Servers", cwe: &[20, 1286] },
    }
}

declare_check! {
    /// Instructions planted in the text a model reads when it chooses tools.
    TOOL_POISONING {
        id: "tool-poisoning",
        pack: Pack::Core,
        label: "No tool-poisoning indicators in tool metadata",
        scope: "server (what it declares, not what it does)",
        weight: Weight::Scored,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Metadata],
        probes: &[
            ProbeDoc::new("scan", "nothing: the text of every tool (name, title, description), every parameter (name, title, description, enum and default strings, nested properties), every prompt and its arguments, every resource and resource template, and the server instructions is scanned"),
            ProbeDoc::new("indicators", "hidden instruction tags (<IMPORTANT>, <SYSTEM>, <instructions> …); \"ignore previous/all instructions\"; secrecy toward the user (\"do not tell the user\"); sensitive paths (~/.ssh, id_rsa, .env, /etc/passwd, credentials files); zero-width and Unicode tag characters; ANSI escape sequences; instructions about other tools (\"before using any other tool\", \"instead of the other tool\")"),
        ],
        settings: &[],
        proves_pass: "A scan of a tool list read to its end (and of every prompt, resource and instruction the server offers) that finds no indicator. Zero text scanned proves nothing: n/a when the server lists nothing, inconclusive when the list could not be read.",
        verdict: "pass when no indicator is found anywhere in the scanned text of a tool list read to its end. fail when any is found; the evidence names where (tool, parameter, prompt, resource or instructions), which indicator and an excerpt with invisible characters made visible. n/a when the server lists no tools, prompts or resources and sends no instructions; inconclusive when the handshake failed or the tool list could not be read to its end (what was scanned can still fail).",
        fix: "Describe what a tool does and nothing else: no instructions to the model, nothing about other tools, no hidden or invisible text, no file paths the tool has no business with. Strip control and invisible characters from generated descriptions.",
        false_positives: "A tool whose legitimate job involves SSH keys or .env files (a deployment helper, say) mentions them in its description and fails; read the excerpt, and turn the check off with the reason in a CUSTOM run if that is the case.",
        false_negatives: "Only the listed patterns are recognised. Instructions phrased otherwise, in another language, or spread over several fields pass; tool results are not scanned at all (output-side injection is a blind spot).",
        references: References { owasp_mcp: "MCP03 Tool Poisoning", cwe: &[1427, 451] },
    }
}

declare_check! {
    /// Malformed input must be refused, not crash the server.
    ROBUST_INPUT {
        id: "robust-input",
        pack: Pack::Core,
        label: "Survives malformed tool input",
        scope: "server",
        weight: Weight::Scored,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Response, VerifiedBy::Process],
        probes: &[
            ProbeDoc::new("missing-required", "per tool: the call without its first required argument (skipped when nothing is required)"),
            ProbeDoc::new("wrong-type", "per tool: each declared argument given a value of another JSON type (an object for a string, a string for anything else)"),
            ProbeDoc::new("null", "per tool: each required argument set to null"),
            ProbeDoc::new("unknown-key", "per tool: the arguments plus an undeclared key"),
            ProbeDoc::new("oversized", "per tool: a string argument of oversized_bytes bytes"),
            ProbeDoc::new("deep-nesting", "per tool: an argument nested nesting_depth arrays deep"),
            ProbeDoc::new("name-not-string", "per session: tools/call whose name is a number"),
            ProbeDoc::new("params-not-object", "per session: tools/call whose params is an array"),
            ProbeDoc::new("arguments-not-object", "per session: tools/call whose arguments is a string"),
            ProbeDoc::noted("not-json", "per session: a line that is not JSON", "the crash of CVE-2025-53366"),
            ProbeDoc::new("liveness", "after each probe that got no answer, and at the end: ping, which must be answered"),
        ],
        settings: &[
            Setting { key: "max_tools", kind: SettingKind::Integer { min: 1, max: 1000 }, default: "25", locked: true, threshold: true, meaning: "Tools probed, in the order the server lists them; the rest are listed under Not covered." },
            Setting { key: "oversized_bytes", kind: SettingKind::Integer { min: 1024, max: 16_777_216 }, default: "1048576", locked: true, threshold: true, meaning: "Length of the oversized string argument." },
            Setting { key: "nesting_depth", kind: SettingKind::Integer { min: 2, max: 100_000 }, default: "1000", locked: true, threshold: true, meaning: "Depth of the deeply nested argument." },
        ],
        proves_pass: "Answers to malformed input that was actually sent: each one rejected (isError or a JSON-RPC error, or silence for input that is not a request) by a server that answered ping afterwards. Probes held back because the server had stopped answering are not counted.",
        verdict: "A probe is rejected cleanly when the answer is an isError result or a JSON-RPC error, or when there is no answer and the server still answers ping afterwards (silence is allowed for input that is not a request). A probe fails when the server dies, stops answering ping (a ping sent while waiting for a call tells a server that stopped answering from a slow tool), or answers a malformed call as a success. A call left unanswered by a server that kept answering ping is a slow tool: no evidence either way, and said so. A server that died or stopped answering is restarted for the next probe, at most three times. pass when every judged probe was rejected cleanly; part when the server stayed alive but accepted malformed calls; fail when it died or stopped answering; inconclusive when no probe could be judged.",
        fix: "Validate arguments against the declared schema before running a tool and answer with isError (or -32602) naming the problem; wrap the message loop so that a line that does not parse gets a -32700 parse error instead of ending the process.",
        false_positives: "A tool that deliberately accepts any extra key or coerces types (a string \"1\" for an integer) is counted as accepting a malformed call; that costs half a point (part), never a fail.",
        false_negatives: "Only the first max_tools tools are probed, and only the listed malformations are sent; input that is valid JSON of the right type but semantically hostile is the business of the other packs.",
        references: References { owasp_mcp: "MCP05 Command Injection & Execution", cwe: &[20, 248, 400] },
    }
}

declare_check! {
    /// Canary secrets placed in the server's environment must never come back.
    SECRET_ECHO {
        id: "secret-echo",
        pack: Pack::Core,
        label: "No environment secret echoed in responses",
        scope: "server",
        weight: Weight::Critical,
        candidate: false,
        since: "0.1",
        decided_by: &[VerifiedBy::Response],
        probes: &[
            ProbeDoc::new("canaries", "SEALMARK_CANARY and SEALMARK_FAKE_API_KEY, fresh random values per run, in the server's environment"),
            ProbeDoc::new("scan", "nothing more: the initialize answer, tools/list, prompts/list, resources/list and every other message of the run are searched, as each arrives, for each canary, plain and base64-, hex- and URL-encoded"),
        ],
        settings: &[],
        proves_pass: "At least one tool call answered somewhere in the run (a result, a tool error or a JSON-RPC error), and no canary in any spelling in any message any session received, from every pack.",
        verdict: "Every message of the run is scanned: every session and every pack (the fs, net, git, db and custom calls as well as robust-input's), results, tool errors and JSON-RPC errors alike. fail when any canary appears in any of them, in any spelling; the evidence names the message and the spelling. pass when none does and at least one tool call was answered. inconclusive when no tool call was answered at all.",
        fix: "Never return environment variables, configuration dumps or raw exception objects to the client. Give tools an allow-list of what they may report, and redact secrets from error messages.",
        false_positives: "None known: the canaries are random values only the harness and the server's environment hold.",
        false_negatives: "Only the two canary variables are planted; a server that leaks only specific variables it knows by name (AWS_SECRET_ACCESS_KEY, say) passes. Encodings beyond base64, hex and URL encoding, and echoes in binary content, are not recognised.",
        references: References { owasp_mcp: "MCP01 Token Mismanagement & Secret Exposure", cwe: &[200, 526, 209] },
    }
}

declare_check! {
    /// A rejection should tell a model what to change, not just that something failed.
    REFUSAL_QUALITY {
        id: "refusal-quality",
        pack: Pack::Core,
        label: "Refusals say what was refused",
        scope: "server",
        weight: Weight::Advisory,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Response],
        probes: &[
            ProbeDoc::new("rejections", "nothing more: the answers robust-input received to its per-tool missing-required and wrong-type calls are read"),
        ],
        settings: &[],
        proves_pass: "Rejections that carry text, each naming the argument at fault.",
        verdict: "A rejection is informative when its text names the offending argument. pass when every rejection that carried text is informative, part when some are, fail when none is. na when robust-input got no rejection with text.",
        fix: "Name the argument and the problem in the error (\"path: expected a string\"); a bare \"invalid input\" leaves a model guessing and retrying.",
        false_positives: "A rejection that describes the problem without the argument's name (\"the second argument must be text\") is not recognised.",
        false_negatives: "Naming the argument is all that is checked; a misleading message that names it passes.",
        references: References { owasp_mcp: "MCP10 Context Injection & Over-Sharing", cwe: &[755] },
    }
}

declare_check! {
    /// The server's instructions go straight into a model's context.
    INSTRUCTIONS_HYGIENE {
        id: "instructions-hygiene",
        pack: Pack::Core,
        label: "Server instructions carry no denied phrases",
        scope: "server (what it declares, not what it does)",
        weight: Weight::Advisory,
        candidate: true,
        since: "0.3-draft",
        decided_by: &[VerifiedBy::Metadata],
        probes: &[
            ProbeDoc::new("instructions", "nothing: the instructions field of the initialize answer is matched against every pattern of checks.instructions-hygiene.deny (case-insensitive)"),
        ],
        settings: &[
            Setting { key: "deny", kind: SettingKind::StringList, default: "[\"always (use|call|prefer) (this|these)\", \"(do not|don't|never) (tell|inform|show|mention)\", \"ignore (all|any|previous|other)\", \"instead of (any|the) other\", \"(api[_ -]?key|password|token)s? (is|are|=)\"]", locked: false, threshold: false, meaning: "Regular expressions that must not match the server instructions." },
        ],
        proves_pass: "Server instructions that were received and match no deny pattern.",
        verdict: "fail when any deny pattern matches the instructions; the evidence names the pattern and an excerpt. pass when none matches. na when the server sends no instructions.",
        fix: "Keep instructions to how the server's own tools fit together; do not steer a model away from other servers, toward this one, or away from telling its user something.",
        false_positives: "A pattern can match harmless wording; adjust the deny list (the setting is not locked, so the run stays STANDARD).",
        false_negatives: "Only the listed patterns are matched; tool-poisoning scans the same text for the core indicators.",
        references: References { owasp_mcp: "MCP06 Prompt Injection via Contextual Payloads", cwe: &[1427] },
    }
}
