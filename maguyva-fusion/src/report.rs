//! Reading a bug report: a long question (a title, paragraphs, a
//! traceback, a snippet that fails, expected and actual output) is taken
//! apart, not matched as one string. Its code, the files and modules it
//! names, its traceback frames, its error messages and quoted literals,
//! and its prose are told apart, so each can be evidence for the retriever
//! that can use it (doc/reports.md).
//!
//! ```
//! use maguyva_fusion::ReportAnalysis;
//! let text = "Plot crashes with a log scale\n\nCalling `set_scale` on an empty axis fails:\n\
//!     ```\nTraceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/plotlib/axis.py\", line 12, in set_scale\n\
//!     ValueError: scale must be positive\n```\nIt worked in 1.2 and the docs of plotlib.axis.Axis say nothing.";
//! let report = ReportAnalysis::of(text).expect("a report");
//! assert_eq!(report.frames[0].file, "/usr/lib/python3/site-packages/plotlib/axis.py");
//! assert_eq!(report.messages, ["scale must be positive"]);
//! assert!(report.modules.contains(&"plotlib.axis.Axis".to_string()));
//! assert!(report.identifiers.iter().any(|i| i.name == "set_scale"));
//! ```

use crate::query_text::{is_camel, is_identifier_char, is_snake};
use maguyva_core::FileId;
use std::collections::BTreeMap;

/// Prose words (outside code) that make a question a report on their own.
pub const REPORT_PROSE_WORDS: usize = 30;

/// Prose words enough for a report when the text also holds code or a
/// traceback, on three lines or more.
pub const REPORT_PROSE_WORDS_WITH_CODE: usize = 5;

/// One frame of a traceback or a stack trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The file as the trace writes it (absolute, relative, or a bare
    /// Java-style file name).
    pub file: String,
    /// The line, when the trace gives it.
    pub line: Option<u32>,
    /// The function, when the trace gives it.
    pub function: Option<String>,
}

/// An identifier the report names, with where and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportIdentifier {
    /// The name as written (the last segment of a qualified name).
    pub name: String,
    /// How many times it occurs.
    pub count: u32,
    /// Whether it occurs in code (a code block, an inline code span, a
    /// traceback) rather than only in prose.
    pub in_code: bool,
}

/// What a bug report holds, told apart.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportAnalysis {
    /// The first non-empty line.
    pub title: String,
    /// The text outside code blocks and tracebacks.
    pub prose: String,
    /// Fenced blocks, indented blocks and inline code spans.
    pub code: String,
    /// Identifiers named in code or shaped like code in prose.
    pub identifiers: Vec<ReportIdentifier>,
    /// Slashed file paths with an extension (`src/app/config.py`), as
    /// written, without a line suffix.
    pub paths: Vec<String>,
    /// Dotted module paths (`pkg.sub.module`, `pkg.sub.Class.method`).
    pub modules: Vec<String>,
    /// Traceback and stack-trace frames, in the order given.
    pub frames: Vec<Frame>,
    /// Error messages (`ValueError: bad value` gives `bad value`).
    pub messages: Vec<String>,
    /// Quoted literals of the prose.
    pub literals: Vec<String>,
}

/// File extensions of source code, for paths and frames.
const CODE_EXTENSIONS: &[&str] = &[
    "py", "pyx", "pyi", "rs", "go", "js", "jsx", "mjs", "cjs", "ts", "tsx", "java", "kt", "kts",
    "scala", "rb", "php", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "swift", "m", "mm",
    "ex", "exs", "erl", "hs", "lua", "zig", "sh", "bash", "pl", "r", "jl", "dart", "vue", "svelte",
    "clj", "ml", "fs", "groovy", "toml", "yaml", "yml", "json", "cfg", "ini", "rst", "md", "txt",
    "html", "css", "scss", "sql", "proto", "gradle", "xml",
];

