#!/usr/bin/env python3
"""Fetch the source corpus for the code-embedding model from package registries.

Reads a source list (TSV with a header; columns registry, name, version,
language, archive, optionally sha256, any further columns are carried
along), downloads every archive into a cache through the registry's own
client, and extracts the source files of 19 languages into one folder per
language:

    OUT/<language>/<registry>-<name>-<version>/<path inside the archive>

(a "/" in a name, as in npm scopes, becomes "+").

    python3 fetch_corpus.py SOURCES.tsv [--cache DIR] [--out DIR] [--manifest FILE]
                            [--only-language LANG ...] [--verified-list FILE]

Sources
    A package is named by its registry (crates, pypi, npm or debian), name
    and version; archive is the file name the registry gives the archive
    (no host, no path), and sha256 its checksum. A debian name may be
    SOURCE/DIR (see Extraction): SOURCE is the source package.

Downloads
    Each registry is asked through its ordinary client, or the index that
    client is configured with, so the list names no host:

    crates  cargo: a temporary project that depends on NAME = "=VERSION"
            (default features off) is fetched with `cargo fetch`, which
            also fetches the crate's dependencies into cargo's cache; the
            archive is copied from $CARGO_HOME/registry/cache/*/ (CARGO_HOME
            as set, else ~/.cargo).
    npm     `npm pack NAME@VERSION --pack-destination DIR` (npm's configured
            registry, no scripts run); npm names a scoped package's file
            SCOPE-ARCHIVE.
    pypi    pip's index: the index URL (and extra index URLs, certificate and
            proxy) that pip's own option parser gives for `pip download`, so
            PIP_INDEX_URL, pip's configuration files and pip's default
            index, asked of the running python's pip; the simple index page
            of the project (PEP 503 normalized name) is read, and the link
            whose file name is archive is downloaded. Nothing is built.
    debian  the mirrors apt is configured with (URIs: lines of
            sources.list.d/*.sources, deb lines of sources.list and
            sources.list.d/*.list, located by apt-config), each tried in
            turn at pool/main/PREFIX/SOURCE/ARCHIVE, PREFIX being lib and
            the fourth letter for a source starting with lib, else its first
            letter. (`apt-get source` is not used: it needs deb-src lines.)

    Archives go to CACHE/<registry>/<archive> (npm scopes are prefixed:
    @scope+file.tgz). A file already in the cache is reused; when the list
    gives a sha256 it must match, else the file is downloaded again.
    Downloads run three at a time, are written to a .part file and renamed
    when complete, and are retried twice. When the list gives a sha256, an
    archive that does not match it is refused. The sha256 of every archive is
    recorded in the manifest. A failed row is reported and the run goes on;
    a registry whose client is missing or cannot be asked fails its rows
    only.

Extraction
    Kinds: tar.gz (.tar.gz, .tgz, .crate), tar.xz, tar.bz2 and zip (also
    .whl), recognised by their first bytes. Only regular files are read;
    absolute paths, ".." components and links are refused, and nothing is
    written outside OUT. Files are kept by extension:

        bash .sh .bash            c .c .h               cpp .cc .cpp .cxx .hpp .hh .hxx
        csharp .cs                elixir .ex .exs       go .go
        haskell .hs               java .java            javascript .js .mjs .cjs .jsx
        kotlin .kt .kts           lua .lua              php .php
        python .py                ruby .rb              rust .rs
        scala .scala              swift .swift          typescript .ts .tsx (not .d.ts)
        zig .zig

    A file is kept under the language of its extension whatever the row's
    language, except .h, which is cpp in a cpp row and c otherwise.
    Skipped: files over 512 KiB; files that are not UTF-8 or hold a NUL byte;
    minified or generated files (*.min.js and the like, a JS/TS file with a
    line over 1,000 characters, "generated" or "DO NOT EDIT" in the first
    5 lines); anything under a folder named node_modules, vendor,
    third_party, thirdparty, dist or build.
    Files are deduplicated by the sha256 of their content over the whole
    run: the first one in list order is kept.

    A row of kind debian whose name is SOURCE/DIR (e.g. swiftlang/swift-nio)
    names one top-level folder of a shared archive: only files under DIR
    (at the archive root or below its single top folder) are taken.

Exclusions
    Rows whose name matches a repository of the benchmark lists are refused
    and printed: --exclude-list (lines owner/repo, # comments) and
    --exclude-repos-json (JSON list of objects with name and url). Names are
    compared case-insensitively after stripping language wrappers
    (python-, node-, lib, -rs, .js, -java, version digits, ...), and a
    package whose name contains a repository's name as a run of whole words
    (golang-github-spf13-cobra, libcommons-lang3-java, serde_json) is
    refused too. This errs on the side of refusing; --allow REGISTRY:NAME
    lets through a row checked by hand.

Outputs
    OUT/...            the kept files (each processed row's folders are
                       rewritten, so a rerun gives the same tree)
    --manifest         TSV, one row per source: registry, name, version,
                       language, archive, sha256 (of the archive), files, bytes,
                       status (ok / failed: reason / excluded: owner/repo)
    --verified-list    optional: the input rows whose status is ok, in the
                       input's columns plus sha256, for a verified rerun
    stdout             progress, refusals, and a summary per language

Standard library only (Python 3.11). The clients are needed only for rows of
their registry: cargo, npm, pip (of the python running this script) and
apt's configuration.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import hashlib
import html.parser
import json
import lzma
import os
import re
import shlex
import shutil
import ssl
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Callable

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = "corpus/cache"
DEFAULT_OUT = "corpus/files"
DEFAULT_MANIFEST = "corpus/manifest.tsv"
# The ranking's training benchmark: its repositories stay out of the corpus,
# so that the model is measured on code it never saw.
DEFAULT_EXCLUDE_REPOS_JSON = HERE.parent / "train" / "repos.json"

MAX_FILE_BYTES = 512 * 1024
MAX_JS_LINE = 1000
DOWNLOAD_JOBS = 3
USER_AGENT = "maguyva-corpus-fetch (Python urllib)"
# A registry client's run (npm pack, cargo fetch) may take this many times
# the per-read timeout.
CLIENT_TIMEOUT_FACTOR = 5
REGISTRIES = ("crates", "npm", "pypi", "debian")

EXTENSIONS = {
    "bash": (".sh", ".bash"),
    "c": (".c", ".h"),
    "cpp": (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"),
    "csharp": (".cs",),
    "elixir": (".ex", ".exs"),
    "go": (".go",),
    "haskell": (".hs",),
    "java": (".java",),
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "kotlin": (".kt", ".kts"),
    "lua": (".lua",),
    "php": (".php",),
    "python": (".py",),
    "ruby": (".rb",),
    "rust": (".rs",),
    "scala": (".scala",),
    "swift": (".swift",),
    "typescript": (".ts", ".tsx"),
    "zig": (".zig",),
}
LANGUAGES = tuple(sorted(EXTENSIONS))
EXT_LANGUAGE = {ext: lang for lang, exts in EXTENSIONS.items() for ext in exts}
SKIP_DIRS = {"node_modules", "vendor", "third_party", "thirdparty", "dist", "build"}
# "generated" as a word, not as part of a path such as ../generated/idl
GENERATED_RE = re.compile(r"(?<![\w/])generated(?![\w/])|do not edit", re.IGNORECASE)
MINIFIED_RE = re.compile(r"[.-]min\.(js|mjs|cjs)$", re.IGNORECASE)


# ---------------------------------------------------------------- exclusions

_NAME_PREFIXES = (
    "python3-", "python-", "py-", "node-", "nodejs-", "golang-", "go-",
    "ruby-", "rb-", "php-", "lua-", "elixir-", "erlang-", "haskell-", "hs-",
    "ghc-", "rust-", "zig-", "perl-", "swift-", "kotlin-", "scala-", "java-",
    "js-", "vim-", "nvim-", "lib", "py",
)
_NAME_SUFFIXES = (
    "-rs", ".rs", "-rust", ".js", "-js", "js", ".py", "-py", "-python",
    "-go", ".go", "-golang", ".lua", "-lua", ".nvim", "-nvim", ".vim", "-vim",
    ".zig", "-zig", "-java", "-cpp", "-c", "-php", "-ruby", "-rb", "-hs",
    "-haskell", "-swift", "-kotlin", "-kt", "-scala", "-csharp", "-sharp",
    ".net", "-dotnet", "-lib", "lib", "-dev", ".sh", "-core",
)
_VERSION_TAIL = re.compile(r"(?:[-_.]v?)?\d+(?:\.\d+)*$")
_WORD_SPLIT = re.compile(r"[-_./@+ ]+")
_SEPARATORS = re.compile(r"[-_./@+ ]")
MIN_CONTAINED_STRIPPED = 5  # stripped names shorter than this only match whole names


def name_variants(name: str) -> set[str]:
    """The name, lowercased, with every combination of wrappers stripped."""
    name = name.lower().strip()
    seen: set[str] = set()
    todo = [name]
    if "/" in name:  # npm scope or SOURCE/DIR: also the part after the slash
        todo.append(name.rsplit("/", 1)[1])
        todo.append(name.lstrip("@").replace("/", "-"))
    while todo:
        v = todo.pop()
        if v in seen or len(v) < 2:
            continue
        seen.add(v)
        for p in _NAME_PREFIXES:
            if v.startswith(p) and len(v) - len(p) >= 2:
                todo.append(v[len(p):])
        for s in _NAME_SUFFIXES:
            if v.endswith(s) and len(v) - len(s) >= 2:
                todo.append(v[: -len(s)])
        m = _VERSION_TAIL.search(v)
        if m and m.start() >= 2:
            todo.append(v[: m.start()])
    return seen | {_SEPARATORS.sub("", v) for v in seen if len(_SEPARATORS.sub("", v)) >= 2}


def word_variants(word: str) -> set[str]:
    """One word of a package name with versions and lib/js/lang affixes stripped."""
    out = {word}
    todo = [word]
    while todo:
        w = todo.pop()
        cands = []
        m = _VERSION_TAIL.search(w)
        if m and m.start() >= 2:
            cands.append(w[: m.start()])
        if w.startswith("lib") and len(w) >= 5:
            cands.append(w[3:])
        for s in ("lib", "js", "lang"):
            if w.endswith(s) and len(w) - len(s) >= 2:
                cands.append(w[: -len(s)])
        for c in cands:
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def words(name: str) -> list[str]:
    return [w for w in _WORD_SPLIT.split(name.lower()) if w]


@dataclass
class ExcludedRepo:
    label: str                      # owner/repo as listed
    variants: set[str]              # whole-name forms
    word_runs: list[list[str]]      # runs of words that may not occur in a name


class Exclusions:
    """Repositories whose packages may not enter the corpus."""

    def __init__(self) -> None:
        self.repos: list[ExcludedRepo] = []

    def add(self, label: str, names: list[str]) -> None:
        variants: set[str] = set()
        runs: list[list[str]] = []
        for n in names:
            n = n.lower()
            variants |= name_variants(n)
            runs.append(words(n))
            for v in name_variants(n):
                if len(_SEPARATORS.sub("", v)) >= MIN_CONTAINED_STRIPPED:
                    runs.append(words(v))
        uniq = []
        for r in runs:
            if r and r not in uniq:
                uniq.append(r)
        self.repos.append(ExcludedRepo(label, variants, uniq))

    @classmethod
    def load(cls, exclude_list: Path | None, repos_json: Path | None) -> "Exclusions":
        ex = cls()
        if exclude_list is not None:
            for line in exclude_list.read_text(encoding="utf-8").splitlines():
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                repo = line.rstrip("/").split("/")[-1].removesuffix(".git")
                ex.add(line, [repo])
        if repos_json is not None:
            for entry in json.loads(repos_json.read_text(encoding="utf-8")):
                names = [entry["name"]]
                label = entry["name"]
                url = entry.get("url") or ""
                if url:
                    parts = url.rstrip("/").removesuffix(".git").split("/")
                    names.append(parts[-1])
                    label = "/".join(parts[-2:])
                ex.add(label, names)
        return ex

    def match(self, package: str) -> str | None:
        """The excluded repository a package name matches, if any."""
        pvars = name_variants(package)
        pwords = [word_variants(w) for w in words(package)]
        for repo in self.repos:
            if pvars & repo.variants:
                return repo.label
            for run in repo.word_runs:
                n = len(run)
                for i in range(len(pwords) - n + 1):
                    if all(run[j] in pwords[i + j] for j in range(n)):
                        return repo.label
        return None


# ------------------------------------------------------------------ sources

@dataclass
class Source:
    index: int
    row: dict[str, str]
    registry: str
    name: str
    version: str
    language: str
    archive: str
    expected_sha256: str
    sha256: str = ""
    files: int = 0
    bytes: int = 0
    status: str = ""

    @property
    def label(self) -> str:
        return f"{self.registry} {self.name} {self.version}"

    @property
    def folder(self) -> str:
        return safe_component(f"{self.registry}-{self.name}-{self.version}")

    @property
    def subdir(self) -> str | None:
        if self.registry == "debian" and "/" in self.name:
            return self.name.split("/", 1)[1]
        return None

    @property
    def package(self) -> str:
        """The name the registry knows: SOURCE of a debian SOURCE/DIR row."""
        if self.registry == "debian":
            return self.name.split("/", 1)[0]
        return self.name


def safe_component(text: str) -> str:
    text = text.replace("/", "+").replace("\\", "+")
    return text if text not in ("", ".", "..") else "_"


def read_sources(path: Path) -> tuple[list[str], list[Source]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        columns = list(reader.fieldnames or [])
        missing = {"registry", "name", "version", "language", "archive"} - set(columns)
        if missing:
            sys.exit(f"{path}: missing columns {sorted(missing)}")
        sources = []
        for i, row in enumerate(reader):
            sources.append(Source(
                index=i, row=row,
                registry=row["registry"].strip(), name=row["name"].strip(),
                version=row["version"].strip(), language=row["language"].strip(),
                archive=row["archive"].strip(),
                expected_sha256=(row.get("sha256") or "").strip().lower(),
            ))
    return columns, sources


# ---------------------------------------------------------------- downloads

def cache_path(cache: Path, src: Source) -> Path:
    fname = src.archive
    if src.registry == "npm" and src.name.startswith("@") and "/" in src.name:
        fname = f"{src.name.split('/', 1)[0]}+{fname}"
    return cache / safe_component(src.registry) / safe_component(fname)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class FetchError(Exception):
    pass


def fetch_url(url: str, part: Path, timeout: float,
              opener: urllib.request.OpenerDirector | None = None) -> int:
    """Stream url into part; the number of bytes written."""
    size = 0
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    open_url = opener.open if opener is not None else urllib.request.urlopen
    with open_url(req, timeout=timeout) as resp, part.open("wb") as out:
        for chunk in iter(lambda: resp.read(1 << 20), b""):
            out.write(chunk)
            size += len(chunk)
        length = resp.headers.get("Content-Length")
    if length is not None and int(length) != size:
        raise OSError(f"short read: {size} of {length} bytes")
    return size


def run_client(cmd: list[str], cwd: Path, timeout: float) -> str:
    """Run a registry client; its stdout, or FetchError with its first error lines."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout)
    except FileNotFoundError:
        raise FetchError(f"{cmd[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise FetchError(f"{cmd[0]} {cmd[1]}: no answer in {timeout:.0f} s") from None
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
        first = next((i for i, ln in enumerate(lines) if "error" in ln.lower()),
                     max(0, len(lines) - 3))
        raise FetchError(f"{cmd[0]} {cmd[1]} exited {proc.returncode}: "
                         f"{' | '.join(lines[first:first + 3])}")
    return proc.stdout


# pip's own option parser gives the index `pip download` would use: the
# environment (PIP_INDEX_URL, ...), pip's configuration files, else pip's
# default index. pip has no public interface for this, so its option parser is
# asked, in a python of its own.
PIP_OPTIONS = """
import json
from pip._internal.commands import create_command
options, _ = create_command("download").parse_args([])
print(json.dumps({"indexes": [options.index_url, *options.extra_index_urls],
                  "no_index": options.no_index, "cert": options.cert,
                  "proxy": options.proxy}))
"""


@dataclass
class PipIndex:
    indexes: list[str]
    opener: urllib.request.OpenerDirector


def ask_pip(timeout: float) -> PipIndex:
    """The indexes pip is configured with, and an opener with pip's certificate
    and proxy."""
    out = run_client([sys.executable, "-c", PIP_OPTIONS], Path.cwd(), timeout)
    try:
        options = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise FetchError(f"pip gave no options: {out[:200]!r}") from None
    if options["no_index"]:
        raise FetchError("pip is configured with no index")
    context = ssl.create_default_context(cafile=options["cert"] or None)
    handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=context)]
    if options["proxy"]:
        handlers.append(urllib.request.ProxyHandler({"http": options["proxy"],
                                                     "https": options["proxy"]}))
    return PipIndex([i for i in options["indexes"] if i], urllib.request.build_opener(*handlers))


