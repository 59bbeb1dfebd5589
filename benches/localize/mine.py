#!/usr/bin/env python3
"""Mine (bug report text, files the fix edited) pairs from the git history of local bare mirrors.

  python3 benches/localize/mine.py --mirrors MIRRORS --exclude EXCLUDE_TXT \
      --out benches/localize/pairs.jsonl [--folds benches/localize/folds.json] [--cap 60] [--years 6]

MIRRORS holds OWNER+NAME/repo bare git directories. Repositories named in EXCLUDE_TXT (one OWNER/NAME a line,
'#' comments; compared case-insensitively) and the twelve SWE-bench repositories are skipped. One
`git log --name-status` pass reads each repository; the text of a pair is its commit message, the truth the
non-test source files the commit modified. Python 3.11 standard library only; the same mirrors give the same
output. See README.md beside this script for the filters."""
import argparse, collections, hashlib, json, os, re, subprocess, sys, time

# SWE-bench's twelve repositories: never used, whatever the exclude file says.
SWE_BENCH = {
    "astropy/astropy", "django/django", "matplotlib/matplotlib", "mwaskom/seaborn", "pallets/flask",
    "psf/requests", "pydata/xarray", "pylint-dev/pylint", "pytest-dev/pytest", "scikit-learn/scikit-learn",
    "sphinx-doc/sphinx", "sympy/sympy",
}
SEED = "localize-pairs-v1"
MAX_STATEMENT_BYTES = 64 * 1024
MIN_FILES, MAX_FILES = 1, 4

LANG_BY_EXT = {
    "py": "python", "pyi": "python",
    "rs": "rust",
    "go": "go",
    "java": "java",
    "kt": "kotlin", "kts": "kotlin",
    "scala": "scala", "sc": "scala",
    "cs": "csharp",
    "fs": "fsharp",
    "swift": "swift",
    "m": "objective-c", "mm": "objective-c",
    "js": "javascript", "mjs": "javascript", "cjs": "javascript", "jsx": "javascript",
    "ts": "typescript", "tsx": "typescript", "mts": "typescript", "cts": "typescript",
    "rb": "ruby", "rake": "ruby",
    "php": "php",
    "ex": "elixir", "exs": "elixir",
    "erl": "erlang", "hrl": "erlang",
    "hs": "haskell", "lhs": "haskell",
    "lua": "lua",
    "zig": "zig",
    "c": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "c++": "cpp", "hpp": "cpp", "hh": "cpp", "hxx": "cpp", "ipp": "cpp",
    "h": None,  # C or C++: decided by the pair's other files, else by the repository
    "sh": "shell", "bash": "shell", "zsh": "shell", "ksh": "shell",
    "dhall": "dhall",
    "ml": "ocaml", "mli": "ocaml",
    "clj": "clojure", "cljs": "clojure",
    "dart": "dart",
    "pl": "perl", "pm": "perl",
    "vim": "vimscript",
}

# Build manifests: a fix may touch them (a dependency, a flag) but they are not where a bug is found;
# they are left out of the truth without dropping the pair.
MANIFESTS = re.compile(
    r"(^|/)(cargo\.toml|package\.json|go\.mod|pom\.xml|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|"
    r"gradle\.properties|build\.sbt|mix\.exs|composer\.json|gemfile|[^/]*\.gemspec|[^/]*\.csproj|[^/]*\.fsproj|"
    r"[^/]*\.sln|directory\.build\.props|directory\.packages\.props|[^/]*\.cabal|package\.yaml|stack\.yaml|"
    r"build\.zig(\.zon)?|cmakelists\.txt|[^/]*\.cmake|makefile|makefile\.am|makefile\.in|gnumakefile|"
    r"configure\.ac|meson\.build|bazel|build\.bazel|workspace|module\.bazel|[^/]*\.bzl|setup\.cfg|"
    r"pyproject\.toml|tox\.ini|requirements[^/]*\.txt|tsconfig[^/]*\.json|rockspec|[^/]*\.rockspec|"
    r"package\.swift|podfile|[^/]*\.podspec|[^/]*\.xcodeproj/.*|[^/]*\.pbxproj|\.eslintrc[^/]*|"
    r"\.prettierrc[^/]*|\.babelrc|jsconfig\.json|rollup\.config\.[^/]*|webpack\.config\.[^/]*|"
    r"vite\.config\.[^/]*|jest\.config\.[^/]*|karma\.conf\.[^/]*|gruntfile\.js|gulpfile\.js|"
    r"phpunit\.xml(\.dist)?|phpstan[^/]*\.neon(\.dist)?|psalm\.xml|\.editorconfig|\.gitignore|\.gitattributes)$",
    re.I)

