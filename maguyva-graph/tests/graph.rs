use maguyva_core::{FileId, FragmentSpan, FragmentTable, Hit, ImportKind, Language, LineSpan};
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
        kind: DefKind::Callable,
        file: FileId(file),
        lines: LineSpan::new(start, start + 1),
        name_line: start,
        container: None,
    };
    b.add_definition(def("f", 0, 1)).add_definition(def("g", 1, 1)).add_definition(def("h", 1, 4));
    b.add_import(Import {
        file: FileId(0),
        path: "b".into(),
        name: Some("g".into()),
        kind: ImportKind::Module,
        line: 1,
    });
    b.add_import(Import {
        file: FileId(2),
        path: "a".into(),
        name: None,
        kind: ImportKind::Module,
        line: 1,
    });
    b.add_import(Import {
        file: FileId(2),
        path: "numpy".into(),
        name: None,
        kind: ImportKind::Module,
        line: 2,
    });
    let call = |file: u32, name: &str, line: u32, enclosing: Option<u32>| Use {
        file: FileId(file),
        name: name.into(),
        line,
        call: true,
        enclosing,
        count: 1,
    };
    b.add_use(call(0, "g", 2, Some(0)))
        .add_use(call(1, "h", 2, Some(1)))
        .add_use(call(2, "f", 3, None));
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
