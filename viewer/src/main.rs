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

    if let Some(path) = param("record") {
        load_url(record, path, parse);
    } else if let Some(text) = embedded() {
        record.set(parse(&text, "the record in this page"));
        mark_rendered();
    }
    if let Some(path) = param("baseline") {
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
    Effect::new(move |_| {
        let anchor = route.get().anchor();
        set_timeout(
            move || {
                let doc = web_sys::window().and_then(|w| w.document());
                match anchor.and_then(|a| doc.and_then(|d| d.get_element_by_id(&a))) {
                    Some(el) => el.scroll_into_view(),
                    None => web_sys::window().into_iter().for_each(|w| w.scroll_to_with_x_and_y(0.0, 0.0)),
                }
            },
            Duration::ZERO,
        );
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
                (Route::Server(_), Route::Report) => true,
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
                    placeholder="Search checks and pages"
                    aria-label="Search the checks and the pages"
                    prop:value=move || query.get()
                    on:input=move |ev| query.set(event_target_value(&ev))
                />
            </nav>
        </header>
        <main id="main" tabindex="-1" on:dragover=|ev: leptos::ev::DragEvent| ev.prevent_default() on:drop=on_drop>
            {move || {
                let q = query.get();
                if !q.trim().is_empty() {
                    return site::SearchResults(site::SearchResultsProps { index: index.clone(), query: q }).into_any();
                }
                match route.get() {
                    Route::Report => view! {
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
                    on:change=move |ev| load_file(baseline, picked(&ev), parse_baseline)/>
            </label>
            <span class="hint">"or drop a record anywhere on this page. Nothing leaves your browser."</span>
        </section>
    }
}
