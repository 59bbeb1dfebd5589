//! The structural modality (`maguyva-ast`) as the engine runs it: the
//! symbol table of every file's definitions, made from the outlines of the
//! parse stage; a refresh copies the unchanged files' symbols as stored.

use super::text::{engine_build, engine_open, ranking};
use maguyva_ast::{FileOutline, SYMBOLS_FILE, SYMBOLS_FORMAT, StructuralRetriever, SymbolTable};
use maguyva_core::{
    Analyzer, BuildInput, Built, IndexFile, Manifest, Modality, ModalityPlugin, ModalityReader,
    OpenInput, Params, Result, Retriever,
};
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// The structural modality.
pub(crate) struct StructuralModality;

/// The opened structural modality.
pub(crate) struct StructuralReader(pub(crate) StructuralRetriever);

/// The retriever of a symbol table over the files of `manifest`.
pub(crate) fn structural_retriever(
    manifest: &Manifest,
    symbols: Arc<SymbolTable>,
    fragments: Arc<maguyva_core::FragmentTable>,
) -> StructuralRetriever {
    let paths: Vec<&str> = manifest.files.iter().map(|f| f.path.as_str()).collect();
    StructuralRetriever::new(symbols, fragments, &paths)
}

impl ModalityPlugin for StructuralModality {
    fn modality(&self) -> Modality {
        Modality::STRUCTURAL
    }

    fn summary(&self) -> &'static str {
        "definitions and signatures from tree-sitter"
    }

    fn files(&self) -> Vec<IndexFile> {
        vec![IndexFile { name: SYMBOLS_FILE, format: SYMBOLS_FORMAT, sectioned: true }]
    }

    fn component(&self, _: &(dyn Any + Send + Sync)) -> Result<String> {
        Ok(format!("v{}:{}", SYMBOLS_FORMAT.current, crate::settings::queries_hash()))
    }

    /// A refresh copies the symbols of the files whose outline it took
    /// undecoded; a previous table that cannot be copied from is not
    /// trusted, and the table is made from every outline, as a full build
    /// makes it.
    fn build(&self, input: &BuildInput<'_>, out: &Path) -> Result<Built> {
        let e = engine_build(input)?;
        let no_outline = FileOutline::default();
        let parsed = &e.parsed;
        let given: Vec<Option<&FileOutline>> = parsed
            .outlines
            .iter()
            .zip(&parsed.undecoded)
            .map(|(o, &u)| (!u).then(|| o.as_ref().unwrap_or(&no_outline)))
            .collect();
        let reusable = e.previous.as_ref().filter(|_| e.options.reuse_outlines);
        let patched = reusable
            .map(|p| SymbolTable::patched(&given, Analyzer::default(), &p.symbols, input.kept))
            .and_then(Result::ok);
        let symbols = match patched {
            Some(table) => table,
            None if reusable.is_some() => {
                let all = e.all_outlines(input.files, input.content);
                SymbolTable::build_from(
                    all.iter().map(|o| o.as_ref().unwrap_or(&no_outline)),
                    Analyzer::default(),
                )?
            }
            None => SymbolTable::build_from(
                parsed.outlines.iter().map(|o| o.as_ref().unwrap_or(&no_outline)),
                Analyzer::default(),
            )?,
        };
        symbols.save(out)?;
        Ok(Arc::new(symbols))
    }

    fn open(&self, input: &OpenInput<'_>) -> Result<Arc<dyn ModalityReader>> {
        let e = engine_open(input)?;
        let file = e.section(input.gen_dir, SYMBOLS_FILE, SYMBOLS_FORMAT)?;
        let symbols = SymbolTable::read(&file, input.files)?;
        let retriever =
            structural_retriever(&e.manifest, Arc::new(symbols), input.fragments.clone());
        Ok(Arc::new(StructuralReader(retriever)))
    }

    /// Every section, and every block of signatures and doc summaries.
    fn verify(&self, gen_dir: &Path) -> Result<()> {
        let file = maguyva_core::SectionFile::open(&gen_dir.join(SYMBOLS_FILE), SYMBOLS_FORMAT)?;
        file.verify()?;
        let manifest = Manifest::load(gen_dir)?;
        let table = SymbolTable::read(&file, manifest.files.len())?;
        Ok(table.verify(&gen_dir.join(SYMBOLS_FILE))?)
    }
}

impl ModalityReader for StructuralReader {
    fn retriever(
        &self,
        _: Params<'_>,
        engine: &(dyn Any + Send + Sync),
    ) -> Result<Box<dyn Retriever + '_>> {
        let params = ranking(engine)?.structural;
        Ok(Box::new(self.0.clone().with_params(params)))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
