//! A search after a one-line edit: what an agent that edits and searches in
//! turn pays. A synthetic repository of 2,000 Rust files (about 13 MB) is
//! indexed once; each iteration appends a line to one file (not timed),
//! then `open_fresh` finds the change by stat, refreshes the index (parsing
//! and indexing that file again, keeping the rest) and a default-preset
//! query runs on the result, as a whole `maguyva search` does (minus
//! process start).

#![forbid(unsafe_code)]

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use maguyva_core::{IndexDir, NoProgress};
use maguyva_engine::{
    EmbedderChoice, IndexSettings, Refresh, SearchRequest, build_index, open_fresh,
};
use std::hint::black_box;
use std::io::Write;

fn bench(c: &mut Criterion) {
    let repo = tempfile::tempdir().expect("temporary folder");
    let corpus = maguyva_benches::synthetic_corpus(2_000, 200);
    for (path, text) in &corpus {
        let file = repo.path().join(path);
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("folders");
        std::fs::write(file, text).expect("a file");
    }
    let edited = repo.path().join(&corpus[corpus.len() / 2].0);
    let dir = IndexDir::new(repo.path().join(".maguyva"));
    let settings =
        IndexSettings { embedder: EmbedderChoice::builtin(), ..IndexSettings::default() };
    build_index(repo.path(), &dir, &settings, &NoProgress).expect("index builds");
    let query = SearchRequest::new("how is the session cache flushed");

    let mut group = c.benchmark_group("refresh");
    group.sample_size(20);
    let mut edits = 0u64;
    group.bench_function("one_line_edit_then_search", |b| {
        b.iter_batched(
            || {
                edits += 1;
                let mut file =
                    std::fs::OpenOptions::new().append(true).open(&edited).expect("opens");
                writeln!(file, "// edit {edits}").expect("appends");
            },
            |()| {
                let (index, refresh) =
                    open_fresh(repo.path(), &dir, &settings, &NoProgress).expect("refreshes");
                assert!(matches!(refresh, Refresh::Refreshed { parsed: 1, .. }), "{refresh:?}");
                black_box(index.search(&query).expect("searches"))
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
