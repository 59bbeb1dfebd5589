//! Impact at the level of files: which files depend on a set of target
//! files (or on definitions in them), how (an import, a call, a mention),
//! on which line, and how many hops away. This is what "what breaks if I
//! change X" and "what depends on Y" are answered from.

use crate::graph::{CallGraph, EdgeKind, normalize};
use crate::input::DefKind;
use crate::resolve::ModuleIndex;
use maguyva_core::FileId;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// What an impact query is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImpactTarget<'a> {
    /// Whole files (a file, a module, a package): every import of them and
    /// every use of what they define counts.
    Files(&'a [FileId]),
    /// Definitions: uses of them, and imports of the files defining them.
    Definitions(&'a [u32]),
}

/// A file that depends on an impact query's targets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Dependent {
    /// The dependent file.
    pub file: FileId,
    /// Hops from the targets (1: directly).
    pub depth: u32,
    /// The strongest evidence: an import of the file depended on, else a
    /// call of, else a mention of something it defines.
    pub kind: EdgeKind,
    /// The line of that evidence in `file`.
    pub line: u32,
    /// Whether `file` imports the file it depends on.
    pub imports: bool,
    /// Whether `file` calls or mentions what it depends on (sure uses only).
    pub uses: bool,
    /// The file depended on: a target at depth 1, a dependent one hop
    /// nearer otherwise.
    pub on: FileId,
    /// How strong the evidence is, for ordering within a depth.
    pub evidence: f32,
}

/// Evidence found so far for one candidate file.
#[derive(Debug, Clone, Copy)]
struct Found {
    import_line: Option<u32>,
    /// Every import of the file depended on names a whole package.
    wide: bool,
    /// (line, is a call)
    use_line: Option<(u32, bool)>,
    on: FileId,
}

impl Found {
    fn new(on: FileId) -> Found {
        Found { import_line: None, wide: true, use_line: None, on }
    }

    fn add_use(&mut self, line: u32, call: bool) {
        self.use_line = Some(match self.use_line {
            // A call is stronger evidence than a mention; else the first line.
            Some((l, c)) if c && !call => (l, c),
            Some((l, c)) if c == call => (l.min(line), c),
            _ => (line, call),
        });
    }
}

impl CallGraph {
    /// The files directly inside `folder` (a path from the root, or its end).
    pub fn files_in_folder(&self, folder: &str) -> Vec<FileId> {
        let folder = folder.trim_matches('/');
        if folder.is_empty() {
            return Vec::new();
        }
        let suffix = format!("/{folder}");
        let mut dirs: Vec<&str> = self
            .files()
            .iter()
            .filter_map(|f| f.path.rsplit_once('/').map(|(d, _)| d))
            .filter(|d| *d == folder || d.ends_with(&suffix))
            .collect();
        dirs.sort_unstable_by_key(|d| (d.len(), *d));
        let Some(dir) = dirs.first().copied() else { return Vec::new() };
        self.files()
            .iter()
            .enumerate()
            .filter(|(_, f)| f.path.rsplit_once('/').is_some_and(|(d, _)| d == dir))
            .map(|(i, _)| FileId(i as u32))
            .collect()
    }

