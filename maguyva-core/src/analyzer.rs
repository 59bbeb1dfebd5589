//! From text to index terms: code-aware tokens, optionally stemmed, so that
//! `sections`, `parsing` and `handles` meet `section`, `parse` and `handle`.

use crate::tokens::for_each_token;
use rust_stemmers::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;

/// Stems already computed on this thread. Code repeats a small vocabulary,
/// so nearly every token is found here and never stemmed twice.
const STEM_CACHE_LIMIT: usize = 200_000;

thread_local! {
    static STEMS: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

/// Calls `f` with the stem of token `t`, through `cache` when given.
fn stem(
    stemmer: &Stemmer,
    t: &str,
    cache: Option<&mut HashMap<String, String>>,
    f: &mut impl FnMut(&str),
) {
    // Digits and very short tokens stem to themselves.
    if t.len() <= 3 || t.bytes().all(|b| b.is_ascii_digit()) {
        return f(t);
    }
    let Some(cache) = cache else { return f(&stemmer.stem(t)) };
    if let Some(stem) = cache.get(t) {
        return f(stem);
    }
    let stem = stemmer.stem(t).into_owned();
    f(&stem);
    if cache.len() >= STEM_CACHE_LIMIT {
        cache.clear();
    }
    cache.insert(t.to_string(), stem);
}

/// How text becomes terms. Documents and queries must use the same analyzer,
/// so it is stored with the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Analyzer {
    /// Reduce words to their English stem (Snowball/Porter2).
    pub stem: bool,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer { stem: true }
    }
}

impl Analyzer {
    /// Calls `f` with every term of `text`, in order.
    pub fn for_each_term(&self, text: &str, mut f: impl FnMut(&str)) {
        if !self.stem {
            return for_each_token(text, f);
        }
        let stemmer = Stemmer::create(Algorithm::English);
        STEMS.with(|cache| match cache.try_borrow_mut() {
            Ok(mut cache) => for_each_token(text, |t| stem(&stemmer, t, Some(&mut cache), &mut f)),
            // A callback that analyzes text itself finds the cache in use:
            // it stems without it rather than fail.
            Err(_) => for_each_token(text, |t| stem(&stemmer, t, None, &mut f)),
        });
    }

    /// The distinct terms of `text` with their counts, in first-seen order.
    pub fn query_terms(&self, text: &str) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = Vec::new();
        self.for_each_term(text, |t| match out.iter_mut().find(|(s, _)| s == t) {
            Some((_, c)) => *c += 1,
            None => out.push((t.to_string(), 1)),
        });
        out
    }

    /// A short identity for the manifest.
    pub fn identity(&self) -> &'static str {
        if self.stem { "tokens+porter2" } else { "tokens" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_analysis_does_not_fail() {
        let a = Analyzer::default();
        let mut inner = Vec::new();
        a.for_each_term("parsing handlers", |outer| {
            a.for_each_term(outer, |t| inner.push(t.to_string()));
        });
        // The same terms as analyzing each outer term on its own.
        let mut expected = Vec::new();
        a.for_each_term("parsing handlers", |outer| expected.push(outer.to_string()));
        let expected: Vec<String> =
            expected.iter().flat_map(|t| a.query_terms(t).into_iter().map(|(s, _)| s)).collect();
        assert_eq!(inner, expected);
    }

    #[test]
    fn stemming_conflates_word_forms() {
        let a = Analyzer { stem: true };
        assert_eq!(a.query_terms("sections section"), vec![("section".to_string(), 2)]);
        assert_eq!(a.query_terms("parsing parsed"), vec![("pars".to_string(), 2)]);
        let plain = Analyzer { stem: false };
        assert_eq!(plain.query_terms("sections").len(), 1);
        assert_eq!(plain.query_terms("sections")[0].0, "sections");
    }
}
