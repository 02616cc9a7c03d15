//! `list-checks`, `describe` and `explain`: the registry, printed.

use crate::exit;
use sealmark_engine::registry::{self, CHECKS};
use sealmark_engine::render::reference;

pub fn list_checks() -> u8 {
    print!("{}", reference::list_checks());
    exit::OK
}

pub fn describe() -> u8 {
    print!("{}", reference::describe());
    exit::OK
}

pub fn explain(id: &str) -> u8 {
    match registry::check(id) {
        Some(def) => {
            print!("{}", reference::explain(def));
            exit::OK
        }
        None => {
            let hint = registry::did_you_mean(id, CHECKS.iter().map(|c| c.id))
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            crate::usage_error(format!("unknown check \"{id}\"{hint}; `sealmark list-checks` prints every id"))
        }
    }
}
