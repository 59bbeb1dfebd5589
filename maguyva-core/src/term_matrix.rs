//! The terms of many documents, counted once: the keyword index and the
//! corpus embedder both start from how often each term occurs in each
//! fragment, and analyzing the text is most of what either costs to build.

use crate::analyzer::Analyzer;
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Documents analyzed into term counts: a sparse document × term matrix
/// with a sorted term dictionary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TermMatrix {
    analyzer: Analyzer,
    terms: Vec<String>,
    offsets: Vec<usize>,
    entries: Vec<(u32, u32)>,
    lengths: Vec<u32>,
}

/// Documents analyzed together on one thread, before their dictionaries
/// are merged.
struct Group {
    names: Vec<String>,
    offsets: Vec<usize>,
    entries: Vec<(u32, u32)>,
    lengths: Vec<u32>,
}

/// Documents per group: enough to amortize a group's dictionary, few enough
/// to keep every thread busy.
const GROUP: usize = 256;

impl TermMatrix {
    /// Analyzes `docs` with `analyzer`.
    pub fn build<S: AsRef<str> + Sync>(docs: &[S], analyzer: Analyzer) -> TermMatrix {
        let groups: Vec<Group> =
            docs.par_chunks(GROUP).map(|chunk| analyze_group(chunk, analyzer)).collect();
        // One dictionary, sorted, and each group's ids mapped into it.
        let mut terms: Vec<&str> =
            groups.iter().flat_map(|g| g.names.iter().map(String::as_str)).collect();
        terms.par_sort_unstable();
        terms.dedup();
        let global: FxHashMap<&str, u32> =
            terms.iter().enumerate().map(|(i, &t)| (t, i as u32)).collect();
        let remapped: Vec<Vec<(u32, u32)>> = groups
            .par_iter()
            .map(|g| {
                let ids: Vec<u32> = g
                    .names
                    .iter()
                    .map(|n| global.get(n.as_str()).copied().unwrap_or_default())
                    .collect();
                let mut entries: Vec<(u32, u32)> =
                    g.entries.iter().map(|&(t, c)| (ids[t as usize], c)).collect();
                for d in g.offsets.windows(2) {
                    entries[d[0]..d[1]].sort_unstable_by_key(|&(t, _)| t);
                }
                entries
            })
            .collect();
        let terms: Vec<String> = terms.into_iter().map(str::to_string).collect();
        drop(global);
        let mut m = TermMatrix {
            analyzer,
            terms,
            offsets: Vec::with_capacity(docs.len() + 1),
            entries: Vec::with_capacity(remapped.iter().map(Vec::len).sum()),
            lengths: Vec::with_capacity(docs.len()),
        };
        m.offsets.push(0);
        for (g, entries) in groups.iter().zip(remapped) {
            let base = m.entries.len();
            m.offsets.extend(g.offsets[1..].iter().map(|o| base + o));
            m.entries.extend(entries);
            m.lengths.extend(&g.lengths);
        }
        m
    }

    /// The analyzer the documents were analyzed with.
    pub fn analyzer(&self) -> Analyzer {
        self.analyzer
    }

    /// Number of documents.
    pub fn documents(&self) -> usize {
        self.lengths.len()
    }

    /// The dictionary, sorted; a term's id is its position.
    pub fn terms(&self) -> &[String] {
        &self.terms
    }

    /// Document `doc`'s distinct terms with their counts, by rising term id.
    pub fn document(&self, doc: usize) -> &[(u32, u32)] {
        match (self.offsets.get(doc), self.offsets.get(doc + 1)) {
            (Some(&a), Some(&b)) => &self.entries[a..b],
            _ => &[],
        }
    }

    /// Every document's length in terms (repeats counted).
    pub fn lengths(&self) -> &[u32] {
        &self.lengths
    }

    /// The number of documents each term occurs in.
    pub fn document_frequencies(&self) -> Vec<u32> {
        let mut df = vec![0u32; self.terms.len()];
        for &(t, _) in &self.entries {
            df[t as usize] += 1;
        }
        df
    }

