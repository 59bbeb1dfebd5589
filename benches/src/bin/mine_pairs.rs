//! Mines training pairs for the built-in embedding model from a folder of
//! source code (`benches/embedder/README.md`): each pair is a short text
//! that asks for some code, and that code.
//!
//! - `doc`: a definition's doc summary, and its file's path with the
//!   definition, its doc comment or docstring taken out;
//! - `name`: a definition's name (split into words by the analyzer), and
//!   its body with every occurrence of the name blanked;
//! - `path`: a file's path (inside its package), and the signatures of its
//!   definitions.
//!
//! Both sides are written as the analyzer's terms (code-aware tokens,
//! stemmed), the ones an index embeds, separated by spaces: one JSON object
//! per line, `{"lang", "kind", "file", "q", "d"}`. Pairs whose code side
//! was seen before (after the blanking) are dropped, as are pairs whose
//! sides have fewer than `MIN_TERMS` terms.
//!
//! Usage: `mine_pairs CORPUS OUT.jsonl [MAX_MB]` (files are found
//! recursively; languages are detected as an index detects them). With
//! `MAX_MB`, each top folder of `CORPUS` (one per language) gives at most
//! that many megabytes of files, taken in an order fixed by their paths'
//! hashes, so that one large language does not crowd out the others.

#![forbid(unsafe_code)]

use maguyva_ast::{FileOutline, Symbol, outline};
use maguyva_core::{Analyzer, FileId, Language};
use rayon::prelude::*;
use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Definitions longer than this many lines are cut to their first lines:
/// an index embeds fragments of about this size.
const MAX_LINES: usize = 60;
/// Sides with fewer terms say too little to learn from.
const MIN_TERMS: usize = 3;
/// Files larger than this are skipped (generated tables, bundles).
const MAX_FILE_BYTES: u64 = 512 * 1024;

/// One training pair, as analyzer terms.
struct Pair {
    kind: &'static str,
    query: String,
    code: String,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(corpus), Some(out)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: mine_pairs CORPUS OUT.jsonl [MAX_MB]");
        std::process::exit(2);
    };
    let cap = match args.get(3).map(|m| m.parse::<u64>()) {
        Some(Ok(mb)) => mb << 20,
        Some(Err(e)) => {
            eprintln!("mine_pairs: MAX_MB: {e}");
            std::process::exit(2);
        }
        None => u64::MAX,
    };
    if let Err(e) = run(Path::new(corpus), Path::new(out), cap) {
        eprintln!("mine-pairs: {e}");
        std::process::exit(1);
    }
}

/// The files mined: of each language's folder, files in a fixed
/// pseudo-random order of their paths inside the corpus (so the choice does
/// not depend on where the corpus lies) while their bytes stay within `cap`;
/// sorted.
fn select(corpus: &Path, cap: u64) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for top in std::fs::read_dir(corpus)? {
        let top = top?.path();
        if !top.is_dir() {
            continue;
        }
        let mut group = Vec::new();
        walk(&top, &mut group)?;
        group.sort_by_key(|(p, _)| {
            let inside = p.strip_prefix(corpus).unwrap_or(p);
            xxhash_rust::xxh3::xxh3_64(inside.as_os_str().as_encoded_bytes())
        });
        let mut total = 0;
        for (path, len) in group {
            total += len;
            if total > cap {
                break;
            }
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn run(corpus: &Path, out: &Path, cap: u64) -> std::io::Result<()> {
    let files = select(corpus, cap)?;
    eprintln!("{} files", files.len());
    let analyzer = Analyzer::default();
    let mined: Vec<(String, Language, Vec<Pair>)> = files
        .par_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(path).ok()?;
            let name = path.file_name()?.to_str()?;
            let head = (0..=text.len().min(4096)).rev().find(|&i| text.is_char_boundary(i))?;
            let language = Language::detect(name, &text[..head])?;
            let rel = path.strip_prefix(corpus).ok()?.to_string_lossy().into_owned();
            let outline = outline(language, &text, FileId(0));
            let pairs = pairs_of(&analyzer, &rel, &text, &outline);
            Some((rel, language, pairs))
        })
        .collect();
    let mut seen = HashSet::new();
    let mut w = BufWriter::new(std::fs::File::create(out)?);
    let (mut kept, mut dropped) = (0usize, 0usize);
    for (file, language, pairs) in mined {
        for p in pairs {
            if !seen.insert(xxhash_rust::xxh3::xxh3_64(p.code.as_bytes()) ^ kind_salt(p.kind)) {
                dropped += 1;
                continue;
            }
            let line = serde_json::json!({
                "lang": language.name(),
                "kind": p.kind,
                "file": file,
                "q": p.query,
                "d": p.code,
            });
            writeln!(w, "{line}")?;
            kept += 1;
        }
    }
    w.flush()?;
    eprintln!("{kept} pairs written, {dropped} repeated code sides dropped");
    Ok(())
}

