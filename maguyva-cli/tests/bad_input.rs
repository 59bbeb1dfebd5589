use crate::util::{Repo, reads_despite_permissions, result_paths};
use maguyva_core::IndexDir;

#[test]
fn empty_repository() {
    // A search, or any question, in a folder with no file says so and
    // leaves nothing behind.
    let repo = Repo::empty();
    for args in
        [vec!["search", "anything"], vec!["callers", "x"], vec!["impact", "x"], vec!["symbols"]]
    {
        let run = repo.run(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("holds no file to index"), "{args:?}: {}", run.stderr);
        assert!(!repo.path().join(".maguyva").exists(), "{args:?} wrote an index");
    }
    // Indexing it on purpose works, and says what it found.
    let run = repo.run(&["index"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("indexed 0 files"), "{}", run.stdout);
    let search = repo.run(&["search", "anything"]);
    assert_eq!(search.code, 1, "no results: {}", search.stderr);
    assert!(search.stderr.contains("holds no file that can be indexed"), "{}", search.stderr);
}

#[test]
fn only_binary_files() {
    let repo = Repo::empty();
    repo.write("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    repo.write("blob.bin", [0u8, 1, 2, 3, 0, 255]);
    let run = repo.run(&["index"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("indexed 0 files"), "{}", run.stdout);
    assert!(run.stdout.contains("skipped 2 files: 2 binary"), "{}", run.stdout);
    let search = repo.run(&["search", "\"PNG\""]);
    assert_eq!(search.code, 1);
    assert!(
        search.stderr.contains("no file that can be indexed (2 left out: 2 binary)"),
        "{}",
        search.stderr
    );
}

/// An index folder that cannot be written gets an error that says so and
/// how to keep the index elsewhere.
#[test]
fn an_index_folder_that_cannot_be_written_says_to_use_index_dir() {
    let repo = Repo::fixture("python");
    // In the way of the index folder: a file where it would go.
    repo.write(".maguyva", "not a folder");
    let run = repo.run(&["search", "apply discount"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cannot be written") && run.stderr.contains("--index-dir"),
        "{}",
        run.stderr
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let dir = elsewhere.path().join("idx");
    let run = repo.run(&["search", "apply discount", "--index-dir", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = repo.run(&["index", "-q"]);
    assert!(run.stderr.contains("--index-dir"), "{}", run.stderr);
}

/// A folder that can be read but not written, with no index in it yet.
#[cfg(unix)]
#[test]
fn a_read_only_folder_without_an_index_says_to_use_index_dir() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::fixture("python");
    for entry in walk(repo.path()) {
        let mode = if entry.is_dir() { 0o755 } else { 0o644 };
        std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    std::fs::set_permissions(repo.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let Some(run) = run_unprivileged(repo.path(), &["search", "apply discount"]) else {
        eprintln!("skipped: running as root without setpriv");
        return;
    };
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--index-dir"), "{}", run.stderr);
    assert!(run.stderr.contains("ermission denied"), "{}", run.stderr);
}

/// How many progress events an index build of `repo` has, and the event
/// each stage begins at (the build runs to its end, in `index_dir` when
/// given).
#[cfg(unix)]
fn build_events(repo: &Repo, index_dir: Option<&std::path::Path>) -> (u64, Vec<u64>) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_maguyva"));
    command.args(["index", "-q"]).current_dir(repo.path()).env("MAGUYVA_PAUSE_AT", "count");
    if let Some(dir) = index_dir {
        command.arg("--index-dir").arg(dir);
    }
    let counted = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&counted.stderr);
    stderr
        .lines()
        .find_map(|l| {
            let (n, stages) =
                l.strip_prefix("maguyva: ")?.split_once(" progress events; stages begin at ")?;
            let stages: Vec<u64> = stages.split(' ').filter_map(|s| s.parse().ok()).collect();
            Some((n.parse::<u64>().ok()?, stages))
        })
        .unwrap_or_else(|| panic!("no event count: {stderr}"))
}

/// `maguyva index` in `repo`, paused at event `at`; whether it said it
/// paused (read from its error stream up to that line).
#[cfg(unix)]
fn paused_build(repo: &Repo, at: u64) -> (std::process::Child, bool) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_maguyva"))
        .args(["index", "-q"])
        .current_dir(repo.path())
        .env("MAGUYVA_PAUSE_AT", at.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let paused = stderr.lines().map_while(Result::ok).any(|l| l.contains("paused at"));
    (child, paused)
}

/// Ctrl-C while an index is written: the process ends as interrupted, and
/// the generation it was writing is gone; the previous one still answers.
#[cfg(unix)]
#[test]
fn an_interrupted_build_leaves_nothing_behind() {
    let repo = Repo::fixture("python");
    // Counted in a folder of its own: the first round needs no index here.
    let counting = tempfile::tempdir().unwrap();
    let (_, stages) = build_events(&repo, Some(&counting.path().join("idx")));
    // The last stage, writing, begins once the generation's folder is made.
    let at = *stages.last().expect("stages");
    let index = repo.path().join(".maguyva");
    let entries = |prefix: &str| {
        std::fs::read_dir(&index).map_or(0, |d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                .count()
        })
    };
    // The first build, interrupted, leaves no index folder at all; the
    // second, over a good index, leaves the good one alone.
    for round in 0..2 {
        let good = (round == 1).then(|| {
            assert_eq!(repo.run(&["index", "-q"]).code, 0);
            current_generation(&repo)
        });
        let (mut child, paused) = paused_build(&repo, at);
        assert!(paused, "round {round}: never paused");
        assert_eq!(entries("tmp-"), 1, "round {round}: a generation is being written");
        let signal = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(signal.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "round {round}: ends as interrupted");
        assert_eq!(entries("tmp-"), 0, "round {round}: the unfinished generation is removed");
        match good {
            None => assert!(!index.exists(), "round 0: no index folder is left"),
            Some(good) => {
                assert_eq!(current_generation(&repo), good);
                assert_eq!(entries("gen-"), 1, "round 1: only the good generation");
                let (run, json) = repo.search_json("\"apply_discount\"", &["--no-refresh"]);
                assert_eq!(run.code, 0, "{}", run.stderr);
                assert!(!result_paths(&json).is_empty());
            }
        }
    }
}

/// A tree moved elsewhere with its index: the next search rebuilds the
/// index, and the generation it replaced is removed.
#[test]
fn a_rebuild_after_a_move_leaves_one_generation() {
    let repo = Repo::fixture("go");
    assert_eq!(repo.run(&["index", "-q"]).code, 0);
    let moved = tempfile::tempdir().unwrap();
    let to = moved.path().join("moved");
    std::fs::rename(repo.path(), &to).unwrap();
    let run = crate::util::run_in(&to, &["search", "apply discount"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("index rebuilt"), "{}", run.stderr);
    let gens: Vec<String> = std::fs::read_dir(to.join(".maguyva"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gen-") || n.starts_with("tmp-"))
        .collect();
    assert_eq!(gens.len(), 1, "{gens:?}");
    // A refresh after an edit leaves one too.
    std::fs::write(to.join("notes.md"), "Shipping notes.\n").unwrap();
    let run = crate::util::run_in(&to, &["search", "shipping notes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let count = std::fs::read_dir(to.join(".maguyva"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("gen-"))
        .count();
    assert_eq!(count, 1);
    std::fs::rename(&to, repo.path()).unwrap();
}

#[cfg(unix)]
#[test]
fn unreadable_files_are_skipped_with_a_reason() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::fixture("go");
    let secret = repo.write("secret.go", "package secret\n// UNREADABLE_MARKER\n");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let run = repo.run(&["index", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let skipped = json["skipped"].as_array().unwrap();
    if reads_despite_permissions(&secret) {
        // Running as root: permissions do not stop reading, so it is indexed.
        assert!(skipped.is_empty());
        assert_eq!(json["files"], 7);
    } else {
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0]["path"], "secret.go");
        assert_eq!(skipped[0]["reason"], "unreadable");
        assert!(skipped[0]["error"].as_str().unwrap().contains("ermission"));
        assert_eq!(json["files"], 6);
    }
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[cfg(unix)]
#[test]
fn symlink_loop_is_skipped() {
    let repo = Repo::fixture("c");
    std::os::unix::fs::symlink(repo.path().join("src"), repo.path().join("src/loop")).unwrap();
    std::os::unix::fs::symlink("missing-target", repo.path().join("dangling")).unwrap();
    let run = repo.run(&["index"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("2 symlink"), "{}", run.stdout);
    assert!(run.stdout.contains("src/loop"), "{}", run.stdout);
}

#[test]
fn a_50_mb_file_is_skipped_without_reading_it() {
    let repo = Repo::fixture("python");
    let big = std::fs::File::create(repo.path().join("dump.sql")).unwrap();
    big.set_len(50 * 1024 * 1024).unwrap();
    let run = repo.run(&["index", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["skipped"][0]["path"], "dump.sql");
    assert_eq!(json["skipped"][0]["reason"], "too_large");
    assert_eq!(json["skipped"][0]["size"], 50 * 1024 * 1024);
    // A larger cap admits a file the default refuses.
    repo.write("medium.txt", "MEDIUM_MARKER\n".repeat(100_000));
    let (_, json) = repo.search_json("\"MEDIUM_MARKER\"", &[]);
    assert!(result_paths(&json).is_empty());
    let (_, json) = repo.search_json("\"MEDIUM_MARKER\"", &["--max-file-size", "2M"]);
    assert_eq!(result_paths(&json), vec!["medium.txt"]);
}

#[test]
fn invalid_utf8_is_decoded_lossily_and_counted() {
    let repo = Repo::empty();
    repo.write("latin1.py", b"# caf\xe9 au lait\nLATIN_MARKER = 'cr\xe8me'\n");
    let run = repo.run(&["index"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("1 files had invalid UTF-8"), "{}", run.stdout);
    let (run, json) = repo.search_json("\"LATIN_MARKER\"", &[]);
    assert_eq!(run.code, 0);
    assert!(json["results"][0]["snippet"].as_str().unwrap().contains("cr\u{FFFD}me"));
}

#[test]
fn a_70000_character_query_is_refused_clearly() {
    let repo = Repo::fixture("rust");
    let query = "x".repeat(70_000);
    let run = repo.run(&["search", &query]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("70000 characters long; the limit is 65536"), "{}", run.stderr);
    assert!(!repo.path().join(".maguyva").exists(), "a bad query fails before any indexing");
}

#[test]
fn an_invalid_regex_is_refused_clearly() {
    let repo = Repo::fixture("rust");
    let run = repo.run(&["search", "fn (unclosed", "--regex"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("invalid regex"), "{}", run.stderr);
    assert!(!run.stderr.contains("panicked"));
}

#[test]
fn an_empty_query_is_refused() {
    let repo = Repo::fixture("rust");
    let run = repo.run(&["search", "   "]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("the query is empty"), "{}", run.stderr);
    // An empty quoted string would match every file.
    for empty in ["\"\"", " \" \" "] {
        let run = repo.run(&["search", empty]);
        assert_eq!(run.code, 2, "{empty:?}: {}", run.stdout);
        assert!(run.stderr.contains("the quoted string is empty"), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    assert!(!repo.path().join(".maguyva").exists(), "a bad query fails before any indexing");
}

#[test]
fn zero_results_is_an_input_error() {
    let repo = Repo::fixture("rust");
    for args in [["search", "-k", "0", "parse"], ["search", "--limit", "0", "parse"]] {
        let run = repo.run(&args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.contains("give at least 1"), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    let run = repo.run(&["callers", "parse", "--limit", "0"]);
    assert_eq!(run.code, 2);
}

#[test]
fn a_missing_or_non_folder_path_is_an_error() {
    let repo = Repo::fixture("go");
    let run = repo.run(&["index", "no-such-folder"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no-such-folder"), "{}", run.stderr);
    let run = repo.run(&["search", "x", "--path", "go.mod"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not a folder"), "{}", run.stderr);
}

fn current_generation(repo: &Repo) -> std::path::PathBuf {
    IndexDir::new(repo.path().join(".maguyva")).current().unwrap().unwrap()
}

#[test]
fn truncated_and_corrupt_index_files_are_detected() {
    for file in
        ["text.mgv", "manifest.mgv", "fragments.mgv", "symbols.mgv", "graph.mgv", "semantic.mgv"]
    {
        let repo = Repo::fixture("typescript");
        assert_eq!(repo.run(&["index"]).code, 0);
        let victim = current_generation(&repo).join(file);
        let bytes = std::fs::read(&victim).unwrap();
        std::fs::write(&victim, &bytes[..bytes.len() / 2]).unwrap();

        let strict = repo.run(&["search", "\"applyDiscount\"", "--no-refresh"]);
        assert_eq!(strict.code, 2, "{file}");
        assert!(
            strict.stderr.contains("corrupt") && strict.stderr.contains("maguyva index"),
            "{file}: {}",
            strict.stderr
        );

        // Searching without --no-refresh rebuilds and still answers.
        let (run, json) = repo.search_json("\"applyDiscount\"", &[]);
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        assert!(run.stderr.contains("index rebuilt"), "{file}: {}", run.stderr);
        assert_eq!(result_paths(&json)[0], "src/pricing.ts");
    }
    // Every other question recovers too, the first time it meets the
    // damage (a file cut short is seen when the index is opened, a byte
    // flipped in a section when the section is first read), whether or not
    // a file changed: it says so, answers, and the next command finds the
    // index whole.
    let files = ["text.mgv", "symbols.mgv", "graph.mgv", "semantic.mgv", "outlines.mgv"];
    for (file, cut) in files.into_iter().flat_map(|f| [(f, true), (f, false)]) {
        let how = if cut { "cut short" } else { "a byte flipped" };
        for edit in [false, true] {
            for args in [
                &["callers", "applyDiscount"][..],
                &["impact", "applyDiscount"],
                &["symbols", "--name", "applyDiscount"],
            ] {
                let repo = Repo::fixture("typescript");
                assert_eq!(repo.run(&["index", "-q"]).code, 0);
                let victim = current_generation(&repo).join(file);
                let mut bytes = std::fs::read(&victim).unwrap();
                match cut {
                    true => bytes.truncate(bytes.len() / 2),
                    false => {
                        let mid = bytes.len() / 2;
                        bytes[mid] ^= 0xff;
                    }
                }
                std::fs::write(&victim, &bytes).unwrap();
                if edit {
                    repo.write("NOTES.md", "Edited after indexing.\n");
                }
                let run = repo.run(args);
                let what = format!("{file} {how}, {args:?}, edited: {edit}");
                assert_eq!(run.code, 0, "{what}: {}", run.stderr);
                assert!(run.stdout.contains("pricing.ts"), "{what}: {}", run.stdout);
                let again = repo.run(args);
                assert_eq!(again.stdout, run.stdout, "{what}");
                assert!(!again.stderr.contains("rebuilt"), "{what}: {}", again.stderr);
            }
        }
    }
    // A flipped byte in the middle is caught by the checksum.
    let repo = Repo::fixture("typescript");
    assert_eq!(repo.run(&["index"]).code, 0);
    let victim = current_generation(&repo).join("text.mgv");
    let mut bytes = std::fs::read(&victim).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&victim, &bytes).unwrap();
    let strict = repo.run(&["search", "x", "--no-refresh"]);
    assert_eq!(strict.code, 2);
    assert!(strict.stderr.contains("checksum"), "{}", strict.stderr);
}

#[test]
fn a_file_changed_unseen_since_indexing_fails_the_answer_that_reads_it() {
    let repo = Repo::fixture("typescript");
    let path = repo.path().join("src/pricing.ts");
    // Dated well before the build, so that a refresh takes its size and
    // time as the sign it is unchanged.
    let modified = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
    assert_eq!(repo.run(&["index"]).code, 0);
    // Same size and modification time, other bytes: the staleness check
    // cannot see it; reading the file against its recorded hash does.
    let text = std::fs::read_to_string(&path).unwrap();
    let changed = text.replacen("applyDiscount", "applyDiscounT", 1);
    assert_eq!(changed.len(), text.len());
    std::fs::write(&path, &changed).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
    let run = repo.run(&["search", "\"applyDiscount\"", "--no-refresh"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("pricing.ts") && run.stderr.contains("changed since it was indexed"),
        "{}",
        run.stderr
    );
    // A search that may refresh does, reading every file whatever its size
    // and time say, and answers from the file as it is.
    let (run, json) = repo.search_json("\"applyDiscounT\"", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("index refreshed"), "{}", run.stderr);
    assert_eq!(result_paths(&json), vec!["src/pricing.ts"]);
    let (run, _) = repo.search_json("\"applyDiscount\"", &["--no-refresh"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn verify_checks_every_section_of_every_file() {
    let repo = Repo::fixture("python");
    assert_eq!(repo.run(&["index"]).code, 0);
    let ok = repo.run(&["index", "--verify"]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    // The manifest, the fragments, the outlines, and each modality's file.
    assert!(ok.stdout.starts_with("verified 9 files"), "{}", ok.stdout);
    for file in [
        "text.mgv",
        "symbols.mgv",
        "graph.mgv",
        "semantic.mgv",
        "outlines.mgv",
        "paths.mgv",
        "history.mgv",
    ] {
        let victim = current_generation(&repo).join(file);
        let good = std::fs::read(&victim).unwrap();
        // A byte a third of the way in: section data, or padding between
        // sections, which no checksum covers and no reader uses.
        let mut bad = good.clone();
        let at = bad.len() / 3;
        bad[at] ^= 0x5a;
        std::fs::write(&victim, &bad).unwrap();
        let run = repo.run(&["index", "--verify"]);
        if run.code == 0 {
            // The byte fell in padding between sections: nothing to catch.
            assert_eq!(bad[at] ^ 0x5a, 0, "{file}: a data byte flipped unnoticed");
        } else {
            assert_eq!(run.code, 2, "{file}");
            assert!(run.stderr.contains(file) && run.stderr.contains("corrupt"), "{}", run.stderr);
        }
        std::fs::write(&victim, &good).unwrap();
    }
    assert_eq!(repo.run(&["index", "--verify"]).code, 0);
    let empty = Repo::empty();
    let run = empty.run(&["index", "--verify"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("no index"), "{}", run.stderr);
}

#[test]
fn a_second_index_run_is_refused_while_one_runs() {
    let repo = Repo::fixture("java");
    assert_eq!(repo.run(&["index"]).code, 0);
    let dir = IndexDir::new(repo.path().join(".maguyva"));
    let held = dir.lock().unwrap();
    let run = repo.run(&["index"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("another maguyva process is writing the index"), "{}", run.stderr);
    // A search meanwhile still answers from the current index.
    repo.write("New.java", "class New { String s = \"LOCKED_MARKER\"; }\n");
    let (run, json) = repo.search_json("\"TAX_RATE\"", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("may be stale"), "{}", run.stderr);
    assert!(!result_paths(&json).is_empty());
    drop(held);
    let (_, json) = repo.search_json("\"LOCKED_MARKER\"", &[]);
    assert_eq!(result_paths(&json), vec!["New.java"]);
}

#[test]
fn a_failed_run_never_loses_the_good_index() {
    let repo = Repo::fixture("ruby");
    assert_eq!(repo.run(&["index"]).code, 0);
    let good = current_generation(&repo);
    let dir = repo.path().join(".maguyva");
    // The same index folder, pointed at a root that does not exist.
    let run = repo.run(&["index", "missing-root", "--index-dir", dir.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert_eq!(current_generation(&repo), good);
    let (run, json) = repo.search_json("\"restock\"", &["--no-refresh"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!result_paths(&json).is_empty());
}

/// Runs `maguyva ARGS` in `dir` as a user who cannot write what root wrote:
/// directly when not root, else as `nobody` through `setpriv`; `None` when
/// running as root without it.
#[cfg(unix)]
fn run_unprivileged(dir: &std::path::Path, args: &[&str]) -> Option<crate::util::Run> {
    let probe = dir.join(".probe");
    std::fs::write(&probe, "x").ok()?;
    std::fs::set_permissions(&probe, std::os::unix::fs::PermissionsExt::from_mode(0o000)).ok()?;
    let root = reads_despite_permissions(&probe);
    let _ = std::fs::remove_file(&probe);
    if !root {
        return Some(crate::util::run_in(dir, args));
    }
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_maguyva"))
        .args(args)
        .current_dir(dir)
        .env_remove("VOYAGE_API_KEY")
        .output()
        .ok()?;
    Some(crate::util::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

#[cfg(unix)]
#[test]
fn an_index_that_cannot_be_refreshed_answers_as_it_is() {
    use std::os::unix::fs::PermissionsExt;
    let repo = Repo::fixture("python");
    assert_eq!(repo.run(&["index", "-q"]).code, 0);
    let query = "how is the price of the cart computed";
    let (_, before) = repo.search_json(query, &[]);
    let before = result_paths(&before);
    assert!(before.contains(&"shop/pricing.py".to_string()) && before.len() > 1, "{before:?}");
    // Readable by anyone, writable by no one else: a shared checkout.
    let mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    for entry in walk(repo.path()) {
        mode(&entry, if entry.is_dir() { 0o755 } else { 0o644 });
    }
    repo.write("shop/pricing.py", "def apply_discount(price):\n    return price\n");
    let index = repo.path().join(".maguyva");
    for entry in walk(&index) {
        mode(&entry, if entry.is_dir() { 0o555 } else { 0o444 });
    }
    let Some(run) = run_unprivileged(repo.path(), &["search", query, "--json"]) else {
        eprintln!("skipped: running as root without setpriv");
        return;
    };
    let graph_runs = [
        ("callers", run_unprivileged(repo.path(), &["callers", "total_with_tax", "--json"])),
        ("impact", run_unprivileged(repo.path(), &["impact", "shop/pricing.py", "--json"])),
    ];
    for entry in walk(&index) {
        mode(&entry, if entry.is_dir() { 0o755 } else { 0o644 });
    }
    // Callers and impact answer as the index stands too, without the
    // changed file.
    for (what, graph_run) in graph_runs {
        let graph_run = graph_run.unwrap();
        assert_eq!(graph_run.code, 0, "{what}: {}", graph_run.stderr);
        assert!(graph_run.stderr.contains("cannot be refreshed"), "{}", graph_run.stderr);
        let report: serde_json::Value = serde_json::from_str(&graph_run.stdout).unwrap();
        let files = report["files"].as_array().unwrap();
        assert!(!files.is_empty(), "{what}: {report}");
        assert!(files.iter().all(|f| f["path"] != "shop/pricing.py"), "{what}: {report}");
        // The callers of a function defined in the changed file read it
        // (its definition line), find it changed and leave it out; the
        // files importing it do not need to read it.
        if what == "callers" {
            assert_eq!(report["changed"], serde_json::json!(["shop/pricing.py"]), "{report}");
            let note = "left out, changed since indexed: shop/pricing.py";
            assert!(graph_run.stderr.contains(note), "{}", graph_run.stderr);
        }
    }
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("cannot be refreshed"), "{}", run.stderr);
    assert!(
        run.stderr.contains("left out, changed since indexed: shop/pricing.py"),
        "{}",
        run.stderr
    );
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let expected: Vec<String> = before.into_iter().filter(|p| p != "shop/pricing.py").collect();
    assert_eq!(result_paths(&json), expected);
}

/// Every folder and file under `dir`, `dir` included, parents first.
#[cfg(unix)]
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        if out[i].is_dir()
            && let Ok(entries) = std::fs::read_dir(&out[i])
        {
            out.extend(entries.flatten().map(|e| e.path()));
        }
        i += 1;
    }
    out
}

/// The answers to a few questions, without timings.
fn answers(repo: &Repo) -> Vec<serde_json::Value> {
    ["how is the discount applied", "\"def helper_7\"", "who calls apply_discount"]
        .iter()
        .map(|q| {
            let run = repo.run(&["search", q, "--json", "--no-refresh"]);
            assert_eq!(run.code, 0, "{q}: {}", run.stderr);
            let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
            json["results"].clone()
        })
        .collect()
}

#[cfg(unix)]
#[test]
fn a_build_killed_at_any_point_leaves_the_previous_index_answering() {
    let repo = Repo::fixture("python");
    for i in 0..20 {
        repo.write(
            &format!("helpers/helper_{i}.py"),
            format!(
                "def helper_{i}(x):\n    \"\"\"Helps with step {i}.\"\"\"\n    return x + {i}\n"
            ),
        );
    }
    let (total, stages) = build_events(&repo, None);
    assert!(total >= 30 && stages.len() >= 6, "{total} events, stages at {stages:?}");
    // Every stage's beginning and first step, then points spread evenly
    // over the rest, up to 30.
    let mut points: Vec<u64> =
        stages.iter().flat_map(|&s| [s, s + 1]).filter(|&p| p <= total).collect();
    points.sort_unstable();
    points.dedup();
    let mut i = 0;
    while points.len() < 30 {
        let p = 1 + (i * 7919) % total;
        if !points.contains(&p) {
            points.push(p);
        }
        i += 1;
    }
    points.sort_unstable();
    assert_eq!(points.len(), 30, "{points:?}");
    let before = answers(&repo);
    let index = repo.path().join(".maguyva");
    for at in points {
        let (mut child, paused) = paused_build(&repo, at);
        assert!(paused, "the build never reached event {at} of {total}");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert_eq!(answers(&repo), before, "after a kill at event {at} of {total}");
        let next = repo.run(&["index", "-q"]);
        assert_eq!(next.code, 0, "the build after a kill at {at}: {}", next.stderr);
        let mut left: Vec<String> = std::fs::read_dir(&index)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !matches!(n.as_str(), "CURRENT" | "LOCK" | ".gitignore"))
            .collect();
        left.sort();
        assert!(
            left.len() == 1 && left[0].starts_with("gen-"),
            "after a kill at event {at} and a build: {left:?}"
        );
    }
}

#[test]
fn a_failed_lookup_prints_nothing_on_stdout() {
    let repo = Repo::fixture("python");
    for args in [
        vec!["callers", "qqqxyzzy_nonexistent_name"],
        vec!["impact", "qqqxyzzy_nonexistent_name"],
        vec!["symbols", "--name", "qqqxyzzy_nonexistent_name"],
    ] {
        let run = repo.run(&args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(run.stderr.contains("qqqxyzzy_nonexistent_name"), "{args:?}: {}", run.stderr);
    }
}
