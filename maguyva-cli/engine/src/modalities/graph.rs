//! The graph modality (`maguyva-graph`) as the engine runs it: the
//! dependency graph of the corpus, from the structural modality's
//! definitions and the outlines' imports and uses of names; a refresh takes
//! the links of unchanged files from the previous graph.

use super::structural::StructuralReader;
use super::text::{engine_build, engine_open, ranking};
use maguyva_ast::{FileOutline, SymbolTable};
use maguyva_core::{
    BuildInput, Built, Error, FileId, IndexFile, Modality, ModalityPlugin, ModalityReader,
    OpenInput, Params, Result, Retriever,
};
use maguyva_graph::{
    CallGraph, Definition, FileInfo, GRAPH_FILE, GRAPH_FORMAT, GraphBuilder, GraphRetriever,
    PreviousGraph, SourceFile,
};
use std::any::Any;
use std::path::Path;
use std::sync::Arc;

/// The graph modality.
pub(crate) struct GraphModality;

/// The opened graph modality.
pub(crate) struct GraphReader(pub(crate) GraphRetriever);

/// The graph's definitions: the symbol table's, in its order. The graph
/// file does not keep them; a reader passes them back from the table.
pub(crate) fn graph_definitions(symbols: &SymbolTable) -> Vec<Definition> {
    symbols
        .iter()
        .map(|(_, s)| Definition {
            name: s.name.to_string(),
            qualified_name: s.qualified_name.to_string(),
            kind: s.kind,
            file: s.file,
            lines: s.lines,
            name_line: s.name_line,
            container: s.container,
        })
        .collect()
}

/// What the graph is built from.
struct GraphInputs<'a> {
    root: &'a Path,
    files: &'a [SourceFile<'a>],
    outlines: &'a [Option<FileOutline>],
    /// An outline not decoded, read when needed after all.
    taken: &'a dyn Fn(usize) -> FileOutline,
    symbols: &'a SymbolTable,
    previous: Option<PreviousGraph>,
    kept: &'a [Option<FileId>],
}

/// The dependency graph of the corpus.
fn build_graph(g: GraphInputs<'_>) -> Result<CallGraph> {
    let GraphInputs { root, files, outlines, taken, symbols, previous, kept } = g;
    let mut b = GraphBuilder::new();
    let kept_package = |i: usize| -> Option<Option<String>> {
        let old = (*kept.get(i)?)?;
        Some(previous.as_ref()?.declared_package(old)?.map(str::to_string))
    };
    for (i, f) in files.iter().enumerate() {
        b.add_file(FileInfo {
            path: f.path.to_string(),
            language: f.language,
            // A file kept from the previous graph declares what it did
            // there, without being read.
            package: match kept_package(i) {
                Some(package) => package,
                None => f.language.and_then(|l| maguyva_ast::declared_package(l, f.text())),
            },
        });
    }
    for m in maguyva_graph::module_roots(root, files) {
        b.add_module_root(m);
    }
    for def in graph_definitions(symbols) {
        b.add_definition(def);
    }
    if let Some(previous) = previous {
        b.reuse(previous);
    }
    // The imports and uses of a file whose outline was not decoded (its
    // links are the previous graph's) are needed only when that graph
    // cannot be reused.
    let decode_all = !b.reuses();
    let mut base = 0u32;
    for (i, o) in outlines.iter().enumerate() {
        let file = FileId(i as u32);
        let decoded;
        let o = match o {
            Some(o) => o,
            None if decode_all => {
                decoded = taken(i);
                &decoded
            }
            None => {
                base += symbols.of_file(file).count() as u32;
                continue;
            }
        };
        for imp in &o.imports {
            b.add_import(file, imp.clone());
        }
        for occ in &o.occurrences {
            b.add_use(file, base, occ);
        }
        base += o.symbols.len() as u32;
    }
    Ok(b.build()?)
}

impl ModalityPlugin for GraphModality {
    fn modality(&self) -> Modality {
        Modality::GRAPH
    }

    fn summary(&self) -> &'static str {
        "callers, callees and blast radius from the dependency graph"
    }

    fn files(&self) -> Vec<IndexFile> {
        vec![IndexFile { name: GRAPH_FILE, format: GRAPH_FORMAT, sectioned: true }]
    }

    fn component(&self, _: &(dyn Any + Send + Sync)) -> Result<String> {
        Ok(format!("v{}", GRAPH_FORMAT.current))
    }

    fn builds_on(&self) -> Vec<Modality> {
        vec![Modality::STRUCTURAL]
    }

    fn build(&self, input: &BuildInput<'_>, out: &Path) -> Result<Built> {
        let e = engine_build(input)?;
        let built = input.others.built(Modality::STRUCTURAL)?;
        let symbols = built
            .downcast_ref::<SymbolTable>()
            .ok_or_else(|| Error::InvalidQuery("the structural modality built no table".into()))?;
        let sources: Vec<SourceFile> = (input.files.iter().enumerate())
            .map(|(i, f)| SourceFile::stored(&f.path, f.language, input.content, FileId(i as u32)))
            .collect();
        let taken = |i: usize| e.taken(i, input.files, input.content);
        let graph = build_graph(GraphInputs {
            root: input.root,
            files: &sources,
            outlines: &e.parsed.outlines,
            taken: &taken,
            symbols,
            previous: e.previous_graph.lock().ok().and_then(|mut g| g.take()),
            kept: input.kept,
        })?;
        graph.save(out)?;
        Ok(Arc::new(graph))
    }

    fn open(&self, input: &OpenInput<'_>) -> Result<Arc<dyn ModalityReader>> {
        let e = engine_open(input)?;
        let structural = input.others.opened(Modality::STRUCTURAL)?;
        let table = structural
            .as_any()
            .downcast_ref::<StructuralReader>()
            .map(|r| r.0.table())
            .ok_or_else(|| super::not_the_engines(Modality::STRUCTURAL))?;
        let file = e.section(input.gen_dir, GRAPH_FILE, GRAPH_FORMAT)?;
        let graph = CallGraph::read(&file, input.files, graph_definitions(table))?;
        Ok(Arc::new(GraphReader(GraphRetriever::new(Arc::new(graph), input.fragments.clone()))))
    }
}

impl ModalityReader for GraphReader {
    fn retriever(
        &self,
        _: Params<'_>,
        engine: &(dyn Any + Send + Sync),
    ) -> Result<Box<dyn Retriever + '_>> {
        let params = ranking(engine)?.graph;
        Ok(Box::new(self.0.clone().with_params(params)))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
