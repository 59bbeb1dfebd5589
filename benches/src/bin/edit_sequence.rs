//! Checks, on real repositories, that a refresh writes what a rebuild
//! writes: for each repository of a benchmark, a seeded random sequence of
//! edits is applied to a copy of its tree, and after each step the index
//! is refreshed and, beside it, built from scratch with the same corpus
//! model. Every index file must be the same to the byte (the manifest
//! decoded, but for its times), and the answers to a fixed set of queries
//! (searches, callers, impact) the same.
//!
//!     edit_sequence --bench DIR --checkouts DIR [--steps N] [--seed S]
//!                   [--only NAME,NAME] [--work DIR] [--queries N] [--stop]
//!
//! `--checkouts` holds one folder per repository (`checkout.py`'s output);
//! its `benchmark_root` is copied into `--work` (a temporary folder by
//! default) and edited there: the checkout itself is never written. The
//! edits (`Edit`) append lines, change a line inside a definition, swap
//! two definitions (a method's type then comes after it), rename a symbol
//! in every file that names it, rename, add, copy, delete and move files,
//! and write ignore files. `--stop` ends a repository's sequence at its
//! first difference and leaves its tree, both indexes and the generation
//! they were made from (`previous`) in `--work`.
//! Exits 1 when any step differs or fails, 2 on a
//! usage or set-up error.

#![forbid(unsafe_code)]

use anyhow::{Context, Result, bail};
use maguyva_benches::XorShift;
use maguyva_core::{FileId, IndexDir, Language, Manifest, NoProgress};
use maguyva_engine::benchmark::Benchmark;
use maguyva_engine::{BuildOptions, Index, IndexSettings, SearchRequest, build_index_with};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The build a refresh must equal: every file read and parsed again, the
/// previous generation's corpus model kept (a full build learns its own).
const SAME_MODEL: BuildOptions = BuildOptions {
    reuse_outlines: false,
    reuse_model: true,
    reuse_text: false,
    trust_unchanged_stat: false,
};

struct Args {
    bench: PathBuf,
    checkouts: PathBuf,
    steps: usize,
    seed: u64,
    only: Option<Vec<String>>,
    work: Option<PathBuf>,
    queries: usize,
    stop: bool,
}

