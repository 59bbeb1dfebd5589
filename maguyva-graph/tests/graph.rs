use maguyva_core::{
    FileId, FragmentSpan, FragmentTable, Hit, Import, ImportKind, Language, LineSpan, Occurrence,
    SymbolKind,
};
use maguyva_graph::*;
use std::sync::Arc;

/// a.py: f (line 1-2) calls g; b.py: g (1-2) calls h, h (4-5); c.py: top level calls f.
fn graph() -> CallGraph {
    let mut b = GraphBuilder::new();
    for p in ["a.py", "b.py", "c.py"] {
        b.add_file(FileInfo { path: p.into(), language: Some(Language::Python), package: None });
    }
    let def = |name: &str, file: u32, start: u32| Definition {
        name: name.into(),
        qualified_name: name.into(),
        kind: SymbolKind::Function,
        file: FileId(file),
        lines: LineSpan::new(start, start + 1),
        name_line: start,
        container: None,
    };
    b.add_definition(def("f", 0, 1)).add_definition(def("g", 1, 1)).add_definition(def("h", 1, 4));
    b.add_import(
        FileId(0),
        Import { path: "b".into(), name: Some("g".into()), kind: ImportKind::Module, line: 1 },
    );
    b.add_import(
        FileId(2),
        Import { path: "a".into(), name: None, kind: ImportKind::Module, line: 1 },
    );
    b.add_import(
        FileId(2),
        Import { path: "numpy".into(), name: None, kind: ImportKind::Module, line: 2 },
    );
    let call = |name: &str, line: u32, enclosing: Option<u32>| Occurrence {
        name: name.into(),
        line,
        call: true,
        enclosing,
        count: 1,
    };
    b.add_use(FileId(0), 0, &call("g", 2, Some(0)))
        .add_use(FileId(1), 0, &call("h", 2, Some(1)))
        .add_use(FileId(2), 0, &call("f", 3, None));
    b.build().unwrap()
}

#[test]
fn callers_callees_and_unresolved_imports() {
    let g = graph();
    assert_eq!(g.callers(1).iter().map(|s| s.node).collect::<Vec<_>>(), vec![g.def_node(0)]);
    assert_eq!(g.callees(1).iter().map(|s| s.node).collect::<Vec<_>>(), vec![g.def_node(2)]);
    assert_eq!(g.callers(0)[0].node, g.file_node(FileId(2)), "top-level code calls from its file");
    assert_eq!(g.unresolved_imports().len(), 1);
    assert_eq!(g.unresolved_imports()[0].path, "numpy");
    assert!(g.edges().iter().any(|e| e.kind == EdgeKind::Imports && e.from == 0 && e.to == 1));
}

#[test]
fn impact_is_transitive_and_bounded() {
    let g = graph();
    let all = g.impact(&[g.def_node(2)], 5);
    let nodes: Vec<(u32, u32)> =
        all.iter().copied().filter(|(n, _)| g.node_definition(*n).is_some()).collect();
    assert_eq!(nodes, vec![(g.def_node(1), 1), (g.def_node(0), 2)]);
    assert!(all.contains(&(g.file_node(FileId(2)), 3)));
    assert_eq!(g.impact(&[g.def_node(2)], 1), vec![(g.def_node(1), 1)]);
}

#[test]
fn centrality_rises_with_dependents() {
    let g = graph();
    let total: f32 = (0..6).map(|n| g.pagerank(n)).sum();
    assert!((total - 1.0).abs() < 1e-5);
    assert!(
        g.pagerank(g.def_node(2)) > g.pagerank(g.def_node(0)),
        "h is depended on, f only by a file"
    );
}

#[test]
fn related_code_of_hits_is_their_neighbourhood() {
    let g = Arc::new(graph());
    let frag =
        |l: u32| FragmentSpan { lines: LineSpan::new(1, l), bytes: 0..1, context_line: None };
    let fragments =
        Arc::new(FragmentTable::from_spans(vec![vec![frag(2)], vec![frag(5)], vec![frag(3)]]));
    let r = GraphRetriever::new(g.clone(), fragments);
    let hit = Hit {
        chunk: maguyva_core::ChunkId(0),
        file: FileId(0),
        lines: LineSpan::new(1, 2),
        score: 1.0,
    };
    let related = r.related(&[hit], 5);
    // f's neighbours: g (called) and c.py's top level (caller).
    let files: Vec<u32> = related.iter().map(|h| h.file.0).collect();
    assert!(files.contains(&1) && files.contains(&2), "{files:?}");
}

#[test]
fn save_and_load_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let g = graph();
    g.save(dir.path()).unwrap();
    let defs = g.definitions().to_vec();
    let again = CallGraph::load(dir.path(), 3, defs.clone()).unwrap();
    assert_eq!(again.edges(), g.edges());
    assert_eq!(again.definitions(), g.definitions());
    assert_eq!(again.centrality(again.def_node(1)), g.centrality(g.def_node(1)));
    // Other files, fewer definitions, or one in a file that is not there.
    assert!(CallGraph::load(dir.path(), 4, defs.clone()).is_err());
    assert!(CallGraph::load(dir.path(), 3, defs[..2].to_vec()).is_err());
    let mut astray = defs;
    astray[0].file = FileId(3);
    assert!(CallGraph::load(dir.path(), 3, astray).is_err());
}

/// One file's inputs: definitions `(name, kind, nested in the one before)`
/// at a line each, imports of other files by index (past the last file:
/// unresolved), and uses `(name, call, enclosing definition, line)`.
#[derive(Debug, Clone)]
struct FileInputs {
    defs: Vec<(usize, u8, bool, u32)>,
    imports: Vec<usize>,
    uses: Vec<(usize, bool, Option<usize>, u32)>,
}

