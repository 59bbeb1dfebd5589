//! A query as the retrievers receive it.

use crate::error::{Error, Result};

/// Queries above this many characters (64 KiB of ASCII) are refused with a
/// clear error rather than slowing every modality down. A whole bug report
/// with its traceback and logs fits comfortably.
pub const MAX_QUERY_CHARS: usize = 65_536;

/// How the text of a query is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MatchMode {
    /// Plain words, ranked (BM25, definitions, meaning).
    #[default]
    Keyword,
    /// The exact string, verified against the file bytes.
    Literal,
    /// A regular expression (the `regex` crate's syntax).
    Regex,
}

/// A validated query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    text: String,
    mode: MatchMode,
    case_insensitive: bool,
}

impl Query {
    /// A keyword query; fails on empty or overlong text.
    pub fn new(text: impl Into<String>) -> Result<Query> {
        Query::with_mode(text, MatchMode::Keyword, false)
    }

    /// A query with an explicit match mode and case sensitivity.
    pub fn with_mode(
        text: impl Into<String>,
        mode: MatchMode,
        case_insensitive: bool,
    ) -> Result<Query> {
        let text = text.into();
        if text.trim().is_empty() {
            return Err(Error::InvalidQuery("the query is empty".into()));
        }
        let chars = text.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(Error::InvalidQuery(format!(
                "the query is {chars} characters long; the limit is {MAX_QUERY_CHARS}"
            )));
        }
        if text.contains('\0') {
            return Err(Error::InvalidQuery("the query contains a NUL character".into()));
        }
        Ok(Query { text, mode, case_insensitive })
    }

    /// The query text as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How the text is matched.
    pub fn mode(&self) -> MatchMode {
        self.mode
    }

    /// Whether letter case is ignored (literal and regex modes).
    pub fn is_case_insensitive(&self) -> bool {
        self.case_insensitive
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_empty_overlong_and_nul() {
        assert!(Query::new("   ").is_err());
        assert!(Query::new("a".repeat(MAX_QUERY_CHARS + 1)).is_err());
        assert!(Query::new("a\0b").is_err());
        assert!(Query::new("a".repeat(MAX_QUERY_CHARS)).is_ok());
    }

    #[test]
    fn keeps_mode_and_case() {
        let q = Query::with_mode("Foo", MatchMode::Literal, true).unwrap();
        assert_eq!(
            (q.text(), q.mode(), q.is_case_insensitive()),
            ("Foo", MatchMode::Literal, true)
        );
    }
}
