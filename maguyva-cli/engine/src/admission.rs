//! Which files a keyword query's own words admit as answers.
//!
//! Fusion ranks every file some retriever returned, and a retriever returns
//! something for almost any text: a made-up name shares a sub-word with a
//! real one, a sentence shares a word with a changelog. A result must show
//! evidence instead. Each content word of the query (function words
//! dropped) counts for a file when the file holds it as a term of the text
//! index: a word or sub-word of its text, path or name, stemmed as the
//! index stems. An identifier counts whole when the index holds it whole;
//! when it does not (a misremembered name), the file holds the share of its
//! parts of at least [`AdmissionParams::min_part`] letters that it holds,
//! but only if every such part occurs somewhere (a part found nowhere
//! makes a made-up name). A file's coverage is the mean over the query's
//! words, and it is admitted at [`AdmissionParams::coverage`] or above.

use maguyva_core::{FileId, FragmentTable, tokens};
use maguyva_trigram::TextIndex;
use roaring::RoaringBitmap;
use serde::{Deserialize, Serialize};

/// The settings of admission, part of the ranking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdmissionParams {
    /// Whether results need evidence at all (off in the seed ranking).
    pub on: bool,
    /// The share of the query's content words a file must hold (a file
    /// holding none is never admitted).
    pub coverage: f32,
    /// The share the best candidate must hold for the query to be
    /// answered at all, unless the index holds enough of its words.
    pub query_coverage: f32,
    /// The share of the query's words the index must hold (anywhere) for
    /// the query to be answered when no candidate holds `query_coverage`
    /// (0: no such way).
    pub vocabulary_coverage: f32,
    /// Results scoring below this share of the best result's score are
    /// dropped rather than padded in to reach `k`.
    pub floor: f32,
    /// The parts of an identifier shorter than this (in letters) say
    /// nothing on their own and are not counted.
    pub min_part: usize,
}

impl Default for AdmissionParams {
    fn default() -> Self {
        AdmissionParams {
            on: false,
            coverage: 0.0,
            query_coverage: 0.0,
            vocabulary_coverage: 0.0,
            floor: 0.0,
            min_part: 3,
        }
    }
}

/// The evidence that admitted a result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Admission {
    /// How: `words` (the query's words are in the file), `name` (the file
    /// defines or holds the name asked), `literal` or `regex` (its text
    /// matches).
    pub by: &'static str,
    /// The query's words the file holds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub words: Vec<String>,
    /// Their share of the query's content words.
    pub coverage: f32,
}

impl Admission {
    /// The evidence of a file admitted by one name, or by a text match.
    pub fn whole(by: &'static str, word: &str) -> Admission {
        Admission { by, words: vec![word.to_string()], coverage: 1.0 }
    }
}

/// One content word of the query and where the index holds it.
#[derive(Debug, Clone)]
struct Word {
    word: String,
    /// Files holding the word whole.
    whole: RoaringBitmap,
    /// For an identifier the index does not hold whole, with every part
    /// found somewhere: the files holding each part.
    parts: Vec<RoaringBitmap>,
}

impl Word {
    /// Whether the index holds the word anywhere, whole or by its parts.
    fn is_known(&self) -> bool {
        !self.whole.is_empty() || !self.parts.is_empty()
    }

    /// How much of this word `file` holds, from 0 to 1.
    fn held_by(&self, file: u32) -> f32 {
        if self.whole.contains(file) {
            return 1.0;
        }
        if self.parts.is_empty() {
            return 0.0;
        }
        let held = self.parts.iter().filter(|p| p.contains(file)).count();
        held as f32 / self.parts.len() as f32
    }
}

/// A query's content words, looked up once, for admitting files.
#[derive(Debug, Clone)]
pub struct QueryEvidence {
    words: Vec<Word>,
    coverage: f32,
    query_coverage: f32,
    vocabulary_coverage: f32,
}

