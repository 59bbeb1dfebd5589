//! Callers and impact reports, for `maguyva callers` and `maguyva impact`.

use super::Index;
use maguyva_core::{FileId, Result};
use maguyva_graph::{EdgeKind, GraphTargets};
use serde::Serialize;

/// A definition, as reports name it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DefinitionRef {
    /// Its name with containers.
    pub qualified_name: String,
    /// The file.
    pub path: String,
    /// The line of its name.
    pub line: u32,
}

/// One place that uses a target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallerRef {
    /// The file.
    pub path: String,
    /// The first line of the use.
    pub line: u32,
    /// The definition the use is in (none at a file's top level).
    pub caller: Option<String>,
    /// The definitions it may use: one when sure, all candidates when ambiguous.
    pub targets: Vec<DefinitionRef>,
    /// `call` or `reference`.
    pub kind: &'static str,
    /// Several definitions carry the name and nothing says which is meant.
    pub ambiguous: bool,
    /// How many uses there.
    pub count: u32,
    /// The text of the line.
    pub snippet: String,
}

/// `maguyva callers`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallersReport {
    /// The name asked about.
    pub query: String,
    /// The definitions it names.
    pub targets: Vec<DefinitionRef>,
    /// Where they are used: sure calls first, ambiguous ones last.
    pub callers: Vec<CallerRef>,
}

/// One thing that depends on the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DependentRef {
    /// The file.
    pub path: String,
    /// The definition's line (1 for a file).
    pub line: u32,
    /// The definition, or none for a whole file.
    pub name: Option<String>,
    /// Hops from the target.
    pub distance: u32,
    /// Centrality (PageRank scaled so an average node has 1).
    pub centrality: f32,
}

/// `maguyva impact`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImpactReport {
    /// What was asked about.
    pub query: String,
    /// The definitions or files it names.
    pub targets: Vec<DefinitionRef>,
    /// How many hops were followed.
    pub depth: u32,
    /// What depends on them, nearest first, then by centrality.
    pub dependents: Vec<DependentRef>,
    /// The files affected, nearest first.
    pub files: Vec<(String, u32)>,
}

impl Index {
    fn path_of(&self, file: FileId) -> String {
        self.manifest.files.get(file.index()).map(|f| f.path.clone()).unwrap_or_default()
    }

    fn line_text(&self, file: FileId, line: u32) -> String {
        self.content
            .text(file)
            .lines()
            .nth(line.saturating_sub(1) as usize)
            .unwrap_or("")
            .trim()
            .to_string()
    }

    fn def_ref(&self, def: u32) -> Option<DefinitionRef> {
        let d = self.graph.graph().definition(def)?;
        Some(DefinitionRef {
            qualified_name: d.qualified_name.clone(),
            path: self.path_of(d.file),
            line: d.name_line,
        })
    }

    /// Where the definitions named by `name` are called or mentioned.
    pub fn callers(&self, name: &str) -> Result<CallersReport> {
        let graph = self.graph.graph();
        let defs = match self.graph.targets(name) {
            GraphTargets::Definitions(d) => d,
            _ => Vec::new(),
        };
        let callers = self
            .graph
            .references(&defs)
            .into_iter()
            .map(|(s, targets)| CallerRef {
                path: self.path_of(s.file),
                line: s.line,
                caller: graph.node_definition(s.node).map(|(_, d)| d.qualified_name.clone()),
                targets: targets.iter().filter_map(|&t| self.def_ref(t)).collect(),
                kind: if s.kind == EdgeKind::Calls { "call" } else { "reference" },
                ambiguous: s.ambiguous,
                count: s.count,
                snippet: self.line_text(s.file, s.line),
            })
            .collect();
        Ok(CallersReport {
            query: name.to_string(),
            targets: defs.iter().filter_map(|&d| self.def_ref(d)).collect(),
            callers,
        })
    }

    /// Everything that transitively depends on a definition or a file.
    pub fn impact(&self, target: &str, depth: u32) -> Result<ImpactReport> {
        let graph = self.graph.graph();
        let (nodes, targets): (Vec<u32>, Vec<DefinitionRef>) = match self.graph.targets(target) {
            GraphTargets::Definitions(d) => (
                d.iter().map(|&x| graph.def_node(x)).collect(),
                d.iter().filter_map(|&x| self.def_ref(x)).collect(),
            ),
            GraphTargets::Files(f) => (
                f.iter().map(|&x| graph.file_node(x)).collect(),
                f.iter()
                    .map(|&x| DefinitionRef {
                        qualified_name: String::new(),
                        path: self.path_of(x),
                        line: 1,
                    })
                    .collect(),
            ),
            GraphTargets::Words(_) => (Vec::new(), Vec::new()),
        };
        let mut files: Vec<(String, u32)> = Vec::new();
        let dependents: Vec<DependentRef> = graph
            .impact(&nodes, depth)
            .into_iter()
            .map(|(n, distance)| {
                let file = graph.node_file(n);
                let path = self.path_of(file);
                if !files.iter().any(|(p, _)| *p == path) {
                    files.push((path.clone(), distance));
                }
                let def = graph.node_definition(n);
                DependentRef {
                    path,
                    line: def.map_or(1, |(_, d)| d.name_line),
                    name: def.map(|(_, d)| d.qualified_name.clone()),
                    distance,
                    centrality: graph.centrality(n),
                }
            })
            .collect();
        Ok(ImpactReport { query: target.to_string(), targets, depth, dependents, files })
    }
}
