//! The dependency and call graph: nodes for files and definitions; edges for
//! containment, imports, calls and references; PageRank and degree per node.
//! Format: `doc/format/graph.md`.

use crate::error::{Error, Result};
use crate::input::{DefKind, Definition, FileInfo, Import, Use};
use crate::pagerank::page_rank;
use crate::python::PythonModules;
use crate::resolve::ModuleIndex;
use crate::resolve::dir_of;
use crate::rust::RustCrates;
use maguyva_core::ImportKind;
use maguyva_core::store::FormatVersion;
use maguyva_core::{Array, FileId, Language, SectionFile, SectionWriter};
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};
// Fx hashing: keys are names and small ids, hashed by the million in a
// build; no input chooses them to collide.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::VecDeque;
use std::path::Path;

/// Lowercase sub-words joined: the key that makes naming conventions meet.
pub use maguyva_core::tokens::normalize_name as normalize;

/// The graph's file inside a generation folder.
pub const GRAPH_FILE: &str = "graph.mgv";

/// Graph format. Changelog: v1 initial; v2 files carry their declared
/// package; v3 module roots; v4 sections: each file's centrality read in
/// place, and the graph, decoded only when a query needs it; v5 the graph
/// compressed; v6 definitions not stored (they are the symbol table's); v7
/// zstd instead of LZ4; v8 sectioned-file entries of 40 bytes (small files
/// compressed).
pub const GRAPH_FORMAT: FormatVersion = FormatVersion { kind: *b"GRPH", current: 8, oldest: 8 };

/// A declared package larger than this does not make its files visible to
/// each other by name alone (the cost grows with its square).
const MAX_PACKAGE_VISIBILITY: usize = 512;

/// Files an import of a whole package or namespace links to, at most.
const MAX_PACKAGE_IMPORT: usize = 64;

/// More candidates than this for one name is not an ambiguity worth
/// recording (`get`, `add`, `new`): the use stays unresolved.
pub const MAX_AMBIGUOUS: usize = 8;

/// What an edge says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EdgeKind {
    /// A file or definition holds a definition.
    Contains,
    /// A file imports a file.
    Imports,
    /// Code calls a definition.
    Calls,
    /// Code mentions a definition without calling it.
    References,
}

/// A directed edge between two nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    /// The node that depends (the caller, the importer, the container).
    pub from: u32,
    /// The node depended on.
    pub to: u32,
    /// What the edge says.
    pub kind: EdgeKind,
    /// The first line, in `from`'s file, where it happens.
    pub line: u32,
    /// How many times.
    pub count: u32,
    /// The name had several candidates and this is one of them: recorded,
    /// never counted as a sure dependency.
    pub ambiguous: bool,
    /// An import of a whole package, namespace or folder (a wildcard, a C#
    /// `using`, a Go package) rather than of this file by name.
    pub wide: bool,
}

/// An import that matched no file of the repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnresolvedImport {
    /// The importing file.
    pub file: FileId,
    /// What it imports.
    pub path: String,
    /// Where.
    pub line: u32,
}

/// A place that uses a definition, or that a definition uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Site {
    /// The node at the other end.
    pub node: u32,
    /// The file of the use.
    pub file: FileId,
    /// The line of the use.
    pub line: u32,
    /// A call or a mention.
    pub kind: EdgeKind,
    /// Whether the name was ambiguous.
    pub ambiguous: bool,
    /// How many times.
    pub count: u32,
}

/// Builds a [`CallGraph`].
#[derive(Debug, Default, Clone)]
pub struct GraphBuilder {
    files: Vec<FileInfo>,
    defs: Vec<Definition>,
    imports: Vec<Import>,
    uses: Vec<Use>,
    modules: Vec<ModuleRoot>,
    previous: Option<PreviousGraph>,
}

/// The graph of an earlier build of the same tree, from which a builder
/// takes the links of the files that did not change (see
/// [`GraphBuilder::reuse`]).
#[derive(Debug, Clone)]
pub struct PreviousGraph {
    s: Stored,
    /// `changed[f]`: file `f` is not the one of the same path there, with
    /// the same text and language.
    changed: Vec<bool>,
}

impl PreviousGraph {
    /// Decodes the graph of an opened graph file; `definitions` are the
    /// ones it was built from, `changed[f]` says whether file `f` (by its id
    /// in the new build) is not the file of the same path there, with the
    /// same text and language. A graph whose edges name nodes it does not
    /// have is refused.
    pub fn read(
        file: &SectionFile,
        definitions: Vec<Definition>,
        changed: Vec<bool>,
    ) -> Result<PreviousGraph> {
        let mut s: Stored = file.decompress("graph")?;
        let (nf, n) = (s.files.len(), s.files.len() + definitions.len());
        let fits = s.edges.iter().all(|e| (e.from as usize) < n && (e.to as usize) < n)
            && s.unresolved.iter().all(|u| u.file.index() < nf)
            && definitions.iter().all(|d| d.file.index() < nf);
        if !fits {
            return Err(Error::Core(maguyva_core::Error::corrupt(
                file.path(),
                "the graph does not match its definitions",
            )));
        }
        s.defs = definitions;
        Ok(PreviousGraph { s, changed })
    }

    /// The package or namespace file `old` (its id in the previous graph)
    /// declared, if the graph has that file.
    pub fn declared_package(&self, old: FileId) -> Option<Option<&str>> {
        self.s.files.get(old.index()).map(|f| f.package.as_deref())
    }

    /// Whether the links of an unchanged file would be resolved now as they
    /// were then: the same files (paths, languages, declared packages) and
    /// module roots, and the same definitions but for where they lie (their
    /// lines), so that every name has the same candidates and every node
    /// its number.
    fn still_holds(&self, files: &[FileInfo], modules: &[ModuleRoot], defs: &[Definition]) -> bool {
        let same_def = |a: &Definition, b: &Definition| {
            a.name == b.name
                && a.qualified_name == b.qualified_name
                && a.kind == b.kind
                && a.file == b.file
                && a.container == b.container
        };
        self.changed.len() == files.len()
            && self.s.files == files
            && self.s.modules == modules
            && self.s.defs.len() == defs.len()
            && self.s.defs.iter().zip(defs).all(|(a, b)| same_def(a, b))
    }

