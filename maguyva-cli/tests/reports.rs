use crate::util::{Repo, Run, result_paths};
use std::io::Write;
use std::process::{Command, Stdio};

/// A bug report as an issue tracker holds it: a title, a template's
/// comment, prose, a snippet and a traceback through the fixture's code.
const PYTHON_REPORT: &str = "Restocking an unknown product crashes the warehouse\n\
<!-- Please read the contributing guide at https://example.org/acme/shop/blob/main/CONTRIBUTING.md -->\n\
\n\
When a clerk adds units for a product code that is written in lower case, the whole \
warehouse screen goes down instead of telling them the code is wrong. I expected a \
clear message that the product code is not valid.\n\
\n\
```python\n\
inv = Inventory()\n\
inv.restock(\"abc\", 3)\n\
```\n\
\n\
```\n\
Traceback (most recent call last):\n\
  File \"/srv/clerk/app/main.py\", line 4, in <module>\n\
  File \"/usr/lib/python3/site-packages/shop/inventory.py\", line 16, in restock\n\
KeyError: 'abc'\n\
```\n";

fn run_with_stdin(repo: &Repo, args: &[&str], input: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_maguyva"))
        .args(args)
        .current_dir(repo.path())
        .env_remove("VOYAGE_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("maguyva runs");
    child.stdin.take().expect("stdin").write_all(input).expect("write the query");
    let out = child.wait_with_output().expect("maguyva ends");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn json(run: &Run) -> serde_json::Value {
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", run.stdout))
}

/// The ties of the result for `path`, which must be an answer.
fn ties_of<'a>(answer: &'a serde_json::Value, path: &str) -> &'a Vec<serde_json::Value> {
    let result = answer["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("{path} is not an answer: {answer}"));
    result["ties"].as_array().expect("ties")
}

#[test]
fn a_report_from_a_file_finds_the_file_its_traceback_runs_through() {
    let repo = Repo::fixture("python");
    let file = repo.write("../report.md", PYTHON_REPORT);
    let file = file.to_str().expect("a UTF-8 path");
    let answer = json(&repo.run(&["search", "--query-file", file, "--json", "--explain"]));
    assert_eq!(answer["intent"], "report");
    assert_eq!(result_paths(&answer)[0], "shop/inventory.py");
    let ties = answer["results"][0]["ties"].as_array().expect("ties");
    let kinds: Vec<&str> = ties.iter().filter_map(|t| t["kind"].as_str()).collect();
    assert_eq!(kinds[0], "frame", "{ties:?}");
    assert!(kinds.contains(&"definition"), "restock is defined there: {ties:?}");
    // The result is shown at the frame's line.
    let (start, end) = (&answer["results"][0]["start_line"], &answer["results"][0]["end_line"]);
    assert!(start.as_u64() <= Some(16) && end.as_u64() >= Some(16), "{start} {end}");
    // The template's comment is not the report: its link names no file.
    let report = &answer["report"];
    assert!(report["paths"].as_array().expect("paths").is_empty(), "{report}");
    assert_eq!(report["frames"], 2);
    // A call in the snippet (`inv.restock`) is not a module path.
    assert!(report["modules"].as_array().expect("modules").is_empty(), "{report}");
}

#[test]
fn a_report_on_standard_input_is_answered_the_same() {
    let repo = Repo::fixture("python");
    let file = repo.write("../report.md", PYTHON_REPORT);
    let from_file = json(&repo.run(&["search", "--query-file", file.to_str().unwrap(), "--json"]));
    let from_stdin =
        json(&run_with_stdin(&repo, &["search", "-", "--json"], PYTHON_REPORT.as_bytes()));
    let also = json(&run_with_stdin(
        &repo,
        &["search", "--query-file", "-", "--json"],
        PYTHON_REPORT.as_bytes(),
    ));
    assert_eq!(result_paths(&from_file), result_paths(&from_stdin));
    assert_eq!(result_paths(&from_file), result_paths(&also));
}

#[test]
fn reports_in_other_languages_find_the_failing_file() {
    let cases = [
        (
            "rust",
            "Restocking panics on a lower-case product code\n\nAdding units for a product whose \
             code is lower case brings the whole service down; it should say the code is not \
             valid and carry on.\n\nthread 'main' panicked at src/inventory.rs:19:13:\n\
             called `Option::unwrap()` on a `None` value\n",
            "src/inventory.rs",
        ),
        (
            "java",
            "Restock throws for lower-case product codes\n\nAdding stock for a product with a \
             lower-case code throws instead of reporting a validation error to the clerk.\n\n\
             Exception in thread \"main\" java.lang.IllegalArgumentException: bad sku\n\
             \tat com.acme.shop.Inventory.restock(Inventory.java:21)\n\
             \tat com.acme.shop.Main.main(Main.java:9)\n",
            "src/main/java/com/acme/shop/Inventory.java",
        ),
    ];
    for (language, report, expected) in cases {
        let repo = Repo::fixture(language);
        let answer = json(&run_with_stdin(&repo, &["search", "-", "--json"], report.as_bytes()));
        assert_eq!(answer["intent"], "report", "{language}");
        // In a fixture of five files every name is rare, so a file that
        // only calls a name the panic message gives (`unwrap`) may come
        // first; the frame's file is among the first two, tied by the frame.
        let results = answer["results"].as_array().expect("results");
        let at = results.iter().position(|r| r["path"] == expected);
        assert!(at.is_some_and(|i| i < 2), "{language}: {answer}");
        let ties = ties_of(&answer, expected);
        assert!(ties.iter().any(|t| t["kind"] == "frame"), "{language}: {ties:?}");
    }
}

#[test]
fn a_short_question_keeps_the_classifier_and_report_forces_the_route() {
    let repo = Repo::fixture("python");
    let (_, answer) = repo.search_json("restock validation", &[]);
    assert_ne!(answer["intent"], "report");
    let (_, answer) = repo.search_json("restock fails for a lower-case code", &["--report"]);
    assert_eq!(answer["intent"], "report");
    assert_eq!(result_paths(&answer)[0], "shop/inventory.py");
}

#[test]
fn an_overlong_or_unreadable_query_file_is_refused_clearly() {
    let repo = Repo::fixture("python");
    let long = repo.write("../long.txt", "word ".repeat(14_000));
    let run = repo.run(&["search", "--query-file", long.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("70000 characters long; the limit is 65536"), "{}", run.stderr);
    // Far over the limit, the file is not read whole.
    let huge = repo.write("../huge.txt", "x".repeat(1 << 20));
    let run = repo.run(&["search", "--query-file", huge.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("over 65536 characters long"), "{}", run.stderr);
    let binary = repo.write("../binary.txt", b"crash \xff\xfe report");
    let run = repo.run(&["search", "--query-file", binary.to_str().unwrap()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not UTF-8 text (an invalid byte at offset 6)"), "{}", run.stderr);
    let run = repo.run(&["search", "--query-file", "/nonexistent/report.md"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("/nonexistent/report.md"), "{}", run.stderr);
    assert!(!repo.path().join(".maguyva").exists(), "a bad query fails before any indexing");
    // Exactly at the limit, a report is answered.
    let at_limit = repo.write("../at-limit.txt", format!("{}\n", "restock ".repeat(8191)));
    let run = repo.run(&["search", "--query-file", at_limit.to_str().unwrap(), "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_report_ranks_by_its_own_text_settings_not_the_questions() {
    // The question ranking's text settings, however they are learned, do
    // not move a report's answer: its lists were fitted with their own.
    let repo = Repo::fixture("python");
    let file = repo.write("../report.md", PYTHON_REPORT);
    let file = file.to_str().expect("a UTF-8 path");
    let other = repo.write(
        "../ranking.json",
        r#"{"keyword": {"bm25": {"k1": 0.6, "b": 0.3}, "path_weight": 0.0, "other_factor": 0.25},
            "structural": {"doc_words": 0.0, "signature_words": 0.0}}"#,
    );
    let other = other.to_str().expect("a UTF-8 path");
    let plain = json(&repo.run(&["search", "--query-file", file, "--json", "--explain"]));
    let moved = json(&repo.run(&[
        "search",
        "--query-file",
        file,
        "--json",
        "--explain",
        "--ranking",
        other,
    ]));
    assert_eq!(plain["report"], moved["report"]);
    assert_eq!(result_paths(&plain), result_paths(&moved));
    // A ranking file can still set them for the route itself.
    let own = repo.write(
        "../report-ranking.json",
        r#"{"report": {"keyword": {"path_weight": 0.0}, "structural": {"doc_words": 0.0}}}"#,
    );
    let run = repo.run(&["search", "--query-file", file, "--ranking", own.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn a_report_ranks_code_above_the_notes_that_repeat_its_words() {
    let repo = Repo::fixture("python");
    // The notes name everything the report says; the code holds the fix.
    repo.write(
        "README.md",
        "# Warehouse\n\nRestocking a product adds units to the warehouse. A product code \
         written in lower case is refused with a message that the code is not valid.\n",
    );
    repo.write("CHANGELOG", "Restocking: product codes in lower case are refused.\n");
    let report = "Restocking a product with a lower-case code fails\n\n\
                  When a clerk restocks a product whose code is written in lower case, \
                  the warehouse does not say that the code is not valid.\n";
    let file = repo.write("../report.md", report);
    let answer = json(&repo.run(&["search", "--query-file", file.to_str().unwrap(), "--json"]));
    let paths = result_paths(&answer);
    assert_eq!(paths[0], "shop/inventory.py", "{paths:?}");
    let notes = |p: &str| paths.iter().position(|x| x == p).unwrap_or(usize::MAX);
    assert!(notes("README.md") > 1 && notes("CHANGELOG") > 1, "{paths:?}");
}

#[test]
fn a_report_lists_the_files_whose_paths_hold_its_words() {
    let repo = Repo::fixture("python");
    let report = "The audit trail misses some changes\n\n\
                  After a clerk changes a discount in the back office, the nightly audit \
                  shows nothing for it, so nobody can tell later who changed what and when; \
                  see https://example.org/shop/pricing/issues/12 for the screen.\n";
    let file = repo.write("../report.md", report);
    let args = ["search", "--query-file", file.to_str().expect("UTF-8"), "--json", "--explain"];
    let answer = json(&repo.run(&args));
    let lists = &answer["report"]["lists"];
    assert_eq!(lists["paths"][0], "shop/audit.py", "{lists}");
    // The link's words are no evidence: pricing is named only there.
    assert!(
        !lists["paths"].as_array().expect("a list").iter().any(|p| p == "shop/pricing.py"),
        "{lists}"
    );
    let ties = ties_of(&answer, "shop/audit.py");
    assert!(ties.iter().any(|t| t["kind"] == "path_words"), "{ties:?}");
}

#[test]
fn a_report_lists_the_files_that_use_the_names_it_gives() {
    let repo = Repo::fixture("python");
    let report = "Checkout charges tax twice\n\n\
                  The total at checkout is too high: `total_with_tax` seems to be given \
                  prices that already hold the tax.\n";
    let file = repo.write("../report.md", report);
    // Short enough to read as a question: the route is asked for.
    let args = [
        "search",
        "--report",
        "--query-file",
        file.to_str().expect("UTF-8"),
        "--json",
        "--explain",
    ];
    let answer = json(&repo.run(&args));
    let report = &answer["report"];
    let mentions: Vec<&str> = report["lists"]["mentions"]
        .as_array()
        .expect("a mentions list")
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    // Where it is defined and where it is called, and nowhere else.
    let mut sorted = mentions.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["shop/cart.py", "shop/pricing.py"], "{report}");
    // Each list comes with its scores; two files holding the one name tie.
    let scores = report["scores"]["mentions"].as_array().expect("scores");
    assert_eq!(scores.len(), 2);
    assert_eq!(scores[0], scores[1], "{report}");
    let ties = ties_of(&answer, "shop/cart.py");
    assert!(
        ties.iter().any(|t| t["kind"] == "mention" && t["detail"] == "total_with_tax"),
        "{ties:?}"
    );
}