TEST_DIRS = {
    "test", "tests", "testing", "spec", "specs", "__tests__", "__test__", "testdata", "test-data", "test_data",
    "testcases", "fixtures", "__fixtures__", "__mocks__", "__snapshots__", "snapshots", "e2e", "unittest",
    "unittests", "integration-tests", "integration_tests", "testsuite", "test-suite", "fuzz", "fuzzing",
    "bench", "benches", "benchmark", "benchmarks", "perf", "it",
}
TEST_DIR_PART = re.compile(r"(?i:(^|[._-])(tests?|specs?|testing|unittests?|itests?|doctests?)([._-]|$)|testz$)|"
                           r"[a-z0-9](Tests?|Specs?)$|^test[A-Z]")
TEST_FILE = re.compile(
    r"(^test_[^/]*$|^conftest\.py$|_tests?\.[^.]+$|_spec\.[^.]+$|\.(test|spec|tests|e2e|bench)\.[^.]+$|"
    r"^tests?(\.[^.]+)?$|[a-z0-9](Test|Tests|TestCase)\.[^.]+$|IT\.(java|kt|scala|groovy)$|[a-z]tests\.[^.]+$|"
    r"\.test-d\.ts$|^test_?(harness|utils?|helpers?|support|ing_?utils?)\.[^.]+$|_bench\.[^.]+$|^bench(mark)?_|"
    r"^test-[^/]*$|\.t$|^fixtures?\.[^.]+$)")
DOC_DIRS = {"doc", "docs", "documentation", "man", "manual", "site", "website", "www", "guide", "guides",
            "book", "userguide", "javadoc", "apidocs", "changelog.d", "changes", "newsfragments", "changelogs",
            "release-notes", "releasenotes"}
DOC_EXT = {"md", "markdown", "rst", "txt", "adoc", "asciidoc", "textile", "rdoc", "pod", "org", "1", "3", "5", "7"}
META_NAME = re.compile(r"^(changelog|changes|history|news|releases?|release-notes|authors|contributors|"
                       r"maintainers|license|licence|copying|notice|readme|upgrade|upgrading|migration|"
                       r"code_of_conduct|contributing|security|codeowners)$", re.I)
LOCKFILES = re.compile(r"(^|/)([^/]*\.lock|package-lock\.json|npm-shrinkwrap\.json|pnpm-lock\.yaml|go\.sum|"
                       r"gradle\.lockfile|packages\.lock\.json|flake\.lock)$", re.I)
CI_PATHS = re.compile(r"(^|/)(\.github|\.circleci|\.buildkite|\.azure-pipelines|\.gitlab|\.ci|ci|\.devcontainer|"
                      r"\.husky|\.vscode|\.idea)/|(^|/)(\.travis\.yml|appveyor\.yml|\.appveyor\.yml|"
                      r"\.gitlab-ci\.yml|azure-pipelines\.yml|jenkinsfile|\.cirrus\.yml|codecov\.yml|"
                      r"\.codecov\.yml|\.pre-commit-config\.yaml|\.mergify\.yml|renovate\.json|\.readthedocs\.ya?ml|"
                      r"dependabot\.yml|netlify\.toml|vercel\.json|dockerfile|docker-compose\.ya?ml)$", re.I)
