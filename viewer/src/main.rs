//! The sealmark viewer: a record rendered in the browser, from the same engine code
//! the CLI uses (`read_saved`, `explain::grade_math`). Everything a server wrote is
//! shown as text (Leptos text nodes, never markup), with invisible characters made
//! visible.
//!
//! Where the record comes from, first found: `<script type="application/json"
//! id="sealmark-record">` embedded in the page, else `?record=<path>` fetched relative
//! to the page. `&baseline=<path>` compares it with an earlier record, by the rule the
//! CLI's `--baseline` applies (`engine::compare`).

use leptos::prelude::*;
use sealmark_engine::compare::compare;
use sealmark_engine::explain::grade_math;
use sealmark_engine::judge::text::visible;
use sealmark_engine::model::Pack;
use sealmark_engine::record::{CheckResult, PackStatus, Record, read_saved};

fn main() {
    mount_to_body(App);
}

/// What the page shows: nothing yet, a record (with what comparing it with a baseline
/// found), or why there is none.
#[derive(Clone)]
enum Loaded {
    Waiting,
    Record(Box<Record>, Option<String>),
    Problem(String),
}

fn parse(text: &str, from: &str) -> Loaded {
    match read_saved(text) {
        Ok(r) => Loaded::Record(Box::new(r), None),
        Err(e) => Loaded::Problem(format!("{from}: this is not a record the viewer can read: {e}")),
    }
}

/// The embedded record, if the page carries one.
fn embedded() -> Option<String> {
    let doc = web_sys::window()?.document()?;
    let text = doc.get_element_by_id("sealmark-record")?.text_content()?;
    (!text.trim().is_empty()).then_some(text)
}

/// A parameter of the page's URL (`?record=`, `&baseline=`).
fn param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search).ok()?.get(name)
}

/// The record compared with the baseline at `path`, as the lines the CLI prints.
async fn compared(record: &Record, path: &str) -> String {
    match fetch_text(path).await {
        Ok(text) => match read_saved(&text) {
            Ok(base) => compare(&base, record).render(),
            Err(e) => format!("{path}: this baseline is not a record the viewer can read: {e}"),
        },
        Err(e) => format!("the baseline {e}"),
    }
}

async fn fetch_text(path: &str) -> Result<String, String> {
    use wasm_bindgen::JsCast;
    let window = web_sys::window().ok_or("no window")?;
    let resp = wasm_bindgen_futures::JsFuture::from(window.fetch_with_str(path))
        .await
        .map_err(|_| format!("{path} could not be fetched"))?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "not a response".to_string())?;
    if !resp.ok() {
        return Err(format!("{path}: HTTP {}", resp.status()));
    }
    let text = wasm_bindgen_futures::JsFuture::from(resp.text().map_err(|_| "no body".to_string())?)
        .await
        .map_err(|_| "the body could not be read".to_string())?;
    text.as_string().ok_or_else(|| "the body is not text".to_string())
}

#[component]
fn App() -> impl IntoView {
    let (loaded, set_loaded) = signal(Loaded::Waiting);
    if let Some(text) = embedded() {
        set_loaded.set(parse(&text, "the embedded record"));
    } else if let Some(path) = param("record") {
        leptos::task::spawn_local(async move {
            let mut loaded = match fetch_text(&path).await {
                Ok(text) => parse(&text, &path),
                Err(e) => Loaded::Problem(e),
            };
            if let (Loaded::Record(r, cmp), Some(base)) = (&mut loaded, param("baseline")) {
                *cmp = Some(compared(r, &base).await);
            }
            set_loaded.set(loaded);
        });
    } else {
        set_loaded.set(Loaded::Problem(
            "No record: open this page with ?record=<file.json>, or publish it with the record embedded.".to_string(),
        ));
    }
    view! {
        <main>
            {move || match loaded.get() {
                Loaded::Waiting => view! { <p class="status">"Loading the record…"</p> }.into_any(),
                Loaded::Problem(why) => view! { <p class="problem" role="alert">{why}</p> }.into_any(),
                Loaded::Record(r, cmp) => view! {
                    {cmp.map(|c| view! {
                        <section class="compare">
                            <ul>{c.lines().map(|l| view! { <li>{l.trim().to_string()}</li> }).collect_view()}</ul>
                        </section>
                    })}
                    <Report record=*r/>
                }
                .into_any(),
            }}
        </main>
    }
}

