//! Ranking definitions for a query: exact and qualified names, naming
//! conventions and sub-words, kind hints, and words of the signature and doc
//! comment. Only definitions are returned, so a definition always outranks a
//! mere mention in fusion.

use crate::symbol::{SymbolKind, SymbolRef};
use crate::table::{SymbolTable, normalize};
use maguyva_core::tokens::{is_function_word, normalizes_to};
use maguyva_core::{FileId, FragmentTable, Hit, LineSpan, Modality, Query, Retriever, SymbolId};
use memchr::memmem;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Words that ask for a definition without naming it; with English
/// function words (`maguyva_core::tokens::is_function_word`) they carry no
/// meaning for definition search.
const DEFINITION_WORDS: &[&str] = &[
    "find",
    "show",
    "get",
    "defined",
    "definition",
    "define",
    "declared",
    "declaration",
    "implemented",
    "implementation",
    "located",
    "code",
    "used",
    "use",
];

/// At least this many candidates, best by name score, get their bonuses
/// computed and are ranked.
const MIN_RERANKED: usize = 256;

/// Kind words and the kinds they ask for.
const KIND_HINTS: &[(&str, &[SymbolKind])] = {
    use SymbolKind::*;
    &[
        ("def", &[Function, Method]),
        ("fn", &[Function, Method]),
        ("func", &[Function, Method]),
        ("function", &[Function, Method]),
        ("method", &[Method, Function]),
        ("class", &[Class, Struct]),
        ("struct", &[Struct, Class]),
        ("interface", &[Interface, Trait]),
        ("protocol", &[Interface, Trait]),
        ("trait", &[Trait, Interface]),
        ("type", &[Type, Class, Struct, Interface, Enum, Trait]),
        ("enum", &[Enum]),
        ("module", &[Module]),
        ("mod", &[Module]),
        ("namespace", &[Module]),
        ("object", &[Class, Module]),
        ("const", &[Constant]),
        ("constant", &[Constant]),
        ("macro", &[Macro]),
        ("record", &[Class, Struct]),
    ]
};

/// Weights of the structural ranking; the defaults are priors, not fitted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StructuralParams {
    /// An identifier of the query equals the name, letter case included.
    pub exact: f32,
    /// Equal ignoring letter case.
    pub case_insensitive: f32,
    /// Equal once naming conventions are folded (`parse config`, `parse_config`).
    pub normalized: f32,
    /// Equal once folded, but written in another convention than the query's
    /// identifier (`IntoResponse` against `into_response`): often another entity.
    pub other_convention: f32,
    /// Scale of the sub-word overlap score: the rarity-weighted share of
    /// query words in the name, times the share of the name's words matched.
    pub sub_words: f32,
    /// Cap on the name score of a re-export, so that a definition found in
    /// the corpus always outranks a place that re-exports it.
    pub reexport: f32,
    /// The query's qualifiers (`Rack::`, `absl::`) match the containers.
    pub qualifier_match: f32,
    /// The query's qualifiers contradict the containers.
    pub qualifier_mismatch: f32,
    /// A kind word of the query (`class X`, `fn x`) matches the kind.
    pub kind_match: f32,
    /// A kind word contradicts the kind.
    pub kind_mismatch: f32,
    /// The file is named after the symbol (`Status` in `status.h`).
    pub file_named_after: f32,
    /// Share of query words found in the signature and doc comment.
    pub signature_words: f32,
    /// Scale of the doc-summary score: the rarity-weighted share of query
    /// words in the summary of a definition's doc comment, which makes a
    /// definition a candidate even when its name shares no query word.
    /// Measured on the development benchmark, fused default preset
    /// (NDCG@10): 0 0.854, 0.15 0.861, 0.2 0.863, 0.3 0.860, 0.6 0.857.
    pub doc_words: f32,
}

impl Default for StructuralParams {
    fn default() -> Self {
        StructuralParams {
            exact: 1.0,
            case_insensitive: 0.9,
            normalized: 0.8,
            other_convention: 0.55,
            sub_words: 0.6,
            reexport: 0.7,
            qualifier_match: 0.3,
            qualifier_mismatch: -0.25,
            kind_match: 0.15,
            kind_mismatch: -0.3,
            file_named_after: 0.1,
            signature_words: 0.2,
            doc_words: 0.2,
        }
    }
}

/// An identifier written in a query, with its qualifiers.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ident {
    name: String,
    qualifiers: Vec<String>,
}

/// What the structural retriever reads from a query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DefinitionQuery {
    kinds: Option<&'static [SymbolKind]>,
    idents: Vec<Ident>,
    words: Vec<String>,
    whole: String,
}

