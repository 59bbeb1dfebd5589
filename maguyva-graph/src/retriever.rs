//! The graph modality as a retriever: callers of the definitions a query
//! names, what depends on them transitively when it asks about impact, and
//! the most central definitions on its words when it names none.

use crate::dependents::{Dependent, ImpactTarget};
use crate::graph::{CallGraph, Site, normalize};
use maguyva_core::tokens::is_function_word;
use maguyva_core::{Analyzer, FileId, FragmentTable, Hit, LineSpan, Modality, Query, Retriever};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Phrases that ask for the blast radius rather than direct callers.
const IMPACT_PHRASES: &[&str] =
    &["impact", "blast radius", "depends on", "what breaks", "dependents", "affected"];

/// Words of questions about callers and impact; with English function
/// words (`maguyva_core::tokens::is_function_word`) they never name a target.
const QUESTION_WORDS: &[&str] = &[
    "change",
    "changes",
    "changed",
    "calls",
    "call",
    "callers",
    "caller",
    "usages",
    "usage",
    "uses",
    "use",
    "references",
    "reference",
    "impact",
    "blast",
    "radius",
    "depends",
    "breaks",
    "break",
    "function",
    "method",
    "class",
    "file",
];

/// Settings of the graph retriever.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GraphParams {
    /// How many hops an impact query follows.
    pub impact_depth: u32,
}

impl Default for GraphParams {
    fn default() -> Self {
        GraphParams { impact_depth: 3 }
    }
}

/// What a query asks of the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphTargets {
    /// Definitions, by index.
    Definitions(Vec<u32>),
    /// Files.
    Files(Vec<FileId>),
    /// Nothing named: words to match against definition names.
    Words(Vec<String>),
}

/// The graph modality as a [`Retriever`].
#[derive(Debug, Clone)]
pub struct GraphRetriever {
    graph: Arc<CallGraph>,
    fragments: Arc<FragmentTable>,
    /// Definition-name words, built on the first query that needs them
    /// (most searches never do, and opening an index must stay cheap).
    words: Arc<OnceLock<HashMap<String, Vec<u32>>>>,
    params: GraphParams,
}

impl GraphRetriever {
    /// A retriever over a graph and the fragments its lines fall in.
    pub fn new(graph: Arc<CallGraph>, fragments: Arc<FragmentTable>) -> GraphRetriever {
        GraphRetriever {
            graph,
            fragments,
            words: Arc::new(OnceLock::new()),
            params: GraphParams::default(),
        }
    }

    fn name_words(&self) -> &HashMap<String, Vec<u32>> {
        self.words.get_or_init(|| {
            let analyzer = Analyzer::default();
            let mut words: HashMap<String, Vec<u32>> = HashMap::new();
            for d in 0..self.graph.definition_count() as u32 {
                if let Some(def) = self.graph.definition(d) {
                    analyzer.for_each_term(&def.name, |t| {
                        let v = words.entry(t.to_string()).or_default();
                        if v.last() != Some(&d) {
                            v.push(d);
                        }
                    });
                }
            }
            words
        })
    }

    /// Uses other settings.
    pub fn with_params(mut self, params: GraphParams) -> GraphRetriever {
        self.params = params;
        self
    }

    /// The graph.
    pub fn graph(&self) -> &CallGraph {
        &self.graph
    }

    /// Whether a query asks about impact.
    pub fn asks_impact(text: &str) -> bool {
        let lower = text.to_lowercase();
        IMPACT_PHRASES.iter().any(|p| lower.contains(p))
    }

