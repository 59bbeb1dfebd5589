//! The model2vec loader on an arbitrary weights file (model.safetensors)
//! beside a valid tokenizer and configuration, then used to embed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use maguyva_semantic::{Embedder, Role, StaticModel};
use std::sync::OnceLock;

const TOKENIZER: &str = include_str!("../seeds/tokenizer.json");
const CONFIG: &str = r#"{"normalize": true}"#;

/// A folder for the whole run, holding the tokenizer and configuration.
fn folder() -> Option<&'static tempfile::TempDir> {
    static DIR: OnceLock<Option<tempfile::TempDir>> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().ok()?;
        std::fs::write(dir.path().join("tokenizer.json"), TOKENIZER).ok()?;
        std::fs::write(dir.path().join("config.json"), CONFIG).ok()?;
        Some(dir)
    })
    .as_ref()
}

fuzz_target!(|data: &[u8]| {
    let Some(dir) = folder() else { return };
    if std::fs::write(dir.path().join("model.safetensors"), data).is_err() {
        return;
    }
    let Ok(model) = StaticModel::load(dir.path()) else { return };
    let _ = model.embed(&["retry the request", ""], Role::Query);
});
