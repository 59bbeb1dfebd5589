//! The symbol table of a corpus: every definition, with two fst dictionaries
//! for lookup: normalized whole names (`parse_config`, `parseConfig` and
//! `ParseConfig` all become `parseconfig`) and analyzed name sub-words.
//! Format: `doc/format/symbols.md`.

use crate::error::{Error, Result};
use crate::extract::FileOutline;
use crate::symbol::Symbol;
use maguyva_core::store::{self, FormatVersion};
use maguyva_core::tokens::split_identifier;
use maguyva_core::{Analyzer, FileId, SymbolId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The symbol table's file inside a generation folder.
pub const SYMBOLS_FILE: &str = "symbols.mgv";

/// Symbol table format. Changelog: v1 initial; v2 adds the doc-summary
/// word dictionary.
pub const SYMBOLS_FORMAT: FormatVersion = FormatVersion { kind: *b"SYMB", current: 2, oldest: 2 };

/// Words of a doc comment that count as its summary: the first sentences
/// say what the code is; parameters and examples come later.
pub const DOC_SUMMARY_WORDS: usize = 40;

/// The summary of a doc comment: its first [`DOC_SUMMARY_WORDS`] words.
pub fn doc_summary(doc: &str) -> &str {
    let end = doc
        .char_indices()
        .filter(|&(_, c)| c == ' ')
        .nth(DOC_SUMMARY_WORDS)
        .map_or(doc.len(), |(i, _)| i);
    &doc[..end]
}

/// A name's lowercase sub-words joined: the key that makes naming
/// conventions meet.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for part in split_identifier(name) {
        out.extend(part.chars().flat_map(char::to_lowercase));
    }
    out
}

/// A dictionary from keys to lists of symbols.
#[derive(Clone, Default, Serialize, Deserialize)]
struct Postings {
    fst: Vec<u8>,
    offsets: Vec<u32>,
    ids: Vec<u32>,
    #[serde(skip)]
    map: Option<fst::Map<Vec<u8>>>,
}

impl Postings {
    fn build(entries: BTreeMap<String, Vec<u32>>) -> Result<Postings> {
        let mut builder = fst::MapBuilder::memory();
        let mut offsets = Vec::with_capacity(entries.len() + 1);
        let mut ids = Vec::new();
        for (i, (key, list)) in entries.into_iter().enumerate() {
            builder.insert(key.as_bytes(), i as u64)?;
            offsets.push(ids.len() as u32);
            ids.extend(list);
        }
        offsets.push(ids.len() as u32);
        let mut p = Postings { fst: builder.into_inner()?, offsets, ids, map: None };
        p.open()?;
        Ok(p)
    }

    fn open(&mut self) -> Result<()> {
        let map = fst::Map::new(self.fst.clone())?;
        if self.offsets.len() != map.len() + 1
            || self.offsets.windows(2).any(|w| w[0] > w[1])
            || self.offsets.last().is_some_and(|&o| o as usize != self.ids.len())
        {
            return Err(Error::Parse("damaged symbol dictionary".into()));
        }
        self.map = Some(map);
        Ok(())
    }

    fn get(&self, key: &str) -> &[u32] {
        let Some(i) = self.map.as_ref().and_then(|m| m.get(key)) else { return &[] };
        let i = i as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.ids.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// Every definition of a corpus, by [`SymbolId`], in file then source order.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct SymbolTable {
    symbols: Vec<Symbol>,
    /// `first[f]..first[f + 1]` are the symbols of file `f`.
    first: Vec<u32>,
    names: Postings,
    words: Postings,
    /// Analyzed words of each doc comment's summary.
    doc_words: Postings,
    analyzer: Analyzer,
}

impl std::fmt::Debug for SymbolTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolTable").field("symbols", &self.symbols.len()).finish()
    }
}

