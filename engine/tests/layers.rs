//! The engine's modules form layers: among the modules of one folder, imports never go
//! round in a circle. A child may use its parent's vocabulary (`super::Answer`) and a
//! parent its children; what this test refuses is two siblings, or two of their
//! descendants, reaching each other in both directions — the shape in which neither
//! can be read, tested or moved alone. The runtime's folders (`children`, `targets`,
//! `session`, `packs`, then `run` and `doctor`) are held to it as the pure engine is,
//! and no pure module may name a runtime one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every source file of the crate by module path (`judge::db`), with its text before
/// the unit-test module.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<String, String>, root: &Path) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, out, root);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).expect("under src").with_extension("");
                let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
                if parts.last().is_some_and(|p| p == "mod" || p == "lib") {
                    parts.pop();
                }
                let text = std::fs::read_to_string(&path).expect("read source");
                let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default().to_string();
                out.insert(parts.join("::"), text);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    walk(&root, &mut out, &root);
    out
}

/// The top-level modules lib.rs compiles only when `gate` holds (`runtime`, `test`).
fn gated_modules(lib: &str, gate: &str) -> BTreeSet<String> {
    let lines: Vec<&str> = lib.lines().collect();
    let mut out = BTreeSet::new();
    for pair in lines.windows(2) {
        let gated = pair[0].starts_with("#[cfg(") && pair[0].contains(gate);
        let name = pair[1].trim_start_matches("pub ").strip_prefix("mod ").map(|m| m.trim_end_matches(';'));
        if let (true, Some(name)) = (gated, name) {
            out.insert(name.to_string());
        }
    }
    out
}

/// The module paths a file names: `crate::a::b::C`, `crate::{a, b::c}`, `super::x`.
fn named_paths(module: &str, text: &str) -> Vec<String> {
    let plain = regex::Regex::new(r"\b(crate|super)::((?:\w+::)*\w+)").expect("regex");
    let grouped = regex::Regex::new(r"\bcrate::\{([^}]*)\}").expect("regex");
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut out = Vec::new();
    for c in plain.captures_iter(text) {
        match &c[1] {
            "crate" => out.push(c[2].to_string()),
            _ if parent.is_empty() => out.push(c[2].to_string()),
            _ => out.push(format!("{parent}::{}", &c[2])),
        }
    }
    for c in grouped.captures_iter(text) {
        out.extend(c[1].split(',').map(|p| p.trim().trim_start_matches('{').to_string()).filter(|p| !p.is_empty()));
    }
    out
}

/// The deepest module a path lies in.
fn owner<'a>(path: &str, known: &'a BTreeMap<String, String>) -> Option<&'a str> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len()).rev().find_map(|n| known.get_key_value(&parts[..n].join("::")).map(|(k, _)| k.as_str()))
}

/// An import from `from` to `to` as an edge between two siblings: the children of the
/// modules' common ancestor that contain each. `None` when one contains the other.
fn sibling_edge(from: &str, to: &str) -> Option<(String, String)> {
    let (a, b): (Vec<&str>, Vec<&str>) = (from.split("::").collect(), to.split("::").collect());
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == a.len() || common == b.len() {
        return None;
    }
    Some((a[..=common].join("::"), b[..=common].join("::")))
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or_default()
}

#[test]
fn the_engine_has_no_import_cycles() {
    let all = modules();
    let tests_only = gated_modules(&all[""], "test");
    let checked: BTreeMap<String, String> =
        all.into_iter().filter(|(m, _)| !tests_only.contains(top(m)) && !m.is_empty()).collect();
    assert!(checked.contains_key("judge::db") && checked.contains_key("packs::fs"), "the walk found the modules");

    // Each sibling edge with one import that makes it, to name in a failure.
    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    for (module, text) in &checked {
        for path in named_paths(module, text) {
            if let Some(to) = owner(&path, &checked)
                && let Some(edge) = sibling_edge(module, to)
            {
                edges.entry(edge).or_insert_with(|| format!("{module} names {path}"));
            }
        }
    }
    assert!(!edges.is_empty(), "the modules import each other somewhere");

    // A cycle is a path back to where it started; report the first one found from each module.
    let next = |m: &str| -> Vec<String> { edges.keys().filter(|(a, _)| a == m).map(|(_, b)| b.clone()).collect() };
    let mut cycles = Vec::new();
    for start in edges.keys().map(|(a, _)| a.clone()).collect::<BTreeSet<_>>() {
        let mut stack = vec![vec![start.clone()]];
        let mut seen = BTreeSet::new();
        while let Some(route) = stack.pop() {
            let last = route.last().expect("non-empty").clone();
            for to in next(&last) {
                if to == start {
                    let steps: Vec<String> = route
                        .iter()
                        .zip(route.iter().skip(1).chain([&start]))
                        .map(|(a, b)| edges[&(a.clone(), b.clone())].clone())
                        .collect();
                    cycles.push(format!("{} → {start}:\n    {}", route.join(" → "), steps.join("\n    ")));
                    stack.clear();
                    break;
                }
                if seen.insert(to.clone()) {
                    let mut longer = route.clone();
                    longer.push(to);
                    stack.push(longer);
                }
            }
        }
    }
    assert!(cycles.is_empty(), "import cycles in the engine:\n{}", cycles.join("\n"));
}

#[test]
fn the_pure_engine_names_no_runtime_module() {
    let all = modules();
    let runtime = gated_modules(&all[""], "runtime");
    assert!(runtime.contains("targets") && runtime.contains("packs"), "lib.rs gates the runtime: {runtime:?}");
    let mut offences = Vec::new();
    for (module, text) in all.iter().filter(|(m, _)| !m.is_empty() && !runtime.contains(top(m))) {
        for path in named_paths(module, text) {
            if runtime.contains(top(&path)) {
                offences.push(format!("{module} names {path}"));
            }
        }
    }
    assert!(offences.is_empty(), "the pure engine must build without the runtime:\n{}", offences.join("\n"));
}
