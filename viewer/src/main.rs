//! The sealmark viewer: records, their evidence and grade math, a comparison with a
//! baseline, and the methodology and checks reference, all rendered in the browser
//! from the engine the CLI uses. Everything a server wrote is shown as text (Leptos
//! text nodes, never markup), with invisible characters made visible.
//!
//! Where the record comes from, first found: `?record=<path>` fetched relative to the
//! page, else the record `sealmark run --format html` embedded in the page; the user
//! can also pick or drop a file. `&baseline=<path>` (or the baseline picker) compares it
//! with an earlier record by the rule the CLI's `--baseline` applies.

mod load;
mod pages;
mod report;
mod route;
mod search;
mod site;
mod view_model;

use leptos::prelude::*;
use load::{Reader, embedded, fetch_text, file_text, first_file, now_ms, param, parse, parse_baseline};
use route::{Page, Route};
use sealmark_engine::combined::Combined;
use sealmark_engine::record::Record;
use std::sync::Arc;
use std::time::Duration;
use wasm_bindgen::JsCast;

fn main() {
    mount_to_body(App);
}

/// Where the open baseline came from (its path or file name), for the comparison to name.
#[derive(Clone, Copy)]
pub struct BaselineFrom(pub RwSignal<String>);

/// A record slot: the record, a message about it, or nothing yet.
#[derive(Clone)]
pub enum Loaded {
    Nothing,
    Loading,
    Record(Arc<Record>),
    /// The combined record of a run of several servers.
    Several(Arc<Combined>),
    Problem(String),
}

fn current_route() -> Route {
    Route::parse(&web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default())
}

/// Notes on the page how long the first record took to draw (the render benchmark reads it).
fn mark_rendered() {
    set_timeout(
        || {
            let root = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element());
            if let Some(root) = root {
                let _ = root.set_attribute("data-rendered-ms", &format!("{:.0}", now_ms()));
            }
        },
        Duration::ZERO,
    );
}

/// Loads a record slot from a URL relative to the page.
fn load_url(slot: RwSignal<Loaded>, path: String, read: Reader) {
    slot.set(Loaded::Loading);
    leptos::task::spawn_local(async move {
        let loaded = match fetch_text(&path).await {
            Ok(text) => read(&text, &path),
            Err(e) => Loaded::Problem(e),
        };
        slot.set(loaded);
        mark_rendered();
    });
}

/// Loads a record slot from a file the user picked or dropped.
fn load_file(slot: RwSignal<Loaded>, file: Option<web_sys::File>, read: Reader) {
    let Some(file) = file else { return };
    slot.set(Loaded::Loading);
    leptos::task::spawn_local(async move {
        let loaded = match file_text(&file).await {
            Ok(text) => read(&text, &file.name()),
            Err(e) => Loaded::Problem(e),
        };
        slot.set(loaded);
    });
}

fn picked(ev: &leptos::ev::Event) -> Option<web_sys::File> {
    let input: web_sys::HtmlInputElement = ev.target()?.dyn_into().ok()?;
    first_file(input.files())
}

