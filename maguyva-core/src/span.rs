//! Line spans.

use serde::{Deserialize, Serialize};

/// An inclusive range of 1-based line numbers; `start <= end` always holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LineSpan {
    start: u32,
    end: u32,
}

impl LineSpan {
    /// A span from `start` to `end`, both 1-based and inclusive. The bounds are
    /// swapped when given in the wrong order and a 0 is raised to 1, so the
    /// invariant holds whatever the caller passes.
    pub fn new(start: u32, end: u32) -> LineSpan {
        let (a, b) = if start <= end { (start, end) } else { (end, start) };
        LineSpan { start: a.max(1), end: b.max(1) }
    }

    /// A span of one line.
    pub fn line(line: u32) -> LineSpan {
        LineSpan::new(line, line)
    }

    /// First line, 1-based.
    pub fn start(self) -> u32 {
        self.start
    }

    /// Last line, 1-based and inclusive.
    pub fn end(self) -> u32 {
        self.end
    }

    /// Number of lines covered.
    pub fn len(self) -> u32 {
        self.end - self.start + 1
    }

    /// A span always covers at least one line.
    pub fn is_empty(self) -> bool {
        false
    }

    /// Whether `line` falls inside the span.
    pub fn contains(self, line: u32) -> bool {
        self.start <= line && line <= self.end
    }

    /// Whether the two spans share a line.
    pub fn overlaps(self, other: LineSpan) -> bool {
        self.start <= other.end && other.start <= self.end
    }
}

impl std::fmt::Display for LineSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.start, self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructor_orders_and_clamps() {
        let s = LineSpan::new(9, 3);
        assert_eq!((s.start(), s.end()), (3, 9));
        assert_eq!(LineSpan::new(0, 0), LineSpan::line(1));
        assert_eq!(s.len(), 7);
    }

    #[test]
    fn overlap_and_contains() {
        let a = LineSpan::new(3, 9);
        assert!(a.contains(3) && a.contains(9) && !a.contains(10));
        assert!(a.overlaps(LineSpan::new(9, 12)));
        assert!(!a.overlaps(LineSpan::new(10, 12)));
    }
}
