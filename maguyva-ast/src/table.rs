//! The symbol table of a corpus: every definition, with two fst dictionaries
//! for lookup: normalized whole names (`parse_config`, `parseConfig` and
//! `ParseConfig` all become `parseconfig`) and analyzed name sub-words.
//! Format: `doc/format/symbols.md`.

use crate::error::{Error, Result};
use crate::extract::FileOutline;
use crate::symbol::{Symbol, SymbolKind, SymbolRef};
use maguyva_core::store::FormatVersion;
use maguyva_core::{
    Analyzer, Array, Bytes, FileId, LineSpan, PackedStrings, SectionFile, SectionWriter, SymbolId,
    Text,
};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

/// Lowercase sub-words joined: the key that makes naming conventions meet.
pub use maguyva_core::tokens::normalize_name as normalize;

/// The symbol table's file inside a generation folder.
pub const SYMBOLS_FILE: &str = "symbols.mgv";

/// Symbol table format. Changelog: v1 initial; v2 adds the doc-summary
/// word dictionary; v3 sections read in place (fixed-width records and a
/// string blob); v4 a record's first number also holds how many tokens the
/// name has, so ranking by name words never tokenizes names; v5 a qualified
/// name that its container's gives is not stored again; v6 signatures and
/// doc summaries compressed in blocks; v7 sectioned-file entries of 40
/// bytes (small files compressed).
pub const SYMBOLS_FORMAT: FormatVersion = FormatVersion { kind: *b"SYMB", current: 7, oldest: 7 };

/// Bits of a record's first number that hold the kind; the next 8 hold the
/// name's token count (at most 255), the 2 after those how the qualified
/// name is kept (`Qualified`).
const KIND_BITS: u32 = 8;
const QUALIFIED_SHIFT: u32 = KIND_BITS + 8;

/// How a symbol's qualified name is kept: as a string of its own, or, with
/// no string, as its name alone or its container's qualified name, a
/// separator and its name (most qualified names, whose strings were a
/// quarter of the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Qualified {
    Stored = 0,
    Name = 1,
    Dot = 2,
    Colons = 3,
}

impl Qualified {
    fn of(code: u32) -> Qualified {
        match code & 3 {
            1 => Qualified::Name,
            2 => Qualified::Dot,
            3 => Qualified::Colons,
            _ => Qualified::Stored,
        }
    }

    /// How `qualified` can be kept, given the symbol's name and its
    /// container's qualified name.
    fn choose(qualified: &str, name: &str, container: Option<&str>) -> Qualified {
        if qualified == name {
            return Qualified::Name;
        }
        let Some(rest) = container.and_then(|c| qualified.strip_prefix(c)) else {
            return Qualified::Stored;
        };
        match rest.strip_suffix(name) {
            Some(".") => Qualified::Dot,
            Some("::") => Qualified::Colons,
            _ => Qualified::Stored,
        }
    }

    fn separator(self) -> &'static str {
        match self {
            Qualified::Dot => ".",
            Qualified::Colons => "::",
            Qualified::Stored | Qualified::Name => "",
        }
    }
}

/// `u32`s per symbol record: kind, file, first line, last line, name line,
/// container (`u32::MAX` for none).
const RECORD: usize = 6;
/// Strings per symbol kept plain: name, qualified name.
const STRINGS: usize = 2;
/// Strings per symbol kept packed: signature, doc summary.
const DETAILS: usize = 2;
const NO_CONTAINER: u32 = u32::MAX;

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

