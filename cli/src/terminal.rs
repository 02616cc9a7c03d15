//! What only a person at a terminal sees: a progress line on stderr while a run works,
//! and colour in the text report. Neither ever reaches a file or a pipe, so reports
//! stay byte-identical.

use crate::args::ColorChoice;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A spinner line on stderr that `status` describes, redrawn until dropped; nothing
/// with `--quiet` or when stderr is not a terminal.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    stop: Arc<AtomicBool>,
}

impl Progress {
    pub fn start(quiet: bool, status: impl Fn() -> String + Send + 'static) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { bar: None, stop };
        }
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(indicatif::ProgressStyle::with_template("{spinner} {msg}").expect("a valid template"));
        bar.enable_steady_tick(Duration::from_millis(120));
        let (shown, stopping, started) = (bar.clone(), stop.clone(), Instant::now());
        std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                shown.set_message(format!("{} · {}s", status(), started.elapsed().as_secs()));
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        Progress { bar: Some(bar), stop }
    }

    /// The line the stage of a single run makes: the pack and the messages sent so far.
    pub fn of_run(quiet: bool) -> Progress {
        Progress::start(quiet, || {
            let (stage, sent) = sealmark_engine::session::progress::now();
            format!("{stage} · {sent} message(s) sent")
        })
    }

    /// Prints a line on stderr above the progress line.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(crate::hidden(line)),
            None => eprintln!("{}", crate::hidden(line)),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Whether the text report on stdout is coloured: `--color always` or `never`, else
/// only on a terminal and without `NO_COLOR` (https://no-color.org).
pub fn colour_wanted(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// The text report with its verdict tags and grades coloured. Only the report's own
/// line shapes are touched (a tag opening a check line, `GRADE x` on a `PACK` line);
/// what a server wrote is never coloured on purpose.
pub fn coloured(report: &str) -> String {
    const GREEN: &str = "\x1b[32m";
    const YELLOW: &str = "\x1b[33m";
    const RED: &str = "\x1b[31m";
    const DIM: &str = "\x1b[2m";
    const BOLD: &str = "\x1b[1m";
    const RESET: &str = "\x1b[0m";
    let mut out = String::with_capacity(report.len() + report.len() / 8);
    for line in report.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        let tag = [("[PASS]", GREEN), ("[PART]", YELLOW), ("[FAIL]", RED), ("[INCL]", YELLOW), ("[N/A ]", DIM)]
            .into_iter()
            .find(|(t, _)| indent == 2 && rest.starts_with(t));
        if let Some((t, colour)) = tag {
            out.push_str(&format!("{}{colour}{t}{RESET}{}", &line[..indent], &rest[t.len()..]));
        } else if let Some(at) = line.starts_with("PACK ").then(|| line.find("  GRADE ")).flatten() {
            let grade_at = at + "  GRADE ".len();
            let letter_end = line[grade_at..].find(' ').map_or(line.len(), |i| grade_at + i);
            let colour = match line[grade_at..].chars().next() {
                Some('A' | 'B') => GREEN,
                Some('C' | 'D') => YELLOW,
                _ => RED,
            };
            out.push_str(&format!(
                "{BOLD}{}{RESET}{colour}{BOLD}{}{RESET}{}",
                &line[..grade_at],
                &line[grade_at..letter_end],
                &line[letter_end..]
            ));
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_reports_own_shapes_are_coloured() {
        let report = "PACK fs  GRADE F  (0/4 points, 0%)\n  [FAIL] Reads stay inside — x\n  read_file  [PASS] tool\n[PASS] at column 0\n";
        let c = coloured(report);
        assert!(c.starts_with("\x1b[1mPACK fs  GRADE \x1b[0m\x1b[31m\x1b[1mF\x1b[0m  (0/4"), "{c:?}");
        assert!(c.contains("  \x1b[31m[FAIL]\x1b[0m Reads stay inside"), "{c:?}");
        assert!(c.contains("  read_file  [PASS] tool\n[PASS] at column 0\n"), "{c:?}");
        let plain: String = c.replace("\x1b[0m", "").replace("\x1b[1m", "").replace("\x1b[31m", "");
        assert_eq!(plain, report);
    }
}
