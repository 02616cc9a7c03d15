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

/// The closing line of every human-readable report.
pub const CLOSING_LINE: &str =
    "An A means these checks passed with this exact configuration. It is not a security endorsement; see methodology.";