/// A dictionary from keys to lists of symbols.
#[derive(Clone)]
struct Postings {
    map: fst::Map<Bytes>,
    offsets: Array<u32>,
    ids: Array<u32>,
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
        Postings::assemble(Bytes::from_vec(builder.into_inner()?), offsets.into(), ids.into())
    }

    /// The dictionary of a patched table: every key of `self` with its
    /// symbols renumbered by `renumber` (`u32::MAX`: gone), merged with
    /// `fresh`, whose lists hold new numbers; keys left with no symbol are
    /// dropped. The same as [`Postings::build`] of the whole table.
    fn merged(&self, renumber: &[u32], fresh: BTreeMap<String, Vec<u32>>) -> Result<Postings> {
        use fst::Streamer;
        let mut keys: Vec<Vec<u8>> = Vec::with_capacity(self.map.len());
        let mut offsets = Vec::with_capacity(self.map.len() + 1);
        let mut ids: Vec<u32> = Vec::with_capacity(self.ids.len());
        // Whether every key of `self` is kept, and no other comes: then the
        // dictionary's fst (keys to their order) is the one `self` has.
        let mut same_keys = true;
        let mut old = self.map.stream();
        let mut fresh = fresh.into_iter().peekable();
        let mut next_old = old.next().map(|(k, i)| (k.to_vec(), i as usize));
        let mut list: Vec<u32> = Vec::new();
        loop {
            use std::cmp::Ordering::{Greater, Less};
            let order = match (&next_old, fresh.peek()) {
                (None, None) => break,
                (Some((k, _)), Some((f, _))) => k.as_slice().cmp(f.as_bytes()),
                (Some(_), None) => Less,
                (None, Some(_)) => Greater,
            };
            list.clear();
            let mut key = Vec::new();
            if order != Greater
                && let Some((k, i)) = next_old.take()
            {
                let (a, b) = match (self.offsets.get(i), self.offsets.get(i + 1)) {
                    (Some(&a), Some(&b)) => (a as usize, b as usize),
                    _ => return Err(Error::Parse("damaged symbol dictionary".into())),
                };
                let kept = self.ids.get(a..b).unwrap_or(&[]).iter();
                list.extend(
                    kept.filter_map(|&o| renumber.get(o as usize)).filter(|&&n| n != u32::MAX),
                );
                key = k;
                next_old = old.next().map(|(k, i)| (k.to_vec(), i as usize));
            }
            if order != Less
                && let Some((f, more)) = fresh.next()
            {
                key = f.into_bytes();
                list.extend(more);
            }
            // Both sides are ascending; together, or renumbered out of
            // order, they may not be.
            if !list.is_sorted() {
                list.sort_unstable();
            }
            if list.is_empty() || order == Greater {
                same_keys = false;
            }
            if list.is_empty() {
                continue;
            }
            keys.push(key);
            offsets.push(ids.len() as u32);
            ids.extend_from_slice(&list);
        }
        offsets.push(ids.len() as u32);
        let fst = match same_keys {
            true => self.map.as_fst().as_bytes().to_vec(),
            false => {
                let mut builder = fst::MapBuilder::memory();
                for (i, key) in keys.iter().enumerate() {
                    builder.insert(key, i as u64)?;
                }
                builder.into_inner()?
            }
        };
        Postings::assemble(Bytes::from_vec(fst), offsets.into(), ids.into())
    }

    fn assemble(fst: Bytes, offsets: Array<u32>, ids: Array<u32>) -> Result<Postings> {
        let map = fst::Map::new(fst)?;
        if offsets.len() != map.len() + 1
            || offsets.windows(2).any(|w| w[0] > w[1])
            || offsets.last().is_some_and(|&o| o as usize != ids.len())
        {
            return Err(Error::Parse("damaged symbol dictionary".into()));
        }
        Ok(Postings { map, offsets, ids })
    }

    fn write(&self, w: &mut SectionWriter, prefix: &str) -> maguyva_core::Result<()> {
        w.bytes(&format!("{prefix}.fst"), self.map.as_fst().as_bytes())?
            .array(&format!("{prefix}.offs"), &self.offsets)?
            .array(&format!("{prefix}.ids"), &self.ids)?;
        Ok(())
    }

    fn open(file: &SectionFile, prefix: &str) -> Result<Postings> {
        Postings::assemble(
            file.bytes(&format!("{prefix}.fst"))?,
            file.array(&format!("{prefix}.offs"))?,
            file.array(&format!("{prefix}.ids"))?,
        )
    }

    fn get(&self, key: &str) -> &[u32] {
        let Some(i) = self.map.get(key) else { return &[] };
        let i = i as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.ids.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// Every definition of a corpus, by [`SymbolId`], in file then source order,
/// read in place from the index file.
#[derive(Clone)]
pub struct SymbolTable {
    /// [`RECORD`] numbers per symbol.
    records: Array<u32>,
    /// `text_offsets[i]..text_offsets[i + 1]` is string `i` in `texts`;
    /// symbol `s` has strings `STRINGS * s ..`.
    text_offsets: Array<u32>,
    texts: Text,
    /// Signature and doc summary of symbol `s`: packed strings `DETAILS * s`
    /// and the next; compressed, since only listings and the reranking of
    /// the best candidates read them.
    details: PackedStrings,
    /// `first[f]..first[f + 1]` are the symbols of file `f`.
    first: Array<u32>,
    names: Postings,
    words: Postings,
    /// Analyzed words of each doc comment's summary.
    doc_words: Postings,
    analyzer: Analyzer,
}

/// A symbol table being written, symbol by symbol.
struct TableWriter<'a> {
    records: Vec<u32>,
    text_offsets: Vec<u32>,
    texts: String,
    details: Vec<&'a str>,
}

impl<'a> TableWriter<'a> {
    fn with_capacity(symbols: usize) -> Self {
        let mut text_offsets = Vec::with_capacity(symbols * STRINGS + 1);
        text_offsets.push(0u32);
        TableWriter {
            records: Vec::with_capacity(symbols * RECORD),
            text_offsets,
            texts: String::new(),
            details: Vec::with_capacity(symbols * DETAILS),
        }
    }

    /// Symbols written so far.
    fn len(&self) -> usize {
        self.records.len() / RECORD
    }

    /// Adds `s`, whose container is the symbol with id `container.0` in
    /// this table, when known (`container.1`).
    fn push(&mut self, s: &'a Symbol, container: Option<(u32, Option<&Symbol>)>) -> Result<()> {
        let tokens = maguyva_core::tokens::count_tokens(&s.name).min(255) as u32;
        // A qualified name is built from its container's only when the
        // container comes first: readers refuse a later one, which could
        // make a cycle in a damaged file. A container can come later: an
        // `impl` before its type's definition.
        let before = container.filter(|c| (c.0 as usize) < self.len());
        let qualified = Qualified::choose(
            &s.qualified_name,
            &s.name,
            before.and_then(|c| c.1).map(|c| c.qualified_name.as_str()),
        );
        self.records.extend([
            s.kind as u32 | tokens << KIND_BITS | (qualified as u32) << QUALIFIED_SHIFT,
            s.file.0,
            s.lines.start(),
            s.lines.end(),
            s.name_line,
            container.map_or(NO_CONTAINER, |c| c.0),
        ]);
        // The doc comment's summary is what search and listings use; the
        // rest stays in the source, and is most of a documented library's
        // symbol strings.
        let qualified_text = match qualified {
            Qualified::Stored => s.qualified_name.as_str(),
            _ => "",
        };
        self.details.extend([s.signature.as_str(), doc_summary(&s.doc)]);
        self.push_texts([&s.name, qualified_text])
    }

