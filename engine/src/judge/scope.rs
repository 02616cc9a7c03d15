//! The scope pack: identifiers outside `scope.allow`, aimed through the scoped tools.
//!
//! The names are built from the first `scope.allow` entry and every `scope.deny` entry;
//! a built name that the declared scope itself allows is dropped, so every probe is out
//! of scope as written.

use super::Finding;
use super::backend::{ToolRun, let_through};

/// One name to send.
#[derive(Debug, Clone, PartialEq)]
pub struct NameProbe {
    pub probe: &'static str,
    pub name: String,
    /// The token the name carries; `None` for a name that cannot carry one (a bare
    /// container, a deny entry), which is found by its last part instead, during its call.
    pub token: Option<String>,
}

impl NameProbe {
    /// What a request must contain to count as this name reaching the stub.
    pub fn needle(&self, separator: char) -> String {
        match &self.token {
            Some(t) => t.clone(),
            None => last_part(&self.name, separator).trim_matches('"').to_ascii_lowercase(),
        }
    }
}

/// The allowed name the control sends, also `{a}` of the sql-guard pack: the first exact
/// `scope.allow` entry, else the first prefix followed by `sm_control` (`sm_table` with no
/// `scope.allow`).
pub fn allowed_name(scope: &ScopeConfig) -> String {
    let sep = scope.separator;
    if let Some(exact) = scope.allow.iter().find(|e| !e.ends_with(sep)) {
        return exact.clone();
    }
    match scope.allow.first() {
        Some(prefix) => format!("{prefix}sm_control"),
        None => "sm_table".to_string(),
    }
}

/// The container of the first `scope.allow` entry: the prefix without its separator, or
/// an exact entry's parent (empty when it has none).
pub fn container(scope: &ScopeConfig) -> String {
    let sep = scope.separator;
    match scope.allow.first() {
        Some(e) if e.ends_with(sep) => e[..e.len() - sep.len_utf8()].to_string(),
        Some(e) => parent(e, sep).to_string(),
        None => String::new(),
    }
}

/// Whether the declared scope allows `name` exactly as written.
pub fn allows(scope: &ScopeConfig, name: &str) -> bool {
    let sep = scope.separator;
    !scope.deny.iter().any(|d| d == name)
        && scope.allow.iter().any(|e| if e.ends_with(sep) { name.starts_with(e.as_str()) } else { name == e })
}

fn parent(name: &str, sep: char) -> &str {
    name.rsplit_once(sep).map_or("", |(p, _)| p)
}

fn last_part(name: &str, sep: char) -> &str {
    name.rsplit_once(sep).map_or(name, |(_, l)| l)
}

fn join(parts: &[&str], sep: char) -> String {
    parts.iter().filter(|p| !p.is_empty()).copied().collect::<Vec<_>>().join(&sep.to_string())
}

/// Every name outside the scope, each with a fresh token from `mint` where it can carry one.
pub fn names(scope: &ScopeConfig, mut mint: impl FnMut() -> String) -> Vec<NameProbe> {
    let sep = scope.separator;
    let c = container(scope);
    let p = parent(&c, sep).to_string();
    let control = allowed_name(scope);
    let leaf = last_part(&control, sep).to_string();
    let mut out = Vec::new();
    let mut add = |probe: &'static str, name: String, token: Option<String>| {
        if !allows(scope, &name) && !out.iter().any(|n: &NameProbe| n.name == name) {
            out.push(NameProbe { probe, name, token });
        }
    };
    let mut tokened = |probe: &'static str,
                       build: &dyn Fn(&str) -> String,
                       add: &mut dyn FnMut(&'static str, String, Option<String>)| {
        let token = mint();
        add(probe, build(&format!("sm_{token}")), Some(token));
    };
    let encoded_sep: String = sep.to_string().bytes().map(|b| format!("%{b:02X}")).collect();
    tokened("sibling", &|t| join(&[&c, t], sep), &mut add);
    let sibling_container = |t: &str| join(&[&p, t, &leaf], sep);
    tokened("sibling", &sibling_container, &mut add);
    for bare in [&c, &p] {
        if !bare.is_empty() {
            add("bare-container", bare.clone(), None);
        }
    }
    if let Some((_, rest)) = c.split_once(sep) {
        tokened("partial", &|t| join(&[rest, t], sep), &mut add);
    }
    tokened("partial", &|t| t.to_string(), &mut add);
    if !c.is_empty() {
        tokened("prefix-no-separator", &|t| format!("{c}{t}"), &mut add);
    }
    tokened("other-case", &|t| sibling_container(t).to_uppercase(), &mut add);
    for d in &scope.deny {
        add("other-case", d.to_uppercase(), None);
    }
    if !c.is_empty() {
        tokened("quoted", &|t| format!("\"{}\"", join(&[&c, t], sep)), &mut add);
        if c.contains(sep) {
            tokened("quoted", &|t| format!("\"{c}\"{sep}{t}"), &mut add);
        }
    }
    for d in &scope.deny {
        let quoted: Vec<String> = d.split(sep).map(|part| format!("\"{part}\"")).collect();
        add("quoted", quoted.join(&sep.to_string()), None);
    }
    tokened(
        "encoded-separator",
        &|t| {
            let mut parts: Vec<&str> = c.split(sep).filter(|s| !s.is_empty()).collect();
            parts.push(t);
            parts.join(&encoded_sep)
        },
        &mut add,
    );
    tokened("traversal", &|t| format!("{t}/../{control}"), &mut add);
    tokened("traversal", &|t| format!("{control}/../../{t}"), &mut add);
    for d in &scope.deny {
        add("deny", d.clone(), None);
    }
    out
}

