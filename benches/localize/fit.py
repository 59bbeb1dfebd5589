#!/usr/bin/env python3
"""Fit the report route's weights on the mined pairs, cross-validated by repository.

  fit.py sample   --pairs pairs.jsonl --out fit-set.jsonl
  fit.py prepare  --data fit-set.jsonl --mirrors MIRRORS --trees TREES [--maguyva BIN]
  fit.py evaluate --data fit-set.jsonl --trees TREES --tool 'CMD {root} {qfile} {query}' [--out R.json]
  fit.py lists    --data fit-set.jsonl --trees TREES --out lists.json [--maguyva BIN] [--ranking R.json]
  fit.py walk     --data fit-set.jsonl --mirrors MIRRORS --trees CLONES --out lists.json [--maguyva BIN] [--ranking R.json]
  fit.py fit      --lists lists.json [--validate dev-lists.json] [--folds folds.json] [--drop LIST]
                  [--start WEIGHTS] [--free LIST] [--then LIST]

sample: the fitting set, every pair whose text has 60 words or more (the ones most like an issue) and six more of
each repository (the first by sha1 of instance_id), so every repository counts.
prepare: writes each pair's repository out at its base commit (`git archive` of the bare mirror
MIRRORS/OWNER+NAME/repo) into TREES/<instance_id> and indexes it.
evaluate: runs a tool once per pair on its tree and prints Acc@1/3/5/10 and MRR (the localization benchmark's
definitions: Acc@k = all edited files among the first k distinct files; MRR over the first 20), overall and per
language. {query} is the text shell-quoted, {qfile} a file holding it.
lists: asks `maguyva search --report --explain --json` for each pair and keeps every evidence list and its scores
(files of equal score share the mean of their ranks, as the engine fuses them; `fit --ties order` takes the lists'
order instead).
walk: what prepare and lists do, over git work trees with their history (for the history list): one clone of each
repository (`git clone --shared` of the mirror, CLONES/OWNER+NAME), checked out at each pair's base commit in
commit order and refreshed (`maguyva index`), so that each refresh reads only the files that changed; the history
the index reads is then the base commit's own, older than the fix. Resumes from --out.
--ranking: a ranking file for the search, for lists that the default leaves out (weight 0), such as history.
fit: coordinate ascent over the lists' weights, the RRF k and the test-file factor (objective: Acc@1 + Acc@5 +
Acc@10 + MRR), five folds by repository (folds.json); prints the held-out figures overall and per language, the
words list alone (plain BM25 of the report) beside them, and the weights fitted on all pairs. Needs numpy.
"""
import argparse, hashlib, json, os, re, shlex, subprocess, sys, tempfile, time

NAMES = ["words", "title", "code", "literals", "meaning", "title_meaning", "symbols", "definitions", "files",
         "neighbours", "history", "paths", "mentions"]
TEST_DIRS = {"test", "tests", "__tests__", "spec", "specs", "testing", "testdata", "test_data", "fixtures", "example",
             "examples", "bench", "benches", "benchmark", "benchmarks", "e2e", "sample", "samples", "snippets", "demo",
             "demos", "doc", "docs"}


def rows_of(path):
    return [json.loads(line) for line in open(path)]


def sample(a):
    rows = rows_of(a.pairs)
    by_repo = {}
    for r in rows:
        by_repo.setdefault(r["repo"], []).append(r)
    keep = {r["instance_id"] for r in rows if len(r["problem_statement"].split()) >= 60}
    for rs in by_repo.values():
        rs = sorted(rs, key=lambda r: hashlib.sha1(r["instance_id"].encode()).hexdigest())
        keep.update(r["instance_id"] for r in rs[:6])
    with open(a.out, "w") as f:
        for r in rows:
            if r["instance_id"] in keep:
                f.write(json.dumps(r) + "\n")
    print(f"{len(keep)} pairs of {len(by_repo)} repositories")