VENDOR_DIRS = {"vendor", "vendored", "third_party", "third-party", "thirdparty", "3rdparty", "external", "externals",
               "deps", "node_modules", "bower_components", "dist", "build", "out", "generated", "gen",
               "__generated__", "target", ".yarn", "submodules"}
GENERATED_FILE = re.compile(r"(\.min\.(js|css)$|\.pb\.go$|_pb2(_grpc)?\.py$|\.pb\.(cc|h)$|\.g\.cs$|"
                            r"\.designer\.cs$|\.generated\.[^.]+$|_generated\.[^.]+$|\.gen\.[^.]+$|"
                            r"\.bundle\.js$|-min\.js$|\.map$)", re.I)

BOT = re.compile(r"dependabot|renovate|\[bot\]|greenkeeper|snyk-bot|pre-commit-ci|github-actions|"
                 r"allcontributors|all-contributors|mergify|imgbot|pyup-bot|whitesource|depfu", re.I)
BUGWORDS = re.compile(
    r"\b(fix|fixes|fixed|fixing|bug|bugs|buggy|error|errors|erroneous|crash|crashes|crashed|crashing|wrong|"
    r"wrongly|fail|fails|failed|failing|failure|issue|issues|regression|panic|panics|panicked|exception|"
    r"exceptions|incorrect|incorrectly|broken|segfault|segfaults|hang|hangs|deadlock|leak|leaks|overflow|"
    r"unexpected|unexpectedly|invalid|mistakenly)\b|\b(fix(es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s*"
    r"(#\d+|https?://github\.com/\S+/issues/\d+)", re.I)
DROP_SUBJECT = [re.compile(p, re.I) for p in (
    r"^revert\b", r"^\W*merge (branch|remote-tracking|tag|commit|upstream|master|main|develop|.* into )",
    r"^(release|releasing|prepare (for )?(the )?release|preparing release|cut release|tag(ged)? v?\d)",
    r"^v?\d+(\.\d+)+\b", r"^\W*(chore|build|ci|test|tests|docs?|style|release|deps)(\([^)]*\))?!?:",
    r"\bbump(ed|s|ing)?\b.*\b(version|to v?\d|from v?\d)", r"^bump\b", r"^(update|upgrade) (dependencies|deps)\b",
    r"^(update|upgrade) [\w.@/-]+ (to|from) v?\d", r"\b(changelog|release notes?)\b", r"^\W*(set|update|change|increment|prepare) (the )?version\b",
    r"\btypos?\b", r"\bspelling\b", r"\bmisspell", r"^\W*(update|fix|improve|add|clarify|tweak|"
    r"correct|reword)(ed)? (the |some |a )?(docs?|documentation|docstrings?|comments?|readme|javadoc|examples? in docs)\b",
    r"\b(readme|docstring|javadoc|api docs?)\b", r"^\W*(reformat|format code|formatting|fmt\b|cargo fmt|rustfmt|"
    r"gofmt|go fmt|prettier|black\b|isort|run (black|prettier|rustfmt|cargo fmt|gofmt|eslint|php-cs-fixer|"
    r"clang-format)|apply (black|prettier|rustfmt|code style|php-cs-fixer|clang-format))",
    r"\b(fix|fixed|fixes|address|silence|resolve)(es|ed)? (some |a few |all |more )?(clippy|lint|linter|eslint|"
    r"rubocop|phpstan|psalm|mypy|flake8|pylint|ruff|compiler|deprecation|build|ci|gcc|clang|msvc|sign-compare|"
    r"-W\S+)? ?(warnings?|lints?|issues? reported by \S+)\b", r"\bclippy\b", r"\bcode ?style\b",
    r"\bwhitespace\b", r"^\W*(fixup|squash|amend)!", r"^\W*wip\b", r"^\W*(lint|linting)\b", r"\bci\b.*\b(fix|green|pass)",
    r"\b(fix|fixing|repair) (the )?(ci|build|tests?|test suite|flaky)\b", r"\bflaky\b",
)]
TRAILER = re.compile(
    r"^\s*(signed-off-by|co-authored-by|co-developed-by|reviewed-by|acked-by|tested-by|reported-by|suggested-by|"
    r"helped-by|requested-by|original-patch-by|change-id|reviewed-on|cc|pr-url|pr-close|approved-by|"
    r"backport-pr-url|differential revision|git-svn-id|commit-id|closes-bug|ticket|(auto-)?merged-by|"
    r"thanks-to|bug-url|gitOrigin-RevId|piperorigin-revid|import from|imported from|skip-changelog|changelog|"
    r"changelog-entry|release-note)\s*:.*$", re.I)