    /// The words of a query that may name something, trimmed of
    /// punctuation; question words and English function words dropped.
    pub fn naming_words(text: &str) -> Vec<&str> {
        text.split_whitespace()
            .filter_map(|raw| {
                let w = raw.trim_matches(|c: char| {
                    !(c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '/' | '#' | '-' | '\\'))
                });
                let w = w.trim_end_matches(['.', ':']);
                let lower = w.to_lowercase();
                (!w.is_empty()
                    && !is_function_word(&lower)
                    && !QUESTION_WORDS.contains(&lower.as_str()))
                .then_some(w)
            })
            .collect()
    }

    /// Whether a word is written like a path (`src/a.rs`, `cart.py`).
    fn looks_like_path(w: &str) -> bool {
        w.contains('/')
            || w.rsplit_once('.').is_some_and(|(_, ext)| {
                (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_lowercase())
            })
    }

    /// The definitions a word names: `Name`, or `Outer.Name` / `a::b::Name`
    /// with the qualifiers matching the end of the definition's container path.
    fn definitions_for(&self, w: &str) -> Vec<u32> {
        let segments: Vec<&str> = w.split([':', '.', '#']).filter(|s| !s.is_empty()).collect();
        let Some((last, qualifiers)) = segments.split_last() else { return Vec::new() };
        let mut found = self.graph.definitions_named(last);
        if !qualifiers.is_empty() {
            let q: Vec<String> = qualifiers.iter().map(|s| normalize(s)).collect();
            found.retain(|&d| {
                self.graph.definition(d).is_some_and(|def| {
                    let segs: Vec<String> = def
                        .qualified_name
                        .split([':', '.', '#'])
                        .filter(|s| !s.is_empty())
                        .map(normalize)
                        .collect();
                    segs[..segs.len().saturating_sub(1)].ends_with(&q)
                })
            });
        }
        found
    }

    /// What a query names: definitions (by identifier or qualified name),
    /// files (by path), or else its words.
    pub fn targets(&self, text: &str) -> GraphTargets {
        let mut defs = Vec::new();
        let mut files = Vec::new();
        let mut words = Vec::new();
        for w in Self::naming_words(text) {
            if Self::looks_like_path(w)
                && let Some(f) = self.graph.file_by_path(w)
            {
                files.push(f);
                continue;
            }
            let found = self.definitions_for(w);
            if found.is_empty() {
                words.push(w.to_string());
            } else {
                defs.extend(found);
            }
        }
        defs.sort_unstable();
        defs.dedup();
        if !defs.is_empty() {
            GraphTargets::Definitions(defs)
        } else if !files.is_empty() {
            GraphTargets::Files(files)
        } else {
            GraphTargets::Words(words)
        }
    }

    /// What an impact question is about: a file or folder by its path, a
    /// module, package or namespace as importers spell it (`aiohttp.payload`,
    /// `net/http`, `Acme.Billing`), else the definitions it names. Files
    /// win over definitions: "what depends on cats.arrow.Compose" is about
    /// the module even though a type has the same name.
    pub fn impact_targets(&self, text: &str) -> GraphTargets {
        let mut files = Vec::new();
        let mut defs = Vec::new();
        for w in Self::naming_words(text) {
            if Self::looks_like_path(w)
                && let Some(f) = self.graph.file_by_path(w)
            {
                files.push(f);
                continue;
            }
            let folder = self.graph.files_in_folder(w.trim_end_matches('/'));
            if w.contains('/') && !folder.is_empty() {
                files.extend(folder);
                continue;
            }
            let module_like = w.contains(['.', '/', '\\']) || w.contains("::");
            if module_like {
                let found = self.graph.resolve_module(w);
                if !found.is_empty() {
                    files.extend(found);
                    continue;
                }
            }
            // A bare word that the code declares as a module (a crate, a
            // package) names it; else one that is exactly a file's name
            // without extension names that file ("what depends on errors":
            // errors.js).
            if !module_like {
                let declared = self.graph.resolve_declared_module(w);
                if !declared.is_empty() {
                    files.extend(declared);
                    continue;
                }
                if let Some(f) = self.graph.file_with_stem(w) {
                    files.push(f);
                    continue;
                }
            }
            let found = self.definitions_for(w);
            if !found.is_empty() {
                defs.extend(found);
            } else if !folder.is_empty() {
                files.extend(folder);
            }
        }
        files.sort_unstable();
        files.dedup();
        defs.sort_unstable();
        defs.dedup();
        if !files.is_empty() {
            GraphTargets::Files(files)
        } else if !defs.is_empty() {
            GraphTargets::Definitions(defs)
        } else {
            GraphTargets::Words(Vec::new())
        }
    }

    /// The files that depend on what an impact question names, nearest
    /// first (see [`CallGraph::dependents_of`]).
    pub fn dependents(&self, targets: &GraphTargets, depth: u32) -> Vec<Dependent> {
        match targets {
            GraphTargets::Files(f) => self.graph.dependents_of(ImpactTarget::Files(f), depth),
            GraphTargets::Definitions(d) => {
                self.graph.dependents_of(ImpactTarget::Definitions(d), depth)
            }
            GraphTargets::Words(_) => Vec::new(),
        }
    }

    /// Call sites and mentions of definitions, each place once with the
    /// targets it may use: sure ones first, direct calls before mentions,
    /// then by centrality.
    pub fn references(&self, defs: &[u32]) -> Vec<(Site, Vec<u32>)> {
        let mut grouped: Vec<(Site, Vec<u32>)> = Vec::new();
        for &d in defs {
            for s in self.graph.callers(d) {
                match grouped
                    .iter_mut()
                    .find(|(g, _)| g.node == s.node && g.line == s.line && g.kind == s.kind)
                {
                    Some((g, targets)) => {
                        g.ambiguous &= s.ambiguous;
                        targets.push(d);
                    }
                    None => grouped.push((s, vec![d])),
                }
            }
        }
        grouped.sort_by(|(a, _), (b, _)| {
            (a.ambiguous, a.kind != crate::graph::EdgeKind::Calls)
                .cmp(&(b.ambiguous, b.kind != crate::graph::EdgeKind::Calls))
                .then(self.graph.pagerank(b.node).total_cmp(&self.graph.pagerank(a.node)))
                .then(a.node.cmp(&b.node))
        });
        grouped
    }

    /// Code related to the given hits (best first): the callers and callees
    /// of the definitions they show, as hits of their own.
    pub fn related(&self, hits: &[Hit], limit: usize) -> Vec<Hit> {
        let mut defs: Vec<(u32, f32)> = Vec::new();
        for (i, h) in hits.iter().enumerate() {
            let weight = 1.0 / (1.0 + i as f32);
            defs.extend(
                self.graph.definitions_in(h.file, h.lines).into_iter().map(|d| (d, weight)),
            );
        }
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (node, score) in self.graph.related(&defs) {
            if let Some(hit) = self.hit_for_node(node, score)
                && seen.insert(hit.chunk)
            {
                out.push(hit);
                if out.len() >= limit {
                    break;
                }
            }
        }
        out
    }

    fn hit_at(&self, file: FileId, line: u32, span: Option<LineSpan>, score: f32) -> Option<Hit> {
        let chunk = self.fragments.at_line(file, line)?;
        let frag = self.fragments.get(chunk);
        let lines = span.map_or(LineSpan::line(line), |s| {
            LineSpan::new(s.start().max(frag.lines.start()), s.end().min(frag.lines.end()))
        });
        Some(Hit { chunk, file, lines, score })
    }

    fn hit_for_node(&self, node: u32, score: f32) -> Option<Hit> {
        match self.graph.node_definition(node) {
            Some((_, d)) => self.hit_at(d.file, d.name_line, Some(d.lines), score),
            None => self.hit_at(FileId(node), 1, None, score),
        }
    }
}