def prepare(a):
    for i, r in enumerate(rows_of(a.data)):
        root = os.path.join(a.trees, r["instance_id"])
        if os.path.exists(os.path.join(root, ".done")):
            continue
        subprocess.run(["rm", "-rf", root], check=True)
        os.makedirs(root)
        git_dir = os.path.join(a.mirrors, r["repo"].replace("/", "+"), "repo")
        archive = subprocess.Popen(["git", "--git-dir", git_dir, "archive", r["base_commit"]], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", root], stdin=archive.stdout, check=True)
        archive.wait()
        t = time.time()
        subprocess.run([a.maguyva, "index", "-q", root], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        open(os.path.join(root, ".done"), "w").close()
        print(f"[{i + 1}] {r['instance_id']} indexed in {time.time() - t:.1f}s", flush=True)


def files_of(out):
    try:
        d = json.loads(out)
        items = d.get("results", []) if isinstance(d, dict) else d
    except json.JSONDecodeError:
        items = [line.strip().split(":")[0] for line in out.splitlines() if line.strip()]
    paths = []
    for it in items:
        p = it if isinstance(it, str) else it.get("path") if isinstance(it, dict) else None
        if p and p.removeprefix("./") not in paths:
            paths.append(p.removeprefix("./"))
    return paths


def scored(gold, got):
    ranks = [got.index(g) + 1 if g in got else None for g in gold]
    first = min([x for x in ranks if x] or [0])
    return (None if None in ranks else max(ranks)), (1.0 / first if first and first <= 20 else 0.0)


def report(recs, key):
    def line(name, xs):
        acc = lambda k: sum(1 for x in xs if x[0] and x[0] <= k) / len(xs)
        mrr = sum(x[1] for x in xs) / len(xs)
        return f"{name:14s} n={len(xs):4d} " + " ".join(f"acc@{k}={acc(k):.3f}" for k in (1, 3, 5, 10)) + f" mrr={mrr:.3f}"
    print(line("all", [(r["acc_rank"], r["rr"]) for r in recs]))
    groups = {}
    for r in recs:
        groups.setdefault(r[key], []).append((r["acc_rank"], r["rr"]))
    for name, xs in sorted(groups.items()):
        print("  " + line(name, xs))


def evaluate(a):
    recs, times = [], []
    qfile = os.path.join(tempfile.mkdtemp(), "report.txt")
    for r in rows_of(a.data):
        root = os.path.join(a.trees, r["instance_id"])
        if not os.path.exists(os.path.join(root, ".done")):
            continue
        with open(qfile, "w") as f:
            f.write(r["problem_statement"])
        cmd = (a.tool.replace("{root}", shlex.quote(root)).replace("{qfile}", shlex.quote(qfile))
               .replace("{query}", shlex.quote(r["problem_statement"])))
        t = time.perf_counter()
        out = subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout
        times.append(time.perf_counter() - t)
        acc_rank, rr = scored(r["edited_files"], files_of(out))
        recs.append({"id": r["instance_id"], "language": r.get("language", "?"), "acc_rank": acc_rank, "rr": rr})
    report(recs, "language")
    print(f"median time per pair {sorted(times)[len(times) // 2]:.3f}s")
    if a.out:
        json.dump(recs, open(a.out, "w"), indent=1)


def lists(a):
    out = []
    for r in rows_of(a.data):
        root = os.path.join(a.trees, r["instance_id"])
        if not os.path.exists(os.path.join(root, ".done")):
            continue
        listed = lists_of(a, r, root)
        if listed is not None:
            out.append(listed)
    json.dump(out, open(a.out, "w"))
    print(f"{len(out)} pairs")


def lists_of(a, r, root):
    cmd = [a.maguyva, "search", "--json", "--explain", "--report", "-k", "20", "--no-refresh", "--path", root,
           "--query-file", "-"] + (["--ranking", a.ranking] if a.ranking else [])
    p = subprocess.run(cmd, input=r["problem_statement"], capture_output=True, text=True)
    try:
        d = json.loads(p.stdout)
    except json.JSONDecodeError:
        print("no answer for", r["instance_id"], p.stderr[-200:], file=sys.stderr)
        return None
    return {"id": r["instance_id"], "repo": r["repo"], "language": r.get("language", "python"),
            "gold": r["edited_files"], "lists": (d.get("report") or {}).get("lists", {}),
            "scores": (d.get("report") or {}).get("scores", {})}


def walk(a):
    by_repo = {}
    for r in rows_of(a.data):
        by_repo.setdefault(r["repo"], []).append(r)
    out = json.load(open(a.out)) if os.path.exists(a.out) else []
    done = {x["id"] for x in out}
    for n, (repo, rows) in enumerate(sorted(by_repo.items())):
        tree = os.path.join(a.trees, repo.replace("/", "+"))
        mirror = os.path.join(a.mirrors, repo.replace("/", "+"), "repo")
        if not os.path.exists(os.path.join(tree, ".git")):
            subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", mirror, tree], check=True)
        git = ["git", "-C", tree]
        when = lambda c: int(subprocess.run(git + ["log", "-1", "--format=%ct", c], capture_output=True,
                                            text=True, check=True).stdout.strip())
        t = time.time()
        for r in sorted(rows, key=lambda r: (when(r["base_commit"]), r["instance_id"])):
            if r["instance_id"] in done:
                continue
            # A mirror may lack its largest blobs: the checkout then moves HEAD and leaves those files out.
            subprocess.run(git + ["checkout", "-q", "-f", "--detach", r["base_commit"]], stderr=subprocess.DEVNULL)
            subprocess.run(git + ["clean", "-q", "-ffdx", "-e", ".maguyva"], check=True)
            subprocess.run([a.maguyva, "index", "-q", tree], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            listed = lists_of(a, r, tree)
            if listed is not None:
                for extra in a.extra:
                    name, ranking = extra.split("=", 1)
                    other = lists_of(argparse.Namespace(maguyva=a.maguyva, ranking=ranking), r, tree) or {}
                    for list_name, files in other.get("lists", {}).items():
                        listed["lists"][f"{list_name}@{name}"] = files
                out.append(listed)
        json.dump(out, open(a.out, "w"))
        print(f"[{n + 1}/{len(by_repo)}] {repo}: {len(rows)} pairs in {time.time() - t:.0f}s", flush=True)
    print(f"{len(out)} pairs")


def is_test(path):
    parts = path.split("/")
    if any(d.lower() in TEST_DIRS for d in parts[:-1]):
        return True
    stem = parts[-1].rsplit(".", 1)[0]
    return stem.startswith("test_") or bool(re.search(r"(_test|_spec|Test|Tests|Spec|\.test|\.spec)$", stem))


DOC_EXTENSIONS = {"md", "markdown", "rst", "txt", "adoc", "json", "yaml", "yml", "toml", "xml", "lock", "csv", "ini",
                  "cfg", "properties", "plist", "pbxproj"}
NOTES = {"README", "LICENSE", "LICENCE", "CHANGELOG", "CHANGES", "NEWS", "AUTHORS", "CONTRIBUTING", "COPYING", "HISTORY",
         "NOTICE"}


def holds_no_code(path):
    """The report route's rule (`maguyva_core::holds_no_code`, maguyva-core/src/paths.rs): docs, data, notes."""
    name = path.rsplit("/", 1)[-1]
    if "." not in name:
        return name.upper() in NOTES
    ext = name.rsplit(".", 1)[1].lower()
    return ext in DOC_EXTENSIONS or bool(re.fullmatch(r"[1-9][a-z]?|man|roff", ext))


def tied_ranks(files, scores, ties):
    """Each file's rank in a list: as the engine fuses them (`maguyva_fusion::fuse_evidence`), files of equal
    score share the mean of their positions ("mean"); "order" takes the positions as they are (for lists walked
    without their scores)."""
    if ties == "order" or not scores or len(scores) != len(files):
        return list(range(len(files)))
    out, start = [], 0
    for i in range(len(files) + 1):
        if i == len(files) or scores[i] != scores[start]:
            out += [(start + i - 1) / 2] * (i - start)
            start = i
    return out


def fit(a):
    import numpy as np

    folds = json.load(open(a.folds))

    def load(path):
        out = []
        for r in json.load(open(path)):
            if not r["lists"]:
                continue
            for use in a.use:
                name, key = use.split("=", 1)
                r["lists"][name] = r["lists"].get(key, [])
            cands = sorted(set(p for n in NAMES for p in r["lists"].get(n, [])) | set(r["gold"]))
            idx = {p: i for i, p in enumerate(cands)}
            ranks = np.full((len(cands), len(NAMES)), np.inf)
            for j, n in enumerate(NAMES):
                files = r["lists"].get(n, [])
                for rank, p in zip(tied_ranks(files, r.get("scores", {}).get(n), a.ties), files):
                    ranks[idx[p], j] = min(ranks[idx[p], j], rank)
            fold = folds.get(r["repo"], int(hashlib.sha1(r["repo"].encode()).hexdigest(), 16) % 5)
            out.append(dict(ranks=ranks, test=np.array([is_test(p) for p in cands]),
                            doc=np.array([holds_no_code(p) for p in cands]),
                            gold=[idx[g] for g in r["gold"]], fold=fold, language=r["language"]))
        return out

    # The factors besides the lists' weights, with the values coordinate ascent tries.
    factors = {"k": [3, 5, 10, 20, 40, 60], "test_factor": [0.1, 0.2, 0.3, 0.5, 0.75, 1.0],
               "doc_factor": [0.1, 0.2, 0.3, 0.5, 0.75, 1.0]}

    def evaluate_on(inst, w, f):
        acc, rr = [], []
        for x in inst:
            contrib = np.where(np.isinf(x["ranks"]), 0.0, 1.0 / (f["k"] + x["ranks"] + 1))
            s = (contrib @ np.array(w) * np.where(x["test"], f["test_factor"], 1.0)
                 * np.where(x["doc"], f["doc_factor"], 1.0))
            ranks = [(s > s[g]).sum() + 1 if s[g] > 0 else np.inf for g in x["gold"]]
            acc.append(max(ranks))
            rr.append(1.0 / min(ranks) if min(ranks) <= 20 else 0.0)
        return np.array(acc), np.array(rr)

    def objective(inst, w, f):
        acc, rr = evaluate_on(inst, w, f)
        return (acc <= 1).mean() + (acc <= 5).mean() + (acc <= 10).mean() + rr.mean()

    dropped = set(a.drop)
    start = json.loads(a.start)["report"] if a.start else {}
    free = set(a.free) or set(NAMES[1:]) | {"k", "test_factor"}
    # The doc factor is 1 (no effect) unless fitted: it came after the others (--then doc_factor).
    begin = {"k": start.get("k", 10.0), "test_factor": start.get("test_factor", 0.5),
             "doc_factor": start.get("doc_factor", 1.0)}

    def ascend(inst):
        if not a.then:
            return ascend_from(inst, [1.0] + [0.0 if n in dropped else start.get(n, 0.5) for n in NAMES[1:]],
                               dict(begin), free - dropped)
        # In stages: everything else first, with the lists of --then left out; then the --then ones alone.
        later = set(a.then)
        w, f = ascend_from(inst, [1.0] + [0.0 if n in dropped | later else start.get(n, 0.5) for n in NAMES[1:]],
                           dict(begin), free - dropped - later)
        return ascend_from(inst, w, f, later - dropped)

    def ascend_from(inst, w, f, free):
        best = objective(inst, w, f)
        for _ in range(4):
            improved = False
            for j in range(1, len(NAMES)):
                if NAMES[j] not in free:
                    continue
                for v in [0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.4, 2.0, 3.0]:
                    w2 = w[:j] + [v] + w[j + 1:]
                    o = objective(inst, w2, f)
                    if o > best + 1e-9:
                        best, w, improved = o, w2, True
            for name, values in factors.items():
                for v in values if name in free else []:
                    f2 = {**f, name: v}
                    o = objective(inst, w, f2)
                    if o > best + 1e-9:
                        best, f, improved = o, f2, True
            if not improved:
                break
        return w, f

    def summary(acc, rr):
        return " ".join(f"acc@{k}={(acc <= k).mean():.3f}" for k in (1, 3, 5, 10)) + f" mrr={rr.mean():.3f} n={len(acc)}"

    inst = load(a.lists)
    fold_of = np.array([x["fold"] for x in inst])
    acc, rr = np.zeros(len(inst)), np.zeros(len(inst))
    for fold in sorted(set(fold_of)):
        held = np.where(fold_of == fold)[0]
        w, f = ascend([x for x, g in zip(inst, fold_of) if g != fold])
        acc[held], rr[held] = evaluate_on([inst[i] for i in held], w, f)
        print(f"fold {fold}: weights {w} {f}")
    words = [evaluate_on([x], [1.0] + [0.0] * (len(NAMES) - 1), {"k": 10, "test_factor": 1.0, "doc_factor": 1.0})
             for x in inst]
    wacc = np.array([x[0][0] for x in words])
    wrr = np.array([x[1][0] for x in words])
    print("held out, by repository:", summary(acc, rr))
    print("words list alone:       ", summary(wacc, wrr))
    for language in sorted(set(x["language"] for x in inst)):
        m = np.array([x["language"] == language for x in inst])
        print(f"  {language:12s} n={m.sum():4d} held-out acc@5={(acc[m] <= 5).mean():.3f} "
              f"words alone acc@5={(wacc[m] <= 5).mean():.3f}")
    w, f = ascend(inst)
    print("fitted on all pairs:", json.dumps({"report": {**dict(zip(NAMES, w)), **f}}))
    if a.validate:
        print("on", a.validate, summary(*evaluate_on(load(a.validate), w, f)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    s = sub.add_parser("sample")
    s.add_argument("--pairs", default=os.path.join(here, "pairs.jsonl"))
    s.add_argument("--out", required=True)
    s = sub.add_parser("prepare")
    s.add_argument("--data", required=True)
    s.add_argument("--mirrors", required=True)
    s.add_argument("--trees", required=True)
    s.add_argument("--maguyva", default="maguyva")
    s = sub.add_parser("evaluate")
    s.add_argument("--data", required=True)
    s.add_argument("--trees", required=True)
    s.add_argument("--tool", required=True)
    s.add_argument("--out", default="")
    s = sub.add_parser("lists")
    s.add_argument("--data", required=True)
    s.add_argument("--trees", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--maguyva", default="maguyva")
    s.add_argument("--ranking", default="")
    s = sub.add_parser("walk")
    s.add_argument("--data", required=True)
    s.add_argument("--mirrors", required=True)
    s.add_argument("--trees", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--maguyva", default="maguyva")
    s.add_argument("--ranking", default="")
    s.add_argument("--extra", action="append", default=[],
                   help="NAME=RANKING: also keep the lists made with this ranking file, as LIST@NAME")
    s = sub.add_parser("fit")
    s.add_argument("--lists", required=True)
    s.add_argument("--validate", default="")
    s.add_argument("--drop", action="append", default=[], help="a list left out (weight 0), for an ablation")
    s.add_argument("--use", action="append", default=[],
                   help="LIST=KEY: take list LIST from the lists saved as KEY (a walk's --extra, LIST@NAME)")
    s.add_argument("--then", action="append", default=[],
                   help="fit these lists after the others, the others held (in every fold, as on all pairs)")
    s.add_argument("--start", default="", help='the weights to start from, as fit prints them: {"report": {...}}')
    s.add_argument("--free", action="append", default=[],
                   help="fit only these (list names, k, test_factor; repeatable); the others keep --start's")
    s.add_argument("--folds", default=os.path.join(here, "folds.json"))
    s.add_argument("--ties", choices=["mean", "order"], default="mean",
                   help="the rank of files of equal score in a list: the mean of their positions, as the engine "
                        "fuses them, or their order as listed")
    a = ap.parse_args()
    {"sample": sample, "prepare": prepare, "evaluate": evaluate, "lists": lists, "walk": walk, "fit": fit}[a.cmd](a)


if __name__ == "__main__":
    main()
