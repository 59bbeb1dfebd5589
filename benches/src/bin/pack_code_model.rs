//! Packs a trained model of analyzer terms (a model2vec folder written by
//! `benches/embedder/train.py`) into the code model layout that is built
//! into the library: `meta.json`, `vocab.fst`, `rows.i8` and `scales.f32`
//! (8-bit rows, one scale per row).
//!
//!     pack_code_model MODEL_DIR OUT_DIR [--dims K]
//!
//! The trainer's `config.json` is kept in `meta.json` as `training`.
//! `MODEL_DIR` may also be a packed model (a folder with `meta.json`).
//! With `--dims K` the model is rotated onto its `K` principal directions
//! and cut to them (`CodeModel::principal`).

use maguyva_semantic::{CodeModel, Embedder, StaticModel};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (paths, dims) = match &args[..] {
        [model, out] => ((model, out), None),
        [model, out, flag, k] if flag == "--dims" => match k.parse::<usize>() {
            Ok(k) => ((model, out), Some(k)),
            Err(_) => return usage(),
        },
        _ => return usage(),
    };
    match pack(Path::new(paths.0), &PathBuf::from(paths.1), dims) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pack_code_model: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: pack_code_model MODEL_DIR OUT_DIR [--dims K]");
    ExitCode::from(2)
}

fn pack(model: &Path, out: &Path, dims: Option<usize>) -> Result<(), Box<dyn std::error::Error>> {
    let code = if model.join("meta.json").is_file() {
        CodeModel::load(model)?
    } else {
        let config: serde_json::Value =
            serde_json::from_slice(&std::fs::read(model.join("config.json"))?)?;
        StaticModel::load(model)?.to_code_model(config)?
    };
    let code = match dims {
        Some(k) => code.principal(k)?,
        None => code,
    };
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
