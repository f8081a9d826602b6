"""Benchmark of the CREO sandbox, each row against a baseline in the same run (CPU time).

1. Rollouts per second of the scripted agent: retrieval through our sandbox (``bm25s`` index,
   precomputed scores) against the same rollouts with retrieval through ``rank_bm25`` (scores
   computed per query by scanning the corpus; Okapi idf, same k1 and b).
2. BM25 at 10^5 documents: index build and query latency of ``bm25s`` (ours) against
   ``rank_bm25``, with the build split into its parts — which explains why bm25s builds slower:
   it *precomputes* the BM25 score of every (document, term) pair at index time, in a Python loop
   over documents (a ``Counter`` and small numpy arrays per document); our documents have ~8
   tokens, so that per-document overhead dominates. rank_bm25 only counts term frequencies at
   build time and pays at every query instead (a scan of all documents).
3. Knowledge-graph generation at 10^5 companies (was a hang from ~340 companies).

Rows 1 and 2 are recorded through ``record()``; row 3 has no baseline to run and is only printed.
Run: ``.venv/bin/python benchmarks/search_agent_attacks.py``. The baseline needs ``rank_bm25``
(the ``bench`` extra: ``pip install -c constraints.txt -e '.[bench]'``).
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
from _timing import best_cpu, record

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


class _RankBM25Scores:
    """``get_scores(query tokens)`` through rank_bm25 (a drop-in for the sandbox's index)."""

    def __init__(self, docs, k1: float = 1.5, b: float = 0.75) -> None:
        from rank_bm25 import BM25Okapi

        self.ref = BM25Okapi([tokenize(d.text) for d in docs], k1=k1, b=b)

    def get_scores(self, q):
        return self.ref.get_scores(q)


def _rollouts(sb: Sandbox, qs) -> int:
    agent, n = ScriptedAgent(), 0
    for g in STATIC_TEMPLATES:
        for q in qs:
            agent.run(q, sb, render_documents(g, q), Defender(source_trust=True), target_for(q)[0])
            n += 1
    return n


def rollouts_per_second(n_companies: int = 150) -> None:
    kg = KnowledgeGraph.generate(n_companies, 0)
    qs = kg.questions(100, 1)
    sb = Sandbox(kg.documents())
    t_ours, n = best_cpu(lambda: _rollouts(sb, qs))
    line = f"sandbox ({sb.n_docs} documents, 2 searches per rollout): ours {n / t_ours:,.0f} rollouts per CPU-s"
    if importlib.util.find_spec("rank_bm25") is None:
        print(line + "; baseline rank_bm25 not installed (pip install -c constraints.txt -e '.[bench]')")
        return
    base = Sandbox(kg.documents())
    base._bm25 = _RankBM25Scores(base.docs)
    t_base, _ = best_cpu(lambda: _rollouts(base, qs))
    print(line + f", with rank_bm25 retrieval {n / t_base:,.0f}; ours {t_base / t_ours:.1f}×")
    record(f"{n} scripted-agent rollouts, {sb.n_docs} documents: bm25s sandbox vs rank_bm25 retrieval", t_ours, t_base,
           note="2 searches per rollout; Okapi idf, same k1 and b")


def bm25_at_scale(n_companies: int = 25_000, n_queries: int = 50) -> None:
    import bm25s

    kg = KnowledgeGraph.generate(n_companies, 0)
    docs = kg.documents()
    texts = [d.text for d in docs]
    queries = [f"born {q.chain[0][1]}" for q in kg.questions(n_queries, 1)]
    t_tok, tokens = best_cpu(lambda: bm25s.tokenize(texts, stopwords=None, show_progress=False), 1)
    t_idx, _ = best_cpu(lambda: bm25s.BM25(method="lucene").index(tokens, show_progress=False), 1)
    t_build, sb = best_cpu(lambda: Sandbox(docs), 1)
    t_q, _ = best_cpu(lambda: [sb.search(q, 5) for q in queries], 1)
    line = (f"bm25s at {len(docs):,} documents: sandbox build {t_build:.2f} CPU-s (bm25s tokenize {t_tok:.2f}, "
            f"bm25s index {t_idx:.2f} — scores of every (document, term) pair precomputed — and our own idf/length "
            f"statistics for injected documents the rest), query {t_q / len(queries) * 1e3:.2f} ms")
    if importlib.util.find_spec("rank_bm25") is None:
        print(line + "; baseline rank_bm25 not installed (pip install -c constraints.txt -e '.[bench]') — no comparison")
        return
    from rank_bm25 import BM25Okapi

    t_ref, ref = best_cpu(lambda: BM25Okapi([tokenize(x) for x in texts]), 1)
    t_qref, _ = best_cpu(lambda: [np.argsort(-ref.get_scores(tokenize(q)))[:5] for q in queries[:10]], 1)
    q_ref = t_qref / 10
    print(line + f"; rank_bm25: build {t_ref:.2f} CPU-s (counts only), query {q_ref * 1e3:.1f} ms; ours: query "
          f"{q_ref / (t_q / len(queries)):.0f}× faster, build {t_ref / t_build:.2f}× (the precomputation); ours "
          f"pays off after ~{max(t_build - t_ref, 0) / max(q_ref - t_q / len(queries), 1e-9):.0f} queries")
    record(f"BM25 query (top 5) at {len(docs):,} documents: bm25s sandbox vs rank_bm25", t_q / len(queries), q_ref,
           note=f"{len(queries)} queries ours, 10 rank_bm25")
    record(f"BM25 index build at {len(docs):,} documents: bm25s sandbox vs rank_bm25", t_build, t_ref,
           note="ratio < 1: bm25s precomputes every (document, term) score at build time")


def knowledge_graph_generation(n: int = 100_000) -> None:
    t, kg = best_cpu(lambda: KnowledgeGraph.generate(n, 0), 1)
    print(f"knowledge graph: {n:,} companies ({len(kg.facts):,} facts) in {t:.2f} CPU-s (linear in n; no baseline: "
          "the previous generator did not finish 400 companies)")


if __name__ == "__main__":
    rollouts_per_second()
    bm25_at_scale()
    knowledge_graph_generation()
    sys.stdout.flush()