fn parse_args() -> Result<Args> {
    let mut args = std::env::args().skip(1);
    let (mut bench, mut checkouts, mut work, mut only) = (None, None, None, None);
    let (mut steps, mut seed, mut queries, mut stop) = (20, 1, 6, false);
    while let Some(flag) = args.next() {
        let mut value = || args.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--bench" => bench = Some(PathBuf::from(value()?)),
            "--checkouts" => checkouts = Some(PathBuf::from(value()?)),
            "--work" => work = Some(PathBuf::from(value()?)),
            "--steps" => steps = value()?.parse().context("--steps")?,
            "--seed" => seed = value()?.parse().context("--seed")?,
            "--queries" => queries = value()?.parse().context("--queries")?,
            "--stop" => stop = true,
            "--only" => only = Some(value()?.split(',').map(str::to_string).collect()),
            other => bail!("unknown argument {other}"),
        }
    }
    Ok(Args {
        bench: bench.context("--bench DIR is required")?,
        checkouts: checkouts.context("--checkouts DIR is required")?,
        steps,
        seed,
        only,
        work,
        queries,
        stop,
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("edit_sequence: {e:#}");
            eprintln!(
                "usage: edit_sequence --bench DIR --checkouts DIR [--steps N] [--seed S] \
                 [--only NAME,NAME] [--work DIR] [--queries N] [--stop]"
            );
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("edit_sequence: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> Result<bool> {
    let bench = Benchmark::load(&args.bench)?;
    let temp = tempfile::tempdir().context("making a work folder")?;
    let work = args.work.clone().unwrap_or_else(|| temp.path().to_path_buf());
    let settings = IndexSettings::default();
    let started = Instant::now();
    let (mut repos, mut steps, mut failed) = (0, 0, Vec::new());
    for repo in &bench.repos {
        if args.only.as_ref().is_some_and(|only| !only.contains(&repo.spec.name)) {
            continue;
        }
        let source = args.checkouts.join(&repo.spec.name).join(repo.spec.root_prefix());
        if !source.is_dir() {
            println!("{}: no checkout at {}, skipped", repo.spec.name, source.display());
            continue;
        }
        let queries: Vec<String> =
            repo.tasks.iter().take(args.queries).map(|t| t.query.clone()).collect();
        // Each repository has a seed of its own, so that one can be run
        // again alone (`--only`) with the same edits.
        let seed = args.seed ^ xxhash_rust::xxh3::xxh3_64(repo.spec.name.as_bytes());
        let t = Instant::now();
        let outcome =
            check_repository(&source, &work.join(&repo.spec.name), &settings, &queries, seed, args)
                .with_context(|| repo.spec.name.clone())?;
        repos += 1;
        steps += outcome.steps;
        println!(
            "{}: {} files, {} steps, {} differing ({:.1} s; refresh {:.0} ms, rebuild {:.0} ms a step on average)",
            repo.spec.name,
            outcome.files,
            outcome.steps,
            outcome.failures.len(),
            t.elapsed().as_secs_f64(),
            outcome.refresh_ms / outcome.steps.max(1) as f64,
            outcome.rebuild_ms / outcome.steps.max(1) as f64,
        );
        for f in &outcome.failures {
            println!("  {f}");
        }
        if !outcome.failures.is_empty() {
            failed.push(repo.spec.name.clone());
            if args.stop {
                println!("  kept in {}", work.join(&repo.spec.name).display());
                continue;
            }
        }
        let _ = std::fs::remove_dir_all(work.join(&repo.spec.name));
    }
    println!(
        "{repos} repositories, {steps} steps, {} with differences{} in {:.0} s",
        failed.len(),
        if failed.is_empty() { String::new() } else { format!(" ({})", failed.join(", ")) },
        started.elapsed().as_secs_f64()
    );
    Ok(failed.is_empty())
}

/// What one repository's sequence found.
struct Outcome {
    files: usize,
    steps: usize,
    failures: Vec<String>,
    refresh_ms: f64,
    rebuild_ms: f64,
}

fn check_repository(
    source: &Path,
    work: &Path,
    settings: &IndexSettings,
    queries: &[String],
    seed: u64,
    args: &Args,
) -> Result<Outcome> {
    let _ = std::fs::remove_dir_all(work);
    let tree = work.join("tree");
    copy_tree(source, &tree)?;
    let refreshed = work.join("refreshed");
    let rebuilt = work.join("rebuilt");
    let (index, _) = build_index_with(
        &tree,
        &IndexDir::new(&refreshed),
        settings,
        BuildOptions::FULL,
        &NoProgress,
    )?;
    let files = index.manifest.files.len();
    // The names asked about: a few defined names of the first build.
    let names = names_to_ask(&index, seed);
    drop(index);
    copy_tree(&refreshed, &rebuilt)?;
    let mut rng = XorShift::new(seed);
    let mut failures = Vec::new();
    let (mut refresh_ms, mut rebuild_ms) = (0.0, 0.0);
    let mut steps = 0;
    for step in 1..=args.steps {
        steps = step;
        let edits: Vec<String> = (0..1 + rng.next_u64() % 3)
            .filter_map(|_| {
                apply_random_edit(&tree, &current_files(&refreshed)?, &mut rng).ok().flatten()
            })
            .collect();
        let what = format!("step {step} ({})", edits.join("; "));
        if args.stop {
            // What both start from, kept for a look at a difference.
            let _ = std::fs::remove_dir_all(work.join("previous"));
            copy_tree(&rebuilt, &work.join("previous"))?;
        }
        let t = Instant::now();
        let a = build_index_with(
            &tree,
            &IndexDir::new(&refreshed),
            settings,
            BuildOptions::REFRESH,
            &NoProgress,
        );
        refresh_ms += t.elapsed().as_secs_f64() * 1000.0;
        let t = Instant::now();
        let b =
            build_index_with(&tree, &IndexDir::new(&rebuilt), settings, SAME_MODEL, &NoProgress)?;
        rebuild_ms += t.elapsed().as_secs_f64() * 1000.0;
        match a {
            Err(e) => failures.push(format!("{what}: the refresh failed: {e}")),
            Ok((index, a)) => {
                let mut differences =
                    compare(Path::new(&a.index), Path::new(&b.1.index), settings, queries, &names)?;
                // The index a refresh returns is what a server goes on
                // answering from: it must answer as the one it wrote.
                let (in_memory, on_disk) =
                    (answers(&index, queries, &names), answers(&b.0, queries, &names));
                if let Some(d) = first_difference(&in_memory, &on_disk) {
                    differences.push(format!("the refreshed index in memory: {d}"));
                }
                if a.model_kept != b.1.model_kept {
                    failures.push(format!(
                        "{what}: the refresh kept the model: {}, the rebuild: {}",
                        a.model_kept, b.1.model_kept
                    ));
                }
                failures.extend(differences.into_iter().map(|d| format!("{what}: {d}")));
            }
        }
        if args.stop && !failures.is_empty() {
            break;
        }
        // Both start the next step from the rebuild's generation, which is
        // right whatever the refresh did.
        std::fs::remove_dir_all(&refreshed).context("removing the refreshed index")?;
        copy_tree(&rebuilt, &refreshed)?;
    }
    Ok(Outcome { files, steps, failures, refresh_ms, rebuild_ms })
}

/// The files the index at `dir` holds, by path.
fn current_files(dir: &Path) -> Option<Vec<String>> {
    let generation = IndexDir::new(dir).current().ok()??;
    let manifest = Manifest::load(&generation).ok()?;
    Some(manifest.files.into_iter().map(|f| f.path).collect())
}

/// Up to four names the first build defines, chosen by the seed among the
/// ones of at least four characters.
fn names_to_ask(index: &Index, seed: u64) -> Vec<String> {
    let Ok(symbols) = index.symbols() else { return Vec::new() };
    let mut names: Vec<String> = symbols
        .iter()
        .map(|(_, s)| s.name.to_string())
        .filter(|n| n.chars().count() >= 4)
        .collect();
    names.sort();
    names.dedup();
    let mut rng = XorShift::new(seed ^ 0x5eed);
    (0..4.min(names.len()))
        .map(|_| names[(rng.next_u64() % names.len() as u64) as usize].clone())
        .collect()
}

/// How the generations `a` (refreshed) and `b` (rebuilt) differ: their
/// files, and their answers.
fn compare(
    a: &Path,
    b: &Path,
    settings: &IndexSettings,
    queries: &[String],
    names: &[String],
) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let list = |dir: &Path| -> Result<Vec<String>> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .with_context(|| format!("listing {}", dir.display()))?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<_>>()?;
        names.sort();
        Ok(names)
    };
    let (files_a, files_b) = (list(a)?, list(b)?);
    if files_a != files_b {
        out.push(format!("the generations hold other files: {files_a:?} and {files_b:?}"));
    }
    for name in files_a.iter().filter(|n| files_b.contains(n)) {
        if name == maguyva_core::MANIFEST_FILE {
            let (ma, mb) = (Manifest::load(a)?, Manifest::load(b)?);
            if let Some(d) = manifest_difference(&ma, &mb) {
                out.push(format!("manifest: {d}"));
            }
            continue;
        }
        let (x, y) = (std::fs::read(a.join(name))?, std::fs::read(b.join(name))?);
        if x != y {
            out.push(format!(
                "{name} differs ({} and {} bytes){}",
                x.len(),
                y.len(),
                symbol_difference(name, a, b)
            ));
        }
    }
    let opened = |generation: &Path| -> Vec<String> {
        // Opened from the index folder, as a search opens CURRENT.
        let dir = IndexDir::new(generation.parent().unwrap_or(generation));
        match Index::open(&dir, settings) {
            Ok(index) => answers(&index, queries, names),
            Err(e) => vec![format!("does not open: {e}")],
        }
    };
    if let Some(d) = first_difference(&opened(a), &opened(b)) {
        out.push(format!("answers differ: {d}"));
    }
    Ok(out)
}

