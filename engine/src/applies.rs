//! When a pack applies: what it needs from the config, the harness's targets and the
//! server's tools before it can collect anything. Said once, here: `doctor` prints it
//! ahead of a run, collection asks it once per pack (`packs::Gate`) and records its
//! words as the reason a requested pack did not run, which the record then gives.

use crate::classify::{Class, Classification};
use crate::config::Config;
use crate::judge::Observations;
use crate::model::Pack;

/// What is known before a pack collects.
pub struct Situation<'a> {
    pub config: &'a Config,
    /// The server's tools as classified, once they are known. Conditions on tools are
    /// not checked without them.
    pub classes: Option<&'a [Classification]>,
    /// The seeded database: `None` when the server's config holds no database
    /// placeholder, else whether it could be started, and why not.
    pub database: Option<Result<(), &'a str>>,
    /// Whether the loopback listener is up.
    pub listener: bool,
}

/// Why a requested pack cannot collect.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The server lists no tool of the class the pack aims at.
    NoTool(Class),
    /// Something else the pack needs: a placeholder, a target of the harness's, a setting.
    Needs(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NoTool(class) => write!(f, "no {class} tool found"),
            Refusal::Needs(what) => f.write_str(what),
        }
    }
}

fn needs<T>(what: &str) -> Result<T, Refusal> {
    Err(Refusal::Needs(what.to_string()))
}

/// The class of tool a pack aims at, when it aims at tools of one class.
pub fn aims_at(pack: Pack) -> Option<Class> {
    match pack {
        Pack::Fs | Pack::Effects => Some(Class::Path),
        Pack::Net => Some(Class::Url),
        Pack::Git => Some(Class::Git),
        Pack::Db | Pack::Sqlite | Pack::SqlGuard => Some(Class::Sql),
        _ => None,
    }
}

impl Situation<'_> {
    /// The tools of `class`; a url tool is also a path tool with a switch that makes it
    /// fetch URLs (secondary class url), which the net pack aims at too.
    fn tools_of(&self, class: Class) -> Option<Vec<&str>> {
        let of = |c: &&Classification| c.class == class || (class == Class::Url && c.secondary == Some(Class::Url));
        self.classes.map(|cs| cs.iter().filter(of).map(|c| c.tool.as_str()).collect())
    }

    /// Whether no SQL tool was found, by classification or `sql_tools` (false while the
    /// tools are unknown).
    fn no_sql_tool(&self) -> bool {
        self.config.sql_tools.is_empty() && self.tools_of(Class::Sql).is_some_and(|t| t.is_empty())
    }
}

/// Whether a requested `pack` can collect in this situation: `Ok` with the tools it is
/// aimed at (empty when it is aimed at the server as a whole), or why it cannot. Whether
/// the pack was requested (`Config::runs_pack`) is asked separately.
pub fn applies(pack: Pack, s: &Situation) -> Result<Vec<String>, Refusal> {
    let config = s.config;
    let aimed = |class: Class| -> Result<Vec<String>, Refusal> {
        match s.tools_of(class) {
            Some(tools) if tools.is_empty() => Err(Refusal::NoTool(class)),
            Some(tools) => Ok(tools.into_iter().map(str::to_string).collect()),
            None => Ok(Vec::new()),
        }
    };
    let uses_stub = || match config.upstream.kind {
        Some(_) => Ok(()),
        None => needs("no upstream stub ran (set upstream.kind: http or pass --upstream)"),
    };
    match pack {
        Pack::Core | Pack::Effects => Ok(Vec::new()),
        Pack::Fs => aimed(Class::Path),
        Pack::Net if !s.listener => needs("the loopback listener could not be started"),
        Pack::Net => aimed(Class::Url),
        Pack::Git => {
            let tools = aimed(Class::Git)?;
            match config.server_mentions("{repo}") {
                true => Ok(tools),
                false => needs(
                    "the server config has no {repo} placeholder, so the git pack has no repository of the harness's to give it (e.g. --repository {repo})",
                ),
            }
        }
        Pack::Db => match s.database {
            None => needs(
                "server config has no {dsn}/{host}/... placeholder, so the harness cannot start the server once per role",
            ),
            Some(Err(why)) => needs(why),
            // A server that listed no tool at all to the main session may list its tools
            // to a role's session: the db pack then lists them itself.
            Some(Ok(())) if s.no_sql_tool() && s.classes.is_some_and(|c| !c.is_empty()) => {
                Err(Refusal::NoTool(Class::Sql))
            }
            Some(Ok(())) => Ok(Vec::new()),
        },
        Pack::Sqlite if !config.server_mentions("{sqlite}") => needs(
            "server config has no {sqlite} placeholder, so the harness cannot point the server at its seeded file",
        ),
        Pack::Sqlite if s.no_sql_tool() => Err(Refusal::NoTool(Class::Sql)),
        Pack::Sqlite => Ok(s.tools_of(Class::Sql).unwrap_or_default().into_iter().map(str::to_string).collect()),
        Pack::Http => match config.server.url {
            Some(_) => Ok(Vec::new()),
            None => needs("a stdio server: the http pack needs server.url"),
        },
        Pack::Scope if config.scope.tools.is_empty() => needs("scope.tools names no tool"),
        Pack::Scope => {
            uses_stub()?;
            Ok(config.scope.tools.iter().map(|t| t.tool.clone()).collect())
        }
        Pack::SqlGuard | Pack::Upstream => {
            uses_stub()?;
            match pack == Pack::SqlGuard && s.no_sql_tool() {
                true => needs("no SQL tool found (by classification or sql_tools)"),
                false => Ok(Vec::new()),
            }
        }
        Pack::Custom => match config.probes.iter().any(|p| p.is_check()) {
            true => Ok(Vec::new()),
            false => needs("no probe in sealmark.yaml has a check"),
        },
    }
}

