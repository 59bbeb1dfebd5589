use crate::util::run_in;

const SUBCOMMANDS: [&str; 8] =
    ["index", "search", "eval", "symbols", "callers", "impact", "mcp", "generate"];

#[test]
fn every_subcommand_has_an_example_in_its_help() {
    let here = std::env::temp_dir();
    for sub in SUBCOMMANDS {
        let run = run_in(&here, &[sub, "--help"]);
        assert_eq!(run.code, 0, "{sub}: {}", run.stderr);
        let example = run.stdout.split("Example:").nth(1).unwrap_or("");
        assert!(example.trim_start().starts_with("maguyva "), "{sub}: {}", run.stdout);
    }
}

#[test]
fn man_page_and_completions_cover_every_subcommand() {
    let here = std::env::temp_dir();
    let man = run_in(&here, &["generate", "man"]);
    assert_eq!(man.code, 0, "{}", man.stderr);
    assert!(man.stdout.contains(".TH maguyva 1"), "{}", man.stdout);
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = run_in(&here, &["generate", &format!("complete-{shell}")]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        for sub in SUBCOMMANDS {
            assert!(run.stdout.contains(sub), "{shell} completions lack {sub}");
        }
        assert!(run.stdout.contains("max-tokens"), "{shell} completions lack options");
    }
    for sub in SUBCOMMANDS {
        assert!(man.stdout.contains(sub), "the man page lacks {sub}");
    }
    let bad = run_in(&here, &["generate", "complete-tcsh"]);
    assert_eq!(bad.code, 2);
}

/// `generate man --out DIR` writes a page for the command and one for each
/// subcommand, and every page the top one refers to is among them.
#[test]
fn man_pages_are_written_for_every_subcommand() {
    let here = std::env::temp_dir();
    let out = tempfile::tempdir().unwrap();
    let run = run_in(&here, &["generate", "man", "--out", out.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let top = std::fs::read_to_string(out.path().join("maguyva.1")).unwrap();
    for sub in SUBCOMMANDS {
        let page = out.path().join(format!("maguyva-{sub}.1"));
        let text =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        assert!(text.contains(&format!(".TH maguyva-{sub} 1")), "{sub}: {text}");
        assert!(top.contains(&format!("maguyva\\-{sub}(1)")), "the top page names {sub}'s");
    }
    // Completions are printed, not written to a folder.
    let run = run_in(&here, &["generate", "complete-bash", "--out", out.path().to_str().unwrap()]);
    assert_eq!(run.code, 2);
}

/// Completions offer the values of every closed set of values.
#[test]
fn completions_offer_the_values_of_closed_sets() {
    let here = std::env::temp_dir();
    for (shell, quick) in [("bash", "quick default thorough"), ("fish", "quick"), ("zsh", "quick")]
    {
        let run = run_in(&here, &["generate", &format!("complete-{shell}")]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        for values in [quick, "find_definition", "structural", "claude-code", "never"] {
            assert!(run.stdout.contains(values), "{shell} completions lack {values}");
        }
    }
    // The same values are the only ones taken.
    let run = run_in(&here, &["search", "x", "--preset", "turbo"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("quick, default, thorough"), "{}", run.stderr);
}
