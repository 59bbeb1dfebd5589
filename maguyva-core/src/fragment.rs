//! Fragments: the units every modality indexes and returns. A fragment is a
//! run of whole lines of one file; [`ChunkId`]s are dense, in file order then
//! line order, and shared by all modalities.

use crate::corpus::Corpus;
use crate::ids::{ChunkId, FileId};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Line-window fragments hold about this many lines (the classic ~50-line
/// chunk that BM25 baselines use).
pub const DEFAULT_WINDOW_LINES: u32 = 50;

/// A window may end this many lines early to cut at a blank line, so that
/// a fragment tends to hold whole blocks.
const WINDOW_SLACK_LINES: u32 = 15;

/// A fragment never grows past this many bytes unless one line is longer.
pub const DEFAULT_MAX_FRAGMENT_BYTES: usize = 16 * 1024;

/// A run of lines of one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fragment {
    /// The file.
    pub file: FileId,
    /// Its lines.
    pub lines: LineSpan,
    /// Byte offset of the first line's start in the file's text.
    pub start_byte: u32,
    /// Byte offset just past the last line (including its newline).
    pub end_byte: u32,
    /// The signature line of the definition this fragment is a part of,
    /// when the fragment does not itself hold it (a method of a long class,
    /// the second half of a long function): it tells what the code belongs to.
    pub context_line: Option<u32>,
}

/// A fragment's place in its file, before ids are given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FragmentSpan {
    /// Its lines.
    pub lines: LineSpan,
    /// Its bytes in the file's text.
    pub bytes: Range<usize>,
    /// See [`Fragment::context_line`].
    pub context_line: Option<u32>,
}

impl FragmentSpan {
    fn plain((lines, bytes): (LineSpan, Range<usize>)) -> FragmentSpan {
        FragmentSpan { lines, bytes, context_line: None }
    }
}

impl Fragment {
    /// The byte range in the file's text.
    pub fn bytes(&self) -> Range<usize> {
        self.start_byte as usize..self.end_byte as usize
    }
}

/// All fragments of a corpus, with per-file ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FragmentTable {
    fragments: Vec<Fragment>,
    /// `first[f]..first[f + 1]` are the chunk ids of file `f`.
    first: Vec<u32>,
}

impl FragmentTable {
    /// Builds the table from per-file fragments, given in file order.
    pub fn from_spans(spans: Vec<Vec<FragmentSpan>>) -> FragmentTable {
        let mut fragments = Vec::new();
        let mut first = Vec::with_capacity(spans.len() + 1);
        for (f, file_spans) in spans.into_iter().enumerate() {
            first.push(fragments.len() as u32);
            for span in file_spans {
                fragments.push(Fragment {
                    file: FileId(f as u32),
                    lines: span.lines,
                    start_byte: span.bytes.start as u32,
                    end_byte: span.bytes.end as u32,
                    context_line: span.context_line,
                });
            }
        }
        first.push(fragments.len() as u32);
        FragmentTable { fragments, first }
    }

    /// The fragments of one file as [`FragmentTable::from_spans`] takes
    /// them: what a table built anew takes from an earlier one for a file
    /// that did not change.
    pub fn spans_of(&self, file: FileId) -> Vec<FragmentSpan> {
        self.of_file(file)
            .filter_map(|c| self.try_get(c))
            .map(|f| FragmentSpan {
                lines: f.lines,
                bytes: f.start_byte as usize..f.end_byte as usize,
                context_line: f.context_line,
            })
            .collect()
    }

    /// Line-window fragments for every file of `corpus`.
    pub fn line_windows(corpus: &Corpus, chunker: &LineChunker) -> FragmentTable {
        use rayon::prelude::*;
        let spans = corpus
            .files
            .par_iter()
            .map(|f| chunker.chunk(&f.text).into_iter().map(FragmentSpan::plain).collect())
            .collect();
        FragmentTable::from_spans(spans)
    }

    /// The fragment containing `line` of `file`, if any.
    pub fn at_line(&self, file: FileId, line: u32) -> Option<ChunkId> {
        let ids: Vec<ChunkId> = self.of_file(file).collect();
        let i = ids.partition_point(|&c| self.get(c).lines.end() < line);
        ids.get(i).copied().filter(|&c| self.get(c).lines.contains(line))
    }

    /// The fragment with id `id`. Panics on an id from another table.
    pub fn get(&self, id: ChunkId) -> &Fragment {
        &self.fragments[id.index()]
    }

    /// The fragment with id `id`, if it exists.
    pub fn try_get(&self, id: ChunkId) -> Option<&Fragment> {
        self.fragments.get(id.index())
    }

    /// The chunk ids of one file.
    pub fn of_file(&self, file: FileId) -> impl Iterator<Item = ChunkId> + use<> {
        let (a, b) = match (self.first.get(file.index()), self.first.get(file.index() + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => (0, 0),
        };
        (a..b).map(ChunkId)
    }

    /// A hit for file `file` as a whole, named by its first fragment (for
    /// modalities that rank files, not fragments); none for a file without
    /// fragments.
    pub fn file_hit(&self, file: FileId, score: f32) -> Option<crate::Hit> {
        let chunk = self.of_file(file).next()?;
        let lines = self.try_get(chunk)?.lines;
        Some(crate::Hit { chunk, file, lines, score })
    }

    /// Number of fragments.
    pub fn len(&self) -> usize {
        self.fragments.len()
    }

    /// Whether there are no fragments.
    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty()
    }

    /// Number of files the table covers.
    pub fn file_count(&self) -> usize {
        self.first.len().saturating_sub(1)
    }