class LinkParser(html.parser.HTMLParser):
    """The href of every <a> of a simple index page."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def link_file_name(url: str) -> str:
    return urllib.parse.unquote(urllib.parse.urlparse(url).path.rstrip("/").rsplit("/", 1)[-1])


def apt_list_files() -> list[Path]:
    """apt's source lists, where apt-config says they are."""
    main, parts = Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d")
    try:
        out = subprocess.run(["apt-config", "shell", "MAIN", "Dir::Etc::sourcelist/f",
                              "PARTS", "Dir::Etc::sourceparts/d"],
                             capture_output=True, text=True, timeout=60).stdout
        for assignment in shlex.split(out):
            key, _, value = assignment.partition("=")
            if key == "MAIN" and value:
                main = Path(value)
            elif key == "PARTS" and value:
                parts = Path(value)
    except (OSError, subprocess.SubprocessError, ValueError):
        pass  # no apt-config: apt's default places
    files = [main] if main.is_file() else []
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    return files


def apt_mirrors() -> list[str]:
    """The http(s) URIs of apt's binary and source lines, in list order."""
    uris: list[str] = []
    for path in apt_list_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".sources":
            # deb822 stanzas, separated by blank lines
            for stanza in re.split(r"\n\s*\n", text):
                fields: dict[str, str] = {}
                key = ""
                for line in stanza.splitlines():
                    if line.startswith("#") or not line.strip():
                        continue
                    if line[0] in " \t" and key:  # continuation line
                        fields[key] += " " + line.strip()
                    elif ":" in line:
                        key, _, value = line.partition(":")
                        key = key.strip().lower()
                        fields[key] = value.strip()
                if fields.get("enabled", "yes").lower() == "no":
                    continue
                if not {"deb", "deb-src"} & set(fields.get("types", "").split()):
                    continue
                uris += fields.get("uris", "").split()
        else:
            # one-line entries: deb [options] URI SUITE [COMPONENT...]
            for line in text.splitlines():
                line = line.split("#", 1)[0]
                line = re.sub(r"\[[^\]]*\]", " ", line)
                words_ = line.split()
                if len(words_) >= 3 and words_[0] in ("deb", "deb-src"):
                    uris.append(words_[1])
    out: list[str] = []
    for uri in uris:
        uri = uri.rstrip("/")
        if urllib.parse.urlparse(uri).scheme in ("http", "https") and uri not in out:
            out.append(uri)
    return out