    /// The file an edge's `from` node is or lies in.
    fn origin(&self, e: &Edge) -> usize {
        let nf = self.s.files.len();
        match (e.from as usize).checked_sub(nf) {
            Some(d) => self.s.defs.get(d).map_or(usize::MAX, |d| d.file.index()),
            None => e.from as usize,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Stored {
    files: Vec<FileInfo>,
    modules: Vec<ModuleRoot>,
    /// Not written: the reader passes the definitions it built the graph
    /// from, which the index keeps in its symbol table.
    #[serde(skip)]
    defs: Vec<Definition>,
    edges: Vec<Edge>,
    unresolved: Vec<UnresolvedImport>,
    pagerank: Vec<f32>,
    in_degree: Vec<u32>,
    out_degree: Vec<u32>,
}

/// The graph of a corpus, with its centralities.
#[derive(Debug, Clone)]
pub struct CallGraph {
    s: Stored,
    /// Edges by node and definitions by name, made on the first question
    /// that needs them (a build only saves the graph).
    lookup: std::sync::OnceLock<Lookup>,
    /// Files in a language whose imports and uses the build that made this
    /// graph resolved; 0 for a graph read from a file.
    relinked: usize,
    /// Rust crates and Python module names, built on the first question
    /// that names a module (most searches never do).
    module_names: std::sync::OnceLock<(RustCrates, PythonModules)>,
}

/// The graph's edges by node, and its definitions by name (as written and
/// normalized).
#[derive(Debug, Clone)]
struct Lookup {
    graph: DiGraph<(), u32>,
    by_name: HashMap<String, Vec<u32>>,
}

impl Lookup {
    fn new(s: &Stored) -> Lookup {
        let n = s.files.len() + s.defs.len();
        let mut graph: DiGraph<(), u32> = DiGraph::with_capacity(n, s.edges.len());
        for _ in 0..n {
            graph.add_node(());
        }
        // Every edge was checked to join two nodes.
        for (i, e) in s.edges.iter().enumerate() {
            graph.add_edge(
                NodeIndex::new(e.from as usize),
                NodeIndex::new(e.to as usize),
                i as u32,
            );
        }
        let mut by_name: HashMap<String, Vec<u32>> = HashMap::default();
        for (i, d) in s.defs.iter().enumerate() {
            by_name.entry(d.name.clone()).or_default().push(i as u32);
            by_name.entry(normalize(&d.name)).or_default().push(i as u32);
        }
        for v in by_name.values_mut() {
            v.dedup();
        }
        Lookup { graph, by_name }
    }
}

/// Longest module path first: `example.com/app/sub` before `example.com/app`.
fn sort_modules(modules: &mut [ModuleRoot]) {
    modules.sort_by(|a, b| b.path.len().cmp(&a.path.len()).then(a.dir.cmp(&b.dir)));
}

/// Files of these languages see the definitions of their folder without an
/// import (a package, a namespace folder, a module).
pub(crate) fn package_scoped(lang: Option<Language>) -> bool {
    matches!(
        lang,
        Some(
            Language::Go
                | Language::Java
                | Language::Kotlin
                | Language::Scala
                | Language::CSharp
                | Language::Swift
        )
    )
}

fn compatible(kind: DefKind, call: bool) -> bool {
    match kind {
        DefKind::Reexport => false,
        DefKind::Callable => true,
        DefKind::Type => true,
        DefKind::Module | DefKind::Value => !call,
    }
}

impl GraphBuilder {
    /// An empty builder.
    pub fn new() -> GraphBuilder {
        GraphBuilder::default()
    }

    /// Adds the next file (its [`FileId`] is its position).
    pub fn add_file(&mut self, file: FileInfo) -> &mut Self {
        self.files.push(file);
        self
    }

    /// Adds the next definition (in the structural modality's symbol order).
    pub fn add_definition(&mut self, def: Definition) -> &mut Self {
        self.defs.push(def);
        self
    }

    /// Adds an import of file `file`.
    pub fn add_import(&mut self, file: FileId, import: maguyva_core::Import) -> &mut Self {
        let maguyva_core::Import { path, name, kind, line } = import;
        self.imports.push(Import { file, path, name, kind, line });
        self
    }

    /// Adds the uses of a name in file `file`, whose definitions start at
    /// `first_definition` (the occurrence's enclosing definition is
    /// numbered among the file's own).
    pub fn add_use(
        &mut self,
        file: FileId,
        first_definition: u32,
        o: &maguyva_core::Occurrence,
    ) -> &mut Self {
        self.uses.push(Use {
            file,
            name: o.name.clone(),
            line: o.line,
            call: o.call,
            enclosing: o.enclosing.map(|e| e + first_definition),
            count: o.count,
        });
        self
    }

    /// Adds a module root: a folder whose import path is `path` (a Go
    /// module from its `go.mod`).
    pub fn add_module_root(&mut self, root: ModuleRoot) -> &mut Self {
        self.modules.push(root);
        self
    }

    /// Takes the links of unchanged files from `previous` instead of
    /// resolving their imports and uses again, when nothing they were
    /// resolved against has changed (the same files, module roots and
    /// definitions but for their lines); otherwise [`GraphBuilder::build`]
    /// resolves everything, as without it. Either way the graph is the same.
    pub fn reuse(&mut self, previous: PreviousGraph) -> &mut Self {
        self.previous = Some(previous);
        self
    }

    /// Whether [`GraphBuilder::build`] will take the unchanged files' links
    /// from the previous graph given to [`GraphBuilder::reuse`], with the
    /// files, module roots and definitions added so far: then the imports
    /// and uses of unchanged files need not be added.
    pub fn reuses(&self) -> bool {
        let mut modules = self.modules.clone();
        sort_modules(&mut modules);
        self.previous.as_ref().is_some_and(|p| p.still_holds(&self.files, &modules, &self.defs))
    }

    /// Resolves imports and uses and computes centrality.
    pub fn build(self) -> Result<CallGraph> {
        let GraphBuilder { files, defs, imports, uses, mut modules, previous } = self;
        sort_modules(&mut modules);
        let previous = previous.filter(|p| p.still_holds(&files, &modules, &defs));
        // The files whose links are resolved here: all of them, or those
        // that changed since the previous graph.
        let changed = previous.as_ref().map(|p| p.changed.clone());
        let mine = |f: usize| changed.as_ref().is_none_or(|c| c.get(f) != Some(&false));
        let mut links = Links::default();
        containment(&files, &defs, &mine, &mut links)?;
        let declared = DeclaredPackages::new(&files, &defs);
        let inputs = Inputs { files: &files, modules: &modules, declared: &declared };
        let (unresolved, mut visible) = inputs.resolve_imports(&imports, &mine, &mut links);
        inputs.see_packages(&mine, &mut visible);
        bind_uses(&defs, &uses, &visible, &mine, &mut links);
        let relinked =
            files.iter().enumerate().filter(|&(i, f)| mine(i) && f.language.is_some()).count();
        let mut graph = assemble(files, modules, defs, links, unresolved, previous, &mine)?;
        graph.relinked = relinked;
        Ok(graph)
    }
}

/// The edges being made, merged by their ends, kind and ambiguity.
#[derive(Default)]
struct Links(HashMap<(u32, u32, EdgeKind, bool), Edge>);

impl Links {
    fn add(&mut self, e: Edge) {
        self.0
            .entry((e.from, e.to, e.kind, e.ambiguous))
            .and_modify(|x| {
                x.count += e.count;
                x.line = x.line.min(e.line);
                x.wide &= e.wide;
            })
            .or_insert(e);
    }
}

/// Each definition's edge from what contains it (its file, or its
/// container), for the files `mine` takes.
fn containment(
    files: &[FileInfo],
    defs: &[Definition],
    mine: &dyn Fn(usize) -> bool,
    links: &mut Links,
) -> Result<()> {
    let nf = files.len() as u32;
    for (i, d) in defs.iter().enumerate() {
        if d.file.0 >= nf || d.container.is_some_and(|c| c as usize >= defs.len()) {
            return Err(Error::MissingNode(nf + i as u32));
        }
        if !mine(d.file.index()) {
            continue;
        }
        links.add(Edge {
            from: d.container.map_or(d.file.0, |c| nf + c),
            to: nf + i as u32,
            kind: EdgeKind::Contains,
            line: d.name_line,
            count: 1,
            ambiguous: false,
            wide: false,
        });
    }
    Ok(())
}

/// What imports resolve against.
struct Inputs<'a> {
    files: &'a [FileInfo],
    modules: &'a [ModuleRoot],
    declared: &'a DeclaredPackages<'a>,
}

impl Inputs<'_> {
    /// The edges of the imports of the files `mine` takes: the imports
    /// that matched no file, and what each file sees through its imports.
    fn resolve_imports(
        &self,
        imports: &[Import],
        mine: &dyn Fn(usize) -> bool,
        links: &mut Links,
    ) -> (Vec<UnresolvedImport>, Vec<HashSet<u32>>) {
        let (files, modules) = (self.files, self.modules);
        let index = ModuleIndex::new(files);
        let crates = RustCrates::new(files, modules);
        let python = PythonModules::new(files, modules);
        let mut unresolved = Vec::new();
        let mut visible: Vec<HashSet<u32>> = vec![HashSet::default(); files.len()];
        for imp in imports.iter().filter(|i| mine(i.file.index())) {
            let targets = self
                .declared
                .resolve(files, imp)
                .or_else(|| go_package(files, modules, imp))
                .or_else(|| rust_use(files, &crates, imp))
                .or_else(|| js_alias(files, modules, &index, imp))
                .or_else(|| python_import(files, &python, imp))
                .unwrap_or_else(|| index.resolve_import(imp));
            if targets.is_empty() {
                unresolved.push(UnresolvedImport {
                    file: imp.file,
                    path: imp.path.clone(),
                    line: imp.line,
                });
            }
            let wide = targets.len() > 1;
            for t in targets.into_iter().filter(|&t| t != imp.file.0) {
                links.add(Edge {
                    from: imp.file.0,
                    to: t,
                    kind: EdgeKind::Imports,
                    line: imp.line,
                    count: 1,
                    ambiguous: false,
                    wide,
                });
                if let Some(v) = visible.get_mut(imp.file.index()) {
                    v.insert(t);
                }
            }
        }
        (unresolved, visible)
    }

    /// What the files `mine` takes see without an import: the files of
    /// their package (its folder, or every folder it is declared in), and a
    /// Swift module's files each other (a module is a folder under
    /// `Sources/`, a Swift package's, else the whole tree).
    fn see_packages(&self, mine: &dyn Fn(usize) -> bool, visible: &mut [HashSet<u32>]) {
        let files = self.files;
        let mut by_dir: HashMap<&str, Vec<u32>> = HashMap::default();
        let mut swift_modules: HashMap<&str, Vec<u32>> = HashMap::default();
        for (i, f) in files.iter().enumerate() {
            if package_scoped(f.language) {
                by_dir.entry(dir_of(&f.path)).or_default().push(i as u32);
            }
            if f.language == Some(Language::Swift) {
                swift_modules.entry(swift_module(&f.path)).or_default().push(i as u32);
            }
        }
        for (i, f) in files.iter().enumerate().filter(|&(i, _)| mine(i)) {
            let mut see = |same: &[u32]| {
                visible[i].extend(same.iter().copied().filter(|&j| j != i as u32));
            };
            if f.language == Some(Language::Swift)
                && let Some(same) = swift_modules.get(swift_module(&f.path))
                && same.len() <= MAX_PACKAGE_VISIBILITY
            {
                see(same);
            }
            if package_scoped(f.language)
                && let Some(same) = by_dir.get(dir_of(&f.path))
            {
                see(same);
            }
            // A package spread over several folders (`src-2/`, `src/`) is
            // still one package.
            if package_scoped(f.language)
                && let Some(same) = f.package.as_deref().and_then(|p| self.declared.files(p))
                && same.len() <= MAX_PACKAGE_VISIBILITY
            {
                see(same);
            }
        }
    }
}

/// The definitions a use of a name binds to: same file first (and there,
/// the one beside the use), then visible files, then a unique name; none
/// when more than [`MAX_AMBIGUOUS`] fit.
fn bind_uses(
    defs: &[Definition],
    uses: &[Use],
    visible: &[HashSet<u32>],
    mine: &dyn Fn(usize) -> bool,
    links: &mut Links,
) {
    let nf = visible.len() as u32;
    let mut by_name: HashMap<&str, Vec<u32>> = HashMap::default();
    for (i, d) in defs.iter().enumerate() {
        by_name.entry(d.name.as_str()).or_default().push(i as u32);
    }
    // Candidate lists, reused from one use to the next: there are
    // hundreds of thousands of uses in a large tree.
    let (mut fits, mut same_file, mut seen, mut kept) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for u in uses.iter().filter(|u| mine(u.file.index())) {
        let Some(candidates) = by_name.get(u.name.as_str()) else { continue };
        let own = u.enclosing;
        fits.clear();
        fits.extend(
            candidates.iter().copied().filter(|&c| {
                Some(c) != own && compatible(DefKind::of(defs[c as usize].kind), u.call)
            }),
        );
        if fits.is_empty() {
            continue;
        }
        same_file.clear();
        same_file.extend(fits.iter().copied().filter(|&c| defs[c as usize].file == u.file));
        seen.clear();
        seen.extend(fits.iter().copied().filter(|&c| {
            visible.get(u.file.index()).is_some_and(|v| v.contains(&defs[c as usize].file.0))
        }));
        kept.clear();
        let chosen: &[u32] = if !same_file.is_empty() {
            // Among homonyms of one file, the one beside the use (same class).
            let container = own.and_then(|o| defs[o as usize].container);
            kept.extend(
                same_file.iter().copied().filter(|&c| defs[c as usize].container == container),
            );
            if kept.len() == 1 { &kept } else { &same_file }
        } else if !seen.is_empty() {
            &seen
        } else if u.call {
            &fits
        } else {
            // A function mentioned far from its definition is too often
            // a local variable of the same name; types are surer.
            kept.extend(
                fits.iter()
                    .copied()
                    .filter(|&c| DefKind::of(defs[c as usize].kind) != DefKind::Callable),
            );
            &kept
        };
        if chosen.is_empty() || chosen.len() > MAX_AMBIGUOUS {
            continue;
        }
        let ambiguous = chosen.len() > 1;
        let kind = if u.call { EdgeKind::Calls } else { EdgeKind::References };
        for &c in chosen {
            links.add(Edge {
                from: u.enclosing.map_or(u.file.0, |e| nf + e),
                to: nf + c,
                kind,
                line: u.line,
                count: u.count,
                ambiguous,
                wide: false,
            });
        }
    }
}

/// The graph of `links`, with the unchanged files' edges and unresolved
/// imports taken from `previous`, and its centrality (the previous
/// graph's when the edges are its own but for their lines).
fn assemble(
    files: Vec<FileInfo>,
    modules: Vec<ModuleRoot>,
    defs: Vec<Definition>,
    links: Links,
    mut unresolved: Vec<UnresolvedImport>,
    previous: Option<PreviousGraph>,
    mine: &dyn Fn(usize) -> bool,
) -> Result<CallGraph> {
    let mut edges: Vec<Edge> = links.0.into_values().collect();
    // Every edge starts in one file (at it, or at a definition in it),
    // and is made from that file's inputs alone: the unchanged files'
    // are the ones they were.
    if let Some(p) = &previous {
        edges.extend(p.s.edges.iter().filter(|e| !mine(p.origin(e))));
        unresolved.extend(p.s.unresolved.iter().filter(|u| !mine(u.file.index())).cloned());
    }
    // Stable: a file's unresolved imports stay in their order, whichever
    // build resolved them.
    unresolved.sort_by_key(|u| u.file);
    edges.sort_by_key(|e| (e.from, e.to, e.kind as u8, e.ambiguous));
    // An edit that links as the file did (a comment, a function's body)
    // leaves the same nodes and edges, so centrality and degrees are
    // those of the previous graph.
    let n = files.len() + defs.len();
    let same_links = |p: &PreviousGraph| {
        let key = |e: &Edge| (e.from, e.to, e.kind, e.ambiguous);
        let whole = [p.s.pagerank.len(), p.s.in_degree.len(), p.s.out_degree.len()];
        whole == [n; 3]
            && p.s.edges.len() == edges.len()
            && p.s.edges.iter().map(key).eq(edges.iter().map(key))
    };
    let (pagerank, in_degree, out_degree) = match previous.filter(same_links) {
        Some(p) => (p.s.pagerank, p.s.in_degree, p.s.out_degree),
        None => centrality(files.len(), &defs, &edges),
    };
    CallGraph::from_stored(Stored {
        files,
        modules,
        defs,
        edges,
        unresolved,
        pagerank,
        in_degree,
        out_degree,
    })
}

/// PageRank and sure in and out degrees of every node (files, then
/// definitions).
fn centrality(files: usize, defs: &[Definition], edges: &[Edge]) -> (Vec<f32>, Vec<u32>, Vec<u32>) {
    let n = files + defs.len();
    let def_node = |d: usize| (files + d) as u32;
    // Centrality flows along sure dependencies, and from each definition
    // to its file, so that a file whose code is used much ranks high.
    let mut rank_edges: Vec<(u32, u32)> = edges
        .iter()
        .filter(|e| !e.ambiguous && e.kind != EdgeKind::Contains && e.from != e.to)
        .map(|e| (e.from, e.to))
        .collect();
    rank_edges.extend(defs.iter().enumerate().map(|(i, d)| (def_node(i), d.file.0)));
    let pagerank: Vec<f32> = page_rank(n, &rank_edges).into_iter().map(|r| r as f32).collect();
    let mut in_degree = vec![0u32; n];
    let mut out_degree = vec![0u32; n];
    for e in edges.iter().filter(|e| !e.ambiguous && e.kind != EdgeKind::Contains) {
        out_degree[e.from as usize] += 1;
        in_degree[e.to as usize] += 1;
    }
    (pagerank, in_degree, out_degree)
}

impl CallGraph {
    fn from_stored(s: Stored) -> Result<CallGraph> {
        let n = s.files.len() + s.defs.len();
        if s.pagerank.len() != n || s.in_degree.len() != n || s.out_degree.len() != n {
            return Err(Error::MissingNode(n as u32));
        }
        if let Some(e) = s.edges.iter().find(|e| e.from as usize >= n || e.to as usize >= n) {
            return Err(Error::MissingNode(e.from.max(e.to)));
        }
        Ok(CallGraph {
            s,
            lookup: std::sync::OnceLock::new(),
            relinked: 0,
            module_names: std::sync::OnceLock::new(),
        })
    }

