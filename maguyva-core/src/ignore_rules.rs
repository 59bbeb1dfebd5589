//! Whether one path is part of the indexed tree, decided by the rules the
//! walk of [`crate::CorpusBuilder::scan`] follows, without walking: for a
//! file watcher, which hears of every change and should act only on those
//! the next walk would see.

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The files whose rules a folder contributes, strongest first, as the
/// walker weighs them.
const RULE_FILES: [&str; 2] = [".ignore", ".gitignore"];

/// git's per-repository exclude file, below a folder holding `.git`.
const GIT_EXCLUDE: &str = ".git/info/exclude";

/// The ignore rules of a tree: hidden paths, `.ignore`, `.gitignore` and
/// git's exclude file, in the folder of a path and every folder above it.
/// Each folder's rules are read once and kept until
/// [`IgnoreRules::forget`].
#[derive(Debug)]
pub struct IgnoreRules {
    root: PathBuf,
    folders: HashMap<PathBuf, Vec<Gitignore>>,
}

impl IgnoreRules {
    /// The rules of the tree at `root` (a canonical path, as the walk uses).
    pub fn new(root: impl Into<PathBuf>) -> IgnoreRules {
        IgnoreRules { root: root.into(), folders: HashMap::new() }
    }

    /// Whether a change to `path` can change what is indexed: it lies in
    /// the tree, and is walked (not hidden, not ignored), or is a file of
    /// rules that decides what is walked (whose rules read so far are then
    /// forgotten).
    pub fn is_relevant(&mut self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else { return false };
        if rel.as_os_str().is_empty() {
            return true;
        }
        if is_rule_file(rel) {
            self.forget();
            return true;
        }
        let hidden = rel.components().any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
        !hidden && !self.is_ignored(path, path.is_dir())
    }

    /// Whether the walk skips `path` for an ignore rule.
    pub fn is_ignored(&mut self, path: &Path, is_dir: bool) -> bool {
        let mut folder = path.parent();
        while let Some(dir) = folder {
            for rules in self.rules_of(dir) {
                match rules.matched_path_or_any_parents(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
            folder = dir.parent();
        }
        false
    }

    /// Drops the rules read so far: a file of rules changed.
    pub fn forget(&mut self) {
        self.folders.clear();
    }

    fn rules_of(&mut self, dir: &Path) -> &[Gitignore] {
        self.folders.entry(dir.to_path_buf()).or_insert_with(|| {
            let mut names: Vec<PathBuf> = RULE_FILES.iter().map(|f| dir.join(f)).collect();
            names.push(dir.join(GIT_EXCLUDE));
            names
                .into_iter()
                .filter(|f| f.is_file())
                .filter_map(|f| {
                    let mut builder = GitignoreBuilder::new(dir);
                    // A malformed line is skipped, as the walk skips it.
                    let _ = builder.add(&f);
                    builder.build().ok()
                })
                .filter(|g| !g.is_empty())
                .collect()
        })
    }
}

/// Whether `rel` names a file of ignore rules.
fn is_rule_file(rel: &Path) -> bool {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    RULE_FILES.contains(&name) || rel.ends_with(GIT_EXCLUDE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap_or(dir.path()))
                .unwrap_or_else(|e| panic!("{e}"));
            std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
        }
        dir
    }

    #[test]
    fn agrees_with_the_walk() {
        let dir = tree(&[
            (".gitignore", "target/\n*.log\n!keep.log\n"),
            ("src/.ignore", "generated.rs\n"),
            ("src/lib.rs", "fn a() {}"),
            ("src/generated.rs", "fn b() {}"),
            ("src/keep.log", "kept"),
            ("debug.log", "dropped"),
            ("target/out.rs", "fn c() {}"),
            ("notes/.hidden/x.rs", "fn d() {}"),
            (".git/info/exclude", "local.rs\n"),
            ("local.rs", "fn e() {}"),
        ]);
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let scan = crate::CorpusBuilder::new().scan(&root).unwrap_or_else(|e| panic!("{e}"));
        let walked: Vec<&str> = scan.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(walked, ["src/keep.log", "src/lib.rs"]);
        let mut rules = IgnoreRules::new(&root);
        for path in [
            "src/lib.rs",
            "src/generated.rs",
            "src/keep.log",
            "debug.log",
            "target/out.rs",
            "notes/.hidden/x.rs",
            "local.rs",
        ] {
            assert_eq!(
                rules.is_relevant(&root.join(path)),
                walked.contains(&path),
                "{path}: walked {walked:?}"
            );
        }
        // A new file in an ignored folder, and one that does not exist yet.
        assert!(!rules.is_relevant(&root.join("target/new.rs")));
        assert!(rules.is_relevant(&root.join("src/new.rs")));
        // Rules files decide what is walked; paths outside do not count.
        assert!(rules.is_relevant(&root.join("src/.ignore")));
        assert!(!rules.is_relevant(Path::new("/elsewhere/x.rs")));
    }

    #[test]
    fn forgets_rules_that_changed() {
        let dir = tree(&[(".gitignore", "a.rs\n"), ("a.rs", "")]);
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        let mut rules = IgnoreRules::new(&root);
        assert!(!rules.is_relevant(&root.join("a.rs")));
        std::fs::write(root.join(".gitignore"), "b.rs\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(!rules.is_relevant(&root.join("a.rs")), "kept until forgotten");
        rules.forget();
        assert!(rules.is_relevant(&root.join("a.rs")));
        // Hearing of a change to a rules file forgets them too.
        std::fs::write(root.join(".gitignore"), "a.rs\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(rules.is_relevant(&root.join(".gitignore")));
        assert!(!rules.is_relevant(&root.join("a.rs")));
    }
}
