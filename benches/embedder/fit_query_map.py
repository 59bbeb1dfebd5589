#!/usr/bin/env python3
"""Fit the code model's query map (and a map of its rows) on labelled questions.

The code model's rows and query map are trained on pairs mined from code
(train.py): a doc comment and its item, a name and its body, a path and its
definitions. Those ask otherwise than people do. This script fits again,
on a labelled benchmark's questions, the query map (the square matrix a
query's sum of rows goes through, `CodeModel::with_query_map`) and, with
`--fit-rows`, a square matrix D every row is multiplied by
(`CodeModel::with_row_map`), ranking files as the semantic modality does
with the default `joined` embedder. The rows themselves and the corpus
model are not touched.

Input: a folder written by `bench_documents` (benches/src/bin), which holds
for each repository the vectors the joined embedder is made of and the
files each question is labelled with. A fragment's vector is its
corpus-model vector joined with its code-model vector (times D) cut to the
repository's code dimensions, then taken toward its file's direction
(FILE_CONTEXT_WEIGHT); a question's code-model sum goes through the map, is
cut, and is joined the same way. A file scores its best fragment's cosine.
The loss is the listwise softmax cross-entropy of a question's labelled
files among all the repository's files (temperature `--tau`), minimised
with Adam from the model's own map and the identity.

    # cross-validated by repository (folds of sorted names, i % 5)
    python3 fit_query_map.py --data DIR --map MODEL/query_map.f32 --folds 5 --fit-rows
    # fit on every repository and write the maps
    python3 fit_query_map.py --data DIR --map MODEL/query_map.f32 --fit-rows --out map.f32

`--out map.f32` writes the query map to go with the new rows (D⁻¹ times
the fitted map, since the packed rows are already times D), `map.f32.rows`
(D, with `--fit-rows`) and `map.f32.json` (the settings and figures); then
`pack_code_model MODEL OUT --row-map map.f32.rows --query-map map.f32`.
Every map is `dim * dim` little-endian f32, row after row. Deterministic for
a given input, seed and machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

# As in maguyva-semantic: the weight of the code model's half of a joined
# vector, and of a fragment's file direction.
CODE_MODEL_WEIGHT = 1.0
FILE_CONTEXT_WEIGHT = 1.0


class Repo:
    """One repository's fragments (fragments of a file together) and questions."""

    def __init__(self, meta_path: Path):
        meta = json.loads(meta_path.read_text())
        self.name = meta["repo"]
        dc, dk = meta["corpus_dim"], meta["code_dim"]
        self.cd = meta["code_dims_joined"]
        frag_files = np.asarray(meta["fragment_files"], dtype=np.int64)
        n, m = len(frag_files), len(meta["queries"])
        raw = np.fromfile(meta_path.with_suffix(".f32"), dtype="<f4")
        sizes = [n * dc, n * dk, m * dc, m * dk]
        if raw.size != sum(sizes):
            raise SystemExit(f"{meta_path}: {raw.size} values, expected {sum(sizes)}")
        parts = np.split(raw, np.cumsum(sizes)[:-1])
        order = np.argsort(frag_files, kind="stable")
        self.corpus = parts[0].reshape(n, dc)[order]
        self.code = parts[1].reshape(n, dk)[order]
        self.query_corpus, self.query_code = parts[2].reshape(m, dc), parts[3].reshape(m, dk)
        files, self.group = np.unique(frag_files[order], return_inverse=True)
        self.files = len(files)
        group_of_file = {int(f): g for g, f in enumerate(files)}
        self.labels = np.zeros((m, self.files), dtype=np.float32)
        for i, q in enumerate(meta["queries"]):
            for f in q["labels"]:
                if f in group_of_file:
                    self.labels[i, group_of_file[f]] = 1.0
        self.answerable = (self.labels.sum(axis=1) > 0).astype(np.float32)
        self.label_counts = np.asarray([len(q["labels"]) for q in meta["queries"]])
        self.categories = [q["category"] for q in meta["queries"]]

    def arrays(self):
        return (self.corpus, self.code, self.query_corpus, self.query_code, self.group)


