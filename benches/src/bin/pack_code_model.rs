//! Packs a trained model of analyzer terms (a model2vec folder written by
//! `benches/embedder/train.py`) into the code model layout that is built
//! into the library: `meta.json`, `vocab.fst`, `rows.i8` and `scales.f32`
//! (8-bit rows, one scale per row).
//!
//!     pack_code_model MODEL_DIR OUT_DIR
//!
//! The trainer's `config.json` is kept in `meta.json` as `training`.

use maguyva_semantic::{CodeModel, Embedder, StaticModel};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [model, out] = &args[..] else {
        eprintln!("usage: pack_code_model MODEL_DIR OUT_DIR");
        return ExitCode::from(2);
    };
    match pack(model, out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pack_code_model: {e}");
            ExitCode::FAILURE
        }
    }
}

fn pack(model: &std::path::Path, out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(model.join("config.json"))?)?;
    let code = StaticModel::load(model)?.to_code_model(config)?;
    code.write(out)?;
    let back = CodeModel::load(out)?;
    eprintln!(
        "{}: {} terms of {} dimensions, identity {}",
        out.display(),
        back.meta().terms,
        back.meta().dim,
        back.identity()
    );
    Ok(())
}
