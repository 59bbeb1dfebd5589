//! PageRank at the size issue 4 budgets for: 200,000 nodes and 1,000,000
//! edges, "well under a second".

#![forbid(unsafe_code)]

use criterion::{Criterion, criterion_group, criterion_main};
use maguyva_benches::XorShift;
use maguyva_graph::page_rank;

/// A random graph whose in-degrees are skewed like a code base's (a few
/// hubs, many leaves), from a fixed seed.
fn edges(nodes: u32, edges: usize) -> Vec<(u32, u32)> {
    let mut rng = XorShift::new(0x2545_F491_4F6C_DD1D);
    let mut next = move || rng.next_u64();
    (0..edges)
        .map(|_| {
            let from = (next() % u64::from(nodes)) as u32;
            // Squaring a uniform draw piles targets onto low ids: hubs.
            let u = (next() % 1_000_000) as f64 / 1_000_000.0;
            let to = ((u * u) * f64::from(nodes)) as u32;
            (from, to.min(nodes - 1))
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let e = edges(200_000, 1_000_000);
    let mut group = c.benchmark_group("graph");
    group.sample_size(10);
    group.bench_function("pagerank_200k_nodes_1m_edges", |b| b.iter(|| page_rank(200_000, &e)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
