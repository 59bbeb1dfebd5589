#!/usr/bin/env python3
"""Train the built-in code embedding model from mined pairs.

Input: a JSON-lines file of pairs written by `mine_pairs` (benches/src/bin),
each `{"lang", "kind", "file", "q", "d"}` where `q` (what asks for the code)
and `d` (the code) are the index analyzer's terms separated by spaces.

Model: one vector per term of a vocabulary fitted to the pairs (the terms
seen at least `--min-count` times, at most `--vocab`). A text's vector is
the sum of the rows of its first 512 terms, scaled to unit length: the
model2vec pooling, so that Maguyva's model2vec loader embeds exactly as
trained. A query's sum is first multiplied by a query map, a square
matrix learned with the rows (unless `--no-query-map`): the asking side
is worded otherwise than code, and one shared vector per term cannot
serve both as well. Rows start as random vectors scaled by the term's
inverse document frequency, the map as the identity; both are trained
contrastively (InfoNCE, both ways, the other pairs of a batch as
negatives, fixed temperature) with Adam, on the rows a batch touches.

Output: a model2vec-layout folder (`--out`): `model.safetensors`
(`embeddings`, f32, one row per term, and `query_map`, f32, dim x dim),
`tokenizer.json` (a WordLevel
vocabulary of the terms) and `config.json` (`normalize`, and `terms`: the
analyzer whose terms the vocabulary holds, which tells the loader to
tokenize with it). Deterministic for a given input, seed and thread count.

    python3 train.py --pairs pairs.jsonl --out model/ [--dim 256] [--epochs 3]
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp

# Terms embedded per text, as the loader does.
MAX_TERMS = 512
# The analyzer identity Maguyva's index uses (maguyva_core::Analyzer).
ANALYZER = "tokens+porter2"


def read_pairs(path: Path, kinds: set[str], limit: int | None, packages: list | None = None):
    """Yields each pair's two term lists, cut to `MAX_TERMS`; appends each
    pair's package (the first two parts of its file's path: language and
    archive) to `packages` if given."""
    n = 0
    with path.open() as f:
        for line in f:
            p = json.loads(line)
            if p["kind"] not in kinds:
                continue
            if packages is not None:
                packages.append("/".join(p["file"].split("/")[:2]))
            yield p["q"].split()[:MAX_TERMS], p["d"].split()[:MAX_TERMS]
            n += 1
            if limit and n >= limit:
                return


def fit_vocabulary(pairs, min_count: int, size: int):
    """The terms in at least `min_count` texts (at most `size`, the most
    frequent), sorted, and their inverse document frequencies."""
    df = Counter()
    n = 0
    for q, d in pairs:
        df.update(set(q))
        df.update(set(d))
        n += 2
    terms = [t for t, c in df.items() if c >= min_count]
    terms.sort(key=lambda t: (-df[t], t))
    terms = sorted(terms[:size])
    idf = np.array([math.log(1.0 + n / df[t]) for t in terms], dtype=np.float32)
    return terms, idf


def counts_matrices(pairs, index: dict[str, int]):
    """Rows of term counts of both sides (terms outside the vocabulary
    dropped)."""
    sides = [([0], [], []), ([0], [], [])]
    for texts in pairs:
        for (indptr, indices, data), t in zip(sides, texts):
            c = Counter(index[w] for w in t if w in index)
            cols = sorted(c)
            indices.extend(cols)
            data.extend(c[j] for j in cols)
            indptr.append(len(indices))
    return [
        sp.csr_matrix(
            (np.array(data, dtype=np.float32), np.array(indices, dtype=np.int64), np.array(indptr)),
            shape=(len(indptr) - 1, len(index)),
        )
        for indptr, indices, data in sides
    ]


def pooled(block: sp.csr_matrix, rows: np.ndarray):
    """Unit vectors of a batch: `block` (batch x touched) times `rows`."""
    return unit_rows(np.asarray(block @ rows))


def unit_rows(raw: np.ndarray):
    """`raw`'s rows scaled to unit length, and their lengths."""
    norm = np.linalg.norm(raw, axis=1, keepdims=True)
    norm = np.maximum(norm, 1e-9)
    return raw / norm, norm


