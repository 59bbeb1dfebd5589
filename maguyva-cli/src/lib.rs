//! The engine behind the `maguyva` command: building, opening and refreshing
//! an index, answering queries, rendering results, and evaluating ranking on
//! a benchmark. The binary is a thin layer over [`engine`] and [`eval`].
#![deny(missing_docs)]

pub mod engine;
pub mod eval;
pub mod output;
pub mod progress;