    /// Each term's postings, `(document, count)` by rising document, in
    /// term order.
    pub fn postings(&self) -> Vec<Vec<(u32, u32)>> {
        let df = self.document_frequencies();
        let mut out: Vec<Vec<(u32, u32)>> =
            df.iter().map(|&n| Vec::with_capacity(n as usize)).collect();
        for doc in 0..self.documents() {
            for &(t, c) in self.document(doc) {
                out[t as usize].push((doc as u32, c));
            }
        }
        out
    }

    /// A matrix of the same documents, each with the terms of a document of
    /// `prefix` added: document `d` gains those of `prefix`'s document
    /// `prefix_of(d)`. The same as analyzing each prefix text, a line
    /// break, then the document's text.
    pub fn with_prefixes(
        &self,
        prefix: &TermMatrix,
        prefix_of: impl Fn(usize) -> usize + Sync,
    ) -> TermMatrix {
        // The union dictionary, and where each side's ids go in it.
        let mut terms: Vec<&str> =
            self.terms.iter().chain(&prefix.terms).map(String::as_str).collect();
        terms.sort_unstable();
        terms.dedup();
        let id_of = |t: &String| terms.binary_search(&t.as_str()).unwrap_or_default() as u32;
        let mine: Vec<u32> = self.terms.iter().map(id_of).collect();
        let theirs: Vec<u32> = prefix.terms.iter().map(id_of).collect();
        let docs: Vec<(Vec<(u32, u32)>, u32)> = (0..self.documents())
            .into_par_iter()
            .map(|d| {
                let p = prefix_of(d);
                let a = self.document(d).iter().map(|&(t, c)| (mine[t as usize], c));
                let b = prefix.document(p).iter().map(|&(t, c)| (theirs[t as usize], c));
                let mut merged: Vec<(u32, u32)> = a.chain(b).collect();
                merged.sort_unstable_by_key(|&(t, _)| t);
                merged.dedup_by(|next, kept| {
                    let same = next.0 == kept.0;
                    if same {
                        kept.1 += next.1;
                    }
                    same
                });
                let len = self.lengths[d] + prefix.lengths.get(p).copied().unwrap_or(0);
                (merged, len)
            })
            .collect();
        // Only the terms some document has: a prefix no document takes
        // adds nothing.
        let mut used = vec![false; terms.len()];
        docs.iter().flat_map(|(e, _)| e).for_each(|&(t, _)| used[t as usize] = true);
        let mut new_id = vec![0u32; terms.len()];
        let mut kept = Vec::new();
        for (i, t) in terms.into_iter().enumerate() {
            if used[i] {
                new_id[i] = kept.len() as u32;
                kept.push(t.to_string());
            }
        }
        let mut m = TermMatrix {
            analyzer: self.analyzer,
            terms: kept,
            offsets: Vec::with_capacity(docs.len() + 1),
            entries: Vec::with_capacity(docs.iter().map(|(e, _)| e.len()).sum()),
            lengths: Vec::with_capacity(docs.len()),
        };
        m.offsets.push(0);
        for (entries, len) in docs {
            m.entries.extend(entries.into_iter().map(|(t, c)| (new_id[t as usize], c)));
            m.offsets.push(m.entries.len());
            m.lengths.push(len);
        }
        m
    }
}

