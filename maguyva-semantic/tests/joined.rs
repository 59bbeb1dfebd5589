use maguyva_core::{Analyzer, TermMatrix};
use maguyva_semantic::{
    CodeModel, Embedder, Role, SearchOptions, VectorIndex, VectorIndexBuilder, Vectors,
};
use std::sync::Arc;

fn corpus() -> Vec<String> {
    super::topic_corpus(200)
}

fn joined_builder() -> VectorIndexBuilder {
    let mut b = VectorIndexBuilder::new();
    b.code_model(Some(CodeModel::builtin().expect("the built-in model reads")));
    b
}

#[test]
fn a_joined_index_serves_queries_and_round_trips() {
    let docs = corpus();
    let (index, _) = joined_builder().build_corpus(&docs, 16).expect("builds");
    assert!(index.identity().starts_with("joined:"), "{}", index.identity());
    let model = index.model_embedder().expect("the index holds its models");
    assert_eq!(model.identity(), index.identity());
    // 200 documents get one code-model dimension per four of them.
    let code_dims = maguyva_semantic::code_dimensions_for(docs.len(), 256);
    assert_eq!(code_dims, 50);
    assert_eq!(model.dimension(), index.corpus_model().map_or(0, |m| m.dimension()) + code_dims);
    let q = model.embed(&["open a connection to the server"], Role::Query).expect("embeds");
    let hits = index.search(&q, 10, SearchOptions::default()).expect("searches");
    assert!(hits.iter().all(|(i, _)| i % 4 == 0), "every hit is about sockets: {hits:?}");

    let dir = tempfile::tempdir().expect("temp dir");
    index.save(dir.path()).expect("saves");
    let again = VectorIndex::load(dir.path(), docs.len()).expect("loads");
    assert_eq!(again.model_embedder().map(|m| m.identity()), Some(index.identity().to_string()));
    assert_eq!(again.search(&q, 10, SearchOptions::default()).expect("searches"), hits);
}

#[test]
fn a_document_embedded_from_its_text_matches_its_vector_from_the_term_matrix() {
    let docs = corpus();
    let (first, _) = joined_builder().build_corpus(&docs, 16).expect("builds");
    // The code model's half: the same to the last bit either way.
    let code = CodeModel::builtin().expect("the built-in model reads");
    let matrix = TermMatrix::build(&docs, Analyzer::default());
    let texts: Vec<&str> = docs.iter().map(String::as_str).collect();
    let from_text = code.embed(&texts, Role::Document).and_then(Vectors::into_dense);
    let from_text = from_text.expect("dense vectors");
    assert!(code.embed_matrix(&matrix, 256) == Some(from_text));
    let leading = code.embed_leading(&texts, 40).and_then(Vectors::into_dense);
    let leading = leading.expect("dense vectors");
    assert!(code.embed_matrix(&matrix, 40) == Some(leading));
    // Document 5 takes document 6's text and a trailing space (the same
    // terms, another hash): a kept-model build embeds it from its text,
    // while 6 keeps the vector the full build made from the term matrix.
    // They must be the same vector, but for the corpus model's rounding
    // (its training computes its documents' vectors its own way).
    let mut edited = docs.clone();
    edited[5] = format!("{} ", docs[6]);
    let (kept, stats) =
        joined_builder().build_with_kept_model(&first, &edited).expect("builds").expect("kept");
    assert_eq!((stats.embedded, stats.reused), (1, 199));
    let q = first.model_embedder().expect("models").embed(&[docs[6].as_str()], Role::Query);
    let q = q.expect("embeds");
    let full = SearchOptions { full_precision: true, ..SearchOptions::default() };
    let hits = kept.search(&q, 2, full).expect("searches");
    let ids: Vec<u32> = hits.iter().map(|h| h.0).collect();
    assert!(ids.contains(&5) && ids.contains(&6), "{hits:?}");
    assert!((hits[0].1 - hits[1].1).abs() < 1e-5, "the same vector: {hits:?}");
}

#[test]
fn a_kept_model_is_not_used_across_code_models() {
    let docs = corpus();
    let (joined, _) = joined_builder().build_corpus(&docs, 16).expect("builds");
    let (alone, _) = VectorIndexBuilder::new().build_corpus(&docs, 16).expect("builds");
    assert!(VectorIndexBuilder::new().build_with_kept_model(&joined, &docs).expect("ok").is_none());
    assert!(joined_builder().build_with_kept_model(&alone, &docs).expect("ok").is_none());
}

#[test]
fn an_index_joined_with_a_code_model_this_program_lacks_is_refused() {
    let terms: Vec<String> = ["socket", "chart", "pars"].map(String::from).to_vec();
    let other = CodeModel::from_vectors(
        &terms,
        &[1.0, 0.0, 0.0, 1.0, 0.5, 0.5],
        2,
        Analyzer::default(),
        serde_json::Value::Null,
    )
    .expect("a valid model");
    let docs = corpus();
    let mut b = VectorIndexBuilder::new();
    b.code_model(Some(Arc::new(other)));
    let (index, _) = b.build_corpus(&docs, 8).expect("builds");
    let v =
        index.model_embedder().expect("models").embed(&["socket"], Role::Query).expect("embeds");
    assert!(
        matches!(v, Vectors::Dense { dim, .. } if dim == index.corpus_model().map_or(0, |m| m.dimension()) + 2)
    );
    let dir = tempfile::tempdir().expect("temp dir");
    index.save(dir.path()).expect("saves");
    let err = VectorIndex::load(dir.path(), docs.len()).expect_err("refused");
    assert!(err.to_string().contains("code model"), "{err}");
}
