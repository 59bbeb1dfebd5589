//! The report route: a bug report (a long question with prose, code,
//! tracebacks) is answered by the files to change. The report is taken
//! apart ([`ReportAnalysis`]) and each part is evidence for what can use
//! it: the words for BM25, the prose for meaning, the names for the
//! symbol table's definitions, the files, modules and traceback frames
//! for the file list. The evidence lists are fused by weighted RRF over
//! files (doc/reports.md).

use super::{Index, RankingConfig};
use crate::search::{SearchRequest, SearchResult};
use maguyva_ast::StructuralParams;
use maguyva_core::{FileId, MatchMode, Modality, Query, Result, holds_no_code, is_test_path};
use maguyva_fusion::{ReportAnalysis, fuse_evidence, last_segment};
use maguyva_trigram::KeywordParams;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// The characters of prose the meaning of a report is read from: its
/// title and first paragraphs say what it is about.
const SEMANTIC_CHARS: usize = 2000;

/// A name defined in more files than this says nothing of where to look.
const MAX_DEFINING_FILES: usize = 12;

/// A name used in more files than this says nothing of where to look.
const MAX_MENTIONING_FILES: usize = 30;

/// The report's names looked up for the mentions list, in the order the
/// report gives them: a bound on its cost for a long report.
const MOST_MENTIONED_NAMES: usize = 40;

/// Lines shown before and after the line that ties a file to a report.
const CONTEXT_LINES: u32 = 3;

/// Files each evidence list contributes.
const LIST_DEPTH: usize = 100;

/// The weights of a report's evidence lists and their RRF constant,
/// fitted on the mined pairs of `benches/localize/` (doc/reports.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReportWeights {
    /// BM25 over the report's prose and code.
    pub words: f32,
    /// BM25 over the report's title alone.
    pub title: f32,
    /// BM25 over the report's code alone (snippets, tracebacks).
    pub code: f32,
    /// Files holding the fixed text of the report's error messages and
    /// quoted literals.
    pub literals: f32,
    /// Meaning of the report's title and first paragraphs.
    pub meaning: f32,
    /// Meaning of the report's title alone.
    pub title_meaning: f32,
    /// Definitions whose names, signatures and doc summaries match the
    /// title (the structural modality).
    pub symbols: f32,
    /// Files modified by the past commits whose messages are most like
    /// the report (the history modality; empty where the indexed folder
    /// is no git work tree).
    pub history: f32,
    /// Files whose paths hold the report's words (the paths modality).
    pub paths: f32,
    /// Files defining the names the report gives.
    pub definitions: f32,
    /// Files using the names the report gives (holding them anywhere).
    pub mentions: f32,
    /// Files the report names: paths, modules, traceback frames.
    pub files: f32,
    /// The graph's neighbours of the definitions the report names: what
    /// they call and mention, and what calls and mentions them.
    pub neighbours: f32,
    /// The RRF constant.
    pub k: f32,
    /// The factor for test, documentation and example files (the fix is
    /// rarely there).
    pub test_factor: f32,
    /// The factor for files that hold no code: documentation, data and
    /// settings, the project's notes (README, CHANGELOG, ...). A report
    /// names what they name, and a fix is in code.
    pub doc_factor: f32,
    /// The text modality's ranking for the report's word lists: the one
    /// the weights above were fitted with, whatever the question ranking's
    /// own (a report is not a question).
    pub keyword: KeywordParams,
    /// The structural modality's ranking for the report's symbols list,
    /// likewise.
    pub structural: StructuralParams,
}

impl Default for ReportWeights {
    fn default() -> ReportWeights {
        ReportWeights {
            words: 1.0,
            title: 1.0,
            code: 1.0,
            literals: 0.7,
            meaning: 0.3,
            title_meaning: 0.5,
            symbols: 0.0,
            history: 0.7,
            paths: 0.7,
            definitions: 0.7,
            mentions: 0.7,
            files: 1.4,
            neighbours: 0.2,
            k: 10.0,
            test_factor: 0.5,
            doc_factor: 0.1,
            keyword: KeywordParams {
                file_evidence: 0.1,
                other_factor: 0.6,
                ..KeywordParams::default()
            },
            structural: StructuralParams { doc_words: 0.3, ..StructuralParams::default() },
        }
    }
}