def debian_pool_path(source: str, archive: str) -> str:
    prefix = source[:4] if source.startswith("lib") else source[:1]
    return "/".join(urllib.parse.quote(p, safe="+~")
                    for p in ("pool", "main", prefix, source, archive))


def cargo_home() -> Path:
    home = os.environ.get("CARGO_HOME")
    return Path(home) if home else Path.home() / ".cargo"


class Registries:
    """Fetches an archive through its registry's client; what a client is
    configured with is asked once, when a row of that registry first needs it."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.client_timeout = timeout * CLIENT_TIMEOUT_FACTOR
        self.lock = threading.Lock()
        self.asked: dict[str, object] = {}

    def configured(self, registry: str, ask: Callable[[], object]) -> object:
        """ask() once per registry; its answer, or its failure, is kept for every row."""
        with self.lock:
            if registry not in self.asked:
                try:
                    self.asked[registry] = ask()
                except (FetchError, OSError, subprocess.SubprocessError, ValueError, KeyError) as exc:
                    self.asked[registry] = FetchError(f"cannot ask {registry}'s client: {exc}")
            answer = self.asked[registry]
        if isinstance(answer, FetchError):
            raise answer
        return answer

    def fetch(self, src: Source, part: Path) -> int:
        """Write src's archive to part; the number of bytes fetched."""
        if not src.archive or safe_component(src.archive) != src.archive:
            raise FetchError(f"archive is not a file name: {src.archive!r}")
        fetchers = {"crates": self.fetch_crate, "npm": self.fetch_npm,
                    "pypi": self.fetch_pypi, "debian": self.fetch_debian}
        if src.registry not in fetchers:
            raise FetchError(f"unknown registry {src.registry} (known: {', '.join(REGISTRIES)})")
        return fetchers[src.registry](src, part)

    def fetch_crate(self, src: Source, part: Path) -> int:
        # cargo resolves and downloads the crate (and its dependencies) into
        # its own cache; the archive is copied from there.
        with tempfile.TemporaryDirectory(prefix="corpus-cargo-") as tmp:
            root = Path(tmp)
            (root / "src").mkdir()
            (root / "src" / "lib.rs").write_text("")
            (root / "Cargo.toml").write_text(
                '[package]\nname = "corpus-fetch-probe"\nversion = "0.0.0"\n'
                'edition = "2021"\npublish = false\n\n[workspace]\n\n[dependencies]\n'
                f'{json.dumps(src.name)} = {{ version = {json.dumps("=" + src.version)}, '
                'default-features = false }\n')
            run_client(["cargo", "fetch", "--manifest-path", str(root / "Cargo.toml")],
                       root, self.client_timeout)
        found = sorted((cargo_home() / "registry" / "cache").glob(f"*/{src.archive}"),
                       key=lambda p: p.stat().st_mtime, reverse=True)
        if not found:
            raise FetchError(f"cargo fetch left no {src.archive} in {cargo_home()}/registry/cache")
        shutil.copyfile(found[0], part)
        return part.stat().st_size

    def fetch_npm(self, src: Source, part: Path) -> int:
        # npm names a scoped package's file SCOPE-NAME-VERSION.tgz
        expected = src.archive
        if src.name.startswith("@") and "/" in src.name:
            expected = f"{src.name[1:].split('/', 1)[0]}-{src.archive}"
        with tempfile.TemporaryDirectory(prefix="corpus-npm-") as tmp:
            run_client(["npm", "pack", f"{src.name}@{src.version}", "--pack-destination", tmp,
                        "--ignore-scripts", "--loglevel", "error"], Path(tmp),
                       self.client_timeout)
            packed = Path(tmp) / expected
            if not packed.is_file():
                wrote = ", ".join(sorted(p.name for p in Path(tmp).iterdir())) or "nothing"
                raise FetchError(f"npm pack wrote {wrote}, not {expected}")
            shutil.move(packed, part)
        return part.stat().st_size

    def fetch_pypi(self, src: Source, part: Path) -> int:
        pip: PipIndex = self.configured("pypi", lambda: ask_pip(self.client_timeout))
        project = re.sub(r"[-_.]+", "-", src.name).lower()  # PEP 503
        errors = []
        for index in pip.indexes:
            page = f"{index.rstrip('/')}/{project}/"
            req = urllib.request.Request(page, headers={"User-Agent": USER_AGENT,
                                                        "Accept": "text/html"})
            try:
                with pip.opener.open(req, timeout=self.timeout) as resp:
                    parser = LinkParser()
                    parser.feed(resp.read().decode("utf-8", errors="replace"))
                    base = resp.geturl()
            except urllib.error.HTTPError as exc:
                errors.append(f"index page {page}: HTTP {exc.code}")
                continue
            links = [urllib.parse.urljoin(base, h) for h in parser.hrefs]
            match = [u for u in links if link_file_name(u) == src.archive]
            if not match:
                errors.append(f"{src.archive} not on {page}")
                continue
            return fetch_url(urllib.parse.urldefrag(match[0]).url, part, self.timeout, pip.opener)
        raise FetchError("; ".join(errors) or "pip has no index")

    def fetch_debian(self, src: Source, part: Path) -> int:
        mirrors: list[str] = self.configured("debian", apt_mirrors)
        if not mirrors:
            raise FetchError("apt is configured with no http(s) mirror")
        path = debian_pool_path(src.package, src.archive)
        errors = []
        for mirror in mirrors:
            try:
                return fetch_url(f"{mirror}/{path}", part, self.timeout)
            except urllib.error.HTTPError as exc:
                errors.append(f"{mirror}: HTTP {exc.code}")
        raise FetchError(f"{path}: " + "; ".join(errors))


