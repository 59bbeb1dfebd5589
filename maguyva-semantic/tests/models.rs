use maguyva_semantic::{
    Embedder, Role, SEMANTIC_FILE, SearchOptions, StaticModel, VectorIndex, VectorIndexBuilder,
    Vectors, document_hash,
};
use std::path::Path;

/// Writes a model2vec-format model: a word-level tokenizer over `vocab` and
/// an embeddings tensor of `rows` in the given dtype.
fn write_model(
    dir: &Path,
    vocab: &[&str],
    rows: &[Vec<f32>],
    dtype: &str,
    extra: &[(&str, Vec<f32>)],
) {
    let vocab_json: serde_json::Map<String, serde_json::Value> =
        vocab.iter().enumerate().map(|(i, w)| (w.to_string(), serde_json::json!(i))).collect();
    let tokenizer = serde_json::json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": null, "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab_json, "unk_token": "[UNK]"}
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).unwrap();
    std::fs::write(dir.join("config.json"), r#"{"normalize": true}"#).unwrap();
    let dim = rows[0].len();
    let mut data: Vec<u8> = Vec::new();
    let mut header = serde_json::Map::new();
    let encode = |values: &[f32], dtype: &str| -> Vec<u8> {
        match dtype {
            "F32" => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            "I8" => values.iter().map(|v| (*v as i8) as u8).collect(),
            "F16" => values
                .iter()
                .flat_map(|v| {
                    // Exact for the small integers used here.
                    let bits = v.to_bits();
                    let sign = ((bits >> 16) & 0x8000) as u16;
                    let exp = ((bits >> 23) & 0xff) as i32;
                    let h = if *v == 0.0 {
                        sign
                    } else {
                        sign | (((exp - 127 + 15) as u16) << 10) | ((bits >> 13) & 0x3ff) as u16
                    };
                    h.to_le_bytes()
                })
                .collect(),
            _ => unreachable!("test dtypes"),
        }
    };
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    let bytes = encode(&flat, dtype);
    header.insert("embeddings".into(), serde_json::json!({"dtype": dtype, "shape": [rows.len(), dim], "data_offsets": [0, bytes.len()]}));
    data.extend(bytes);
    for (name, values) in extra {
        let start = data.len();
        data.extend(values.iter().flat_map(|v| v.to_le_bytes()));
        header.insert(name.to_string(), serde_json::json!({"dtype": "F32", "shape": [values.len()], "data_offsets": [start, data.len()]}));
    }
    let header = serde_json::Value::Object(header).to_string();
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend(header.as_bytes());
    file.extend(data);
    std::fs::write(dir.join("model.safetensors"), file).unwrap();
}

fn dense(v: Vectors) -> Vec<f32> {
    match v {
        Vectors::Dense { data, .. } => data,
        Vectors::Binary { .. } => panic!("dense expected"),
    }
}

#[test]
fn a_static_model_embeds_the_normalized_mean_of_its_tokens() {
    let vocab = ["[UNK]", "open", "socket", "draw"];
    let rows = vec![vec![0.0, 0.0], vec![2.0, 0.0], vec![0.0, 2.0], vec![-4.0, 0.0]];
    for dtype in ["F32", "F16", "I8"] {
        let dir = tempfile::tempdir().unwrap();
        write_model(dir.path(), &vocab, &rows, dtype, &[]);
        let m = StaticModel::load(dir.path()).unwrap();
        assert_eq!(m.dimension(), 2);
        let v = dense(m.embed(&["Open SOCKET", "draw"], Role::Document).unwrap());
        let s = std::f32::consts::FRAC_1_SQRT_2;
        assert!((v[0] - s).abs() < 1e-5 && (v[1] - s).abs() < 1e-5, "{dtype}: {v:?}");
        assert!((v[2] + 1.0).abs() < 1e-6, "{dtype}");
        assert!(m.identity().starts_with("model2vec:"));
    }
}

#[test]
fn token_weights_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = ["[UNK]", "open", "socket"];
    let rows = vec![vec![0.0, 0.0], vec![1.0, 0.0], vec![0.0, 1.0]];
    write_model(dir.path(), &vocab, &rows, "F32", &[("weights", vec![0.0, 3.0, 1.0])]);
    let m = StaticModel::load(dir.path()).unwrap();
    let v = dense(m.embed(&["open socket"], Role::Query).unwrap());
    assert!(v[0] > 2.9 * v[1], "{v:?}");
}

