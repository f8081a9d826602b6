"""Benchmark of the CREO sandbox: rollouts per second, and BM25 index build and query latency at
10^5 documents with ``bm25s`` against ``rank_bm25`` (same corpus, same queries, same run).

Run: ``.venv/bin/python benchmarks/search_agent_attacks.py``. Prints ratios from the same run.
"""

from __future__ import annotations

import importlib.util
import time

import numpy as np

from neurips26.search_agent_attacks import (
    STATIC_TEMPLATES,
    Defender,
    KnowledgeGraph,
    Sandbox,
    ScriptedAgent,
    render_documents,
    target_for,
)
from neurips26.search_agent_attacks.sandbox import tokenize


def rollouts_per_second() -> None:
    kg = KnowledgeGraph.generate(150, 0)
    sb, qs, agent = Sandbox(kg.documents()), kg.questions(100, 1), ScriptedAgent()
    t = time.perf_counter()
    n = 0
    for g in STATIC_TEMPLATES:
        for q in qs:
            agent.run(q, sb, render_documents(g, q), Defender(source_trust=True), target_for(q)[0])
            n += 1
    dt = time.perf_counter() - t
    print(f"sandbox: {n / dt:,.0f} rollouts/s ({sb.n_docs} documents, 2 searches per rollout)")


def bm25_at_scale(n_companies: int = 25_000, n_queries: int = 50) -> None:
    kg = KnowledgeGraph.generate(n_companies, 0)
    docs = kg.documents()
    queries = [f"born {q.chain[0][1]}" for q in kg.questions(n_queries, 1)]
    t = time.perf_counter()
    sb = Sandbox(docs)
    build_ours = time.perf_counter() - t
    t = time.perf_counter()
    for q in queries:
        sb.search(q, 5)
    query_ours = (time.perf_counter() - t) / len(queries)
    line = f"bm25s at {len(docs):,} documents: build {build_ours:.2f} s, query {query_ours * 1e3:.2f} ms"
    if importlib.util.find_spec("rank_bm25") is None:
        print(line + "; rank_bm25 not installed (pip install rank-bm25) — no comparison")
        return
    from rank_bm25 import BM25Okapi

    t = time.perf_counter()
    ref = BM25Okapi([tokenize(d.text) for d in docs])
    build_ref = time.perf_counter() - t
    t = time.perf_counter()
    for q in queries[:10]:
        np.argsort(-ref.get_scores(tokenize(q)))[:5]
    query_ref = (time.perf_counter() - t) / 10
    print(line + f"; rank_bm25: build {build_ref:.2f} s, query {query_ref * 1e3:.1f} ms; "
          f"bm25s query {query_ref / query_ours:.0f}× faster, build {build_ref / build_ours:.1f}×")


if __name__ == "__main__":
    rollouts_per_second()
    bm25_at_scale()