@dataclass
class Download:
    path: Path | None = None
    sha256: str = ""
    error: str = ""
    fetched_bytes: int = 0
    reused: bool = False


def download(registries: Registries, src: Source, dest: Path, expected: str,
             retries: int) -> Download:
    """Fetch src's archive to dest (or reuse dest) and check it against expected."""
    if dest.exists():
        digest = sha256_file(dest)
        if not expected or digest == expected:
            return Download(dest, digest, reused=True)
        dest.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    error = ""
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(5 * attempt)
        try:
            size = registries.fetch(src, part)
            digest = sha256_file(part)
            if expected and digest != expected:
                part.unlink(missing_ok=True)
                return Download(None, digest, f"sha256 mismatch: expected {expected}, got {digest}",
                                fetched_bytes=size)
            os.replace(part, dest)
            return Download(dest, digest, fetched_bytes=size)
        except FetchError as exc:
            error = str(exc)
        except urllib.error.HTTPError as exc:
            error = f"HTTP {exc.code}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            error = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        part.unlink(missing_ok=True)
    return Download(None, "", f"download: {error} (after {retries + 1} tries)")


# --------------------------------------------------------------- extraction

class ArchiveError(Exception):
    pass


# What a damaged archive can raise while it is read (lzma and zlib errors are
# not OSErrors).
ARCHIVE_ERRORS = (ArchiveError, zipfile.BadZipFile, tarfile.TarError, EOFError, OSError,
                  lzma.LZMAError, zlib.error)


