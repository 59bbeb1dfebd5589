//! A progress hook, so that library crates can report progress without
//! printing; the CLI turns it into a progress bar.

/// Receives progress of a long operation. Every method has an empty default.
pub trait Progress: Sync {
    /// A new stage begins, with `total` units of work (0 when unknown).
    fn stage(&self, _name: &str, _total: u64) {}
    /// `n` more units of the current stage are done.
    fn advance(&self, _n: u64) {}
}

/// A [`Progress`] that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {}