def unit_grad(g: np.ndarray, unit: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """Gradient of the raw sum from that of its unit vector."""
    return (g - np.sum(g * unit, axis=1, keepdims=True) * unit) / norm


def infonce(q: np.ndarray, d: np.ndarray, temperature: float):
    """Symmetric InfoNCE loss of matched rows, and its gradients."""
    logits = (q @ d.T) / temperature
    b = logits.shape[0]

    def softmax(x):
        x = x - x.max(axis=1, keepdims=True)
        e = np.exp(x)
        return e / e.sum(axis=1, keepdims=True)

    p_rows, p_cols = softmax(logits), softmax(logits.T)
    eye = np.arange(b)
    loss = -(np.log(p_rows[eye, eye] + 1e-12).mean() + np.log(p_cols[eye, eye] + 1e-12).mean()) / 2
    g = p_rows.copy()
    g[eye, eye] -= 1
    gc = p_cols.copy()
    gc[eye, eye] -= 1
    g_logits = (g + gc.T) / (2 * b * temperature)
    return loss, g_logits @ d, g_logits.T @ q


def batch_blocks(qm: sp.csr_matrix, dm: sp.csr_matrix, idx: np.ndarray):
    """The batch's two count blocks restricted to the terms they touch."""
    qb, db = qm[idx], dm[idx]
    touched = np.union1d(qb.indices, db.indices)
    remap = lambda m: sp.csr_matrix(  # noqa: E731
        (m.data, np.searchsorted(touched, m.indices), m.indptr), shape=(m.shape[0], len(touched))
    )
    return touched, remap(qb), remap(db)


def epoch_batches(rng, train: np.ndarray, package_of: np.ndarray, batch: int, share: float):
    """One epoch's batches. With `share` > 0, that share of each batch is
    consecutive pairs of the training set ordered by package (in a random
    order of packages, shuffled within each), the rest drawn at random."""
    perm = rng.permutation(train)
    grouped = int(batch * share)
    if grouped == 0:
        for start in range(0, len(perm) - batch + 1, batch):
            yield perm[start:start + batch]
        return
    rank = rng.permutation(package_of.max() + 1)
    by_package = perm[np.argsort(rank[package_of[perm]], kind="stable")]
    n = len(perm) // batch
    chunks = [by_package[i * grouped:(i + 1) * grouped] for i in range(n)]
    rest = np.setdiff1d(perm, np.concatenate(chunks), assume_unique=True)
    rest = rng.permutation(rest)
    loose = batch - grouped
    for i in rng.permutation(n):
        yield np.concatenate([chunks[i], rest[i * loose:(i + 1) * loose]])


def recall_at_1(qm, dm, emb, sample: np.ndarray, qmap=None) -> float:
    """Share of held-out queries whose own code is the nearest of the sample
    (queries through the query map, if there is one)."""
    touched, qb, db = batch_blocks(qm, dm, sample)
    q, _ = pooled(qb, emb[touched] if qmap is None else emb[touched] @ qmap)
    d, _ = pooled(db, emb[touched])
    return float(np.mean(np.argmax(q @ d.T, axis=1) == np.arange(len(sample))))


def write_model(out: Path, terms: list[str], emb: np.ndarray, meta: dict, query_map: np.ndarray | None = None):
    out.mkdir(parents=True, exist_ok=True)
    data = np.ascontiguousarray(emb, dtype="<f4").tobytes()
    header = {
        "embeddings": {"dtype": "F32", "shape": list(emb.shape), "data_offsets": [0, len(data)]},
        "__metadata__": {k: str(v) for k, v in meta.items()},
    }
    if query_map is not None:
        extra = np.ascontiguousarray(query_map, dtype="<f4").tobytes()
        header["query_map"] = {"dtype": "F32", "shape": list(query_map.shape), "data_offsets": [len(data), len(data) + len(extra)]}
        data += extra
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with (out / "model.safetensors").open("wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        f.write(data)
    vocab = {t: i for i, t in enumerate(terms)}
    tokenizer = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"},
    }
    (out / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False))
    config = {"normalize": True, "terms": ANALYZER, "hidden_dim": int(emb.shape[1]), **meta}
    (out / "config.json").write_text(json.dumps(config, indent=1) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--kinds", default="doc,name,path", help="pair kinds to train on")
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=100_000, help="most terms kept")
    ap.add_argument("--min-count", type=int, default=5, help="fewest texts a kept term is in")
    ap.add_argument("--epochs", type=float, default=3.0)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--temperature", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="use only the first N pairs")
    ap.add_argument(
        "--package-batches",
        type=float,
        default=0.0,
        help="share of each batch drawn from one package (harder negatives, as in a search of one repository)",
    )
    ap.add_argument(
        "--no-query-map",
        action="store_true",
        help="embed queries as documents, without a learned query map",
    )
    args = ap.parse_args()

    t0 = time.time()
    rng = np.random.default_rng(args.seed)
    kinds = set(args.kinds.split(","))
    terms, idf = fit_vocabulary(read_pairs(args.pairs, kinds, args.limit), args.min_count, args.vocab)
    index = {t: i for i, t in enumerate(terms)}
    packages: list[str] = []
    qm, dm = counts_matrices(read_pairs(args.pairs, kinds, args.limit, packages), index)
    _, package_of = np.unique(np.array(packages), return_inverse=True)
    print(f"{qm.shape[0]} pairs read in {time.time() - t0:.0f} s", file=sys.stderr)
    keep = np.flatnonzero((np.diff(qm.indptr) > 0) & (np.diff(dm.indptr) > 0))
    order = rng.permutation(keep)
    held = order[: min(2048, len(order) // 20)]
    train = order[len(held):]
    print(f"vocabulary {len(terms)}, {len(train)} training pairs, {len(held)} held out", file=sys.stderr)

    emb = (rng.standard_normal((len(terms), args.dim)).astype(np.float32) / math.sqrt(args.dim)) * idf[:, None]
    # The query map starts as the identity; it and its Adam moments.
    qmap = None if args.no_query_map else np.eye(args.dim, dtype=np.float32)
    mm = np.zeros((args.dim, args.dim), dtype=np.float32)
    vm = np.zeros_like(mm)
    m = np.zeros_like(emb)
    v = np.zeros_like(emb)
    b1, b2, eps = 0.9, 0.999, 1e-8
    steps = int(args.epochs * len(train) / args.batch)
    print(f"held-out recall@1 at start {recall_at_1(qm, dm, emb, held):.3f}", file=sys.stderr)
    step, losses = 0, []
    while step < steps:
        for idx in epoch_batches(rng, train, package_of, args.batch, args.package_batches):
            if step >= steps:
                break
            touched, qb, db = batch_blocks(qm, dm, idx)
            rows = emb[touched]
            sums = np.asarray(qb @ rows)
            q, qn = unit_rows(sums if qmap is None else sums @ qmap)
            d, dn = pooled(db, rows)
            loss, gq, gd = infonce(q, d, args.temperature)
            # Gradient of the loss for a query's sum of rows, before (and
            # for) the map.
            gq_sum = unit_grad(gq, q, qn)
            if qmap is not None:
                gmap = sums.T @ gq_sum
                gq_sum = gq_sum @ qmap.T
            grad = qb.T @ gq_sum + db.T @ unit_grad(gd, d, dn)
            step += 1
            m[touched] = b1 * m[touched] + (1 - b1) * grad
            v[touched] = b2 * v[touched] + (1 - b2) * grad * grad
            mhat = m[touched] / (1 - b1**step)
            vhat = v[touched] / (1 - b2**step)
            emb[touched] = rows - args.lr * mhat / (np.sqrt(vhat) + eps)
            if qmap is not None:
                mm[:] = b1 * mm + (1 - b1) * gmap
                vm[:] = b2 * vm + (1 - b2) * gmap * gmap
                qmap -= args.lr * (mm / (1 - b1**step)) / (np.sqrt(vm / (1 - b2**step)) + eps)
            losses.append(loss)
            if step % 200 == 0 or step == steps:
                r1 = recall_at_1(qm, dm, emb, held, qmap)
                print(
                    f"step {step}/{steps} loss {np.mean(losses[-200:]):.3f} "
                    f"held-out recall@1 {r1:.3f} ({time.time() - t0:.0f} s)",
                    file=sys.stderr,
                )
    meta = {
        "pairs": len(train),
        "kinds": args.kinds,
        "dim": args.dim,
        "epochs": args.epochs,
        "lr": args.lr,
        "temperature": args.temperature,
        "seed": args.seed,
        "package_batches": args.package_batches,
        "query_map": qmap is not None,
        "held_out_recall_at_1": round(recall_at_1(qm, dm, emb, held, qmap), 4),
    }
    write_model(args.out, terms, emb, meta, qmap)
    print(f"model written to {args.out} ({time.time() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
