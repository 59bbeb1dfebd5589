//! Exact popcount scan against HNSW over packed binary codes, at the sizes
//! that decide `DEFAULT_HNSW_THRESHOLD`: 10k, 50k and 200k codes of 128 bits
//! (the built-in embedder) and of 1024 bits (Voyage's default). Each query
//! asks for 320 candidates, what a 10-result search fetches before
//! rescoring. Before timing, the HNSW recall@10 against the scan is printed,
//! so that the comparison is at equal quality.

#![forbid(unsafe_code)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use maguyva_benches::clustered_codes;
use maguyva_semantic::{EF_SEARCH, HnswIndex, nearest};
use std::hint::black_box;

/// Candidates a default search fetches: 10 results × 8 fragments × 4 for
/// rescoring.
const FETCH: usize = 320;

/// Recall@10 of HNSW against the exact scan, counting ties at the tenth
/// distance as found.
fn recall(hnsw: &HnswIndex, codes: &[u64], queries: &[u64], words: usize) -> f64 {
    let mut found = 0usize;
    let mut total = 0usize;
    for q in queries.chunks_exact(words) {
        let exact = nearest(q, codes, 10);
        let Some(&(_, cutoff)) = exact.last() else { continue };
        let approx = hnsw.nearest(q, 10, EF_SEARCH);
        found += approx.iter().filter(|&&(_, d)| d <= cutoff).count().min(exact.len());
        total += exact.len();
    }
    found as f64 / total.max(1) as f64
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("semantic_search");
    group.sample_size(20);
    for words in [2usize, 16] {
        for n in [10_000usize, 50_000, 200_000] {
            let codes = clustered_codes(n, words, 7);
            // Queries drawn like the codes, not equal to any of them.
            let queries = clustered_codes(200, words, 7 ^ 0xABCD);
            let hnsw = HnswIndex::build(&codes, words);
            eprintln!(
                "{n} codes of {} bits: HNSW recall@10 {:.3}",
                words * 64,
                recall(&hnsw, &codes, &queries, words)
            );
            let q = &queries[..words];
            let id = format!("{}bit/{n}", words * 64);
            group.bench_with_input(BenchmarkId::new("scan", &id), &n, |b, _| {
                b.iter(|| nearest(black_box(q), &codes, FETCH))
            });
            group.bench_with_input(BenchmarkId::new("hnsw", &id), &n, |b, _| {
                b.iter(|| hnsw.nearest(black_box(q), FETCH, EF_SEARCH.max(FETCH)))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