@dataclass
class Member:
    path: PurePosixPath
    size: int
    read: Callable[[], bytes]


def archive_kind(path: Path) -> str:
    with path.open("rb") as fh:
        head = fh.read(8)
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "tar.xz"
    if head.startswith(b"BZh"):
        return "tar.bz2"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    raise ArchiveError("unknown archive kind")


def safe_member_path(name: str) -> PurePosixPath | None:
    """The member's relative path, or None when it is absolute or climbs out."""
    name = name.replace("\\", "/")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        return None
    return PurePosixPath(*parts)


def checked_member(name: str, size: int, read, stats: Counter) -> Member | None:
    """The member `name` of an archive, or None (counted) when its path is
    unsafe to extract."""
    rel = safe_member_path(name)
    if rel is None:
        stats["refused: unsafe path"] += 1
        return None
    return Member(rel, size, read)


def iter_members(path: Path, stats: Counter):
    """Yield the regular files of an archive in archive order."""
    kind = archive_kind(path)
    if kind == "zip":
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                mode = info.external_attr >> 16
                if mode and not stat.S_ISREG(mode):
                    stats["skip: link or special"] += 1
                    continue
                member = checked_member(info.filename, info.file_size, lambda info=info: zf.read(info), stats)
                if member is not None:
                    yield member
        return
    try:
        with tarfile.open(path, mode="r|*") as tf:
            for info in tf:
                if info.isdir():
                    continue
                if not info.isfile():
                    stats["skip: link or special"] += 1
                    continue
                member = checked_member(info.name, info.size, lambda info=info: tf.extractfile(info).read(), stats)
                if member is not None:
                    yield member
    except ARCHIVE_ERRORS as exc:
        raise ArchiveError(f"{kind}: {exc}") from exc


