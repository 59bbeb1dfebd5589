//! References to a name, file by file: the uses the graph resolved to its
//! definition first, then every other file where the name occurs as a word
//! in code (the text modality's trigrams find the candidates, a lexer keeps
//! comments and strings apart), then the files defining it, then files that
//! mention it only in strings or comments. The answer is never a subset of
//! what a word search finds.

use super::Index;
use super::search::whole_word_offsets;
use maguyva_core::{FileId, Region, Result, word_occurrences};
use maguyva_graph::{EdgeKind, GraphRetriever, GraphTargets};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// What a file does with the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceKind {
    /// Calls it.
    Call,
    /// Uses it as a type.
    TypeUse,
    /// Imports it (or the module that defines it).
    Import,
    /// Exports it again.
    Reexport,
    /// Mentions it otherwise (passes, assigns, reads it).
    Mention,
    /// Defines it.
    Definition,
}

impl ReferenceKind {
    /// The name printed for it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReferenceKind::Call => "call",
            ReferenceKind::TypeUse => "type_use",
            ReferenceKind::Import => "import",
            ReferenceKind::Reexport => "reexport",
            ReferenceKind::Mention => "mention",
            ReferenceKind::Definition => "definition",
        }
    }
}

/// How a reference was found, surest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// The graph bound a use in this file to the definition.
    Resolved,
    /// The name occurs as a word in this file's code; the graph could not
    /// tell (several definitions share the name, or none is visible).
    Word,
    /// The file defines the name (its own uses of it are not references
    /// from elsewhere).
    Defining,
    /// Only inside string literals.
    String,
    /// Only in comments, or in a file that is not code.
    Comment,
}

impl Confidence {
    /// The name printed for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Resolved => "resolved",
            Confidence::Word => "word",
            Confidence::Defining => "defining",
            Confidence::String => "string",
            Confidence::Comment => "comment",
        }
    }
}

/// One file that refers to the name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileReference {
    /// The file.
    pub file: FileId,
    /// The line that shows the reference best.
    pub line: u32,
    /// What the file does with the name there.
    pub kind: ReferenceKind,
    /// How it was found.
    pub confidence: Confidence,
    /// Occurrences of the name in the file's code.
    pub count: u32,
}

/// Counts of one name in one file, by region.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    code: u32,
    string: u32,
    comment: u32,
    /// Byte range of the first occurrence in code.
    first_code: Option<(usize, usize)>,
    /// Byte range of the first occurrence anywhere.
    first: Option<(usize, usize)>,
}

impl Tally {
    fn add(&mut self, at: usize, len: usize, region: Region) {
        let span = (at, at + len);
        self.first = Some(self.first.map_or(span, |f| f.min(span)));
        match region {
            Region::Code => {
                self.code += 1;
                self.first_code = Some(self.first_code.map_or(span, |f| f.min(span)));
            }
            Region::String => self.string += 1,
            Region::Comment => self.comment += 1,
        }
    }
}

/// What a line does with a name ending at byte `name_end`: imports or
/// exports it (by the line's first word), calls it (an opening parenthesis
/// follows), or None for anything else.
fn line_kind(line: &str, name_end: usize) -> Option<ReferenceKind> {
    let t = line.trim_start();
    let export = t.starts_with("export ")
        || t.starts_with("pub use ")
        || t.starts_with("pub(crate) use ")
        || t.starts_with("module.exports");
    if export {
        return Some(ReferenceKind::Reexport);
    }
    let import =
        ["import ", "from ", "use ", "using ", "require", "#include", "#import", "include "]
            .iter()
            .any(|k| t.starts_with(k))
            || t.starts_with("local ") && t.contains("require")
            || t.starts_with("alias ");
    if import {
        return Some(ReferenceKind::Import);
    }
    let after = line.get(name_end..).unwrap_or("").trim_start();
    after.starts_with('(').then_some(ReferenceKind::Call)
}

/// The line number (1-based) of a byte offset, and the line's text with
/// the offset within it.
fn line_at(text: &str, offset: usize) -> (u32, &str, usize) {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let number = text[..start].bytes().filter(|&b| b == b'\n').count() as u32 + 1;
    (number, &text[start..end], offset - start)
}