NOISE_LINE = re.compile(r"^\s*(\(cherry picked from commit [0-9a-f]+\)|\[(skip ci|ci skip|skip-ci|no ci)\]|"
                        r"-{3,}|={3,}|_{3,}|<!--.*-->|created by moe: \S+|revision created by moe tool \S+|moe_migrat\w*=\S+)\s*$", re.I)
# A GitHub squash lists the branch's commits as bullets; "* Fix", "* wip", "* Merge branch 'x'" say nothing.
SQUASH_SUBJECT = re.compile(r"\(#\d+\)\s*$")
MERGE_BULLET = re.compile(r"^\s*[*-]\s+Merge (branch|remote-tracking branch|pull request) ", re.I)
SHORT_BULLET = re.compile(r"^\s*\*\s+\S+(\s+\S+){0,2}\s*$")
# A message that says the change silences a linter is not a bug report, whatever its subject.
LINT_BODY = re.compile(r"\b(clippy|lint|linter|eslint|rubocop|phpstan|psalm|mypy|flake8|ruff|static analysis|"
                       r"compiler) (warnings?|errors?|complaints?|issues?)\b", re.I)
STRONG_SUBJECT = re.compile(
    r"\b(fix|fixes|fixed|fixing|bug|bugfix|hotfix|crash|crashes|wrong|wrongly|fail|fails|failed|failing|failure|"
    r"regression|panic|panics|exception|incorrect|incorrectly|broken|segfault|hang|hangs|deadlock|leak|leaks|"
    r"overflow|error|errors)\b", re.I)
ISSUE_REF = re.compile(r"\b(fix(es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s*(#\d+|https?://github\.com/\S+/issues/\d+)", re.I)
PR_MERGE = re.compile(r"^Merge pull request #(\d+) from (\S+)")


def read_exclude(path):
    out = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.add(line.lower())
    return out


def allowed_repos(mirrors, exclude):
    banned = exclude | {r.lower() for r in SWE_BENCH}
    out = []
    for d in sorted(os.listdir(mirrors)):
        if "+" not in d or not os.path.isdir(os.path.join(mirrors, d, "repo")):
            continue
        repo = d.replace("+", "/", 1)
        if repo.lower() in banned:
            continue
        out.append((repo, os.path.join(mirrors, d, "repo")))
    return out


def is_excluded_path(path):
    """Tests, docs, changelogs, lockfiles, CI configuration, generated or vendored files."""
    parts = path.split("/")
    name, dirs = parts[-1], parts[:-1]
    low = [p.lower() for p in dirs]
    if any(p in TEST_DIRS or TEST_DIR_PART.search(p) for p in dirs):
        return "test"
    if TEST_FILE.search(name):
        return "test"
    if any(p in DOC_DIRS for p in low) or META_NAME.match(name):
        return "doc"
    ext = name.rsplit(".", 1)[1].lower() if "." in name[1:] else ""
    if ext in DOC_EXT:
        return "doc"
    if LOCKFILES.search(path):
        return "lock"
    if CI_PATHS.search(path):
        return "ci"
    if any(p in VENDOR_DIRS for p in low) or GENERATED_FILE.search(name):
        return "vendor"
    return None


def ext_of(path):
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[1].lower() if "." in name[1:] else ""


