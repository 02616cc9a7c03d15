//! Renderers: pure functions from a record (or the registry) to text.

pub mod badge;
pub mod junit;
pub mod markdown;
pub mod reference;
pub mod sarif;
pub mod text;

use crate::record::Record;

/// The full record as 2-space indented JSON, with a final newline.
pub fn json(record: &Record) -> String {
    let mut s = serde_json::to_string_pretty(record).expect("a record always serialises");
    s.push('\n');
    s
}

/// The closing line of every human-readable report.
pub const CLOSING_LINE: &str =
    "An A means these checks passed with this exact configuration. It is not a security endorsement; see methodology.";