    /// Adds symbol `i` of `previous` as it is stored, but in file `file`;
    /// it lies in the file whose symbols are `symbols` there and start at
    /// `base` here. `None` when `previous` is damaged.
    fn copy(
        &mut self,
        previous: &'a SymbolTable,
        i: u32,
        file: FileId,
        symbols: std::ops::Range<u32>,
        base: u32,
    ) -> Option<()> {
        let at = i as usize;
        let r = previous.records.get(at * RECORD..(at + 1) * RECORD)?;
        // A container lies in the same file, before or after what it
        // contains (an `impl` before its type). The whole file moves by one
        // offset, so a qualified name built from an earlier container's
        // still is (the reader checked that it is earlier).
        let container = match r[5] {
            NO_CONTAINER => NO_CONTAINER,
            c if symbols.contains(&c) => (c - symbols.start).checked_add(base)?,
            _ => return None,
        };
        self.records.extend([r[0], file.0, r[2], r[3], r[4], container]);
        let signature = previous.details.get(at * DETAILS);
        self.details.extend([signature, previous.details.get(at * DETAILS + 1)]);
        let texts = [previous.text(at * STRINGS), previous.text(at * STRINGS + 1)];
        self.push_texts(texts).ok()
    }

    fn push_texts(&mut self, texts: [&str; STRINGS]) -> Result<()> {
        for text in texts {
            self.texts.push_str(text);
            let end = u32::try_from(self.texts.len())
                .map_err(|_| Error::Parse("symbol strings exceed 4 GiB".into()))?;
            self.text_offsets.push(end);
        }
        Ok(())
    }

    /// The table, its details' blocks that `previous` holds as they are
    /// taken from it undecompressed and uncompressed.
    fn finish(
        self,
        first: Vec<u32>,
        [names, words, doc_words]: [Postings; 3],
        analyzer: Analyzer,
        previous: Option<&PackedStrings>,
    ) -> Result<SymbolTable> {
        Ok(SymbolTable {
            records: self.records.into(),
            text_offsets: self.text_offsets.into(),
            texts: Text::from_string(self.texts),
            details: PackedStrings::build_reusing(&self.details, previous)?,
            first: first.into(),
            names,
            words,
            doc_words,
            analyzer,
        })
    }
}

impl std::fmt::Debug for SymbolTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolTable").field("symbols", &self.len()).finish()
    }
}

impl SymbolTable {
    /// Builds the table from the outlines of every file, in file order.
    pub fn build(outlines: &[FileOutline], analyzer: Analyzer) -> Result<SymbolTable> {
        SymbolTable::build_from(outlines, analyzer)
    }