def unit(x):
    # The small constant keeps the gradient of a zero vector finite.
    return x / jnp.sqrt(jnp.sum(x * x, axis=-1, keepdims=True) + 1e-24)


@partial(jax.jit, static_argnums=(0, 1))
def file_scores(cd, files, qmap, rowmap, corpus, code, query_corpus, query_code, group):
    """Each question's score of each file: its best fragment's cosine."""
    code_part = unit((code @ rowmap)[:, :cd]) * CODE_MODEL_WEIGHT
    joined = unit(jnp.concatenate([corpus, code_part], axis=1))
    direction = unit(jax.ops.segment_sum(joined, group, num_segments=files))
    docs = unit(joined + FILE_CONTEXT_WEIGHT * direction[group])
    asked = unit((query_code @ qmap)[:, :cd]) * CODE_MODEL_WEIGHT
    queries = unit(jnp.concatenate([query_corpus, asked], axis=1))
    scores = queries @ docs.T
    return jax.ops.segment_max(scores.T, group, num_segments=files).T


@partial(jax.jit, static_argnums=(0, 1))
def loss(cd, files, qmap, rowmap, corpus, code, query_corpus, query_code, group, labels, answerable, tau):
    logits = file_scores(cd, files, qmap, rowmap, corpus, code, query_corpus, query_code, group) / tau
    everything = jax.nn.logsumexp(logits, axis=1)
    labelled = jax.nn.logsumexp(jnp.where(labels > 0, logits, -1e9), axis=1)
    return jnp.sum((everything - labelled) * answerable)


gradient = jax.jit(jax.grad(loss, argnums=(2, 3)), static_argnums=(0, 1))


def ndcg(repo: Repo, qmap, rowmap) -> list[float]:
    """NDCG@10 of each question's file ranking."""
    scores = np.asarray(file_scores(repo.cd, repo.files, qmap, rowmap, *repo.arrays()))
    discount = 1.0 / np.log2(np.arange(2, 12))
    out = []
    for i, row in enumerate(scores):
        top = np.argsort(-row, kind="stable")[:10]
        ideal = discount[: min(repo.label_counts[i], 10)].sum()
        out.append(float(repo.labels[i, top] @ discount[: len(top)] / ideal) if ideal else 0.0)
    return out


def fit(repos, qmap0, args):
    """Adam from the model's map and the identity; a step per `--batch`
    questions, repositories in a seeded order."""
    rng = np.random.default_rng(args.seed)
    dim = qmap0.shape[0]
    params = [jnp.asarray(qmap0), jnp.eye(dim, dtype=jnp.float32)]
    rates = [args.lr, args.lr_rows if args.fit_rows else 0.0]
    m1 = [jnp.zeros_like(p) for p in params]
    m2 = [jnp.zeros_like(p) for p in params]
    t = 0
    for _ in range(args.epochs):
        grads, seen = [jnp.zeros_like(p) for p in params], 0
        for r in rng.permutation(len(repos)):
            repo = repos[r]
            g = gradient(repo.cd, repo.files, *params, *repo.arrays(), repo.labels, repo.answerable, args.tau)
            grads = [a + b for a, b in zip(grads, g)]
            seen += len(repo.labels)
            if seen >= args.batch:
                t += 1
                for j, rate in enumerate(rates):
                    if rate == 0.0:
                        continue
                    g = grads[j] / seen
                    m1[j] = 0.9 * m1[j] + 0.1 * g
                    m2[j] = 0.999 * m2[j] + 0.001 * g * g
                    step = (m1[j] / (1 - 0.9**t)) / (jnp.sqrt(m2[j] / (1 - 0.999**t)) + 1e-8)
                    params[j] = params[j] - rate * step
                grads, seen = [jnp.zeros_like(p) for p in params], 0
    return np.asarray(params[0], dtype=np.float64), np.asarray(params[1], dtype=np.float64)


def write_maps(path: Path, qmap: np.ndarray, rowmap: np.ndarray, fit_rows: bool):
    """The query map to go with rows times `rowmap` (and that row map)."""
    if fit_rows:
        # Packed rows are times D, so a query's sum is too: D⁻¹ M undoes it.
        np.linalg.solve(rowmap, qmap).astype("<f4").tofile(path)
        rowmap.astype("<f4").tofile(f"{path}.rows")
    else:
        qmap.astype("<f4").tofile(path)


