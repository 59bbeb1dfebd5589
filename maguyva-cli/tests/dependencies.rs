//! References, impact and definitions on small repositories written here,
//! one per import system: the answers a plain word search cannot give
//! (resolved uses first, modules named as importers spell them, packages
//! that are not folders) and the ones it gives that must never be lost.

use crate::util::{Repo, result_paths};
use serde_json::Value;

/// The results' evidence, as `(path, kind, confidence)`.
fn evidence(json: &Value) -> Vec<(String, String, String)> {
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let e = &r["evidence"];
            (
                r["path"].as_str().unwrap().to_string(),
                e["kind"].as_str().unwrap_or("").to_string(),
                e["confidence"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn search(repo: &Repo, query: &str) -> Value {
    let (run, json) = repo.search_json(query, &[]);
    assert_eq!(run.code, 0, "{query}: {}", run.stderr);
    json
}

#[test]
fn references_are_never_a_subset_of_a_word_search() {
    let repo = Repo::empty();
    repo.write("app/config.py", "def parse_config(path):\n    return {}\n");
    repo.write(
        "app/main.py",
        "from app.config import parse_config\n\n\ndef run():\n    return parse_config('a')\n",
    );
    // Bound by name only: a callback table, no import.
    repo.write("app/hooks.py", "HOOKS = {}\n\n\ndef register():\n    HOOKS['x'] = parse_config\n");
    repo.write("app/notes.py", "# parse_config is slow on big files\nX = 1\n");
    repo.write("app/strings.py", "MESSAGE = 'see parse_config for details'\n");
    repo.write("README.md", "Call parse_config first.\n");
    let json = search(&repo, "usages of parse_config");
    assert_eq!(json["intent"], "find_references");
    let got = evidence(&json);
    let paths: Vec<&str> = got.iter().map(|(p, _, _)| p.as_str()).collect();
    // Every file a word search finds is there.
    for f in ["app/main.py", "app/hooks.py", "app/notes.py", "app/strings.py", "README.md"] {
        assert!(paths.contains(&f), "{f} missing from {paths:?}");
    }
    // Code uses before the defining file, which comes before mentions in
    // strings, comments and prose.
    let at = |p: &str| paths.iter().position(|x| *x == p).unwrap();
    assert_eq!(paths[0], "app/main.py");
    assert!(at("app/hooks.py") < at("app/config.py"));
    assert!(at("app/config.py") < at("app/strings.py"));
    assert!(at("app/strings.py") < at("app/notes.py"));
    assert_eq!(got[0].2, "resolved");
    assert_eq!(got[at("app/hooks.py")].2, "word");
    assert_eq!(got[at("app/config.py")].1, "definition");
    assert_eq!(got[at("app/notes.py")].2, "comment");
    // Each result is shown through the line that makes it an answer.
    assert!(json["results"][0]["snippet"].as_str().unwrap().contains("parse_config('a')"));
}

#[test]
fn a_file_that_reexports_a_name_refers_to_it() {
    let repo = Repo::empty();
    repo.write("src/envelopes.ts", "export type Envelope = { id: number };\n");
    repo.write("src/index.ts", "export type { Envelope } from './envelopes';\n");
    repo.write(
        "src/client.ts",
        "import type { Envelope } from './index';\n\nexport const open = (e: Envelope) => e.id;\n",
    );
    let json = search(&repo, "references to Envelope");
    let got = evidence(&json);
    let kind_of = |p: &str| got.iter().find(|(x, _, _)| x == p).map(|(_, k, _)| k.as_str());
    assert_eq!(kind_of("src/index.ts"), Some("reexport"), "{got:?}");
    assert_eq!(kind_of("src/envelopes.ts"), Some("definition"), "{got:?}");
    // The defining file comes after both files that refer to the name.
    assert_eq!(got.last().map(|g| g.0.as_str()), Some("src/envelopes.ts"), "{got:?}");
}

#[test]
fn a_name_spelled_as_asked_is_not_confused_with_its_other_spellings() {
    let repo = Repo::empty();
    repo.write("tz/zone.py", "class civil_transition:\n    pass\n");
    repo.write("tz/lookup.py", "from tz.zone import civil_transition\n\nT = civil_transition()\n");
    repo.write(
        "time/api.py",
        "def next_transition(CivilTransition):\n    return CivilTransition\n",
    );
    let json = search(&repo, "references to CivilTransition");
    assert_eq!(result_paths(&json), vec!["time/api.py"]);
    // Spelled nowhere as asked: the definition with the other spelling
    // answers.
    let json = search(&repo, "usages of civilTransition");
    assert_eq!(result_paths(&json).first().map(String::as_str), Some("tz/lookup.py"));
}

#[test]
fn callers_print_kind_and_confidence_per_file() {
    let repo = Repo::fixture("python");
    let run = repo.run(&["callers", "total_with_tax", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let files = json["files"].as_array().unwrap();
    assert_eq!(files[0]["path"], "shop/cart.py");
    assert_eq!(files[0]["kind"], "call");
    assert_eq!(files[0]["confidence"], "resolved");
    let human = repo.run(&["callers", "total_with_tax", "--limit", "1"]);
    assert!(human.stdout.contains("files (kind, confidence):"), "{}", human.stdout);
    assert!(human.stdout.contains("shop/cart.py:26  call resolved"), "{}", human.stdout);
    assert_eq!(repo.run(&["callers", "total_with_tax", "--limit", "0"]).code, 2);
}

#[test]
fn impact_names_modules_as_importers_spell_them() {
    let repo = Repo::fixture("python");
    for query in ["what depends on shop.pricing", "what breaks if I change shop/pricing.py"] {
        let json = search(&repo, query);
        assert_eq!(json["intent"], "impact_analysis", "{query}");
        let results = json["results"].as_array().unwrap();
        assert_eq!(results[0]["path"], "shop/cart.py", "{query}");
        assert_eq!(results[0]["evidence"]["kind"], "import", "{query}");
        assert_eq!(results[0]["evidence"]["depth"], 1, "{query}");
        assert!(results[0]["snippet"].as_str().unwrap().contains("import"), "{query}");
        // The target is never its own dependent.
        assert!(!result_paths(&json).contains(&"shop/pricing.py".to_string()), "{query}");
    }
    let run = repo.run(&["impact", "shop.pricing", "--depth", "1", "--json"]);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let files = json["files"].as_array().unwrap();
    assert!(files.iter().all(|f| f["depth"] == 1), "{files:?}");
    assert!(files.iter().all(|f| f["on"] == "shop/pricing.py"), "{files:?}");
}

#[test]
fn go_packages_resolve_through_the_module_path() {
    let repo = Repo::empty();
    repo.write("go.mod", "module example.com/shop\n\ngo 1.22\n");
    repo.write("money/money.go", "package money\n\nfunc Round(x float64) float64 { return x }\n");
    repo.write("money/tax.go", "package money\n\nfunc Tax(x float64) float64 { return x }\n");
    repo.write(
        "cart/cart.go",
        "package cart\n\nimport \"example.com/shop/money\"\n\nfunc Total() float64 { return money.Round(1) }\n",
    );
    repo.write(
        "main.go",
        "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/shop/cart\"\n)\n\nfunc main() { fmt.Println(cart.Total()) }\n",
    );
    let json = search(&repo, "what depends on example.com/shop/money");
    assert_eq!(result_paths(&json), vec!["cart/cart.go", "main.go"]);
    assert_eq!(json["results"][0]["evidence"]["depth"], 1);
    assert_eq!(json["results"][1]["evidence"]["depth"], 2);
    let json = search(&repo, "what breaks if I change money/");
    assert_eq!(result_paths(&json)[0], "cart/cart.go");
}

#[test]
fn rust_use_paths_resolve_through_crates() {
    let repo = Repo::empty();
    repo.write("Cargo.toml", "[package]\nname = \"shop-core\"\nversion = \"0.1.0\"\n");
    repo.write("src/lib.rs", "pub mod money;\npub mod cart;\npub use money::{round, Cents};\n");
    repo.write(
        "src/money.rs",
        "pub struct Cents(pub u64);\npub fn round(c: Cents) -> Cents { c }\n",
    );
    repo.write(
        "src/cart.rs",
        "use crate::{money::{self, Cents}, round};\n\npub fn total() -> Cents { round(money::Cents(1)) }\n",
    );
    let json = search(&repo, "what depends on shop_core::money");
    let paths = result_paths(&json);
    assert!(paths.contains(&"src/cart.rs".to_string()), "{paths:?}");
    assert!(paths.contains(&"src/lib.rs".to_string()), "{paths:?}");
    assert!(!paths.contains(&"src/money.rs".to_string()), "{paths:?}");
    // `use crate::round` depends on the crate root, which the crate's
    // name, bare, names too.
    for query in ["what breaks if I change src/lib.rs", "what depends on shop_core"] {
        let json = search(&repo, query);
        assert_eq!(result_paths(&json)[0], "src/cart.rs", "{query}");
    }
}

#[test]
fn jvm_packages_are_declarations_not_folders() {
    let repo = Repo::empty();
    repo.write(
        "core/src/Codec.scala",
        "package com.acme.codec\n\nobject Codec { def encode(s: String): String = s }\n",
    );
    repo.write(
        "core/src-3/Extra.scala",
        "package com.acme.codec\n\nobject Extra { def more(s: String): String = s }\n",
    );
    repo.write(
        "app/Main.scala",
        "package com.acme.app\n\nimport com.acme.codec._\n\nobject Main { def run = Codec.encode(\"x\") }\n",
    );
    repo.write(
        "app/Other.scala",
        "package com.acme.app\n\nimport com.acme.codec.Extra\n\nobject Other { def run = Extra.more(\"y\") }\n",
    );
    let json = search(&repo, "what depends on com.acme.codec");
    let paths = result_paths(&json);
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(paths.contains(&"app/Main.scala".to_string()), "{paths:?}");
    assert!(paths.contains(&"app/Other.scala".to_string()), "{paths:?}");
    // A member named like its file is that file.
    let json = search(&repo, "what depends on com.acme.codec.Extra");
    assert_eq!(result_paths(&json)[0], "app/Other.scala");
}

#[test]
fn definitions_come_first_for_a_bare_name_or_a_definition_question() {
    let repo = Repo::empty();
    repo.write("lib/text.rb", "module Text\n  def self.camelize(s)\n    s\n  end\nend\n");
    repo.write(
        "lib/camel.rb",
        "# camel case helpers\nmodule Camel\n  def self.humps(s)\n    Text.camelize(s) + camelize_all(s)\n  end\nend\n",
    );
    repo.write("lib/limits.rb", "MAX_RETRIES = 3\n");
    repo.write("lib/client.rb", "def fetch\n  MAX_RETRIES.times { }\nend\n");
    for query in ["camelize", "where is camelize defined", "def camelize"] {
        let json = search(&repo, query);
        let first = &json["results"][0];
        assert_eq!(first["path"], "lib/text.rb", "{query}");
        assert!(first["snippet"].as_str().unwrap().contains("def self.camelize"), "{query}");
    }
    // A bare constant finds the files that hold it before anything else.
    let json = search(&repo, "MAX_RETRIES");
    let paths = result_paths(&json);
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(paths.iter().all(|p| p == "lib/limits.rb" || p == "lib/client.rb"), "{paths:?}");
}

#[test]
fn impact_of_a_file_in_every_fixture_language() {
    for (lang, cart, pricing, _) in crate::util::LANGUAGES {
        let repo = Repo::fixture(lang);
        let json = search(&repo, &format!("what breaks if I change {pricing}"));
        assert_eq!(json["fusion_strategy"], "direct", "{lang}");
        let paths = result_paths(&json);
        assert!(paths.contains(&cart.to_string()), "{lang}: {paths:?}");
        assert!(!paths.contains(&pricing.to_string()), "{lang}: {paths:?}");
        let first = &json["results"][0]["evidence"];
        assert_eq!(first["depth"], 1, "{lang}");
        assert_eq!(first["confidence"], "resolved", "{lang}");
    }
}

#[test]
fn typescript_aliases_and_workspace_packages_resolve() {
    let repo = Repo::empty();
    repo.write(
        "tsconfig.json",
        "{\n  // path aliases\n  \"compilerOptions\": { \"baseUrl\": \".\", \"paths\": { \"@/*\": [\"src/*\"] }, },\n}\n",
    );
    repo.write(
        "src/money/round.ts",
        "export function round(x: number): number {\n  return x;\n}\n",
    );
    repo.write(
        "src/cart.ts",
        "import { round } from '@/money/round';\n\nexport const total = () => round(1);\n",
    );
    repo.write(
        "packages/fmt/package.json",
        "{ \"name\": \"@acme/fmt\", \"main\": \"src/index.ts\" }\n",
    );
    repo.write("packages/fmt/src/index.ts", "export const fmt = (x: number) => `${x}`;\n");
    repo.write(
        "src/view.ts",
        "import { fmt } from '@acme/fmt';\n\nexport const show = () => fmt(2);\n",
    );
    let json = search(&repo, "what breaks if I change src/money/round.ts");
    assert_eq!(result_paths(&json), vec!["src/cart.ts"]);
    let json = search(&repo, "what breaks if I change packages/fmt/src/index.ts");
    assert_eq!(result_paths(&json), vec!["src/view.ts"]);
}

#[test]
fn python_absolute_imports_name_modules_not_file_name_endings() {
    let repo = Repo::empty();
    repo.write("shop/__init__.py", "from .http import Client\n");
    repo.write("shop/http.py", "class Client:\n    pass\n");
    // The standard library's http, not shop/http.py.
    repo.write("shop/status.py", "from http import HTTPStatus\n\nOK = HTTPStatus.OK\n");
    repo.write("shop/api.py", "from shop.http import Client\n\nc = Client()\n");
    let json = search(&repo, "what depends on shop.http");
    let paths = result_paths(&json);
    assert!(paths.contains(&"shop/api.py".to_string()), "{paths:?}");
    assert!(paths.contains(&"shop/__init__.py".to_string()), "{paths:?}");
    assert!(!paths.contains(&"shop/status.py".to_string()), "{paths:?}");
}