impl QueryEvidence {
    /// Looks up the content words of `text`. None when it has none (a
    /// question of function words only gives nothing to judge by).
    pub fn of(
        text: &str,
        index: &TextIndex,
        fragments: &FragmentTable,
        params: &AdmissionParams,
    ) -> maguyva_trigram::Result<Option<QueryEvidence>> {
        let analyzer = index.bm25().analyzer();
        let mut words: Vec<Word> = Vec::new();
        for raw in tokens::words(text) {
            let word = raw.to_lowercase();
            if !tokens::is_content_word(&word) || words.iter().any(|w| w.word == word) {
                continue;
            }
            // A compound identifier's terms are its parts, then itself whole.
            let Some((whole_term, _)) = analyzer.query_terms(raw).pop() else { continue };
            let whole = index.files_with_term(fragments, &whole_term)?;
            let mut parts = Vec::new();
            if whole.is_empty() {
                for name in tokens::split_identifier(raw) {
                    let Some((term, _)) = analyzer.query_terms(name).pop() else { continue };
                    if name.chars().count() < params.min_part {
                        continue;
                    }
                    let files = index.files_with_term(fragments, &term)?;
                    if files.is_empty() {
                        // A made-up part: the name as a whole is made up.
                        parts.clear();
                        break;
                    }
                    parts.push(files);
                }
            }
            words.push(Word { word, whole, parts });
        }
        Ok((!words.is_empty()).then_some(QueryEvidence {
            words,
            coverage: params.coverage,
            query_coverage: params.query_coverage,
            vocabulary_coverage: params.vocabulary_coverage,
        }))
    }

    /// Whether no file can be admitted: no word of the query is held
    /// anywhere.
    pub fn matches_nothing(&self) -> bool {
        !self.words.iter().any(Word::is_known)
    }

    /// The share of the query's words `file` holds.
    pub fn coverage(&self, file: FileId) -> f32 {
        let sum: f32 = self.words.iter().map(|w| w.held_by(file.0)).sum();
        sum / self.words.len() as f32
    }

    /// The share of the query's words `file` holds, each word weighted by
    /// its rarity among the `files` indexed (`ln(1 + files / (1 + df))`):
    /// holding the one rare word of a question says more than holding its
    /// common ones.
    pub fn rare_coverage(&self, file: FileId, files: u64) -> f32 {
        let (mut held, mut total) = (0.0f32, 0.0f32);
        for w in &self.words {
            let df = if w.whole.is_empty() {
                let n = w.parts.len().max(1) as u64;
                w.parts.iter().map(|p| p.len()).sum::<u64>() / n
            } else {
                w.whole.len()
            };
            let weight = (1.0 + files as f32 / (1.0 + df as f32)).ln();
            held += weight * w.held_by(file.0);
            total += weight;
        }
        if total > 0.0 { held / total } else { 0.0 }
    }

    /// Whether the best of `candidates` holds enough of the query for it
    /// to be answered.
    pub fn answerable(&self, candidates: impl IntoIterator<Item = FileId>) -> bool {
        let best = candidates.into_iter().map(|f| self.coverage(f)).fold(0.0, f32::max);
        let known = self.words.iter().filter(|w| w.is_known()).count();
        let vocabulary = known as f32 / self.words.len() as f32;
        let known_enough = self.vocabulary_coverage > 0.0 && vocabulary >= self.vocabulary_coverage;
        best > 0.0 && (best >= self.query_coverage || known_enough)
    }

