//! The methodology and checks-reference site: packs, every check's page (the facts
//! `sealmark explain` prints, from the registry compiled in), the hand-written pages,
//! and search over all of them.

use crate::pages::{source, to_html};
use crate::route::{Page, Route};
use crate::search::{Entry, search};
use leptos::prelude::*;
use sealmark_engine::registry::{self, CHECKS, PACKS};
use sealmark_engine::render::reference::{
    STATUS, common_settings, config_keys, cwe_list, decided_by, pack_line, preface, scoring_sentence, setting_key,
    threshold_line, weight_word,
};
use sealmark_engine::{METHODOLOGY, VERSION};
use std::sync::Arc;

#[component]
pub fn SearchResults(index: Arc<Vec<Entry>>, query: String) -> impl IntoView {
    let hits: Vec<(String, String, String)> = search(&index, &query)
        .into_iter()
        .take(40)
        .map(|e| (e.title.clone(), e.context.clone(), e.route.href()))
        .collect();
    let count = hits.len();
    view! {
        <section class="search-results" aria-live="polite">
            <h1>{format!("Search: {query}")}</h1>
            <p class="muted">{if count == 0 { "Nothing matches every word.".to_string() } else { format!("{count} result(s)") }}</p>
            <ul>
                {hits.into_iter().map(|(title, context, href)| view! {
                    <li><a href=href>{title}</a>" "<span class="muted">{context}</span></li>
                }).collect_view()}
            </ul>
        </section>
    }
}

#[component]
pub fn Packs() -> impl IntoView {
    view! {
        <article class="site">
            <h1>"Packs"</h1>
            <p>{format!("Methodology {METHODOLOGY}, sealmark {VERSION}. A pack gets its own letter; the badge carries the standard packs only.")}</p>
            {PACKS.iter().map(|p| {
                let status = if p.pack.is_candidate() { " · candidate pack" } else { "" };
                view! {
                    <section class="pack-doc" id=format!("pack-{}", p.pack.id())>
                        <h2>{p.pack.id()}<span class="muted">{status}</span></h2>
                        <p>{p.title}". Runs "{p.applies}"."</p>
                        <ul>
                            {registry::pack_checks(p.pack).map(|c| view! {
                                <li><a href=Route::Check(c.id.to_string()).href()>{c.id}</a>" — "{c.label}
                                    <span class="muted">{format!(" ({})", weight_word(c))}</span></li>
                            }).collect_view()}
                        </ul>
                    </section>
                }
            }).collect_view()}
        </article>
    }
}

#[component]
pub fn ChecksIndex() -> impl IntoView {
    view! {
        <article class="site">
            <h1>"Checks reference"</h1>
            <p>{format!("Every check sealmark {VERSION} runs ({} in all, methodology {METHODOLOGY}). Each page says the same as sealmark explain <id>.", CHECKS.len())}</p>
            <table class="checks-index">
                <thead><tr><th scope="col">"check"</th><th scope="col">"pack"</th><th scope="col">"weight"</th><th scope="col">"what it asks"</th></tr></thead>
                <tbody>
                    {CHECKS.iter().map(|c| view! {
                        <tr>
                            <td><a href=Route::Check(c.id.to_string()).href()>{c.id}</a></td>
                            <td><a href=Route::Packs(Some(c.pack.id().to_string())).href()>{c.pack.id()}</a></td>
                            <td>{weight_word(c)}{c.candidate.then_some(" · candidate")}</td>
                            <td>{c.label}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </article>
    }
}

#[component]
pub fn CheckPage(id: String) -> impl IntoView {
    let Some(c) = registry::check(&id) else {
        return view! {
            <article class="site"><h1>"No such check"</h1>
                <p class="problem" role="alert">{format!("sealmark {VERSION} has no check {id}.")}</p>
                <p><a href=Route::Checks.href()>"Every check"</a></p>
            </article>
        }
        .into_any();
    };
    let facts: Vec<(&str, String)> = vec![
        ("pack", pack_line(c)),
        ("weight", c.weight_line()),
        ("scope", c.scope.to_string()),
        ("decided by", decided_by(c)),
        ("since", format!("{} (methodology {METHODOLOGY}, sealmark {VERSION})", c.since)),
        ("config keys", config_keys(c).join(", ")),
        ("references", format!("OWASP MCP Top 10: {} · {}", c.references.owasp_mcp, cwe_list(c))),
    ];
    view! {
        <article class="site check-page">
            <p class="crumbs"><a href=Route::Checks.href()>"Checks"</a>" / "
                <a href=Route::Packs(Some(c.pack.id().to_string())).href()>{format!("pack {}", c.pack.id())}</a></p>
            <h1><code>{c.id}</code>" "<span class="chip">{STATUS}</span>{c.candidate.then(|| view! { <span class="chip">"candidate"</span> })}</h1>
            <p class="lede">{c.label}</p>
            <p class="muted preface">{preface(c)}</p>
            <dl class="facts">
                {facts.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
            </dl>
            <h2>"Probes"</h2>
            <ul>{c.probes.iter().map(|p| view! { <li><code>{p.name}</code>" — "{p.described()}</li> }).collect_view()}</ul>
            <h2>"Settings and thresholds"</h2>
            <p>{common_settings(c)}</p>
            {threshold_line(c).map(|line| view! { <p>{line}</p> })}
            {(!c.settings.is_empty()).then(|| view! {
                <table>
                    <thead><tr><th scope="col">"key"</th><th scope="col">"default"</th><th scope="col">"standard"</th><th scope="col">"meaning"</th></tr></thead>
                    <tbody>
                        {c.settings.iter().map(|s| view! {
                            <tr>
                                <td><code>{setting_key(c, s)}</code></td>
                                <td><code>{s.default}</code></td>
                                <td>{if c.locks(s) { "locked" } else { "not locked" }}</td>
                                <td>{format!("{} ({})", s.meaning, s.kind.describe())}</td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            })}
            <h2>"How the verdict is established"</h2>
            <p>{c.verdict}</p>
            <p>{scoring_sentence(c)}" "<a href=Route::Page(Page::Grades, None).href()>"How weights make a grade."</a></p>
            <h2>"What proves a pass"</h2>
            <p>{c.proves_pass}</p>
            <h2>"What to fix"</h2>
            <p>{c.fix}</p>
            <h2>"False positives"</h2>
            <p>{c.false_positives}</p>
            <h2>"False negatives"</h2>
            <p>{c.false_negatives}</p>
            <p class="muted">"Decided by: "
                {c.decided_by.iter().map(|v| view! {
                    <a href=Route::Page(Page::Observers, Some(v.id().to_string())).href()>{v.id()}</a>" "
                }).collect_view()}
                "— see "<a href=Route::Page(Page::Observers, None).href()>"Observers"</a>"."
            </p>
        </article>
    }
    .into_any()
}

#[component]
pub fn MarkdownPage(page: Page) -> impl IntoView {
    // Our own pages, compiled in: markup we wrote, never text from a record.
    let html = to_html(source(page));
    view! { <article class="site markdown" inner_html=html></article> }
}
