//! Syntax-aware fragments. Given the definitions of a file (from a parser,
//! as an outline of nested spans), a definition becomes one fragment; small
//! neighbours are merged up to a target size; a large definition is split at
//! its inner definitions, or at blank lines when it has none, and its parts
//! carry the definition's signature line as context.

use crate::fragment::{FragmentSpan, LineChunker, line_starts};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// One definition of a file's outline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutlineSpan {
    /// The definition's lines, with its doc comment.
    pub lines: LineSpan,
    /// Its signature line.
    pub header: u32,
}

/// Cuts files into fragments that follow their definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyntaxChunker {
    /// Neighbouring small units are merged up to this many lines.
    pub target_lines: u32,
    /// A definition up to this many lines stays whole.
    pub max_whole_lines: u32,
    /// A fragment is cut before it exceeds this many bytes.
    pub max_bytes: usize,
}

impl Default for SyntaxChunker {
    fn default() -> Self {
        SyntaxChunker {
            target_lines: 50,
            max_whole_lines: 80,
            max_bytes: crate::fragment::DEFAULT_MAX_FRAGMENT_BYTES,
        }
    }
}

#[derive(Debug, Clone)]
struct Tree {
    a: usize,
    b: usize,
    header: u32,
    children: Vec<Tree>,
}

/// Nests spans (0-based inclusive line ranges) by containment.
fn forest(outline: &[OutlineSpan], lines: usize) -> Vec<Tree> {
    let mut spans: Vec<OutlineSpan> = outline.to_vec();
    spans.sort_by(|x, y| {
        x.lines.start().cmp(&y.lines.start()).then(y.lines.end().cmp(&x.lines.end()))
    });
    let mut roots: Vec<Tree> = Vec::new();
    let mut stack: Vec<Tree> = Vec::new();
    for s in spans {
        let a = (s.lines.start() as usize).saturating_sub(1);
        let b = (s.lines.end() as usize).saturating_sub(1).min(lines.saturating_sub(1));
        if a > b {
            continue;
        }
        while stack.last().is_some_and(|top| a > top.b) {
            if let Some(done) = stack.pop() {
                attach(&mut stack, &mut roots, done);
            }
        }
        // A child never extends past its parent, nor starts before the end of
        // the previous sibling (a doc comment must not swallow a neighbour).
        let b = stack.last().map_or(b, |p| b.min(p.b));
        let a = match stack
            .last()
            .and_then(|p| p.children.last())
            .or_else(|| if stack.is_empty() { roots.last() } else { None })
        {
            Some(prev) => a.max(prev.b + 1),
            None => a,
        };
        if a > b {
            continue;
        }
        stack.push(Tree { a, b, header: s.header, children: Vec::new() });
    }
    while let Some(done) = stack.pop() {
        attach(&mut stack, &mut roots, done);
    }
    roots
}

fn attach(stack: &mut [Tree], roots: &mut Vec<Tree>, t: Tree) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(t),
        None => roots.push(t),
    }
}

struct Emitter<'a> {
    text: &'a str,
    starts: &'a [usize],
    cfg: SyntaxChunker,
    out: Vec<FragmentSpan>,
}

impl Emitter<'_> {
    fn end_of(&self, line: usize) -> usize {
        self.starts.get(line + 1).copied().unwrap_or(self.text.len())
    }

    fn bytes(&self, a: usize, b: usize) -> usize {
        self.end_of(b) - self.starts[a]
    }

    fn push(&mut self, a: usize, b: usize, context: Option<u32>) {
        let lines = LineSpan::new(a as u32 + 1, b as u32 + 1);
        let context_line = context.filter(|&c| !lines.contains(c));
        self.out.push(FragmentSpan { lines, bytes: self.starts[a]..self.end_of(b), context_line });
    }

    fn windows(&mut self, a: usize, b: usize, context: Option<u32>) {
        let chunker =
            LineChunker { window_lines: self.cfg.target_lines, max_bytes: self.cfg.max_bytes };
        for (lines, _) in chunker.chunk_lines(self.text, self.starts, a, b + 1) {
            self.push(lines.start() as usize - 1, lines.end() as usize - 1, context);
        }
    }

    /// Fragments for lines `a..=b` holding the definitions `children`.
    fn range(&mut self, a: usize, b: usize, children: &[Tree], context: Option<u32>) {
        enum Unit<'t> {
            Gap(usize, usize),
            Def(&'t Tree),
        }
        let mut units = Vec::new();
        let mut cursor = a;
        for c in children {
            if c.a > cursor {
                units.push(Unit::Gap(cursor, c.a - 1));
            }
            units.push(Unit::Def(c));
            cursor = c.b + 1;
        }
        if cursor <= b {
            units.push(Unit::Gap(cursor, b));
        }
        let mut pending: Option<(usize, usize)> = None;
        for unit in units {
            let (ua, ub) = match unit {
                Unit::Gap(x, y) => (x, y),
                Unit::Def(t) => (t.a, t.b),
            };
            let n = (ub - ua + 1) as u32;
            let whole = match unit {
                Unit::Def(_) => {
                    n <= self.cfg.max_whole_lines && self.bytes(ua, ub) <= self.cfg.max_bytes
                }
                Unit::Gap(..) => {
                    n <= self.cfg.target_lines && self.bytes(ua, ub) <= self.cfg.max_bytes
                }
            };
            if !whole {
                if let Some((pa, pb)) = pending.take() {
                    self.push(pa, pb, context);
                }
                match unit {
                    Unit::Def(t) if !t.children.is_empty() => {
                        self.range(t.a, t.b, &t.children, Some(t.header))
                    }
                    Unit::Def(t) => self.windows(t.a, t.b, Some(t.header)),
                    Unit::Gap(x, y) => self.windows(x, y, context),
                }
                continue;
            }
            pending = match pending {
                Some((pa, _))
                    if (ub - pa + 1) as u32 <= self.cfg.target_lines
                        && self.bytes(pa, ub) <= self.cfg.max_bytes =>
                {
                    Some((pa, ub))
                }
                Some((pa, pb)) => {
                    self.push(pa, pb, context);
                    Some((ua, ub))
                }
                None => Some((ua, ub)),
            };
        }
        if let Some((pa, pb)) = pending {
            self.push(pa, pb, context);
        }
    }
}