#[test]
fn missing_and_damaged_model_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = StaticModel::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("model.safetensors is missing"), "{err}");
    write_model(dir.path(), &["[UNK]", "a"], &[vec![0.0], vec![1.0]], "F32", &[]);
    std::fs::write(dir.path().join("model.safetensors"), b"\x10\0\0\0\0\0\0\0{broken").unwrap();
    assert!(StaticModel::load(dir.path()).is_err());
}

#[test]
fn unchanged_documents_are_not_embedded_again() {
    let dir = tempfile::tempdir().unwrap();
    let vocab = ["[UNK]", "open", "socket", "draw", "chart"];
    let rows = vec![
        vec![0.0, 0.0, 0.0],
        vec![1.0, 0.0, 0.0],
        vec![0.9, 0.1, 0.0],
        vec![0.0, 0.0, 1.0],
        vec![0.0, 0.1, 0.9],
    ];
    write_model(dir.path(), &vocab, &rows, "F32", &[]);
    let m = StaticModel::load(dir.path()).unwrap();
    let builder = VectorIndexBuilder::new();
    let (first, stats) = builder.build(&m, &["open socket", "draw chart"], None).unwrap();
    assert_eq!((stats.embedded, stats.reused), (2, 0));
    let (second, stats) =
        builder.build(&m, &["open socket", "draw chart", "draw"], Some(&first)).unwrap();
    assert_eq!((stats.embedded, stats.reused), (1, 2));
    let q = m.embed(&["socket"], Role::Query).unwrap();
    assert_eq!(second.search(&q, 1, SearchOptions::default()).unwrap()[0].0, 0);
}

fn corpus() -> Vec<String> {
    super::topic_corpus(400)
}

#[test]
fn exact_scan_and_hnsw_agree_and_survive_a_round_trip() {
    let docs = corpus();
    let (scan, _) = VectorIndexBuilder::new().build_corpus(&docs, 16).unwrap();
    let (hnsw, _) = VectorIndexBuilder::new().hnsw_threshold(0).build_corpus(&docs, 16).unwrap();
    assert!(!scan.has_hnsw() && hnsw.has_hnsw());
    let model = scan.corpus_model().unwrap();
    let q = model.embed(&["connect to the host port"], Role::Query).unwrap();
    let a = scan.search(&q, 10, SearchOptions::default()).unwrap();
    let b = hnsw.search(&q, 10, SearchOptions::default()).unwrap();
    // Every hit is about sockets (documents 0, 4, 8, ...).
    assert!(a.iter().all(|(i, _)| i % 4 == 0), "{a:?}");
    assert!(b.iter().all(|(i, _)| i % 4 == 0), "{b:?}");

    let dir = tempfile::tempdir().unwrap();
    hnsw.save(dir.path()).unwrap();
    let again = VectorIndex::load(dir.path(), docs.len()).unwrap();
    assert!(again.has_hnsw());
    assert_eq!(again.search(&q, 10, SearchOptions::default()).unwrap(), b);
    assert!(VectorIndex::load(dir.path(), docs.len() + 1).is_err());
    // A damaged graph file is caught by its checksum.
    let graph = dir.path().join("semantic.hnsw.graph");
    let mut bytes = std::fs::read(&graph).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&graph, bytes).unwrap();
    assert!(
        VectorIndex::load(dir.path(), docs.len()).unwrap_err().to_string().contains("checksum")
    );
}

#[test]
fn rescoring_and_full_precision_rank_by_cosine() {
    let docs = corpus();
    // Codes even for this small corpus, so that they are what is searched.
    let (index, _) = VectorIndexBuilder::new().dense_scan_limit(0).build_corpus(&docs, 16).unwrap();
    let model = index.corpus_model().unwrap();
    let q = model.embed(&["render the chart legend"], Role::Query).unwrap();
    for options in [
        SearchOptions::default(),
        SearchOptions { rescore: false, ..SearchOptions::default() },
        SearchOptions { full_precision: true, ..SearchOptions::default() },
    ] {
        let hits = index.search(&q, 5, options).unwrap();
        assert_eq!(hits.len(), 5);
        assert!(hits.iter().all(|(i, _)| i % 4 == 1), "{options:?}: {hits:?}");
        assert!(hits.windows(2).all(|w| w[0].1 >= w[1].1));
    }
}

