//! What a query pays for Maguyva's routing: classifying the question and
//! fusing three modalities' lists (80 fragments each over a few hundred
//! files, what a 10-result search fetches) with the centrality boost and the
//! vendor check. Issue budget: under 0.1 ms together. Then the learned
//! reranker's cost over 30 candidates (budget: well under 1 ms with the
//! features, which the evaluation's latency figures include).

#![forbid(unsafe_code)]

use criterion::{Criterion, criterion_group, criterion_main};
use maguyva_benches::XorShift;
use maguyva_core::{ChunkId, FileId, Hit, LineSpan, Modality};
use maguyva_fusion::{
    FEATURE_COUNT, Features, FitParams, FusionContext, FusionParams, Intent, IntentClassifier,
    QuestionKind, RerankModel, TrainingQuestion, TreeParams, fuse,
};
use std::hint::black_box;

struct Context {
    centrality: Vec<f32>,
}

impl FusionContext for Context {
    fn centrality(&self, file: FileId, _chunk: ChunkId) -> f32 {
        self.centrality.get(file.index()).copied().unwrap_or(0.0)
    }

    fn is_vendor(&self, file: FileId) -> bool {
        file.0.is_multiple_of(97)
    }
}

fn list(seed: u64, files: u32) -> Vec<Hit> {
    let mut rng = XorShift::new(seed);
    (0..80)
        .map(|i| {
            let file = (rng.next_u64() % u64::from(files)) as u32;
            Hit {
                chunk: ChunkId(file * 10 + i % 10),
                file: FileId(file),
                lines: LineSpan::new(1, 40),
                score: 1.0 / (1.0 + i as f32),
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let classifier = IntentClassifier::new();
    let queries = [
        "how does the retry policy decide when to give up",
        "where is parseConfig defined",
        "who calls apply_discount",
        "ECONNREFUSED",
        "rejection types and rejection responses for failed extractions",
    ];
    let lists = vec![
        (Modality::SEMANTIC, list(1, 300)),
        (Modality::TEXT, list(3, 300)),
        (Modality::STRUCTURAL, list(5, 300)),
    ];
    let context = Context { centrality: (0..300).map(|i| 1.0 / (1.0 + i as f32)).collect() };
    let params = FusionParams::default();
    let mut group = c.benchmark_group("routing");
    group.bench_function("classify", |b| {
        b.iter(|| {
            for q in queries {
                black_box(classifier.classify(black_box(q)));
            }
        })
    });
    group.bench_function("classify_and_fuse", |b| {
        b.iter(|| {
            let c = classifier.classify(black_box(queries[0]));
            let weights = Intent::UnderstandCode.profile();
            black_box((c, fuse(black_box(&lists), &weights, &params, &context)))
        })
    });
    // The reranker over the first 30 fused candidates: the shipped linear
    // kind, and one with 300 trees of depth 4 (the research option).
    let mut rng = XorShift::new(11);
    let candidates: Vec<Features> = (0..30)
        .map(|_| {
            let mut x = [0.0f32; FEATURE_COUNT];
            for v in &mut x {
                *v = (rng.next_u64() % 1000) as f32 / 1000.0;
            }
            x
        })
        .collect();
    let questions: Vec<TrainingQuestion> = (0..200)
        .map(|q| TrainingQuestion {
            kind: QuestionKind::Other,
            candidates: candidates.iter().map(|x| x.map(|v| (v + q as f32 * 0.37) % 1.0)).collect(),
            relevant: (0..30).map(|i| i % 7 == q % 7).collect(),
        })
        .collect();
    let mut fit = FitParams { steps: 20, ..FitParams::default() };
    let linear = RerankModel::fit(&questions, &fit);
    fit.trees = TreeParams { trees: 300, max_depth: 4, ..TreeParams::default() };
    let trees = RerankModel::fit(&questions, &fit);
    group.bench_function("rerank_30_linear", |b| {
        b.iter(|| black_box(linear.order(QuestionKind::Other, black_box(&candidates))))
    });
    group.bench_function("rerank_30_trees", |b| {
        b.iter(|| black_box(trees.order(QuestionKind::Other, black_box(&candidates))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
