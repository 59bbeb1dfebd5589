//! A program that depends on the engine alone: index a folder (the first
//! argument, else the current one) and search it for the other arguments.
//!
//!     cargo run -p maguyva-engine --example library -- PATH where is the config parsed

#![forbid(unsafe_code)]

use maguyva_engine::{IndexDir, IndexSettings, NoProgress, SearchRequest};
use maguyva_engine::{default_index_dir, open_fresh};

fn main() -> Result<(), maguyva_engine::Error> {
    let mut args = std::env::args().skip(1);
    let root = std::path::PathBuf::from(args.next().unwrap_or_else(|| ".".into()));
    let query: Vec<String> = args.collect();
    let query =
        if query.is_empty() { "where is the config parsed".to_string() } else { query.join(" ") };
    let dir = IndexDir::new(default_index_dir(&root));
    let settings = IndexSettings::recorded(&dir).unwrap_or_default();
    let (index, _refresh) = open_fresh(&root, &dir, &settings, &NoProgress)?;
    for r in index.search(&SearchRequest::new(query))?.results {
        println!("{}:{}", r.path, r.start_line);
    }
    Ok(())
}