def file_language(rel: PurePosixPath, row_language: str) -> str | None:
    name = rel.name.lower()
    if name.endswith(".d.ts"):
        return None
    ext = os.path.splitext(name)[1]
    if ext == ".h":
        return row_language if row_language in ("c", "cpp") else "c"
    return EXT_LANGUAGE.get(ext)


def skip_reason(data: bytes, rel: PurePosixPath, language: str) -> str | None:
    if b"\x00" in data:
        return "skip: NUL byte"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "skip: not UTF-8"
    if language in ("javascript", "typescript"):
        if MINIFIED_RE.search(rel.name):
            return "skip: minified"
        if any(len(line) > MAX_JS_LINE for line in text.splitlines()):
            return "skip: minified (long line)"
    head = "\n".join(text.splitlines()[:5])
    if GENERATED_RE.search(head):
        return "skip: generated"
    return None


class Extractor:
    """Writes the kept files of each archive and remembers content hashes."""

    def __init__(self, out: Path) -> None:
        self.out = out.resolve()
        self.seen: set[str] = set()
        self.stats: Counter = Counter()
        self.lang_files: Counter = Counter()
        self.lang_bytes: Counter = Counter()
        self.lang_packages: dict[str, set[int]] = defaultdict(set)

    def clear(self, src: Source) -> None:
        for lang in LANGUAGES:
            shutil.rmtree(self.out / lang / src.folder, ignore_errors=True)

    def select(self, rel: PurePosixPath, subdir: str | None) -> PurePosixPath | None:
        """For a SOURCE/DIR row, the path if it lies under DIR (root or one level down)."""
        if subdir is None:
            return rel
        parts = rel.parts
        if len(parts) > 1 and parts[0] == subdir:
            return rel
        if len(parts) > 2 and parts[1] == subdir:
            return rel
        return None

    def extract(self, src: Source, archive: Path) -> None:
        """Write the kept files of one row; on failure leave nothing of it behind."""
        self.clear(src)
        stats: Counter = Counter()
        files: Counter = Counter()
        sizes: Counter = Counter()
        added: set[str] = set()
        try:
            self._extract(src, archive, stats, files, sizes, added)
        except BaseException:
            self.clear(src)
            self.seen -= added
            raise
        self.stats.update(stats)
        self.lang_files.update(files)
        self.lang_bytes.update(sizes)
        for lang in files:
            self.lang_packages[lang].add(src.index)
        src.files = sum(files.values())
        src.bytes = sum(sizes.values())

    def _extract(self, src: Source, archive: Path, stats: Counter, files: Counter, sizes: Counter, added: set[str]) -> None:
        found_subdir = src.subdir is None
        for m in iter_members(archive, stats):
            rel = self.select(m.path, src.subdir)
            if rel is None:
                continue
            found_subdir = True
            lang = file_language(rel, src.language)
            if lang is None:
                continue
            dirs = [d.lower() for d in rel.parts[:-1]]
            if any(d in SKIP_DIRS for d in dirs):
                stats["skip: excluded folder"] += 1
                continue
            if m.size > MAX_FILE_BYTES:
                stats["skip: over 512 KiB"] += 1
                continue
            data = m.read()
            reason = skip_reason(data, rel, lang)
            if reason:
                stats[reason] += 1
                continue
            digest = hashlib.sha256(data).hexdigest()
            if digest in self.seen:
                stats["skip: duplicate content"] += 1
                continue
            target = self.out / lang / src.folder / rel
            if self.out not in target.parents:  # cannot happen after safe_member_path
                stats["refused: unsafe path"] += 1
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            except OSError:
                stats["skip: cannot write"] += 1
                continue
            self.seen.add(digest)
            added.add(digest)
            stats["kept"] += 1
            files[lang] += 1
            sizes[lang] += len(data)
        if not found_subdir:
            raise ArchiveError(f"folder {src.subdir}/ not in archive")


