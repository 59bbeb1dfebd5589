//! A progress bar on stderr for long operations; silent when stderr is not a
//! terminal, so logs and pipes stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use maguyva_core::Progress;
use std::io::IsTerminal;

/// Shows [`Progress`] as an indicatif bar.
#[derive(Debug)]
pub struct BarProgress {
    bar: ProgressBar,
}

impl BarProgress {
    /// A bar drawn on stderr when it is a terminal and `enabled` is set.
    pub fn new(enabled: bool) -> BarProgress {
        let bar = ProgressBar::with_draw_target(
            None,
            if enabled && std::io::stderr().is_terminal() {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        BarProgress { bar }
    }

    /// Removes the bar from the screen.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for BarProgress {
    fn stage(&self, name: &str, total: u64) {
        let style = if total > 0 {
            ProgressStyle::with_template("{spinner} {msg:>14} [{bar:30}] {pos}/{len} {elapsed}")
        } else {
            ProgressStyle::with_template("{spinner} {msg:>14} {elapsed}")
        };
        if let Ok(style) = style {
            self.bar.set_style(style.progress_chars("=> "));
        }
        self.bar.set_message(name.to_string());
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.enable_steady_tick(std::time::Duration::from_millis(120));
    }

    fn advance(&self, n: u64) {
        self.bar.inc(n);
    }
}

impl Drop for BarProgress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