/// The answers of `index` to every query, and to a search, callers and
/// impact of every name, as JSON (or the error).
fn answers(index: &Index, queries: &[String], names: &[String]) -> Vec<String> {
    let mut out: Vec<String> = queries
        .iter()
        .map(|q| match index.search(&SearchRequest::new(q.as_str())) {
            Ok(r) => json(&(q, r.intent, r.modalities, r.results)),
            Err(e) => format!("{q}: {e}"),
        })
        .collect();
    for name in names {
        out.push(match index.search(&SearchRequest::new(name.as_str())) {
            Ok(r) => json(&(name, r.intent, r.results)),
            Err(e) => format!("{name}: {e}"),
        });
        out.push(match index.callers(name, 50) {
            Ok(r) => json(&r),
            Err(e) => format!("callers {name}: {e}"),
        });
        out.push(match index.impact(name, 2, 50) {
            Ok(r) => json(&r),
            Err(e) => format!("impact {name}: {e}"),
        });
    }
    out
}

/// The first answer that differs, both ways, cut short.
fn first_difference(refreshed: &[String], rebuilt: &[String]) -> Option<String> {
    if refreshed.len() != rebuilt.len() {
        return Some(format!("{} and {} answers", refreshed.len(), rebuilt.len()));
    }
    let (x, y) = refreshed.iter().zip(rebuilt).find(|(x, y)| x != y)?;
    Some(format!("\n    refreshed {}\n    rebuilt   {}", cut(x), cut(y)))
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("not serializable: {e}"))
}