fn kind_salt(kind: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(kind.as_bytes())
}

/// The files under `dir` with their sizes, skipping symbolic links and
/// large files.
fn walk(dir: &Path, files: &mut Vec<(PathBuf, u64)>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&entry.path(), files)?;
        } else if kind.is_file() {
            let len = entry.metadata()?.len();
            if len <= MAX_FILE_BYTES {
                files.push((entry.path(), len));
            }
        }
    }
    Ok(())
}

/// The analyzer's terms of `text`, space-separated.
fn terms(analyzer: &Analyzer, text: &str) -> (String, usize) {
    let mut out = String::new();
    let mut n = 0;
    analyzer.for_each_term(text, |t| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(t);
        n += 1;
    });
    (out, n)
}

fn pairs_of(analyzer: &Analyzer, path: &str, text: &str, outline: &FileOutline) -> Vec<Pair> {
    let lines: Vec<&str> = text.lines().collect();
    let mut pairs = Vec::new();
    let mut push = |kind, query: &str, code: &str| {
        let (q, qn) = terms(analyzer, query);
        let (d, dn) = terms(analyzer, code);
        if qn >= MIN_TERMS.min(2) && dn >= MIN_TERMS && q != d {
            pairs.push(Pair { kind, query: q, code: d });
        }
    };
    // The path inside the package (past the language, the package and the
    // archive's top folder): an index embeds each fragment with its file's
    // path.
    let inner = path.split(['/', '\\']).skip(3).collect::<Vec<_>>().join("/");
    for s in &outline.symbols {
        let Some(body) = body_of(s, &lines) else { continue };
        if !s.doc.is_empty() && word_count(&s.doc) >= MIN_TERMS {
            push("doc", &s.doc, &format!("{inner}\n{}", without_doc(&body, &s.doc)));
        }
        if s.name.chars().count() >= 4 {
            push("name", &s.name, &body.replace(s.name.as_str(), " "));
        }
    }
    let names: Vec<&str> = outline.symbols.iter().map(|s| s.signature.as_str()).collect();
    if !names.is_empty() {
        push("path", &inner, &names.join("\n"));
    }
    pairs
}

/// A definition's lines, cut to [`MAX_LINES`]; `None` for one-liners.
fn body_of(s: &Symbol, lines: &[&str]) -> Option<String> {
    let start = (s.lines.start() as usize).checked_sub(1)?;
    let end = (s.lines.end() as usize).min(lines.len());
    if end <= start + 1 {
        return None;
    }
    Some(lines[start..end.min(start + MAX_LINES)].join("\n"))
}

fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// `body` without the lines its doc comment or docstring shares words with:
/// any line holding the summary's first three words is dropped, with the
/// comment lines around it.
fn without_doc(body: &str, doc: &str) -> String {
    let head: Vec<&str> = doc.split_whitespace().take(3).collect();
    let needle = head.join(" ");
    let lines: Vec<&str> = body.lines().collect();
    let Some(hit) = lines.iter().position(|l| squash(l).contains(&needle)) else {
        return body.to_string();
    };
    // The comment block around the summary: neighbours that are comment
    // or docstring lines.
    let is_comment = |l: &str| {
        let t = l.trim_start();
        ["//", "#", "/*", "*", "--", "\"\"\"", "'''", "{-", "-}", "@doc", "@moduledoc"]
            .iter()
            .any(|m| t.starts_with(m))
            || t.is_empty()
    };
    let mut a = hit;
    while a > 0 && is_comment(lines[a - 1]) {
        a -= 1;
    }
    let mut b = hit + 1;
    // A docstring runs to its closing quotes, whatever its lines hold.
    let quotes = ["\"\"\"", "'''"].into_iter().find(|q| lines[hit].matches(q).count() == 1);
    if let Some(q) = quotes {
        while b < lines.len() && !lines[b].contains(q) {
            b += 1;
        }
        b = (b + 1).min(lines.len());
    }
    while b < lines.len() && is_comment(lines[b]) {
        b += 1;
    }
    let mut kept: Vec<&str> = lines[..a].to_vec();
    kept.extend_from_slice(&lines[b..]);
    kept.join("\n")
}

/// A line with comment markers removed and whitespace squashed.
fn squash(line: &str) -> String {
    line.split_whitespace()
        .map(|w| w.trim_matches(|c: char| "/*#-\"'!<>".contains(c)))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_chosen_under_the_cap_do_not_depend_on_where_the_corpus_lies() {
        let chosen = |root: &Path| -> Vec<PathBuf> {
            for i in 0..40 {
                let dir = root.join("python").join(format!("pkg{}", i % 5));
                std::fs::create_dir_all(&dir).expect("folder");
                std::fs::write(dir.join(format!("m{i}.py")), "x = 1\n").expect("file");
            }
            let files = select(root, 60).expect("walks");
            files.iter().map(|p| p.strip_prefix(root).expect("inside").to_path_buf()).collect()
        };
        let (a, b) = (tempfile::tempdir().expect("dir"), tempfile::tempdir().expect("dir"));
        let inner = b.path().join("some/deeper/place");
        let first = chosen(a.path());
        assert_eq!(first.len(), 10, "6 bytes a file, 60 at most: {first:?}");
        assert_eq!(chosen(&inner), first);
    }

    #[test]
    fn a_docstring_or_comment_block_is_taken_out_of_the_code_side() {
        let python = "def load(path):\n    \"\"\"Read the settings file.\n\n    Long text.\n    \"\"\"\n    return open(path)\n";
        assert_eq!(
            without_doc(python, "Read the settings file."),
            "def load(path):\n    return open(path)"
        );
        let rust = "/// Read the settings file.\n/// More.\nfn load() {}\n";
        assert_eq!(without_doc(rust, "Read the settings file."), "fn load() {}");
        // No line holds the summary: the code stays whole.
        assert_eq!(without_doc("fn f() {}", "Other words here."), "fn f() {}");
    }

    #[test]
    fn a_file_gives_doc_name_and_path_pairs() {
        let text = "/// Reads the settings file from disk.\nfn load_settings(path: &str) -> String {\n    std::fs::read_to_string(path).unwrap_or_default()\n}\n";
        let outline = outline(Language::Rust, text, FileId(0));
        let path = "rust/crates-demo-1.0/demo-1.0/src/settings.rs";
        let pairs = pairs_of(&Analyzer::default(), path, text, &outline);
        let kinds: Vec<&str> = pairs.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, ["doc", "name", "path"]);
        // The doc pair asks in the summary's words for the path and code,
        // without the comment.
        assert_eq!(pairs[0].query, "read the set file from disk");
        assert!(pairs[0].code.starts_with("src set rs"), "{}", pairs[0].code);
        assert!(!pairs[0].code.contains("disk"), "{}", pairs[0].code);
        // The name pair's code side has the name blanked.
        assert!(!pairs[1].code.contains("load"), "{}", pairs[1].code);
        assert_eq!(pairs[2].query, "src set rs");
    }
}
