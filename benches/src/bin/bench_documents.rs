//! Writes a labelled benchmark as the semantic modality sees it, for
//! `benches/embedder/fit_query_map.py` to fit the code model's maps on:
//! the vectors the default (`joined`) embedder is made of, for every
//! fragment and every query, with the files each query is labelled with.
//!
//!     bench_documents BENCH_DIR CHECKOUTS INDEX_ROOT OUT_DIR [--model DIR]
//!
//! The code model is the built-in one, or the packed model in DIR
//! (`pack_code_model`'s output); its query map is not used: the questions'
//! vectors are written as they are before it.
//!
//! For each repository with a checkout, it builds the index with default
//! settings (under INDEX_ROOT, removed after) and writes two files:
//!
//! - `NAME.json`: `repo`, `language`, `files` (paths), `fragment_files` (each
//!   fragment's file, an index into `files`), `corpus_dim`, `code_dim`,
//!   `code_dims_joined` (the code model's dimensions the joined embedder
//!   keeps for this repository) and `queries` (`{"category", "labels"}`,
//!   labelled files as indexes into `files`; a query none of whose labels is
//!   a file of the index is left out).
//! - `NAME.f32`: little-endian `f32`, four matrices row after row: the
//!   fragments' corpus-model vectors (`corpus_dim` each), their code-model
//!   vectors (`code_dim`, unit length, no query map), then the queries'
//!   corpus-model vectors and their code-model vectors before the query map
//!   (the sum of their terms' rows, unit length).
//!
//! A fragment's text is the one the index embeds (`semantic_text`: its
//! file's path, then its document).

#![forbid(unsafe_code)]

use anyhow::Context;
use maguyva_core::{IndexDir, NoProgress, TermMatrix};
use maguyva_engine::benchmark::{Benchmark, path_matches};
use maguyva_engine::{IndexSettings, build_index, semantic_text};
use maguyva_semantic::{
    CodeModel, CorpusModel, DEFAULT_CORPUS_DIMENSIONS, Embedder, Role, code_dimensions_for,
};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (paths, model) = match &args[..] {
        [bench, checkouts, index_root, out] => ([bench, checkouts, index_root, out], None),
        [bench, checkouts, index_root, out, flag, dir] if flag == "--model" => {
            ([bench, checkouts, index_root, out], Some(Path::new(dir)))
        }
        _ => {
            eprintln!(
                "usage: bench_documents BENCH_DIR CHECKOUTS INDEX_ROOT OUT_DIR [--model DIR]"
            );
            return ExitCode::from(2);
        }
    };
    let [bench, checkouts, index_root, out] = paths.map(Path::new);
    match run(bench, checkouts, index_root, out, model) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_documents: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    bench: &Path,
    checkouts: &Path,
    index_root: &Path,
    out: &Path,
    model: Option<&Path>,
) -> anyhow::Result<()> {
    let bench = Benchmark::load(bench)?;
    std::fs::create_dir_all(out)?;
    let code = match model {
        Some(dir) => std::sync::Arc::new(CodeModel::load(dir)?),
        None => CodeModel::builtin()?,
    };
    let analyzer = code.analyzer();
    let settings = IndexSettings::default();
    for repo in &bench.repos {
        let prefix = repo.spec.root_prefix();
        let checkout = checkouts.join(&repo.spec.name);
        let root = if prefix.is_empty() { checkout } else { checkout.join(prefix) };
        if !root.is_dir() {
            eprintln!("{}: no checkout, left out", repo.spec.name);
            continue;
        }
        let dir = IndexDir::new(index_root.join(&repo.spec.name));
        let (index, _) = build_index(&root, &dir, &settings, &NoProgress)?;
        let paths: Vec<&str> = index.manifest.files.iter().map(|f| f.path.as_str()).collect();
        let documents = index.content.fragment_documents(&index.fragments);
        let files: Vec<usize> = index.fragments.iter().map(|(_, f)| f.file.index()).collect();
        let texts: Vec<String> = (files.iter().zip(&documents))
            .map(|(&f, d)| semantic_text(paths.get(f).copied().unwrap_or(""), d))
            .collect();
        let matrix = TermMatrix::build(&texts, analyzer);
        let (corpus, corpus_vectors) =
            CorpusModel::train_from_terms(&matrix, DEFAULT_CORPUS_DIMENSIONS)?;
        let code_vectors = code
            .embed_matrix(&matrix, code.dimension())
            .context("the code model's analyzer is not the index's")?;
        let mut queries = Vec::new();
        let mut asked: Vec<&str> = Vec::new();
        for task in &repo.tasks {
            let labels: Vec<usize> = (paths.iter().enumerate())
                .filter(|(_, p)| task.labels.iter().any(|l| path_matches(p, l)))
                .map(|(i, _)| i)
                .collect();
            if labels.is_empty() {
                continue;
            }
            asked.push(task.query.as_str());
            queries.push(json!({"category": task.category, "labels": labels}));
        }
        let query_corpus = corpus.embed(&asked, Role::Query)?.into_dense()?;
        let query_code = code.embed_leading(&asked, code.dimension())?.into_dense()?;
        let name = &repo.spec.name;
        let meta = json!({
            "repo": name,
            "language": repo.spec.language,
            "files": paths,
            "fragment_files": files,
            "corpus_dim": corpus.dimension(),
            "code_dim": code.dimension(),
            "code_dims_joined": code_dimensions_for(files.len(), code.dimension()),
            "queries": queries,
        });
        std::fs::write(out.join(format!("{name}.json")), serde_json::to_vec(&meta)?)?;
        let mut floats =
            std::io::BufWriter::new(std::fs::File::create(out.join(format!("{name}.f32")))?);
        for x in [&corpus_vectors, &code_vectors, &query_corpus, &query_code].into_iter().flatten()
        {
            floats.write_all(&x.to_le_bytes())?;
        }
        floats.flush()?;
        eprintln!("{name}: {} fragments, {} queries", files.len(), queries.len());
        drop(index);
        let _ = std::fs::remove_dir_all(dir.path());
    }
    Ok(())
}
