//! From a regular expression to the trigrams any match must contain.
//!
//! The analysis follows the classic trigram-index approach: each node of the
//! parsed pattern yields either the small set of exact strings it can match,
//! or a boolean query of required trigrams. Concatenation multiplies exact
//! sets while they stay small, alternation unions them, and anything
//! unbounded (`.*`, large classes, optional parts) requires nothing. The
//! result is conservative: a file without the required trigrams cannot match,
//! so the prefilter never loses a match.

use crate::trigram::pack;
use regex_syntax::hir::{Class, Hir, HirKind};

/// Exact sets larger than this are turned into trigram queries.
const MAX_EXACT: usize = 16;
/// Character classes with more members than this match "anything".
const MAX_CLASS: usize = 8;

/// A boolean query over trigram postings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrigramQuery {
    /// Every file is a candidate.
    All,
    /// Files holding all these trigrams.
    And(Vec<TrigramQuery>),
    /// Files matching any of these.
    Or(Vec<TrigramQuery>),
    /// Files holding this trigram.
    Trigram(u32),
}

impl TrigramQuery {
    fn and(parts: Vec<TrigramQuery>) -> TrigramQuery {
        let mut flat: Vec<TrigramQuery> = Vec::new();
        for p in parts {
            match p {
                TrigramQuery::All => {}
                TrigramQuery::And(inner) => flat.extend(inner),
                other => flat.push(other),
            }
        }
        flat.dedup();
        match flat.len() {
            0 => TrigramQuery::All,
            1 => flat.pop().unwrap_or(TrigramQuery::All),
            _ => TrigramQuery::And(flat),
        }
    }

    fn or(parts: Vec<TrigramQuery>) -> TrigramQuery {
        if parts.is_empty() || parts.contains(&TrigramQuery::All) {
            return TrigramQuery::All;
        }
        let mut flat = Vec::new();
        for p in parts {
            match p {
                TrigramQuery::Or(inner) => flat.extend(inner),
                other => flat.push(other),
            }
        }
        if flat.len() == 1 {
            flat.pop().unwrap_or(TrigramQuery::All)
        } else {
            TrigramQuery::Or(flat)
        }
    }

    /// The query requiring every trigram of `s` (ASCII-folded).
    pub fn of_string(s: &[u8]) -> TrigramQuery {
        TrigramQuery::and(
            s.windows(3).map(|w| TrigramQuery::Trigram(pack(w[0], w[1], w[2]))).collect(),
        )
    }
}

/// What is known about the strings a pattern node matches.
#[derive(Debug, Clone)]
enum Info {
    /// Every match is one of these strings (ASCII-lowercased).
    Exact(Vec<Vec<u8>>),
    /// Every match satisfies this query.
    Match(TrigramQuery),
}

impl Info {
    fn into_query(self) -> TrigramQuery {
        match self {
            Info::Match(q) => q,
            Info::Exact(set) => {
                TrigramQuery::or(set.iter().map(|s| TrigramQuery::of_string(s)).collect())
            }
        }
    }
}

/// The trigram query implied by a parsed pattern.
pub fn plan(hir: &Hir) -> TrigramQuery {
    analyze(hir).into_query()
}

fn lower(bytes: &[u8]) -> Vec<u8> {
    bytes.to_ascii_lowercase()
}

fn analyze(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::Exact(vec![Vec::new()]),
        HirKind::Literal(lit) => Info::Exact(vec![lower(&lit.0)]),
        HirKind::Class(class) => class_info(class),
        HirKind::Capture(cap) => analyze(&cap.sub),
        HirKind::Repetition(rep) => {
            if rep.min == 0 {
                Info::Match(TrigramQuery::All)
            } else if rep.min == 1 && rep.max == Some(1) {
                analyze(&rep.sub)
            } else {
                // At least one copy of the sub-pattern appears.
                Info::Match(analyze(&rep.sub).into_query())
            }
        }
        HirKind::Concat(parts) => concat(parts),
        HirKind::Alternation(alts) => {
            let infos: Vec<Info> = alts.iter().map(analyze).collect();
            if infos.iter().all(|i| matches!(i, Info::Exact(_))) {
                let mut set: Vec<Vec<u8>> = Vec::new();
                for i in infos {
                    if let Info::Exact(s) = i {
                        set.extend(s);
                    }
                }
                set.sort();
                set.dedup();
                if set.len() <= MAX_EXACT {
                    return Info::Exact(set);
                }
                return Info::Match(Info::Exact(set).into_query());
            }
            Info::Match(TrigramQuery::or(infos.into_iter().map(Info::into_query).collect()))
        }
    }
}

