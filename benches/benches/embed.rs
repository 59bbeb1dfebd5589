//! Embedding speed of the built-in embedders: fragments per second when
//! indexing (the code model from each fragment's text on one thread, and
//! from a term matrix as a build does; the corpus model trained and joined
//! with the code model, as the default build does), and the time to embed
//! one query with the joined model. Fragments are this workspace's own
//! Rust sources cut into 30-line pieces.

#![forbid(unsafe_code)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use maguyva_core::{Analyzer, TermMatrix};
use maguyva_semantic::{CodeModel, Embedder, Role, VectorIndexBuilder};
use std::hint::black_box;
use std::path::Path;

/// Lines per fragment.
const LINES: usize = 30;

fn fragments() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in ["maguyva-core", "maguyva-semantic", "maguyva-trigram", "maguyva-ast"] {
        let Ok(dir) = std::fs::read_dir(root.join(krate).join("src")) else { continue };
        files.extend(
            dir.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "rs")),
        );
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        out.extend(lines.chunks(LINES).map(|c| format!("{}\n{}", f.display(), c.join("\n"))));
    }
    out
}

fn bench(c: &mut Criterion) {
    let Ok(code) = CodeModel::builtin() else { return };
    let docs = fragments();
    let texts: Vec<&str> = docs.iter().map(String::as_str).collect();
    eprintln!("{} fragments", texts.len());

    let mut group = c.benchmark_group("embed_fragments");
    group.sample_size(10);
    group.throughput(Throughput::Elements(texts.len() as u64));
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build();
    if let Ok(pool) = &one_thread {
        group.bench_function("code_model_from_text_1_thread", |b| {
            b.iter(|| pool.install(|| black_box(code.embed(&texts, Role::Document))))
        });
        let matrix = TermMatrix::build(&texts, Analyzer::default());
        group.bench_function("code_model_from_terms_1_thread", |b| {
            b.iter(|| pool.install(|| black_box(code.embed_matrix(&matrix, code.dimension()))))
        });
        group.bench_function("joined_index_build_1_thread", |b| {
            let mut builder = VectorIndexBuilder::new();
            builder.code_model(Some(code.clone()));
            b.iter(|| {
                pool.install(|| black_box(builder.build_corpus_from_terms(&docs, &matrix, 128)))
            })
        });
        group.bench_function("corpus_index_build_1_thread", |b| {
            let builder = VectorIndexBuilder::new();
            b.iter(|| {
                pool.install(|| black_box(builder.build_corpus_from_terms(&docs, &matrix, 128)))
            })
        });
    }
    group.finish();

    let mut builder = VectorIndexBuilder::new();
    builder.code_model(Some(code.clone()));
    let Ok((index, _)) = builder.build_corpus(&docs, 128) else { return };
    let Some(joined) = index.model_embedder() else { return };
    c.bench_function("embed_query_joined", |b| {
        b.iter(|| black_box(joined.embed(&["how are section checksums verified"], Role::Query)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