impl ReportAnalysis {
    /// The analysis of `text` when it reads as a report (a long question
    /// with prose, or prose with code or a traceback); None for a short
    /// query, which keeps the intent classifier's rules.
    pub fn of(text: &str) -> Option<ReportAnalysis> {
        let analysis = ReportAnalysis::read(text);
        let prose_words = analysis.prose.split_whitespace().count();
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
        let has_code =
            (!analysis.code.trim().is_empty() || !analysis.frames.is_empty()) && lines >= 3;
        (prose_words >= REPORT_PROSE_WORDS
            || has_code && prose_words >= REPORT_PROSE_WORDS_WITH_CODE)
            .then_some(analysis)
    }

    /// The analysis of any text, report or not.
    pub fn read(text: &str) -> ReportAnalysis {
        let text = without_comments(&text.replace("\r\n", "\n"));
        let mut report = ReportAnalysis::default();
        let mut idents: BTreeMap<String, (u32, bool, usize)> = BTreeMap::new();
        let mut in_fence = false;
        for line in text.lines() {
            let trimmed = line.trim();
            if report.title.is_empty() && !trimmed.is_empty() {
                report.title = trimmed.to_string();
            }
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
                continue;
            }
            report.read_frames(trimmed);
            report.read_message(trimmed);
            let code_line = in_fence || is_code_line(line);
            if code_line {
                push_line(&mut report.code, line);
                note_identifiers(&mut idents, trimmed, true);
            } else {
                let (prose, spans) = split_inline_code(line);
                let prose = without_links(&prose);
                for span in &spans {
                    push_line(&mut report.code, span);
                    note_identifiers(&mut idents, span, true);
                }
                note_identifiers(&mut idents, &prose, false);
                report.literals.extend(quoted_literals(&prose));
                push_line(&mut report.prose, &prose);
            }
            // In code, a dotted name is an expression (`inv.restock`) unless
            // it is imported.
            let statement = trimmed.trim_start_matches(">>> ").trim_start_matches("... ");
            let imports =
                ["import ", "from ", "use ", "require "].iter().any(|k| statement.starts_with(k));
            report.read_paths(trimmed, !code_line || imports);
        }
        let frames: Vec<&str> = report.frames.iter().map(|f| f.file.as_str()).collect();
        report.paths.retain(|p| !frames.contains(&p.as_str()));
        for frame in &report.frames {
            if let Some(f) = &frame.function {
                note(&mut idents, f, true);
            }
        }
        let mut identifiers: Vec<(usize, ReportIdentifier)> = idents
            .into_iter()
            .map(|(name, (count, in_code, first))| {
                (first, ReportIdentifier { name, count, in_code })
            })
            .collect();
        identifiers.sort_by_key(|(first, _)| *first);
        report.identifiers = identifiers.into_iter().map(|(_, i)| i).collect();
        dedup(&mut report.paths);
        dedup(&mut report.modules);
        dedup(&mut report.messages);
        dedup(&mut report.literals);
        report
    }

    /// The text the report's words are ranked by: its prose, then its
    /// code (without the comments of its template).
    pub fn words(&self) -> String {
        format!("{}\n{}", self.prose, self.code)
    }

    /// The words a file's path is matched with: [`words`](Self::words)
    /// without the extensions of the file names it writes (`inventory.py`
    /// gives `inventory`), since an extension is in most paths and tells
    /// no file from another.
    pub fn path_words(&self) -> String {
        let mut out = String::new();
        for word in self.words().split_whitespace() {
            let bare = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
            let kept = match bare.rsplit_once('.') {
                Some((stem, _)) if has_code_extension(bare) => stem,
                _ => word,
            };
            out.push_str(kept);
            out.push(' ');
        }
        out
    }

    /// The frames of one line: Python's `File "x.py", line 3, in f`, and
    /// `path.ext:line` forms (JavaScript, Rust, Go, Java's `(X.java:12)`).
    fn read_frames(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("File \"")
            && let Some((file, tail)) = rest.split_once('"')
        {
            let line_no = tail
                .split_once("line ")
                .and_then(|(_, t)| t.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|n| n.parse().ok());
            let function = tail
                .split_once(", in ")
                .map(|(_, f)| f.trim().to_string())
                .filter(|f| f.chars().all(is_identifier_char) && !f.is_empty());
            self.frames.push(Frame { file: file.to_string(), line: line_no, function });
            return;
        }
        let java_at = line.strip_prefix("at ").map(str::trim);
        for word in line.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '<' | '>')) {
            let Some((file, line_no)) = file_with_line(word) else { continue };
            let function = java_at
                .and_then(|a| a.split('(').next())
                .and_then(|q| q.trim().rsplit('.').next())
                .filter(|f| !f.is_empty() && f.chars().all(is_identifier_char))
                .map(str::to_string);
            self.frames.push(Frame { file: file.to_string(), line: Some(line_no), function });
        }
    }

    /// The message of an error line: `ValueError: x`, `error: x`,
    /// `thread 'main' panicked at ...: x`.
    fn read_message(&mut self, line: &str) {
        let Some((head, message)) = line.split_once(": ") else { return };
        let head_word = head.rsplit(['.', ' ']).next().unwrap_or(head);
        let is_error_name = ["Error", "Exception", "Warning", "Panic"]
            .iter()
            .any(|s| head_word.ends_with(s) && head_word.len() > s.len())
            && head_word.chars().all(is_identifier_char)
            && !head.contains(' ');
        let is_error_word = matches!(head.to_lowercase().as_str(), "error" | "fatal" | "panic");
        let message = message.trim();
        if (is_error_name || is_error_word) && message.len() >= 3 {
            self.messages.push(message.to_string());
        }
    }

    /// File paths, and with `modules` module paths, of one line.
    fn read_paths(&mut self, line: &str, modules: bool) {
        for word in line.split(|c: char| {
            c.is_whitespace()
                || matches!(c, '`' | '"' | '\'' | '(' | ')' | '[' | ']' | ',' | '<' | '>')
        }) {
            let word = word.trim_end_matches(['.', ':', ';', '!', '?']);
            if let Some(path) = blob_path(word) {
                self.paths.push(path.to_string());
            } else if word.contains("://") {
                continue;
            } else if let Some((file, _)) = file_with_line(word) {
                if file.contains('/') {
                    self.paths.push(file.to_string());
                }
            } else if word.contains('/') && has_code_extension(word) {
                self.paths.push(word.to_string());
            } else if modules && is_module_path(word) {
                self.modules.push(word.to_string());
            }
        }
    }
}

