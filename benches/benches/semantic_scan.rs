//! The semantic index's search at the size that decides
//! `DEFAULT_DENSE_SCAN_LIMIT`: just below 4,096 vectors, built by the
//! default embedder (the corpus model joined with the built-in code model)
//! from synthetic sources. A search that scans every int8 vector (what an
//! index of that size does) against one that scans binary codes and
//! rescores the best (what a larger index does).

use criterion::{Criterion, criterion_group, criterion_main};
use maguyva_benches::synthetic_corpus;
use maguyva_semantic::{
    CodeModel, DEFAULT_CORPUS_DIMENSIONS, DEFAULT_DENSE_SCAN_LIMIT, Role, SearchOptions,
    VectorIndexBuilder,
};
use std::hint::black_box;

/// What a 10-result search asks of the semantic index: 8 fragments each.
const K: usize = 80;

fn bench(c: &mut Criterion) {
    let Ok(code) = CodeModel::builtin() else { return };
    let docs: Vec<String> = synthetic_corpus(DEFAULT_DENSE_SCAN_LIMIT - 1, 20)
        .into_iter()
        .map(|(path, text)| format!("{path}\n{text}"))
        .collect();
    let mut builder = VectorIndexBuilder::new();
    builder.code_model(Some(code));
    let Ok((int8, _)) = builder.build_corpus(&docs, DEFAULT_CORPUS_DIMENSIONS) else { return };
    let Ok((coded, _)) = builder.dense_scan_limit(0).build_corpus(&docs, DEFAULT_CORPUS_DIMENSIONS)
    else {
        return;
    };
    let Some(model) = int8.model_embedder() else { return };
    let Ok(q) = model.embed(&["retry the request after a socket timeout"], Role::Query) else {
        return;
    };
    eprintln!("{} vectors of {} dimensions", int8.len(), model.dimension());
    let mut group = c.benchmark_group("semantic_dense_scan");
    group.sample_size(20);
    group.bench_function("int8_scan", |b| {
        b.iter(|| int8.search(black_box(&q), K, SearchOptions::default()))
    });
    group.bench_function("codes_then_rescore", |b| {
        b.iter(|| coded.search(black_box(&q), K, SearchOptions::default()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