#[component]
fn App() -> impl IntoView {
    let record = RwSignal::new(Loaded::Nothing);
    let baseline = RwSignal::new(Loaded::Nothing);
    let route = RwSignal::new(current_route());
    let query = RwSignal::new(String::new());
    let index = Arc::new(search::index());
    let baseline_from = RwSignal::new(String::new());
    provide_context(BaselineFrom(baseline_from));

    if let Some(path) = param("record") {
        load_url(record, path, parse);
    } else if let Some(text) = embedded() {
        record.set(parse(&text, "the record in this page"));
        mark_rendered();
    }
    if let Some(path) = param("baseline") {
        baseline_from.set(path.clone());
        load_url(baseline, path, parse_baseline);
    }

    let _ = window_event_listener(leptos::ev::hashchange, move |_| {
        query.set(String::new());
        route.set(current_route());
    });
    // A printed report shows every piece of evidence and every grade's math.
    let _ = window_event_listener(leptos::ev::beforeprint, |_| {
        let all = web_sys::window().and_then(|w| w.document()).and_then(|d| d.query_selector_all("details").ok());
        for i in 0..all.as_ref().map_or(0, |l| l.length()) {
            if let Some(el) = all.as_ref().and_then(|l| l.item(i)).and_then(|n| n.dyn_into::<web_sys::Element>().ok()) {
                let _ = el.set_attribute("open", "");
            }
        }
    });
    // Where each place was scrolled to when it was left, so Back returns there.
    let scrolled: StoredValue<std::collections::HashMap<String, f64>> = StoredValue::new(Default::default());
    let left = StoredValue::new(route.get_untracked().href());
    Effect::new(move |_| {
        let here = route.get();
        let window = web_sys::window();
        if let Some(w) = &window {
            let y = w.scroll_y().unwrap_or(0.0);
            scrolled.update_value(|m| {
                m.insert(left.get_value(), y);
            });
        }
        left.set_value(here.href());
        let back_to = scrolled.with_value(|m| m.get(&here.href()).copied());
        let anchor = here.anchor();
        let title = page_title(&here, record.get_untracked());
        set_timeout(
            move || {
                let Some(w) = web_sys::window() else { return };
                let doc = w.document();
                if let Some(d) = &doc {
                    d.set_title(&title);
                }
                let target = anchor.and_then(|a| doc.as_ref().and_then(|d| d.get_element_by_id(&a)));
                match (target, back_to) {
                    (Some(el), _) => {
                        el.scroll_into_view();
                        focus(&el);
                    }
                    (None, Some(y)) => w.scroll_to_with_x_and_y(0.0, y),
                    (None, None) => {
                        w.scroll_to_with_x_and_y(0.0, 0.0);
                        if let Some(h1) = doc.and_then(|d| d.query_selector("main h1").ok().flatten()) {
                            focus(&h1);
                        }
                    }
                }
            },
            Duration::ZERO,
        );
    });
    // The report is drawn once per record, not again for each place in it.
    let view_of = Memo::new(move |_| match route.get() {
        Route::At(_) => Route::Report,
        other => other,
    });

    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        let file = ev.data_transfer().and_then(|dt| first_file(dt.files()));
        if file.is_some() {
            query.set(String::new());
            let _ = web_sys::window().map(|w| w.location().set_hash("#/"));
        }
        load_file(record, file, parse);
    };
    let skip = move |ev: leptos::ev::MouseEvent| {
        ev.prevent_default();
        let main = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id("main"));
        if let Some(el) = main.and_then(|m| m.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = el.focus();
        }
    };
    let nav_link = move |to: Route, label: &'static str| {
        let href = to.href();
        let here = move || {
            let r = route.get();
            let same = match (&r, &to) {
                (Route::Check(_), Route::Checks) => true,
                (Route::Server(_) | Route::At(_), Route::Report) => true,
                (Route::Page(a, _), Route::Page(b, _)) => a == b,
                (Route::Packs(_), Route::Packs(_)) => true,
                (a, b) => a == b,
            };
            same.then_some("page")
        };
        view! { <a href=href aria-current=here>{label}</a> }
    };

    view! {
        <a class="skip" href="#main" on:click=skip>"Skip to content"</a>
        <header class="top">
            <nav aria-label="Site">
                <span class="brand">"sealmark"</span>
                {nav_link(Route::Report, "Report")}
                {nav_link(Route::Checks, "Checks")}
                {nav_link(Route::Packs(None), "Packs")}
                {Page::NAV.into_iter().map(|p| nav_link(Route::Page(p, None), p.title())).collect_view()}
                <input
                    type="search"
                    class="search"
                    placeholder="Search the record, checks and pages"
                    aria-label="Search the open record, the checks and the pages"
                    prop:value=move || query.get()
                    on:input=move |ev| query.set(event_target_value(&ev))
                />
            </nav>
        </header>
        <main id="main" tabindex="-1" on:dragover=|ev: leptos::ev::DragEvent| ev.prevent_default() on:drop=on_drop>
            {move || {
                let q = query.get();
                if !q.trim().is_empty() {
                    let index = match record.get_untracked() {
                        Loaded::Record(r) => {
                            let mut all = search::record_entries(&r);
                            all.extend(index.iter().cloned());
                            Arc::new(all)
                        }
                        _ => index.clone(),
                    };
                    return site::SearchResults(site::SearchResultsProps { index, query: q }).into_any();
                }
                match view_of.get() {
                    Route::Report | Route::At(_) => view! {
                        <OpenBar record=record baseline=baseline/>
                        {move || report::view_loaded(record.get(), baseline.get())}
                    }
                    .into_any(),
                    Route::Server(name) => report::view_server(record.get(), &name, baseline.get()),
                    Route::Packs(_) => site::Packs().into_any(),
                    Route::Checks => site::ChecksIndex().into_any(),
                    Route::Check(id) => site::CheckPage(site::CheckPageProps { id }).into_any(),
                    Route::Page(page, _) => site::MarkdownPage(site::MarkdownPageProps { page }).into_any(),
                }
            }}
        </main>
        <footer class="pages">
            <nav aria-label="All pages">
                {Page::ALL.into_iter().map(|p| view! { <a href=Route::Page(p, None).href()>{p.title()}</a> }).collect_view()}
            </nav>
        </footer>
    }
}