/// The text without its HTML comments: an issue template's instructions
/// (`<!-- Please check the contributing guidelines ... -->`) are not the
/// report.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(a) = rest.find("<!--") {
        out.push_str(&rest[..a]);
        match rest[a..].find("-->") {
            Some(b) => rest = &rest[a + b + 3..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Prose without its web addresses: a link's host, owner and query words
/// (`https`, `github`, `issues`, `width`) are not what the report is
/// about. A link to a file of the repository is read as a path before
/// (`blob_path`).
fn without_links(prose: &str) -> String {
    let mut out = String::with_capacity(prose.len());
    let mut rest = prose;
    let next_link = |text: &str| ["http://", "https://"].iter().filter_map(|p| text.find(p)).min();
    while let Some(a) = next_link(rest) {
        out.push_str(&rest[..a]);
        out.push(' ');
        let tail = &rest[a..];
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '>' | ']' | '"' | '\'' | '<'))
            .unwrap_or(tail.len());
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `https://host/owner/repo/blob/REF/src/x.py#L10` names `src/x.py`.
fn blob_path(word: &str) -> Option<&str> {
    let (_, rest) = word.split_once("/blob/")?;
    let (_, path) = rest.split_once('/')?;
    let path = path.split(['#', '?']).next()?;
    (has_code_extension(path) && !path.is_empty()).then_some(path)
}

/// `src/x.rs:12` or `src/x.rs:12:5` (and `X.java:12`): the file and line.
fn file_with_line(word: &str) -> Option<(&str, u32)> {
    let word = word.trim_start_matches('@').trim_end_matches([',', ';', ':']);
    let mut parts = word.split(':');
    let file = parts.next()?;
    let line = parts.next()?.parse::<u32>().ok()?;
    if parts.next().is_some_and(|c| c.parse::<u32>().is_err()) {
        return None;
    }
    (has_code_extension(file) && !file.contains("://")).then_some((file, line))
}

fn has_code_extension(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && CODE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
                && name.chars().all(|c| is_identifier_char(c) || matches!(c, '.' | '-' | '+'))
        }
        None => false,
    }
}

