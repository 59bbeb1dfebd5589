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