#[test]
fn a_kept_model_copies_unchanged_documents_whose_text_it_need_not_read() {
    let docs = corpus();
    let (first, _) = VectorIndexBuilder::new().build_corpus(&docs, 16).unwrap();
    let mut edited = docs.clone();
    edited[5] = "fn socket_host() { connect port timeout }".into();
    edited.push("fn legend_axis() { render pixel }".into());
    let builder = VectorIndexBuilder::new();
    let (full, stats) = builder.build_with_kept_model(&first, &edited).unwrap().unwrap();
    assert_eq!((stats.embedded, stats.reused), (2, 399));
    // Given the hashes, the unchanged documents' texts are not read.
    let hashes: Vec<u64> = edited.iter().map(|d| document_hash(d)).collect();
    let sparse: Vec<String> = (edited.iter().enumerate())
        .map(|(i, d)| if i == 5 || i >= docs.len() { d.clone() } else { String::new() })
        .collect();
    let (hashed, _) =
        builder.build_with_kept_model_hashed(&first, &sparse, &hashes).unwrap().unwrap();
    let saved = |index: &VectorIndex| {
        let dir = tempfile::tempdir().unwrap();
        index.save(dir.path()).unwrap();
        std::fs::read(dir.path().join(SEMANTIC_FILE)).unwrap()
    };
    assert!(saved(&full) == saved(&hashed));
    assert!(builder.build_with_kept_model_hashed(&first, &sparse, &hashes[1..]).is_err());
}

#[test]
fn a_small_index_has_no_codes_and_ranks_by_cosine() {
    let docs = corpus();
    let (small, _) = VectorIndexBuilder::new().build_corpus(&docs, 16).unwrap();
    let (coded, _) = VectorIndexBuilder::new().dense_scan_limit(0).build_corpus(&docs, 16).unwrap();
    let saved = |index: &VectorIndex| {
        let dir = tempfile::tempdir().unwrap();
        index.save(dir.path()).unwrap();
        (std::fs::read(dir.path().join(SEMANTIC_FILE)).unwrap(), dir)
    };
    let ((small_bytes, small_dir), (coded_bytes, _)) = (saved(&small), saved(&coded));
    assert_eq!(small.code_bits(), 0);
    assert_eq!(coded.code_bits(), 4 * small.corpus_model().unwrap().dimension());
    assert!(coded_bytes.len() > small_bytes.len());
    let model = small.corpus_model().unwrap();
    let q = model.embed(&["evict the cache entry"], Role::Query).unwrap();
    let full = SearchOptions { full_precision: true, ..SearchOptions::default() };
    let hits = small.search(&q, 10, SearchOptions::default()).unwrap();
    assert_eq!(hits, coded.search(&q, 10, full).unwrap());
    assert!(hits.iter().all(|(i, _)| i % 4 == 3), "{hits:?}");
    let again = VectorIndex::load(small_dir.path(), docs.len()).unwrap();
    assert_eq!(again.search(&q, 10, SearchOptions::default()).unwrap(), hits);
    // A refresh that would cross the limit either way is a full build.
    let mut with_codes = VectorIndexBuilder::new();
    with_codes.dense_scan_limit(0);
    assert!(with_codes.build_with_kept_model(&small, &docs).unwrap().is_none());
    assert!(VectorIndexBuilder::new().build_with_kept_model(&coded, &docs).unwrap().is_none());
    assert!(with_codes.build_with_kept_model(&coded, &docs).unwrap().is_some());
}

/// Four files of four fragments: three on a file's topic and one generic
/// (`value result`), so that only its file tells what the generic one is
/// about. Returns the documents and each one's file.
fn files_with_a_generic_fragment() -> (Vec<String>, Vec<u32>) {
    let topical = super::topic_corpus(48);
    let (mut docs, mut files) = (Vec::new(), Vec::new());
    for file in 0..4u32 {
        for k in 0..3 {
            docs.push(topical[(k * 4 + file as usize) % 48].clone());
            files.push(file);
        }
        docs.push(format!("fn helper_{file}() {{ value result value }}"));
        files.push(file);
    }
    (docs, files)
}

