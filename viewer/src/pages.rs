//! The hand-written pages of `site/`, compiled in and rendered from markdown. They are
//! our own text, so they become markup; nothing a server wrote ever goes through here.

use crate::route::Page;
use pulldown_cmark::{CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd, html};

/// The markdown of a page.
pub fn source(page: Page) -> &'static str {
    match page {
        Page::Methodology => include_str!("../../site/methodology.md"),
        Page::Grades => include_str!("../../site/reference/grades.md"),
        Page::Observers => include_str!("../../site/reference/observers.md"),
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
        Page::Configuration => include_str!("../../site/configuration.md"),
        Page::Cli => include_str!("../../site/reference/cli.md"),
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

/// The page as HTML, every heading with its anchor.
pub fn to_html(markdown: &str) -> String {
    let mut slugs = sections(markdown).into_iter().map(|s| s.slug);
    let events = Parser::new_ext(markdown, options()).map(|ev| match ev {
        Event::Start(Tag::Heading { level, classes, attrs, .. }) => {
            let id = slugs.next().map(CowStr::from);
            Event::Start(Tag::Heading { level: demote(level), id, classes, attrs })
        }
        Event::End(TagEnd::Heading(level)) => Event::End(TagEnd::Heading(demote(level))),
        other => other,
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

/// The page's own `#` title sits under the viewer's heading: one level down.
fn demote(level: HeadingLevel) -> HeadingLevel {
    match level {
        HeadingLevel::H1 => HeadingLevel::H2,
        HeadingLevel::H2 => HeadingLevel::H3,
        HeadingLevel::H3 => HeadingLevel::H4,
        _ => HeadingLevel::H5,
    }
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
        assert!(html.contains(r#"<h2 id="grading-formula">"#), "{html}");
        assert!(html.contains(r#"<h3 id="the-exit-gate-fail-under">"#), "{html}");
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
                        Route::Packs(None) | Route::Checks => true,
                        Route::Packs(Some(p)) => sealmark_engine::model::Pack::from_id(&p).is_some(),
                        Route::Check(id) => sealmark_engine::registry::CHECKS.iter().any(|c| c.id == id),
                        Route::Page(_, None) => true,
                        Route::Page(to, Some(section)) => sections(source(to)).iter().any(|s| s.slug == section),
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
