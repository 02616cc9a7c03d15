//! What each pack measures and when it applies, for reports and the reference pages.

use crate::model::Pack;
use serde::Serialize;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackDoc {
    pub pack: Pack,
    pub title: &'static str,
    /// When the pack runs.
    pub applies: &'static str,
}

pub static PACKS: &[PackDoc] = &[
    PackDoc { pack: Pack::Core, title: "Protocol hygiene, metadata, malformed input, secret echo", applies: "always" },
    PackDoc {
        pack: Pack::Db,
        title: "Postgres: writes, mutations, runaway results and time, database controls",
        applies: "when the server config holds a database placeholder and a SQL tool is found",
    },
    PackDoc {
        pack: Pack::Sqlite,
        title: "SQLite: writes, ATTACH, extensions, runaway results and time",
        applies: "when the server config holds a SQLite placeholder and a SQL tool is found",
    },
    PackDoc { pack: Pack::Fs, title: "Path escapes, with a harness-owned root", applies: "when a path tool is found" },
    PackDoc {
        pack: Pack::Net,
        title: "SSRF, with a harness-owned loopback listener",
        applies: "when a url tool is found",
    },
    PackDoc {
        pack: Pack::Git,
        title: "Repository scope and option injection, with harness-owned repositories",
        applies: "when a git tool is found and the server config names {repo}",
    },
    PackDoc {
        pack: Pack::Http,
        title: "The HTTP transport's own defences, tested with raw requests",
        applies: "when the server is reached over HTTP (server.url)",
    },
    PackDoc {
        pack: Pack::Effects,
        title: "Annotations against what the sandbox observed",
        applies: "when a tool can be given a harness-owned argument",
    },
    PackDoc {
        pack: Pack::Scope,
        title: "Identifiers outside the declared scope",
        applies: "when scope.tools names a tool",
    },
    PackDoc {
        pack: Pack::SqlGuard,
        title: "SQL that must not reach the backend",
        applies: "when upstream.kind is set and a SQL tool exists",
    },
    PackDoc {
        pack: Pack::Upstream,
        title: "The caller's credential at the backend",
        applies: "when upstream.kind is set",
    },
    PackDoc {
        pack: Pack::Custom,
        title: "The server author's own probes",
        applies: "when a probe in sealmark.yaml has a check",
    },
];

/// The documentation of one pack.
pub fn pack_doc(pack: Pack) -> &'static PackDoc {
    PACKS.iter().find(|p| p.pack == pack).expect("every pack is documented")
}
