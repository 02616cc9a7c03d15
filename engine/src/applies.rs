//! When a pack applies: what it needs from the config, the harness's targets and the
//! server's tools before it can collect anything. Said once, here: `doctor` prints it
//! ahead of a run, the runtime collects only the packs that apply, and the record
//! gives its words as the reason a requested pack was not graded.

use crate::classify::Classification;
use crate::config::Config;
use crate::model::Pack;

/// What is known before a pack collects.
pub struct Situation<'a> {
    pub config: &'a Config,
    /// The server's tools as classified, once they are known. Conditions on tools are
    /// not checked without them: the db pack lists its own, once per role, and the net
    /// pack also aims at path tools with a switch that makes them fetch URLs.
    pub classes: Option<&'a [Classification]>,
    /// The seeded database: `None` when the server's config holds no database
    /// placeholder, else whether it could be started, and why not.
    pub database: Option<Result<(), &'a str>>,
    /// Whether the loopback listener is up.
    pub listener: bool,
}

impl Situation<'_> {
    fn tools_of(&self, class: &str) -> Option<Vec<&str>> {
        self.classes.map(|cs| cs.iter().filter(|c| c.class == class).map(|c| c.tool.as_str()).collect())
    }

    /// Whether no SQL tool was found, by classification or `sql_tools` (false while the
    /// tools are unknown).
    fn no_sql_tool(&self) -> bool {
        self.config.sql_tools.is_empty() && self.tools_of("sql").is_some_and(|t| t.is_empty())
    }
}

/// Whether a requested `pack` can collect in this situation: `Ok` with the tools it is
/// aimed at (empty when it is aimed at the server as a whole), or why it cannot. Whether
/// the pack was requested (`Config::runs_pack`) and is built is asked separately.
pub fn applies(pack: Pack, s: &Situation) -> Result<Vec<String>, String> {
    let config = s.config;
    let aimed = |class: &str| -> Result<Vec<String>, String> {
        match s.tools_of(class) {
            Some(tools) if tools.is_empty() => Err(format!("no {class} tool found")),
            Some(tools) => Ok(tools.into_iter().map(str::to_string).collect()),
            None => Ok(Vec::new()),
        }
    };
    let uses_stub = || match config.upstream.kind {
        Some(_) => Ok(()),
        None => Err("no upstream stub ran (set upstream.kind: http or pass --upstream)".to_string()),
    };
    match pack {
        Pack::Core | Pack::Effects => Ok(Vec::new()),
        Pack::Fs => aimed("path"),
        Pack::Net if !s.listener => Err("the loopback listener could not be started".to_string()),
        Pack::Net => aimed("url"),
        Pack::Git => {
            let tools = aimed("git")?;
            match config.server_mentions("{repo}") {
                true => Ok(tools),
                false => Err("the server config has no {repo} placeholder, so the git pack has no repository of the harness's to give it (e.g. --repository {repo})".to_string()),
            }
        }
        Pack::Db => match s.database {
            None => Err(
                "server config has no {dsn}/{host}/... placeholder, so the harness cannot start the server once per role"
                    .to_string(),
            ),
            Some(Err(why)) => Err(why.to_string()),
            Some(Ok(())) if s.no_sql_tool() => Err("no sql tool found".to_string()),
            Some(Ok(())) => Ok(Vec::new()),
        },
        Pack::Sqlite if !config.server_mentions("{sqlite}") => Err(
            "server config has no {sqlite} placeholder, so the harness cannot point the server at its seeded file"
                .to_string(),
        ),
        Pack::Sqlite if s.no_sql_tool() => Err("no sql tool found".to_string()),
        Pack::Sqlite => Ok(s.tools_of("sql").unwrap_or_default().into_iter().map(str::to_string).collect()),
        Pack::Http => match config.server.url {
            Some(_) => Ok(Vec::new()),
            None => Err("a stdio server: the http pack needs server.url".to_string()),
        },
        Pack::Scope if config.scope.tools.is_empty() => Err("scope.tools names no tool".to_string()),
        Pack::Scope => {
            uses_stub()?;
            Ok(config.scope.tools.iter().map(|t| t.tool.clone()).collect())
        }
        Pack::SqlGuard | Pack::Upstream => {
            uses_stub()?;
            match pack == Pack::SqlGuard && s.no_sql_tool() {
                true => Err("no SQL tool found (by classification or sql_tools)".to_string()),
                false => Ok(Vec::new()),
            }
        }
        Pack::Custom => match config.probes.iter().any(|p| p.is_check()) {
            true => Ok(Vec::new()),
            false => Err("no probe in sealmark.yaml has a check".to_string()),
        },
    }
}

/// `applies` for a pack the run requested; false for one it did not.
pub fn collects(pack: Pack, s: &Situation) -> bool {
    s.config.runs_pack(pack) && applies(pack, s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(tool: &str, class: &str) -> Classification {
        Classification {
            tool: tool.to_string(),
            class: class.to_string(),
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
        let classes = [class("read_file", "path")];
        let s = Situation { config: &config, classes: Some(&classes), database: None, listener: true };
        assert_eq!(applies(Pack::Fs, &s), Ok(vec!["read_file".to_string()]));
        assert_eq!(applies(Pack::Net, &s), Err("no url tool found".to_string()));
        assert!(applies(Pack::Db, &s).unwrap_err().contains("{dsn}"));
        assert!(applies(Pack::Sqlite, &s).unwrap_err().contains("{sqlite}"));
        assert!(applies(Pack::Http, &s).unwrap_err().contains("server.url"));
        assert_eq!(applies(Pack::Scope, &s), Err("scope.tools names no tool".to_string()));
        assert!(applies(Pack::Upstream, &s).unwrap_err().contains("upstream.kind"));
        let unknown = Situation { classes: None, database: Some(Ok(())), listener: false, ..s };
        assert_eq!(applies(Pack::Db, &unknown), Ok(vec![]), "tools unknown: not checked");
        assert!(applies(Pack::Net, &unknown).unwrap_err().contains("listener"));
        assert!(collects(Pack::Core, &unknown) && !collects(Pack::Custom, &unknown));
    }
}
