#!/usr/bin/env python3
"""Check out the training benchmark's repositories from fetched snapshots.

Each repository of repos.json is a public GitHub repository pinned at a
revision. Fetch a bare snapshot of each (`fetch github:OWNER/NAME` leaves one
at MIRRORS/OWNER+NAME/repo), then this script writes the tree of the pinned
revision to OUT/NAME/ (no .git). Nothing of the repositories is committed
here: only their names, revisions and the queries written about them.

    python3 checkout.py --mirrors MIRRORS --out DIR --list   # which snapshots are missing
    python3 checkout.py --mirrors MIRRORS --out DIR          # write the checkouts

A snapshot that lacks the pinned revision is reported and skipped (the
queries were written against that revision, so another one would not do).
Files a snapshot lacks (very large files) are skipped and counted.
OUT/checkouts.json records what was written.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def git(gitdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], capture_output=True)


def owner_name(url: str) -> tuple[str, str]:
    parts = url.rstrip("/").removesuffix(".git").split("/")
    return parts[-2], parts[-1]


def write_tree(gitdir: Path, rev: str, dest: Path) -> int:
    """Writes the tree of `rev` into `dest`; returns how many blobs were missing."""
    listing = git(gitdir, "ls-tree", "-r", "-z", "--full-tree", rev)
    if listing.returncode != 0:
        raise RuntimeError(listing.stderr.decode(errors="replace"))
    missing = 0
    for entry in listing.stdout.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, obj = meta.split()
        if kind != b"blob":
            continue  # submodules are not part of a snapshot
        target = dest / path.decode("utf-8", errors="surrogateescape")
        target.parent.mkdir(parents=True, exist_ok=True)
        blob = git(gitdir, "cat-file", "blob", obj.decode())
        if blob.returncode != 0:
            missing += 1
            continue
        if mode == b"120000":
            target.unlink(missing_ok=True)
            target.symlink_to(blob.stdout.decode("utf-8", errors="surrogateescape"))
        else:
            target.write_bytes(blob.stdout)
            if mode == b"100755":
                target.chmod(0o755)
    return missing


def archive_tree(gitdir: Path, rev: str, dest: Path) -> bool:
    """The fast path: `git archive`, which fails when a blob is missing."""
    proc = subprocess.run(["git", f"--git-dir={gitdir}", "archive", "--format=tar", rev], capture_output=True)
    if proc.returncode != 0:
        return False
    tmp = dest.with_suffix(".tar")
    tmp.write_bytes(proc.stdout)
    try:
        with tarfile.open(tmp) as tar:
            tar.extractall(dest, filter="tar")
    finally:
        tmp.unlink(missing_ok=True)
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos-json", type=Path, default=HERE / "repos.json")
    ap.add_argument("--mirrors", type=Path, required=True, help="folder holding OWNER+NAME/repo snapshots")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--list", action="store_true", help="only list the snapshots to fetch")
    ap.add_argument("--force", action="store_true", help="rewrite checkouts that exist")
    args = ap.parse_args()

    repos = json.loads(args.repos_json.read_text())
    to_fetch, unpinned, status = [], [], {}
    for repo in repos:
        owner, name = owner_name(repo["url"])
        gitdir = args.mirrors / f"{owner}+{name}" / "repo"
        if (gitdir / ".git").is_dir():
            gitdir = gitdir / ".git"  # some snapshots arrive as a repository with a work-tree folder
        if not gitdir.is_dir():
            to_fetch.append(f"github:{owner}/{name}")
            continue
        if args.list:
            continue
        rev = repo["revision"]
        if git(gitdir, "cat-file", "-e", f"{rev}^{{commit}}").returncode != 0:
            unpinned.append(repo["name"])
            continue
        dest = args.out / repo["name"]
        if dest.exists() and not args.force:
            status[repo["name"]] = {"revision": rev, "missing_files": None}
            continue
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        missing = 0 if archive_tree(gitdir, rev, dest) else write_tree(gitdir, rev, dest)
        status[repo["name"]] = {"revision": rev, "missing_files": missing}
        note = f", {missing} files absent from the snapshot" if missing else ""
        print(f"{repo['name']:24} {rev[:12]}{note}")

    if to_fetch:
        print("fetch these first:", *to_fetch, sep="\n  ")
    if unpinned:
        print("these snapshots lack the pinned revision (fetch again later):", *unpinned, sep="\n  ")
    if not args.list:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "checkouts.json").write_text(json.dumps(status, indent=2) + "\n")
    return 1 if unpinned else 0


if __name__ == "__main__":
    sys.exit(main())
