//! Search across the site: every check, every pack and every section of the
//! hand-written pages, matched in the browser with no index server.

use crate::pages::{sections, source};
use crate::route::{Page, Route};
use sealmark_engine::record::Record;
use sealmark_engine::registry::{self, CHECKS, PACKS};
use sealmark_engine::text::visible;

/// Something search can find.
#[derive(Debug, Clone)]
pub struct Entry {
    pub title: String,
    /// Where it lives, shown under the title ("check · fs", "Methodology").
    pub context: String,
    pub route: Route,
    /// Lower-case words searched in, the title's first.
    haystack: String,
    title_lower: String,
}

impl Entry {
    fn new(title: String, context: String, route: Route, body: &[&str]) -> Entry {
        let title_lower = title.to_lowercase();
        let haystack = format!("{title_lower} {}", body.join(" ").to_lowercase());
        Entry { title, context, route, haystack, title_lower }
    }
}

/// Everything searchable, in site order.
pub fn index() -> Vec<Entry> {
    let mut out = Vec::new();
    for c in CHECKS {
        let probes: Vec<&str> = c.probes.iter().flat_map(|p| [p.name, p.sends, p.note]).collect();
        let mut body =
            vec![c.pack.id(), c.scope, c.verdict, c.proves_pass, c.fix, c.false_positives, c.false_negatives];
        body.extend(probes);
        body.extend(c.settings.iter().map(|s| s.key));
        let cwe: Vec<String> = c.references.cwe.iter().map(|n| format!("CWE-{n}")).collect();
        body.extend(cwe.iter().map(String::as_str));
        body.push(c.references.owasp_mcp);
        out.push(Entry::new(
            format!("{} — {}", c.id, c.label),
            format!("check · pack {}", c.pack.id()),
            Route::Check(c.id.to_string()),
            &body,
        ));
    }
    for p in PACKS {
        out.push(Entry::new(
            format!("pack {}", p.pack.id()),
            p.title.to_string(),
            Route::Packs(Some(p.pack.id().to_string())),
            &[p.title, p.applies],
        ));
    }
    for page in Page::ALL {
        for s in sections(source(page)) {
            out.push(Entry::new(s.title, page.title().to_string(), Route::Page(page, Some(s.slug)), &[&s.text]));
        }
    }
    out
}

/// What the open record holds, searched before the site: its server, every check with
/// its summary, tools and references, and every tool it classified. Each leads to its
/// place in the report.
pub fn record_entries(r: &Record) -> Vec<Entry> {
    let mut out = vec![Entry::new(
        format!("{} {}", visible(&r.server.name), visible(&r.server.version)),
        "this record · server".to_string(),
        Route::Report,
        &[&visible(&r.server.command), &visible(r.server.url.as_deref().unwrap_or(""))],
    )];
    for c in &r.checks {
        // Only ids the registry knows lead to an anchor, so no route comes from the record.
        let def = registry::check(&c.id);
        let route = def.map_or(Route::Report, |d| Route::At(format!("check-{}", d.id)));
        let mut body: Vec<String> = vec![visible(&c.id), visible(&c.summary), c.verdict.id().to_string()];
        body.extend(c.evidence.iter().filter_map(|e| e.tool.as_deref()).map(visible));
        if let Some(d) = def {
            body.extend(d.references.cwe.iter().map(|n| format!("CWE-{n}")));
            body.push(d.references.owasp_mcp.to_string());
        }
        let body: Vec<&str> = body.iter().map(String::as_str).collect();
        out.push(Entry::new(
            format!("{} {} · {}", c.verdict.tag(), visible(&c.label), visible(&c.id)),
            format!("this record · pack {}", visible(&c.pack)),
            route,
            &body,
        ));
    }
    for t in &r.classification {
        out.push(Entry::new(
            visible(&t.tool),
            format!("this record · tool, class {}", t.class),
            Route::At("classification-h".to_string()),
            &[t.class.id(), &visible(&t.reason)],
        ));
    }
    out
}

/// The entries holding every word of the query, those whose title holds them first.
pub fn search<'a>(index: &'a [Entry], query: &str) -> Vec<&'a Entry> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    if words.is_empty() {
        return Vec::new();
    }
    let mut hits: Vec<(bool, &Entry)> = index
        .iter()
        .filter(|e| words.iter().all(|w| e.haystack.contains(w.as_str())))
        .map(|e| (!words.iter().all(|w| e.title_lower.contains(w.as_str())), e))
        .collect();
    hits.sort_by_key(|(body_only, _)| *body_only);
    hits.into_iter().map(|(_, e)| e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_is_searched_by_tool_check_and_reference() {
        let rec = sealmark_engine::sample::capped();
        let entries = record_entries(&rec);
        let fail = rec.checks.iter().find(|c| c.verdict == sealmark_engine::model::Verdict::Fail).unwrap();
        let def = registry::check(&fail.id).unwrap();
        let cwe = format!("CWE-{}", def.references.cwe[0]);
        for query in [fail.id.as_str(), cwe.as_str(), def.references.owasp_mcp] {
            let hits = search(&entries, query);
            assert!(
                hits.iter().any(|e| e.route == Route::At(format!("check-{}", fail.id))),
                "{query} does not find {}",
                fail.id
            );
        }
        let tool = &rec.classification[0].tool;
        assert!(search(&entries, tool).iter().any(|e| e.context.starts_with("this record · tool")), "{tool}");
        // The reference is searched by its references too.
        assert!(search(&index(), &cwe).iter().any(|e| e.route == Route::Check(fail.id.clone())), "{cwe}");
    }

    #[test]
    fn a_check_id_finds_its_page_first() {
        let idx = index();
        let hits = search(&idx, "fs-read-escape");
        assert_eq!(hits.first().map(|e| e.route.clone()), Some(Route::Check("fs-read-escape".into())));
    }

    #[test]
    fn words_anywhere_in_a_page_find_its_section() {
        let idx = index();
        let hits = search(&idx, "critical CAP");
        assert!(hits.iter().any(|e| matches!(e.route, Route::Page(Page::Methodology, _))), "{hits:#?}");
        assert!(search(&idx, "   ").is_empty());
        assert!(search(&idx, "zzqx-no-such-word").is_empty());
    }

    #[test]
    fn title_matches_come_before_body_matches() {
        let idx = index();
        let hits = search(&idx, "symlink");
        let first_body = hits.iter().position(|e| !e.title_lower.contains("symlink")).unwrap_or(hits.len());
        assert!(hits[..first_body].iter().all(|e| e.title_lower.contains("symlink")));
        assert!(first_body > 0, "{hits:#?}");
    }
}