fn strip_punct(w: &str) -> &str {
    w.trim_matches(|c: char| {
        !(c.is_alphanumeric() || c == '_' || c == ':' || c == '.' || c == '#' || c == '$')
    })
    .trim_end_matches(['.', ':', '#'])
    .trim_start_matches(['.', ':', '#'])
}

fn looks_like_identifier(w: &str, position: usize, single: bool) -> bool {
    let letters = w.chars().any(char::is_alphabetic);
    if !letters {
        return false;
    }
    single
        || w.contains("::")
        || w.contains('#')
        || w.contains('_')
        || (w.contains('.') && w.split('.').all(|s| !s.is_empty()))
        || w.chars().skip(1).any(char::is_uppercase)
        || (position > 0 && w.chars().next().is_some_and(char::is_uppercase))
        || (w.chars().any(|c| c.is_ascii_digit()) && letters)
}

impl DefinitionQuery {
    /// Reads a query text.
    pub fn parse(text: &str, table: &SymbolTable) -> DefinitionQuery {
        let raw: Vec<&str> =
            text.split_whitespace().map(strip_punct).filter(|w| !w.is_empty()).collect();
        let single = raw.len() == 1;
        let mut q = DefinitionQuery::default();
        let mut plain = Vec::new();
        for (i, w) in raw.iter().enumerate() {
            let lower = w.to_lowercase();
            if !single && let Some((_, kinds)) = KIND_HINTS.iter().find(|(k, _)| *k == lower) {
                q.kinds = Some(kinds);
                continue;
            }
            if looks_like_identifier(w, i, single) {
                let segments: Vec<&str> =
                    w.split([':', '.', '#']).filter(|s| !s.is_empty()).collect();
                if let Some((last, rest)) = segments.split_last() {
                    q.idents.push(Ident {
                        name: last.to_string(),
                        qualifiers: rest.iter().map(|s| normalize(s)).collect(),
                    });
                }
            }
            if !is_function_word(&lower) && !DEFINITION_WORDS.contains(&lower.as_str()) {
                plain.push(*w);
            }
        }
        // "where is session defined", "fn spawn": the one word left besides
        // question and kind words is a name, whatever its case.
        if q.idents.is_empty()
            && let [only] = plain.as_slice()
            && (q.kinds.is_some() || raw.len() > 1)
            && only.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '$'))
        {
            q.idents.push(Ident { name: only.to_string(), qualifiers: Vec::new() });
        }
        let analyzer = table.analyzer();
        for w in &plain {
            analyzer.for_each_term(w, |t| {
                if !q.words.iter().any(|x| x == t) {
                    q.words.push(t.to_string());
                }
            });
        }
        if plain.len() > 1 {
            q.whole = plain.iter().map(|w| normalize(w)).collect();
        }
        q
    }
}

/// Segments of a qualified name, normalized.
fn segments(qualified: &str) -> Vec<String> {
    qualified.split([':', '.', '#']).filter(|s| !s.is_empty()).map(normalize).collect()
}

/// How many segments [`segments`] finds, without normalizing them.
fn segment_count(qualified: &str) -> usize {
    qualified.split([':', '.', '#']).filter(|s| !s.is_empty()).count()
}

/// How an identifier is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Convention {
    /// `ParseConfig`, `parseConfig`.
    Camel,
    /// `parse_config`, `PARSE_CONFIG`.
    Snake,
    /// One word: says nothing.
    Plain,
}

fn convention(name: &str) -> Convention {
    let trimmed = name.trim_matches('_');
    if trimmed.contains('_') {
        Convention::Snake
    } else if trimmed.chars().skip(1).any(char::is_uppercase)
        && trimmed.chars().any(char::is_lowercase)
    {
        Convention::Camel
    } else {
        Convention::Plain
    }
}

fn kind_prior(kind: SymbolKind) -> f32 {
    match kind {
        k if k.is_type() => 0.06,
        SymbolKind::Type | SymbolKind::Module => 0.04,
        k if k.is_callable() => 0.03,
        _ => 0.0,
    }
}

/// The structural modality as a [`Retriever`].
#[derive(Debug, Clone)]
pub struct StructuralRetriever {
    table: Arc<SymbolTable>,
    fragments: Arc<FragmentTable>,
    file_stems: Arc<Vec<String>>,
    params: StructuralParams,
}

