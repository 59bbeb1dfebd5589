#!/usr/bin/env python3
"""Writes a peer's answers to every query of a benchmark, for
`maguyva eval --tokens --peer-answers FILE`.

The peer is any program that serves one folder over JSON lines, as the
semble wrapper of the shared peers folder does (`PEER serve ROOT` prints one
ready line, then answers each `{"query", "k"}` line with `{"results": [{path,
start_line, end_line, ...}]}`). Output: one JSON line per query, `{repo,
query, results: [{path, start_line, end_line}]}`, paths relative to the
searched folder (the repository's benchmark_root).

    python3 scripts/peer-answers.py --bench BENCH --checkouts DIR --out semble.jsonl \\
        -- VENV/bin/python semble_bm25.py
"""

import argparse
import json
import os
import subprocess
import sys

K = 50


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="benchmark folder (repos.json, annotations/)")
    ap.add_argument("--checkouts", required=True, help="one checkout per repository name")
    ap.add_argument("--out", required=True, help="the JSON-lines file to write")
    ap.add_argument("--k", type=int, default=K)
    ap.add_argument("peer", nargs="+", help="the peer's command, before `serve ROOT`")
    args = ap.parse_args()
    repos = json.load(open(os.path.join(args.bench, "repos.json")))
    with open(args.out, "w") as out:
        for repo in repos:
            name = repo["name"]
            ann = os.path.join(args.bench, "annotations", name + ".json")
            root = os.path.join(args.checkouts, name, repo.get("benchmark_root") or ".")
            if not os.path.exists(ann) or not os.path.isdir(root):
                print(f"{name}: no annotations or checkout, left out", file=sys.stderr)
                continue
            tasks = json.load(open(ann))
            peer = subprocess.Popen(
                args.peer + ["serve", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
            first = peer.stdout.readline()
            if not first.strip() or not json.loads(first).get("ready"):
                # It could not index the folder (semble finds no file it
                # supports in some): every query gets its empty answer.
                peer.wait()
                print(f"{name}: the peer did not start; empty answers", file=sys.stderr)
                for task in tasks:
                    out.write(json.dumps({"repo": name, "query": task["query"], "results": []}) + "\n")
                continue
            for task in tasks:
                peer.stdin.write(json.dumps({"query": task["query"], "k": args.k}) + "\n")
                peer.stdin.flush()
                results = json.loads(peer.stdout.readline())["results"]
                located = []
                for r in results:
                    path = r["path"]
                    if os.path.isabs(path):
                        path = os.path.relpath(path, root)
                    located.append(
                        {"path": path, "start_line": r["start_line"], "end_line": r["end_line"]}
                    )
                line = {"repo": name, "query": task["query"], "results": located}
                out.write(json.dumps(line) + "\n")
            peer.stdin.close()
            peer.wait()
            print(f"{name}: {len(tasks)} queries", file=sys.stderr)


if __name__ == "__main__":
    main()