impl Index {
    /// The names a references question asks about: its naming words that
    /// are identifiers, by their last segment (`Rack::Builder` → `Builder`).
    fn reference_names(text: &str) -> Vec<String> {
        let mut names: Vec<String> = GraphRetriever::naming_words(text)
            .into_iter()
            .filter_map(|w| w.rsplit([':', '.', '#', '\\']).find(|s| !s.is_empty()))
            .filter(|w| {
                w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
                    && w.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
            })
            .map(str::to_string)
            .collect();
        names.dedup();
        names
    }

    /// Every file that refers to what a references question names, surest
    /// first (see the module's documentation), and the definitions it
    /// named. Empty when the question names no identifier.
    pub fn file_references(&self, text: &str) -> Result<(Vec<u32>, Vec<FileReference>)> {
        let names = Self::reference_names(text);
        let tallies = self.word_tallies(&names)?;
        let retriever = self.graph()?;
        let graph = retriever.graph();
        let mut defs = match retriever.targets(text) {
            GraphTargets::Definitions(d) => d,
            _ => Vec::new(),
        };
        // A name the code spells as asked is about definitions of exactly
        // that name; `parseConfig` finds `parse_config` only when nothing
        // is spelled `parseConfig`.
        if tallies.values().any(|t| t.code > 0) {
            defs.retain(|&d| graph.definition(d).is_some_and(|x| names.contains(&x.name)));
        }
        let targets = Targets::of(graph, &defs);
        let mut out = Vec::new();
        let mut placed: HashSet<FileId> = HashSet::new();
        let mut ambiguous = HashMap::new();
        for (site, _) in retriever.references(&defs) {
            if targets.defining.contains(&site.file) {
                continue;
            }
            if site.ambiguous {
                ambiguous.entry(site.file).or_insert(site.line);
                continue;
            }
            if placed.insert(site.file) {
                out.push(FileReference {
                    file: site.file,
                    line: site.line,
                    kind: if site.kind == EdgeKind::Calls {
                        ReferenceKind::Call
                    } else if targets.type_target {
                        ReferenceKind::TypeUse
                    } else {
                        ReferenceKind::Mention
                    },
                    confidence: Confidence::Resolved,
                    count: site.count,
                });
            }
        }
        for r in &mut out {
            if let Some(t) = tallies.get(&r.file) {
                self.add_word_evidence(r, t);
            }
        }
        let rest = self.word_references(&tallies, &placed, &targets, &ambiguous);
        out.extend(rest);
        Ok((defs, out))
    }

    /// Where each name occurs as a whole word, by file and region.
    fn word_tallies(&self, names: &[String]) -> Result<HashMap<FileId, Tally>> {
        let mut tallies: HashMap<FileId, Tally> = HashMap::new();
        for name in names {
            for file in self.text()?.files_possibly_containing(name)? {
                let Some(entry) = self.manifest.files.get(file.index()) else { continue };
                let body = self.content.text(file);
                let found: Vec<(usize, Region)> = match entry.language {
                    Some(lang) => word_occurrences(lang, body, name),
                    // Not code: every occurrence counts as prose.
                    None => {
                        whole_word_offsets(body, name).map(|at| (at, Region::Comment)).collect()
                    }
                };
                if found.is_empty() {
                    continue;
                }
                let t = tallies.entry(file).or_default();
                for (at, region) in found {
                    t.add(at, name.len(), region);
                }
            }
        }
        Ok(tallies)
    }

    /// A resolved use's count and kind, sharpened by the file's words: the
    /// count is at least the code occurrences, and a file that brings the
    /// name in by name is an import or re-export (the use line stays the
    /// one shown).
    fn add_word_evidence(&self, r: &mut FileReference, t: &Tally) {
        r.count = r.count.max(t.code);
        let Some((at, end)) = t.first_code else { return };
        let (_, line, col) = line_at(self.content.text(r.file), at);
        if r.kind != ReferenceKind::Mention {
            return;
        }
        if let Some(k @ (ReferenceKind::Import | ReferenceKind::Reexport)) =
            line_kind(line, col + (end - at))
        {
            r.kind = k;
        }
    }