const NAMES: [&str; 6] = ["load", "Store", "parse", "run", "Config", "emit"];

fn file_inputs() -> impl proptest::strategy::Strategy<Value = FileInputs> {
    use proptest::prelude::*;
    (
        proptest::collection::vec((0..NAMES.len(), 0u8..4, any::<bool>(), 1u32..50), 0..4),
        proptest::collection::vec(0usize..6, 0..3),
        proptest::collection::vec(
            (0..NAMES.len() + 2, any::<bool>(), proptest::option::of(0usize..4), 1u32..50),
            0..6,
        ),
    )
        .prop_map(|(defs, imports, uses)| FileInputs { defs, imports, uses })
}

/// The graph of `files` (Python modules `m0.py`, `m1.py`, …), taking the
/// unchanged files' links from `previous` when given.
fn build_corpus(files: &[FileInputs], previous: Option<PreviousGraph>) -> CallGraph {
    build_corpus_telling(files, previous).0
}

/// [`build_corpus`], and whether the builder said it would reuse links.
fn build_corpus_telling(
    files: &[FileInputs],
    previous: Option<PreviousGraph>,
) -> (CallGraph, bool) {
    let mut b = GraphBuilder::new();
    for i in 0..files.len() {
        b.add_file(FileInfo {
            path: format!("m{i}.py"),
            language: Some(Language::Python),
            package: None,
        });
    }
    let mut base = 0u32;
    for (i, f) in files.iter().enumerate() {
        for (j, &(name, kind, nested, line)) in f.defs.iter().enumerate() {
            let kind =
                [SymbolKind::Function, SymbolKind::Class, SymbolKind::Constant, SymbolKind::Module]
                    [kind as usize % 4];
            b.add_definition(Definition {
                name: NAMES[name].into(),
                qualified_name: NAMES[name].into(),
                kind,
                file: FileId(i as u32),
                lines: LineSpan::new(line, line + 2),
                name_line: line,
                container: (nested && j > 0).then(|| base + j as u32 - 1),
            });
        }
        for (k, &target) in f.imports.iter().enumerate() {
            b.add_import(
                FileId(i as u32),
                Import {
                    path: format!("m{target}"),
                    name: None,
                    kind: ImportKind::Module,
                    line: k as u32 + 1,
                },
            );
        }
        for &(name, call, enclosing, line) in &f.uses {
            let name = NAMES.get(name).copied().unwrap_or("unknown_name");
            b.add_use(
                FileId(i as u32),
                0,
                &Occurrence {
                    name: name.into(),
                    line,
                    call,
                    enclosing: enclosing.filter(|&e| e < f.defs.len()).map(|e| base + e as u32),
                    count: 1,
                },
            );
        }
        base += f.defs.len() as u32;
    }
    if let Some(p) = previous {
        b.reuse(p);
    }
    let reuses = b.reuses();
    (b.build().unwrap(), reuses)
}

fn assert_same_graph(a: &CallGraph, b: &CallGraph) {
    assert_eq!(a.edges(), b.edges());
    assert_eq!(a.unresolved_imports(), b.unresolved_imports());
    let nodes = (a.file_count() + a.definition_count()) as u32;
    for n in 0..nodes {
        assert_eq!(a.pagerank(n), b.pagerank(n), "node {n}");
        assert_eq!(a.degree(n), b.degree(n), "node {n}");
    }
}

proptest::proptest! {
    /// A graph that takes the links of unchanged files from the previous
    /// one is the graph built from scratch, whether an edit keeps a file's
    /// definitions (only their lines move) or changes them.
    #[test]
    fn reused_links_give_the_graph_built_from_scratch(
        before in proptest::collection::vec(file_inputs(), 1..6),
        edits in proptest::collection::vec((0u8..4, file_inputs(), 0u32..5), 6),
    ) {
        let after: Vec<FileInputs> = before
            .iter()
            .zip(&edits)
            .map(|(old, (mode, new, shift))| match mode {
                // Unchanged.
                0 => old.clone(),
                // Same definitions, moved; new imports and uses.
                1 => FileInputs {
                    defs: old.defs.iter().map(|&(n, k, c, l)| (n, k, c, l + shift)).collect(),
                    ..new.clone()
                },
                // Same definitions, imports and uses, moved (an edit inside
                // a body that links as before).
                2 => FileInputs {
                    defs: old.defs.iter().map(|&(n, k, c, l)| (n, k, c, l + shift)).collect(),
                    uses: old.uses.iter().map(|&(n, c, e, l)| (n, c, e, l + shift)).collect(),
                    ..old.clone()
                },
                // Anything.
                _ => new.clone(),
            })
            .collect();
        let changed: Vec<bool> = edits.iter().take(after.len()).map(|e| e.0 != 0).collect();
        let old = build_corpus(&before, None);
        let dir = tempfile::tempdir().unwrap();
        old.save(dir.path()).unwrap();
        let file = CallGraph::open_file(dir.path()).unwrap();
        let previous =
            PreviousGraph::read(&file, old.definitions().to_vec(), changed.clone()).unwrap();
        let (reused, reuses) = build_corpus_telling(&after, Some(previous));
        let scratch = build_corpus(&after, None);
        assert_same_graph(&reused, &scratch);
        proptest::prop_assert_eq!(scratch.relinked_files(), after.len());
        let edited = changed.iter().filter(|&&c| c).count();
        let relinked = if reuses { edited } else { after.len() };
        proptest::prop_assert_eq!(reused.relinked_files(), relinked);
        // Edits that keep every definition relink only the edited files.
        let kept_defs = edits.iter().take(after.len()).all(|e| e.0 != 3);
        if kept_defs {
            proptest::prop_assert!(reuses);
        }
    }
}