/// A server-supplied string, made safe to read: invisible characters shown.
fn shown(s: &str) -> String {
    visible(s)
}

#[component]
fn Report(record: Record) -> impl IntoView {
    let profile = if record.config.standard { "STANDARD" } else { "CUSTOM" };
    let header =
        format!("sealmark {} · methodology {} · {profile}", record.sealmark.version, record.sealmark.methodology);
    let server = format!("{} {}", shown(&record.server.name), shown(&record.server.version));
    let packs: Vec<_> = Pack::ALL
        .into_iter()
        .filter_map(|p| record.packs.get(p.id()).map(|res| (p, res.clone())))
        .map(|(p, res)| {
            let checks: Vec<CheckResult> = {
                let mut c: Vec<CheckResult> = record.pack_checks(p.id()).cloned().collect();
                c.sort_by_key(|c| (c.advisory, c.verdict.severity_rank()));
                c
            };
            let grade = match (&res.grade, res.status) {
                (Some(g), PackStatus::Graded) => format!("GRADE {} ({})", g.display_letter(), g.fraction()),
                _ => format!("not graded: {}", res.reason.clone().unwrap_or_default()),
            };
            let kind = if p == Pack::Custom {
                " · custom grade"
            } else if p.is_candidate() {
                " · candidate pack"
            } else {
                ""
            };
            let math: Vec<String> =
                grade_math(&record, p.id()).into_iter().map(|s| format!("{}. {}", s.step, s.text)).collect();
            view! {
                <section class="pack" id=format!("pack-{}", p.id())>
                    <h2>{format!("PACK {}", p.id())} " " <span class="grade">{grade}</span> {kind}</h2>
                    <ul class="checks">
                        {checks.into_iter().map(|c| view! { <CheckLine check=c/> }).collect_view()}
                    </ul>
                    {(!math.is_empty()).then(|| view! {
                        <details class="math">
                            <summary>"How this grade was computed"</summary>
                            <ol>{math.into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}</ol>
                        </details>
                    })}
                </section>
            }
        })
        .collect_view();
    let not_covered: Vec<String> = record.not_covered.iter().map(|l| shown(l)).collect();
    view! {
        <header>
            <h1>{header}</h1>
            <p class="server">{server}</p>
            <p class="hash">"config.hash " {record.config.hash.clone()}</p>
        </header>
        {packs}
        <section class="not-covered">
            <h2>"Not covered"</h2>
            <ul>{not_covered.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
        </section>
    }
}

#[component]
fn CheckLine(check: CheckResult) -> impl IntoView {
    let advisory = if check.advisory { " (advisory, not scored)" } else { "" };
    let evidence: Vec<String> = check
        .evidence
        .iter()
        .map(|e| {
            let tool = e.tool.as_deref().map(|t| format!(" on {}", shown(t))).unwrap_or_default();
            format!("[{}] {}{tool}: {}", e.verified_by.id(), shown(&e.probe), shown(&e.outcome))
        })
        .collect();
    view! {
        <li class=format!("check {}", check.verdict.id())>
            <span class="verdict">{check.verdict.tag()}</span> " "
            <span class="label">{shown(&check.label)}</span>
            " — " <span class="summary">{shown(&check.summary)}</span> {advisory}
            <div class="scope">"scope: " {check.scope.clone()}</div>
            <details class="evidence">
                <summary>{format!("evidence ({})", evidence.len())}</summary>
                <ul>{evidence.into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}</ul>
            </details>
        </li>
    }
}