# ---------------------------------------------------------------------- run

MANIFEST_COLUMNS = ["registry", "name", "version", "language", "archive", "sha256",
                    "files", "bytes", "status"]


def log(msg: str) -> None:
    print(msg, flush=True)


def clean(text: str) -> str:
    return re.sub(r"[\t\r\n]+", " ", text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", type=Path, help="source list TSV")
    ap.add_argument("--cache", type=Path, default=Path(DEFAULT_CACHE))
    ap.add_argument("--out", type=Path, default=Path(DEFAULT_OUT))
    ap.add_argument("--manifest", type=Path, default=Path(DEFAULT_MANIFEST))
    ap.add_argument("--only-language", action="append", choices=LANGUAGES, metavar="LANG",
                    help="process only rows of this language (repeatable)")
    ap.add_argument("--verified-list", type=Path,
                    help="write the rows that succeeded, with their sha256, to this TSV")
    ap.add_argument("--exclude-list", type=Path, default=None,
                    help="further repositories to keep out (lines owner/repo, # comments)")
    ap.add_argument("--exclude-repos-json", type=Path, default=DEFAULT_EXCLUDE_REPOS_JSON)
    ap.add_argument("--allow", action="append", default=[], metavar="REGISTRY:NAME",
                    help="a row checked by hand not to be an excluded project, although "
                         "its name matches one (repeatable)")
    ap.add_argument("--jobs", type=int, default=DOWNLOAD_JOBS, help="parallel downloads")
    ap.add_argument("--retries", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds per network read; a registry client's run may take "
                         f"{CLIENT_TIMEOUT_FACTOR} times as long")
    args = ap.parse_args()

    started = time.monotonic()
    columns, sources = read_sources(args.sources)
    if args.only_language:
        sources = [s for s in sources if s.language in args.only_language]
    for path in (args.exclude_list, args.exclude_repos_json):
        if path is not None and not path.is_file():
            sys.exit(f"exclusion list not found: {path}")
    exclusions = Exclusions.load(args.exclude_list, args.exclude_repos_json)
    log(f"{len(sources)} sources from {args.sources}; "
        f"{len(exclusions.repos)} excluded repositories")

    allowed = {tuple(a.split(":", 1)) for a in args.allow}
    todo: list[Source] = []
    for src in sources:
        hit = exclusions.match(src.name)
        if hit and (src.registry, src.name) in allowed:
            log(f"ALLOWED {src.label}: matches {hit}, allowed by --allow")
        elif hit:
            src.status = f"excluded: {hit}"
            log(f"EXCLUDED {src.label}: name matches excluded repository {hit}")
        elif src.language not in LANGUAGES:
            src.status = f"failed: unknown language {src.language}"
        elif src.registry not in REGISTRIES:
            src.status = f"failed: unknown registry {src.registry}"
        else:
            todo.append(src)

    extractor = Extractor(args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    args.manifest.parent.mkdir(parents=True, exist_ok=True)
    fetched = 0
    reused = 0
    registries = Registries(args.timeout)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures: dict[Path, concurrent.futures.Future] = {}
        for src in todo:  # one download per archive, even when rows share it
            dest = cache_path(args.cache, src)
            if dest not in futures:
                futures[dest] = pool.submit(download, registries, src, dest,
                                            src.expected_sha256, args.retries)
        counted: set[Path] = set()
        for n, src in enumerate(todo, 1):
            dest = cache_path(args.cache, src)
            dl: Download = futures[dest].result()
            if dest not in counted:
                counted.add(dest)
                fetched += dl.fetched_bytes
                reused += dl.reused
            src.sha256 = dl.sha256
            if dl.path is None:
                src.status = f"failed: {dl.error}"
            elif src.expected_sha256 and dl.sha256 != src.expected_sha256:
                src.status = f"failed: sha256 mismatch: expected {src.expected_sha256}, got {dl.sha256}"
            else:
                try:
                    extractor.extract(src, dl.path)
                    src.status = "ok"
                except ARCHIVE_ERRORS as exc:
                    src.status = f"failed: extract: {exc}"
            note = f"{src.files} files, {src.bytes / 1e6:.2f} MB" if src.status == "ok" else src.status
            log(f"[{n}/{len(todo)}] {src.label}: {note}")

    with args.manifest.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE,
                       escapechar="\\")
        w.writerow(MANIFEST_COLUMNS)
        for s in sources:
            w.writerow([s.registry, s.name, s.version, s.language, s.archive, s.sha256,
                        s.files, s.bytes, clean(s.status)])

    if args.verified_list:
        out_cols = columns + ([] if "sha256" in columns else ["sha256"])
        with args.verified_list.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE,
                           escapechar="\\")
            w.writerow(out_cols)
            for s in sources:
                if s.status == "ok":
                    row = dict(s.row, sha256=s.sha256)
                    w.writerow([row.get(c) or "" for c in out_cols])

    # summary
    ok = Counter(s.language for s in sources if s.status == "ok")
    log("")
    log(f"{'language':<11} {'rows ok':>7} {'pkgs w/ files':>13} {'files':>8} {'MB':>9}")
    for lang in LANGUAGES:
        log(f"{lang:<11} {ok[lang]:>7} {len(extractor.lang_packages[lang]):>13} "
            f"{extractor.lang_files[lang]:>8} {extractor.lang_bytes[lang] / 1e6:>9.2f}")
    log(f"{'total':<11} {sum(ok.values()):>7} {'':>13} {sum(extractor.lang_files.values()):>8} "
        f"{sum(extractor.lang_bytes.values()) / 1e6:>9.2f}")
    log("(rows ok: rows of that language that succeeded; files and MB: files of that "
        "language from any row)")
    log("")
    for reason, count in sorted(extractor.stats.items()):
        log(f"  {reason}: {count}")
    failed = [s for s in sources if s.status.startswith("failed")]
    excluded = [s for s in sources if s.status.startswith("excluded")]
    empty = [s for s in sources if s.status == "ok" and s.files == 0]
    log(f"\nfailed: {len(failed)}")
    for s in failed:
        log(f"  {s.label}: {s.status}")
    log(f"excluded: {len(excluded)}")
    for s in excluded:
        log(f"  {s.label}: {s.status}")
    if empty:
        log(f"ok but no file kept: {len(empty)}")
        for s in empty:
            log(f"  {s.label}")
    log(f"\ndownloaded {fetched / 1e6:.1f} MB ({reused} archives reused from the cache) "
        f"in {time.monotonic() - started:.0f} s")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