    /// [`SymbolTable::build`] from the outlines of every file, in file order,
    /// wherever they are held.
    pub fn build_from<'a>(
        outlines: impl IntoIterator<Item = &'a FileOutline>,
        analyzer: Analyzer,
    ) -> Result<SymbolTable> {
        let (symbols, first) =
            SymbolTable::gather(outlines.into_iter().map(|o| Ok(Cow::Borrowed(&o.symbols[..]))))?;
        let all: Vec<(u32, &Symbol)> = (0..).zip(&symbols).collect();
        let [names, words, doc_words] = SymbolTable::analyze(&all, analyzer);
        SymbolTable::assemble(
            symbols,
            first,
            [Postings::build(names)?, Postings::build(words)?, Postings::build(doc_words)?],
            analyzer,
        )
    }

    /// The table [`SymbolTable::build`] makes of the files' outlines,
    /// taking the analyzed names and doc words of the symbols of unchanged
    /// files from `previous` instead of analyzing them again: `kept[f]` is
    /// the file of `previous` that file `f` is, unchanged (its outline the
    /// same but for the file's number). `outlines[f]` is `None` for a kept
    /// file whose symbols are to be taken from `previous` as they are; a
    /// kept file whose given outline's symbols differ from the ones
    /// `previous` holds is analyzed anew.
    pub fn patched(
        outlines: &[Option<&FileOutline>],
        analyzer: Analyzer,
        previous: &SymbolTable,
        kept: &[Option<FileId>],
    ) -> Result<SymbolTable> {
        let range = |o: FileId| -> Option<(u32, u32)> {
            Some((*previous.first.get(o.index())?, *previous.first.get(o.index() + 1)?))
        };
        let taken = |f: usize| -> Result<Cow<'_, [Symbol]>> {
            if let Some(Some(outline)) = outlines.get(f) {
                return Ok(Cow::Borrowed(&outline.symbols[..]));
            }
            let (start, end) = kept
                .get(f)
                .copied()
                .flatten()
                .and_then(range)
                .ok_or_else(|| Error::Parse(format!("no symbols for file {f}")))?;
            let symbols = (start..end).map(|i| {
                let mut s = previous.symbol(SymbolId(i))?;
                s.file = FileId(f as u32);
                // A container lies in the same file, before or after.
                s.container = match s.container {
                    Some(c) if (start..end).contains(&c) => Some(c - start),
                    Some(_) => return None,
                    None => None,
                };
                Some(s)
            });
            symbols
                .collect::<Option<Vec<Symbol>>>()
                .map(Cow::Owned)
                .ok_or_else(|| Error::Parse("damaged symbol table".into()))
        };
        if previous.analyzer != analyzer {
            let outlines: Vec<FileOutline> = (0..outlines.len())
                .map(|f| {
                    taken(f).map(|s| FileOutline { symbols: s.into_owned(), ..Default::default() })
                })
                .collect::<Result<_>>()?;
            return SymbolTable::build(&outlines, analyzer);
        }
        // A kept file's symbols are copied as stored (but for their file
        // and container numbers), not decoded and encoded again.
        let damaged = || Error::Parse("damaged symbol table".into());
        let mut table = TableWriter::with_capacity(previous.len());
        let mut first = Vec::with_capacity(outlines.len() + 1);
        let mut renumber = vec![u32::MAX; previous.len()];
        let mut fresh: Vec<(u32, &Symbol)> = Vec::new();
        for f in 0..outlines.len() {
            let base = table.len() as u32;
            first.push(base);
            let old = kept.get(f).copied().flatten().and_then(range);
            let (start, count) = match outlines.get(f).copied().flatten() {
                Some(outline) => {
                    let symbols = &outline.symbols;
                    for s in symbols {
                        let container = s.container.map(|c| (c + base, symbols.get(c as usize)));
                        table.push(s, container)?;
                    }
                    let same = old.filter(|&(start, end)| {
                        end.checked_sub(start) == Some(symbols.len() as u32)
                            && symbols.iter().zip(start..end).all(|(s, i)| {
                                previous.text(i as usize * STRINGS) == s.name
                                    && previous
                                        .records
                                        .get(i as usize * RECORD)
                                        .map(|&r| r & ((1 << KIND_BITS) - 1))
                                        == Some(s.kind as u32)
                            })
                    });
                    if same.is_none() {
                        fresh.extend((base..).zip(symbols));
                    }
                    (same.map(|(start, _)| start), symbols.len() as u32)
                }
                None => {
                    let (start, end) =
                        old.ok_or_else(|| Error::Parse(format!("no symbols for file {f}")))?;
                    for i in start..end {
                        table
                            .copy(previous, i, FileId(f as u32), start..end, base)
                            .ok_or_else(damaged)?;
                    }
                    (Some(start), end - start)
                }
            };
            if let Some(start) = start {
                let old = renumber.get_mut(start as usize..(start + count) as usize);
                for (k, n) in old.into_iter().flatten().enumerate() {
                    *n = base + k as u32;
                }
            }
        }
        first.push(table.len() as u32);
        let [names, words, doc_words] = SymbolTable::analyze(&fresh, analyzer);
        let postings = [
            previous.names.merged(&renumber, names)?,
            previous.words.merged(&renumber, words)?,
            previous.doc_words.merged(&renumber, doc_words)?,
        ];
        table.finish(first, postings, analyzer, Some(&previous.details))
    }

    /// The symbols of every file, in file order, their containers numbered
    /// in the whole table, and where each file's start.
    fn gather<'a>(
        files: impl Iterator<Item = Result<Cow<'a, [Symbol]>>>,
    ) -> Result<(Vec<Symbol>, Vec<u32>)> {
        let mut symbols = Vec::new();
        let mut first = Vec::new();
        for file in files {
            let base = symbols.len() as u32;
            first.push(base);
            symbols.extend(file?.iter().cloned().map(|mut s| {
                s.container = s.container.map(|c| c + base);
                s
            }));
        }
        first.push(symbols.len() as u32);
        Ok((symbols, first))
    }

    /// The normalized names, analyzed name words and analyzed doc-summary
    /// words of `symbols` (with their ids, ascending), each with the
    /// symbols that have it.
    fn analyze(symbols: &[(u32, &Symbol)], analyzer: Analyzer) -> [BTreeMap<String, Vec<u32>>; 3] {
        // Analyzing names and doc summaries (stemming every word) is most
        // of the work: done in parallel, then gathered in symbol order.
        let distinct_terms = |text: &str| {
            let mut seen: Vec<String> = Vec::new();
            analyzer.for_each_term(text, |t| {
                if !seen.iter().any(|x| x == t) {
                    seen.push(t.to_string());
                }
            });
            seen
        };
        let analyzed: Vec<(String, Vec<String>, Vec<String>)> = symbols
            .par_iter()
            .map(|(_, s)| {
                (normalize(&s.name), distinct_terms(&s.name), distinct_terms(doc_summary(&s.doc)))
            })
            .collect();
        let mut names: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut words: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        let mut doc_words: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for (&(id, _), (key, name_words, summary_words)) in symbols.iter().zip(analyzed) {
            if !key.is_empty() {
                names.entry(key).or_default().push(id);
            }
            for w in name_words {
                words.entry(w).or_default().push(id);
            }
            for w in summary_words {
                doc_words.entry(w).or_default().push(id);
            }
        }
        [names, words, doc_words]
    }

    /// The table of `symbols` (gathered, `first[f]` where file `f`'s
    /// start) with its dictionaries of names, name words and doc words.
    fn assemble(
        symbols: Vec<Symbol>,
        first: Vec<u32>,
        postings: [Postings; 3],
        analyzer: Analyzer,
    ) -> Result<SymbolTable> {
        let mut table = TableWriter::with_capacity(symbols.len());
        for s in &symbols {
            table.push(s, s.container.map(|c| (c, symbols.get(c as usize))))?;
        }
        table.finish(first, postings, analyzer, None)
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.records.len() / RECORD
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The qualified name of symbol `i`: built from its containers' when
    /// it was not stored. Containers come before what they contain (checked
    /// on open), so the walk up ends.
    fn qualified_name(&self, i: usize) -> Cow<'_, str> {
        let mut parts: Vec<(&str, &str)> = Vec::new();
        let mut at = i;
        let head = loop {
            let Some(r) = self.records.get(at * RECORD..(at + 1) * RECORD) else { break "" };
            match Qualified::of(r[0] >> QUALIFIED_SHIFT) {
                Qualified::Stored => break self.text(at * STRINGS + 1),
                Qualified::Name => break self.text(at * STRINGS),
                how => {
                    parts.push((how.separator(), self.text(at * STRINGS)));
                    match r[5] {
                        c if (c as usize) < at => at = c as usize,
                        _ => break "",
                    }
                }
            }
        };
        if parts.is_empty() {
            return Cow::Borrowed(head);
        }
        let mut out = String::from(head);
        for (separator, name) in parts.into_iter().rev() {
            out.push_str(separator);
            out.push_str(name);
        }
        Cow::Owned(out)
    }

    fn text(&self, i: usize) -> &str {
        match (self.text_offsets.get(i), self.text_offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.texts.get(a as usize..b as usize).unwrap_or(""),
            _ => "",
        }
    }

    /// How many tokens the name of the symbol with id `id` has (the
    /// analyzer's, before stemming; at most 255).
    pub fn name_tokens(&self, id: SymbolId) -> Option<usize> {
        let kind = self.records.get(id.index() * RECORD)?;
        Some((kind >> KIND_BITS & 0xff) as usize)
    }

    /// The symbol with id `id`.
    pub fn get(&self, id: SymbolId) -> Option<SymbolRef<'_>> {
        let i = id.index();
        let r = self.records.get(i * RECORD..(i + 1) * RECORD)?;
        let s = i * STRINGS;
        Some(SymbolRef {
            name: self.text(s),
            qualified_name: self.qualified_name(i),
            kind: SymbolKind::ALL
                .get((r[0] & ((1 << KIND_BITS) - 1)) as usize)
                .copied()
                .unwrap_or(SymbolKind::Function),
            file: FileId(r[1]),
            lines: LineSpan::new(r[2], r[3]),
            name_line: r[4],
            container: (r[5] != NO_CONTAINER).then_some(r[5]),
        })
    }

    /// The signature of the symbol with id `id`: the line holding its
    /// name, trimmed. Empty for an unknown id, or when its block of the
    /// index file is damaged.
    pub fn signature(&self, id: SymbolId) -> &str {
        self.details.get(id.index() * DETAILS)
    }

    /// The summary of the symbol's documentation comment or docstring (its
    /// first [`DOC_SUMMARY_WORDS`] words), markers removed; may be empty.
    pub fn doc(&self, id: SymbolId) -> &str {
        self.details.get(id.index() * DETAILS + 1)
    }

    /// Opens, in parallel, what [`signature`](Self::signature) and
    /// [`doc`](Self::doc) will read for the symbols `ids`.
    pub fn prepare_details(&self, ids: impl Iterator<Item = SymbolId>) {
        self.details.open_blocks(ids.map(|id| id.index() * DETAILS));
    }

    /// An owned copy of the symbol with id `id`; its container is a
    /// [`SymbolId`] of this table.
    pub fn symbol(&self, id: SymbolId) -> Option<Symbol> {
        let s = self.get(id)?;
        Some(Symbol {
            name: s.name.to_string(),
            qualified_name: s.qualified_name.into_owned(),
            kind: s.kind,
            file: s.file,
            lines: s.lines,
            name_line: s.name_line,
            signature: self.signature(id).to_string(),
            doc: self.doc(id).to_string(),
            container: s.container,
        })
    }

    /// Every symbol with its id.
    pub fn iter(&self) -> impl Iterator<Item = (SymbolId, SymbolRef<'_>)> {
        (0..self.len() as u32).filter_map(|i| self.get(SymbolId(i)).map(|s| (SymbolId(i), s)))
    }

    /// The symbols of one file.
    pub fn of_file(&self, file: FileId) -> impl Iterator<Item = (SymbolId, SymbolRef<'_>)> {
        let (a, b) = match (self.first.get(file.index()), self.first.get(file.index() + 1)) {
            (Some(&a), Some(&b)) => (a, b),
            _ => (0, 0),
        };
        (a..b).filter_map(|i| self.get(SymbolId(i)).map(|s| (SymbolId(i), s)))
    }

    /// The lines of each definition of one file, in id order: what
    /// [`SymbolTable::of_file`] gives of them, without building the rest.
    pub fn spans_of_file(&self, file: FileId) -> impl Iterator<Item = LineSpan> + '_ {
        let (a, b) = match (self.first.get(file.index()), self.first.get(file.index() + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        (a..b).filter_map(|i| {
            let r = self.records.get(i * RECORD..(i + 1) * RECORD)?;
            Some(LineSpan::new(r[2], r[3]))
        })
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

    /// Opens every block of signatures and doc summaries, so that damage a
    /// listing would meet later is reported now; `path` names the file.
    pub fn verify(&self, path: &Path) -> Result<()> {
        Ok(self.details.verify(path)?)
    }

    /// Writes the table into a generation folder.
    pub fn save(&self, gen_dir: &Path) -> Result<()> {
        let mut w = SectionWriter::new(SYMBOLS_FORMAT);
        w.encoded("analyzer", "symbol table", &self.analyzer)?
            .array("records", &self.records)?
            .array("str.offs", &self.text_offsets)?
            .bytes("strings", self.texts.as_bytes())?;
        self.details.write(&mut w, "ds")?;
        w.array("first", &self.first)?;
        self.names.write(&mut w, "nm")?;
        self.words.write(&mut w, "wd")?;
        self.doc_words.write(&mut w, "dc")?;
        Ok(w.write(&gen_dir.join(SYMBOLS_FILE))?)
    }

    /// Opens the table of a generation folder, in place, checked against
    /// the file count.
    pub fn load(gen_dir: &Path, files: usize) -> Result<SymbolTable> {
        SymbolTable::read(&SymbolTable::open_file(gen_dir)?, files)
    }

    /// Maps the symbol file of a generation folder, checking its header.
    pub fn open_file(gen_dir: &Path) -> Result<SectionFile> {
        Ok(SectionFile::open(&gen_dir.join(SYMBOLS_FILE), SYMBOLS_FORMAT)?)
    }

    /// The table in an opened symbol file, checked against the file count.
    pub fn read(file: &SectionFile, files: usize) -> Result<SymbolTable> {
        let path = file.path();
        let corrupt = |why: &str| Error::Core(maguyva_core::Error::corrupt(path, why));
        let postings = |prefix: &str, what: &str| {
            Postings::open(file, prefix).map_err(|_| corrupt(&format!("damaged {what}")))
        };
        let records: Array<u32> = file.array("records")?;
        let n = records.len() / RECORD;
        let t = SymbolTable {
            records,
            text_offsets: file.array("str.offs")?,
            texts: file.text("strings")?,
            details: PackedStrings::open(file, "ds", n * DETAILS)?,
            first: file.array("first")?,
            names: postings("nm", "name dictionary")?,
            words: postings("wd", "word dictionary")?,
            doc_words: postings("dc", "doc word dictionary")?,
            analyzer: file.decode("analyzer")?,
        };
        let consistent = t.records.len() == n * RECORD
            && t.text_offsets.len() == n * STRINGS + 1
            && t.text_offsets.windows(2).all(|w| w[0] <= w[1])
            && t.text_offsets.last().is_some_and(|&l| l as usize == t.texts.as_str().len())
            && t.first.len() == files + 1
            && t.first.windows(2).all(|w| w[0] <= w[1])
            && t.first.last().is_some_and(|&l| l as usize == n)
            && t.names
                .ids
                .iter()
                .chain(&*t.words.ids)
                .chain(&*t.doc_words.ids)
                .all(|&i| (i as usize) < n)
            && t.records.chunks_exact(RECORD).enumerate().all(|(i, r)| {
                let built = matches!(
                    Qualified::of(r[0] >> QUALIFIED_SHIFT),
                    Qualified::Dot | Qualified::Colons
                );
                ((r[0] & ((1 << KIND_BITS) - 1)) as usize) < SymbolKind::ALL.len()
                    && r[0] >> (QUALIFIED_SHIFT + 2) == 0
                    && (r[1] as usize) < files
                    && (r[5] == NO_CONTAINER || (r[5] as usize) < n)
                    && (!built || (r[5] as usize) < i)
            });
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
        for f in [FileId(0), FileId(1), FileId(7)] {
            let spans: Vec<LineSpan> = t.spans_of_file(f).collect();
            let lines: Vec<LineSpan> = t.of_file(f).map(|(_, s)| s.lines).collect();
            assert_eq!(spans, lines);
        }
    }

    /// Sources from a few fixed pieces, so that files share names, name
    /// words and doc words: Python, or Rust whose containers may come
    /// after what they contain (an `impl` or a trait's `impl` before its
    /// type, a method of a type defined in another piece).
    fn source_file(rust: bool, pieces: &[u8]) -> (Language, String) {
        const PYTHON: [&str; 6] = [
            "def parse_config(path):\n    \"Reads the config file.\"\n    return path\n",
            "class ConfigStore:\n    \"Keeps every loaded config.\"\n    def load(self):\n        pass\n",
            "def load_file(name):\n    pass\n",
            "class Parser:\n    def parse(self, text):\n        \"Parses text into tokens.\"\n        pass\n",
            "def emit_tokens():\n    \"Writes tokens out.\"\n    pass\n",
            "RETRY_LIMIT = 3\n",
        ];
        const RUST: [&str; 7] = [
            "impl Foo {\n    /// Reads the config file.\n    fn bar() {}\n}\n",
            "struct Foo;\n",
            "impl Not for Ka {\n    fn not(self) {}\n}\n",
            "enum Ka { On }\n",
            "mod net {\n    impl Pool {\n        pub fn take(&self) {}\n    }\n    pub struct Pool;\n}\n",
            "/// Parses text into tokens.\nfn parse(text: &str) {}\n",
            "trait Load {\n    fn load(&self);\n}\nimpl Load for Foo {\n    fn load(&self) {}\n}\n",
        ];
        match rust {
            true => {
                (Language::Rust, pieces.iter().map(|&p| RUST[p as usize % RUST.len()]).collect())
            }
            false => (
                Language::Python,
                pieces.iter().map(|&p| PYTHON[p as usize % PYTHON.len()]).collect(),
            ),
        }
    }

    fn saved(t: &SymbolTable) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        t.save(dir.path()).unwrap();
        std::fs::read(dir.path().join(SYMBOLS_FILE)).unwrap()
    }

    /// A file of the generators below: its language (Rust or Python) and
    /// the pieces it is made of.
    fn file_strategy() -> impl proptest::strategy::Strategy<Value = (bool, Vec<u8>)> {
        (proptest::bool::ANY, proptest::collection::vec(0u8..7, 0..5))
    }

    proptest::proptest! {
        /// A table patched from the previous one, whatever files were kept,
        /// edited, added or removed, and in whatever order their
        /// containers come, is the table built from scratch, to the byte,
        /// and one its reader accepts.
        #[test]
        fn patched_table_equals_a_rebuild(
            before in proptest::collection::vec(file_strategy(), 0..6),
            fates in proptest::collection::vec((0u8..4, file_strategy()), 8),
        ) {
            let old_texts: Vec<(Language, String)> =
                before.iter().map(|(rust, p)| source_file(*rust, p)).collect();
            // Each old file is kept, edited or removed; a new file may follow.
            let mut new_texts: Vec<(Language, String)> = Vec::new();
            let mut kept: Vec<Option<FileId>> = Vec::new();
            for (i, (text, (fate, (rust, pieces)))) in old_texts.iter().zip(&fates).enumerate() {
                match fate {
                    0 | 1 => {
                        new_texts.push(text.clone());
                        kept.push(Some(FileId(i as u32)));
                    }
                    2 => {
                        new_texts.push(source_file(*rust, pieces));
                        kept.push(None);
                    }
                    _ => {}
                }
                if *fate == 1 {
                    new_texts.push(source_file(*rust, pieces));
                    kept.push(None);
                }
            }
            let parse = |texts: &[(Language, String)]| -> Vec<FileOutline> {
                texts
                    .iter()
                    .enumerate()
                    .map(|(i, (l, t))| outline(*l, t, FileId(i as u32)))
                    .collect()
            };
            let analyzer = Analyzer::default();
            let dir = tempfile::tempdir().unwrap();
            SymbolTable::build(&parse(&old_texts), analyzer).unwrap().save(dir.path()).unwrap();
            // The previous table as a refresh has it: read back from its file.
            let previous = SymbolTable::load(dir.path(), old_texts.len()).unwrap();
            let outlines = parse(&new_texts);
            // Kept files of even number are given no outline: their symbols
            // come from the previous table.
            let given: Vec<Option<&FileOutline>> = outlines
                .iter()
                .zip(&kept)
                .map(|(o, k)| k.filter(|k| k.0 % 2 == 0).is_none().then_some(o))
                .collect();
            let patched = SymbolTable::patched(&given, analyzer, &previous, &kept).unwrap();
            let rebuilt = SymbolTable::build(&outlines, analyzer).unwrap();
            proptest::prop_assert_eq!(saved(&patched), saved(&rebuilt));
            patched.save(dir.path()).unwrap();
            let again = SymbolTable::load(dir.path(), new_texts.len()).unwrap();
            let expected: Vec<Symbol> = outlines
                .iter()
                .scan(0u32, |base, o| {
                    let at = *base;
                    *base += o.symbols.len() as u32;
                    Some(o.symbols.iter().map(move |s| Symbol {
                        container: s.container.map(|c| c + at),
                        doc: doc_summary(&s.doc).to_string(),
                        ..s.clone()
                    }))
                })
                .flatten()
                .collect();
            let got: Vec<Symbol> =
                (0..again.len() as u32).filter_map(|i| again.symbol(SymbolId(i))).collect();
            proptest::prop_assert_eq!(got, expected);
        }

        /// Whatever symbols a writer is given (containers anywhere in their
        /// file, before or after, qualified names built from them or not),
        /// the table it writes is one its reader accepts, and reads back
        /// the same symbols.
        #[test]
        fn a_written_table_is_always_read_back(
            files in proptest::collection::vec(
                proptest::collection::vec(
                    (0u8..5, proptest::option::of(0u32..8), 0u8..4, proptest::sample::select(SymbolKind::ALL.to_vec())),
                    0..8,
                ),
                0..4,
            ),
        ) {
            const NAMES: [&str; 5] = ["Foo", "bar", "load_file", "Ka", "not"];
            let outlines: Vec<FileOutline> = files
                .iter()
                .enumerate()
                .map(|(f, symbols)| {
                    let n = symbols.len() as u32;
                    let mut out: Vec<Symbol> = Vec::new();
                    for (i, &(name, container, how, kind)) in symbols.iter().enumerate() {
                        let name = NAMES[name as usize].to_string();
                        let container = container.map(|c| c % n);
                        // The container's name, whether it comes before or
                        // after: what an extraction does.
                        let outer = container.map(|c| NAMES[symbols[c as usize].0 as usize]);
                        let qualified_name = match (how, outer) {
                            (0, Some(outer)) => format!("{outer}::{name}"),
                            (1, Some(outer)) => format!("{outer}.{name}"),
                            (2, _) => format!("pkg.{name}"),
                            _ => name.clone(),
                        };
                        out.push(Symbol {
                            name,
                            qualified_name,
                            kind,
                            file: FileId(f as u32),
                            lines: LineSpan::new(i as u32 + 1, i as u32 + 2),
                            name_line: i as u32 + 1,
                            signature: format!("sig {i}"),
                            doc: String::new(),
                            container,
                        });
                    }
                    FileOutline { symbols: out, ..Default::default() }
                })
                .collect();
            let dir = tempfile::tempdir().unwrap();
            SymbolTable::build(&outlines, Analyzer::default()).unwrap().save(dir.path()).unwrap();
            let again = SymbolTable::load(dir.path(), outlines.len()).unwrap();
            let mut base = 0u32;
            for o in &outlines {
                for (i, s) in o.symbols.iter().enumerate() {
                    let got = again.symbol(SymbolId(base + i as u32)).unwrap();
                    proptest::prop_assert_eq!(&got.qualified_name, &s.qualified_name);
                    proptest::prop_assert_eq!(got.container, s.container.map(|c| c + base));
                }
                base += o.symbols.len() as u32;
            }
        }
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
        // Each record keeps its kind beside the count of its name's tokens.
        for (id, sym) in again.iter() {
            let expected = maguyva_core::tokens::count_tokens(sym.name);
            assert_eq!(again.name_tokens(id), Some(expected), "{}", sym.name);
            assert_eq!(sym.kind, t.get(id).map(|s| s.kind).unwrap_or(SymbolKind::Macro));
        }
        assert!(again.iter().any(|(id, _)| again.name_tokens(id) > Some(1)));
    }

    /// Qualified names come back exactly as extracted, whether kept as a
    /// string, as the name alone, or built from the container's with `.`
    /// or `::`; and most are not stored.
    #[test]
    fn qualified_names_come_back_whichever_way_they_are_kept() {
        let sources = [
            (
                Language::Rust,
                "mod net {\n    pub struct Pool;\n    impl Pool {\n        pub fn take(&self) {}\n    }\n}\nfn main() {}\n",
            ),
            (
                Language::Python,
                "class Cart:\n    class Line:\n        def total(self):\n            pass\n    def add(self):\n        pass\n",
            ),
            (
                Language::CSharp,
                "namespace Shop.Orders {\n    public class Order {\n        public void Ship() {}\n    }\n}\n",
            ),
            (Language::Cpp, "namespace absl {\nclass Cord {\n  void Append();\n};\n}\n"),
            (Language::Go, "package m\n\ntype Pool struct{}\n\nfunc (p *Pool) Take() {}\n"),
            // The method's container, its type, is defined after it.
            (Language::Rust, "impl Not for Ka {\n    fn not(self) {}\n}\nenum Ka { On }\n"),
        ];
        let outlines: Vec<FileOutline> = sources
            .iter()
            .enumerate()
            .map(|(i, (l, text))| outline(*l, text, FileId(i as u32)))
            .collect();
        let expected: Vec<String> = outlines
            .iter()
            .flat_map(|o| o.symbols.iter().map(|s| s.qualified_name.clone()))
            .collect();
        assert!(
            expected.iter().any(|q| q.contains("::")) && expected.iter().any(|q| q.contains('.'))
        );
        assert!(expected.iter().any(|q| q == "Ka::not"), "{expected:?}");
        let t = SymbolTable::build(&outlines, Analyzer::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        t.save(dir.path()).unwrap();
        let again = SymbolTable::load(dir.path(), sources.len()).unwrap();
        let got: Vec<String> = again.iter().map(|(_, s)| s.qualified_name.into_owned()).collect();
        assert_eq!(got, expected);
        let built = (0..again.len())
            .filter(|&i| {
                matches!(
                    Qualified::of(again.records[i * RECORD] >> QUALIFIED_SHIFT),
                    Qualified::Dot | Qualified::Colons
                )
            })
            .count();
        assert!(built >= 4, "{built} of {} qualified names built", again.len());
        let stored: usize = (0..again.len()).map(|i| again.text(i * STRINGS + 1).len()).sum();
        let all: usize = expected.iter().map(String::len).sum();
        // Some are stored, the method of a type defined after it among them.
        assert!(stored * 3 < all, "{stored} of {all} bytes of qualified names stored");
    }

    #[test]
    fn a_built_name_whose_container_comes_after_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let t = table();
        let mut records = t.records.to_vec();
        // Symbol 0 claims to be built from symbol 1, which it contains.
        records[0] |= (Qualified::Dot as u32) << QUALIFIED_SHIFT;
        records[5] = 1;
        let mut w = SectionWriter::new(SYMBOLS_FORMAT);
        w.encoded("analyzer", "symbol table", &t.analyzer).unwrap();
        w.array("records", &records).unwrap().array("str.offs", &t.text_offsets).unwrap();
        w.bytes("strings", t.texts.as_bytes()).unwrap();
        t.details.write(&mut w, "ds").unwrap();
        w.array("first", &t.first).unwrap();
        for (prefix, p) in [("nm", &t.names), ("wd", &t.words), ("dc", &t.doc_words)] {
            p.write(&mut w, prefix).unwrap();
        }
        w.write(&dir.path().join(SYMBOLS_FILE)).unwrap();
        assert!(SymbolTable::load(dir.path(), 2).is_err());
    }
}
