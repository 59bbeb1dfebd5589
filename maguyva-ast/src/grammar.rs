//! The tree-sitter grammar of every language. Each grammar is a cargo
//! feature named after its language (`rust`, `python`, ...; TSX comes with
//! `typescript`), all on by default (`all-languages`); a language whose
//! grammar is left out still has its text, fragments and vectors indexed,
//! but no definitions or imports.

use maguyva_core::Language;

/// The grammar of a language, or `None` when this build leaves it out.
pub fn grammar(language: Language) -> Option<tree_sitter::Language> {
    #[allow(unreachable_patterns)]
    match language {
        #[cfg(feature = "bash")]
        Language::Bash => Some(tree_sitter_bash::LANGUAGE.into()),
        #[cfg(feature = "c")]
        Language::C => Some(tree_sitter_c::LANGUAGE.into()),
        #[cfg(feature = "cpp")]
        Language::Cpp => Some(tree_sitter_cpp::LANGUAGE.into()),
        #[cfg(feature = "csharp")]
        Language::CSharp => Some(tree_sitter_c_sharp::LANGUAGE.into()),
        #[cfg(feature = "elixir")]
        Language::Elixir => Some(tree_sitter_elixir::LANGUAGE.into()),
        #[cfg(feature = "go")]
        Language::Go => Some(tree_sitter_go::LANGUAGE.into()),
        #[cfg(feature = "haskell")]
        Language::Haskell => Some(tree_sitter_haskell::LANGUAGE.into()),
        #[cfg(feature = "java")]
        Language::Java => Some(tree_sitter_java::LANGUAGE.into()),
        #[cfg(feature = "javascript")]
        Language::JavaScript => Some(tree_sitter_javascript::LANGUAGE.into()),
        #[cfg(feature = "kotlin")]
        Language::Kotlin => Some(tree_sitter_kotlin_ng::LANGUAGE.into()),
        #[cfg(feature = "lua")]
        Language::Lua => Some(tree_sitter_lua::LANGUAGE.into()),
        #[cfg(feature = "php")]
        Language::Php => Some(tree_sitter_php::LANGUAGE_PHP.into()),
        #[cfg(feature = "python")]
        Language::Python => Some(tree_sitter_python::LANGUAGE.into()),
        #[cfg(feature = "ruby")]
        Language::Ruby => Some(tree_sitter_ruby::LANGUAGE.into()),
        #[cfg(feature = "rust")]
        Language::Rust => Some(tree_sitter_rust::LANGUAGE.into()),
        #[cfg(feature = "scala")]
        Language::Scala => Some(tree_sitter_scala::LANGUAGE.into()),
        #[cfg(feature = "swift")]
        Language::Swift => Some(tree_sitter_swift::LANGUAGE.into()),
        #[cfg(feature = "typescript")]
        Language::TypeScript => Some(tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()),
        #[cfg(feature = "typescript")]
        Language::Tsx => Some(tree_sitter_typescript::LANGUAGE_TSX.into()),
        #[cfg(feature = "zig")]
        Language::Zig => Some(tree_sitter_zig::LANGUAGE.into()),
        _ => None,
    }
}

/// Whether this build has the grammar of `language`.
pub fn has_grammar(language: Language) -> bool {
    grammar(language).is_some()
}
