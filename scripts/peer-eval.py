#!/usr/bin/env python3
"""Score another search tool on a labelled benchmark with the metric of `maguyva eval`.

The tool runs as one process per repository that speaks JSON lines:
it prints `{"ready": true, ...}` once it has indexed ROOT, then answers each
request line `{"query": ..., "k": ...}` with one line
`{"results": [{"path": ..., "start_line": ..., "end_line": ..., "score": ...}, ...]}`.

    python3 scripts/peer-eval.py --bench DIR --checkouts DIR \
        --serve "PYTHON tool.py serve {root}" [--repo NAME ...] [--json OUT]

The metric is the one `maguyva eval` reports (doc/evaluation.md): results
reduced to distinct files, top 10; NDCG@10, MRR@10 and Recall@10 per query,
averaged within a repository, then over repositories (overall, per category,
per language).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

K = 10


def path_matches(result: str, label: str) -> bool:
    def ends(a: str, b: str) -> bool:
        return len(a) > len(b) and a.endswith(b) and a[len(a) - len(b) - 1] == "/"

    return result == label or ends(result, label) or ends(label, result)


def score(results: list[str], labels: list[str], k: int = K) -> tuple[float, float, float]:
    if not labels:
        return 0.0, 0.0, 0.0
    counted = [False] * len(labels)
    dcg, first = 0.0, None
    for i, r in enumerate(results[:k]):
        gain = False
        for j, label in enumerate(labels):
            if not counted[j] and path_matches(r, label):
                counted[j] = gain = True
        if gain:
            dcg += 1.0 / math.log2(i + 2)
            first = first or i + 1
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(labels), k)))
    return dcg / ideal, (1.0 / first if first else 0.0), sum(counted) / len(labels)


def labels_of(task: dict) -> list[str]:
    out = []
    for label in task.get("relevant", []) + task.get("secondary", []):
        out.append(label["path"] if isinstance(label, dict) else label)
    return out


def root_prefix(spec: dict) -> str:
    root = spec.get("benchmark_root") or "."
    return "" if root in (".", "") else root.rstrip("/")


def distinct(paths: list[str]) -> list[str]:
    seen, out = set(), []
    for p in paths:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, required=True)
    ap.add_argument("--checkouts", type=Path, required=True)
    ap.add_argument("--serve", required=True, help="command template; {root} is the folder to index")
    ap.add_argument("--repo", action="append", help="only these repositories")
    ap.add_argument("--json", type=Path, help="write every query's scores here")
    args = ap.parse_args()

    specs = json.loads((args.bench / "repos.json").read_text())
    per_repo: dict[str, dict] = {}
    details = []
    for spec in specs:
        name = spec["name"]
        ann = args.bench / "annotations" / f"{name}.json"
        if not ann.exists() or (args.repo and name not in args.repo):
            continue
        tasks = json.loads(ann.read_text())
        prefix = root_prefix(spec)
        root = args.checkouts / name / prefix if prefix else args.checkouts / name
        cmd = shlex.split(args.serve.replace("{root}", str(root)))
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        line = proc.stdout.readline()
        index_ms = (time.perf_counter() - t0) * 1000
        try:
            ready = json.loads(line)
        except json.JSONDecodeError:
            # The tool cannot search this folder (it may support none of its
            # files): every query gets no result, and the report says so.
            err = proc.stderr.read().strip().splitlines()
            proc.wait()
            ready = None
            print(f"{name}: the tool did not start: {err[-1] if err else 'no output'}", file=sys.stderr)
        scores = []
        latencies = []
        for task in tasks:
            t = time.perf_counter()
            if ready is None:
                reply = {"results": []}
            else:
                proc.stdin.write(json.dumps({"query": task["query"], "k": K}) + "\n")
                proc.stdin.flush()
                reply = json.loads(proc.stdout.readline())
                latencies.append((time.perf_counter() - t) * 1000)
            # Result paths are relative to the searched folder; labels to the repository.
            paths = [f"{prefix}/{r['path']}" if prefix else r["path"] for r in reply["results"]]
            s = score(distinct(paths), labels_of(task))
            scores.append((task.get("category", "semantic"), s))
            details.append({"repo": name, "query": task["query"], "category": task.get("category"),
                            "ndcg": s[0], "mrr": s[1], "recall": s[2], "results": distinct(paths)[:K]})
        if ready is not None:
            proc.stdin.close()
            proc.wait()
        per_repo[name] = {"language": spec["language"], "scores": scores, "index_ms": index_ms,
                          "latencies": latencies, "ready": ready}
        r = [s for _, s in scores]
        print(f"{name:24} ndcg {mean([x[0] for x in r]):.3f}  mrr {mean([x[1] for x in r]):.3f}  "
              f"recall {mean([x[2] for x in r]):.3f}  index {index_ms:.0f} ms"
              + ("" if ready is not None else "  (tool failed: no results)"), flush=True)

    def table(title: str, key) -> None:
        groups: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
        for name, r in per_repo.items():
            for cat, s in r["scores"]:
                groups[key(r, cat)][name].append(s)
        print(title)
        print(f"  {'':14} {'ndcg':>6} {'mrr':>6} {'recall':>6} {'n':>5}")
        for g in sorted(groups):
            repos = groups[g]
            n = sum(len(v) for v in repos.values())
            m = [mean([mean([s[i] for s in v]) for v in repos.values()]) for i in range(3)]
            print(f"  {g:14} {m[0]:6.3f} {m[1]:6.3f} {m[2]:6.3f} {n:5}")

    table("overall (mean over repositories)", lambda r, c: "all")
    table("by category", lambda r, c: c or "semantic")
    table("by language", lambda r, c: r["language"])
    lat = sorted(x for r in per_repo.values() for x in r["latencies"])
    if lat:
        print(f"latency: p50 {lat[len(lat) // 2]:.2f} ms, p95 {lat[int(len(lat) * 0.95)]:.2f} ms")
    if args.json:
        args.json.write_text(json.dumps(details, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