def summary(repos, results) -> str:
    """Mean over repositories (as `maguyva eval`), then per category over questions."""
    per_repo = [np.mean(r) for r in results]
    flat = [(c, x) for repo, r in zip(repos, results) for c, x in zip(repo.categories, r)]
    cats = sorted({c for c, _ in flat})
    parts = [f"all {np.mean(per_repo):.4f} over {len(repos)} repositories"]
    parts += [f"{c} {np.mean([x for k, x in flat if k == c]):.4f}" for c in cats]
    return ", ".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, required=True, help="folder written by bench_documents")
    ap.add_argument("--map", type=Path, required=True, help="the model's query_map.f32 to start from")
    ap.add_argument("--fit-rows", action="store_true", help="fit a map of the rows too")
    ap.add_argument("--folds", type=int, default=0, help="cross-validate by repository in this many folds")
    ap.add_argument("--fold-out", type=Path, help="with --folds, write each fold's maps (fold-K.f32) and held-out repositories (fold-K.json) here")
    ap.add_argument("--out", type=Path, help="write the maps fitted on every repository here")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--lr-rows", type=float, default=2e-4)
    ap.add_argument("--tau", type=float, default=0.1)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    started = time.time()
    repos = sorted((Repo(p) for p in args.data.glob("*.json")), key=lambda r: r.name)
    dim = repos[0].query_code.shape[1]
    qmap0 = np.fromfile(args.map, dtype="<f4").reshape(dim, dim)
    identity = np.eye(dim)
    note = {
        "script": "benches/embedder/fit_query_map.py",
        "repositories": len(repos),
        "questions": int(sum(len(r.labels) for r in repos)),
        "fit_rows": args.fit_rows,
        "epochs": args.epochs,
        "lr": args.lr,
        "lr_rows": args.lr_rows if args.fit_rows else None,
        "tau": args.tau,
        "batch": args.batch,
        "seed": args.seed,
    }
    start_meta = args.map.parent / "meta.json"
    if start_meta.is_file():
        note["from_crc"] = json.loads(start_meta.read_text()).get("crc")
    print(f"{len(repos)} repositories, {note['questions']} questions", file=sys.stderr)

    if args.folds:
        held_all, before, after = [], [], []
        for k in range(args.folds):
            held = [r for i, r in enumerate(repos) if i % args.folds == k]
            train = [r for i, r in enumerate(repos) if i % args.folds != k]
            qmap, rowmap = fit(train, qmap0, args)
            if args.fold_out:
                args.fold_out.mkdir(parents=True, exist_ok=True)
                write_maps(args.fold_out / f"fold-{k}.f32", qmap, rowmap, args.fit_rows)
                (args.fold_out / f"fold-{k}.json").write_text(json.dumps([r.name for r in held]) + "\n")
            for r in held:
                held_all.append(r)
                before.append(ndcg(r, qmap0, identity))
                after.append(ndcg(r, qmap, rowmap))
            print(f"fold {k}: {time.time() - started:.0f} s", file=sys.stderr)
        print(f"held out, model's map: {summary(held_all, before)}")
        print(f"held out, fitted:      {summary(held_all, after)}")
        note["cross_validated_ndcg10"] = {
            "folds": args.folds,
            "before": round(float(np.mean([np.mean(r) for r in before])), 4),
            "after": round(float(np.mean([np.mean(r) for r in after])), 4),
        }
    if args.out:
        qmap, rowmap = fit(repos, qmap0, args)
        write_maps(args.out, qmap, rowmap, args.fit_rows)
        fitted = [ndcg(r, qmap, rowmap) for r in repos]
        print(f"every repository, fitted (on the questions it fitted): {summary(repos, fitted)}")
        note["training_fit_ndcg10"] = round(float(np.mean([np.mean(r) for r in fitted])), 4)
        Path(f"{args.out}.json").write_text(json.dumps(note, indent=2) + "\n")
        print(f"wrote {args.out} and {args.out}.json")
    print(f"{time.time() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
