use crate::util::Repo;
use std::collections::BTreeSet;

/// Names of one fixture's definitions, as its language qualifies them.
struct Names {
    lang: &'static str,
    apply_discount: &'static str,
    total_with_tax: &'static str,
    checkout: &'static str,
    main: &'static str,
    add: &'static str,
    restock: &'static str,
    audit: &'static str,
    pricing_file: &'static str,
    unresolved: &'static str,
}

const FIXTURES: [Names; 6] = [
    Names {
        lang: "python",
        apply_discount: "apply_discount",
        total_with_tax: "total_with_tax",
        checkout: "Cart.checkout",
        main: "main",
        add: "Cart.add",
        restock: "Inventory.restock",
        audit: "audit",
        pricing_file: "shop/pricing.py",
        unresolved: "requests",
    },
    Names {
        lang: "go",
        apply_discount: "ApplyDiscount",
        total_with_tax: "TotalWithTax",
        checkout: "Cart.Checkout",
        main: "main",
        add: "Cart.Add",
        restock: "Inventory.Restock",
        audit: "Audit",
        pricing_file: "shop/pricing.go",
        unresolved: "github.com/acme/payments",
    },
    Names {
        lang: "rust",
        apply_discount: "apply_discount",
        total_with_tax: "total_with_tax",
        checkout: "Cart::checkout",
        main: "main",
        add: "Cart::add",
        restock: "Inventory::restock",
        audit: "audit",
        pricing_file: "src/pricing.rs",
        unresolved: "serde::Serialize",
    },
    Names {
        lang: "typescript",
        apply_discount: "applyDiscount",
        total_with_tax: "totalWithTax",
        checkout: "Cart.checkout",
        main: "main",
        add: "Cart.add",
        restock: "Inventory.restock",
        audit: "audit",
        pricing_file: "src/pricing.ts",
        unresolved: "lodash",
    },
    Names {
        lang: "java",
        apply_discount: "Pricing.applyDiscount",
        total_with_tax: "Pricing.totalWithTax",
        checkout: "Cart.checkout",
        main: "Main.main",
        add: "Cart.add",
        restock: "Inventory.restock",
        audit: "Audit.audit",
        pricing_file: "src/main/java/com/acme/shop/Pricing.java",
        unresolved: "org.apache.commons.lang3.StringUtils",
    },
    Names {
        lang: "c",
        apply_discount: "apply_discount",
        total_with_tax: "total_with_tax",
        checkout: "cart_checkout",
        main: "main",
        add: "cart_add",
        restock: "inventory_restock",
        audit: "audit",
        pricing_file: "src/pricing.c",
        unresolved: "curl/curl.h",
    },
];

fn json(repo: &Repo, args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let run = repo.run(&all);
    assert!(run.code == 0 || run.code == 1, "{args:?}: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", run.stdout))
}

/// The callers of `name` that call it, as `(caller, ambiguous)`.
fn calls(repo: &Repo, name: &str) -> BTreeSet<(String, bool)> {
    let report = json(repo, &["callers", name]);
    report["callers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "call")
        .map(|c| {
            (
                c["caller"].as_str().unwrap_or("(top level)").to_string(),
                c["ambiguous"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn set(items: &[(&str, bool)]) -> BTreeSet<(String, bool)> {
    items.iter().map(|(s, a)| (s.to_string(), *a)).collect()
}

/// The leaf name of a qualified name (`Cart.checkout` -> `checkout`).
fn leaf(q: &str) -> &str {
    q.rsplit(['.', ':']).next().unwrap_or(q)
}

#[test]
fn callers_match_the_hand_checked_call_graph() {
    for n in FIXTURES {
        let repo = Repo::fixture(n.lang);
        let lang = n.lang;
        assert_eq!(
            calls(&repo, leaf(n.apply_discount)),
            set(&[(n.total_with_tax, false)]),
            "{lang}: apply_discount"
        );
        assert_eq!(
            calls(&repo, leaf(n.total_with_tax)),
            set(&[(n.checkout, false)]),
            "{lang}: total_with_tax"
        );
        assert_eq!(calls(&repo, leaf(n.checkout)), set(&[(n.main, false)]), "{lang}: checkout");
        // validate is defined twice; the audit's call could be either one.
        assert_eq!(
            calls(&repo, "validate"),
            set(&[(n.add, false), (n.restock, false), (n.audit, true)]),
            "{lang}: validate"
        );
    }
}

#[test]
fn impact_follows_dependents_transitively() {
    for n in FIXTURES {
        let repo = Repo::fixture(n.lang);
        let report = json(&repo, &["impact", leaf(n.apply_discount)]);
        let names: BTreeSet<(String, u64)> = report["dependents"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| Some((d["name"].as_str()?.to_string(), d["distance"].as_u64()?)))
            .collect();
        let expected: BTreeSet<(String, u64)> =
            [(n.total_with_tax, 1), (n.checkout, 2), (n.main, 3)]
                .iter()
                .map(|(s, d)| (s.to_string(), *d))
                .collect();
        assert_eq!(names, expected, "{}", n.lang);
        // The depth limit cuts the chain.
        let near = json(&repo, &["impact", leaf(n.apply_discount), "--depth", "1"]);
        assert_eq!(near["dependents"].as_array().unwrap().len(), 1, "{}", n.lang);
        // A file's impact reaches the files that use it.
        let by_file = json(&repo, &["impact", n.pricing_file]);
        let files: Vec<&str> = by_file["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["path"].as_str())
            .collect();
        assert!(files.len() >= 2, "{}: {files:?}", n.lang);
        assert!(
            !files.contains(&n.pricing_file),
            "{}: the target is not its own dependent",
            n.lang
        );
    }
}

#[test]
fn unresolvable_imports_are_recorded_not_guessed() {
    for n in FIXTURES {
        let repo = Repo::fixture(n.lang);
        let report = json(&repo, &["index"]);
        let unresolved: Vec<&str> = report["unresolved_imports"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|u| u[1].as_str())
            .collect();
        assert!(unresolved.contains(&n.unresolved), "{}: {unresolved:?}", n.lang);
        assert!(report["graph_edges"].as_u64().unwrap() > 10, "{}", n.lang);
    }
}

#[test]
fn graph_modality_answers_who_calls() {
    let repo = Repo::fixture("python");
    let (run, json) = repo.search_json("who calls total_with_tax", &["--modality", "graph"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json["results"][0]["path"], "shop/cart.py");
    assert!(json["results"][0]["snippet"].as_str().unwrap().contains("total_with_tax("));
    let human = repo.run(&["callers", "total_with_tax"]);
    assert!(
        human
            .stdout
            .contains("shop/cart.py:26  Cart.checkout call total_with_tax (shop/pricing.py:12)"),
        "{}",
        human.stdout
    );
    assert_eq!(repo.run(&["callers", "no_such_function"]).code, 1);
}
