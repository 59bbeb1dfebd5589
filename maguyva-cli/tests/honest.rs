use crate::util::{LANGUAGES, Repo, result_paths};

/// Runs a query that must find nothing: exit status 1, nothing on stdout.
fn finds_nothing(repo: &Repo, query: &str) {
    let run = repo.run(&["search", query]);
    assert_eq!(run.code, 1, "{query:?} found something:\n{}", run.stdout);
    assert_eq!(run.stdout, "", "{query:?}");
}

#[test]
fn made_up_identifiers_find_nothing_in_every_language() {
    for (lang, ..) in LANGUAGES {
        let repo = Repo::fixture(lang);
        // Made-up names that share real sub-words (`name`, `total`, `cart`).
        for query in ["qqqxyzzy_nonexistent_name", "total_with_qoxo", "CartZubexaManager"] {
            finds_nothing(&repo, query);
        }
    }
}

#[test]
fn random_words_find_nothing() {
    let repo = Repo::fixture("python");
    for query in ["flux capacitor overdrive", "lobbyist festive dickeys", "how does the moon orbit"]
    {
        finds_nothing(&repo, query);
    }
}

#[test]
fn an_identifier_that_exists_is_not_followed_by_files_sharing_its_parts() {
    let repo = Repo::empty();
    repo.write("loader.py", "def parse_config_file(path):\n    return open(path).read()\n");
    repo.write("parser.py", "def parse(text):\n    return text.split()\n");
    repo.write("config.py", "config = {'debug': False}\n");
    repo.write("files.py", "def file_size(file):\n    return len(file)\n");
    let (run, json) = repo.search_json("parse_config_file", &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(result_paths(&json), vec!["loader.py"]);
}

#[test]
fn every_result_carries_the_evidence_that_admitted_it() {
    let repo = Repo::fixture("python");
    let (_, json) = repo.search_json("apply a discount to the price", &[]);
    let results = json["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert_eq!(results[0]["path"], "shop/pricing.py");
    for r in results {
        let admitted = &r["admitted"];
        assert_eq!(admitted["by"], "words", "{r}");
        let words: Vec<&str> =
            admitted["words"].as_array().unwrap().iter().filter_map(|w| w.as_str()).collect();
        assert!(
            !words.is_empty() && words.iter().all(|w| ["apply", "discount", "price"].contains(w))
        );
        let coverage = admitted["coverage"].as_f64().unwrap();
        assert!(coverage > 0.0 && coverage <= 1.0);
    }
    // The file holding every word holds all of the query.
    assert_eq!(results[0]["admitted"]["coverage"], 1.0);

    let (_, json) = repo.search_json("\"ECONNREFUSED\"", &[]);
    assert_eq!(json["results"][0]["admitted"]["by"], "literal");
    let (_, json) = repo.search_json("apply_discount", &[]);
    assert_eq!(json["results"][0]["admitted"]["by"], "name");
    assert_eq!(json["results"][0]["admitted"]["words"][0], "apply_discount");
}

#[test]
fn the_seed_ranking_admits_without_evidence() {
    // Research runs compare against the seed, which has no admission.
    let repo = Repo::fixture("python");
    let (run, json) = repo.search_json("flux capacitor overdrive", &["--ranking", "seed"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(json["results"].as_array().unwrap().iter().all(|r| r.get("admitted").is_none()));
}