impl StructuralRetriever {
    /// A retriever over a symbol table; `paths[f]` is file `f`'s path.
    pub fn new(table: Arc<SymbolTable>, fragments: Arc<FragmentTable>, paths: &[&str]) -> Self {
        let stems = paths
            .iter()
            .map(|p| {
                let name = p.rsplit('/').next().unwrap_or(p);
                normalize(name.rsplit_once('.').map_or(name, |(stem, _)| stem))
            })
            .collect();
        StructuralRetriever {
            table,
            fragments,
            file_stems: Arc::new(stems),
            params: StructuralParams::default(),
        }
    }

    /// Uses other weights.
    pub fn with_params(mut self, params: StructuralParams) -> Self {
        self.params = params;
        self
    }

    /// The best definitions for a query, with their scores.
    pub fn definitions(&self, text: &str, limit: usize) -> Vec<(SymbolId, f32)> {
        let q = DefinitionQuery::parse(text, &self.table);
        let p = &self.params;
        // Dense arrays indexed by symbol: cheaper than maps for the long
        // posting lists of common words.
        let n = self.table.len();
        let mut scores = vec![f32::MIN; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut bump = |id: SymbolId, s: f32| {
            if let Some(e) = scores.get_mut(id.index()) {
                if *e == f32::MIN {
                    touched.push(id.0);
                }
                *e = e.max(s);
            }
        };
        for ident in &q.idents {
            for id in self.table.by_normalized_name(&normalize(&ident.name)) {
                let Some(sym) = self.table.get(id) else { continue };
                let (a, b) = (convention(&ident.name), convention(sym.name));
                let mut s = if sym.name == ident.name {
                    p.exact
                } else if sym.name.eq_ignore_ascii_case(&ident.name) {
                    p.case_insensitive
                } else if a != b && a != Convention::Plain && b != Convention::Plain {
                    p.other_convention
                } else {
                    p.normalized
                };
                if sym.kind == SymbolKind::Reexport {
                    s = s.min(p.reexport);
                }
                if !ident.qualifiers.is_empty() {
                    let segs = segments(&sym.qualified_name);
                    let containers = &segs[..segs.len().saturating_sub(1)];
                    s += if containers.ends_with(&ident.qualifiers) {
                        p.qualifier_match
                    } else {
                        p.qualifier_mismatch
                    };
                }
                bump(id, s);
            }
        }
        if !q.whole.is_empty() {
            for id in self.table.by_normalized_name(&q.whole) {
                bump(id, p.normalized);
            }
        }
        if !q.words.is_empty() {
            // A word found in many names (`bash` in a repository of bash
            // scripts) says little; a rare one says much.
            let idf = |df: usize| (1.0 + n.max(1) as f32 / (df as f32 + 1.0)).ln();
            let total: f32 = q.words.iter().map(|w| idf(self.table.by_name_word(w).len())).sum();
            // Per symbol: name words matched, their weight, and the weight
            // of the words its doc summary holds.
            let mut matched = vec![(0u32, 0f32, 0f32); n];
            let mut seen: Vec<u32> = Vec::new();
            let mut add = |list: &[u32], weight: f32, doc: bool| {
                for &i in list {
                    if let Some(e) = matched.get_mut(i as usize) {
                        // Weights are positive: all zero is untouched.
                        if e.0 == 0 && e.1 == 0.0 && e.2 == 0.0 {
                            seen.push(i);
                        }
                        if doc {
                            e.2 += weight;
                        } else {
                            e.0 += 1;
                            e.1 += weight;
                        }
                    }
                }
            };
            for w in &q.words {
                let list = self.table.by_name_word(w);
                add(list, idf(list.len()), false);
            }
            // Definitions whose doc summary says what the query asks
            // (`restock`: "Add units of a product to the warehouse").
            if p.doc_words > 0.0 {
                for w in &q.words {
                    let list = self.table.by_doc_word(w);
                    add(list, idf(list.len()), true);
                }
            }
            for i in seen {
                let (count, weight, doc) = matched[i as usize];
                if doc > 0.0 {
                    bump(SymbolId(i), p.doc_words * doc / total.max(f32::EPSILON));
                }
                if count == 0 {
                    continue;
                }
                // Stemming does not change how many words a name has.
                let Some(parts) = self.table.name_tokens(SymbolId(i)) else { continue };
                let coverage = weight / total.max(f32::EPSILON)
                    * (count as f32 / parts.max(1) as f32).min(1.0);
                bump(SymbolId(i), p.sub_words * coverage);
            }
        }
        let scores: Vec<(SymbolId, f32)> =
            touched.into_iter().map(|i| (SymbolId(i), scores[i as usize])).collect();
        // Bonuses are small next to name scores, so they are only worth
        // computing (they read signatures and docs) for the best candidates.
        let mut base: Vec<(SymbolId, f32)> = scores.into_iter().collect();
        let best_first =
            |a: &(SymbolId, f32), b: &(SymbolId, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        let keep = limit.max(1).saturating_mul(4).max(MIN_RERANKED);
        if base.len() > keep {
            base.select_nth_unstable_by(keep, best_first);
            base.truncate(keep);
        }
        if !q.words.is_empty() {
            self.table.prepare_details(base.iter().map(|&(id, _)| id));
        }
        let mut hay = String::new();
        let finders: Vec<memmem::Finder<'_>> =
            q.words.iter().map(|w| memmem::Finder::new(w.as_bytes())).collect();
        let mut ranked: Vec<(SymbolId, f32)> = Vec::with_capacity(base.len());
        for (id, base) in base {
            let Some(sym) = self.table.get(id) else { continue };
            let score = base + self.bonus(id, sym, &q, &finders, &mut hay);
            if score > 0.15 {
                ranked.push((id, score));
            }
        }
        ranked.sort_by(best_first);
        ranked.truncate(limit);
        ranked
    }

    /// A candidate's bonus; `finders` search for the query's words, and
    /// `hay` is room for the candidate's lowercased text, kept from one
    /// candidate to the next.
    fn bonus(
        &self,
        id: SymbolId,
        sym: SymbolRef<'_>,
        q: &DefinitionQuery,
        finders: &[memmem::Finder<'_>],
        hay: &mut String,
    ) -> f32 {
        let p = &self.params;
        let mut b = kind_prior(sym.kind);
        if let Some(kinds) = q.kinds {
            b += if kinds.contains(&sym.kind) { p.kind_match } else { p.kind_mismatch };
        }
        if self.file_stems.get(sym.file.index()).is_some_and(|s| normalizes_to(sym.name, s)) {
            b += p.file_named_after;
        }
        if sym.container.is_none() {
            b += 0.03;
        }
        // Among homonyms, the shallower and the larger definition is more
        // likely the one meant: `Ecto.Schema` over `Ecto.Repo.Schema`, the
        // main part of a partial class over its satellites.
        let depth = segment_count(&sym.qualified_name).saturating_sub(1) as f32;
        b -= 0.02 * depth.min(5.0);
        b += 0.05 * ((1.0 + sym.lines.len() as f32).ln() / 2000f32.ln()).min(1.0);
        if !q.words.is_empty() {
            // The first sentences of a doc comment say what the code is; the
            // rest (parameters, examples) would only cost time, and are not
            // stored. Stems are prefixes of their words, so a substring test
            // finds the word forms without stemming the text.
            hay.clear();
            hay.push_str(self.table.signature(id));
            hay.push(' ');
            hay.push_str(self.table.doc(id));
            match hay.is_ascii() {
                true => hay.make_ascii_lowercase(),
                false => *hay = hay.to_lowercase(),
            }
            let found = finders.iter().filter(|f| f.find(hay.as_bytes()).is_some()).count();
            b += p.signature_words * found as f32 / q.words.len() as f32;
        }
        b
    }

    /// The fragment and lines where a symbol's hit lands.
    pub fn hit_for(&self, id: SymbolId, score: f32) -> Option<Hit> {
        let sym = self.table.get(id)?;
        let chunk = self.fragments.at_line(sym.file, sym.name_line)?;
        let frag = self.fragments.get(chunk);
        let lines = LineSpan::new(
            sym.lines.start().max(frag.lines.start()),
            sym.lines.end().min(frag.lines.end()),
        );
        Some(Hit { chunk, file: sym.file, lines, score })
    }

    /// The symbol table.
    pub fn table(&self) -> &SymbolTable {
        &self.table
    }

    /// The normalized stem of a file's name.
    pub fn file_stem(&self, file: FileId) -> Option<&str> {
        self.file_stems.get(file.index()).map(String::as_str)
    }
}

impl Retriever for StructuralRetriever {
    fn modality(&self) -> Modality {
        Modality::STRUCTURAL
    }

    fn search(&self, query: &Query, limit: usize) -> maguyva_core::Result<Vec<Hit>> {
        // Several definitions can share a fragment; each fragment appears once.
        let mut seen = std::collections::HashSet::new();
        let mut hits = Vec::new();
        for (id, score) in self.definitions(query.text(), limit.saturating_mul(2)) {
            if let Some(hit) = self.hit_for(id, score)
                && seen.insert(hit.chunk)
            {
                hits.push(hit);
                if hits.len() >= limit {
                    break;
                }
            }
        }
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::outline;
    use maguyva_core::{Analyzer, FragmentSpan, Language};

    fn retriever(files: &[(Language, &str, &str)]) -> StructuralRetriever {
        let outlines: Vec<_> = files
            .iter()
            .enumerate()
            .map(|(i, (l, _, t))| outline(*l, t, FileId(i as u32)))
            .collect();
        let table = SymbolTable::build(&outlines, Analyzer::default()).unwrap();
        // One fragment per file is enough here.
        let fragments = FragmentTable::from_spans(
            files
                .iter()
                .map(|(_, _, t)| {
                    vec![FragmentSpan {
                        lines: LineSpan::new(1, t.lines().count() as u32),
                        bytes: 0..t.len(),
                        context_line: None,
                    }]
                })
                .collect(),
        );
        let paths: Vec<&str> = files.iter().map(|f| f.1).collect();
        StructuralRetriever::new(Arc::new(table), Arc::new(fragments), &paths)
    }

    fn top(r: &StructuralRetriever, q: &str) -> Option<String> {
        r.definitions(q, 5)
            .first()
            .and_then(|(id, _)| r.table().get(*id))
            .map(|s| s.qualified_name.to_string())
    }

    #[test]
    fn exact_qualified_and_convention_matches() {
        let r = retriever(&[
            (Language::Ruby, "lib/rack/response.rb", "module Rack\n  class Response\n  end\nend\n"),
            (
                Language::Ruby,
                "lib/other/response.rb",
                "module Other\n  class Response\n  end\nend\n",
            ),
            (
                Language::Python,
                "cfg.py",
                "def parse_config(path):\n    pass\n\ndef parse(x):\n    pass\n",
            ),
            (Language::Rust, "status.rs", "pub struct Status;\npub fn status_code() {}\n"),
        ]);
        assert_eq!(top(&r, "Rack::Response").as_deref(), Some("Rack::Response"));
        assert_eq!(top(&r, "Other::Response").as_deref(), Some("Other::Response"));
        assert_eq!(top(&r, "parseConfig").as_deref(), Some("parse_config"));
        assert_eq!(top(&r, "parse config").as_deref(), Some("parse_config"));
        assert_eq!(top(&r, "Status").as_deref(), Some("Status"));
        assert_eq!(top(&r, "where is status_code defined").as_deref(), Some("status_code"));
        // A lowercase plain word in a definition question is a name too.
        assert_eq!(top(&r, "where is parse defined").as_deref(), Some("parse"));
        assert_eq!(top(&r, "def parse").as_deref(), Some("parse"));
    }

    #[test]
    fn homonyms_prefer_shallow_large_and_same_convention() {
        let r = retriever(&[
            (Language::Elixir, "lib/ecto/repo/schema.ex", "defmodule Ecto.Repo.Schema do\nend\n"),
            (Language::Elixir, "lib/ecto/schema.ex", "defmodule Ecto.Schema do\nend\n"),
            (Language::Rust, "a.rs", "impl Thing {\n    fn into_response(self) {}\n}\n"),
            (Language::Rust, "b.rs", "pub trait IntoResponse {}\n"),
        ]);
        assert_eq!(top(&r, "Schema").as_deref(), Some("Ecto.Schema"));
        assert_eq!(top(&r, "IntoResponse").as_deref(), Some("IntoResponse"));
        assert_eq!(convention("into_response"), Convention::Snake);
        assert_eq!(convention("IntoResponse"), Convention::Camel);
        assert_eq!(convention("Router"), Convention::Plain);
    }

    #[test]
    fn a_reexport_answers_only_when_no_definition_exists() {
        let r = retriever(&[
            (Language::Rust, "response/mod.rs", "pub use core::response::IntoResponse;\n"),
            (Language::Rust, "extract/mod.rs", "pub use core::extract::FromRequest;\n"),
            (Language::Rust, "from_request.rs", "pub trait FromRequest {}\n"),
        ]);
        assert_eq!(top(&r, "IntoResponse").as_deref(), Some("IntoResponse"));
        let best = r.definitions("FromRequest", 5)[0].0;
        assert_eq!(r.table().get(best).unwrap().kind, SymbolKind::Trait);
    }

    #[test]
    fn kind_hints_steer_between_homonyms() {
        let r = retriever(&[
            (Language::Python, "a.py", "class Cart:\n    pass\n"),
            (Language::Python, "b.py", "def cart():\n    pass\n"),
        ]);
        assert_eq!(top(&r, "class cart").as_deref(), Some("Cart"));
        assert_eq!(top(&r, "def cart").as_deref(), Some("cart"));
    }

    #[test]
    fn queries_without_any_name_return_nothing() {
        let r = retriever(&[(Language::Python, "a.py", "def alpha():\n    pass\n")]);
        assert!(r.definitions("completely unrelated words", 5).is_empty());
    }
}
