//! Reading a repository's past commits: `git log` of the work tree's
//! `HEAD`, each commit's message and the indexed files it modified.

use std::path::Path;
use std::process::{Command, Stdio};

/// The most recent commits read: enough to know a project's habits, few
/// enough that reading them costs a fraction of a build (about 0.4 s for
/// 5,000 commits of a large project).
pub const MAX_COMMITS: usize = 10_000;

/// A commit that modified more indexed files than this (a rename across
/// the tree, a formatting pass, a licence header) says nothing of any one
/// of them, and is left out.
pub const MAX_FILES_PER_COMMIT: usize = 40;

/// One past commit: its message and the indexed files it modified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastCommit {
    /// Subject and body.
    pub message: String,
    /// Paths relative to the repository's top, as git writes them.
    pub paths: Vec<String>,
}

/// Separates commits in the output (`%x1e`, ASCII record separator).
const RECORD: char = '\u{1e}';
/// Ends a commit's message (`%x1f`, ASCII unit separator).
const UNIT: char = '\u{1f}';

/// `git -C root` with nothing the repository's configuration says
/// running a program or changing the output's shape.
fn git(root: &Path) -> Command {
    let mut git = Command::new("git");
    git.arg("-C").arg(root).args([
        "-c",
        "core.fsmonitor=false",
        "-c",
        "log.showSignature=false",
        "-c",
        "core.quotePath=false",
    ]);
    git.stdin(Stdio::null()).stderr(Stdio::null());
    git
}

/// The commit `HEAD` names (40 or 64 hex digits), when `root` is the top
/// of a git work tree (it holds `.git`) and `git` can read it. Reading
/// history is best effort: a folder that is not a repository's top, a
/// repository git refuses (another owner), a repository without commits
/// or a machine without git has none, and that is no error.
pub fn head(root: &Path) -> Option<String> {
    if !root.join(".git").exists() {
        return None;
    }
    let out = git(root).args(["rev-parse", "--verify", "-q", "HEAD"]).output().ok()?;
    let id = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && id.len() >= 40 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(id)
}

/// The commits of the work tree at `root` up to commit `head` (as
/// [`head`] gives it), newest first; none when git cannot read them.
pub fn read_commits(root: &Path, head: &str) -> Vec<PastCommit> {
    let output = git(root)
        .args([
            "log",
            "--no-merges",
            "--no-color",
            "--no-renames",
            "--diff-filter=M",
            "--name-only",
        ])
        .arg(format!("--max-count={MAX_COMMITS}"))
        .arg("--format=%x1e%B%x1f")
        .arg(head)
        .arg("--")
        .output();
    match output {
        Ok(out) if out.status.success() => parse_log(&String::from_utf8_lossy(&out.stdout)),
        _ => Vec::new(),
    }
}

/// The commits of `git log --name-only --format=%x1e%B%x1f` output.
pub fn parse_log(text: &str) -> Vec<PastCommit> {
    text.split(RECORD)
        .filter_map(|record| {
            let (message, names) = record.split_once(UNIT)?;
            let paths: Vec<String> = names
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            Some(PastCommit { message: message.trim().to_string(), paths })
        })
        .filter(|c| !c.paths.is_empty() && !c.message.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_messages_and_paths() {
        let out = "\u{1e}Fix the parser on empty input\n\nIt crashed.\n\u{1f}\n\nsrc/parse.rs\nsrc/lib.rs\n\
                   \u{1e}Add a flag\n\u{1f}\n\nsrc/cli.rs\n\u{1e}Only a message\n\u{1f}\n";
        let commits = parse_log(out);
        assert_eq!(commits.len(), 2);
        assert_eq!(commits[0].message, "Fix the parser on empty input\n\nIt crashed.");
        assert_eq!(commits[0].paths, vec!["src/parse.rs", "src/lib.rs"]);
        assert_eq!(commits[1].paths, vec!["src/cli.rs"]);
    }

    #[test]
    fn a_folder_that_is_no_repository_has_no_history() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n")?;
        assert_eq!(head(dir.path()), None);
        Ok(())
    }
}