    /// The evidence admitting `file`, or None when it holds too little of
    /// the query.
    pub fn admit(&self, file: FileId) -> Option<Admission> {
        let coverage = self.coverage(file);
        if coverage <= 0.0 || coverage < self.coverage {
            return None;
        }
        let words = self.words.iter().filter(|w| w.held_by(file.0) > 0.0);
        Some(Admission { by: "words", words: words.map(|w| w.word.clone()).collect(), coverage })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maguyva_core::{ContentStore, FragmentSpan, LineChunker};
    use maguyva_trigram::TextIndexBuilder;

    fn index(texts: &[&str], paths: &[&str]) -> (TextIndex, FragmentTable) {
        let content = ContentStore::new(texts.iter().map(|s| s.to_string()).collect());
        let chunker = LineChunker { window_lines: 3, max_bytes: 1 << 20 };
        let spans = texts
            .iter()
            .map(|t| {
                let chunks = chunker.chunk(t).into_iter();
                chunks.map(|(lines, bytes)| FragmentSpan { lines, bytes, context_line: None })
            })
            .map(Vec::from_iter)
            .collect();
        let fragments = FragmentTable::from_spans(spans);
        let docs = content.fragment_documents(&fragments);
        let text = TextIndexBuilder::new().build(&content, &docs, paths, &[]).unwrap();
        (text, fragments)
    }

    const ON: AdmissionParams = AdmissionParams {
        on: true,
        coverage: 0.0,
        query_coverage: 0.34,
        vocabulary_coverage: 0.4,
        floor: 0.0,
        min_part: 3,
    };

    fn evidence(text: &TextIndex, fragments: &FragmentTable, query: &str) -> QueryEvidence {
        QueryEvidence::of(query, text, fragments, &ON).unwrap().unwrap()
    }

    #[test]
    fn a_file_holds_the_words_of_the_query_it_contains() {
        let (text, frags) = index(
            &["fn apply_discount(price) {}\n", "let total = price;\n", "nothing here\n"],
            &["a.rs", "b.rs", "c.rs"],
        );
        let e = evidence(&text, &frags, "how to apply a discount to prices");
        let a = e.admit(FileId(0)).unwrap();
        assert_eq!(a.words, ["apply", "discount", "prices"]);
        assert_eq!(a.coverage, 1.0);
        let b = e.admit(FileId(1)).unwrap();
        assert_eq!(b.words, ["prices"]);
        assert!((b.coverage - 1.0 / 3.0).abs() < 1e-6);
        assert_eq!(e.admit(FileId(2)), None);
        assert!(e.answerable([FileId(1), FileId(0)]));
    }

    #[test]
    fn an_identifier_held_whole_admits_only_files_holding_it_whole() {
        let (text, frags) = index(
            &["def parse_config_file(p): pass\n", "def parse(t): pass\n", "config = 1\n"],
            &["a.py", "b.py", "c.py"],
        );
        let e = evidence(&text, &frags, "parse_config_file");
        assert!(e.admit(FileId(0)).is_some());
        assert_eq!(e.admit(FileId(1)), None);
        assert_eq!(e.admit(FileId(2)), None);
    }

    #[test]
    fn a_misremembered_identifier_counts_by_its_parts() {
        let (text, frags) =
            index(&["def parse_config(p): pass\n", "def parse(t): pass\n"], &["a.py", "b.py"]);
        let e = evidence(&text, &frags, "parseConfiguration");
        // `configuration` stems to `configur`, not held: parts are
        // `parse` and `configuration`, and one is missing everywhere.
        assert!(e.matches_nothing());
        let e = evidence(&text, &frags, "configParse");
        assert_eq!(e.admit(FileId(0)).map(|a| a.coverage), Some(1.0));
        assert_eq!(e.admit(FileId(1)).map(|a| a.coverage), Some(0.5));
    }

    #[test]
    fn a_made_up_part_makes_a_made_up_name() {
        let (text, frags) = index(&["let name = 1;\nlet existent = 2;\n"], &["a.rs"]);
        let e = evidence(&text, &frags, "qqqxyzzy_existent_name");
        assert!(e.matches_nothing());
        assert_eq!(e.admit(FileId(0)), None);
        assert!(!e.answerable([FileId(0)]));
    }

    #[test]
    fn one_word_of_three_answers_only_when_the_index_knows_the_others() {
        let (text, frags) = index(
            &["let flux = 1;\n", "fn orbit() {}\n", "fn moon() {}\n"],
            &["a.rs", "b.rs", "c.rs"],
        );
        // One known word of three: not answerable from one file.
        let e = evidence(&text, &frags, "flux capacitor overdrive");
        assert!(e.admit(FileId(0)).is_some());
        assert!(!e.answerable([FileId(0)]));
        // Every word known somewhere, none together: answerable.
        let e = evidence(&text, &frags, "flux orbit moon");
        assert!(e.answerable([FileId(0)]));
    }

    #[test]
    fn function_words_alone_give_nothing_to_judge_by() {
        let (text, frags) = index(&["let x = 1;\n"], &["a.rs"]);
        assert!(QueryEvidence::of("how does it work", &text, &frags, &ON).unwrap().is_some());
        assert!(QueryEvidence::of("how is it", &text, &frags, &ON).unwrap().is_none());
    }
}
