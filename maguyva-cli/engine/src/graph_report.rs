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
    /// Every file that refers to the name, surest first: the uses the graph
    /// resolved, then the files where the name occurs as a word in code,
    /// the defining files, and string- or comment-only mentions.
    pub files: Vec<FileRef>,
    /// Files left out because they changed since the index was built
    /// (only from the `_as_indexed` variants).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
}

/// One file in a references or impact answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileRef {
    /// The file.
    pub path: String,
    /// The line that shows why.
    pub line: u32,
    /// What the file does: `call`, `type_use`, `import`, `reexport`,
    /// `mention`, `definition` (references); `import`, `call`, `reference`
    /// (impact).
    pub kind: &'static str,
    /// How it was found: `resolved`, `word`, `defining`, `string`,
    /// `comment`.
    pub confidence: &'static str,
    /// Hops from the target (impact; 0 for references).
    pub depth: u32,
    /// The file it depends on (impact: a target at depth 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<String>,
    /// The text of the line.
    pub snippet: String,
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
    /// The target it depends on (the nearest, when several share a name).
    pub of: String,
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
    /// The definitions that depend on them, nearest first, then by
    /// centrality.
    pub dependents: Vec<DependentRef>,
    /// The files affected, nearest first, then by the strength of the
    /// evidence (an import and a use, then one of them) and centrality.
    pub files: Vec<FileRef>,
    /// Files left out because they changed since the index was built
    /// (only from the `_as_indexed` variants).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
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
        let d = self.graph().ok()?.graph().definition(def)?;
        Some(DefinitionRef {
            qualified_name: d.qualified_name.clone(),
            path: self.path_of(d.file),
            line: d.name_line,
        })
    }

    /// Where the definitions named by `name` are called or mentioned, and
    /// every file that refers to it; at most `limit` of each.
    pub fn callers(&self, name: &str, limit: usize) -> Result<CallersReport> {
        let report = self.callers_unchecked(name, limit)?;
        self.content.damage().map_or(Ok(report), Err)
    }

    /// [`Index::callers`] on an index the tree has moved away from (one
    /// that could not be refreshed): the files found changed since the
    /// index was built are left out, and named in `changed`.
    pub fn callers_as_indexed(&self, name: &str, limit: usize) -> Result<CallersReport> {
        let mut report = self.callers_unchecked(name, limit)?;
        report.changed = self.changed_paths();
        let changed = &report.changed;
        report.callers.retain(|c| !changed.contains(&c.path));
        report.files.retain(|f| !changed.contains(&f.path));
        Ok(report)
    }

    fn callers_unchecked(&self, name: &str, limit: usize) -> Result<CallersReport> {
        let retriever = self.graph()?;
        let graph = retriever.graph();
        let (defs, refs) = self.file_references(name)?;
        let callers = retriever
            .references(&defs)
            .into_iter()
            .take(limit)
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
        let files = refs
            .into_iter()
            .take(limit)
            .map(|r| FileRef {
                path: self.path_of(r.file),
                line: r.line,
                kind: r.kind.as_str(),
                confidence: r.confidence.as_str(),
                depth: 0,
                on: None,
                snippet: self.line_text(r.file, r.line),
            })
            .collect();
        Ok(CallersReport {
            query: name.to_string(),
            targets: defs.iter().filter_map(|&d| self.def_ref(d)).collect(),
            callers,
            files,
            changed: Vec::new(),
        })
    }

    /// What transitively depends on a definition, a file, a folder or a
    /// module (as importers spell it), up to `depth` hops; at most `limit`
    /// definitions and files. Definitions sharing a name are followed one
    /// by one, so each dependent says which of them it depends on.
    pub fn impact(&self, target: &str, depth: u32, limit: usize) -> Result<ImpactReport> {
        let report = self.impact_unchecked(target, depth, limit)?;
        self.content.damage().map_or(Ok(report), Err)
    }

    /// [`Index::impact`] on an index that could not be refreshed: the
    /// files found changed since the index was built are left out, and
    /// named in `changed`.
    pub fn impact_as_indexed(
        &self,
        target: &str,
        depth: u32,
        limit: usize,
    ) -> Result<ImpactReport> {
        let mut report = self.impact_unchecked(target, depth, limit)?;
        report.changed = self.changed_paths();
        let changed = &report.changed;
        report.dependents.retain(|d| !changed.contains(&d.path));
        report.files.retain(|f| !changed.contains(&f.path));
        Ok(report)
    }

    fn impact_unchecked(&self, target: &str, depth: u32, limit: usize) -> Result<ImpactReport> {
        let retriever = self.graph()?;
        let graph = retriever.graph();
        let targets_named = retriever.impact_targets(target);
        let (nodes, targets): (Vec<u32>, Vec<DefinitionRef>) = match &targets_named {
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
        // Each target's dependents apart; a dependent reached from several
        // keeps the nearest.
        let mut best: Vec<(u32, u32, usize)> = Vec::new();
        for (t, &node) in nodes.iter().enumerate() {
            for (n, distance) in graph.impact(&[node], depth) {
                if nodes.contains(&n) {
                    continue;
                }
                match best.iter_mut().find(|(m, _, _)| *m == n) {
                    Some(b) if b.1 > distance => *b = (n, distance, t),
                    Some(_) => {}
                    None => best.push((n, distance, t)),
                }
            }
        }
        best.sort_by(|a, b| {
            a.1.cmp(&b.1)
                .then(graph.pagerank(b.0).total_cmp(&graph.pagerank(a.0)))
                .then(a.0.cmp(&b.0))
        });
        let dependents: Vec<DependentRef> = best
            .into_iter()
            .filter_map(|(n, distance, t)| {
                let (_, d) = graph.node_definition(n)?;
                Some(DependentRef {
                    path: self.path_of(d.file),
                    line: d.name_line,
                    name: Some(d.qualified_name.clone()),
                    distance,
                    of: targets.get(t).map_or_else(String::new, |r| {
                        if r.qualified_name.is_empty() {
                            r.path.clone()
                        } else {
                            format!("{} ({}:{})", r.qualified_name, r.path, r.line)
                        }
                    }),
                    centrality: graph.centrality(n),
                })
            })
            .take(limit)
            .collect();
        let files = retriever
            .dependents(&targets_named, depth)
            .into_iter()
            .take(limit)
            .map(|d| FileRef {
                path: self.path_of(d.file),
                line: d.line,
                kind: match d.kind {
                    EdgeKind::Imports => "import",
                    EdgeKind::Calls => "call",
                    _ => "reference",
                },
                confidence: "resolved",
                depth: d.depth,
                on: Some(self.path_of(d.on)),
                snippet: self.line_text(d.file, d.line),
            })
            .collect();
        Ok(ImpactReport {
            query: target.to_string(),
            targets,
            depth,
            dependents,
            files,
            changed: Vec::new(),
        })
    }
}