impl ReportWeights {
    /// The weight of evidence list `list`.
    fn of(&self, list: Evidence) -> f32 {
        match list {
            Evidence::Words => self.words,
            Evidence::Title => self.title,
            Evidence::Code => self.code,
            Evidence::Literals => self.literals,
            Evidence::Meaning => self.meaning,
            Evidence::TitleMeaning => self.title_meaning,
            Evidence::Symbols => self.symbols,
            Evidence::History => self.history,
            Evidence::Paths => self.paths,
            Evidence::Definitions => self.definitions,
            Evidence::Mentions => self.mentions,
            Evidence::Files => self.files,
            Evidence::Neighbours => self.neighbours,
        }
    }
}

/// The evidence lists of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Evidence {
    Words,
    Title,
    Code,
    Literals,
    Meaning,
    TitleMeaning,
    Symbols,
    History,
    Paths,
    Definitions,
    Mentions,
    Files,
    Neighbours,
}

impl Evidence {
    const ALL: [Evidence; 13] = [
        Evidence::Words,
        Evidence::Title,
        Evidence::Code,
        Evidence::Literals,
        Evidence::Meaning,
        Evidence::TitleMeaning,
        Evidence::Symbols,
        Evidence::History,
        Evidence::Paths,
        Evidence::Definitions,
        Evidence::Mentions,
        Evidence::Files,
        Evidence::Neighbours,
    ];

    /// Its name in `--explain` and in a ranking file.
    fn name(self) -> &'static str {
        match self {
            Evidence::Words => "words",
            Evidence::Title => "title",
            Evidence::Code => "code",
            Evidence::Literals => "literals",
            Evidence::Meaning => "meaning",
            Evidence::TitleMeaning => "title_meaning",
            Evidence::Symbols => "symbols",
            Evidence::History => "history",
            Evidence::Paths => "paths",
            Evidence::Definitions => "definitions",
            Evidence::Mentions => "mentions",
            Evidence::Files => "files",
            Evidence::Neighbours => "neighbours",
        }
    }

    /// The modality whose rank a result reports for this list.
    fn modality(self) -> Option<Modality> {
        match self {
            Evidence::Words => Some(Modality::TEXT),
            Evidence::Meaning => Some(Modality::SEMANTIC),
            Evidence::Definitions => Some(Modality::STRUCTURAL),
            _ => None,
        }
    }
}

/// What the report route found, shown with `--explain`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportReport {
    /// Traceback frames, file paths, modules, identifiers, messages and
    /// literals the report holds.
    pub frames: usize,
    /// File paths named.
    pub paths: Vec<String>,
    /// Module paths named.
    pub modules: Vec<String>,
    /// Identifiers named, most telling first.
    pub identifiers: Vec<String>,
    /// Error messages.
    pub messages: Vec<String>,
    /// The weights in effect.
    pub weights: ReportWeights,
    /// Each evidence list's files, best first.
    pub lists: BTreeMap<&'static str, Vec<String>>,
    /// Each evidence list's scores.
    pub scores: BTreeMap<&'static str, Vec<f32>>,
}

/// What kind of evidence ties a file to a report, from the most specific
/// to the least: a result is shown at the line of its most specific tie
/// that has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TieKind {
    /// A traceback frame runs through it.
    Frame,
    /// The report names its path.
    Path,
    /// The report names its module.
    Module,
    /// It holds the fixed text of an error message or quoted literal.
    Message,
    /// It defines a name the report gives.
    Definition,
    /// It uses a name the report gives.
    Mention,
    /// It calls, or is called by, a definition the report names.
    Neighbour,
    /// It defines something like the report's title.
    Symbol,
    /// The words of the report's code.
    Code,
    /// The words of the report's title.
    Title,
    /// The report's words.
    Words,
    /// The report's meaning.
    Meaning,
    /// Past commits like the report modified it.
    History,
    /// Its path holds the report's words.
    PathWords,
}

impl TieKind {
    /// Whether the evidence is at a line: a past commit modified the whole
    /// file, and a path names the whole file.
    fn names_a_line(self) -> bool {
        !matches!(self, TieKind::History | TieKind::PathWords)
    }

