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
use sealmark_engine::glance::{self, PackGlance};
use sealmark_engine::model::{Pack, Verdict, VerifiedBy};
use sealmark_engine::record::{CheckResult, PackResult, PackStatus, Record};
use sealmark_engine::record::{Distrust, GradeMismatch};
use sealmark_engine::rederive::{Agreement, Rederived, Replayed, replay};
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

#[component]
fn Comparison(baseline: Arc<Record>, current: Arc<Record>) -> impl IntoView {
    let cmp = compare(&baseline, &current);
    let from = use_context::<crate::BaselineFrom>().map(|f| f.0.get_untracked()).unwrap_or_default();
    let named = format!(
        "Baseline: {} {}, run {}{}{}.",
        visible(&baseline.server.name),
        visible(&baseline.server.version),
        visible(&baseline.started_at),
        if from.is_empty() { String::new() } else { format!(", from {}", visible(&from)) },
        if cmp.different_config { " — another configuration" } else { "" },
    );
    // The CLI's lines, grade changes and any warning first; the tool-surface drift folded.
    let (drift, lines): (Vec<String>, Vec<String>) =
        cmp.render().lines().skip(1).map(|l| visible(l.trim())).partition(|l| l.starts_with("tool-surface drift: "));
    let other = cmp.other_server.as_ref().map(|o| {
        view! { <p class="problem" role="alert">{format!(
            "These are records of different servers: the baseline is {}, this record is {} {}.",
            visible(o), visible(&current.server.name), visible(&current.server.version)
        )}</p> }
    });
    let rows = compare_rows(&baseline, &current);
    view! {
        <section class="compare" aria-labelledby="compare-h">
            <h2 id="compare-h">"Compared with the baseline"</h2>
            <p class="meta baseline-named">{named}</p>
            {other}
            <ul class="compare-lines">{lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            {(!drift.is_empty()).then(|| view! {
                <details class="drift">
                    <summary>{format!("tool-surface drift ({})", drift.len())}</summary>
                    <ul>{drift.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
                </details>
            })}
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
/// each with how the stored result compares, and every grade is the one its checks give.
struct Judged {
    record: Arc<Record>,
    /// Per check id, how it compares; `Err` when the record has no observations to judge.
    rederived: Result<Vec<Rederived>, String>,
}

impl Judged {
    fn of(stored: Arc<Record>) -> Judged {
        let Replayed { record, rederived } = replay(&stored);
        Judged { record: Arc::new(record), rederived }
    }

    /// Stored grades and weights the checks contradict.
    fn distrust(&self) -> &Distrust {
        &self.record.replay.as_ref().expect("a replay says what it found").distrust
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
    let glances = glance::packs(&r);
    let filter = RwSignal::new(None::<Verdict>);
    let sections = glances.iter().map(|g| pack_section(&judged, g.pack, filter)).collect_view();
    let server = &r.server;
    let transport_line = match &server.url {
        Some(url) => format!("{} · {}", server.transport, visible(url)),
        None => format!("{} · {}", server.transport, visible(&server.command)),
    };
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
    let weights = weight_band(judged.distrust());
    let earlier = earlier_replay_band(&stored);
    view! {
        <article class="report">
            <header class="report-head">
                <h1 tabindex="-1">
                    <span class="server-name">{visible(&server.name)}</span>" "
                    <span class="server-version">{visible(&server.version)}</span>
                </h1>
                <RunLine record=r.clone()/>
                <p class="meta">{transport_line}" · "
                    <a href=Route::Page(Page::Environment, None).href()>"env"</a>" hidden as reports show it · "
                    <a href=Route::Page(Page::Sandbox, None).href()>"sandbox"</a>{format!(" {sandbox}")}
                    " · "{coverage}
                </p>
                <Badge record=r.clone()/>
                {earlier}
                {weights}
                <Band glances=glances.clone() distrust=judged.distrust().clone()/>
                {band}
            </header>
            <ToFix record=r.clone()/>
            <Filters record=r.clone() filter=filter/>
            {sections}
            <Classification record=r.clone()/>
            <section class="not-covered" aria-labelledby="not-covered-h">
                <h2 id="not-covered-h">"Not covered"</h2>
                <p class="meta">"What this run did not look at; the methodology lists every "
                    <a href=Route::Page(Page::Methodology, Some("known-blind-spots".into())).href()>"blind spot"</a>"."
                </p>
                <ul>{r.not_covered.iter().map(|l| view! { <li>{visible(l)}</li> }).collect_view()}</ul>
            </section>
            <Legend/>
        </article>
    }
}

/// When, how long, what produced it, and whether the profile was the standard one (and
/// why not); a link to the record itself where the page has one.
#[component]
fn RunLine(record: Arc<Record>) -> impl IntoView {
    let r = record;
    let profile = if r.config.standard { "STANDARD" } else { "CUSTOM" };
    let custom = sealmark_engine::render::custom_lines(&r);
    let when = format!("{} · {:.1} s", visible(&r.started_at), r.duration_ms as f64 / 1000.0);
    let json =
        crate::load::param("record").or_else(|| crate::load::embedded().map(|_| "sealmark-report.json".to_string()));
    view! {
        <p class="meta run-line">
            {when}" · "{format!("sealmark {} · ", r.sealmark.version)}
            <a href=Route::Page(Page::Methodology, None).href()>{format!("methodology {}", r.sealmark.methodology)}</a>
            " · "
            <a href=Route::Page(Page::Standard, None).href() title="What makes a run STANDARD or CUSTOM">
                <strong class="profile">{profile}</strong>
            </a>
            " · config.hash " <code class="hash">{r.config.hash.clone()}</code>
            {json.map(|href| view! { " · "<a class="record-json" href=href>"the record (JSON)"</a> })}
        </p>
        {(!custom.is_empty()).then(|| view! {
            <ul class="custom-diff" aria-label="Why this run is CUSTOM">
                {custom.into_iter().map(|l| view! { <li>{visible(&l)}</li> }).collect_view()}
            </ul>
        })}
    }
}

/// The badge the CLI writes (`--format badge`), drawn from the same words as SVG
/// elements, so nothing in the record becomes markup.
#[component]
fn Badge(record: Arc<Record>) -> impl IntoView {
    let b = sealmark_engine::render::badge::badge_text(&record);
    let fill = sealmark_engine::render::badge::fill(b.color);
    let width = |t: &str| 10 + 7 * t.chars().count();
    let (lw, mw) = (width(b.label), width(&b.message));
    let text = format!("{}: {}", b.label, b.message);
    view! {
        <p class="badge-line">
            <a href=Route::Page(Page::Badge, None).href() title="What the badge says and when a run earns one">
                <svg xmlns="http://www.w3.org/2000/svg" class="badge" width=lw + mw height="20" role="img" aria-label=text.clone()>
                    <title>{text.clone()}</title>
                    <rect width=lw height="20" fill="#555"></rect>
                    <rect x=lw width=mw height="20" fill=fill></rect>
                    <g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">
                        <text x=lw / 2 y="14">{b.label}</text>
                        <text x=lw + mw / 2 y="14">{b.message.clone()}</text>
                    </g>
                </svg>
            </a>
            <span class="meta">{format!(" {}", if record.badge.eligible { "eligible" } else { "not eligible" })}
                {format!(": {}", visible(&record.badge.reason))}</span>
        </p>
    }
}

/// What `sealmark run --replay` found when it wrote this record: the results, grades
/// and weights of the record it replayed that their own checks contradicted.
fn earlier_replay_band(stored: &Record) -> Option<AnyView> {
    let lines = sealmark_engine::render::replay_lines(stored);
    let (head, rest) = lines.split_first()?;
    let rest: Vec<String> = rest.iter().map(|l| visible(l)).collect();
    Some(
        view! {
            <div class="mismatch-band replayed" role="alert">
                <p><strong>{format!("This record was written by a replay: {}.", visible(head))}</strong>
                   {(!rest.is_empty()).then_some(" It shows what the replayed record's checks give; these stored results did not hold:")}</p>
                <ul>{rest.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            </div>
        }
        .into_any(),
    )
}

/// A standard run's checks stored with weights the registry does not give them.
fn weight_band(distrust: &Distrust) -> Option<AnyView> {
    (!distrust.weights.is_empty()).then(|| {
        let lines: Vec<String> = distrust
            .weights
            .iter()
            .map(|w| format!("{}: stored as {:?}, the registry's weight is {:?}", visible(&w.id), w.stored, w.registry))
            .collect();
        view! {
            <div class="mismatch-band weights" role="alert">
                <p><strong>"Checks of a standard run carry weights the registry does not give them."</strong>
                   " They are graded with the registry's."</p>
                <ul>{lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            </div>
        }
        .into_any()
    })
}

/// Per graded pack: the letter its checks give, the points, a bar of its verdicts and
/// the notices on it; the packs not graded in one line after.
#[component]
fn Band(glances: Vec<PackGlance>, distrust: Distrust) -> impl IntoView {
    let (graded, not): (Vec<PackGlance>, Vec<PackGlance>) = glances.into_iter().partition(|g| g.graded());
    let not_graded: Vec<String> = not
        .iter()
        .map(|g| format!("{} ({})", g.pack.id(), visible(g.reason.as_deref().unwrap_or("does not apply"))))
        .collect();
    // A stored letter for a pack its checks do not grade is named here, as on a card.
    let lost: Vec<String> = not
        .iter()
        .filter_map(|g| distrust.grade(g.pack.id()))
        .map(|m| format!("{}: the record says {}; its checks give {}.", m.pack, visible(&m.stored), m.recomputed))
        .collect();
    let cards = graded
        .into_iter()
        .map(|g| {
            let mismatch = distrust.grade(g.pack.id()).cloned();
            pack_card(g, mismatch)
        })
        .collect_view();
    view! {
        <ul class="grade-cards" aria-label="Grades">{cards}</ul>
        {(!not_graded.is_empty()).then(|| view! {
            <p class="meta not-graded">{format!("Not graded: {}.", not_graded.join("; "))}</p>
        })}
        {lost.into_iter().map(|l| view! { <p class="tampered-note" role="alert">{l}</p> }).collect_view()}
    }
}

fn pack_card(g: PackGlance, mismatch: Option<GradeMismatch>) -> impl IntoView {
    let id = g.pack.id();
    let grade = g.grade.clone().expect("a graded pack has a grade");
    let letter = grade.display_letter();
    let class = format!(
        "grade-card grade-{}{}",
        grade.letter.to_string().to_lowercase(),
        if mismatch.is_some() { " tampered" } else { "" }
    );
    let label = format!(
        "pack {id}: {}",
        pack_verdict(&PackResult { status: g.status, grade: Some(grade.clone()), reason: None })
    );
    let notices = g
        .notices
        .iter()
        .map(|n| {
            let (page, section) = n.explained_at();
            let href = if section.is_empty() { format!("#/{page}") } else { format!("#/{page}/{section}") };
            view! { <a class=format!("chip notice {}", n.label().replace(' ', "-")) href=href>{n.label()}</a> }
        })
        .collect_view();
    let warning = mismatch.map(|m| {
        view! {
            <p class="tampered-note" role="alert">{format!(
                "The record says {}; its checks give {}.", visible(&m.stored), m.recomputed
            )}</p>
        }
    });
    view! {
        <li class=class data-pack=id>
            <a class="card-link" href=Route::At(format!("pack-{id}")).href() aria-label=label>
                <span class="letter">{letter}</span>
                <span class="pack-name">{id}</span>
            </a>
            <span class="points">{format!("{}/{} points", grade.points, grade.scored)}</span>
            {bar(&g)}
            <span class="notices">{notices}</span>
            {warning}
        </li>
    }
}

/// The pack's counted checks as one bar: pass, part, critical fail, fail, excluded.
fn bar(g: &PackGlance) -> impl IntoView + use<> {
    let total = g.counted().max(1) as f64;
    let parts = [
        ("pass", g.pass, "pass"),
        ("part", g.part, "part"),
        ("critical-fail", g.critical_fail, "critical fail"),
        ("fail", g.fail, "fail"),
        ("excluded", g.excluded, "not scored"),
    ];
    let mut x = 0.0;
    let rects = parts
        .into_iter()
        .filter(|(_, n, _)| *n > 0)
        .map(|(class, n, word)| {
            let w = 100.0 * f64::from(n) / total;
            let at = x;
            x += w;
            view! {
                <rect class=format!("seg {class}") x=format!("{at:.2}") width=format!("{w:.2}") height="8">
                    <title>{format!("{n} {word}")}</title>
                </rect>
            }
        })
        .collect_view();
    let text = format!(
        "{} pass, {} part, {} fail ({} critical), {} not scored",
        g.pass,
        g.part,
        g.fail + g.critical_fail,
        g.critical_fail,
        g.excluded
    );
    let label = text.clone();
    view! {
        <svg class="bar" viewBox="0 0 100 8" preserveAspectRatio="none" role="img" aria-label=label
            data-pass=g.pass data-part=g.part data-fail=g.fail data-critical-fail=g.critical_fail data-excluded=g.excluded>
            <title>{text}</title>
            {rects}
        </svg>
    }
}

/// Every counted check that failed or partly passed, across packs, with its fix.
#[component]
fn ToFix(record: Arc<Record>) -> impl IntoView {
    let rows: Vec<(String, String, String, &'static str, &'static str)> = glance::to_fix(&record)
        .into_iter()
        .map(|(c, fix)| (c.id.clone(), visible(&c.label), c.pack.clone(), c.verdict.tag(), fix))
        .collect();
    (!rows.is_empty()).then(|| {
        view! {
            <section class="to-fix" aria-labelledby="to-fix-h">
                <h2 id="to-fix-h">{format!("What to fix ({})", rows.len())}</h2>
                <ol>
                    {rows.into_iter().map(|(id, label, pack, tag, fix)| view! {
                        <li>
                            <span class="verdict">{tag}</span>" "
                            <a href=Route::At(format!("check-{id}")).href()>{label}</a>
                            <span class="muted">{format!(" · {pack} · {}", visible(&id))}</span>
                            <div class="fix">{fix}</div>
                        </li>
                    }).collect_view()}
                </ol>
            </section>
        }
    })
}

/// Chips that show only the checks of one verdict, each with its count.
#[component]
fn Filters(record: Arc<Record>, filter: RwSignal<Option<Verdict>>) -> impl IntoView {
    let count = |v: Verdict| record.checks.iter().filter(|c| c.verdict == v).count();
    let all = record.checks.len();
    let chip = move |v: Option<Verdict>, word: &'static str, n: usize| {
        let pressed = move || (filter.get() == v).to_string();
        view! {
            <button type="button" class=format!("filter {}", v.map_or("all", Verdict::id)) aria-pressed=pressed
                on:click=move |_| filter.set(v)>{format!("{word} {n}")}</button>
        }
    };
    view! {
        <nav class="filters" aria-label="Show checks by verdict">
            {chip(None, "all", all)}
            {[(Verdict::Fail, "fail"), (Verdict::Part, "part"), (Verdict::Inconclusive, "inconclusive"), (Verdict::Pass, "pass"), (Verdict::Na, "n/a")]
                .into_iter()
                .map(|(v, word)| chip(Some(v), word, count(v)))
                .collect_view()}
        </nav>
    }
}

/// What the verdict tags and the `verifiedBy` kinds mean.
#[component]
fn Legend() -> impl IntoView {
    let verdicts = [
        (Verdict::Pass, "the defence held, and an observation proves it"),
        (Verdict::Part, "half a point: it held in part"),
        (Verdict::Fail, "the flaw was shown"),
        (Verdict::Inconclusive, "nothing proved either way; left out of the grade"),
        (Verdict::Na, "does not apply to this server; left out of the grade"),
    ];
    view! {
        <section class="legend" aria-labelledby="legend-h">
            <h2 id="legend-h">"Legend"</h2>
            <dl class="facts">
                {verdicts.into_iter().map(|(v, says)| view! {
                    <dt><span class=format!("verdict {}", v.id())>{v.tag()}</span></dt><dd>{says}</dd>
                }).collect_view()}
                {VerifiedBy::ALL.into_iter().map(|k| view! {
                    <dt><a class="vb" href=Route::Page(Page::Observers, Some(k.id().to_string())).href()>{format!("[{}]", k.id())}</a></dt>
                    <dd>{k.describe()}</dd>
                }).collect_view()}
            </dl>
        </section>
    }
}

fn pack_section(judged: &Judged, p: Pack, filter: RwSignal<Option<Verdict>>) -> impl IntoView + use<> {
    let r = &judged.record;
    let res = r.packs.get(p.id()).cloned().expect("a pack of the record");
    let kind = pack_kind(p).map(|k| format!(" · {k}"));
    let verdict = pack_verdict(&res);
    let capped = res
        .grade
        .as_ref()
        .filter(|g| g.capped && res.status == PackStatus::Graded)
        .map(|g| format!("Capped at D: a critical check failed; without the cap the grade would be {}.", g.raw));
    let tampered = judged.distrust().grade(p.id()).map(|m| {
        view! { <p class="tampered-note" role="alert">{format!(
            "The record says {}; its checks give {}.", visible(&m.stored), m.recomputed
        )}</p> }
    });
    let checks: Vec<(CheckResult, Option<Agreement>)> =
        worst_first(r, p.id()).into_iter().map(|c| (c.clone(), judged.agreement(&c.id))).collect();
    let rederived = checks.iter().filter(|(_, a)| a.is_some()).count();
    let (quiet, loud): (Vec<_>, Vec<_>) =
        checks.into_iter().partition(|(c, _)| matches!(c.verdict, Verdict::Pass | Verdict::Na));
    let quiet_count = quiet.len();
    let math = grade_math(r, p.id());
    let pack_link = Route::Packs(Some(p.id().to_string())).href();
    view! {
        <section class="pack" id=format!("pack-{}", p.id()) tabindex="-1" aria-labelledby=format!("pack-h-{}", p.id())>
            <h2 id=format!("pack-h-{}", p.id())>
                <a href=pack_link class="pack-link">{format!("PACK {}", p.id())}</a>" "
                <span class="grade">{verdict}</span>{kind}
            </h2>
            {tampered}
            {capped.map(|c| view! { <p class="capped">{c}</p> })}
            <ul class="checks">
                {loud.into_iter().map(|(c, a)| view! { <CheckLine check=c agreement=a filter=filter/> }).collect_view()}
            </ul>
            {(quiet_count > 0).then(|| view! {
                <details class="quiet" prop:open=move || matches!(filter.get(), Some(Verdict::Pass | Verdict::Na))>
                    <summary>{format!("passed or not applicable ({quiet_count})")}</summary>
                    <ul class="checks">
                        {quiet.into_iter().map(|(c, a)| view! { <CheckLine check=c agreement=a filter=filter/> }).collect_view()}
                    </ul>
                </details>
            })}
            {(!math.is_empty()).then(|| view! { <Math steps=math rederived=rederived pack=p.id()/> })}
        </section>
    }
}

/// A pack's grade math: one list in the methodology's order, each line named by the
/// formula's rule and linked to it, the letter last.
#[component]
fn Math(steps: Vec<sealmark_engine::explain::Step>, rederived: usize, pack: &'static str) -> impl IntoView {
    let (rules, result): (Vec<_>, Vec<_>) = steps.into_iter().partition(|s| s.rule.is_some());
    view! {
        <details class="math">
            <summary>"How this grade was computed"</summary>
            <p class="math-source">"The formula, with worked examples: "
                <a href=Route::Page(Page::Grades, None).href()>"Grades"</a>"."</p>
            <ol>
                {rules.into_iter().map(|s| {
                    let rule = s.rule.expect("partitioned on rule");
                    view! {
                        <li>
                            <a class="rule" href=Route::Page(Page::Methodology, Some(rule.anchor().to_string())).href()>
                                {format!("{}. {}", rule.number(), rule.name())}
                            </a>" "{s.text}
                        </li>
                    }
                }).collect_view()}
            </ol>
            {result.into_iter().map(|s| view! { <p class="math-result">{s.text}</p> }).collect_view()}
            <p class="math-source">{match rederived {
                0 => "The verdicts are the record's stored ones.".to_string(),
                n => format!("The {n} verdict(s) were re-derived from {} by this viewer's judges.", observed_in(pack)),
            }}</p>
        </details>
    }
}

#[component]
fn CheckLine(check: CheckResult, agreement: Option<Agreement>, filter: RwSignal<Option<Verdict>>) -> impl IntoView {
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
    let def = registry::check(&check.id);
    let page = def.map(|def| Route::Check(def.id.to_string()).href());
    let anchor = def.map(|def| format!("check-{}", def.id));
    let id = visible(&check.id);
    let id_view = match page {
        Some(href) => view! { <a class="check-id" href=href title="This check's page">{id}</a> }.into_any(),
        None => view! { <span class="check-id">{id}</span> }.into_any(),
    };
    let rows: Vec<_> = check.evidence.iter().map(evidence_row).collect();
    let count = rows.len();
    let verdict = check.verdict;
    let hidden = move || filter.get().is_some_and(|f| f != verdict);
    view! {
        <li class=format!("check {}", verdict.id()) id=anchor tabindex="-1" hidden=hidden>
            <span class="verdict">{verdict.tag()}</span>" "
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
                                    <td class="vb" data-label="verified by">
                                        <a href=Route::Page(Page::Observers, Some(e.verified_by.to_string())).href()
                                            title="What this observer reads">{format!("[{}]", e.verified_by)}</a>
                                    </td>
                                    <td data-label="probe">{e.probe}</td>
                                    <td data-label="outcome">{e.outcome}</td>
                                    <td data-label="role">{e.role}</td>
                                    <td data-label="tool">{e.tool}</td>
                                    <td data-label="args"><code>{e.args}</code></td>
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
                            <td>{c.class.id()}</td>
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
