//! The text modality: index build and query latency on a synthetic corpus of
//! 2,000 files (about 8 MB).

#![forbid(unsafe_code)]

use criterion::{Criterion, criterion_group, criterion_main};
use maguyva_benches::synthetic_corpus;
use maguyva_core::{ContentStore, FragmentTable, SyntaxChunker};
use maguyva_trigram::{KeywordParams, TextIndexBuilder};
use std::hint::black_box;

fn corpus() -> (ContentStore, FragmentTable, Vec<String>) {
    let files = synthetic_corpus(2_000, 160);
    let chunker = SyntaxChunker::default();
    let fragments =
        FragmentTable::from_spans(files.iter().map(|(_, t)| chunker.chunk(t, &[])).collect());
    let paths = files.iter().map(|(p, _)| p.clone()).collect();
    (ContentStore::new(files.into_iter().map(|(_, t)| t).collect()), fragments, paths)
}

fn bench(c: &mut Criterion) {
    let (content, fragments, paths) = corpus();
    let documents = content.fragment_documents(&fragments);
    let path_refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let mut group = c.benchmark_group("text");
    group.sample_size(10);
    group.bench_function("build_2000_files", |b| {
        b.iter(|| TextIndexBuilder::new().build(&content, &documents, &path_refs, &[]))
    });
    group.finish();

    let index =
        TextIndexBuilder::new().build(&content, &documents, &path_refs, &[]).expect("index builds");
    let params = KeywordParams::default();
    c.bench_function("text/keyword_query", |b| {
        b.iter(|| {
            index.keyword(&fragments, black_box("parse the request header timeout"), params, 50)
        })
    });
    // Every file-level feature on: name field, further evidence, role factors.
    let fielded = KeywordParams {
        name_weight: 1.0,
        file_evidence: 0.1,
        test_factor: 0.8,
        other_factor: 0.25,
        ..KeywordParams::default()
    };
    c.bench_function("text/keyword_query_fielded", |b| {
        b.iter(|| {
            index.keyword(&fragments, black_box("parse the request header timeout"), fielded, 50)
        })
    });
    c.bench_function("text/literal_rare", |b| {
        b.iter(|| index.literal(&content, &fragments, black_box("fn retry_socket"), false, 50))
    });
    c.bench_function("text/literal_case_insensitive", |b| {
        b.iter(|| index.literal(&content, &fragments, black_box("RETRY_SOCKET"), true, 50))
    });
    c.bench_function("text/regex", |b| {
        b.iter(|| {
            index.regex(&content, &fragments, black_box(r"fn (parse|decode)_\w+\("), false, 50)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