/// `scope-escape`: no name outside the scope reaches the upstream through a scoped tool.
pub fn escape(runs: &[ToolRun]) -> Finding {
    let_through(
        runs,
        "names outside scope.allow",
        "check the spelling of scope.allow and that scope.tools names the parameter that carries the identifier",
    )
}

/// `scope:` as written.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeConfig {
    pub tools: Vec<ScopedTool>,
    /// Exact names, and prefixes (entries ending in `separator`).
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub separator: char,
}

impl Default for ScopeConfig {
    fn default() -> Self {
        ScopeConfig { tools: Vec::new(), allow: Vec::new(), deny: Vec::new(), separator: '.' }
    }
}

/// One `scope.tools` entry: the tool and the parameter that carries the identifier.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScopedTool {
    pub tool: String,
    pub param: String,
    /// The line of `tool`, for errors found once the server's tools are known.
    pub line: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> ScopeConfig {
        ScopeConfig {
            tools: Vec::new(),
            allow: vec!["sales.public.".into()],
            deny: vec!["hr.private.salaries".into()],
            separator: '.',
        }
    }

    fn minted(scope: &ScopeConfig) -> Vec<(String, String)> {
        let mut n = 0;
        names(scope, || {
            n += 1;
            format!("t{n}")
        })
        .into_iter()
        .map(|p| (p.probe.to_string(), p.name))
        .collect()
    }

    #[test]
    fn the_example_scope_gives_every_family_and_nothing_in_scope() {
        let got = minted(&example());
        let expect = [
            ("sibling", "sales.sm_t2.sm_control"),
            ("bare-container", "sales.public"),
            ("bare-container", "sales"),
            ("partial", "public.sm_t3"),
            ("partial", "sm_t4"),
            ("prefix-no-separator", "sales.publicsm_t5"),
            ("other-case", "SALES.SM_T6.SM_CONTROL"),
            ("other-case", "HR.PRIVATE.SALARIES"),
            ("quoted", "\"sales.public.sm_t7\""),
            ("quoted", "\"sales.public\".sm_t8"),
            ("quoted", "\"hr\".\"private\".\"salaries\""),
            ("encoded-separator", "sales%2Epublic%2Esm_t9"),
            ("traversal", "sm_t10/../sales.public.sm_control"),
            ("deny", "hr.private.salaries"),
        ];
        let expect: Vec<(String, String)> = expect.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(got, expect);
        // sales.public.sm_t1 (the sibling of a prefix) and the second traversal start
        // with the allowed prefix, so they are in scope as written and were dropped.
        assert!(got.iter().all(|(_, n)| !allows(&example(), n)));
    }

    #[test]
    fn an_exact_entry_gives_its_siblings_and_is_the_control() {
        let scope = ScopeConfig { allow: vec!["sales.public.orders".into()], ..example() };
        assert_eq!(allowed_name(&scope), "sales.public.orders");
        let got = minted(&scope);
        assert_eq!(got[0], ("sibling".to_string(), "sales.public.sm_t1".to_string()));
        assert!(got.contains(&("traversal".to_string(), "sales.public.orders/../../sm_t11".to_string())), "{got:?}");
    }

    #[test]
    fn names_without_a_token_are_found_by_their_last_part() {
        let p = NameProbe { probe: "quoted", name: "\"hr\".\"private\".\"Salaries\"".into(), token: None };
        assert_eq!(p.needle('.'), "salaries");
    }
}
