use std::path::{Path, PathBuf};
use std::process::Command;

/// The fixture languages with their cart, pricing and inventory files.
pub const LANGUAGES: [(&str, &str, &str, &str); 7] = [
    ("python", "shop/cart.py", "shop/pricing.py", "shop/inventory.py"),
    ("go", "shop/cart.go", "shop/pricing.go", "shop/inventory.go"),
    ("rust", "src/cart.rs", "src/pricing.rs", "src/inventory.rs"),
    ("typescript", "src/cart.ts", "src/pricing.ts", "src/inventory.ts"),
    (
        "java",
        "src/main/java/com/acme/shop/Cart.java",
        "src/main/java/com/acme/shop/Pricing.java",
        "src/main/java/com/acme/shop/Inventory.java",
    ),
    ("c", "src/cart.c", "src/pricing.c", "src/inventory.c"),
    ("ruby", "lib/shop/cart.rb", "lib/shop/pricing.rb", "lib/shop/inventory.rb"),
];

/// A temporary repository, removed when dropped. It is a folder inside a
/// temporary folder of its own, so that a test's files beside it
/// (`repo.write("../report.md", ...)`) are its own too: tests run in
/// parallel.
pub struct Repo {
    /// Held for its removal on drop.
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Repo {
    /// An empty repository.
    pub fn empty() -> Repo {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).expect("mkdir");
        Repo { _dir: dir, root }
    }

    /// A copy of `tests/fixtures/<name>`, so indexes never land in the source tree.
    pub fn fixture(name: &str) -> Repo {
        let repo = Repo::empty();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
        copy_tree(&src, repo.path());
        repo
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, bytes).expect("write");
        p
    }

    /// Runs `maguyva ARGS` with the repository as working directory.
    pub fn run(&self, args: &[&str]) -> Run {
        run_in(self.path(), args)
    }

    /// `maguyva search QUERY --json EXTRA...`, parsed.
    pub fn search_json(&self, query: &str, extra: &[&str]) -> (Run, serde_json::Value) {
        let mut args = vec!["search", query, "--json"];
        args.extend_from_slice(extra);
        let run = self.run(&args);
        let json = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", run.stdout, run.stderr));
        (run, json)
    }
}

fn copy_tree(src: &Path, dst: &Path) {
    for entry in std::fs::read_dir(src).expect("fixture exists") {
        let entry = entry.expect("entry");
        let to = dst.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&to).expect("mkdir");
            copy_tree(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), &to).expect("copy");
        }
    }
}

/// The outcome of one run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_maguyva"))
        .args(args)
        .current_dir(dir)
        .env_remove("VOYAGE_API_KEY")
        .output()
        .expect("maguyva runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The paths of a JSON response's results, in order.
pub fn result_paths(json: &serde_json::Value) -> Vec<String> {
    json["results"]
        .as_array()
        .expect("results array")
        .iter()
        .map(|r| r["path"].as_str().expect("path").to_string())
        .collect()
}

/// Whether the current user can read a file whose mode is 000 (root can).
pub fn reads_despite_permissions(probe: &Path) -> bool {
    std::fs::read(probe).is_ok()
}