    /// Every fragment with its id.
    pub fn iter(&self) -> impl Iterator<Item = (ChunkId, &Fragment)> {
        self.fragments.iter().enumerate().map(|(i, f)| (ChunkId(i as u32), f))
    }

    /// Checks internal consistency (after decoding from disk).
    pub fn is_consistent(&self) -> bool {
        self.first.windows(2).all(|w| w[0] <= w[1])
            && self.first.last().is_none_or(|&n| n as usize == self.fragments.len())
            && self.fragments.iter().all(|f| f.start_byte <= f.end_byte)
    }
}

/// Byte offsets of the start of every line of `text`; a final line without
/// a newline counts, an empty text has no lines.
pub fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    if text.is_empty() {
        return starts;
    }
    starts.push(0);
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' && i + 1 < text.len() {
            starts.push(i + 1);
        }
    }
    starts
}

/// Cuts a text into windows of whole lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineChunker {
    /// Lines per window.
    pub window_lines: u32,
    /// A window is cut early when it would exceed this many bytes.
    pub max_bytes: usize,
}

impl Default for LineChunker {
    fn default() -> Self {
        LineChunker { window_lines: DEFAULT_WINDOW_LINES, max_bytes: DEFAULT_MAX_FRAGMENT_BYTES }
    }
}

impl LineChunker {
    /// The windows of `text` as `(lines, bytes)`, covering every line once.
    pub fn chunk(&self, text: &str) -> Vec<(LineSpan, Range<usize>)> {
        let starts = line_starts(text);
        self.chunk_lines(text, &starts, 0, starts.len())
    }

    /// Windows over lines `from..to` (0-based) of `text`, whose line starts
    /// are `starts`.
    pub fn chunk_lines(
        &self,
        text: &str,
        starts: &[usize],
        from: usize,
        to: usize,
    ) -> Vec<(LineSpan, Range<usize>)> {
        let window = self.window_lines.max(1) as usize;
        let slack = (WINDOW_SLACK_LINES as usize).min(window / 2);
        let end_of = |line: usize| starts.get(line + 1).copied().unwrap_or(text.len());
        let mut out = Vec::new();
        let mut a = from;
        while a < to {
            let mut b = (a + window).min(to);
            // Cut early at the byte cap.
            if let Some(over) = (a + 1..b).find(|&l| end_of(l) - starts[a] > self.max_bytes) {
                b = over;
            } else if b < to {
                // Prefer to end just after a blank line in the last `slack` lines.
                if let Some(blank) = (b - slack..b)
                    .rev()
                    .find(|&l| l > a && text[starts[l]..end_of(l)].trim().is_empty())
                {
                    b = blank + 1;
                }
            }
            out.push((LineSpan::new(a as u32 + 1, b as u32), starts[a]..end_of(b - 1)));
            a = b;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_starts_handle_trailing_newline() {
        assert_eq!(line_starts(""), Vec::<usize>::new());
        assert_eq!(line_starts("a"), vec![0]);
        assert_eq!(line_starts("a\nb\n"), vec![0, 2]);
        assert_eq!(line_starts("a\n\nb"), vec![0, 2, 3]);
    }

    #[test]
    fn windows_cover_every_line_once() {
        let text: String = (1..=123)
            .map(|i| if i % 40 == 0 { "\n".into() } else { format!("line {i}\n") })
            .collect();
        let chunks = LineChunker::default().chunk(&text);
        let mut next = 1;
        for (lines, bytes) in &chunks {
            assert_eq!(lines.start(), next);
            assert!(lines.len() <= DEFAULT_WINDOW_LINES);
            assert_eq!(text[bytes.clone()].lines().count() as u32, lines.len());
            next = lines.end() + 1;
        }
        assert_eq!(next, 124);
        // The first window ended after the blank line 40, not at line 50.
        assert_eq!(chunks[0].0, LineSpan::new(1, 40));
    }

    #[test]
    fn byte_cap_cuts_windows() {
        let line = format!("{}\n", "x".repeat(100));
        let text = line.repeat(30);
        let chunks = LineChunker { window_lines: 50, max_bytes: 1000 }.chunk(&text);
        assert!(chunks.iter().all(|(_, b)| b.len() <= 1000));
        assert_eq!(chunks.iter().map(|(l, _)| l.len()).sum::<u32>(), 30);
    }

    #[test]
    fn table_ranges_per_file() {
        let sp = |a, b, bytes| FragmentSpan::plain((LineSpan::new(a, b), bytes));
        let t = FragmentTable::from_spans(vec![
            vec![sp(1, 2, 0..4)],
            vec![],
            vec![sp(1, 1, 0..2), sp(2, 2, 2..4)],
        ]);
        assert_eq!(t.at_line(FileId(2), 2), Some(ChunkId(2)));
        assert_eq!(t.at_line(FileId(2), 3), None);
        assert_eq!(t.of_file(FileId(0)).collect::<Vec<_>>(), vec![ChunkId(0)]);
        assert_eq!(t.of_file(FileId(1)).count(), 0);
        assert_eq!(t.of_file(FileId(2)).collect::<Vec<_>>(), vec![ChunkId(1), ChunkId(2)]);
        assert_eq!(t.of_file(FileId(9)).count(), 0);
        let hit = t.file_hit(FileId(2), 0.5).map(|h| (h.chunk, h.lines, h.score));
        assert_eq!(hit, Some((ChunkId(1), LineSpan::new(1, 1), 0.5)));
        assert!(t.file_hit(FileId(1), 1.0).is_none(), "a file without fragments has no hit");
        assert!(t.is_consistent());
        assert_eq!(t.file_count(), 3);
    }
}