fn cut(s: &str) -> &str {
    match s.char_indices().nth(400) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Where two manifests differ, but for when and how fast they were made.
fn manifest_difference(a: &Manifest, b: &Manifest) -> Option<String> {
    let timeless = |m: &Manifest| Manifest {
        created_unix_ms: 0,
        build_ms: 0,
        guards: maguyva_core::WalkGuards { started_ns: 0, ..m.guards.clone() },
        ..m.clone()
    };
    let (a, b) = (timeless(a), timeless(b));
    if a == b {
        return None;
    }
    let fields = [
        ("files", json(&a.files) != json(&b.files)),
        ("scanned", json(&a.scanned) != json(&b.scanned)),
        ("skipped", json(&a.skipped) != json(&b.skipped)),
        ("fragments", a.fragments != b.fragments),
        ("components", a.components != b.components),
        ("guards", a.guards != b.guards),
    ];
    let differ: Vec<&str> = fields.iter().filter(|(_, d)| *d).map(|(n, _)| *n).collect();
    Some(format!(
        "differs in {}",
        if differ.is_empty() { "other fields".into() } else { differ.join(", ") }
    ))
}

/// For a symbol table that differs, the first symbol that does.
fn symbol_difference(name: &str, a: &Path, b: &Path) -> String {
    if name != maguyva_ast::SYMBOLS_FILE {
        return String::new();
    }
    let load = |dir: &Path| -> Option<Vec<maguyva_ast::Symbol>> {
        let files = Manifest::load(dir).ok()?.files.len();
        let t = maguyva_ast::SymbolTable::load(dir, files).ok()?;
        Some((0..t.len() as u32).filter_map(|i| t.symbol(maguyva_core::SymbolId(i))).collect())
    };
    match (load(a), load(b)) {
        (Some(x), Some(y)) => match x.iter().zip(&y).position(|(s, t)| s != t) {
            Some(i) => format!(": symbol {i} is {:?} and {:?}", x[i], y[i]),
            None => format!(": {} and {} symbols", x.len(), y.len()),
        },
        (x, y) => format!(
            ": the refreshed table reads: {}, the rebuilt one: {}",
            x.is_some(),
            y.is_some()
        ),
    }
}

/// Copies a folder, recursively; links are copied as the files or folders
/// they point to only when they stay inside, else left out (as the walk
/// leaves them out).
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("listing {}", from.display()))? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// One change to the tree, chosen at random among the kinds a session of
/// editing makes.
#[derive(Debug, Clone, Copy)]
enum Edit {
    /// A line of another file appended to a file.
    Append,
    /// A line inside a definition changed.
    ChangeLine,
    /// Two definitions of a file swap places.
    Reorder,
    /// A defined name renamed in every file that names it.
    RenameSymbol,
    /// A file renamed in its folder.
    RenameFile,
    /// A new file: a copy of another, whole or cut.
    Add,
    /// A file removed.
    Delete,
    /// A file moved to another folder.
    Move,
    /// An ignore file that leaves a file out written, or removed.
    Ignore,
    /// A file made binary (the read skips it), or a binary file added.
    Binary,
}

