//! The `maguyva` command's library: rendering results, the progress bar,
//! and evaluating ranking on a benchmark. The engine itself (building,
//! opening and refreshing an index, answering queries) is the
//! `maguyva-engine` crate, re-exported here as [`engine`]; the binary is
//! argument parsing and printing over it.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub use maguyva_engine as engine;
pub mod eval;
pub mod mcp;
pub mod mcp_config;
mod mcp_transport;
pub mod output;
pub mod progress;