    fn lookup(&self) -> &Lookup {
        self.lookup.get_or_init(|| Lookup::new(&self.s))
    }

    /// Files in a language whose imports and uses the build that made this
    /// graph resolved: all of them, or with [`GraphBuilder::reuse`] the
    /// changed ones alone; 0 for a graph read from a file.
    pub fn relinked_files(&self) -> usize {
        self.relinked
    }

    /// Number of files.
    pub fn file_count(&self) -> usize {
        self.s.files.len()
    }

    /// Number of definitions.
    pub fn definition_count(&self) -> usize {
        self.s.defs.len()
    }

    /// Every edge.
    pub fn edges(&self) -> &[Edge] {
        &self.s.edges
    }

    /// Imports that matched no file of the repository.
    pub fn unresolved_imports(&self) -> &[UnresolvedImport] {
        &self.s.unresolved
    }

    /// The node of a file.
    pub fn file_node(&self, file: FileId) -> u32 {
        file.0
    }

    /// The node of a definition.
    pub fn def_node(&self, def: u32) -> u32 {
        self.s.files.len() as u32 + def
    }

    /// The definition of a node, if it is one.
    pub fn node_definition(&self, node: u32) -> Option<(u32, &Definition)> {
        let d = node.checked_sub(self.s.files.len() as u32)?;
        self.s.defs.get(d as usize).map(|def| (d, def))
    }

