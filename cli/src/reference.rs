//! `list-checks`, `describe` and `explain`: the registry, printed; and the CLI's own
//! reference page, generated from its argument definitions.

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
            let hint = registry::did_you_mean_hint(id, CHECKS.iter().map(|c| c.id));
            crate::usage_error(format!("unknown check \"{id}\"{hint}; `sealmark list-checks` prints every id"))
        }
    }
}

/// The CLI reference page (`site/reference/cli.md`): every command's help, as printed.
#[cfg(test)]
pub fn cli_markdown() -> String {
    use clap::CommandFactory;
    let mut root = crate::args::Cli::command();
    root.build();
    let mut out = String::from(
        "<!-- Generated from the CLI's argument definitions; do not edit. -->\n\
         <!-- Regenerate: SEALMARK_BLESS=1 cargo test -p sealmark cli_reference -->\n\n\
         # The sealmark command line\n\n\
         Every command and flag, exactly as `sealmark <command> --help` prints it.\n\n",
    );
    out.push_str(&format!("## sealmark\n\n```text\n{}```\n\n", root.render_long_help()));
    fn walk(cmd: &mut clap::Command, path: &str, out: &mut String) {
        for sub in cmd.get_subcommands_mut().filter(|s| s.get_name() != "help") {
            let name = format!("{path} {}", sub.get_name());
            out.push_str(&format!("## {name}\n\n```text\n{}```\n\n", sub.render_long_help()));
            walk(sub, &name, out);
        }
    }
    walk(&mut root, "sealmark", &mut out);
    out.trim_end().to_string() + "\n"
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_reference_is_fresh() {
        sealmark_engine::render::assert_fresh("site/reference/cli.md", &super::cli_markdown());
    }
}
