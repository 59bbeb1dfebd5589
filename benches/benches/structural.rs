//! The structural modality: parsing a file and extracting its outline
//! (definitions, imports and the names it uses), per language, on the
//! fixture projects of `maguyva-ast`. The query of each language is compiled
//! before measuring, as an index build does once per language.

#![forbid(unsafe_code)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use maguyva_core::{FileId, Language};
use std::hint::black_box;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn bench(c: &mut Criterion) {
    maguyva_ast::check_queries().expect("queries compile");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../maguyva-ast/tests/fixtures");
    let mut paths = Vec::new();
    files_under(&fixtures, &mut paths);
    let mut by_language: Vec<(Language, Vec<String>)> = Vec::new();
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let Some(language) = Language::detect(&name, &text) else { continue };
        match by_language.iter_mut().find(|(l, _)| *l == language) {
            Some((_, texts)) => texts.push(text),
            None => by_language.push((language, vec![text])),
        }
    }
    by_language.sort_by_key(|(l, _)| format!("{l:?}"));
    let mut group = c.benchmark_group("structural/outline");
    for (language, texts) in &by_language {
        // Each file ten times over, so that a sample is more than a few
        // microseconds.
        let texts: Vec<String> = texts.iter().map(|t| t.repeat(10)).collect();
        group.throughput(Throughput::Bytes(texts.iter().map(|t| t.len() as u64).sum()));
        group.bench_function(format!("{language:?}").to_lowercase(), |b| {
            b.iter(|| {
                for text in &texts {
                    black_box(maguyva_ast::outline(*language, black_box(text), FileId(0)));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
