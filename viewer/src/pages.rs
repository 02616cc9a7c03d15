//! The hand-written pages of `site/`, compiled in and rendered from markdown. They are
//! our own text, so they become markup; nothing a server wrote ever goes through here.

use crate::route::Page;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd, html};

/// The markdown of a page.
pub fn source(page: Page) -> &'static str {
    match page {
        Page::Methodology => include_str!("../../site/methodology.md"),
        Page::Grades => include_str!("../../site/reference/grades.md"),
        Page::Observers => include_str!("../../site/reference/observers.md"),
        Page::Standard => include_str!("../../site/standard.md"),
        Page::Classification => include_str!("../../site/classification.md"),
        Page::Sandbox => include_str!("../../site/sandbox.md"),
        Page::Environment => include_str!("../../site/environment.md"),
        Page::Output => include_str!("../../site/output.md"),
        Page::CustomProbes => include_str!("../../site/custom-probes.md"),
        Page::Backend => include_str!("../../site/backend.md"),
        Page::Badge => include_str!("../../site/badge.md"),
        Page::Safety => include_str!("../../site/safety.md"),
        Page::Troubleshooting => include_str!("../../site/troubleshooting.md"),
        Page::Fleet => include_str!("../../site/fleet.md"),
        Page::Ci => include_str!("../../site/ci.md"),
        Page::Agents => include_str!("../../site/agents.md"),
        Page::Configuration => include_str!("../../site/configuration.md"),
        Page::Cli => include_str!("../../site/reference/cli.md"),
        Page::Roadmap => include_str!("../../site/roadmap.md"),
        Page::Changelog => include_str!("../../site/changelog.md"),
        Page::Disclosure => include_str!("../../site/disclosure.md"),
    }
}

/// A section of a page, for search: its heading, the anchor it gets and its words.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub slug: String,
    pub title: String,
    pub text: String,
}

