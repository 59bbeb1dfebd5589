//! A refresh, which parses only what changed and keeps the corpus model,
//! answers exactly as a build from scratch of the same tree with the same
//! model: on a fixture edited, extended and trimmed, and on random edit
//! sequences.

use maguyva_core::{IndexDir, NoProgress};
use maguyva_engine::{BuildOptions, Index, IndexSettings, SearchRequest, build_index_with};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// The rebuild a refresh must equal: every file parsed again, the same
/// corpus model kept.
const SAME_MODEL: BuildOptions = BuildOptions {
    reuse_outlines: false,
    reuse_model: true,
    reuse_text: false,
    trust_unchanged_stat: false,
};

const QUERIES: [&str; 8] = [
    "how is the discount applied to the cart total",
    "where is the stock reserved",
    "apply_discount",
    "who calls reserve_stock",
    "what breaks if I change Cart",
    "\"TAX_RATE\"",
    "restock the warehouse",
    "parse the shipping label",
];

const FILES: [(&str, &str); 5] = [
    (
        "src/cart.rs",
        "use crate::pricing::apply_discount;\n\n/// A shopping cart.\npub struct Cart { items: Vec<u32> }\n\nimpl Cart {\n    /// The total after discounts.\n    pub fn total(&self) -> u32 {\n        apply_discount(self.items.iter().sum())\n    }\n}\n",
    ),
    (
        "src/pricing.rs",
        "pub const TAX_RATE: u32 = 20;\n\n/// Takes the discount off a price.\npub fn apply_discount(price: u32) -> u32 {\n    price - price / 10\n}\n",
    ),
    (
        "src/inventory.rs",
        "/// Holds stock for an order.\npub fn reserve_stock(sku: &str, n: u32) -> bool {\n    !sku.is_empty() && n > 0\n}\n\n/// Puts stock back in the warehouse.\npub fn restock(sku: &str) {\n    let _ = reserve_stock(sku, 1);\n}\n",
    ),
    (
        "shop/labels.py",
        "def parse_label(text):\n    \"\"\"Parses a shipping label.\"\"\"\n    return text.split(':')\n",
    ),
    (
        "shop/orders.py",
        "from shop.labels import parse_label\n\nclass Order:\n    def ship(self, label):\n        return parse_label(label)\n",
    ),
];

struct Setup {
    tree: tempfile::TempDir,
    /// Refreshed in place.
    refreshed: PathBuf,
    /// Rebuilt from scratch with the same model.
    rebuilt: PathBuf,
    _indexes: tempfile::TempDir,
    settings: IndexSettings,
}

impl Setup {
    fn new() -> Setup {
        let tree = tempfile::tempdir().unwrap();
        for (path, text) in FILES {
            write(tree.path(), path, text);
        }
        let indexes = tempfile::tempdir().unwrap();
        let settings = IndexSettings {
            embedder: maguyva_engine::EmbedderChoice::builtin(),
            ..IndexSettings::default()
        };
        let refreshed = indexes.path().join("refreshed");
        let rebuilt = indexes.path().join("rebuilt");
        build_index_with(
            tree.path(),
            &IndexDir::new(&refreshed),
            &settings,
            BuildOptions::FULL,
            &NoProgress,
        )
        .unwrap();
        copy_dir(&refreshed, &rebuilt);
        Setup { tree, refreshed, rebuilt, _indexes: indexes, settings }
    }

    /// Refreshes one index and rebuilds the other from the same previous
    /// generation with the same model; both must answer alike.
    fn check(&self) -> (maguyva_engine::BuildReport, maguyva_engine::BuildReport) {
        let (refreshed, a) = build_index_with(
            self.tree.path(),
            &IndexDir::new(&self.refreshed),
            &self.settings,
            BuildOptions::REFRESH,
            &NoProgress,
        )
        .unwrap();
        let (_, b) = build_index_with(
            self.tree.path(),
            &IndexDir::new(&self.rebuilt),
            &self.settings,
            SAME_MODEL,
            &NoProgress,
        )
        .unwrap();
        assert_eq!(a.model_kept, b.model_kept);
        assert!(b.parsed_files >= a.parsed_files);
        let expected = answers(&self.rebuilt, &self.settings);
        assert_eq!(answers(&self.refreshed, &self.settings), expected);
        // The index a refresh returns (what a server keeps answering from)
        // answers as the one it wrote.
        assert_eq!(answers_of(&refreshed), expected, "the refreshed index in memory");
        // What a refresh writes is what a rebuild writes: every file to the
        // byte, the manifest but for when and how fast it was made.
        let names = |index: &str| {
            let mut names: Vec<String> = std::fs::read_dir(index)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(&a.index), names(&b.index));
        for file in names(&a.index) {
            if file == maguyva_core::MANIFEST_FILE {
                let timeless = |index: &str| {
                    let m = maguyva_core::Manifest::load(Path::new(index)).unwrap();
                    let guards = maguyva_core::WalkGuards { started_ns: 0, ..m.guards.clone() };
                    maguyva_core::Manifest { created_unix_ms: 0, build_ms: 0, guards, ..m }
                };
                assert!(timeless(&a.index) == timeless(&b.index), "the manifests differ");
                continue;
            }
            let read = |index: &str| std::fs::read(Path::new(index).join(&file)).unwrap();
            assert!(read(&a.index) == read(&b.index), "{file} differs");
        }
        // The next step starts both from the same generation again.
        std::fs::remove_dir_all(&self.rebuilt).unwrap();
        copy_dir(&self.refreshed, &self.rebuilt);
        (a, b)
    }
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    write_file(&path, text.as_bytes());
}

