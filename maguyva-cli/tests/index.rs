use crate::util::{Repo, result_paths};

#[test]
fn index_prints_a_summary_and_search_reuses_it() {
    let repo = Repo::fixture("python");
    let run = repo.run(&["index"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("indexed 6 files"), "{}", run.stdout);
    assert!(repo.path().join(".maguyva/CURRENT").exists());
    let search = repo.run(&["search", "warehouse"]);
    assert_eq!(search.code, 0);
    assert!(!search.stderr.contains("rebuild"), "a fresh index is reused: {}", search.stderr);
}

#[test]
fn index_json_report() {
    let repo = Repo::fixture("go");
    let run = repo.run(&["index", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["files"], 6);
    assert!(json["fragments"].as_u64().unwrap() >= 5);
    assert!(json["skipped"].as_array().unwrap().is_empty());
}

#[test]
fn search_builds_a_missing_index_and_refreshes_a_stale_one() {
    let repo = Repo::fixture("rust");
    let first = repo.run(&["search", "warehouse"]);
    assert_eq!(first.code, 0);
    assert!(first.stderr.contains("built one"), "{}", first.stderr);

    repo.write(
        "src/shipping.rs",
        "/// Ships parcels by zeppelin.\npub fn zeppelin_dispatch() {}\n",
    );
    let (run, json) = repo.search_json("\"zeppelin_dispatch\"", &[]);
    assert!(
        run.stderr.contains("1 added") && run.stderr.contains("index refreshed"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("parsed 1 and relinked")
            && run.stderr.contains("kept the embedding model"),
        "{}",
        run.stderr
    );
    assert_eq!(result_paths(&json), vec!["src/shipping.rs"]);

    std::fs::remove_file(repo.path().join("src/shipping.rs")).unwrap();
    let (run, json) = repo.search_json("\"zeppelin_dispatch\"", &[]);
    assert!(run.stderr.contains("1 removed"), "{}", run.stderr);
    assert!(result_paths(&json).is_empty());
}

#[test]
fn index_dir_elsewhere_keeps_the_tree_clean() {
    let repo = Repo::fixture("java");
    let store = Repo::empty();
    let dir = store.path().join("idx");
    let run = repo.run(&["index", "--index-dir", dir.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!repo.path().join(".maguyva").exists());
    let (_, json) =
        repo.search_json("\"TAX_RATE\"", &["--index-dir", dir.to_str().unwrap(), "--no-refresh"]);
    assert_eq!(result_paths(&json)[0], "src/main/java/com/acme/shop/Pricing.java");
}

#[test]
fn an_index_dir_inside_the_tree_is_not_indexed() {
    let repo = Repo::fixture("ruby");
    let run = repo.run(&["index", "--index-dir", "visible-index"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let again = repo.run(&["index", "--index-dir", "visible-index", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&again.stdout).unwrap();
    assert_eq!(json["files"], 4, "the index folder's own files are never walked");
}

#[test]
fn gitignored_and_hidden_files_are_skipped() {
    let repo = Repo::fixture("python");
    repo.write(".gitignore", "build/\n");
    repo.write("build/generated.py", "GENERATED_MARKER = 1\n");
    repo.write(".secret/notes.py", "HIDDEN_MARKER = 1\n");
    let (_, json) = repo.search_json("\"GENERATED_MARKER\"", &[]);
    assert!(result_paths(&json).is_empty());
    let (_, json) = repo.search_json("\"HIDDEN_MARKER\"", &[]);
    assert!(result_paths(&json).is_empty());
}

#[test]
fn later_runs_reuse_the_options_the_index_was_built_with() {
    let repo = Repo::fixture("python");
    repo.write("medium.txt", "MEDIUM_MARKER\n".repeat(100_000));
    let run = repo.run(&["index", "--max-file-size", "2M"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // No --max-file-size: the index's own cap holds, so nothing is rebuilt
    // and the large file is still found.
    let (run, json) = repo.search_json("\"MEDIUM_MARKER\"", &[]);
    assert!(!run.stderr.contains("rebuilt"), "{}", run.stderr);
    assert_eq!(result_paths(&json), vec!["medium.txt"]);
    let run = repo.run(&["index", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(json["skipped"].as_array().unwrap().is_empty(), "{json}");
    // Naming another cap rebuilds with it.
    let (run, json) = repo.search_json("\"MEDIUM_MARKER\"", &["--max-file-size", "1M"]);
    assert!(run.stderr.contains("rebuilt"), "{}", run.stderr);
    assert!(result_paths(&json).is_empty());
}

#[test]
fn a_rebuild_leaves_one_generation_on_disk() {
    let repo = Repo::fixture("go");
    for _ in 0..3 {
        assert_eq!(repo.run(&["index"]).code, 0);
    }
    let generations: Vec<String> = std::fs::read_dir(repo.path().join(".maguyva"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gen-") || n.starts_with("tmp-"))
        .collect();
    assert_eq!(generations.len(), 1, "{generations:?}");
}

/// Sets the modification time of every folder and file under `root` an hour
/// back, as in a checkout made long before the index.
fn age_tree(root: &std::path::Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_modified(old)
                    .unwrap();
            }
        }
        std::fs::File::open(&dir).unwrap().set_modified(old).unwrap();
    }
}

#[test]
fn staleness_is_told_without_walking_while_folders_keep_their_shape() {
    let repo = Repo::fixture("go");
    let index_dir = tempfile::tempdir().unwrap();
    let dir = index_dir.path().to_str().unwrap();
    age_tree(repo.path());
    assert_eq!(repo.run(&["index", "--index-dir", dir]).code, 0);
    // An edit in place leaves every folder as it was: found by stat'ing the
    // recorded files alone.
    let file = repo.path().join("main.go");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("package main", "package main // QUICK_EDIT_MARKER"))
        .unwrap();
    let (run, json) = repo.search_json("\"QUICK_EDIT_MARKER\"", &["--index-dir", dir]);
    assert!(run.stderr.contains("1 modified"), "{}", run.stderr);
    assert_eq!(result_paths(&json), vec!["main.go"]);
    // A new file changes its folder: walked again, and found.
    repo.write(".ignore", "");
    age_tree(repo.path());
    assert_eq!(repo.run(&["index", "--index-dir", dir]).code, 0);
    repo.write("shop/extra.go", "package shop\n// NEW_FILE_MARKER\n");
    let (run, json) = repo.search_json("\"NEW_FILE_MARKER\"", &["--index-dir", dir]);
    assert!(run.stderr.contains("1 added"), "{}", run.stderr);
    assert_eq!(result_paths(&json), vec!["shop/extra.go"]);
    // An ignore file edited in place, which leaves its folder as it was,
    // is noticed too.
    age_tree(repo.path());
    assert_eq!(repo.run(&["index", "--index-dir", dir]).code, 0);
    std::fs::write(repo.path().join(".ignore"), "shop/extra.go\n").unwrap();
    let (run, json) = repo.search_json("\"NEW_FILE_MARKER\"", &["--index-dir", dir]);
    assert!(run.stderr.contains("1 removed"), "{}", run.stderr);
    assert!(result_paths(&json).is_empty());
}

#[test]
fn a_command_run_in_a_subfolder_uses_the_index_above_it() {
    let repo = Repo::fixture("python");
    assert_eq!(repo.run(&["index", "-q"]).code, 0);
    let sub = repo.path().join("shop");
    for args in [
        vec!["search", "apply_discount", "--json"],
        vec!["callers", "apply_discount"],
        vec!["impact", "shop/pricing.py"],
        vec!["symbols", "--name", "apply_discount"],
    ] {
        let run = crate::util::run_in(&sub, &args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(run.stdout.contains("shop/pricing.py"), "{args:?}: {}", run.stdout);
    }
    assert!(!sub.join(".maguyva").exists(), "no second index in the subfolder");
    // A folder with no index above it gets its own.
    let lone = tempfile::tempdir().unwrap();
    std::fs::write(lone.path().join("a.py"), "def lone_function():\n    return 1\n").unwrap();
    let run = crate::util::run_in(lone.path(), &["search", "lone_function"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(lone.path().join(".maguyva").is_dir());
}

#[test]
fn every_command_takes_the_folder_as_path_or_positionally() {
    let repo = Repo::fixture("python");
    let root = repo.path().to_str().unwrap().to_string();
    let elsewhere = tempfile::tempdir().unwrap();
    for args in [
        vec!["search", "apply_discount", root.as_str()],
        vec!["search", "apply_discount", "--path", root.as_str()],
        vec!["callers", "apply_discount", root.as_str()],
        vec!["callers", "apply_discount", "-p", root.as_str()],
        vec!["impact", "shop/pricing.py", root.as_str()],
        vec!["symbols", root.as_str(), "--name", "apply_discount"],
        vec!["symbols", "--path", root.as_str(), "--name", "apply_discount"],
    ] {
        let run = crate::util::run_in(elsewhere.path(), &args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(run.stdout.contains("shop/pricing.py"), "{args:?}: {}", run.stdout);
    }
    let both = crate::util::run_in(
        elsewhere.path(),
        &["search", "apply_discount", root.as_str(), "--path", root.as_str()],
    );
    assert_eq!(both.code, 2);
    assert!(both.stderr.contains("cannot be used with"), "{}", both.stderr);
}
