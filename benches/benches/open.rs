//! Opening an index: what every `maguyva search` process pays before its
//! query. A synthetic repository of 2,000 Rust files (about 13 MB, a large
//! repository) is indexed once; then `open` maps the current generation and
//! checks what a search uses, and `open_and_search` adds a default-preset
//! query and a literal, as a whole search does (minus process start and the
//! staleness walk). `graph` adds decoding the dependency graph, which only
//! graph questions pay.

#![forbid(unsafe_code)]

use criterion::{Criterion, criterion_group, criterion_main};
use maguyva_core::{IndexDir, MatchMode, NoProgress};
use maguyva_engine::{EmbedderChoice, Index, IndexSettings, SearchRequest, build_index};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let repo = tempfile::tempdir().expect("temporary folder");
    for (path, text) in maguyva_benches::synthetic_corpus(2_000, 200) {
        let file = repo.path().join(path);
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("folders");
        std::fs::write(file, text).expect("a file");
    }
    let dir = IndexDir::new(repo.path().join(".maguyva"));
    let settings =
        IndexSettings { embedder: EmbedderChoice::builtin(), ..IndexSettings::default() };
    build_index(repo.path(), &dir, &settings, &NoProgress).expect("index builds");

    let mut group = c.benchmark_group("open");
    group.sample_size(30);
    group.bench_function("open", |b| {
        b.iter(|| black_box(Index::open(&dir, &settings).expect("opens")))
    });
    group.bench_function("open_and_search", |b| {
        let keyword = SearchRequest::new("how is the session cache flushed");
        let mut literal = SearchRequest::new("retry_timeout");
        literal.mode = MatchMode::Literal;
        b.iter(|| {
            let index = Index::open(&dir, &settings).expect("opens");
            black_box(index.search(&keyword).expect("searches"));
            black_box(index.search(&literal).expect("searches"));
        })
    });
    group.bench_function("open_and_graph", |b| {
        b.iter(|| {
            let index = Index::open(&dir, &settings).expect("opens");
            black_box(index.graph().expect("decodes").graph().file_count());
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