/// Writes a file and dates it in the past, a second after the last file
/// written: a refresh takes files whose size and time it has seen, and
/// that were not modified just before the build it has them from, as
/// unchanged without reading them.
fn write_file(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
    set_mtime(path, STAMP.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
}

static STAMP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1_600_000_000);

fn set_mtime(path: &Path, unix_seconds: u64) {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_seconds);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(time).unwrap();
}

fn mtime(path: &Path) -> u64 {
    let modified = std::fs::metadata(path).unwrap().modified().unwrap();
    modified.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every query's results (paths, lines, scores, modalities), as JSON.
fn answers(dir: &Path, settings: &IndexSettings) -> Vec<String> {
    answers_of(&Index::open(&IndexDir::new(dir), settings).unwrap())
}

fn answers_of(index: &Index) -> Vec<String> {
    QUERIES
        .iter()
        .map(|q| {
            let r = index.search(&SearchRequest::new(*q)).unwrap();
            serde_json::to_string(&(r.intent, r.modalities, r.results)).unwrap()
        })
        .collect()
}

#[test]
fn a_refresh_answers_as_a_rebuild_with_the_same_model() {
    let s = Setup::new();
    // Edited.
    write(
        s.tree.path(),
        "src/pricing.rs",
        "pub const TAX_RATE: u32 = 21;\n\n/// Takes the discount off a price, never below zero.\npub fn apply_discount(price: u32) -> u32 {\n    price.saturating_sub(price / 10)\n}\n",
    );
    let (refresh, rebuild) = s.check();
    assert_eq!((refresh.parsed_files, rebuild.parsed_files), (1, FILES.len()));
    assert!(refresh.model_kept, "one edited file is no drift");
    // Extended.
    write(
        s.tree.path(),
        "src/shipping.rs",
        "use crate::inventory::reserve_stock;\n\n/// Ships an order once its stock is reserved.\npub fn ship(sku: &str) -> bool {\n    reserve_stock(sku, 1)\n}\n",
    );
    let (refresh, _) = s.check();
    assert_eq!(refresh.parsed_files, 1, "only the new file is parsed");
    // Trimmed.
    std::fs::remove_file(s.tree.path().join("shop/orders.py")).unwrap();
    let (refresh, _) = s.check();
    assert_eq!(refresh.parsed_files, 0);
    let index = Index::open(&IndexDir::new(&s.refreshed), &s.settings).unwrap();
    let found = index.search(&SearchRequest::new("\"parse_label(label)\"")).unwrap();
    assert!(found.results.is_empty(), "nothing is returned from a deleted file");
}

#[test]
fn an_index_the_tree_moved_away_from_answers_without_the_changed_files() {
    let s = Setup::new();
    let index = Index::open(&IndexDir::new(&s.refreshed), &s.settings).unwrap();
    let query = SearchRequest::new("how is the discount applied to the cart total");
    let before = index.search(&query).unwrap();
    let paths = |r: &maguyva_engine::SearchResponse| -> Vec<String> {
        r.results.iter().map(|r| r.path.clone()).collect()
    };
    assert!(paths(&before).contains(&"src/pricing.rs".to_string()), "{:?}", paths(&before));
    // The same index, opened again so that no text is kept, after an edit.
    let index = Index::open(&IndexDir::new(&s.refreshed), &s.settings).unwrap();
    write(s.tree.path(), "src/pricing.rs", "pub const TAX_RATE: u32 = 21;\n");
    assert!(matches!(index.search(&query), Err(maguyva_core::Error::Changed { .. })));
    let stale = index.search_as_indexed(&query).unwrap();
    assert_eq!(stale.changed, ["src/pricing.rs"]);
    let expected: Vec<String> =
        paths(&before).into_iter().filter(|p| p != "src/pricing.rs").collect();
    assert_eq!(paths(&stale), expected);
}

/// One change to the tree.
#[derive(Debug, Clone)]
enum Edit {
    /// Appends a line of these words to file `i` (of the ones present).
    Append(usize, Vec<&'static str>),
    /// Writes a new file of these words.
    Add(usize, Vec<&'static str>),
    /// Removes file `i` (of the ones present).
    Remove(usize),
    /// Swaps the texts of files `i` and `j` (of the ones present).
    Swap(usize, usize),
    /// Writes a binary file (one the read skips) at a path that sorts
    /// among the others.
    Binary(usize),
    /// Moves the definition at the end of file `i` to its start: in Rust,
    /// an `impl` then comes before its type.
    Reorder(usize),
}

const WORDS: [&str; 12] = [
    "cart",
    "discount",
    "stock",
    "label",
    "warehouse",
    "order",
    "price",
    "ship",
    "reserve",
    "tax",
    "total",
    "parse",
];

fn edit() -> impl Strategy<Value = Edit> {
    let words = prop::collection::vec(prop::sample::select(WORDS.to_vec()), 1..6);
    prop_oneof![
        (0usize..8, words.clone()).prop_map(|(i, w)| Edit::Append(i, w)),
        (0usize..4, words).prop_map(|(i, w)| Edit::Add(i, w)),
        (0usize..8).prop_map(Edit::Remove),
        (0usize..8, 0usize..8).prop_map(|(i, j)| Edit::Swap(i, j)),
        (0usize..4).prop_map(Edit::Binary),
        (0usize..8).prop_map(Edit::Reorder),
    ]
}

fn files_of(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["src", "shop"] {
        if let Ok(entries) = std::fs::read_dir(root.join(dir)) {
            out.extend(entries.map(|e| e.unwrap().path()));
        }
    }
    out.sort();
    out
}

fn apply(root: &Path, edit: &Edit) {
    let files = files_of(root);
    match edit {
        Edit::Append(i, words) if !files.is_empty() => {
            let path = &files[i % files.len()];
            let mut text = std::fs::read_to_string(path).unwrap();
            text.push_str(&format!("// {}\n", words.join(" ")));
            write_file(path, text.as_bytes());
        }
        Edit::Add(i, words) => {
            let name = format!("src/extra_{i}.rs");
            let text = format!("/// {}\npub fn {}_{i}() {{}}\n", words.join(" "), words[0]);
            write(root, &name, &text);
        }
        Edit::Remove(i) if files.len() > 1 => {
            std::fs::remove_file(&files[i % files.len()]).unwrap()
        }
        Edit::Swap(i, j) if !files.is_empty() => {
            let (a, b) = (&files[i % files.len()], &files[j % files.len()]);
            let (ta, tb) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
            write_file(a, &tb);
            write_file(b, &ta);
        }
        Edit::Binary(i) => {
            let name =
                ["shop/a_blob.py", "src/b_blob.rs", "shop/m_blob.py", "src/z_blob.rs"][i % 4];
            write_file(&root.join(name), b"\0\0binary\0");
        }
        Edit::Reorder(i) if !files.is_empty() => {
            let path = &files[i % files.len()];
            let text = std::fs::read_to_string(path).unwrap_or_default();
            // The last item that starts at the start of a line, moved first.
            let starts: Vec<usize> = text
                .match_indices('\n')
                .map(|(at, _)| at + 1)
                .filter(|&at| text[at..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/'))
                .collect();
            if let Some(&last) = starts.last() {
                let moved = format!("{}{}", &text[last..], &text[..last]);
                write_file(path, moved.as_bytes());
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn random_edit_sequences_refresh_as_they_rebuild(
        steps in prop::collection::vec(prop::collection::vec(edit(), 1..3), 1..4)
    ) {
        let s = Setup::new();
        for step in &steps {
            for e in step {
                apply(s.tree.path(), e);
            }
            s.check();
        }
    }
}

/// Two files that define the same names, at other lines and calling other
/// things, trade texts: each path's symbols and links are its new text's,
/// not the ones its old text had.
#[test]
fn files_that_trade_texts_are_refreshed_as_rebuilt() {
    let s = Setup::new();
    let a = "/// Packs an order.\npub fn pack() {\n    crate::inventory::restock(\"a\");\n}\n";
    let b = "\n\n// Packing, the other way.\n\npub fn pack() {\n    let _ = crate::pricing::apply_discount(1);\n}\n";
    write(s.tree.path(), "src/twin_a.rs", a);
    write(s.tree.path(), "src/twin_b.rs", b);
    s.check();
    write(s.tree.path(), "src/twin_a.rs", b);
    write(s.tree.path(), "src/twin_b.rs", a);
    let (refresh, _) = s.check();
    assert_eq!(refresh.parsed_files, 0, "both texts were parsed before");
}

/// A file edited without its size or time changing (a file system that
/// keeps whole seconds, an edit in the second it was read) is taken as
/// unchanged; when a refresh needs such a file's text after all (here a
/// `package.json`, read for the module roots on every build), it finds the
/// text is not the one recorded and builds again reading every file.
#[test]
fn a_file_taken_as_unchanged_that_changed_is_read_after_all() {
    let s = Setup::new();
    let package = s.tree.path().join("web/package.json");
    write(s.tree.path(), "web/package.json", r#"{"name": "@shop/web", "main": "./index.js"}"#);
    write(s.tree.path(), "web/index.js", "export function checkout() { return 1; }\n");
    s.check();
    let stamp = mtime(&package);
    std::fs::write(&package, r#"{"name": "@shop/app", "main": "./index.js"}"#).unwrap();
    set_mtime(&package, stamp);
    let (refresh, rebuild) = s.check();
    assert_eq!(refresh.files, rebuild.files);
    // Untouched files are still taken as they were.
    let (refresh, _) = s.check();
    assert_eq!(refresh.parsed_files, 0);
}

/// A file skipped for what it held is not read again while its size and
/// time stay; once it changes, it is read and judged again.
#[test]
fn a_skipped_file_that_changed_is_judged_again() {
    let s = Setup::new();
    let path = s.tree.path().join("src/blob.rs");
    write_file(&path, b"pub fn blob() {}\0\0\n");
    let (refresh, rebuild) = s.check();
    assert_eq!((refresh.files, rebuild.files), (FILES.len(), FILES.len()));
    assert!(refresh.skipped.iter().any(|s| s.path == "src/blob.rs"));
    let (refresh, _) = s.check();
    assert!(refresh.skipped.iter().any(|s| s.path == "src/blob.rs"), "still skipped");
    write_file(&path, b"/// A blob of stock.\npub fn blob_stock() {}\n");
    let (refresh, rebuild) = s.check();
    assert_eq!((refresh.files, rebuild.files), (FILES.len() + 1, FILES.len() + 1));
    assert!(refresh.skipped.is_empty());
}

/// A method defined before its type (`impl Foo` before `struct Foo`) has a
/// container after it: a refresh that copies the file's symbols as stored
/// writes a table its reader accepts, and answers as a rebuild, whatever
/// other file changed.
#[test]
fn a_container_after_what_it_contains_survives_a_refresh() {
    let s = Setup::new();
    write(
        s.tree.path(),
        "src/late.rs",
        "impl Warehouse {\n    /// Puts stock back.\n    pub fn restock_all(&self) {}\n}\n\n/// Where stock is kept.\npub struct Warehouse;\n",
    );
    s.check();
    write(s.tree.path(), "README.md", "A shop.\n");
    let (refresh, _) = s.check();
    assert_eq!(refresh.parsed_files, 0, "late.rs is kept as it is stored");
    let index = Index::open(&IndexDir::new(&s.refreshed), &s.settings).unwrap();
    let found = index.search(&SearchRequest::new("restock_all")).unwrap();
    assert_eq!(found.results.first().map(|r| r.path.as_str()), Some("src/late.rs"));
    assert!(index.callers("Warehouse", 10).is_ok());
    assert!(index.impact("Warehouse", 2, 10).is_ok());
}

/// A file the read skips (binary) sorts before files that a refresh takes
/// as unchanged without reading: their texts are still theirs, in the
/// index the refresh returns (snippets, literal matches, a new corpus
/// model) as in the one it wrote.
#[test]
fn a_skipped_file_does_not_shift_the_texts_of_the_files_after_it() {
    let s = Setup::new();
    write_file(&s.tree.path().join("shop/a_blob.py"), b"\0\0binary\0");
    s.check();
    write(s.tree.path(), "shop/labels.py", "def parse_label(text):\n    return text\n");
    let (refreshed, _) = build_index_with(
        s.tree.path(),
        &IndexDir::new(&s.refreshed),
        &s.settings,
        BuildOptions::REFRESH,
        &NoProgress,
    )
    .unwrap();
    let found = refreshed.search(&SearchRequest::new("\"def ship(self, label)\"")).unwrap();
    let paths: Vec<&str> = found.results.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["shop/orders.py"], "a file taken as unchanged keeps its text");
    assert!(found.results[0].snippet.contains("def ship"), "{:?}", found.results[0].snippet);
}
