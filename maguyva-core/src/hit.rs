//! What a retriever returns.

use crate::ids::{ChunkId, FileId};
use crate::span::LineSpan;
use serde::{Deserialize, Serialize};

/// Zero-based position of a hit in one modality's ranked list. Fusion uses
/// ranks, never raw scores, because scores of different retrievers are not on
/// one scale (doc/intents.md, fusion).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Rank(pub u32);

impl Rank {
    /// The position as a `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One result of one retriever: a fragment, the lines inside it that matter
/// (the match, or the definition), and the retriever's own score, which is
/// only comparable within that retriever's list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// The fragment the hit falls in.
    pub chunk: ChunkId,
    /// The file of that fragment.
    pub file: FileId,
    /// The lines that matched; inside the fragment, or the fragment itself.
    pub lines: LineSpan,
    /// The retriever's score; higher is better.
    pub score: f32,
}

/// Sorts hits best first; equal scores keep fragment order, so results are
/// deterministic.
pub fn sort_hits(hits: &mut [Hit]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_is_best_first_then_stable_by_chunk() {
        let h =
            |c, s| Hit { chunk: ChunkId(c), file: FileId(0), lines: LineSpan::line(1), score: s };
        let mut v = vec![h(3, 1.0), h(1, 2.0), h(2, 1.0)];
        sort_hits(&mut v);
        let order: Vec<u32> = v.iter().map(|h| h.chunk.0).collect();
        assert_eq!(order, vec![1, 2, 3]);
    }
}