const EDITS: [Edit; 10] = [
    Edit::Append,
    Edit::ChangeLine,
    Edit::Reorder,
    Edit::RenameSymbol,
    Edit::RenameFile,
    Edit::Add,
    Edit::Delete,
    Edit::Move,
    Edit::Ignore,
    Edit::Binary,
];

fn pick<'a, T>(items: &'a [T], rng: &mut XorShift) -> Option<&'a T> {
    match items.len() {
        0 => None,
        n => items.get((rng.next_u64() % n as u64) as usize),
    }
}

/// Applies one random edit to the tree at `root`, whose indexed files are
/// `files`; says what it did, or `None` when the edit found nothing to do.
fn apply_random_edit(root: &Path, files: &[String], rng: &mut XorShift) -> Result<Option<String>> {
    let edit = *pick(&EDITS, rng).unwrap_or(&Edit::Append);
    let Some(path) = pick(files, rng) else { return Ok(None) };
    let full = root.join(path);
    let target = Target { root, files, path, full: &full };
    Ok(match edit {
        Edit::Append => append(&target, rng)?,
        Edit::ChangeLine => change_line(&target, rng)?,
        Edit::Reorder => reorder(&target, rng)?,
        Edit::RenameSymbol => rename_symbol(&target, rng)?,
        Edit::RenameFile => {
            let to = sibling(path, "renamed");
            std::fs::rename(&full, root.join(&to))?;
            Some(format!("rename {path} to {to}"))
        }
        Edit::Add => add_copy(&target, rng)?,
        Edit::Delete => {
            std::fs::remove_file(&full)?;
            Some(format!("delete {path}"))
        }
        Edit::Move => move_file(&target, rng)?,
        Edit::Binary => {
            let to = match rng.next_u64() % 2 {
                0 => path.clone(),
                _ => sibling(path, "blob"),
            };
            std::fs::write(root.join(&to), b"\0\0\x7fELF binary\0")?;
            Some(format!("binary {to}"))
        }
        Edit::Ignore => toggle_ignore(&target)?,
    })
}

/// The file an edit starts from, in the tree at `root` whose indexed files
/// are `files`.
#[derive(Clone, Copy)]
struct Target<'a> {
    root: &'a Path,
    files: &'a [String],
    /// Its path, relative to `root`.
    path: &'a str,
    /// Its full path.
    full: &'a Path,
}

