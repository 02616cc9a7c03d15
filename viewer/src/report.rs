//! A record, drawn: header, grade cards, each pack's checks worst first with their
//! evidence and grade math, the classification and what was not covered; above it,
//! the comparison with a baseline when there is one.

use crate::Loaded;
use crate::route::Route;
use crate::view_model::{Change, compare_rows, evidence_row, verdict_word};
use leptos::prelude::*;
use sealmark_engine::compare::compare;
use sealmark_engine::explain::{grade_math, pack_kind, pack_verdict, worst_first};
use sealmark_engine::judge::text::visible;
use sealmark_engine::model::Pack;
use sealmark_engine::record::{CheckResult, PackResult, PackStatus, Record};
use sealmark_engine::registry;
use std::sync::Arc;

/// The report route's body for what has been loaded.
pub fn view_loaded(record: Loaded, baseline: Loaded) -> AnyView {
    match record {
        Loaded::Nothing => view! {
            <section class="intro">
                <h1>"sealmark viewer"</h1>
                <p>"Open a JSON record written by "<code>"sealmark run --format json"</code>
                   ", or a page written by "<code>"sealmark run --format html"</code>
                   " carries its own. The checks reference and the methodology are in the menu."</p>
            </section>
        }
        .into_any(),
        Loaded::Loading => view! { <p class="status" role="status">"Loading the record…"</p> }.into_any(),
        Loaded::Problem(why) => view! { <p class="problem" role="alert">{why}</p> }.into_any(),
        Loaded::Record(r) => {
            let cmp = match baseline {
                Loaded::Record(base) => {
                    Some(Comparison(ComparisonProps { baseline: base, current: r.clone() }).into_any())
                }
                Loaded::Problem(why) => {
                    Some(view! { <p class="problem" role="alert">{format!("baseline: {why}")}</p> }.into_any())
                }
                _ => None,
            };
            view! { {cmp} <Report record=r/> }.into_any()
        }
    }
}

/// A letter's class for its colour: `grade-a` … `grade-f`, or `grade-none`.
fn grade_class(res: &PackResult) -> String {
    match (&res.grade, res.status) {
        (Some(g), PackStatus::Graded) => format!("grade-card grade-{}", g.letter.to_string().to_lowercase()),
        _ => "grade-card grade-none".to_string(),
    }
}

