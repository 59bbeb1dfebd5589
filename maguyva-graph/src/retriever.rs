//! The graph modality as a retriever: callers of the definitions a query
//! names, what depends on them transitively when it asks about impact, and
//! the most central definitions on its words when it names none.

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

    /// What a query names: definitions (by identifier or qualified name),
    /// files (by path), or else its words.
    pub fn targets(&self, text: &str) -> GraphTargets {
        let mut defs = Vec::new();
        let mut files = Vec::new();
        let mut words = Vec::new();
        for raw in text.split_whitespace() {
            let w = raw.trim_matches(|c: char| {
                !(c.is_alphanumeric() || matches!(c, '_' | ':' | '.' | '/' | '#' | '-'))
            });
            let w = w.trim_end_matches(['.', ':']);
            let lower = w.to_lowercase();
            if w.is_empty() || is_function_word(&lower) || QUESTION_WORDS.contains(&lower.as_str())
            {
                continue;
            }
            let looks_like_path = w.contains('/')
                || w.rsplit_once('.').is_some_and(|(_, ext)| {
                    (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_lowercase())
                });
            if looks_like_path && let Some(f) = self.graph.file_by_path(w) {
                files.push(f);
                continue;
            }
            let segments: Vec<&str> = w.split([':', '.', '#']).filter(|s| !s.is_empty()).collect();
            let Some((last, qualifiers)) = segments.split_last() else { continue };
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
        Modality::Graph
    }

    fn search(&self, query: &Query, limit: usize) -> maguyva_core::Result<Vec<Hit>> {
        let text = query.text();
        let targets = self.targets(text);
        let mut hits = Vec::new();
        let rank_score = |i: usize| 1.0 / (1.0 + i as f32);
        let impact = GraphRetriever::asks_impact(text);
        match targets {
            GraphTargets::Definitions(defs) if !impact => {
                for (i, (s, _)) in self.references(&defs).into_iter().enumerate() {
                    hits.extend(self.hit_at(s.file, s.line, None, rank_score(i)));
                }
            }
            GraphTargets::Definitions(defs) => {
                let nodes: Vec<u32> = defs.iter().map(|&d| self.graph.def_node(d)).collect();
                for (i, (n, _)) in
                    self.graph.impact(&nodes, self.params.impact_depth).into_iter().enumerate()
                {
                    hits.extend(self.hit_for_node(n, rank_score(i)));
                }
            }
            GraphTargets::Files(files) => {
                let nodes: Vec<u32> = files.iter().map(|&f| self.graph.file_node(f)).collect();
                for (i, (n, _)) in
                    self.graph.impact(&nodes, self.params.impact_depth).into_iter().enumerate()
                {
                    hits.extend(self.hit_for_node(n, rank_score(i)));
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
