//! The grammar features work end to end: a language whose grammar this
//! build has gets definitions in the index; one whose grammar is left out
//! is still indexed and found by its text, with no definitions. Run with
//! every grammar (the default) and, in CI, with Python's alone
//! (`--no-default-features --features maguyva-ast/python`).

use maguyva_core::{FileId, IndexDir, Language, NoProgress};
use maguyva_engine::{IndexSettings, SearchRequest, build_index};

#[test]
fn definitions_come_from_the_grammars_this_build_has() {
    let tree = tempfile::tempdir().unwrap();
    let files = [
        ("app/config.py", Language::Python, "def load_settings(path):\n    return open(path)\n"),
        (
            "cmd/main.go",
            Language::Go,
            "package main\n\nfunc ReadSettingsFile(path string) string {\n\treturn path\n}\n",
        ),
    ];
    for (path, _, text) in files {
        let path = tree.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let dir = IndexDir::new(tree.path().join(".maguyva"));
    let (index, _) =
        build_index(tree.path(), &dir, &IndexSettings::default(), &NoProgress).unwrap();
    let symbols = index.symbols().unwrap();
    for (path, language, _) in files {
        let id = index.manifest.files.iter().position(|f| f.path == path).unwrap();
        let defined = symbols.of_file(FileId(id as u32)).count();
        assert_eq!(
            defined > 0,
            maguyva_ast::has_grammar(language),
            "{path}: {defined} definitions, grammar in this build: {}",
            maguyva_ast::has_grammar(language)
        );
    }
    // Every file is still found by its words, grammar or not.
    for (path, name) in [("app/config.py", "load_settings"), ("cmd/main.go", "ReadSettingsFile")] {
        let answer = index.search(&SearchRequest::new(name)).unwrap();
        assert_eq!(answer.results.first().map(|r| r.path.as_str()), Some(path), "{name}");
    }
}