/// A heading's anchor: lower case, words joined by `-`.
pub fn slug(title: &str) -> String {
    let mut s = String::new();
    for ch in title.chars() {
        if ch.is_ascii_alphanumeric() {
            s.push(ch.to_ascii_lowercase());
        } else if (ch == ' ' || ch == '-' || ch == '_' || ch == '.') && !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

fn options() -> Options {
    Options::ENABLE_TABLES
}

/// The page's sections (a heading and the text up to the next one).
pub fn sections(markdown: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    let mut in_heading = false;
    for ev in Parser::new_ext(markdown, options()) {
        match ev {
            Event::Start(Tag::Heading { .. }) => {
                in_heading = true;
                out.push(Section { slug: String::new(), title: String::new(), text: String::new() });
            }
            Event::End(TagEnd::Heading(_)) => {
                in_heading = false;
                if let Some(s) = out.last_mut() {
                    s.slug = slug(&s.title);
                }
            }
            Event::Text(t) | Event::Code(t) => match out.last_mut() {
                Some(s) if in_heading => s.title.push_str(&t),
                Some(s) => {
                    s.text.push_str(&t);
                    s.text.push(' ');
                }
                None => {}
            },
            _ => {}
        }
    }
    out
}

/// The page as HTML, every heading with its anchor, and every item of a numbered list
/// that is led by a term in bold with the term's (the grading formula's rules).
pub fn to_html(markdown: &str) -> String {
    let mut slugs = sections(markdown).into_iter().map(|s| s.slug);
    let events: Vec<Event> = Parser::new_ext(markdown, options()).collect();
    let terms = term_anchors(&events);
    let mut out_events = Vec::with_capacity(events.len());
    for (at, ev) in events.into_iter().enumerate() {
        out_events.push(match ev {
            Event::Start(Tag::Heading { level, classes, attrs, .. }) => {
                let id = slugs.next().map(CowStr::from);
                Event::Start(Tag::Heading { level, id, classes, attrs })
            }
            Event::Start(Tag::Item) => match terms.iter().find(|(i, _)| *i == at) {
                Some((_, id)) => Event::Html(CowStr::from(format!("<li id=\"{id}\">"))),
                None => Event::Start(Tag::Item),
            },
            other => other,
        });
    }
    let mut out = String::new();
    html::push_html(&mut out, out_events.into_iter());
    out
}

/// The anchors of a page's terms: each item of a numbered list whose text begins with a
/// bold term, by the position of its start event; a term that repeats keeps its first.
pub fn term_anchors(events: &[Event]) -> Vec<(usize, String)> {
    let mut numbered = Vec::new();
    let mut found: Vec<(usize, String)> = Vec::new();
    for (at, ev) in events.iter().enumerate() {
        match ev {
            Event::Start(Tag::List(first)) => numbered.push(first.is_some()),
            Event::End(TagEnd::List(_)) => {
                numbered.pop();
            }
            Event::Start(Tag::Item) if numbered.last() == Some(&true) => {
                let mut next = events[at + 1..].iter().skip_while(|e| matches!(e, Event::Start(Tag::Paragraph)));
                if let (Some(Event::Start(Tag::Strong)), Some(Event::Text(term))) = (next.next(), next.next()) {
                    let id = slug(term);
                    if !id.is_empty() && !found.iter().any(|(_, f)| *f == id) {
                        found.push((at, id));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// The term anchors of a page, for the test of links that aim at them.
#[cfg(test)]
fn terms(markdown: &str) -> Vec<String> {
    let events: Vec<Event> = Parser::new_ext(markdown, options()).collect();
    term_anchors(&events).into_iter().map(|(_, id)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_get_the_anchors_search_links_to() {
        let md = "# Grading formula\n\nPoints: pass is 1.\n\n## The exit gate (`--fail-under`)\n\nExits 1.\n";
        let s = sections(md);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].slug.as_str(), s[0].text.trim()), ("grading-formula", "Points: pass is 1."));
        assert_eq!(s[1].slug, "the-exit-gate-fail-under");
        let html = to_html(md);
        // The page's own title is its one h1.
        assert!(html.contains(r#"<h1 id="grading-formula">"#), "{html}");
        assert!(html.contains(r#"<h2 id="the-exit-gate-fail-under">"#), "{html}");
    }

    #[test]
    fn each_rule_of_the_grading_formula_is_an_anchor_of_the_methodology() {
        let html = to_html(source(Page::Methodology));
        for rule in sealmark_engine::glance::Rule::ALL {
            assert!(html.contains(&format!("<li id=\"{}\">", rule.anchor())), "{} has no anchor", rule.name());
        }
        let sections: Vec<String> = sections(source(Page::Methodology)).into_iter().map(|s| s.slug).collect();
        assert!(terms(source(Page::Methodology)).iter().all(|t| !sections.contains(t)), "a term shadows a section");
    }

    #[test]
    fn every_page_has_sections_with_distinct_anchors() {
        for page in Page::ALL {
            let s = sections(source(page));
            assert!(s.len() > 2, "{page:?} has {} sections", s.len());
            let mut slugs: Vec<&str> = s.iter().map(|s| s.slug.as_str()).collect();
            slugs.sort_unstable();
            let n = slugs.len();
            slugs.dedup();
            assert_eq!(slugs.len(), n, "{page:?}: two sections share an anchor");
        }
    }

    /// Every link a page of the site makes leads somewhere: a page that exists, a section
    /// that page has, a check the registry declares, or a pack. A page the site links to
    /// and nobody wrote fails here.
    #[test]
    fn every_link_of_the_site_resolves() {
        use crate::route::Route;
        let mut broken = Vec::new();
        for page in Page::ALL {
            let links: Vec<String> = Parser::new_ext(source(page), options())
                .filter_map(|ev| match ev {
                    Event::Start(Tag::Link { dest_url, .. }) => Some(dest_url.to_string()),
                    _ => None,
                })
                .collect();
            assert!(page != Page::Methodology || !links.is_empty(), "the walk finds links");
            for target in &links {
                let target = target.as_str();
                let ok = match target.strip_prefix('#') {
                    None => target.starts_with("https://") || target.starts_with("http://"),
                    Some(_) => match Route::parse(target) {
                        Route::Report => target == "#/",
                        // A place in the open record: no page can know it is there.
                        Route::At(_) => false,
                        Route::Packs(None) | Route::Checks => true,
                        Route::Packs(Some(p)) => sealmark_engine::model::Pack::from_id(&p).is_some(),
                        Route::Check(id) => sealmark_engine::registry::CHECKS.iter().any(|c| c.id == id),
                        Route::Page(_, None) => true,
                        Route::Page(to, Some(section)) => {
                            sections(source(to)).iter().any(|s| s.slug == section)
                                || terms(source(to)).contains(&section)
                        }
                        // A server of the open record: no page can know it exists.
                        Route::Server(_) => false,
                    },
                };
                if !ok {
                    broken.push(format!("{} links to {target}", page.slug()));
                }
            }
        }
        assert!(broken.is_empty(), "links that lead nowhere:\n{}", broken.join("\n"));
    }
}
