#!/usr/bin/env python3
"""Checks exact-string search on real repositories.

For each repository of a benchmark, samples lines from its indexed files,
cuts a literal out of each, runs `maguyva search '"LITERAL"' --path ROOT --json`
and checks that the first result is a file that contains the literal.

    python3 scripts/literal-check.py --bin target/release/maguyva \
        --bench BENCH --checkouts CHECKOUTS [--per-repo 5]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path


def candidate_literals(root: Path, rng: random.Random, n: int) -> list[str]:
    files = [p for p in root.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)]
    rng.shuffle(files)
    out: list[str] = []
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8192] or len(data) > 1 << 20:
            continue
        lines = [l.strip() for l in data.decode("utf-8", "replace").splitlines()]
        lines = [l for l in lines if 12 <= len(l) <= 120 and '"' not in l and "\ufffd" not in l]
        if not lines:
            continue
        line = rng.choice(lines)
        start = rng.randrange(0, max(1, len(line) - 12))
        out.append(line[start : start + rng.randrange(8, 40)].strip())
        if len(out) == n:
            break
    return [l for l in out if len(l) >= 4]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--bench", type=Path, required=True)
    ap.add_argument("--checkouts", type=Path, required=True)
    ap.add_argument("--per-repo", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    failures = 0
    total = 0
    for repo in json.loads((args.bench / "repos.json").read_text()):
        root = args.checkouts / repo["name"] / (repo.get("benchmark_root") or ".")
        if not root.is_dir():
            print(f"{repo['name']:14} missing checkout", file=sys.stderr)
            continue
        ok = 0
        literals = candidate_literals(root, rng, args.per_repo)
        for lit in literals:
            total += 1
            proc = subprocess.run(
                [args.bin, "search", f'"{lit}"', "--path", str(root), "--json", "-k", "3",
                 "--index-dir", str(args.checkouts / ".maguyva-literal" / repo["name"])],
                capture_output=True, text=True,
            )
            if proc.returncode not in (0, 1):
                print(f"  error for {lit!r}: {proc.stderr.strip()}")
                failures += 1
                continue
            results = json.loads(proc.stdout)["results"]
            first = results[0]["path"] if results else None
            if first and lit in (root / first).read_text(encoding="utf-8", errors="replace"):
                ok += 1
            else:
                failures += 1
                print(f"  {repo['name']}: {lit!r} -> {first}")
        print(f"{repo['name']:14} {ok}/{len(literals)} literals found first")
    print(f"total: {total - failures}/{total}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