impl SyntaxChunker {
    /// The fragments of `text` given its outline; every line falls in
    /// exactly one fragment, in order. With an empty outline this is a plain
    /// line-window split.
    pub fn chunk(&self, text: &str, outline: &[OutlineSpan]) -> Vec<FragmentSpan> {
        let starts = line_starts(text);
        if starts.is_empty() {
            return Vec::new();
        }
        let trees = forest(outline, starts.len());
        let mut e = Emitter { text, starts: &starts, cfg: *self, out: Vec::new() };
        e.range(0, starts.len() - 1, &trees, None);
        e.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(a: u32, b: u32) -> OutlineSpan {
        OutlineSpan { lines: LineSpan::new(a, b), header: a }
    }

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn covers_every_line_once(text: &str, frags: &[FragmentSpan]) {
        let mut next = 1;
        for f in frags {
            assert_eq!(f.lines.start(), next, "{frags:?}");
            assert_eq!(&text[f.bytes.clone()].lines().count(), &(f.lines.len() as usize));
            next = f.lines.end() + 1;
        }
        assert_eq!(next as usize, text.lines().count() + 1);
    }

    #[test]
    fn small_definitions_merge_and_large_ones_stand_alone() {
        let text = lines(200);
        let outline = [span(1, 10), span(11, 20), span(21, 30), span(31, 100), span(101, 200)];
        let frags = SyntaxChunker::default().chunk(&text, &outline);
        covers_every_line_once(&text, &frags);
        let got: Vec<(u32, u32)> = frags.iter().map(|f| (f.lines.start(), f.lines.end())).collect();
        // 1-30 merge; 31-100 is 70 lines and stays whole; 101-200 is split.
        assert_eq!(got[0], (1, 30));
        assert_eq!(got[1], (31, 100));
        assert!(got[2..].iter().all(|&(a, b)| b - a < 50));
        assert!(frags[2..].iter().all(|f| f.context_line == Some(101) || f.lines.contains(101)));
    }

    #[test]
    fn a_long_class_splits_at_its_methods_with_the_class_as_context() {
        let text = lines(150);
        let outline = [span(1, 150), span(3, 60), span(61, 120), span(121, 149)];
        let frags = SyntaxChunker::default().chunk(&text, &outline);
        covers_every_line_once(&text, &frags);
        let got: Vec<(u32, u32, Option<u32>)> =
            frags.iter().map(|f| (f.lines.start(), f.lines.end(), f.context_line)).collect();
        assert_eq!(
            got,
            vec![(1, 2, None), (3, 60, Some(1)), (61, 120, Some(1)), (121, 150, Some(1))]
        );
    }

    #[test]
    fn no_outline_means_line_windows() {
        let text = lines(120);
        let frags = SyntaxChunker::default().chunk(&text, &[]);
        covers_every_line_once(&text, &frags);
        assert!(frags.iter().all(|f| f.lines.len() <= 50 && f.context_line.is_none()));
        assert!(SyntaxChunker::default().chunk("", &[]).is_empty());
    }

    #[test]
    fn overlapping_doc_comments_never_break_coverage() {
        let text = lines(40);
        // The second span claims lines of the first (a doc comment reaching up).
        let outline = [span(1, 20), span(15, 40), span(18, 22)];
        let frags = SyntaxChunker { target_lines: 10, max_whole_lines: 15, max_bytes: 1 << 20 }
            .chunk(&text, &outline);
        covers_every_line_once(&text, &frags);
    }
}