    /// The file a node is or lies in.
    pub fn node_file(&self, node: u32) -> FileId {
        match self.node_definition(node) {
            Some((_, d)) => d.file,
            None => FileId(node),
        }
    }

    /// A definition.
    pub fn definition(&self, def: u32) -> Option<&Definition> {
        self.s.defs.get(def as usize)
    }

    /// Every definition, in the order they were added.
    pub fn definitions(&self) -> &[Definition] {
        &self.s.defs
    }

    /// A file.
    pub fn file(&self, file: FileId) -> Option<&FileInfo> {
        self.s.files.get(file.index())
    }

    /// PageRank of a node (all nodes sum to 1).
    pub fn pagerank(&self, node: u32) -> f32 {
        self.s.pagerank.get(node as usize).copied().unwrap_or(0.0)
    }

    /// Sure dependencies into and out of a node.
    pub fn degree(&self, node: u32) -> (u32, u32) {
        let i = node as usize;
        (
            self.s.in_degree.get(i).copied().unwrap_or(0),
            self.s.out_degree.get(i).copied().unwrap_or(0),
        )
    }

    /// Centrality on the scale of the fusion boost: PageRank times the
    /// number of nodes, so an average node has 1 and a leaf less.
    pub fn centrality(&self, node: u32) -> f32 {
        self.pagerank(node) * self.s.pagerank.len() as f32
    }