#[test]
fn a_fragment_takes_in_its_file_so_a_generic_one_is_found_by_its_files_topic() {
    let (docs, files) = files_with_a_generic_fragment();
    let query = "connect to the socket host port";
    let rank_of_generic = |with_files: bool| {
        let mut b = VectorIndexBuilder::new();
        if with_files {
            b.files(Some(files.clone().into()));
        }
        let (index, _) = b.build_corpus(&docs, 8).unwrap();
        let q = index.model_embedder().unwrap().embed(&[query], Role::Query).unwrap();
        let hits = index.search(&q, docs.len(), SearchOptions::default()).unwrap();
        let at = |doc: u32| hits.iter().position(|h| h.0 == doc).unwrap();
        // File 0 is about sockets; document 3 is its generic fragment, 7
        // the generic fragment of the file about charts.
        (at(3), at(7))
    };
    let (alone_socket, _) = rank_of_generic(false);
    let (with_socket, with_chart) = rank_of_generic(true);
    assert!(
        with_socket < with_chart,
        "the socket file's helper ranks first: {with_socket} {with_chart}"
    );
    assert!(with_socket < alone_socket, "and higher than on its own: {with_socket} {alone_socket}");
}

#[test]
fn a_changed_fragment_makes_its_whole_file_embedded_again() {
    let (docs, files) = files_with_a_generic_fragment();
    let mut b = VectorIndexBuilder::new();
    b.files(Some(files.clone().into()));
    let (first, _) = b.build_corpus(&docs, 8).unwrap();
    let mut edited = docs.clone();
    edited[5] = "fn chart_more() { axis legend }".into();
    let (kept, stats) = b.build_with_kept_model(&first, &edited).unwrap().unwrap();
    // File 1 (documents 4 to 7) is embedded again, the other three copied.
    assert_eq!((stats.embedded, stats.reused), (4, 12));
    let hashes = b.document_hashes(&edited).unwrap();
    assert_eq!(kept.document_hashes(), &hashes[..]);
    assert_eq!(&hashes[8..], &first.document_hashes()[8..]);
    assert_ne!(hashes[4], first.document_hashes()[4], "an unchanged fragment of the changed file");
    // The same with a model that is not learned from the corpus.
    let dir = tempfile::tempdir().unwrap();
    let vocab = ["[UNK]", "socket", "chart", "value", "axis"];
    let rows = vec![
        vec![0.0, 0.0, 0.0],
        vec![1.0, 0.0, 0.0],
        vec![0.0, 1.0, 0.0],
        vec![0.0, 0.0, 1.0],
        vec![0.0, 0.9, 0.1],
    ];
    write_model(dir.path(), &vocab, &rows, "F32", &[]);
    let m = StaticModel::load(dir.path()).unwrap();
    let (first, _) = b.build(&m, &docs, None).unwrap();
    let (_, stats) = b.build(&m, &edited, Some(&first)).unwrap();
    assert_eq!((stats.embedded, stats.reused), (4, 12));
    // Files that are not the documents' are refused.
    b.files(Some(files[1..].to_vec().into()));
    assert!(b.build_corpus(&docs, 8).is_err());
    assert!(b.document_hashes(&docs).is_err());
}

#[test]
fn an_index_records_its_file_context_and_is_not_reused_without_it() {
    let (docs, files) = files_with_a_generic_fragment();
    let mut b = VectorIndexBuilder::new();
    b.files(Some(files.into()));
    let (with, _) = b.build_corpus(&docs, 8).unwrap();
    let dir = tempfile::tempdir().unwrap();
    with.save(dir.path()).unwrap();
    let again = VectorIndex::load(dir.path(), docs.len()).unwrap();
    assert_eq!(again.document_hashes(), with.document_hashes());
    // A builder that does not take in files does not copy these vectors.
    assert!(VectorIndexBuilder::new().build_with_kept_model(&again, &docs).unwrap().is_none());
    b.file_context(0.0);
    assert!(b.build_with_kept_model(&again, &docs).unwrap().is_none());
}
