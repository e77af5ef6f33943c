"""Whether a change to the reference engine keeps every answer: dump, then compare two dumps.

    python benchmarks/bench_same_recalls.py dump OUT.json [--turns 100000] [--embeddings] [--queries 200]
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_same_recalls.py dump BASE.json ...
    python benchmarks/bench_same_recalls.py compare BASE.json OUT.json

``dump`` builds ``bench_reference``'s corpus (the same seeds), runs its questions through the real
``AgentMemory.pre_turn`` (the pack's markdown and refs), then recalls each question in the four
sections at limits 24, 18 and 9 (the first two with the recency signal, 18 also without), and
writes every hit id and score. ``compare`` exits 1 when a pack or a hit order differs or a score
differs by more than 1e-9, else 0, and prints the largest score difference.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

import bench_reference as bench

from memeval.agent.lifecycle import AgentMemory, Timings
from memeval.engines.base import MemoryItem, RecallRequest, capabilities_of
from memeval.engines.reference.engine import create
from memeval.spec.model import Policy

TOLERANCE = 1e-9
_RECALLS = ((24, True), (18, True), (18, False), (9, True))


def dump(turns: int, embeddings: bool, queries: int) -> list[dict]:
    """Each question's pack and recalls (see the module docstring)."""
    corpus = bench.Corpus()
    items = [MemoryItem(**kw) for kw in bench.turn_fields(corpus, turns)]
    rng = random.Random(7)
    asks = [(rng.choice(bench.TENANTS), rng.randrange(bench.AGENTS), corpus.sentence(8, 30)) for _ in range(queries)]
    engine = create({"embedder": "static" if embeddings else "none"})
    for at in range(0, len(items), 1000):
        engine.write_many(items[at : at + 1000])
    out = []
    for tenant, agent, query in asks:
        memory = AgentMemory(engine, capabilities_of(engine), tenant, f"a{agent}", Policy(), Timings())
        pack = memory.pre_turn("bench", 0, query, 0, None, log=False).pack
        recalls = []
        for nodes in (("learnings",), ("source:",), (f"agent:a{agent}",), ("agent:",)):
            for limit, recent in _RECALLS:
                hits = engine.recall(RecallRequest(tenant, nodes, query, limit, prefer_recent=recent))
                recalls.append([[hit.item.id, hit.score] for hit in hits])
        out.append({"pack": pack.markdown, "refs": list(pack.refs), "recalls": recalls})
    return out


def compare(base: list[dict], other: list[dict]) -> tuple[int, float]:
    """How many packs or hit lists differ, and the largest score difference."""
    if len(base) != len(other):
        return max(len(base), len(other)), float("inf")
    differ, delta = 0, 0.0
    for old, new in zip(base, other, strict=True):
        differ += old["pack"] != new["pack"] or old["refs"] != new["refs"]
        for was, now in zip(old["recalls"], new["recalls"], strict=True):
            differ += [hit[0] for hit in was] != [hit[0] for hit in now]
            delta = max([delta, *(abs(a[1] - b[1]) for a, b in zip(was, now, strict=False))])
    return differ, delta


def main(argv: list[str] | None = None) -> int:
    """Dump or compare; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("dump", "compare"))
    parser.add_argument("files", nargs="+", help="dump: the output; compare: two dumps")
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--embeddings", action="store_true", help="with the static embedder")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    if args.action == "dump":
        with open(args.files[0], "w", encoding="utf-8") as out:
            json.dump(dump(args.turns, args.embeddings, args.queries), out)
        return 0
    if len(args.files) != 2:
        parser.error("compare takes two dumps")
    base, other = (json.load(open(path, encoding="utf-8")) for path in args.files)
    differ, delta = compare(base, other)
    print(f"{len(base)} questions: {differ} packs or hit lists differ, largest score difference {delta:.3g}")
    return 1 if differ or delta > TOLERANCE else 0


if __name__ == "__main__":
    sys.exit(main())
