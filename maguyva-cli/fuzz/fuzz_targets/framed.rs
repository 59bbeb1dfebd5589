//! The framed single-record files (the manifest, the fragment table) on
//! arbitrary bytes, read from disk as an index open reads them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use maguyva_core::{FragmentTable, MANIFEST_FILE, Manifest};
use std::sync::OnceLock;

fuzz_target!(|data: &[u8]| {
    let Some((which, bytes)) = data.split_first() else { return };
    // One folder for the whole run: a new one per input costs more than the
    // reading under test.
    static DIR: OnceLock<Option<tempfile::TempDir>> = OnceLock::new();
    let Some(dir) = DIR.get_or_init(|| tempfile::tempdir().ok()) else { return };
    if which % 2 == 0 {
        if std::fs::write(dir.path().join(MANIFEST_FILE), bytes).is_ok()
            && let Ok(m) = Manifest::load(dir.path())
        {
            let _ = m.quick_changes();
        }
    } else {
        let path = dir.path().join(maguyva_engine::FRAGMENTS_FILE);
        if std::fs::write(&path, bytes).is_ok()
            && let Ok(t) =
                maguyva_core::store::load::<FragmentTable>(&path, maguyva_engine::FRAGMENTS_FORMAT)
        {
            let _ = t.is_consistent();
        }
    }
});