#[component]
fn Comparison(baseline: Arc<Record>, current: Arc<Record>) -> impl IntoView {
    let lines: Vec<String> = compare(&baseline, &current).render().lines().map(|l| visible(l.trim())).collect();
    let rows = compare_rows(&baseline, &current);
    view! {
        <section class="compare" aria-labelledby="compare-h">
            <h2 id="compare-h">"Compared with the baseline"</h2>
            <ul class="compare-lines">{lines.into_iter().skip(1).map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            <details class="compare-table">
                <summary>"Every check, side by side"</summary>
                <table>
                    <thead><tr><th scope="col">"check"</th><th scope="col">"baseline"</th><th scope="col">"current"</th><th scope="col">"change"</th></tr></thead>
                    <tbody>
                        {rows.into_iter().map(|r| {
                            let class = if r.change == Change::Same { "same" } else { r.change.word() };
                            view! {
                                <tr class=class>
                                    <td>{r.id}" "<span class="muted">{r.label}</span></td>
                                    <td>{verdict_word(r.before)}</td>
                                    <td>{verdict_word(r.after)}</td>
                                    <td>{r.change.word()}</td>
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            </details>
        </section>
    }
}

#[component]
fn Report(record: Arc<Record>) -> impl IntoView {
    let r = record;
    let profile = if r.config.standard { "STANDARD" } else { "CUSTOM" };
    let packs: Vec<(Pack, PackResult)> =
        Pack::ALL.into_iter().filter_map(|p| r.packs.get(p.id()).map(|res| (p, res.clone()))).collect();
    let cards = packs
        .iter()
        .map(|(p, res)| {
            let p = *p;
            let letter = match (&res.grade, res.status) {
                (Some(g), PackStatus::Graded) => g.display_letter(),
                _ => "–".to_string(),
            };
            let label = format!("pack {}: {}", p.id(), pack_verdict(res));
            view! {
                <li class=grade_class(res)>
                    <a href=format!("#pack-{}", p.id()) aria-label=label
                        on:click=move |ev| scroll_to(ev, &format!("pack-{}", p.id()))>
                        <span class="letter">{letter}</span>
                        <span class="pack-name">{p.id()}</span>
                    </a>
                </li>
            }
        })
        .collect_view();
    let sections = packs.into_iter().map(|(p, res)| pack_section(&r, p, &res)).collect_view();
    let server = &r.server;
    let transport_line = match &server.url {
        Some(url) => format!("{} · {}", server.transport, visible(url)),
        None => format!("{} · {}", server.transport, visible(&server.command)),
    };
    let badge =
        format!("badge: {} ({})", if r.badge.eligible { "eligible" } else { "not eligible" }, visible(&r.badge.reason));
    let coverage = format!(
        "coverage: {} ({} of {} tools reached with a valid call)",
        r.coverage.level, r.coverage.tools_called_valid, r.coverage.tools_total
    );
    view! {
        <article class="report">
            <header class="report-head">
                <h1>
                    <span class="server-name">{visible(&server.name)}</span>" "
                    <span class="server-version">{visible(&server.version)}</span>
                </h1>
                <p class="meta">
                    {format!("sealmark {} · methodology {} · ", r.sealmark.version, r.sealmark.methodology)}
                    <strong class="profile">{profile}</strong>
                    " · config.hash " <code class="hash">{r.config.hash.clone()}</code>
                </p>
                <p class="meta">{transport_line}</p>
                <p class="meta">{badge}" · "{coverage}</p>
                <ul class="grade-cards" aria-label="Grades">{cards}</ul>
            </header>
            {sections}
            <Classification record=r.clone()/>
            <section class="not-covered" aria-labelledby="not-covered-h">
                <h2 id="not-covered-h">"Not covered"</h2>
                <ul>{r.not_covered.iter().map(|l| view! { <li>{visible(l)}</li> }).collect_view()}</ul>
            </section>
        </article>
    }
}

/// In-page jumps without touching the fragment (which holds the route).
fn scroll_to(ev: leptos::ev::MouseEvent, id: &str) {
    ev.prevent_default();
    if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(id)) {
        el.scroll_into_view();
    }
}

fn pack_section(r: &Record, p: Pack, res: &PackResult) -> impl IntoView + use<> {
    let kind = pack_kind(p).map(|k| format!(" · {k}"));
    let verdict = pack_verdict(res);
    let capped = res
        .grade
        .as_ref()
        .filter(|g| g.capped && res.status == PackStatus::Graded)
        .map(|g| format!("Capped at D: a critical check failed; without the cap the grade would be {}.", g.raw));
    let checks: Vec<CheckResult> = worst_first(r, p.id()).into_iter().cloned().collect();
    let math: Vec<(u8, String)> = grade_math(r, p.id()).into_iter().map(|s| (s.step, s.text)).collect();
    let pack_link = Route::Packs(Some(p.id().to_string())).href();
    view! {
        <section class="pack" id=format!("pack-{}", p.id()) aria-labelledby=format!("pack-h-{}", p.id())>
            <h2 id=format!("pack-h-{}", p.id())>
                <a href=pack_link class="pack-link">{format!("PACK {}", p.id())}</a>" "
                <span class="grade">{verdict}</span>{kind}
            </h2>
            {capped.map(|c| view! { <p class="capped">{c}</p> })}
            <ul class="checks">
                {checks.into_iter().map(|c| view! { <CheckLine check=c/> }).collect_view()}
            </ul>
            {(!math.is_empty()).then(|| view! {
                <details class="math">
                    <summary>"How this grade was computed"</summary>
                    <ol>
                        {math.into_iter().map(|(step, text)| view! {
                            <li><span class="step">{format!("step {step}")}</span>" "{text}</li>
                        }).collect_view()}
                    </ol>
                </details>
            })}
        </section>
    }
}

#[component]
fn CheckLine(check: CheckResult) -> impl IntoView {
    let advisory = check.advisory.then_some(" (advisory, not scored)");
    let critical = (check.critical && !check.advisory).then_some(" · critical");
    // Only ids the registry knows get a link, so the href never comes from the record.
    let page = registry::check(&check.id).map(|def| Route::Check(def.id.to_string()).href());
    let id = visible(&check.id);
    let id_view = match page {
        Some(href) => view! { <a class="check-id" href=href title="This check's page">{id}</a> }.into_any(),
        None => view! { <span class="check-id">{id}</span> }.into_any(),
    };
    let rows: Vec<_> = check.evidence.iter().map(evidence_row).collect();
    let count = rows.len();
    view! {
        <li class=format!("check {}", check.verdict.id())>
            <span class="verdict">{check.verdict.tag()}</span>" "
            <span class="label">{visible(&check.label)}</span>
            " — "<span class="summary">{visible(&check.summary)}</span>{advisory}
            <div class="check-meta">{id_view}{critical}" · scope: "{check.scope.clone()}</div>
            {(count > 0).then(|| view! {
                <details class="evidence">
                    <summary>{format!("evidence ({count})")}</summary>
                    <table>
                        <thead><tr>
                            <th scope="col">"verified by"</th><th scope="col">"probe"</th><th scope="col">"outcome"</th>
                            <th scope="col">"role"</th><th scope="col">"tool"</th><th scope="col">"args"</th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|e| view! {
                                <tr>
                                    <td class="vb">{format!("[{}]", e.verified_by)}</td>
                                    <td>{e.probe}</td>
                                    <td>{e.outcome}</td>
                                    <td>{e.role}</td>
                                    <td>{e.tool}</td>
                                    <td><code>{e.args}</code></td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </details>
            })}
        </li>
    }
}

#[component]
fn Classification(record: Arc<Record>) -> impl IntoView {
    view! {
        <section class="classification" aria-labelledby="classification-h">
            <h2 id="classification-h">"Classification"</h2>
            <table>
                <thead><tr>
                    <th scope="col">"tool"</th><th scope="col">"class"</th><th scope="col">"confidence"</th>
                    <th scope="col">"annotations"</th><th scope="col">"why"</th>
                </tr></thead>
                <tbody>
                    {record.classification.iter().map(|c| view! {
                        <tr>
                            <td>{visible(&c.tool)}</td>
                            <td>{c.class.clone()}</td>
                            <td>{c.confidence.clone()}</td>
                            <td>{visible(&c.annotations.join(", "))}</td>
                            <td>{visible(&c.reason)}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            <ul class="notes">{record.options.pack_notes.iter().map(|n| view! { <li>{visible(n)}</li> }).collect_view()}</ul>
        </section>
    }
}