impl SymbolTable {
    /// Builds the table from the outlines of every file, in file order.
    pub fn build(outlines: &[FileOutline], analyzer: Analyzer) -> Result<SymbolTable> {
        let mut symbols = Vec::new();
        let mut first = Vec::with_capacity(outlines.len() + 1);
        for outline in outlines {
            let base = symbols.len() as u32;
            first.push(base);
            symbols.extend(outline.symbols.iter().cloned().map(|mut s| {
                s.container = s.container.map(|c| c + base);
                s
            }));
        }
        first.push(symbols.len() as u32);
        let mut names: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut words: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut doc_words: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for (i, s) in symbols.iter().enumerate() {
            let id = i as u32;
            let key = normalize(&s.name);
            if !key.is_empty() {
                names.entry(key).or_default().push(id);
            }
            let mut seen = Vec::new();
            analyzer.for_each_term(&s.name, |t| {
                if !seen.iter().any(|x: &String| x == t) {
                    seen.push(t.to_string());
                }
            });
            for w in seen.drain(..) {
                words.entry(w).or_default().push(id);
            }
            analyzer.for_each_term(doc_summary(&s.doc), |t| {
                if !seen.iter().any(|x: &String| x == t) {
                    seen.push(t.to_string());
                }
            });
            for w in seen {
                doc_words.entry(w).or_default().push(id);
            }
        }
        Ok(SymbolTable {
            symbols,
            first,
            names: Postings::build(names)?,
            words: Postings::build(words)?,
            doc_words: Postings::build(doc_words)?,
            analyzer,
        })
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The symbol with id `id`.
    pub fn get(&self, id: SymbolId) -> Option<&Symbol> {
        self.symbols.get(id.index())
    }

    /// Every symbol with its id.
    pub fn iter(&self) -> impl Iterator<Item = (SymbolId, &Symbol)> {
        self.symbols.iter().enumerate().map(|(i, s)| (SymbolId(i as u32), s))
    }

    /// The symbols of one file.
    pub fn of_file(&self, file: FileId) -> impl Iterator<Item = (SymbolId, &Symbol)> {
        let (a, b) = match (self.first.get(file.index()), self.first.get(file.index() + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        (a..b).filter_map(|i| self.symbols.get(i).map(|s| (SymbolId(i as u32), s)))
    }

    /// Symbols whose normalized name equals `key` (already normalized).
    pub fn by_normalized_name(&self, key: &str) -> impl Iterator<Item = SymbolId> + '_ {
        self.names.get(key).iter().map(|&i| SymbolId(i))
    }

    /// Symbols whose name holds the analyzed word `term`.
    pub fn by_name_word(&self, term: &str) -> &[u32] {
        self.words.get(term)
    }

    /// Symbols whose doc-comment summary holds the analyzed word `term`.
    pub fn by_doc_word(&self, term: &str) -> &[u32] {
        self.doc_words.get(term)
    }

    /// The analyzer of name words.
    pub fn analyzer(&self) -> Analyzer {
        self.analyzer
    }

    /// Writes the table into a generation folder.
    pub fn save(&self, gen_dir: &Path) -> Result<()> {
        Ok(store::save(&gen_dir.join(SYMBOLS_FILE), SYMBOLS_FORMAT, "symbol table", self)?)
    }

    /// Reads the table of a generation folder, checked against the file count.
    pub fn load(gen_dir: &Path, files: usize) -> Result<SymbolTable> {
        let path = gen_dir.join(SYMBOLS_FILE);
        let mut t: SymbolTable = store::load(&path, SYMBOLS_FORMAT)?;
        let corrupt = |why: &str| Error::Core(maguyva_core::Error::corrupt(&path, why));
        t.names.open().map_err(|_| corrupt("damaged name dictionary"))?;
        t.words.open().map_err(|_| corrupt("damaged word dictionary"))?;
        t.doc_words.open().map_err(|_| corrupt("damaged doc word dictionary"))?;
        let n = t.symbols.len();
        let consistent = t.first.len() == files + 1
            && t.first.windows(2).all(|w| w[0] <= w[1])
            && t.first.last().is_some_and(|&l| l as usize == n)
            && t.names
                .ids
                .iter()
                .chain(&t.words.ids)
                .chain(&t.doc_words.ids)
                .all(|&i| (i as usize) < n)
            && t.symbols
                .iter()
                .all(|s| s.container.is_none_or(|c| (c as usize) < n) && s.file.index() < files);
        if !consistent {
            return Err(corrupt("symbols do not match the files"));
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::outline;
    use maguyva_core::Language;

    fn table() -> SymbolTable {
        let a = outline(
            Language::Rust,
            "struct ParseConfig;\nimpl ParseConfig {\n    fn load_file() {}\n}\n",
            FileId(0),
        );
        let b = outline(Language::Python, "def parse_config():\n    pass\n", FileId(1));
        SymbolTable::build(&[a, b], Analyzer::default()).unwrap()
    }

    #[test]
    fn naming_conventions_meet() {
        assert_eq!(normalize("parse_config"), "parseconfig");
        assert_eq!(normalize("HTTPServer"), "httpserver");
        let t = table();
        let ids: Vec<u32> = t.by_normalized_name("parseconfig").map(|i| i.0).collect();
        assert_eq!(ids, vec![0, 2]);
        assert_eq!(t.by_name_word("load"), &[1]);
        assert_eq!(t.of_file(FileId(1)).count(), 1);
        assert_eq!(t.get(SymbolId(1)).unwrap().container, Some(0));
    }

    #[test]
    fn save_load_and_reject_mismatch() {
        let dir = tempfile::tempdir().unwrap();
        let t = table();
        t.save(dir.path()).unwrap();
        let again = SymbolTable::load(dir.path(), 2).unwrap();
        assert_eq!(again.len(), 3);
        assert_eq!(again.by_normalized_name("loadfile").count(), 1);
        assert!(SymbolTable::load(dir.path(), 5).is_err());
    }
}