fn analyze_group<S: AsRef<str>>(chunk: &[S], analyzer: Analyzer) -> Group {
    let mut ids: FxHashMap<String, u32> = FxHashMap::default();
    let mut g = Group {
        names: Vec::new(),
        offsets: Vec::with_capacity(chunk.len() + 1),
        entries: Vec::new(),
        lengths: Vec::with_capacity(chunk.len()),
    };
    g.offsets.push(0);
    // Counts of the current document by group id, and the ids it touched.
    let mut counts: Vec<u32> = Vec::new();
    let mut touched: Vec<u32> = Vec::new();
    for doc in chunk {
        let mut len = 0u32;
        analyzer.for_each_term(doc.as_ref(), |t| {
            len += 1;
            let id = match ids.get(t) {
                Some(&id) => id,
                None => {
                    let id = g.names.len() as u32;
                    ids.insert(t.to_string(), id);
                    g.names.push(t.to_string());
                    counts.push(0);
                    id
                }
            };
            let c = &mut counts[id as usize];
            if *c == 0 {
                touched.push(id);
            }
            *c += 1;
        });
        for &id in &touched {
            g.entries.push((id, std::mem::take(&mut counts[id as usize])));
        }
        touched.clear();
        g.offsets.push(g.entries.len());
        g.lengths.push(len);
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// Term counts of one text, the plain way.
    fn counted(text: &str) -> BTreeMap<String, u32> {
        let mut out = BTreeMap::new();
        Analyzer::default().for_each_term(text, |t| *out.entry(t.to_string()).or_default() += 1);
        out
    }

    fn rows(m: &TermMatrix) -> Vec<BTreeMap<String, u32>> {
        (0..m.documents())
            .map(|d| {
                m.document(d).iter().map(|&(t, c)| (m.terms()[t as usize].clone(), c)).collect()
            })
            .collect()
    }

    #[test]
    fn counts_terms_per_document() {
        let m = TermMatrix::build(
            &["parse the config", "", "config configs parseConfig"],
            Analyzer::default(),
        );
        assert_eq!(m.documents(), 3);
        assert!(m.terms().windows(2).all(|w| w[0] < w[1]));
        assert_eq!(rows(&m)[2].get("config"), Some(&3));
        assert!(m.document(1).is_empty());
        assert_eq!(m.lengths(), &[3, 0, 5]);
        let df = m.document_frequencies();
        let config = m.terms().iter().position(|t| t == "config").unwrap_or(usize::MAX);
        assert_eq!(df.get(config), Some(&2));
        assert!(m.document(3).is_empty());
    }

    proptest! {
        #[test]
        fn matrix_equals_analyzing_each_text(
            docs in proptest::collection::vec("[a-zA-Z_ ]{0,40}", 0..600),
        ) {
            let m = TermMatrix::build(&docs, Analyzer::default());
            let expected: Vec<BTreeMap<String, u32>> = docs.iter().map(|d| counted(d)).collect();
            prop_assert_eq!(rows(&m), expected.clone());
            let lengths: Vec<u32> =
                docs.iter().map(|d| counted(d).values().sum::<u32>()).collect();
            prop_assert_eq!(m.lengths(), &lengths[..]);
            let postings = m.postings();
            for (t, list) in postings.iter().enumerate() {
                prop_assert!(!list.is_empty());
                prop_assert!(list.windows(2).all(|w| w[0].0 < w[1].0));
                for &(d, c) in list {
                    prop_assert_eq!(expected[d as usize].get(&m.terms()[t]), Some(&c));
                }
            }
        }

        #[test]
        fn prefixes_equal_analyzing_the_joined_texts(
            docs in proptest::collection::vec(("[a-zA-Z0-9_ .:(){}\\-]{0,30}", 0usize..4), 0..50),
            prefixes in proptest::collection::vec("[a-zA-Z0-9/._\\-]{0,20}", 4),
        ) {
            let texts: Vec<&str> = docs.iter().map(|(d, _)| d.as_str()).collect();
            let m = TermMatrix::build(&texts, Analyzer::default());
            let p = TermMatrix::build(&prefixes, Analyzer::default());
            let joined = m.with_prefixes(&p, |d| docs[d].1);
            let expected: Vec<String> =
                docs.iter().map(|(d, p)| format!("{}\n{d}", prefixes[*p])).collect();
            prop_assert_eq!(joined, TermMatrix::build(&expected, Analyzer::default()));
        }
    }
}
