//! The badge (SVG) and the shields.io endpoint document. Both are built only from
//! sealmark's own words (pack ids, letters, the badge reason): no text a server
//! supplied reaches them. A run that is not badge-eligible renders "no badge" in grey.

use crate::model::Pack;
use crate::record::{PackStatus, Record};

/// What a badge says: label, message and colour name.
pub struct BadgeText {
    pub label: &'static str,
    pub message: String,
    pub color: &'static str,
}

/// The badge's text: the letters of the graded standard packs, coloured by the worst.
pub fn badge_text(r: &Record) -> BadgeText {
    if !r.badge.eligible {
        return BadgeText { label: "sealmark", message: format!("no badge: {}", r.badge.reason), color: "lightgrey" };
    }
    let graded: Vec<(&str, String, char)> = Pack::STANDARD
        .iter()
        .filter_map(|p| {
            let res = r.packs.get(p.id())?;
            let g = res.grade.as_ref().filter(|_| res.status == PackStatus::Graded)?;
            let letter = g.display_letter();
            Some((p.id(), letter.clone(), letter.chars().next().unwrap_or('F')))
        })
        .collect();
    let worst = graded.iter().map(|(_, _, l)| *l).max().unwrap_or('F');
    let color = match worst {
        'A' => "brightgreen",
        'B' => "green",
        'C' => "yellow",
        'D' => "orange",
        _ => "red",
    };
    let message: Vec<String> = graded.iter().map(|(p, l, _)| format!("{p} {l}")).collect();
    BadgeText { label: "sealmark", message: message.join(" · "), color }
}

/// The shields.io endpoint document: exactly schemaVersion, label, message and color.
pub fn shields(r: &Record) -> String {
    let b = badge_text(r);
    let doc = serde_json::json!({ "schemaVersion": 1, "label": b.label, "message": b.message, "color": b.color });
    let mut s = super::json_escaped(serde_json::to_string_pretty(&doc).expect("serialises"));
    s.push('\n');
    s
}

/// The badge as a flat SVG, its text also in `<title>` and `aria-label`.
pub fn svg(r: &Record) -> String {
    let b = badge_text(r);
    let fill = fill(b.color);
    // Verdana 11px averages about 7 px a character; fixed, so the output is deterministic.
    let width = |t: &str| 10 + 7 * t.chars().count();
    let (lw, mw) = (width(b.label), width(&b.message));
    let total = lw + mw;
    let text = escape(&format!("{}: {}", b.label, b.message));
    let (label, message) = (escape(b.label), escape(&b.message));
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{text}">
  <title>{text}</title>
  <rect width="{lw}" height="20" fill="#555"/>
  <rect x="{lw}" width="{mw}" height="20" fill="{fill}"/>
  <g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">
    <text x="{lx}" y="14">{label}</text>
    <text x="{mx}" y="14">{message}</text>
  </g>
</svg>
"##,
        lx = lw / 2,
        mx = lw + mw / 2,
    )
}

/// The fill of a badge colour name.
pub fn fill(color: &str) -> &'static str {
    match color {
        "brightgreen" => "#4c1",
        "green" => "#97ca00",
        "yellow" => "#dfb317",
        "orange" => "#fe7d37",
        "red" => "#e05d44",
        _ => "#9f9f9f",
    }
}

/// Text made safe for XML content and attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot carry at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            // Kept, as references: DEL, C1 and the invisible characters never appear raw.
            c if (c as u32) >= 0x7f && crate::text::is_unsafe(c) => out.push_str(&format!("&#x{:x};", c as u32)),
            c => out.push(c),
        }
    }
    out
}
