#!/usr/bin/env python3
"""Writes the nonsense-query set: questions no repository can answer.

Half are made-up identifiers in the naming styles of code (snake_case,
camelCase, PascalCase, SCREAMING_SNAKE), each with at least one invented
part (random syllables) beside real English words; half are triples of
random English words. The words come from a plain English word list
(Debian's `wamerican`, /usr/share/dict/words), lowercase words of 4 to 10
letters; the same seed gives the same set.

    python3 generate.py [--words /usr/share/dict/words] [--seed 14] [--n 200] > queries.txt
"""

from __future__ import annotations

import argparse
import random
import re


def invented(rng: random.Random) -> str:
    consonants = "bcdfghjklmnpqrstvwxz"
    vowels = "aeiouy"
    return "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(2, 4)))


def identifier(rng: random.Random, words: list[str]) -> str:
    parts = [rng.choice(words) for _ in range(rng.randint(1, 2))]
    parts.insert(rng.randint(0, len(parts)), invented(rng))
    style = rng.choice(["snake", "camel", "pascal", "screaming"])
    if style == "snake":
        return "_".join(parts)
    if style == "screaming":
        return "_".join(parts).upper()
    pascal = "".join(p.capitalize() for p in parts)
    return pascal if style == "pascal" else pascal[0].lower() + pascal[1:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--words", default="/usr/share/dict/words")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    with open(args.words, encoding="utf-8", errors="replace") as f:
        words = sorted({w.strip() for w in f if re.fullmatch(r"[a-z]{4,10}", w.strip())})
    rng = random.Random(args.seed)
    half = args.n // 2
    for _ in range(half):
        print(identifier(rng, words))
    for _ in range(args.n - half):
        print(" ".join(rng.choice(words) for _ in range(3)))


if __name__ == "__main__":
    main()
