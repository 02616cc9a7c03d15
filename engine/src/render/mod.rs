//! Renderers: pure functions from a record (or the registry) to text.

pub mod badge;
pub mod combined;
pub mod junit;
pub mod markdown;
pub mod reference;
pub mod sarif;
pub mod site;
pub mod text;

use crate::record::Record;
use crate::text::is_unsafe;

/// The full record as 2-space indented JSON, with a final newline.
pub fn json(record: &Record) -> String {
    let mut s = json_escaped(serde_json::to_string_pretty(record).expect("a record always serialises"));
    s.push('\n');
    s
}

/// A human-readable report with every unsafe character (`text::is_unsafe`) but the
/// line break and the tab written as a `\u{…}` escape, so a server's name, version or
/// tool names cannot rewrite the reader's terminal. The harness's own text has none.
pub fn printable(report: String) -> String {
    let escape = |c: char| is_unsafe(c) && c != '\n' && c != '\t';
    if !report.chars().any(escape) {
        return report;
    }
    let mut out = String::with_capacity(report.len());
    for c in report.chars() {
        if escape(c) {
            crate::text::push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// Serialised JSON with every unsafe character written as a `\uXXXX` escape (a
/// surrogate pair above U+FFFF). The data is unchanged; only the bytes are safe to view.
/// serde_json escapes C0 controls itself, but not DEL, C1 or the invisible ones.
pub fn json_escaped(text: String) -> String {
    if !text.chars().any(is_unsafe) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        // Outside strings JSON holds only ASCII punctuation and whitespace, never these.
        if is_unsafe(c) && !matches!(c, '\n' | '\t' | '\r') {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Fails when a generated file (`path`, from the repository root) differs from what the
/// code generates now; `SEALMARK_BLESS=1` rewrites it first. For tests (here and in
/// the CLI's), hence a panic.
pub fn assert_fresh(path: &str, generated: &str) {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    if std::env::var_os("SEALMARK_BLESS").is_some() {
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("create the directory");
        std::fs::write(&file, generated).expect("write the generated file");
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(committed == generated, "{path} is stale: run SEALMARK_BLESS=1 cargo test --workspace");
}

/// Why a CUSTOM run is custom: each difference from the standard profile
/// (`config.standardDiff`), then the hash of its locked settings. Empty for a STANDARD run,
/// whose hash is the published one (`sealmark standard`).
pub fn custom_lines(r: &Record) -> Vec<String> {
    if r.config.standard {
        return Vec::new();
    }
    let mut lines: Vec<String> =
        r.config.standard_diff.iter().map(|d| format!("differs from the standard profile: {d}")).collect();
    lines.push(format!("config.hash: {}", r.config.hash));
    lines
}

/// What a replay found that a reader must be told, one line each (the first says what
/// the replay did): every stored result, grade and weight the record's checks do not
/// give, or that its verdicts could only be re-graded. Empty for a live run, and for a
/// replay that found the record as stored.
pub fn replay_lines(r: &Record) -> Vec<String> {
    match &r.replay {
        Some(p) if p.differs() || p.not_rejudged.is_some() => p.lines(),
        _ => Vec::new(),
    }
}

/// The closing line of every human-readable report.
pub const CLOSING_LINE: &str =
    "An A means these checks passed with this exact configuration. It is not a security endorsement; see methodology.";
