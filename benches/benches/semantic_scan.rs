//! The semantic index's search at the sizes that decide
//! `DEFAULT_DENSE_SCAN_LIMIT`: just below it and just below twice it,
//! built by the default embedder (the corpus model joined with the
//! built-in code model) from synthetic sources. A search that scans every
//! int8 vector (what an index below the limit does) against one that scans
//! binary codes and rescores the best (what a larger index does).

#![forbid(unsafe_code)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
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
    let mut group = c.benchmark_group("semantic_dense_scan");
    group.sample_size(20);
    for n in [DEFAULT_DENSE_SCAN_LIMIT - 1, 2 * DEFAULT_DENSE_SCAN_LIMIT - 1] {
        let docs: Vec<String> = synthetic_corpus(n, 20)
            .into_iter()
            .map(|(path, text)| format!("{path}\n{text}"))
            .collect();
        let mut builder = VectorIndexBuilder::new();
        builder.code_model(Some(code.clone())).dense_scan_limit(usize::MAX);
        let Ok((int8, _)) = builder.build_corpus(&docs, DEFAULT_CORPUS_DIMENSIONS) else { return };
        let coded = builder.dense_scan_limit(0).build_corpus(&docs, DEFAULT_CORPUS_DIMENSIONS);
        let Ok((coded, _)) = coded else { return };
        let Some(model) = int8.model_embedder() else { return };
        let Ok(q) = model.embed(&["retry the request after a socket timeout"], Role::Query) else {
            return;
        };
        eprintln!("{n} vectors of {} dimensions", model.dimension());
        group.bench_with_input(BenchmarkId::new("int8_scan", n), &n, |b, _| {
            b.iter(|| int8.search(black_box(&q), K, SearchOptions::default()))
        });
        group.bench_with_input(BenchmarkId::new("codes_then_rescore", n), &n, |b, _| {
            b.iter(|| coded.search(black_box(&q), K, SearchOptions::default()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