/// Why a pack that collected observed nothing its judges read.
pub fn found_nothing(pack: Pack, obs: &Observations) -> String {
    match (pack, aims_at(pack)) {
        (Pack::Db, _) => match obs.db.explainers.first() {
            Some(e) => format!("no SQL tool runs queries ({} only explains them)", e.tool),
            None => Refusal::NoTool(Class::Sql).to_string(),
        },
        (Pack::Effects, _) => "no path tool, and no tool that declares readOnlyHint or openWorldHint (or reads by its name) could be called with harmless arguments".to_string(),
        (Pack::Http, _) => "the server had gone before the raw requests could be sent".to_string(),
        (Pack::Custom, _) => "none of its probes was judged".to_string(),
        (Pack::Scope, _) => "no scoped tool could be called (see Not covered)".to_string(),
        (_, Some(class)) => format!("no {class} tool could be given a harness-owned argument (see Not covered)"),
        (_, None) => "nothing to aim at".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(tool: &str, class: Class) -> Classification {
        Classification {
            tool: tool.to_string(),
            class,
            param: None,
            confidence: "high".to_string(),
            annotations: Vec::new(),
            reason: String::new(),
            secondary: None,
        }
    }

    #[test]
    fn each_pack_says_what_it_needs() {
        let config = Config::default();
        let classes = [class("read_file", Class::Path)];
        let s = Situation { config: &config, classes: Some(&classes), database: None, listener: true };
        assert_eq!(applies(Pack::Fs, &s), Ok(vec!["read_file".to_string()]));
        assert_eq!(applies(Pack::Net, &s), Err(Refusal::NoTool(Class::Url)));
        assert_eq!(Refusal::NoTool(Class::Url).to_string(), "no url tool found");
        let why = |pack| applies(pack, &s).unwrap_err().to_string();
        assert!(why(Pack::Db).contains("{dsn}"));
        assert!(why(Pack::Sqlite).contains("{sqlite}"));
        assert!(why(Pack::Http).contains("server.url"));
        assert_eq!(why(Pack::Scope), "scope.tools names no tool");
        assert!(why(Pack::Upstream).contains("upstream.kind"));
        let mut flagged = class("read_file", Class::Path);
        flagged.secondary = Some(Class::Url);
        let with_flag = Situation { classes: Some(std::slice::from_ref(&flagged)), ..s };
        assert_eq!(applies(Pack::Net, &with_flag), Ok(vec!["read_file".to_string()]), "a path tool that fetches URLs");
        let unknown = Situation { classes: None, database: Some(Ok(())), listener: false, ..s };
        assert_eq!(applies(Pack::Db, &unknown), Ok(vec![]), "tools unknown: not checked");
        assert!(applies(Pack::Net, &unknown).unwrap_err().to_string().contains("listener"));
        assert!(applies(Pack::Core, &unknown).is_ok() && applies(Pack::Custom, &unknown).is_err());
    }
}