fn read_text(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Appends a line taken from another file.
fn append(target: &Target, rng: &mut XorShift) -> Result<Option<String>> {
    let Target { path, full, root, files } = *target;
    let Some(mut text) = read_text(full) else { return Ok(None) };
    let other = pick(files, rng).and_then(|o| read_text(&root.join(o))).unwrap_or_default();
    let lines: Vec<&str> = other.lines().collect();
    let line = pick(&lines, rng).copied().unwrap_or("appended");
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    std::fs::write(full, text)?;
    Ok(Some(format!("append to {path}")))
}

/// Changes one line inside a definition: a word doubled, or a word added.
fn change_line(target: &Target, rng: &mut XorShift) -> Result<Option<String>> {
    let Target { path, full, .. } = *target;
    let Some(text) = read_text(full) else { return Ok(None) };
    let spans = definitions(path, &text);
    let Some(&(start, end, _)) = pick(&spans, rng) else { return Ok(None) };
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let at = (start + (rng.next_u64() % u64::from(end - start + 1)) as u32) as usize - 1;
    let Some(line) = lines.get_mut(at) else { return Ok(None) };
    // A word of the line doubled, or a word added at its end.
    let words: Vec<&str> =
        line.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| !w.is_empty()).collect();
    let changed = match pick(&words, rng) {
        Some(w) if rng.next_u64().is_multiple_of(2) => line.replacen(w, &format!("{w}{w}"), 1),
        _ => format!("{line} edited"),
    };
    *line = changed;
    std::fs::write(full, join_lines(&lines, &text))?;
    Ok(Some(format!("change line {} of {path}", at + 1)))
}

/// Swaps two top-level definitions.
fn reorder(target: &Target, rng: &mut XorShift) -> Result<Option<String>> {
    let Target { path, full, .. } = *target;
    let Some(text) = read_text(full) else { return Ok(None) };
    // Top-level definitions that do not overlap, in order.
    let mut spans: Vec<(u32, u32)> = Vec::new();
    for (start, end, top) in definitions(path, &text) {
        if top && spans.last().is_none_or(|&(_, e)| start > e) {
            spans.push((start, end));
        }
    }
    if spans.len() < 2 {
        return Ok(None);
    }
    let i = (rng.next_u64() % (spans.len() as u64 - 1)) as usize;
    let j = i + 1 + (rng.next_u64() % (spans.len() - i - 1) as u64) as usize;
    let ((a0, a1), (b0, b1)) = (spans[i], spans[j]);
    let lines: Vec<&str> = text.lines().collect();
    let part = |from: u32, to: u32| -> Vec<String> {
        lines.get(from as usize..to as usize).unwrap_or(&[]).iter().map(|l| l.to_string()).collect()
    };
    // Lines are 1-based and inclusive: the slices are 0-based.
    let mut out = part(0, a0 - 1);
    out.extend(part(b0 - 1, b1));
    out.extend(part(a1, b0 - 1));
    out.extend(part(a0 - 1, a1));
    out.extend(part(b1, lines.len() as u32));
    std::fs::write(full, join_lines(&out, &text))?;
    Ok(Some(format!("swap lines {a0}-{a1} and {b0}-{b1} of {path}")))
}

/// Renames a symbol the file defines, everywhere it is spelled.
fn rename_symbol(target: &Target, rng: &mut XorShift) -> Result<Option<String>> {
    let Target { path, full, root, files } = *target;
    let Some(text) = read_text(full) else { return Ok(None) };
    let Some(language) = detect(path, &text) else { return Ok(None) };
    let outline = maguyva_ast::outline(language, &text, FileId(0));
    let names: Vec<&str> =
        outline.symbols.iter().map(|s| s.name.as_str()).filter(|n| n.len() >= 3).collect();
    let Some(&name) = pick(&names, rng) else { return Ok(None) };
    let new = format!("{name}Renamed");
    let mut touched = 0;
    for f in files {
        let p = root.join(f);
        let Some(text) = read_text(&p) else { continue };
        let renamed = replace_word(&text, name, &new);
        if renamed != text {
            std::fs::write(&p, renamed)?;
            touched += 1;
        }
    }
    Ok(Some(format!("rename {name} to {new} in {touched} files")))
}

