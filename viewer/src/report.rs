//! A record, drawn: header, grade cards, each pack's checks worst first with their
//! evidence and grade math, the classification and what was not covered; above it,
//! the comparison with a baseline when there is one.

use crate::Loaded;
use crate::route::{Page, Route};
use crate::view_model::{Change, compare_rows, evidence_row, verdict_word};
use leptos::prelude::*;
use sealmark_engine::combined::{Combined, ServerEntry};
use sealmark_engine::compare::compare;
use sealmark_engine::explain::{grade_math, pack_kind, pack_verdict, worst_first};
use sealmark_engine::model::Pack;
use sealmark_engine::record::{CheckResult, PackResult, PackStatus, Record};
use sealmark_engine::rederive::{Agreement, Rederived, rederive, rejudge};
use sealmark_engine::registry;
use sealmark_engine::render::combined;
use sealmark_engine::text::visible;
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
        Loaded::Several(c) => Servers(ServersProps { combined: c }).into_any(),
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

/// One server's report of a combined record (`#/servers/NAME`), compared with the
/// baseline when one is open.
pub fn view_server(record: Loaded, name: &str, baseline: Loaded) -> AnyView {
    let found = match &record {
        Loaded::Several(c) => c.entry(name).cloned(),
        _ => None,
    };
    let back = view! { <p class="meta"><a href=Route::Report.href()>"← every server of this run"</a></p> };
    match found {
        Some(ServerEntry { record: Some(r), .. }) => {
            view! { {back} {view_loaded(Loaded::Record(Arc::new(r)), baseline)} }.into_any()
        }
        Some(entry) => view! {
            {back}
            <h1>{visible(name)}</h1>
            <p class="problem" role="alert">{format!("No record: {}", visible(entry.why_none()))}</p>
        }
        .into_any(),
        None => view! {
            {back}
            <p class="problem" role="alert">{format!("The open record has no server \"{}\".", visible(name))}</p>
        }
        .into_any(),
    }
}

