//! The first build inside a tree creates the index folder in its root just
//! before walking it; the index it writes must still tell, without a walk,
//! that nothing changed since.

use maguyva_core::{IndexDir, NoProgress};
use maguyva_engine::{BuildOptions, IndexSettings, build_index_with, default_index_dir};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Sets a path's modification time an hour back, as if written long ago.
fn age(path: &Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::open(path).unwrap().set_modified(old).unwrap();
}

#[test]
fn a_first_build_in_the_root_leaves_guards_that_hold() {
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn retry() {}\n").unwrap();
    std::fs::write(root.join("app.py"), "def main():\n    pass\n").unwrap();
    for p in [root.join("src/lib.rs"), root.join("app.py"), root.join("src"), root.to_path_buf()] {
        age(&p);
    }
    let settings = IndexSettings {
        embedder: maguyva_engine::EmbedderChoice::builtin(),
        ..IndexSettings::default()
    };
    let dir = IndexDir::new(default_index_dir(root));
    let (index, _) =
        build_index_with(root, &dir, &settings, BuildOptions::FULL, &NoProgress).unwrap();
    let changes = index.manifest.quick_changes();
    assert_eq!(changes.map(|c| c.is_empty()), Some(true), "the guards must hold, with no change");
}

/// Files with the same text are parsed once; each copy still has its own
/// symbols, in its own file, as a parse of it alone gives them.
#[test]
fn copies_of_a_file_have_their_own_symbols() {
    let tree = tempfile::tempdir().unwrap();
    let text = "/// Retries a call.\npub fn retry() {}\n\npub struct Backoff;\n";
    for path in ["src/lib.rs", "vendor/copy/src/lib.rs", "zz/lib.rs"] {
        let path = tree.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::write(tree.path().join("src/other.rs"), "pub fn other() {}\n").unwrap();
    let settings = maguyva_engine::IndexSettings::default();
    let dir = maguyva_core::IndexDir::new(tree.path().join(".maguyva"));
    let (index, report) =
        maguyva_engine::build_index(tree.path(), &dir, &settings, &maguyva_core::NoProgress)
            .unwrap();
    assert_eq!(report.parsed_files, 4);
    let symbols = index.symbols().unwrap();
    for (i, file) in index.manifest.files.iter().enumerate() {
        let id = maguyva_core::FileId(i as u32);
        let alone = maguyva_ast::outline(maguyva_core::Language::Rust, text, id);
        let got: Vec<maguyva_ast::Symbol> =
            symbols.of_file(id).filter_map(|(s, _)| symbols.symbol(s)).collect();
        if file.path.ends_with("other.rs") {
            assert_eq!(got.len(), 1);
            continue;
        }
        let base = symbols.of_file(id).next().map_or(0, |(s, _)| s.0);
        let want: Vec<maguyva_ast::Symbol> = alone
            .symbols
            .into_iter()
            .map(|mut s| {
                s.container = s.container.map(|c| c + base);
                s
            })
            .collect();
        assert_eq!(got, want, "{}", file.path);
    }
}

/// An explicit embedder is kept by later runs; an index from before the
/// code model, whose `corpus:N` was the default, takes today's default.
#[test]
fn recorded_embedders_are_kept_and_the_old_default_is_upgraded() {
    use maguyva_engine::EmbedderChoice;
    let tree = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("app.py"), "def main():\n    pass\n").unwrap();
    let dir = IndexDir::new(tree.path().join(".maguyva"));
    for choice in [EmbedderChoice::builtin(), EmbedderChoice::Corpus { dimensions: 64 }] {
        let settings = IndexSettings { embedder: choice.clone(), ..IndexSettings::default() };
        build_index_with(tree.path(), &dir, &settings, BuildOptions::FULL, &NoProgress).unwrap();
        assert_eq!(IndexSettings::recorded(&dir).map(|s| s.embedder), Some(choice));
    }
    // The same index as an earlier version recorded it.
    let gen_dir = dir.current().unwrap().unwrap();
    let mut manifest = maguyva_core::Manifest::load(&gen_dir).unwrap();
    manifest.components.insert("semantic".into(), "v6:corpus-lsa:v1:64:hnsw>=500000".into());
    manifest.save(&gen_dir).unwrap();
    assert_eq!(
        IndexSettings::recorded(&dir).map(|s| s.embedder),
        Some(EmbedderChoice::Joined { dimensions: 64 })
    );
}
