//! JUnit XML: a test suite per pack, a test case per check (advisory and candidate
//! checks included, marked in the name), each with its scope. fail and part are failures
//! carrying the evidence; inconclusive is an error; n/a is skipped. A replayed record
//! has one more suite: whether its stored results are what its checks give.

use super::badge::escape;
use crate::model::{Pack, Verdict};
use crate::record::Record;
use std::fmt::Write;

pub fn render(r: &Record) -> String {
    let name = format!("sealmark {} · {}", r.sealmark.version, r.server.name);
    document(&name, &suites(r, ""))
}

/// The test suites of one record, their names prefixed (a server's name, in a run of
/// several), with their counts.
#[derive(Debug, Default)]
pub struct Suites {
    pub xml: String,
    pub tests: usize,
    pub failures: usize,
    pub errors: usize,
    pub skipped: usize,
}

impl Suites {
    pub fn add(&mut self, other: Suites) {
        self.xml.push_str(&other.xml);
        self.tests += other.tests;
        self.failures += other.failures;
        self.errors += other.errors;
        self.skipped += other.skipped;
    }
}

/// The XML document around the suites.
pub fn document(name: &str, s: &Suites) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n{}</testsuites>\n",
        escape(name),
        s.tests,
        s.failures,
        s.errors,
        s.skipped,
        s.xml
    )
}

pub fn suites(r: &Record, prefix: &str) -> Suites {
    let file = r.config.file.as_deref().unwrap_or("sealmark.yaml");
    let line = r.config.server_line.unwrap_or(1);
    let prefix = escape(prefix);
    let mut suites = String::new();
    let (mut tests, mut failures, mut errors, mut skipped) = (0, 0, 0, 0);
    for pack in Pack::ALL {
        let checks: Vec<_> = r.pack_checks(pack.id()).collect();
        if checks.is_empty() {
            continue;
        }
        let count = |v: &[Verdict]| checks.iter().filter(|c| v.contains(&c.verdict)).count();
        let (f, e, s) =
            (count(&[Verdict::Fail, Verdict::Part]), count(&[Verdict::Inconclusive]), count(&[Verdict::Na]));
        tests += checks.len();
        failures += f;
        errors += e;
        skipped += s;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{prefix}sealmark.{}\" tests=\"{}\" failures=\"{f}\" errors=\"{e}\" skipped=\"{s}\">",
            pack.id(),
            checks.len()
        );
        for c in checks {
            let mut marks = Vec::new();
            if c.advisory {
                marks.push("advisory, not scored");
            }
            if c.candidate {
                marks.push("candidate");
            }
            let marks = if marks.is_empty() { String::new() } else { format!(" ({})", marks.join(", ")) };
            let name = escape(&format!("{}: {}{marks}", c.id, c.label));
            let _ = write!(
                suites,
                "    <testcase classname=\"{prefix}sealmark.{}\" name=\"{name}\" file=\"{}\" line=\"{line}\"",
                pack.id(),
                escape(file)
            );
            let evidence: Vec<String> =
                c.evidence.iter().map(|e| format!("[{}] {}: {}", e.verified_by.id(), e.probe, e.outcome)).collect();
            let body = escape(&format!("scope: {}\n{}", c.scope, evidence.join("\n")));
            let message = escape(&format!("{}: {}", c.verdict.id(), c.summary));
            let scope = escape(&format!("scope: {}", c.scope));
            match c.verdict {
                Verdict::Pass => {
                    let _ = writeln!(suites, ">\n      <system-out>{scope}</system-out>\n    </testcase>");
                }
                Verdict::Fail | Verdict::Part => {
                    let _ = writeln!(
                        suites,
                        ">\n      <failure message=\"{message}\" type=\"{}\">{body}</failure>\n    </testcase>",
                        c.verdict.id()
                    );
                }
                Verdict::Inconclusive => {
                    let _ = writeln!(
                        suites,
                        ">\n      <error message=\"{message}\" type=\"inconclusive\">{body}</error>\n    </testcase>"
                    );
                }
                Verdict::Na => {
                    let _ = writeln!(
                        suites,
                        ">\n      <skipped message=\"{message}\"/>\n      <system-out>{scope}</system-out>\n    </testcase>"
                    );
                }
            }
        }
        suites.push_str("  </testsuite>\n");
    }
    // A replay's finding is a test of its own: the stored results are what the checks give.
    if let Some(found) = &r.replay {
        tests += 1;
        let _ = write!(
            suites,
            "  <testsuite name=\"{prefix}sealmark.replay\" tests=\"1\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n    <testcase classname=\"{prefix}sealmark.replay\" name=\"replay: the stored results are what the record's checks give\" file=\"{}\" line=\"{line}\"",
            u8::from(found.differs()),
            escape(file)
        );
        let lines = escape(&found.lines().join("\n"));
        if found.differs() {
            failures += 1;
            let _ = writeln!(
                suites,
                ">\n      <failure message=\"a stored result is not what the checks give\" type=\"replay\">{lines}</failure>\n    </testcase>"
            );
        } else {
            let _ = writeln!(suites, ">\n      <system-out>{lines}</system-out>\n    </testcase>");
        }
        suites.push_str("  </testsuite>\n");
    }
    Suites { xml: suites, tests, failures, errors, skipped }
}