    /// How a result's text says it.
    fn phrase(self) -> &'static str {
        match self {
            TieKind::Frame => "frame",
            TieKind::Path => "path",
            TieKind::Module => "module",
            TieKind::Message => "the message",
            TieKind::Definition => "definition of",
            TieKind::Mention => "uses",
            TieKind::Neighbour => "calls or is called by",
            TieKind::Symbol => "a definition like the title",
            TieKind::Code => "its code's words",
            TieKind::Title => "its title's words",
            TieKind::Words => "its words",
            TieKind::Meaning => "its meaning",
            TieKind::History => "past commits like it",
            TieKind::PathWords => "its path's words",
        }
    }
}

/// Why a file is in a report's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tie {
    /// The kind of evidence.
    pub kind: TieKind,
    /// What ties it: the name defined, the path or frame as written.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The line it is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

impl std::fmt::Display for Tie {
    /// `definition of convert_to (line 98)`, `frame pkg/util.py (line 12)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind.phrase())?;
        if !self.detail.is_empty() {
            write!(f, " {}", self.detail)?;
        }
        match self.line {
            Some(line) => write!(f, " (line {line})"),
            None => Ok(()),
        }
    }
}

/// One evidence list: files, best first, each with why.
struct EvidenceList {
    list: Evidence,
    files: Vec<Listed>,
}

/// A file of an evidence list, why it is there, and its score in the list.
type Listed = (FileId, Tie, f32);

impl Index {
    /// Answers a report: the files to change, best first, each shown
    /// through the line that ties it to the report.
    pub(crate) fn answer_report(
        &self,
        request: &SearchRequest,
        report: &ReportAnalysis,
        timings_ms: &mut BTreeMap<String, f64>,
    ) -> Result<(Vec<SearchResult>, Vec<Modality>, Option<ReportReport>)> {
        let weights = request.ranking.report;
        let t = Instant::now();
        // Lists of weight 0 are not made.
        let wanted: Vec<Evidence> =
            Evidence::ALL.into_iter().filter(|&e| weights.of(e) > 0.0).collect();
        let ranking = RankingConfig {
            keyword: weights.keyword,
            structural: weights.structural,
            ..request.ranking.clone()
        };
        let lists: Vec<EvidenceList> = wanted
            .par_iter()
            .map(|&e| self.evidence(e, report, &ranking))
            .collect::<Result<_>>()?;
        timings_ms.insert("report_evidence".to_string(), crate::millis(t.elapsed()));
        let weighted: Vec<(f32, Vec<(FileId, f32)>)> = lists
            .iter()
            .map(|l| (weights.of(l.list), l.files.iter().map(|(f, _, s)| (*f, *s)).collect()))
            .collect();
        let mut fused = fuse_evidence(&weighted, weights.k);
        for (file, score) in &mut fused {
            let Some(entry) = self.manifest.files.get(file.index()) else { continue };
            if is_test_path(&entry.path) {
                *score *= weights.test_factor;
            }
            if holds_no_code(&entry.path) {
                *score *= weights.doc_factor;
            }
        }
        fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut results = Vec::new();
        for &(file, score) in fused.iter().take(request.limit) {
            // One pass over each list gives the file's tie and its rank.
            let mut ties: Vec<&Tie> = Vec::new();
            let mut ranks = BTreeMap::new();
            for l in &lists {
                let Some(at) = l.files.iter().position(|(f, _, _)| *f == file) else { continue };
                ties.push(&l.files[at].1);
                if let Some(m) = l.list.modality() {
                    ranks.insert(m, at as u32);
                }
            }
            ties.sort_by_key(|t| t.kind);
            // The meaning of the title and of the prose tie alike.
            ties.dedup_by(|a, b| a.kind == b.kind && a.detail == b.detail);
            let line = ties.iter().find_map(|t| t.line);
            if let Some(mut r) = self.report_result(file, line, score, ranks) {
                r.ties = ties.into_iter().cloned().collect();
                results.push(r);
            }
        }
        let explain = request.explain.then(|| ReportReport {
            frames: report.frames.len(),
            paths: report.paths.clone(),
            modules: report.modules.clone(),
            identifiers: report.identifiers.iter().map(|i| i.name.clone()).collect(),
            messages: report.messages.clone(),
            weights,
            lists: lists
                .iter()
                .map(|l| {
                    let paths = l
                        .files
                        .iter()
                        .filter_map(|(f, _, _)| self.manifest.files.get(f.index()))
                        .map(|e| e.path.clone())
                        .collect();
                    (l.list.name(), paths)
                })
                .collect(),
            scores: lists
                .iter()
                .map(|l| (l.list.name(), l.files.iter().map(|(_, _, s)| *s).collect()))
                .collect(),
        });
        Ok((results, vec![Modality::TEXT, Modality::SEMANTIC, Modality::STRUCTURAL], explain))
    }

