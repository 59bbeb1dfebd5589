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
        run.stderr.contains("1 added") && run.stderr.contains("full rebuild"),
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
