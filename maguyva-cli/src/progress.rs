//! A progress bar on stderr for long operations; silent when stderr is not a
//! terminal, so logs and pipes stay clean.
//!
//! Crash tests stop a build at a chosen point through the same calls: with
//! `MAGUYVA_PAUSE_AT=N` in the environment the process says so on stderr
//! and waits forever at its Nth progress event (a stage begun, or work
//! advanced), to be killed there; with `MAGUYVA_PAUSE_AT=count` it reports,
//! when it is done, how many events it made and which began a stage.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use maguyva_core::Progress;
use std::io::IsTerminal;

/// The environment variable that pauses a run at a progress event.
pub const PAUSE_VAR: &str = "MAGUYVA_PAUSE_AT";

/// Shows [`Progress`] as an indicatif bar.
#[derive(Debug)]
pub struct BarProgress {
    bar: ProgressBar,
    pause: Option<Pause>,
}

/// Where a crash test wants the run stopped.
#[derive(Debug)]
struct Pause {
    /// The event to wait at; `None` only counts.
    at: Option<u64>,
    seen: std::sync::atomic::AtomicU64,
    /// The events that began a stage.
    stages: std::sync::Mutex<Vec<u64>>,
}

impl Pause {
    fn from_env() -> Option<Pause> {
        let value = std::env::var(PAUSE_VAR).ok()?;
        let at = match value.trim() {
            "count" => None,
            n => Some(n.parse().ok()?),
        };
        Some(Pause { at, seen: Default::default(), stages: Default::default() })
    }

    /// Counts one event, and waits forever if it is the one asked for.
    fn event(&self, stage: bool) {
        let n = self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        if stage && let Ok(mut stages) = self.stages.lock() {
            stages.push(n);
        }
        if self.at == Some(n) {
            eprintln!("maguyva: paused at progress event {n}");
            loop {
                std::thread::park();
            }
        }
    }
}

impl BarProgress {
    /// A bar drawn on stderr when it is a terminal and `enabled` is set.
    pub fn new(enabled: bool) -> BarProgress {
        BarProgress::drawn_on(if enabled && std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        })
    }

    fn drawn_on(target: ProgressDrawTarget) -> BarProgress {
        BarProgress { bar: ProgressBar::with_draw_target(None, target), pause: Pause::from_env() }
    }

    /// Removes the bar from the screen.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for BarProgress {
    fn stage(&self, name: &str, total: u64) {
        if let Some(p) = &self.pause {
            p.event(true);
        }
        // The name is part of the style and the count is set in the same
        // update, with the ticker stopped, so that no draw shows the new
        // stage with the last one's count.
        self.bar.disable_steady_tick();
        let name = name.replace(['{', '}'], "");
        let template = match total {
            0 => format!("{{spinner}} {name:>14} {{elapsed}}"),
            _ => format!("{{spinner}} {name:>14} [{{bar:30}}] {{pos}}/{{len}} {{elapsed}}"),
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.update(|state| {
            state.set_len(total);
            state.set_pos(0);
        });
        self.bar.enable_steady_tick(std::time::Duration::from_millis(120));
    }

    fn advance(&self, n: u64) {
        if let Some(p) = &self.pause {
            p.event(false);
        }
        self.bar.inc(n);
    }
}

impl Drop for BarProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
        if let Some(p) = self.pause.as_ref().filter(|p| p.at.is_none()) {
            let n = p.seen.load(std::sync::atomic::Ordering::SeqCst);
            let stages = p.stages.lock().map(|s| s.clone()).unwrap_or_default();
            let stages: Vec<String> = stages.iter().map(u64::to_string).collect();
            eprintln!("maguyva: {n} progress events; stages begin at {}", stages.join(" "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A terminal that keeps every line drawn on it.
    #[derive(Debug, Default, Clone)]
    struct Recorder(Arc<Mutex<Vec<String>>>);

    impl indicatif::TermLike for Recorder {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            if !s.trim().is_empty()
                && let Ok(mut lines) = self.0.lock()
            {
                lines.push(s.to_string());
            }
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_new_stage_never_shows_the_last_stage_count() {
        let term = Recorder::default();
        let progress = BarProgress::drawn_on(ProgressDrawTarget::term_like_with_hz(
            Box::new(term.clone()),
            100,
        ));
        progress.stage("reading", 832);
        progress.advance(832);
        progress.stage("parsing", 832);
        progress.advance(1);
        progress.finish();
        let lines = term.0.lock().map(|l| l.clone()).unwrap_or_default();
        assert!(lines.iter().any(|l| l.contains("reading")), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("parsing") && l.contains("/832")), "{lines:?}");
        assert!(!lines.iter().any(|l| l.contains("parsing") && l.contains("832/832")), "{lines:?}");
    }
}