# The home and temporary folders of the machine a message was written on
# (`/home/runner/src/x.php`) say nothing of the code: they become `~` and
# `$TMPDIR`, the rest of the path (which does) stays. So do the build roots
# of CI runners and package builders, written as the variables that name
# them: a GitHub runner's checkout (`work/NAME/NAME` under its home) is
# `$GITHUB_WORKSPACE`, a Portage build folder (`portage/CATEGORY/PACKAGE-VERSION`
# then `work`, also when a traceback shortens it to `...`) is `$WORKDIR`.
NOT_IN_PATH = r"(?<![\w.$~/\\-])"
HOME_PATH = re.compile(NOT_IN_PATH + r"(?:(?:/[\w.-]+)*/home/[^/\s\"'`]+|/Users/[^/\s\"'`]+|/root|[A-Za-z]:\\Users\\[^\\\s\"'`]+)(?=[/\\])")
TEMP_PATH = re.compile(NOT_IN_PATH + r"(?:(?:/private)?/var/folders/[^/\s]+/[^/\s]+|/var/tmp|/tmp)(?=/)")


GITHUB_WORKSPACE = re.compile(r"~/work(?:/[^/\s\"'`]+){2}(?=/)")
PORTAGE_WORKDIR = re.compile(r"(?:\$TMPDIR/portage/[\w+-]+/|\.\.\.[\w+-]*/)[\w.+-]+-\d[\w.]*/work(?=/)")


def anonymized(text):
    text = TEMP_PATH.sub("$TMPDIR", HOME_PATH.sub("~", text))
    return PORTAGE_WORKDIR.sub("$WORKDIR", GITHUB_WORKSPACE.sub("$GITHUB_WORKSPACE", text))