    /// Definitions called `name` (exactly, or with naming conventions folded).
    pub fn definitions_named(&self, name: &str) -> Vec<u32> {
        let by_name = &self.lookup().by_name;
        if let Some(v) = by_name.get(name) {
            let exact: Vec<u32> =
                v.iter().copied().filter(|&d| self.s.defs[d as usize].name == name).collect();
            if !exact.is_empty() {
                return exact;
            }
        }
        by_name.get(&normalize(name)).cloned().unwrap_or_default()
    }

    /// The file whose path is `path`, else the shortest path ending with
    /// `/path`.
    pub fn file_by_path(&self, path: &str) -> Option<FileId> {
        let p = path.trim_start_matches("./");
        if let Some(i) = self.s.files.iter().position(|f| f.path == p) {
            return Some(FileId(i as u32));
        }
        let suffix = format!("/{p}");
        self.s
            .files
            .iter()
            .enumerate()
            .filter(|(_, f)| f.path.ends_with(&suffix))
            .min_by_key(|(_, f)| (f.path.len(), f.path.as_str()))
            .map(|(i, _)| FileId(i as u32))
    }

    /// Edges into a node.
    pub(crate) fn incoming(&self, node: u32) -> impl Iterator<Item = &Edge> + '_ {
        (self.lookup().graph)
            .edges_directed(NodeIndex::new(node as usize), Direction::Incoming)
            .filter_map(|er| self.s.edges.get(*er.weight() as usize))
    }