/// Moves keyboard focus to `el` without scrolling again (it is made focusable first).
fn focus(el: &web_sys::Element) {
    if !el.has_attribute("tabindex") {
        let _ = el.set_attribute("tabindex", "-1");
    }
    if let Ok(el) = el.clone().dyn_into::<web_sys::HtmlElement>() {
        let options = web_sys::FocusOptions::new();
        options.set_prevent_scroll(true);
        let _ = el.focus_with_options(&options);
    }
}

/// The browser tab's title for a place: the report's names its server (and pack or check).
fn page_title(route: &Route, record: Loaded) -> String {
    let server = match &record {
        Loaded::Record(r) => format!(
            " · {} {}",
            sealmark_engine::text::visible(&r.server.name),
            sealmark_engine::text::visible(&r.server.version)
        ),
        Loaded::Several(c) => format!(" · {} servers", c.servers.len()),
        _ => String::new(),
    };
    match route {
        Route::Report => format!("sealmark report{server}"),
        Route::At(id) => format!("sealmark report{server} · {}", id.replacen('-', " ", 1)),
        Route::Server(name) => format!("sealmark report · {}", sealmark_engine::text::visible(name)),
        Route::Packs(_) => "sealmark · Packs".to_string(),
        Route::Checks => "sealmark · Checks".to_string(),
        Route::Check(id) => format!("sealmark · {id}"),
        Route::Page(p, _) => format!("sealmark · {}", p.title()),
    }
}

/// Open a record or a baseline from disk; drop a file anywhere to open it as the record.
#[component]
fn OpenBar(record: RwSignal<Loaded>, baseline: RwSignal<Loaded>) -> impl IntoView {
    view! {
        <section class="open" aria-label="Open records">
            <label>
                "Open a record "
                <input type="file" id="open-record" accept=".json,application/json"
                    on:change=move |ev| load_file(record, picked(&ev), parse)/>
            </label>
            <label>
                "Compare with a baseline "
                <input type="file" id="open-baseline" accept=".json,application/json"
                    on:change=move |ev| {
                        let file = picked(&ev);
                        if let (Some(f), Some(from)) = (&file, use_context::<BaselineFrom>()) {
                            from.0.set(f.name());
                        }
                        load_file(baseline, file, parse_baseline)
                    }/>
            </label>
            <span class="hint">"or drop a record anywhere on this page. Nothing leaves your browser."</span>
        </section>
    }
}