impl Retriever for GraphRetriever {
    fn modality(&self) -> Modality {
        Modality::GRAPH
    }

    fn search(&self, query: &Query, limit: usize) -> maguyva_core::Result<Vec<Hit>> {
        let text = query.text();
        let targets = self.targets(text);
        let mut hits = Vec::new();
        let rank_score = |i: usize| 1.0 / (1.0 + i as f32);
        let impact = GraphRetriever::asks_impact(text);
        match targets {
            _ if impact => {
                let targets = self.impact_targets(text);
                for (i, d) in self.dependents(&targets, self.params.impact_depth).iter().enumerate()
                {
                    hits.extend(self.hit_at(d.file, d.line, None, rank_score(i)));
                }
            }
            GraphTargets::Definitions(defs) => {
                for (i, (s, _)) in self.references(&defs).into_iter().enumerate() {
                    hits.extend(self.hit_at(s.file, s.line, None, rank_score(i)));
                }
            }
            GraphTargets::Files(files) => {
                // Without an impact phrase a file is asked about as a whole:
                // what depends on it directly.
                let deps = self.graph.dependents_of(ImpactTarget::Files(&files), 1);
                for (i, d) in deps.iter().enumerate() {
                    hits.extend(self.hit_at(d.file, d.line, None, rank_score(i)));
                }
            }
            GraphTargets::Words(words) => {
                // The most central definitions named with the query's words.
                let analyzer = Analyzer::default();
                let name_words = self.name_words();
                let mut matched: HashMap<u32, u32> = HashMap::new();
                for w in &words {
                    analyzer.for_each_term(w, |t| {
                        if let Some(defs) = name_words.get(t)
                            && defs.len() <= 5_000
                        {
                            for &d in defs {
                                *matched.entry(d).or_default() += 1;
                            }
                        }
                    });
                }
                let mut ranked: Vec<(u32, u32)> = matched.into_iter().collect();
                ranked.sort_by(|a, b| {
                    b.1.cmp(&a.1)
                        .then(
                            self.graph
                                .pagerank(self.graph.def_node(b.0))
                                .total_cmp(&self.graph.pagerank(self.graph.def_node(a.0))),
                        )
                        .then(a.0.cmp(&b.0))
                });
                for (i, (d, _)) in ranked.into_iter().take(limit.saturating_mul(2)).enumerate() {
                    hits.extend(self.hit_for_node(self.graph.def_node(d), rank_score(i)));
                }
            }
        }
        // One hit per fragment, best first.
        let mut seen = std::collections::HashSet::new();
        hits.retain(|h| seen.insert(h.chunk));
        hits.truncate(limit);
        Ok(hits)
    }
}