    /// Edges out of a node.
    pub(crate) fn outgoing(&self, node: u32) -> impl Iterator<Item = &Edge> + '_ {
        (self.lookup().graph)
            .edges_directed(NodeIndex::new(node as usize), Direction::Outgoing)
            .filter_map(|er| self.s.edges.get(*er.weight() as usize))
    }

    /// Every file.
    pub fn files(&self) -> &[FileInfo] {
        &self.s.files
    }

    /// The Rust crates and Python module names of the repository.
    pub(crate) fn module_names(&self) -> &(RustCrates, PythonModules) {
        self.module_names.get_or_init(|| {
            (
                RustCrates::new(&self.s.files, &self.s.modules),
                PythonModules::new(&self.s.files, &self.s.modules),
            )
        })
    }

    /// The module roots, longest path first.
    pub fn module_roots(&self) -> &[ModuleRoot] {
        &self.s.modules
    }

    fn sites(&self, node: u32, dir: Direction) -> Vec<Site> {
        let mut out: Vec<Site> = (self.lookup().graph)
            .edges_directed(NodeIndex::new(node as usize), dir)
            .filter_map(|er| self.s.edges.get(*er.weight() as usize))
            .filter(|e| matches!(e.kind, EdgeKind::Calls | EdgeKind::References))
            .map(|e| {
                let other = if dir == Direction::Incoming { e.from } else { e.to };
                let file = if dir == Direction::Incoming {
                    self.node_file(e.from)
                } else {
                    self.node_file(e.to)
                };
                let line = if dir == Direction::Incoming {
                    e.line
                } else {
                    self.node_definition(e.to).map_or(e.line, |(_, d)| d.name_line)
                };
                Site {
                    node: other,
                    file,
                    line,
                    kind: e.kind,
                    ambiguous: e.ambiguous,
                    count: e.count,
                }
            })
            .collect();
        // Sure and called first, then by the importance of the other end.
        out.sort_by(|a, b| {
            (a.ambiguous, a.kind != EdgeKind::Calls)
                .cmp(&(b.ambiguous, b.kind != EdgeKind::Calls))
                .then(self.pagerank(b.node).total_cmp(&self.pagerank(a.node)))
                .then(a.node.cmp(&b.node))
        });
        out
    }

    /// Where a definition is called or mentioned.
    pub fn callers(&self, def: u32) -> Vec<Site> {
        self.sites(self.def_node(def), Direction::Incoming)
    }

    /// What a definition calls or mentions.
    pub fn callees(&self, def: u32) -> Vec<Site> {
        self.sites(self.def_node(def), Direction::Outgoing)
    }

    /// Nodes that directly depend on `node` through sure edges: callers and
    /// referrers, importers of a file, and dependents of what it contains.
    fn dependents(&self, node: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = vec![node];
        let mut inside = HashSet::default();
        while let Some(n) = stack.pop() {
            if !inside.insert(n) {
                continue;
            }
            for er in
                self.lookup().graph.edges_directed(NodeIndex::new(n as usize), Direction::Incoming)
            {
                if let Some(e) = self.s.edges.get(*er.weight() as usize)
                    && !e.ambiguous
                    && e.kind != EdgeKind::Contains
                {
                    out.push(e.from);
                }
            }
            // Changing a file or a type changes what it contains.
            for er in
                self.lookup().graph.edges_directed(NodeIndex::new(n as usize), Direction::Outgoing)
            {
                if let Some(e) = self.s.edges.get(*er.weight() as usize)
                    && e.kind == EdgeKind::Contains
                {
                    stack.push(e.to);
                }
            }
        }
        out.retain(|x| !inside.contains(x));
        out
    }

    /// Everything that transitively depends on `targets`, up to `depth`
    /// hops: `(node, distance)`, nearest first, then by centrality.
    pub fn impact(&self, targets: &[u32], depth: u32) -> Vec<(u32, u32)> {
        let mut distance: HashMap<u32, u32> = HashMap::default();
        let mut queue: VecDeque<u32> = VecDeque::new();
        for &t in targets {
            distance.insert(t, 0);
            queue.push_back(t);
        }
        while let Some(n) = queue.pop_front() {
            let d = distance[&n];
            if d >= depth {
                continue;
            }
            for m in self.dependents(n) {
                if let std::collections::hash_map::Entry::Vacant(v) = distance.entry(m) {
                    v.insert(d + 1);
                    queue.push_back(m);
                }
            }
        }
        let mut out: Vec<(u32, u32)> = distance.into_iter().filter(|&(_, d)| d > 0).collect();
        out.sort_by(|a, b| {
            a.1.cmp(&b.1)
                .then(self.pagerank(b.0).total_cmp(&self.pagerank(a.0)))
                .then(a.0.cmp(&b.0))
        });
        out
    }

    /// Definitions whose name line falls in `lines` of `file`.
    pub fn definitions_in(&self, file: FileId, lines: maguyva_core::LineSpan) -> Vec<u32> {
        let node = self.file_node(file);
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            for er in
                self.lookup().graph.edges_directed(NodeIndex::new(n as usize), Direction::Outgoing)
            {
                if let Some(e) = self.s.edges.get(*er.weight() as usize)
                    && e.kind == EdgeKind::Contains
                {
                    if let Some((d, def)) = self.node_definition(e.to)
                        && lines.contains(def.name_line)
                    {
                        out.push(d);
                    }
                    stack.push(e.to);
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Code related to a set of definitions, with weights: what they call or
    /// mention and what calls or mentions them, through sure edges. A
    /// neighbour of several of them, or of better-placed ones (`weights`),
    /// weighs more.
    pub fn related(&self, defs: &[(u32, f32)]) -> Vec<(u32, f32)> {
        let inputs: HashSet<u32> = defs.iter().map(|&(d, _)| self.def_node(d)).collect();
        let mut score: HashMap<u32, f32> = HashMap::default();
        for &(d, w) in defs {
            let node = NodeIndex::new(self.def_node(d) as usize);
            for dir in [Direction::Incoming, Direction::Outgoing] {
                for er in self.lookup().graph.edges_directed(node, dir) {
                    let Some(e) = self.s.edges.get(*er.weight() as usize) else { continue };
                    if e.ambiguous || !matches!(e.kind, EdgeKind::Calls | EdgeKind::References) {
                        continue;
                    }
                    let other = if dir == Direction::Incoming { e.from } else { e.to };
                    if !inputs.contains(&other) {
                        *score.entry(other).or_default() += w;
                    }
                }
            }
        }
        let mut out: Vec<(u32, f32)> = score.into_iter().collect();
        out.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(self.pagerank(b.0).total_cmp(&self.pagerank(a.0)))
                .then(a.0.cmp(&b.0))
        });
        out
    }

    /// Writes the graph into a generation folder.
    pub fn save(&self, gen_dir: &Path) -> Result<()> {
        let mut w = SectionWriter::new(GRAPH_FORMAT);
        w.array("central", &self.file_centrality())?.compressed("graph", "graph", &self.s)?;
        Ok(w.write(&gen_dir.join(GRAPH_FILE))?)
    }

    /// The centrality of every file, by file id.
    pub fn file_centrality(&self) -> Vec<f32> {
        (0..self.file_count() as u32).map(|f| self.centrality(self.file_node(FileId(f)))).collect()
    }

    /// Opens the graph file of a generation folder: the centrality of each
    /// file is read in place, the graph itself only by [`CallGraph::read`].
    pub fn open_file(gen_dir: &Path) -> Result<SectionFile> {
        Ok(SectionFile::open(&gen_dir.join(GRAPH_FILE), GRAPH_FORMAT)?)
    }

    /// The centrality of every file in an opened graph file, checked against
    /// the number of files.
    pub fn read_file_centrality(file: &SectionFile, files: usize) -> Result<Array<f32>> {
        let central: Array<f32> = file.array("central")?;
        if central.len() != files {
            return Err(Error::Core(maguyva_core::Error::corrupt(
                file.path(),
                "the graph does not match the index",
            )));
        }
        Ok(central)
    }

    /// Reads the graph of a generation folder, checked against the number
    /// of files and the definitions it was built from (in the order they
    /// were added, which the graph file does not keep).
    pub fn load(gen_dir: &Path, files: usize, definitions: Vec<Definition>) -> Result<CallGraph> {
        CallGraph::read(&CallGraph::open_file(gen_dir)?, files, definitions)
    }

    /// Decodes the graph of an opened graph file, checked against the number
    /// of files and the definitions it was built from.
    pub fn read(
        file: &SectionFile,
        files: usize,
        definitions: Vec<Definition>,
    ) -> Result<CallGraph> {
        let path = file.path();
        let mut s: Stored = file.decompress("graph")?;
        let corrupt = |why: &str| Error::Core(maguyva_core::Error::corrupt(path, why));
        if s.files.len() != files {
            return Err(corrupt("the graph does not match the index"));
        }
        let nf = files as u32;
        let n = definitions.len();
        if definitions
            .iter()
            .any(|d| d.file.0 >= nf || d.container.is_some_and(|c| c as usize >= n))
        {
            return Err(corrupt("a definition names no file or container"));
        }
        s.defs = definitions;
        CallGraph::from_stored(s).map_err(|_| corrupt("the graph does not match its definitions"))
    }
}

