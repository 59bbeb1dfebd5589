//! Every sectioned index file reader on arbitrary bytes: the text index,
//! the symbol table, the graph and the semantic index, each then used the
//! way a search uses it. Input: which reader, the file and fragment (or
//! definition) counts the reader checks against, then the file's bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use maguyva_core::{FragmentSpan, FragmentTable, LineSpan, SectionFile};
use maguyva_semantic::{Role, SearchOptions, VectorIndex};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let [which, files, parts, bytes @ ..] = data else { return };
    let (files, parts) = (usize::from(*files), usize::from(*parts));
    let path = Path::new("fuzz.mgv");
    match which % 4 {
        0 => {
            let Ok(file) =
                SectionFile::from_bytes(path, bytes.to_vec(), maguyva_trigram::TEXT_FORMAT)
            else {
                return;
            };
            let Ok(text) = maguyva_trigram::TextIndex::read(&file, files, parts) else { return };
            let _ = text.files_possibly_containing("retry");
            let _ = text.files_possibly_containing("ab");
            // One fragment per line of one file, as many as the index says.
            let mut spans = vec![Vec::new(); files.max(1)];
            spans[0] = (0..parts)
                .map(|i| FragmentSpan {
                    lines: LineSpan::new(i as u32 + 1, i as u32 + 1),
                    bytes: i..i + 1,
                    context_line: None,
                })
                .collect();
            let fragments = FragmentTable::from_spans(spans);
            let _ = text.keyword(&fragments, "retry the request", Default::default(), 10);
        }
        1 => {
            let Ok(file) =
                SectionFile::from_bytes(path, bytes.to_vec(), maguyva_ast::SYMBOLS_FORMAT)
            else {
                return;
            };
            let Ok(table) = maguyva_ast::SymbolTable::read(&file, files) else { return };
            for (id, s) in table.iter() {
                let _ = (s.name.len(), s.qualified_name.len());
                let _ = (table.signature(id).len(), table.doc(id).len());
            }
            let _ = table.by_normalized_name("retry").count();
            let _ = (table.by_name_word("retri").len(), table.by_doc_word("retri").len());
            for i in 0..table.len() as u32 {
                let _ = table.name_tokens(maguyva_core::SymbolId(i));
            }
        }
        2 => {
            let Ok(file) =
                SectionFile::from_bytes(path, bytes.to_vec(), maguyva_graph::GRAPH_FORMAT)
            else {
                return;
            };
            let _ = maguyva_graph::CallGraph::read_file_centrality(&file, files);
            // `parts` definitions, each in a file the count allows (or
            // file 0, refused when there are no files), nested in the one
            // before.
            let definitions = (0..parts)
                .map(|i| maguyva_graph::Definition {
                    name: format!("d{i}"),
                    qualified_name: format!("m.d{i}"),
                    kind: maguyva_core::SymbolKind::Function,
                    file: maguyva_core::FileId((i % files.max(1)) as u32),
                    lines: LineSpan::new(1, 2),
                    name_line: 1,
                    container: i.checked_sub(1).map(|c| c as u32),
                })
                .collect();
            let Ok(graph) = maguyva_graph::CallGraph::read(&file, files, definitions) else {
                return;
            };
            let _ = graph.file_centrality();
            let _ = graph.definitions().len();
        }
        _ => {
            let Ok(file) =
                SectionFile::from_bytes(path, bytes.to_vec(), maguyva_semantic::SEMANTIC_FORMAT)
            else {
                return;
            };
            let Ok(index) = VectorIndex::read(&file, Path::new("."), parts) else { return };
            let Some(model) = index.model_embedder() else { return };
            let Ok(query) = model.embed(&["retry the request"], Role::Query) else { return };
            let _ = index.search(&query, 10, SearchOptions::default());
        }
    }
});