    /// Evidence list `list` of a report.
    fn evidence(
        &self,
        list: Evidence,
        report: &ReportAnalysis,
        ranking: &RankingConfig,
    ) -> Result<EvidenceList> {
        let files = match list {
            Evidence::Words => {
                self.ranked_by(Modality::TEXT, &report.words(), ranking, TieKind::Words)?
            }
            Evidence::Title => {
                self.ranked_by(Modality::TEXT, &report.title, ranking, TieKind::Title)?
            }
            Evidence::Code => {
                self.ranked_by(Modality::TEXT, &report.code, ranking, TieKind::Code)?
            }
            Evidence::Meaning => self.ranked_by(
                Modality::SEMANTIC,
                &meaning_text(report),
                ranking,
                TieKind::Meaning,
            )?,
            Evidence::TitleMeaning => {
                self.ranked_by(Modality::SEMANTIC, &report.title, ranking, TieKind::Meaning)?
            }
            Evidence::Symbols => {
                self.ranked_by(Modality::STRUCTURAL, &report.title, ranking, TieKind::Symbol)?
            }
            Evidence::History => self.ranked_by(
                maguyva_history::HISTORY,
                &report.words(),
                ranking,
                TieKind::History,
            )?,
            Evidence::Paths => self.ranked_by(
                maguyva_paths::PATHS,
                &report.path_words(),
                ranking,
                TieKind::PathWords,
            )?,
            Evidence::Literals => self.literals_list(report)?,
            Evidence::Definitions => self.definitions_list(report)?,
            Evidence::Mentions => self.mentions_list(report)?,
            Evidence::Files => self.named_files_list(report),
            Evidence::Neighbours => self.neighbours_list(report)?,
        };
        Ok(EvidenceList { list, files })
    }

    /// A modality's files for `text` (a part of the report), each by its
    /// best hit.
    fn ranked_by(
        &self,
        modality: Modality,
        text: &str,
        ranking: &RankingConfig,
        kind: TieKind,
    ) -> Result<Vec<Listed>> {
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let query = Query::with_mode(text, MatchMode::Keyword, false)?;
        // Several hits may fall in one file.
        let hits = self.retriever(modality, ranking)?.search(&query, LIST_DEPTH * 3)?;
        let mut seen = std::collections::HashSet::new();
        Ok(hits
            .iter()
            .filter(|h| seen.insert(h.file))
            .take(LIST_DEPTH)
            .map(|h| {
                let line = kind.names_a_line().then(|| h.lines.start());
                (h.file, Tie { kind, detail: String::new(), line }, h.score)
            })
            .collect())
    }

    /// A file's result, through the lines around the one that ties it to
    /// the report (within its fragment).
    fn report_result(
        &self,
        file: FileId,
        line: Option<u32>,
        score: f32,
        ranks: BTreeMap<Modality, u32>,
    ) -> Option<SearchResult> {
        let line = line.unwrap_or(1);
        let chunk =
            self.fragments.at_line(file, line).or_else(|| self.fragments.of_file(file).next())?;
        let frag = self.fragments.try_get(chunk)?;
        let (start, end) = (frag.lines.start(), frag.lines.end());
        let line = line.clamp(start, end);
        let span = maguyva_core::LineSpan::new(
            line.saturating_sub(CONTEXT_LINES).max(start),
            (line + CONTEXT_LINES).min(end),
        );
        self.result(chunk, file, span, score, ranks)
    }

    /// Files defining the names the report gives: a name defined in few
    /// files, written in code and repeated, is the strongest evidence.
    fn definitions_list(&self, report: &ReportAnalysis) -> Result<Vec<Listed>> {
        let table = self.symbols()?;
        let mut scores: HashMap<FileId, (f32, Tie)> = HashMap::new();
        for ident in &report.identifiers {
            let name = last_segment(&ident.name);
            let mut defining: Vec<(FileId, u32)> = Vec::new();
            for id in table.by_normalized_name(&maguyva_ast::normalize(name)) {
                if let Some(sym) = table.get(id)
                    && sym.name == name
                    && sym.kind != maguyva_ast::SymbolKind::Reexport
                    && !defining.iter().any(|(f, _)| *f == sym.file)
                {
                    defining.push((sym.file, sym.name_line));
                }
            }
            if defining.is_empty() || defining.len() > MAX_DEFINING_FILES {
                continue;
            }
            let weight = name_weight(ident, defining.len());
            for (file, line) in defining {
                let tie =
                    Tie { kind: TieKind::Definition, detail: name.to_string(), line: Some(line) };
                let entry = scores.entry(file).or_insert((0.0, tie.clone()));
                if weight > entry.0 {
                    entry.1 = tie;
                }
                entry.0 += weight;
            }
        }
        Ok(ranked(scores))
    }