/// `pkg.sub.module`: dotted identifiers, two dots or more, or one dot
/// between lowercase names (`pandas.core`); not a file name, a version or
/// an abbreviation.
fn is_module_path(word: &str) -> bool {
    let word = word.trim_end_matches("()");
    let parts: Vec<&str> = word.split('.').collect();
    if parts.len() < 2 || has_code_extension(word) {
        return false;
    }
    let identifiers = parts.iter().all(|p| {
        p.len() >= 2
            && p.chars().all(is_identifier_char)
            && p.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
    });
    // Host names are dotted too.
    let host = parts.last().is_some_and(|p| matches!(*p, "com" | "org" | "net" | "io" | "dev"));
    identifiers
        && !host
        && (parts.len() >= 3
            || parts[0].chars().all(|c| c.is_lowercase() || c == '_' || c.is_ascii_digit()))
}

/// Whether a line outside a fence is code: indented by four spaces or a
/// tab, an interpreter prompt, or a traceback line.
fn is_code_line(line: &str) -> bool {
    let trimmed = line.trim_start();
    line.starts_with("    ")
        || line.starts_with('\t')
        || trimmed.starts_with(">>> ")
        || trimmed.starts_with("... ")
        || trimmed.starts_with("Traceback (most recent call last)")
        || trimmed.starts_with("File \"")
}

/// A line's prose and its inline code spans (`` `x` ``).
fn split_inline_code(line: &str) -> (String, Vec<&str>) {
    let mut prose = String::new();
    let mut spans = Vec::new();
    let mut rest = line;
    while let Some(a) = rest.find('`') {
        let Some(b) = rest[a + 1..].find('`') else { break };
        prose.push_str(&rest[..a]);
        prose.push(' ');
        spans.push(&rest[a + 1..a + 1 + b]);
        rest = &rest[a + 2 + b..];
    }
    prose.push_str(rest);
    (prose, spans)
}

/// Double-quoted (or single-quoted, with letters inside) literals of a
/// prose line, 3 to 200 characters.
fn quoted_literals(prose: &str) -> Vec<String> {
    let mut out = Vec::new();
    for q in ['"', '\''] {
        let mut rest = prose;
        while let Some(a) = rest.find(q) {
            // An apostrophe inside a word (`don't`) opens nothing.
            let opens =
                q == '"' || rest[..a].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
            let Some(b) = rest[a + 1..].find(q) else { break };
            let inside = &rest[a + 1..a + 1 + b];
            if opens && (3..=200).contains(&inside.len()) && inside.chars().any(char::is_alphabetic)
            {
                out.push(inside.to_string());
                rest = &rest[a + 2 + b..];
            } else {
                rest = &rest[a + 1..];
            }
        }
    }
    out
}

