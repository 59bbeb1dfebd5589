//! The history modality on a git work tree written for the purpose: past
//! commits whose messages are like the query rank the files they modified,
//! in a direct search and as a report's evidence list; a folder that is no
//! work tree has none, and no error.

use crate::util::{Repo, Run, result_paths};
use std::process::Command;

fn git(repo: &Repo, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=Fixture", "-c", "user.email=fixture@example.org"])
        .args(["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(repo.path())
        .output()
        .expect("git runs (the tests need git on the PATH)");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn commit(repo: &Repo, path: &str, append: &str, message: &str) {
    let old = std::fs::read_to_string(repo.path().join(path)).expect("fixture file");
    repo.write(path, format!("{old}{append}"));
    git(repo, &["commit", "-q", "-a", "-m", message]);
}

/// The Python fixture as a repository with a history: two fixes of the
/// inventory's product codes, one of the cart's discounts.
fn repository() -> Repo {
    let repo = Repo::fixture("python");
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "Import the shop"]);
    commit(
        &repo,
        "shop/inventory.py",
        "\n# Codes are upper case.\n",
        "Fix restocking with a lower-case product code\n\nThe warehouse screen crashed.",
    );
    commit(&repo, "shop/cart.py", "\n# Discounts apply once.\n", "Fix discount applied twice");
    commit(
        &repo,
        "shop/inventory.py",
        "\n# Unknown codes are refused.\n",
        "Refuse unknown product codes when restocking",
    );
    repo
}

fn json(run: &Run) -> serde_json::Value {
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", run.stdout))
}

#[test]
fn past_commits_like_the_query_rank_the_files_they_modified() {
    let repo = repository();
    let answer =
        json(&repo.run(&["search", "product code restocking", "--modality", "history", "--json"]));
    assert_eq!(answer["modalities"], serde_json::json!(["history"]));
    assert_eq!(result_paths(&answer), vec!["shop/inventory.py"], "{answer}");
    let answer = json(&repo.run(&["search", "discount twice", "--modality", "history", "--json"]));
    assert_eq!(result_paths(&answer), vec!["shop/cart.py"], "{answer}");
    // An edit that is not committed keeps the history it had.
    repo.write("shop/cart.py", "def total(items):\n    return sum(items)\n");
    let answer = json(&repo.run(&["search", "discount twice", "--modality", "history", "--json"]));
    assert_eq!(result_paths(&answer), vec!["shop/cart.py"], "{answer}");
    git(&repo, &["commit", "-q", "-a", "-m", "Simplify the cart"]);
    // A new commit is read at the next refresh.
    commit(&repo, "shop/pricing.py", "\n# Rounded.\n", "Fix rounding of tax totals");
    let answer = json(&repo.run(&["search", "tax rounding", "--modality", "history", "--json"]));
    assert_eq!(result_paths(&answer), vec!["shop/pricing.py"], "{answer}");
    // Its file is verified with the others.
    let verify = repo.run(&["index", "--verify", "--json"]);
    assert_eq!(verify.code, 0, "{}", verify.stderr);
    assert!(verify.stdout.contains("history.mgv"), "{}", verify.stdout);
}

#[test]
fn a_report_lists_and_ties_the_files_of_past_commits_like_it() {
    let repo = repository();
    let report = "Restocking fails for product codes in lower case\n\n\
                  A clerk restocking a product code such as abc gets an error page \
                  instead of a message that the code is wrong.\n";
    let file = repo.write("../report.md", report);
    let args = ["search", "--query-file", file.to_str().expect("UTF-8"), "--json", "--explain"];
    let answer = json(&repo.run(&args));
    let lists = &answer["report"]["lists"];
    assert_eq!(lists["history"][0], "shop/inventory.py", "{lists}");
    assert_eq!(result_paths(&answer)[0], "shop/inventory.py", "{answer}");
    let ties = answer["results"][0]["ties"].as_array().expect("ties");
    assert!(ties.iter().any(|t| t["kind"] == "history"), "{ties:?}");
    // A ranking that weighs it 0 does not make the list.
    let ranking = repo.write("../no-history.json", r#"{"report": {"history": 0.0}}"#);
    let mut unweighed = args.to_vec();
    unweighed.extend(["--ranking", ranking.to_str().expect("UTF-8")]);
    let answer = json(&repo.run(&unweighed));
    assert!(answer["report"]["lists"].get("history").is_none(), "{answer}");
}

#[test]
fn a_folder_that_is_no_work_tree_has_no_history_and_no_error() {
    let repo = Repo::fixture("python");
    let run = repo.run(&["search", "product code restocking", "--modality", "history", "--json"]);
    // Like grep, a search that finds nothing exits with 1.
    assert_eq!(run.code, 1, "{}", run.stderr);
    let answer: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert!(result_paths(&answer).is_empty(), "{answer}");
}