/// Files by the package or namespace they declare, for the languages whose
/// imports name packages (Java, Kotlin, Scala, C#, PHP, Haskell).
pub(crate) struct DeclaredPackages<'a> {
    by_package: HashMap<&'a str, Vec<u32>>,
    /// (file, name) of definitions at a file's top level, or directly in a
    /// namespace or object.
    top_level: HashSet<(u32, &'a str)>,
}

impl<'a> DeclaredPackages<'a> {
    pub(crate) fn new(files: &'a [FileInfo], defs: &'a [Definition]) -> DeclaredPackages<'a> {
        let mut by_package: HashMap<&str, Vec<u32>> = HashMap::default();
        for (i, f) in files.iter().enumerate() {
            if let Some(p) = f.package.as_deref() {
                by_package.entry(p).or_default().push(i as u32);
            }
        }
        let top_level = defs
            .iter()
            .filter(|d| {
                d.container.is_none_or(|c| {
                    defs.get(c as usize).is_some_and(|c| DefKind::of(c.kind) == DefKind::Module)
                })
            })
            .map(|d| (d.file.0, d.name.as_str()))
            .collect();
        DeclaredPackages { by_package, top_level }
    }

    /// The files declaring `package`.
    pub(crate) fn files(&self, package: &str) -> Option<&[u32]> {
        self.by_package.get(package).map(Vec::as_slice)
    }

    /// An import read by declared packages: a whole package (a wildcard
    /// import, a C# `using`, a Haskell module), or a package's member (a
    /// class named like its file, or a top-level definition of it); None
    /// when the import names no declared package, or for other languages.
    pub(crate) fn resolve(&self, files: &[FileInfo], imp: &Import) -> Option<Vec<u32>> {
        let lang = files.get(imp.file.index())?.language?;
        if !matches!(
            lang,
            Language::Java
                | Language::Kotlin
                | Language::Scala
                | Language::CSharp
                | Language::Php
                | Language::Haskell
        ) || imp.kind != ImportKind::Module
            || self.by_package.is_empty()
        {
            return None;
        }
        let path = imp.path.trim().replace(['\\', '/'], ".").replace("::", ".");
        let path = path.trim_matches('.');
        // `a.b.C`, a static `a.b.C.member`, a nested `a.b.C.Inner`: a
        // member named like its file wins over a package of the same name
        // (PHP's `Driver\Middleware` interface beside the
        // `Driver\Middleware\` namespace).
        if let Some(hits) = self.member(files, path) {
            return Some(hits);
        }
        if let Some(v) = self.by_package.get(path) {
            return Some(v.iter().copied().take(MAX_PACKAGE_IMPORT).collect());
        }
        let (outer, _) = path.rsplit_once('.')?;
        self.member(files, outer)
    }

    /// The files of package `a.b` named `C` or defining `C` at top level,
    /// for a path `a.b.C`.
    fn member(&self, files: &[FileInfo], path: &str) -> Option<Vec<u32>> {
        let (head, last) = path.rsplit_once('.')?;
        let hits: Vec<u32> = self
            .by_package
            .get(head)?
            .iter()
            .copied()
            .filter(|&f| {
                files.get(f as usize).is_some_and(|x| {
                    let name = x.path.rsplit('/').next().unwrap_or(&x.path);
                    name.split('.').next() == Some(last)
                }) || self.top_level.contains(&(f, last))
            })
            .collect();
        (!hits.is_empty()).then_some(hits)
    }
}