/// Notes the identifiers of a span: in code every name that is shaped like
/// code or called (`name(`); in prose only names shaped like code.
fn note_identifiers(idents: &mut BTreeMap<String, (u32, bool, usize)>, text: &str, in_code: bool) {
    let bytes = text.as_bytes();
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        if is_identifier_char(c) {
            start.get_or_insert(i);
            continue;
        }
        let Some(s) = start.take() else { continue };
        let word = &text[s..i];
        let called = bytes.get(i) == Some(&b'(');
        let after_keyword =
            text[..s].trim_end().rsplit(|c: char| !c.is_alphanumeric()).next().is_some_and(|k| {
                matches!(k, "def" | "class" | "fn" | "func" | "function" | "struct" | "import")
            });
        let shaped = is_camel(word) || is_snake(word);
        if word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
            && word.len() >= 3
            && (shaped || in_code && (called || after_keyword))
        {
            note(idents, word, in_code);
        }
    }
}

fn note(idents: &mut BTreeMap<String, (u32, bool, usize)>, word: &str, in_code: bool) {
    let order = idents.len();
    let entry = idents.entry(word.to_string()).or_insert((0, false, order));
    entry.0 += 1;
    entry.1 |= in_code;
}

fn push_line(buf: &mut String, line: &str) {
    buf.push_str(line);
    buf.push('\n');
}

fn dedup(items: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|x| seen.insert(x.clone()));
}