    /// The files the graph did not resolve, by their words: defining
    /// files, then code words (those with an ambiguous graph use first),
    /// strings, then comments; more occurrences and central files first.
    fn word_references(
        &self,
        tallies: &HashMap<FileId, Tally>,
        placed: &HashSet<FileId>,
        targets: &Targets,
        ambiguous: &HashMap<FileId, u32>,
    ) -> Vec<FileReference> {
        let mut rest: Vec<(Confidence, bool, u32, f32, FileReference)> = Vec::new();
        for (&file, t) in tallies {
            if placed.contains(&file) {
                continue;
            }
            let body = self.content.text(file);
            let confidence = if targets.defining.contains(&file) {
                Confidence::Defining
            } else if t.code > 0 {
                Confidence::Word
            } else if t.string > 0 {
                Confidence::String
            } else {
                Confidence::Comment
            };
            let (at, end) = t.first_code.or(t.first).unwrap_or((0, 0));
            let (line, text, col) = line_at(body, at);
            let kind = if confidence == Confidence::Defining {
                ReferenceKind::Definition
            } else {
                line_kind(text, col + (end - at)).unwrap_or(if targets.type_target {
                    ReferenceKind::TypeUse
                } else {
                    ReferenceKind::Mention
                })
            };
            let graph_line = ambiguous.get(&file);
            let reference = FileReference {
                file,
                line: match (confidence, graph_line) {
                    (Confidence::Word, Some(&l)) => l,
                    _ => line,
                },
                kind,
                confidence,
                count: t.code,
            };
            let centrality = self.file_centrality.get(file.index()).copied().unwrap_or(0.0);
            rest.push((
                confidence,
                graph_line.is_none(),
                t.code.max(t.string),
                centrality,
                reference,
            ));
        }
        rest.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.cmp(&b.1))
                .then(b.2.cmp(&a.2))
                .then(b.3.total_cmp(&a.3))
                .then(a.4.file.cmp(&b.4.file))
        });
        rest.into_iter().map(|r| r.4).collect()
    }
}

/// What the asked definitions are: the files that define them (a file
/// that only re-exports a name refers to it, it does not define it), and
/// whether any is a type.
struct Targets {
    defining: HashSet<FileId>,
    type_target: bool,
}

impl Targets {
    fn of(graph: &maguyva_graph::CallGraph, defs: &[u32]) -> Self {
        use maguyva_core::SymbolKind::{Class, Enum, Interface, Reexport, Struct, Trait, Type};
        let found = || defs.iter().filter_map(|&d| graph.definition(d));
        Targets {
            defining: found().filter(|d| d.kind != Reexport).map(|d| d.file).collect(),
            type_target: found()
                .any(|d| matches!(d.kind, Class | Struct | Enum | Interface | Trait | Type)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_and_export_lines_are_told_apart() {
        assert_eq!(line_kind("from .a import parse", 14), Some(ReferenceKind::Import));
        assert_eq!(line_kind("use crate::a::Parser;", 14), Some(ReferenceKind::Import));
        assert_eq!(line_kind("pub use self::a::Parser;", 17), Some(ReferenceKind::Reexport));
        assert_eq!(line_kind("export { parse } from './a'", 9), Some(ReferenceKind::Reexport));
        assert_eq!(line_kind("    x = parse(y)", 13), Some(ReferenceKind::Call));
        assert_eq!(line_kind("    x = parse (y)", 13), Some(ReferenceKind::Call));
        assert_eq!(line_kind("    x = parse", 13), None);
    }

    #[test]
    fn lines_of_offsets() {
        let text = "a\nbc parse\nd";
        assert_eq!(line_at(text, 5), (2, "bc parse", 3));
        assert_eq!(line_at(text, 0), (1, "a", 0));
        assert_eq!(line_at(text, 99), (3, "d", 1));
    }

    #[test]
    fn names_of_questions() {
        assert_eq!(Index::reference_names("who calls parse_config"), vec!["parse_config"]);
        assert_eq!(Index::reference_names("usages of Rack::Builder?"), vec!["Builder"]);
        assert!(Index::reference_names("who calls").is_empty());
    }
}