/// A folder that a module path names: a Go module (`go.mod`'s `module`
/// line; imports of `path/sub` mean the package in `dir/sub`), a Rust
/// crate (its `Cargo.toml` name; `dir` is its `src` folder), or for
/// JavaScript and TypeScript a workspace package (its `package.json` name
/// for its entry file, and `name/` for its folder) or a `tsconfig.json`
/// path alias (`@/` for `@/*`), or for Python the package the indexed
/// root itself is in (`dir` ""). A `path` ending with `/` is a prefix:
/// what follows it is appended to `dir`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModuleRoot {
    /// The folder, relative to the indexed root ("" for the root itself).
    pub dir: String,
    /// The module path or crate name.
    pub path: String,
    /// Go or Rust.
    pub language: Language,
}

/// The folder (relative to the indexed root) that an import path names
/// through a module root; module roots longest path first.
pub(crate) fn module_folder(modules: &[ModuleRoot], import: &str) -> Option<String> {
    let import = import.trim().trim_end_matches('/');
    modules.iter().filter(|m| m.language == Language::Go).find_map(|m| {
        let rest = if import == m.path {
            ""
        } else {
            import.strip_prefix(m.path.as_str())?.strip_prefix('/')?
        };
        Some(match (m.dir.as_str(), rest) {
            ("", r) => r.to_string(),
            (d, "") => d.to_string(),
            (d, r) => format!("{d}/{r}"),
        })
    })
}

/// The Go files of the package an import path names through a module root.
fn go_package(files: &[FileInfo], modules: &[ModuleRoot], imp: &Import) -> Option<Vec<u32>> {
    if files.get(imp.file.index())?.language != Some(Language::Go) {
        return None;
    }
    let folder = module_folder(modules, &imp.path)?;
    let found: Vec<u32> = files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.language == Some(Language::Go) && dir_of(&f.path) == folder)
        .map(|(i, _)| i as u32)
        .take(MAX_PACKAGE_IMPORT)
        .collect();
    Some(found)
}

/// A Rust `use` in a file of a known crate, resolved like the compiler
/// does; a path into another crate (`std::io`) depends on no file here.
fn rust_use(files: &[FileInfo], crates: &RustCrates, imp: &Import) -> Option<Vec<u32>> {
    if !crates.knows(imp.file.0)
        || files.get(imp.file.index())?.language != Some(Language::Rust)
        || imp.kind != ImportKind::Module
    {
        return None;
    }
    Some(crates.resolve(imp.file.0, &imp.path).into_iter().collect())
}

/// A JavaScript or TypeScript import of a workspace package or through a
/// tsconfig path alias, resolved like a path from the root.
fn js_alias(
    files: &[FileInfo],
    modules: &[ModuleRoot],
    index: &ModuleIndex<'_>,
    imp: &Import,
) -> Option<Vec<u32>> {
    let lang = files.get(imp.file.index())?.language?;
    if !matches!(lang, Language::JavaScript | Language::TypeScript | Language::Tsx)
        || imp.kind != ImportKind::Module
        || imp.path.starts_with('.')
    {
        return None;
    }
    let path = imp.path.trim();
    modules
        .iter()
        .filter(|m| matches!(m.language, Language::JavaScript | Language::TypeScript))
        .find_map(|m| {
            let target = if m.path.ends_with('/') {
                format!("{}{}", m.dir, path.strip_prefix(m.path.as_str())?)
            } else if path == m.path {
                m.dir.clone()
            } else {
                return None;
            };
            index.relative("", &target)
        })
}

/// The module a Swift file belongs to: the path through `Sources/<Name>`
/// in a Swift package, else "" (the whole tree is one module).
fn swift_module(path: &str) -> &str {
    let mut at = 0;
    for seg in path.split('/') {
        at += seg.len() + 1;
        if seg == "Sources"
            && let Some(rest) = path.get(at..)
            && let Some((name, _)) = rest.split_once('/')
        {
            return &path[..at + name.len()];
        }
    }
    ""
}

/// An absolute Python import, by module names; an import of a module no
/// file carries is outside the repository.
fn python_import(files: &[FileInfo], python: &PythonModules, imp: &Import) -> Option<Vec<u32>> {
    if python.is_empty()
        || files.get(imp.file.index())?.language != Some(Language::Python)
        || imp.kind != ImportKind::Module
        || imp.path.starts_with('.')
    {
        return None;
    }
    Some(
        python
            .resolve(files, imp.file.0, imp.path.trim(), imp.name.as_deref())
            .into_iter()
            .collect(),
    )
}

#[cfg(test)]
mod swift_tests {
    use super::swift_module;

    #[test]
    fn swift_modules_are_package_targets() {
        assert_eq!(swift_module("Sources/Alamofire/Core/Request.swift"), "Sources/Alamofire");
        assert_eq!(swift_module("pkg/Sources/Net/A.swift"), "pkg/Sources/Net");
        assert_eq!(swift_module("Source/Request.swift"), "");
        assert_eq!(swift_module("Sources"), "");
        assert_eq!(swift_module("Sources/A.swift"), "");
    }
}