/// A combined record: a table of servers × pack grades, each server's report a link.
#[component]
fn Servers(combined: Arc<Combined>) -> impl IntoView {
    let packs = combined::columns(&combined);
    let head = packs.iter().map(|p| view! { <th scope="col">{p.id()}</th> }).collect_view();
    let rows = combined
        .servers
        .iter()
        .map(|e| {
            let link = view! { <a href=Route::Server(e.name.clone()).href()>{visible(&e.name)}</a> };
            let cells = match &e.record {
                Some(r) => packs
                    .iter()
                    .map(|p| {
                        let cell = combined::cell(r, *p);
                        let class = match cell.chars().next() {
                            Some(l @ 'A'..='F') => format!("grade-cell grade-{}", l.to_ascii_lowercase()),
                            _ => "grade-cell grade-none".to_string(),
                        };
                        view! { <td class=class>{cell}</td> }
                    })
                    .collect_view()
                    .into_any(),
                None => {
                    let why = format!("no record: {}", visible(e.why_none()));
                    view! { <td class="problem" colspan=packs.len().max(1)>{why}</td> }.into_any()
                }
            };
            let server =
                e.record.as_ref().map(|r| format!("{} {}", visible(&r.server.name), visible(&r.server.version)));
            view! { <tr><th scope="row">{link}</th><td class="server-of">{server}</td>{cells}</tr> }
        })
        .collect_view();
    let meta = visible(&combined::heading(&combined));
    view! {
        <article class="report servers">
            <h1>"A run of several servers"</h1>
            <p class="meta">{meta}</p>
            <table class="servers-table">
                <thead><tr><th scope="col">"server"</th><th scope="col">"announced as"</th>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
            <p class="meta legend">{combined::LEGEND}</p>
        </article>
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

/// What the viewer's own judges made of the record: the checks it shows are theirs,
/// each with how the stored result compares.
struct Judged {
    record: Arc<Record>,
    /// Per check id, how it compares; `Err` when the record has no observations to judge.
    rederived: Result<Vec<Rederived>, String>,
}

impl Judged {
    fn of(stored: Arc<Record>) -> Judged {
        match rederive(&stored) {
            Ok(list) => {
                let mut mine = (*stored).clone();
                rejudge(&mut mine, &list);
                Judged { record: Arc::new(mine), rederived: Ok(list) }
            }
            Err(why) => Judged { record: stored, rederived: Err(why) },
        }
    }

    fn agreement(&self, id: &str) -> Option<Agreement> {
        self.rederived.as_ref().ok()?.iter().find(|r| r.id == id).map(|r| r.agreement.clone())
    }
}

/// The line under the header: whether the verdicts shown were re-derived, and every
/// stored result that the observations contradict.
fn rederivation_band(judged: &Judged, stored: &Record) -> AnyView {
    match &judged.rederived {
        Ok(list) => {
            let differ: Vec<String> =
                list.iter().filter(|r| r.agreement != Agreement::Same).map(|r| visible(&r.describe())).collect();
            if differ.is_empty() {
                view! {
                    <p class="rederived-band">{format!(
                        "Every verdict below was re-derived in this browser from the record's observations ({} checks).",
                        list.len()
                    )}</p>
                }
                .into_any()
            } else {
                let stored_summaries: Vec<String> = stored
                    .checks
                    .iter()
                    .filter(|c| differ.iter().any(|d| d.starts_with(&format!("{}:", visible(&c.id)))))
                    .map(|c| format!("{} as stored: {} — {}", visible(&c.id), c.verdict.id(), visible(&c.summary)))
                    .collect();
                view! {
                    <div class="mismatch-band" role="alert">
                        <p><strong>{format!(
                            "{} stored result(s) disagree with the record's own observations.",
                            differ.len()
                        )}</strong>" The verdicts and grades below are the ones the observations give; the stored ones are not trusted."</p>
                        <ul>{differ.into_iter().map(|d| view! { <li>{d}</li> }).collect_view()}</ul>
                        <details><summary>"What the record claimed"</summary>
                            <ul>{stored_summaries.into_iter().map(|d| view! { <li>{d}</li> }).collect_view()}</ul>
                        </details>
                    </div>
                }
                .into_any()
            }
        }
        Err(why) => view! {
            <p class="rederived-band not-rederived">{format!("Verdicts shown as stored, not re-derived: {}.", visible(why))}</p>
        }
        .into_any(),
    }
}

/// Where a pack's judges read in the observations.
fn observed_in(pack: &str) -> &'static str {
    match pack {
        "core" => "observations.core",
        "fs" | "effects" => "observations.fs",
        "net" => "observations.net",
        "git" => "observations.git",
        "http" => "observations.http",
        "db" => "observations.db",
        "sqlite" => "observations.sqlite",
        "scope" | "sql-guard" | "upstream" => "observations.backend",
        _ => "the config's expectations",
    }
}

#[component]
fn Report(record: Arc<Record>) -> impl IntoView {
    let stored = record;
    let judged = Arc::new(Judged::of(stored.clone()));
    let band = rederivation_band(&judged, &stored);
    let r = judged.record.clone();
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
    let sections = packs.into_iter().map(|(p, res)| pack_section(&judged, p, &res)).collect_view();
    let server = &r.server;
    let transport_line = match &server.url {
        Some(url) => format!("{} · {}", server.transport, visible(url)),
        None => format!("{} · {}", server.transport, visible(&server.command)),
    };
    let badge =
        format!("{} ({})", if r.badge.eligible { "eligible" } else { "not eligible" }, visible(&r.badge.reason));
    let custom = sealmark_engine::render::custom_lines(&r);
    let sandbox = {
        let sb = &r.sandbox;
        let cleaned = if sb.kept {
            "kept"
        } else if sb.cleaned_up {
            "cleaned up"
        } else {
            "NOT cleaned up"
        };
        format!("{} · {cleaned}", visible(&sb.dir))
    };
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
                    {format!("sealmark {} · ", r.sealmark.version)}
                    <a href=Route::Page(Page::Methodology, None).href()>{format!("methodology {}", r.sealmark.methodology)}</a>
                    " · "
                    <a href=Route::Page(Page::Methodology, Some("candidate-checks-and-packs".into())).href()>
                        <strong class="profile">{profile}</strong>
                    </a>
                    " · config.hash " <code class="hash">{r.config.hash.clone()}</code>
                </p>
                {(!custom.is_empty()).then(|| view! {
                    <ul class="custom-diff" aria-label="Why this run is CUSTOM">
                        {custom.into_iter().map(|l| view! { <li>{visible(&l)}</li> }).collect_view()}
                    </ul>
                })}
                <p class="meta">{transport_line}" · "
                    <a href=Route::Page(Page::Environment, None).href()>"env"</a>" hidden as reports show it · "
                    <a href=Route::Page(Page::Sandbox, None).href()>"sandbox"</a>{format!(" {sandbox}")}
                </p>
                <p class="meta">
                    <a href=Route::Page(Page::Badge, None).href()>"badge"</a>{format!(": {badge} · ")}{coverage}
                </p>
                <ul class="grade-cards" aria-label="Grades">{cards}</ul>
                {band}
            </header>
            {sections}
            <Classification record=r.clone()/>
            <section class="not-covered" aria-labelledby="not-covered-h">
                <h2 id="not-covered-h">"Not covered"</h2>
                <p class="meta">"What this run did not look at; the methodology lists every "
                    <a href=Route::Page(Page::Methodology, Some("known-blind-spots".into())).href()>"blind spot"</a>"."
                </p>
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

fn pack_section(judged: &Judged, p: Pack, res: &PackResult) -> impl IntoView + use<> {
    let r = &judged.record;
    let kind = pack_kind(p).map(|k| format!(" · {k}"));
    let verdict = pack_verdict(res);
    let capped = res
        .grade
        .as_ref()
        .filter(|g| g.capped && res.status == PackStatus::Graded)
        .map(|g| format!("Capped at D: a critical check failed; without the cap the grade would be {}.", g.raw));
    let checks: Vec<(CheckResult, Option<Agreement>)> =
        worst_first(r, p.id()).into_iter().map(|c| (c.clone(), judged.agreement(&c.id))).collect();
    let rederived = checks.iter().filter(|(_, a)| a.is_some()).count();
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
                {checks.into_iter().map(|(c, a)| view! { <CheckLine check=c agreement=a/> }).collect_view()}
            </ul>
            {(!math.is_empty()).then(|| view! {
                <details class="math">
                    <summary>"How this grade was computed"</summary>
                    <p class="math-source">"The formula, with worked examples: "
                        <a href=Route::Page(Page::Grades, None).href()>"Grades"</a>"."</p>
                    <ol>
                        {math.into_iter().map(|(step, text)| view! {
                            <li><span class="step">{format!("step {step}")}</span>" "{text}</li>
                        }).collect_view()}
                    </ol>
                    <p class="math-source">{match rederived {
                        0 => "The verdicts are the record's stored ones.".to_string(),
                        n => format!("The {n} verdict(s) were re-derived from {} by this viewer's judges.", observed_in(p.id())),
                    }}</p>
                </details>
            })}
        </section>
    }
}

#[component]
fn CheckLine(check: CheckResult, agreement: Option<Agreement>) -> impl IntoView {
    let mark = agreement.map(|a| {
        let (class, text) = match a {
            Agreement::Same => ("rederived", "re-derived".to_string()),
            Agreement::Verdict { stored, .. } => ("mismatch", format!("mismatch: the record stored {}", stored.id())),
            Agreement::Wording => ("mismatch", "mismatch: the stored summary or evidence differs".to_string()),
            Agreement::NotDerived => ("mismatch", "mismatch: stored, not judged from the observations".to_string()),
            Agreement::NotStored => ("mismatch", "mismatch: missing from the stored checks".to_string()),
        };
        view! { <span class=format!("rederivation {class}")>{text}</span> }
    });
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
            <div class="check-meta">{id_view}{critical}" · scope: "{check.scope.clone()}" "{mark}</div>
            {(count > 0).then(|| view! {
                <details class="evidence">
                    <summary>{format!("evidence ({count})")}</summary>
                    <table>
                        <thead><tr>
                            <th scope="col"><a href=Route::Page(Page::Observers, None).href()>"verified by"</a></th><th scope="col">"probe"</th><th scope="col">"outcome"</th>
                            <th scope="col">"role"</th><th scope="col">"tool"</th><th scope="col">"args"</th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|e| view! {
                                <tr>
                                    <td class="vb">
                                        <a href=Route::Page(Page::Observers, Some(e.verified_by.to_string())).href()
                                            title="What this observer reads">{format!("[{}]", e.verified_by)}</a>
                                    </td>
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