    /// Files holding the fixed parts of the report's error messages and
    /// quoted literals (the text between the values a message quotes),
    /// a part found in fewer files counting more.
    fn literals_list(&self, report: &ReportAnalysis) -> Result<Vec<Listed>> {
        let mut scores: HashMap<FileId, (f32, Tie)> = HashMap::new();
        for piece in literal_pieces(report) {
            let files = self.files_holding(&piece, MAX_DEFINING_FILES)?;
            let weight = 1.0 / files.len().max(1) as f32;
            for (file, line) in files {
                let tie = Tie { kind: TieKind::Message, detail: piece.clone(), line: Some(line) };
                scores.entry(file).or_insert((0.0, tie)).0 += weight;
            }
        }
        Ok(ranked(scores))
    }

    /// Files using the names the report gives, each name weighted as in
    /// [`Index::definitions_list`] by the files holding it: where a name
    /// is used is where a change to it lands, and a fix often touches its
    /// callers too.
    fn mentions_list(&self, report: &ReportAnalysis) -> Result<Vec<Listed>> {
        let mut scores: HashMap<FileId, (f32, Tie)> = HashMap::new();
        for ident in report.identifiers.iter().take(MOST_MENTIONED_NAMES) {
            let name = last_segment(&ident.name);
            // Shorter names are parts of too many others.
            if name.len() < 4 {
                continue;
            }
            let files = self.files_holding(name, MAX_MENTIONING_FILES)?;
            let weight = name_weight(ident, files.len());
            for (file, line) in files {
                let tie =
                    Tie { kind: TieKind::Mention, detail: name.to_string(), line: Some(line) };
                scores.entry(file).or_insert((0.0, tie)).0 += weight;
            }
        }
        Ok(ranked(scores))
    }

    /// The files holding `text` (case-sensitive), each at the line of its
    /// best match; none when more than `most` do.
    fn files_holding(&self, text: &str, most: usize) -> Result<Vec<(FileId, u32)>> {
        let hits = self.text()?.literal(&self.content, &self.fragments, text, false, most + 1)?;
        let mut files: Vec<(FileId, u32)> = Vec::new();
        for h in &hits {
            if !files.iter().any(|(f, _)| *f == h.file) {
                files.push((h.file, h.lines.start()));
            }
        }
        if files.len() > most {
            files.clear();
        }
        Ok(files)
    }

    /// The graph's neighbours of the definitions the report names, each
    /// definition weighted as in [`Index::definitions_list`].
    fn neighbours_list(&self, report: &ReportAnalysis) -> Result<Vec<Listed>> {
        let graph = self.graph()?.graph();
        let mut defs: Vec<(u32, f32)> = Vec::new();
        for ident in &report.identifiers {
            let named = graph.definitions_named(last_segment(&ident.name));
            let files: std::collections::HashSet<FileId> =
                named.iter().filter_map(|&d| graph.definition(d)).map(|d| d.file).collect();
            if named.is_empty() || files.len() > MAX_DEFINING_FILES {
                continue;
            }
            let weight = name_weight(ident, files.len());
            defs.extend(named.into_iter().map(|d| (d, weight)));
        }
        let mut scores: HashMap<FileId, (f32, Tie)> = HashMap::new();
        for (node, weight) in graph.related(&defs) {
            let file = graph.node_file(node);
            let detail =
                graph.node_definition(node).map(|(_, d)| d.name.clone()).unwrap_or_default();
            let line = graph.node_definition(node).map(|(_, d)| d.lines.start());
            let tie = Tie { kind: TieKind::Neighbour, detail, line };
            let entry = scores.entry(file).or_insert((0.0, tie));
            entry.0 += weight;
        }
        Ok(ranked(scores))
    }

