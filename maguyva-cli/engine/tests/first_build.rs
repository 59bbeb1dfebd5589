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