def clean_message(text):
    lines = [l.rstrip() for l in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    if "--HG--" in lines:  # history converted from Mercurial: its metadata block closes the message
        lines = lines[: lines.index("--HG--")]
    squash = bool(SQUASH_SUBJECT.search(lines[0])) if lines else False
    keep = [l for l in lines if not TRAILER.match(l) and not NOISE_LINE.match(l) and not MERGE_BULLET.match(l)
            and not (squash and SHORT_BULLET.match(l))]
    out, blank = [], 0
    for l in keep:
        if not l.strip():
            blank += 1
            if blank > 1:
                continue
        else:
            blank = 0
        out.append(l)
    s = "\n".join(out).strip()
    s = re.sub(r"\s*\[(skip ci|ci skip)\]", "", s, flags=re.I)
    s = anonymized(s)
    b = s.encode("utf-8")
    if len(b) > MAX_STATEMENT_BYTES:
        s = b[:MAX_STATEMENT_BYTES].decode("utf-8", "ignore")
    return s


def prose_ok(text):
    t = re.sub(r"https?://\S+", " ", text)
    t = re.sub(r"#\d+|\b[0-9a-f]{7,40}\b", " ", t)
    t = " ".join(t.split())
    words = re.findall(r"[A-Za-z][A-Za-z'-]+", t)
    return len(t) >= 80 and len(words) >= 12


def git_log(git_dir):
    """Yield (sha, parents, author_name, author_email, time, message, [(status, path)]) for HEAD's history."""
    fmt = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%ct%x1f%B%x1d"
    cmd = ["git", "--git-dir", git_dir, "-c", "core.quotepath=off", "log", "HEAD", "--no-renames",
           "--diff-merges=first-parent", "--name-status", "-z", "--format=" + fmt]
    raw = subprocess.run(cmd, capture_output=True, check=True).stdout
    for rec in raw.split(b"\x1e")[1:]:
        head, _, files = rec.partition(b"\x1d")
        sha, parents, an, ae, ct, msg = head.decode("utf-8", "replace").split("\x1f", 5)
        toks = [t.decode("utf-8", "surrogateescape") for t in files.split(b"\0")]
        toks = [t.strip("\n") for t in toks]
        changes, i = [], 0
        while i < len(toks):
            st = toks[i]
            if not st:
                i += 1
                continue
            if i + 1 < len(toks):
                changes.append((st[0], toks[i + 1]))
            i += 2
        yield sha, parents.split(), an, ae, int(ct), msg, changes


def first_lines(git_dir, specs):
    """First 300 bytes of each blob spec ('sha:path'), one `git cat-file --batch` for all of them."""
    out = {}
    if not specs:
        return out
    p = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    for spec in specs:
        p.stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
        p.stdin.flush()
        head = p.stdout.readline().split()
        if len(head) < 3 or head[-1] == b"missing":
            out[spec] = b""
            continue
        data = p.stdout.read(int(head[2]))
        p.stdout.read(1)
        out[spec] = data[:300]
    p.stdin.close()
    p.wait()
    return out


SHELL_HEAD = re.compile(rb"^#!\s*\S*(/|env\s+)(ba|z|k|da)?sh\b|-\*-\s*(shell-script|sh)\s*-\*-|^#\s*\S+\(\d\) completion",
                        re.M)


def mine_repo(repo, git_dir, cap, years, stats):
    commits = list(git_log(git_dir))
    if not commits:
        return []
    newest = max(c[4] for c in commits)
    cutoff = newest - int(years * 365.25 * 86400)
    c_like = collections.Counter()
    for c in commits:
        for _, p in c[6]:
            e = ext_of(p)
            if e == "c":
                c_like["c"] += 1
            elif LANG_BY_EXT.get(e) == "cpp":
                c_like["cpp"] += 1
    repo_h = "cpp" if c_like["cpp"] > c_like["c"] else "c"

    cands, need_head = [], set()
    for sha, parents, an, ae, ct, msg, changes in commits:
        stats["commits"] += 1
        if not parents:
            continue
        subject = msg.strip().split("\n", 1)[0].strip()
        if len(parents) > 1:
            m = PR_MERGE.match(subject)
            if not m or BOT.search(m.group(2)):
                stats["merge"] += 1
                continue
            text = msg.strip().split("\n", 1)[1] if "\n" in msg.strip() else ""
            subject = text.strip().split("\n", 1)[0].strip()
        else:
            text = msg
        if BOT.search(an) or BOT.search(ae):
            stats["bot"] += 1
            continue
        if (any(r.search(subject) for r in DROP_SUBJECT) or re.search(r"this reverts commit", msg, re.I)
                or BOT.search(subject)):
            stats["subject"] += 1
            continue
        statement = clean_message(text)
        if not prose_ok(statement):
            stats["short"] += 1
            continue
        if not BUGWORDS.search(statement):
            stats["no_bug_word"] += 1
            continue
        if LINT_BODY.search(statement):
            stats["subject"] += 1
            continue
        strong = bool(STRONG_SUBJECT.search(subject) or ISSUE_REF.search(statement))
        files, bad = [], False
        for st, path in changes:
            if is_excluded_path(path):
                continue
            if MANIFESTS.search(path):
                continue
            if st != "M":  # added, deleted or type-changed source: not findable at the parent / not an edit
                bad = True
                break
            files.append(path)
        if bad:
            stats["added_or_deleted"] += 1
            continue
        if not (MIN_FILES <= len(files) <= MAX_FILES):
            stats["file_count"] += 1
            continue
        langs, unknown = [], []
        for path in files:
            e = ext_of(path)
            if e in LANG_BY_EXT:
                langs.append(LANG_BY_EXT[e])
            elif e == "":
                unknown.append(path)
                langs.append("?")
            else:
                bad = True
                break
        if bad:
            stats["not_source"] += 1
            continue
        for path in unknown:
            need_head.add(f"{sha}:{path}")
        cands.append({"sha": sha, "parent": parents[0], "time": ct, "statement": statement,
                      "files": sorted(files), "langs": langs, "merge": len(parents) > 1, "subject": subject,
                      "strong": strong})

    heads = first_lines(git_dir, sorted(need_head))
    kept = []
    for c in cands:
        langs = list(c["langs"])
        ok = True
        for i, path in enumerate(c["files"]):
            if langs[i] == "?":
                if SHELL_HEAD.search(heads.get(f"{c['sha']}:{path}", b"")):
                    langs[i] = "shell"
                else:
                    ok = False
        if not ok:
            stats["not_source"] += 1
            continue
        named = [l for l in langs if l]
        if None in langs:
            h = "cpp" if "cpp" in named else "c" if "c" in named else ("objective-c" if "objective-c" in named
                                                                         else repo_h)
            langs = [l or h for l in langs]
        cnt = collections.Counter(langs)
        top = max(cnt.values())
        c["language"] = sorted(l for l, n in cnt.items() if n == top)[0]
        kept.append(c)

    # One pair per fix: a PR's merge and the branch commit it brought in often say the same thing.
    seen, uniq = set(), []
    for c in sorted(kept, key=lambda c: (c["merge"], c["time"], c["sha"])):
        key = (tuple(c["files"]), re.sub(r"\W+", " ", re.sub(r"\(#\d+\)", "", c["subject"])).strip().lower()[:80])
        if key in seen:
            stats["duplicate"] += 1
            continue
        seen.add(key)
        uniq.append(c)
    stats["candidates"] += len(uniq)

    # Recent fixes first (their trees look like today's), and among them those whose subject names a failure or
    # that close an issue; within a tier the order is a seeded hash of the commit, a sample across the history.
    rank = lambda c: (0 if c["time"] >= cutoff else 1, 0 if c["strong"] else 1,
                      hashlib.sha256((SEED + c["sha"]).encode()).hexdigest())
    chosen = sorted(uniq, key=rank)[:cap]
    chosen.sort(key=lambda c: (c["time"], c["sha"]))
    owner_name = repo.replace("/", "__")
    return [{"instance_id": f"{owner_name}-{c['sha'][:12]}", "repo": repo, "base_commit": c["parent"],
             "commit": c["sha"], "language": c["language"], "problem_statement": c["statement"],
             "edited_files": c["files"]} for c in chosen]


def fold_of(repo, k=5):
    return int(hashlib.sha256(("folds:" + repo).encode()).hexdigest()[:8], 16) % k


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", required=True, help="folder of OWNER+NAME/repo bare git mirrors")
    ap.add_argument("--exclude", required=True, help="exclude.txt: OWNER/NAME a line, never used")
    ap.add_argument("--out", required=True, help="pairs.jsonl to write")
    ap.add_argument("--folds", default="", help="folds.json to write (default: beside --out)")
    ap.add_argument("--cap", type=int, default=60, help="at most this many pairs per repository")
    ap.add_argument("--years", type=float, default=6.0, help="prefer fixes from the last YEARS of each history")
    ap.add_argument("--repos", default="", help="comma-separated OWNER/NAME to keep (for trials)")
    a = ap.parse_args()

    repos = allowed_repos(a.mirrors, read_exclude(a.exclude))
    if a.repos:
        want = {r.lower() for r in a.repos.split(",")}
        repos = [r for r in repos if r[0].lower() in want]
    rows, stats = [], collections.Counter()
    for repo, git_dir in repos:
        t0 = time.perf_counter()
        got = mine_repo(repo, git_dir, a.cap, a.years, stats)
        rows.extend(got)
        print(f"{repo:40s} {len(got):4d} pairs  {time.perf_counter() - t0:5.1f}s", file=sys.stderr, flush=True)
    rows.sort(key=lambda r: (r["repo"].lower(), r["instance_id"]))
    ids = [r["instance_id"] for r in rows]
    assert len(ids) == len(set(ids)), "instance ids collide"
    with open(a.out, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    folds_path = a.folds or os.path.join(os.path.dirname(os.path.abspath(a.out)), "folds.json")
    used = sorted({r["repo"] for r in rows}, key=str.lower)
    with open(folds_path, "w", encoding="utf-8") as f:
        json.dump({r: fold_of(r) for r in used}, f, indent=1, sort_keys=True)
        f.write("\n")
    langs = collections.Counter(r["language"] for r in rows)
    print(json.dumps({"pairs": len(rows), "repositories": len(used), "languages": dict(langs.most_common()),
                      "filtered": dict(sorted(stats.items()))}, indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