    /// Files the report names: traceback frames (the last frames, nearest
    /// the failure, first), file paths, and module paths.
    fn named_files_list(&self, report: &ReportAnalysis) -> Vec<Listed> {
        // Most reports name no file: the index's paths are not looked up.
        if report.frames.is_empty() && report.paths.is_empty() && report.modules.is_empty() {
            return Vec::new();
        }
        let paths = PathLookup::new(self.manifest.files.iter().map(|f| f.path.as_str()));
        let mut scores: HashMap<FileId, (f32, Tie)> = HashMap::new();
        let mut add = |files: Vec<FileId>, score: f32, tie: Tie| {
            let share = score / files.len().max(1) as f32;
            for f in files {
                let entry = scores.entry(f).or_insert((0.0, tie.clone()));
                entry.0 += share;
            }
        };
        let frames = report.frames.len();
        for (i, frame) in report.frames.iter().enumerate() {
            // Later frames are nearer the failure.
            let score = 2.0 + (i + 1) as f32 / frames as f32;
            let tie = Tie { kind: TieKind::Frame, detail: frame.file.clone(), line: frame.line };
            add(paths.by_path(&frame.file), score, tie);
        }
        for path in &report.paths {
            let tie = Tie { kind: TieKind::Path, detail: path.clone(), line: None };
            add(paths.by_path(path), 3.0, tie);
        }
        for module in &report.modules {
            let tie = Tie { kind: TieKind::Module, detail: module.clone(), line: None };
            add(paths.by_module(module), 1.5, tie);
        }
        ranked(scores)
    }
}

/// The text a report's meaning is read from: its title and prose, up to
/// [`SEMANTIC_CHARS`].
fn meaning_text(report: &ReportAnalysis) -> String {
    let mut text = report.title.clone();
    for line in report.prose.lines().skip(1) {
        if text.len() >= SEMANTIC_CHARS {
            break;
        }
        text.push('\n');
        text.push_str(line);
    }
    let end = (0..=SEMANTIC_CHARS.min(text.len())).rev().find(|&i| text.is_char_boundary(i));
    text.truncate(end.unwrap_or(0));
    text
}

/// Parts of a report's messages and literals fixed enough to be in the
/// code: split where a message quotes or formats a value, at least 12
/// characters and two words each.
fn literal_pieces(report: &ReportAnalysis) -> Vec<String> {
    const MOST: usize = 16;
    let mut pieces: Vec<String> = Vec::new();
    for text in report.messages.iter().chain(&report.literals) {
        let split = text.split(|c: char| {
            matches!(c, '\'' | '"' | '`' | '{' | '}' | '%' | '<' | '>' | '[' | ']')
                || c.is_ascii_digit()
        });
        for piece in split {
            let piece = piece.trim_matches(|c: char| {
                c.is_whitespace() || matches!(c, ':' | ',' | '.' | '(' | ')')
            });
            if piece.len() >= 12
                && piece.split_whitespace().nth(1).is_some()
                && !pieces.iter().any(|p| p == piece)
                && pieces.len() < MOST
            {
                pieces.push(piece.to_string());
            }
        }
    }
    pieces
}

/// How telling a name of the report is: written in code and repeated, and
/// defined in few files.
fn name_weight(ident: &maguyva_fusion::ReportIdentifier, defining_files: usize) -> f32 {
    let place = if ident.in_code { 1.0 } else { 0.7 };
    place * (1.0 + (ident.count as f32).ln()) / defining_files.max(1) as f32
}

/// Files by score, best first (ties by file order).
fn ranked(scores: HashMap<FileId, (f32, Tie)>) -> Vec<Listed> {
    let mut v: Vec<(FileId, (f32, Tie))> = scores.into_iter().collect();
    v.sort_by(|a, b| b.1.0.total_cmp(&a.1.0).then(a.0.cmp(&b.0)));
    v.into_iter().take(LIST_DEPTH).map(|(f, (s, t))| (f, t, s)).collect()
}

/// The index's paths, looked up by a path or module as a report writes it.
struct PathLookup<'a> {
    /// File name to the files of that name.
    by_name: HashMap<&'a str, Vec<(FileId, &'a str)>>,
    /// Path without its extension (and a package's folder, for
    /// `__init__`, `mod`, `index`) to the files.
    by_stem: HashMap<&'a str, Vec<(FileId, &'a str)>>,
}