    /// The file nearest the root whose name, without its extensions, is
    /// exactly `stem` (`errors` for `lib/errors.js`).
    pub fn file_with_stem(&self, stem: &str) -> Option<FileId> {
        self.files()
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                let name = f.path.rsplit('/').next().unwrap_or(&f.path);
                f.language.is_some() && name.split('.').next() == Some(stem)
            })
            .min_by_key(|(_, f)| (f.path.matches('/').count(), f.path.len()))
            .map(|(i, _)| FileId(i as u32))
    }

    /// The files directly inside the folder at `folder` ("" for the root).
    pub fn files_in_exact_folder(&self, folder: &str) -> Vec<FileId> {
        self.files()
            .iter()
            .enumerate()
            .filter(|(_, f)| f.path.rsplit_once('/').map_or("", |(d, _)| d) == folder)
            .map(|(i, _)| FileId(i as u32))
            .collect()
    }

    /// The files a module, package, namespace or file path names, as a
    /// user writes it: what the code declares first
    /// ([`CallGraph::resolve_declared_module`]), then the repository's paths
    /// ([`ModuleIndex::resolve_name`]).
    pub fn resolve_module(&self, name: &str) -> Vec<FileId> {
        let declared = self.resolve_declared_module(name);
        if !declared.is_empty() {
            return declared;
        }
        ModuleIndex::new(self.files()).resolve_name(name).into_iter().map(FileId).collect()
    }

    /// The files a module name means by what the code declares: a Rust
    /// crate (its `Cargo.toml` name) or module in it, a Go package by its
    /// module path, a declared package or namespace (`cats.data`,
    /// `Acme.Billing`) or a member of one named like its file, a module
    /// definition (`defmodule Ecto.Changeset`). Empty when none.
    pub fn resolve_declared_module(&self, name: &str) -> Vec<FileId> {
        // A Rust crate or module by its crate's name.
        let (crates, python) = self.module_names();
        if let Some(f) = crates.resolve_name(name) {
            return vec![FileId(f)];
        }
        // A Python module by its dotted name.
        if let Some(f) = python.file_of(self.files(), name.trim(), "") {
            return vec![FileId(f)];
        }
        // A Go package through its module's path.
        if let Some(folder) = crate::graph::module_folder(self.module_roots(), name) {
            let files = self.files_in_exact_folder(&folder);
            if !files.is_empty() {
                return files;
            }
        }
        // A declared package (`cats.data`), or a member of one named like
        // its file (`cats.arrow.Compose`).
        let dotted = name.trim().replace(['\\', '/'], ".").replace("::", ".");
        let dotted = dotted.trim_matches('.');
        let declaring = |package: &str, stem: Option<&str>| -> Vec<FileId> {
            self.files()
                .iter()
                .enumerate()
                .filter(|(_, f)| {
                    f.package.as_deref() == Some(package)
                        && stem.is_none_or(|s| {
                            let file = f.path.rsplit('/').next().unwrap_or(&f.path);
                            file.split('.').next() == Some(s)
                        })
                })
                .map(|(i, _)| FileId(i as u32))
                .collect()
        };
        // A member named like its file wins over a package of the same
        // name, as in imports.
        if let Some((head, last)) = dotted.rsplit_once('.') {
            let files = declaring(head, Some(last));
            if !files.is_empty() {
                return files;
            }
        }
        let files = declaring(dotted, None);
        if !files.is_empty() {
            return files;
        }
        let segments: Vec<&str> =
            name.split(['.', ':', '/', '\\']).filter(|s| !s.is_empty()).collect();
        if let Some(last) = segments.last()
            && segments.len() > 1
        {
            let wanted: Vec<String> = segments.iter().map(|s| normalize(s)).collect();
            let mut files: Vec<FileId> = self
                .definitions_named(last)
                .into_iter()
                .filter_map(|d| self.definition(d))
                .filter(|d| {
                    DefKind::of(d.kind) == DefKind::Module && {
                        let have: Vec<String> = d
                            .qualified_name
                            .split(['.', ':', '/', '\\'])
                            .filter(|s| !s.is_empty())
                            .map(normalize)
                            .collect();
                        have.ends_with(&wanted) || wanted.ends_with(&have) && have.len() > 1
                    }
                })
                .map(|d| d.file)
                .collect();
            files.sort_unstable();
            files.dedup();
            return files;
        }
        Vec::new()
    }

    /// The definitions a definition or file node holds, transitively
    /// (the methods of a class, everything in a file), itself included.
    fn held(&self, node: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut stack = vec![node];
        let mut seen = HashSet::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            out.push(n);
            stack.extend(self.outgoing(n).filter(|e| e.kind == EdgeKind::Contains).map(|e| e.to));
        }
        out
    }

    /// Sure calls and mentions of the definitions `nodes` hold, by the file
    /// they come from (files in `skip` left out).
    fn uses_into(
        &self,
        nodes: &[u32],
        skip: &HashSet<FileId>,
        found: &mut HashMap<FileId, Found>,
        on: FileId,
    ) {
        for &n in nodes {
            for held in self.held(n) {
                for e in self.incoming(held) {
                    if e.ambiguous || !matches!(e.kind, EdgeKind::Calls | EdgeKind::References) {
                        continue;
                    }
                    let from = self.node_file(e.from);
                    if skip.contains(&from) {
                        continue;
                    }
                    found
                        .entry(from)
                        .or_insert_with(|| Found::new(on))
                        .add_use(e.line, e.kind == EdgeKind::Calls);
                }
            }
        }
    }

    /// Files importing `file`, with the import's line.
    fn importers_into(
        &self,
        file: FileId,
        skip: &HashSet<FileId>,
        found: &mut HashMap<FileId, Found>,
    ) {
        for e in self.incoming(self.file_node(file)) {
            if e.kind != EdgeKind::Imports {
                continue;
            }
            let from = self.node_file(e.from);
            if skip.contains(&from) {
                continue;
            }
            let f = found.entry(from).or_insert_with(|| Found::new(file));
            f.import_line = Some(f.import_line.map_or(e.line, |l| l.min(e.line)));
            f.wide &= e.wide;
        }
    }

    /// Files that depend on `target`, transitively up to `depth` hops,
    /// nearest first; within one depth the strongest evidence first (an
    /// import and a use, then one of them), then by centrality. The target
    /// files themselves are never listed.
    ///
    /// For definitions, a use of the definition weighs more than an import
    /// of its file (the file may be imported for something else); for
    /// files, an import weighs more than a use (a use without an import is
    /// bound by name alone, or within a package). An import of a whole
    /// package (a wildcard) weighs half an import of the file by name,
    /// unless the target is several files (a package itself).
    pub fn dependents_of(&self, target: ImpactTarget<'_>, depth: u32) -> Vec<Dependent> {
        let (targets, defs): (Vec<FileId>, Vec<u32>) = match target {
            ImpactTarget::Files(files) => (files.to_vec(), Vec::new()),
            ImpactTarget::Definitions(defs) => {
                let mut files: Vec<FileId> =
                    defs.iter().filter_map(|&d| self.definition(d)).map(|d| d.file).collect();
                files.sort_unstable();
                files.dedup();
                (files, defs.to_vec())
            }
        };
        // Several target files are a package, a folder or a module.
        let package = matches!(target, ImpactTarget::Files(f) if f.len() > 1);
        let mut visited: HashSet<FileId> = targets.iter().copied().collect();
        let mut out: Vec<Dependent> = Vec::new();
        let mut frontier = targets;
        for level in 1..=depth {
            let mut found: HashMap<FileId, Found> = HashMap::new();
            for &f in &frontier {
                self.importers_into(f, &visited, &mut found);
                if level > 1 || defs.is_empty() {
                    self.uses_into(&[self.file_node(f)], &visited, &mut found, f);
                }
            }
            if level == 1 && !defs.is_empty() {
                for &d in &defs {
                    let Some(def) = self.definition(d) else { continue };
                    self.uses_into(&[self.def_node(d)], &visited, &mut found, def.file);
                }
            }
            let symbol = level == 1 && !defs.is_empty();
            let mut this: Vec<Dependent> = found
                .into_iter()
                .map(|(file, f)| {
                    let (import_weight, use_weight) = if symbol { (1.0, 2.0) } else { (2.0, 1.0) };
                    // An import of a whole package says less than one that
                    // names the file, unless the target is that package.
                    let import_weight =
                        if f.wide && !package { import_weight / 2.0 } else { import_weight };
                    let evidence = f.import_line.map_or(0.0, |_| import_weight)
                        + f.use_line.map_or(0.0, |_| use_weight);
                    let (kind, line) = match (f.import_line, f.use_line) {
                        (Some(l), _) => (EdgeKind::Imports, l),
                        (None, Some((l, true))) => (EdgeKind::Calls, l),
                        (None, Some((l, false))) => (EdgeKind::References, l),
                        (None, None) => (EdgeKind::References, 1),
                    };
                    Dependent {
                        file,
                        depth: level,
                        kind,
                        line,
                        imports: f.import_line.is_some(),
                        uses: f.use_line.is_some(),
                        on: f.on,
                        evidence,
                    }
                })
                .collect();
            this.sort_by(|a, b| {
                b.evidence
                    .total_cmp(&a.evidence)
                    .then(
                        self.pagerank(self.file_node(b.file))
                            .total_cmp(&self.pagerank(self.file_node(a.file))),
                    )
                    .then(a.file.cmp(&b.file))
            });
            if this.is_empty() {
                break;
            }
            frontier = this.iter().map(|d| d.file).collect();
            visited.extend(frontier.iter().copied());
            out.extend(this);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphBuilder;
    use crate::input::{Definition, FileInfo};
    use maguyva_core::{Import, ImportKind, Language, LineSpan, Occurrence, SymbolKind};

    /// a.py defines f; b.py imports a and calls f; c.py imports b; d.py
    /// calls f without importing a (bound by the unique name).
    fn graph() -> CallGraph {
        let mut b = GraphBuilder::new();
        for p in ["a.py", "b.py", "c.py", "d.py"] {
            b.add_file(FileInfo {
                path: p.into(),
                language: Some(Language::Python),
                package: None,
            });
        }
        b.add_definition(Definition {
            name: "f".into(),
            qualified_name: "f".into(),
            kind: SymbolKind::Function,
            file: FileId(0),
            lines: LineSpan::new(1, 2),
            name_line: 1,
            container: None,
        });
        b.add_definition(Definition {
            name: "g".into(),
            qualified_name: "g".into(),
            kind: SymbolKind::Function,
            file: FileId(1),
            lines: LineSpan::new(3, 4),
            name_line: 3,
            container: None,
        });
        b.add_import(
            FileId(1),
            Import { path: "a".into(), name: None, kind: ImportKind::Module, line: 1 },
        );
        b.add_import(
            FileId(2),
            Import { path: "b".into(), name: None, kind: ImportKind::Module, line: 2 },
        );
        b.add_use(
            FileId(1),
            0,
            &Occurrence { name: "f".into(), line: 4, call: true, enclosing: Some(1), count: 1 },
        );
        b.add_use(
            FileId(3),
            0,
            &Occurrence { name: "f".into(), line: 7, call: true, enclosing: None, count: 1 },
        );
        b.build().unwrap()
    }

    #[test]
    fn files_nearest_first_imports_before_uses() {
        let g = graph();
        let deps = g.dependents_of(ImpactTarget::Files(&[FileId(0)]), 3);
        let order: Vec<(u32, u32, EdgeKind)> =
            deps.iter().map(|d| (d.file.0, d.depth, d.kind)).collect();
        assert_eq!(
            order,
            vec![(1, 1, EdgeKind::Imports), (3, 1, EdgeKind::Calls), (2, 2, EdgeKind::Imports)]
        );
        assert_eq!(deps[0].line, 1);
        assert!(deps[0].imports && deps[0].uses);
        assert_eq!(deps[2].on, FileId(1));
        // Depth caps the walk.
        assert_eq!(g.dependents_of(ImpactTarget::Files(&[FileId(0)]), 1).len(), 2);
    }

    #[test]
    fn definitions_weigh_uses_over_imports() {
        let g = graph();
        let deps = g.dependents_of(ImpactTarget::Definitions(&[0]), 1);
        let files: Vec<u32> = deps.iter().map(|d| d.file.0).collect();
        // b imports and calls; d only calls.
        assert_eq!(files, vec![1, 3]);
        assert_eq!(deps[1].kind, EdgeKind::Calls);
        assert_eq!(deps[1].line, 7);
    }

    #[test]
    fn targets_are_never_their_own_dependents() {
        let g = graph();
        let deps = g.dependents_of(ImpactTarget::Files(&[FileId(0), FileId(1)]), 3);
        assert!(deps.iter().all(|d| d.file != FileId(0) && d.file != FileId(1)));
        assert!(g.dependents_of(ImpactTarget::Files(&[FileId(2)]), 3).is_empty());
    }
}
