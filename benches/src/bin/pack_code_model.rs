//! Packs a trained model of analyzer terms (a model2vec folder written by
//! `benches/embedder/train.py`) into the code model layout that is built
//! into the library: `meta.json`, `vocab.fst`, `rows.i8` and `scales.f32`
//! (8-bit rows, one scale per row).
//!
//!     pack_code_model MODEL_DIR OUT_DIR [--dims K] [--row-map FILE] [--query-map FILE]
//!
//! The trainer's `config.json` is kept in `meta.json` as `training`.
//! `MODEL_DIR` may also be a packed model (a folder with `meta.json`).
//! With `--dims K` the model is rotated onto its `K` principal directions
//! and cut to them (`CodeModel::principal`). With `--query-map FILE` the
//! model's query map is replaced by the one in FILE (`dim * dim`
//! little-endian `f32`, row after row, in the packed model's own
//! dimensions, after any rotation), as `fit_query_map.py` writes it; the
//! description it writes beside it (`FILE.json`) is kept in `meta.json` as
//! `training.query_map_fit`. With `--row-map FILE` (the same layout, which
//! `fit_query_map.py --fit-rows` writes with the map) every row is first
//! multiplied by it (`CodeModel::with_row_map`); it needs `--query-map`,
//! since the old map does not fit the new rows.

#![forbid(unsafe_code)]

use maguyva_semantic::{CodeModel, Embedder, StaticModel};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What the command line asks for.
struct Args {
    model: PathBuf,
    out: PathBuf,
    dims: Option<usize>,
    row_map: Option<PathBuf>,
    query_map: Option<PathBuf>,
}

fn parse(args: &[String]) -> Option<Args> {
    let [model, out, rest @ ..] = args else { return None };
    let mut parsed =
        Args { model: model.into(), out: out.into(), dims: None, row_map: None, query_map: None };
    let mut rest = rest.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next()?;
        match flag.as_str() {
            "--dims" => parsed.dims = Some(value.parse().ok()?),
            "--row-map" => parsed.row_map = Some(value.into()),
            "--query-map" => parsed.query_map = Some(value.into()),
            _ => return None,
        }
    }
    // A row map without the query map fitted with it would leave queries
    // and documents in different spaces.
    (parsed.row_map.is_none() || parsed.query_map.is_some()).then_some(parsed)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(args) = parse(&args) else {
        eprintln!(
            "usage: pack_code_model MODEL_DIR OUT_DIR [--dims K] [--row-map FILE] [--query-map FILE]"
        );
        eprintln!("(--row-map needs --query-map)");
        return ExitCode::from(2);
    };
    match pack(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pack_code_model: {e}");
            ExitCode::FAILURE
        }
    }
}

fn pack(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (model, out) = (args.model.as_path(), args.out.as_path());
    let code = if model.join("meta.json").is_file() {
        CodeModel::load(model)?
    } else {
        let config: serde_json::Value =
            serde_json::from_slice(&std::fs::read(model.join("config.json"))?)?;
        StaticModel::load(model)?.to_code_model(config)?
    };
    let code = match args.dims {
        Some(k) => code.principal(k)?,
        None => code,
    };
    let code = match &args.row_map {
        Some(file) => code.with_row_map(&read_map(file)?)?,
        None => code,
    };
    let code = match &args.query_map {
        Some(file) => with_query_map(code, file)?,
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

/// `code` with the query map of `file`, and its description (`FILE.json`,
/// if there is one) in the model's training notes.
fn with_query_map(code: CodeModel, file: &Path) -> Result<CodeModel, Box<dyn std::error::Error>> {
    let map = read_map(file)?;
    let mut training = code.meta().training.clone();
    let mut note = file.as_os_str().to_owned();
    note.push(".json");
    let note = PathBuf::from(note);
    if note.is_file() {
        let fit: serde_json::Value = serde_json::from_slice(&std::fs::read(&note)?)?;
        if let serde_json::Value::Object(fields) = &mut training {
            fields.insert("query_map_fit".into(), fit);
        } else {
            training = serde_json::json!({ "before": training, "query_map_fit": fit });
        }
    }
    Ok(code.with_query_map(map)?.with_training(training))
}

/// The little-endian `f32` values of a map's file.
fn read_map(file: &Path) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    if bytes.len() % 4 != 0 {
        return Err(format!("{}: not a whole number of f32 values", file.display()).into());
    }
    Ok(bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}