impl<'a> PathLookup<'a> {
    fn new(paths: impl Iterator<Item = &'a str>) -> PathLookup<'a> {
        let mut by_name: HashMap<&str, Vec<(FileId, &str)>> = HashMap::new();
        let mut by_stem: HashMap<&str, Vec<(FileId, &str)>> = HashMap::new();
        for (i, path) in paths.enumerate() {
            let id = FileId(i as u32);
            let name = path.rsplit('/').next().unwrap_or(path);
            by_name.entry(name).or_default().push((id, path));
            let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
            let stem_name = stem.rsplit('/').next().unwrap_or(stem);
            let key = match stem_name {
                "__init__" | "mod" | "index" | "lib" => {
                    stem.rsplit_once('/').map_or(stem, |(folder, _)| folder)
                }
                _ => stem,
            };
            let key = key.rsplit('/').next().unwrap_or(key);
            by_stem.entry(key).or_default().push((id, path));
        }
        PathLookup { by_name, by_stem }
    }

    /// The files whose path ends with the most trailing parts of `written`
    /// (an absolute path of an installed copy matches the repository's).
    fn by_path(&self, written: &str) -> Vec<FileId> {
        let parts: Vec<&str> = written.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
        let Some(name) = parts.last() else { return Vec::new() };
        let candidates = self.by_name.get(name).map(Vec::as_slice).unwrap_or(&[]);
        best_matches(candidates, &parts, 1, |p| p.split('/').collect())
    }

    /// The files of a dotted module path, by its longest prefix that is a
    /// file or package (`pkg.sub.Class.method` is `pkg/sub.py`).
    fn by_module(&self, module: &str) -> Vec<FileId> {
        let parts: Vec<&str> = module.split('.').collect();
        for end in (2..=parts.len()).rev() {
            let prefix = &parts[..end];
            let Some(last) = prefix.last() else { continue };
            let candidates = self.by_stem.get(last).map(Vec::as_slice).unwrap_or(&[]);
            let found = best_matches(candidates, prefix, 2, |p| module_parts(p));
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }
}

/// A path's parts as a module: without the extension, and without a
/// package's `__init__`, `mod` or `index` file name.
fn module_parts(path: &str) -> Vec<&str> {
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let mut parts: Vec<&str> = stem.split('/').collect();
    if parts.len() > 1 && matches!(parts.last(), Some(&("__init__" | "mod" | "index" | "lib"))) {
        parts.pop();
    }
    parts
}

/// Of the candidates, those sharing the most trailing parts with `wanted`,
/// at least `min_shared` of them; one shared part (the name alone) counts
/// only when it is unambiguous.
fn best_matches<'a>(
    candidates: &[(FileId, &'a str)],
    wanted: &[&str],
    min_shared: usize,
    parts_of: impl Fn(&'a str) -> Vec<&'a str>,
) -> Vec<FileId> {
    let mut best = 0;
    let mut found = Vec::new();
    for &(id, path) in candidates {
        let parts = parts_of(path);
        let shared =
            parts.iter().rev().zip(wanted.iter().rev()).take_while(|(a, b)| a == b).count();
        if shared > best {
            best = shared;
            found.clear();
        }
        if shared == best && shared > 0 {
            found.push(id);
        }
    }
    if best < min_shared || best == 1 && found.len() > 1 && wanted.len() > 1 {
        return Vec::new();
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(paths: &[&'static str]) -> PathLookup<'static> {
        PathLookup::new(paths.iter().copied())
    }

    #[test]
    fn paths_and_modules_find_the_repository_files() {
        let l = lookup(&[
            "pkg/units/util.py",
            "pkg/core/util.py",
            "pkg/units/__init__.py",
            "pkg/units/quantities.py",
            "docs/util.py",
        ]);
        assert_eq!(l.by_path("/usr/lib/python3/site-packages/pkg/units/util.py"), [FileId(0)]);
        assert_eq!(l.by_path("units/util.py"), [FileId(0)]);
        // The name alone is ambiguous: nothing.
        assert!(l.by_path("/elsewhere/util.py").is_empty());
        assert_eq!(l.by_module("pkg.units.quantities.Quantity.convert"), [FileId(3)]);
        assert_eq!(l.by_module("pkg.units"), [FileId(2)]);
        assert!(l.by_module("other.thing").is_empty());
        // A module of another package sharing only a file name is not one of these.
        assert!(l.by_module("os.util").is_empty());
    }
}