/// Weighted Reciprocal Rank Fusion of scored file lists, each best
/// first: a file at zero-based position `rank` of a list of weight `w`
/// gains `w / (k + rank + 1)`. Files of equal score in a list share the
/// mean of their positions: the list does not tell them apart, and their
/// order (file order) says nothing. A file listed twice counts once, at
/// its first place. Files best first; equal scores by file order.
pub fn fuse_evidence(lists: &[(f32, Vec<(FileId, f32)>)], k: f32) -> Vec<(FileId, f32)> {
    let mut scores: BTreeMap<FileId, f32> = BTreeMap::new();
    for (weight, files) in lists {
        if *weight <= 0.0 {
            continue;
        }
        let mut seen = std::collections::HashSet::new();
        let files: Vec<(FileId, f32)> =
            files.iter().copied().filter(|(f, _)| seen.insert(*f)).collect();
        let mut start = 0;
        for group in files.chunk_by(|a, b| a.1 == b.1) {
            let rank = start as f32 + (group.len() - 1) as f32 / 2.0;
            for (file, _) in group {
                *scores.entry(*file).or_insert(0.0) += weight / (k + rank + 1.0);
            }
            start += group.len();
        }
    }
    let mut fused: Vec<(FileId, f32)> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Lists of files with scores from a few values, so that ties occur,
    /// best first.
    fn lists() -> impl Strategy<Value = Vec<(f32, Vec<(FileId, f32)>)>> {
        let file = ((0u32..30).prop_map(FileId), (0u8..4).prop_map(f32::from));
        let list =
            (0.0f32..2.0, proptest::collection::vec(file, 0..20)).prop_map(|(w, mut files)| {
                files.sort_by(|a, b| b.1.total_cmp(&a.1));
                (w, files)
            });
        proptest::collection::vec(list, 0..5)
    }

    proptest! {
        #[test]
        fn any_text_is_read_and_what_it_names_is_in_it(text in "(?s)[a-zA-Z0-9_ ./:\"'`(),<>!#\n\r\t\u{e9}\u{1F600}-]{0,300}") {
            let report = ReportAnalysis::read(&text);
            let clean = text.replace("\r\n", "\n");
            for path in report.paths.iter().chain(&report.modules) {
                prop_assert!(clean.contains(path.as_str()), "{path:?}");
            }
            // A literal's prose stands where inline code was taken out.
            for literal in &report.literals {
                prop_assert!(literal.split_whitespace().all(|w| clean.contains(w)), "{literal:?}");
            }
            for frame in &report.frames {
                prop_assert!(clean.contains(frame.file.as_str()));
            }
            for ident in &report.identifiers {
                prop_assert!(clean.contains(ident.name.as_str()) && ident.count >= 1);
            }
        }

        #[test]
        fn fused_evidence_keeps_the_rrf_invariants(lists in lists(), k in 1.0f32..80.0) {
            let fused = fuse_evidence(&lists, k);
            // One entry per file, best first.
            let mut files: Vec<FileId> = fused.iter().map(|f| f.0).collect();
            files.sort();
            files.dedup();
            prop_assert_eq!(files.len(), fused.len());
            prop_assert!(fused.windows(2).all(|w| w[0].1 >= w[1].1));
            // The order of the lists changes nothing.
            let mut reversed = lists.clone();
            reversed.reverse();
            let again = fuse_evidence(&reversed, k);
            prop_assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), again.iter().map(|f| f.0).collect::<Vec<_>>());
            // A list of weight 0 removes its influence.
            let mut zeroed = lists.clone();
            zeroed.push((0.0, (0..30).map(|f| (FileId(f), 1.0)).collect()));
            prop_assert_eq!(&fuse_evidence(&zeroed, k), &fused);
            // Adding a list never lowers a file's score.
            let mut more = lists.clone();
            more.push((1.0, vec![(FileId(3), 1.0)]));
            let more = fuse_evidence(&more, k);
            for (f, s) in &fused {
                let after = more.iter().find(|x| x.0 == *f).map_or(0.0, |x| x.1);
                prop_assert!(after >= *s);
            }
            // Files of equal score in a list gain alike from it: reordering
            // them changes nothing.
            let mut shuffled = lists.clone();
            for (_, files) in &mut shuffled {
                files.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
            }
            let same = fuse_evidence(&shuffled, k);
            for ((f, s), (g, t)) in fused.iter().zip(&same) {
                prop_assert_eq!(f, g);
                prop_assert!((s - t).abs() <= 1e-5 * s.abs().max(1.0));
            }
        }
    }

    #[test]
    fn files_of_equal_score_share_their_mean_rank() {
        let list = vec![(FileId(7), 3.0), (FileId(1), 2.0), (FileId(2), 2.0), (FileId(0), 1.0)];
        let fused = fuse_evidence(&[(1.0, list)], 1.0);
        let score = |f: u32| fused.iter().find(|x| x.0 == FileId(f)).map(|x| x.1);
        assert_eq!(score(7), Some(1.0 / 2.0));
        // Positions 1 and 2 share 1.5.
        assert_eq!(score(1), Some(1.0 / 3.5));
        assert_eq!(score(2), Some(1.0 / 3.5));
        assert_eq!(score(0), Some(1.0 / 5.0));
        assert_eq!(fused.iter().map(|x| x.0.0).collect::<Vec<_>>(), vec![7, 1, 2, 0]);
    }

    #[test]
    fn short_queries_are_not_reports() {
        for q in [
            "where is parseConfig defined",
            "how does authentication work",
            "\"ECONNREFUSED\"",
            "fn spawn",
            "what breaks if I change src/config.rs",
            "ordered list of phases a query document goes through, and how each phase \
             transforms it before execution begins in the engine",
            "code like `retry(3, fetch)` in the client",
        ] {
            assert!(ReportAnalysis::of(q).is_none(), "{q}");
        }
        // A pasted snippet with no prose is a code question, not a report.
        let snippet = "```\nfn main() {\n    let x = parse_config(\"a.toml\");\n}\n```";
        assert!(ReportAnalysis::of(snippet).is_none());
    }

    #[test]
    fn a_report_is_taken_apart() {
        let text = "Unit conversion fails for compound units\n\n\
            When I call `convert_to` with a compound unit, the result is wrong. \
            See sympy/physics/units/util.py and sympy.physics.units.quantities for the code.\n\
            ```python\n>>> from pkg.units import convert_to\n>>> convert_to(joule*second, joule)\n```\n\
            Traceback (most recent call last):\n  File \"/opt/app/pkg/units/util.py\", line 98, in convert_to\n\
            TypeError: can't convert \"expr\" to a unit\n\
            I expected the message \"cannot convert\" to be clearer, and it isn't.";
        let r = ReportAnalysis::of(text).expect("a report");
        assert_eq!(r.title, "Unit conversion fails for compound units");
        assert_eq!(r.paths, ["sympy/physics/units/util.py"]);
        assert!(r.modules.contains(&"sympy.physics.units.quantities".to_string()));
        assert!(r.modules.contains(&"pkg.units".to_string()));
        assert_eq!(
            r.frames,
            [Frame {
                file: "/opt/app/pkg/units/util.py".into(),
                line: Some(98),
                function: Some("convert_to".into())
            }]
        );
        assert_eq!(r.messages, ["can't convert \"expr\" to a unit"]);
        assert!(r.literals.contains(&"cannot convert".to_string()));
        let convert = r.identifiers.iter().find(|i| i.name == "convert_to").expect("named");
        assert!(convert.in_code && convert.count >= 3, "{convert:?}");
        assert!(!r.prose.contains(">>>"));
        assert!(r.code.contains("convert_to(joule*second, joule)"));
    }

    #[test]
    fn stack_traces_of_other_languages_give_frames() {
        let r = ReportAnalysis::read(
            "thread 'main' panicked at src/runtime/task.rs:41:9:\n\
             at Object.render (lib/view/render.js:120:15)\n\
             at com.acme.http.Client.send(Client.java:88)\n\
             see https://example.org/acme/app/blob/main/src/app/routes.go#L10",
        );
        let files: Vec<&str> = r.frames.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(files, ["src/runtime/task.rs", "lib/view/render.js", "Client.java"]);
        assert_eq!(r.frames[2].function.as_deref(), Some("send"));
        assert!(r.paths.contains(&"src/app/routes.go".to_string()), "{:?}", r.paths);
    }

    #[test]
    fn path_words_leave_out_file_extensions() {
        let r = ReportAnalysis::read(
            "Restock fails in inventory.py\nThe clerk sees `shop/cart.py`, then app.run() stops.",
        );
        let words = r.path_words();
        assert!(words.contains("inventory ") && words.contains("shop/cart "), "{words}");
        assert!(!words.contains(".py"), "{words}");
        assert!(words.contains("app.run()"), "{words}");
    }

    #[test]
    fn web_addresses_are_not_prose() {
        let r = ReportAnalysis::read(
            "Crash on save\nSee [the docs](https://example.org/docs/saving?x=1) and \
             <img src=\"https://img.example/a.png\"> http://h/q, then retry.",
        );
        assert!(!r.prose.contains("example"), "{}", r.prose);
        assert!(!r.prose.contains("png"), "{}", r.prose);
        assert!(r.prose.contains("the docs"), "{}", r.prose);
        assert!(r.prose.contains("then retry"), "{}", r.prose);
        let blob =
            ReportAnalysis::read("Wrong\nhttps://h/o/r/blob/main/src/app/routes.go#L10 fails");
        assert_eq!(blob.paths, ["src/app/routes.go"]);
        assert!(!blob.prose.contains("routes"));
    }

    #[test]
    fn versions_abbreviations_and_urls_are_not_modules() {
        let r = ReportAnalysis::read("works in 1.2.3, e.g. on www.example.com, i.e. not os.path");
        assert_eq!(r.modules, ["os.path"]);
    }

    #[test]
    fn template_comments_are_not_the_report() {
        let r = ReportAnalysis::read(
            "Title here\n<!-- Please read\nhttps://h/o/r/blob/main/CONTRIBUTING.md first -->\nreal words",
        );
        assert!(r.paths.is_empty());
        assert!(!r.words().contains("Please"));
        assert!(r.words().contains("real words"));
    }

    #[test]
    fn apostrophes_open_no_literal() {
        assert_eq!(
            quoted_literals("it doesn't work, 'quoted text' and \"other one\""),
            ["other one", "quoted text"]
        );
    }
}