fn class_info(class: &Class) -> Info {
    let mut set: Vec<Vec<u8>> = Vec::new();
    match class {
        Class::Unicode(c) => {
            let size: u64 =
                c.ranges().iter().map(|r| u64::from(r.end()) - u64::from(r.start()) + 1).sum();
            if size as usize > MAX_CLASS {
                return Info::Match(TrigramQuery::All);
            }
            for r in c.ranges() {
                for ch in r.start()..=r.end() {
                    let mut buf = [0u8; 4];
                    set.push(lower(ch.encode_utf8(&mut buf).as_bytes()));
                }
            }
        }
        Class::Bytes(c) => {
            let size: usize = c.ranges().iter().map(|r| usize::from(r.end() - r.start()) + 1).sum();
            if size > MAX_CLASS {
                return Info::Match(TrigramQuery::All);
            }
            for r in c.ranges() {
                for b in r.start()..=r.end() {
                    set.push(vec![b.to_ascii_lowercase()]);
                }
            }
        }
    }
    set.sort();
    set.dedup();
    Info::Exact(set)
}

fn concat(parts: &[Hir]) -> Info {
    let mut done: Vec<TrigramQuery> = Vec::new();
    let mut current: Option<Vec<Vec<u8>>> = Some(vec![Vec::new()]);
    for part in parts {
        match analyze(part) {
            Info::Exact(set) => {
                let prefix = current.take().unwrap_or_else(|| vec![Vec::new()]);
                if prefix.len() * set.len() <= MAX_EXACT {
                    let mut next = Vec::with_capacity(prefix.len() * set.len());
                    for a in &prefix {
                        for b in &set {
                            let mut s = a.clone();
                            s.extend_from_slice(b);
                            next.push(s);
                        }
                    }
                    next.sort();
                    next.dedup();
                    current = Some(next);
                } else {
                    done.push(Info::Exact(prefix).into_query());
                    current = Some(set);
                }
            }
            Info::Match(q) => {
                if let Some(prefix) = current.take() {
                    done.push(Info::Exact(prefix).into_query());
                }
                done.push(q);
                current = Some(vec![Vec::new()]);
            }
        }
    }
    match current {
        Some(set) if done.is_empty() => Info::Exact(set),
        Some(set) => {
            done.push(Info::Exact(set).into_query());
            Info::Match(TrigramQuery::and(done))
        }
        None => Info::Match(TrigramQuery::and(done)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pattern: &str, ci: bool) -> TrigramQuery {
        let hir =
            regex_syntax::ParserBuilder::new().case_insensitive(ci).build().parse(pattern).unwrap();
        plan(&hir)
    }

    fn t(s: &str) -> TrigramQuery {
        let b = s.as_bytes();
        TrigramQuery::Trigram(pack(b[0], b[1], b[2]))
    }

    #[test]
    fn literal_requires_its_trigrams() {
        assert_eq!(q("abcd", false), TrigramQuery::And(vec![t("abc"), t("bcd")]));
        assert_eq!(q("ab", false), TrigramQuery::All);
    }

    #[test]
    fn alternation_and_wildcards() {
        assert_eq!(q("abc|xyz", false), TrigramQuery::Or(vec![t("abc"), t("xyz")]));
        assert_eq!(q("abc.*xyz", false), TrigramQuery::And(vec![t("abc"), t("xyz")]));
        assert_eq!(q("abc|x", false), TrigramQuery::All);
        assert_eq!(q("(abc)?", false), TrigramQuery::All);
        assert_eq!(q("(abcd)+", false), TrigramQuery::And(vec![t("abc"), t("bcd")]));
    }

    #[test]
    fn ascii_case_insensitive_folds_to_one_trigram() {
        assert_eq!(q("PaRtY", true), TrigramQuery::And(vec![t("par"), t("art"), t("rty")]));
        // `s` also matches the long s, so both spellings are alternatives.
        assert!(matches!(q("parse", true), TrigramQuery::Or(_)));
    }

    #[test]
    fn small_classes_expand() {
        assert_eq!(q("ab[cd]", false), TrigramQuery::Or(vec![t("abc"), t("abd")]));
        assert_eq!(q(r"ab\w", false), TrigramQuery::All);
    }
}