/// Adds a copy of the file beside it: whole, or its first half.
fn add_copy(target: &Target, rng: &mut XorShift) -> Result<Option<String>> {
    let Target { path, full, root, .. } = *target;
    let Some(text) = read_text(full) else { return Ok(None) };
    let to = sibling(path, "copy");
    // A whole copy (the same text twice), or its first half.
    let text = match rng.next_u64() % 2 {
        0 => text,
        _ => {
            let lines: Vec<&str> = text.lines().collect();
            lines[..lines.len() / 2].iter().map(|l| format!("{l}\n")).collect()
        }
    };
    std::fs::write(root.join(&to), text)?;
    Ok(Some(format!("add {to} from {path}")))
}

/// Moves the file into another folder of the tree.
fn move_file(target: &Target, rng: &mut XorShift) -> Result<Option<String>> {
    let Target { path, full, root, files } = *target;
    let folders: Vec<&str> =
        files.iter().map(|f| f.rsplit_once('/').map_or("", |(d, _)| d)).collect();
    let Some(&folder) = pick(&folders, rng) else { return Ok(None) };
    let name = path.rsplit('/').next().unwrap_or(path);
    let mut to = if folder.is_empty() { name.to_string() } else { format!("{folder}/{name}") };
    if root.join(&to).exists() {
        to = sibling(&to, "moved");
    }
    std::fs::rename(full, root.join(&to))?;
    Ok(Some(format!("move {path} to {to}")))
}

/// Adds an `.ignore` naming the file beside it, or removes the one there.
fn toggle_ignore(target: &Target) -> Result<Option<String>> {
    let Target { path, root, .. } = *target;
    let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
    let ignore = root.join(folder).join(".ignore");
    if ignore.exists() {
        std::fs::remove_file(&ignore)?;
        Ok(Some(format!("remove {folder}/.ignore")))
    } else {
        std::fs::write(&ignore, format!("{name}\n"))?;
        Ok(Some(format!("ignore {path}")))
    }
}

/// The definitions of a file in a known language: first and last line,
/// and whether it is top-level.
fn definitions(path: &str, text: &str) -> Vec<(u32, u32, bool)> {
    let Some(language) = detect(path, text) else { return Vec::new() };
    let outline = maguyva_ast::outline(language, text, FileId(0));
    let count = text.lines().count() as u32;
    outline
        .symbols
        .iter()
        .filter(|s| s.lines.end() <= count)
        .map(|s| (s.lines.start(), s.lines.end(), s.container.is_none()))
        .collect()
}

/// The language of a file, by its name or its first line.
fn detect(path: &str, text: &str) -> Option<Language> {
    let head = text.lines().next().unwrap_or("");
    Language::detect(path.rsplit('/').next().unwrap_or(path), head)
}

/// Lines joined again, with the original's final newline.
fn join_lines<S: AsRef<str>>(lines: &[S], original: &str) -> String {
    let mut out: String = lines.iter().map(AsRef::as_ref).collect::<Vec<&str>>().join("\n");
    if original.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `dir/name_tag.ext` for `dir/name.ext`.
fn sibling(path: &str, tag: &str) -> String {
    let (folder, name) = match path.rsplit_once('/') {
        Some((d, n)) => (format!("{d}/"), n),
        None => (String::new(), path),
    };
    match name.split_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{folder}{stem}_{tag}.{ext}"),
        _ => format!("{folder}{name}_{tag}"),
    }
}

/// `text` with every whole-word `word` replaced by `by`.
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(word) {
        let before = rest[..i].chars().next_back().is_some_and(is_word)
            || (i == 0 && out.chars().next_back().is_some_and(is_word));
        let after = rest[i + word.len()..].chars().next().is_some_and(is_word);
        out.push_str(&rest[..i]);
        out.push_str(if before || after { word } else { by });
        rest = &rest[i + word.len()..];
    }
    out.push_str(rest);
    out
}
