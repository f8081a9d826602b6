"""Benchmark of the weight-interp pipeline (CPU, one thread).

1. Pipeline throughput: nonzero weights of a trained tiny sparse GPT taken through importance,
   selection, symbolic explanation and held-out verification, per CPU minute — against the same
   pipeline with importance from exact per-position ablation (the baseline), in the same run.
2. Attribution vs ablation: cost per weight of gradient × weight attribution (one forward and
   backward for all weights, then a gather) against exact re-forward ablation (one forward per
   weight for whole-window ablation; T forwards per window for per-position ablation), on the
   same windows; ratios from the same run.
3. Sparse training step vs its dense twin (same model, same batches): the top-k projection's cost.

Run: ``.venv/bin/python benchmarks/weight_interp.py``.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from neurips26.weight_interp import (
    SelectionSettings,
    SparseGPT,
    SparseGPTConfig,
    SymbolicExplainer,
    SymbolicScorer,
    TrainConfig,
    ablation_effects,
    attributions,
    capture,
    explain_from_importance,
    explain_weights,
    make_corpus,
    sample_nonzero_weights,
    stdlib_source_text,
    train_lm,
)


def main() -> None:
    torch.set_num_threads(1)
    text, _ = stdlib_source_text(400_000)
    c = make_corpus(text, 32, {"val": 50, "explain": 150, "score": 150, "train": -1}, seed=0)
    mc = SparseGPTConfig(c.vocab.size)
    torch.manual_seed(0)
    sparse = SparseGPT(mc)
    rs = train_lm(sparse, c.split("train"), c.split("val"),
                  TrainConfig(steps=150, batch=16, lr=0.03, target_fraction=0.0625, eval_every=150), 0)
    torch.manual_seed(0)
    dense = SparseGPT(mc)
    rd = train_lm(dense, c.split("train"), c.split("val"),
                  TrainConfig(steps=150, batch=16, lr=0.03, target_fraction=1.0, eval_every=150), 0)
    print(f"training step: sparse {rs.seconds_per_step * 1e3:.1f} ms, dense {rd.seconds_per_step * 1e3:.1f} ms; "
          f"sparse/dense {rs.seconds_per_step / rd.seconds_per_step:.2f}× (top-k projection of "
          f"{len(sparse.matrices())} matrices per step)")

    refs = sample_nonzero_weights(sparse, 200, np.random.default_rng(0))
    t = time.process_time()
    reps = explain_weights(sparse, refs, c.split("explain"), c.split("score"), SymbolicExplainer(), SymbolicScorer(),
                           c.vocab)
    dt = time.process_time() - t
    # baseline in the same run: the same pipeline with importance from exact per-position ablation
    # (one re-forward per window and position: what the attribution replaces), on a few weights
    k_base = 2
    ew, sw = c.split("explain"), c.split("score")
    t = time.process_time()
    for r in refs[:k_base]:
        ie = np.abs(ablation_effects(sparse, ew, r, per_position=True))
        is_ = np.abs(ablation_effects(sparse, sw, r, per_position=True))
        explain_from_importance(str(r), 0.0, ie, is_, ew, sw, SymbolicExplainer(), SymbolicScorer(), c.vocab,
                                SelectionSettings(), np.random.default_rng(0))
    db = (time.process_time() - t) / k_base
    ours, base = len(refs) / dt * 60, 60 / db
    print(f"pipeline (CPU): ours {ours:,.0f} weights/min ({len(refs)} weights, 2×150 windows of 32 tokens, symbolic "
          f"explainer; {sum(r.interpretable for r in reps)} interpretable); baseline with exact per-position ablation "
          f"importance {base:,.1f} weights/min ({k_base} weights); ratio ours/baseline {ours / base:,.0f}×")

    w = c.split("score")[:64]
    n = 100
    sub = refs[:n]
    t = time.perf_counter()
    attributions(sparse, capture(sparse, w, sorted({r.module for r in sub})), sub)
    t_attr = (time.perf_counter() - t) / n
    k = 10
    t = time.perf_counter()
    for r in sub[:k]:
        ablation_effects(sparse, w, r, per_position=False)
    t_abl = (time.perf_counter() - t) / k
    t = time.perf_counter()
    for r in sub[:2]:
        ablation_effects(sparse, w[:8], r, per_position=True)
    t_pos = (time.perf_counter() - t) / 2 * (len(w) / 8)
    print(f"attribution: {t_attr * 1e3:.2f} ms/weight (per token, {n} weights share one backward) vs whole-window "
          f"ablation {t_abl * 1e3:.1f} ms/weight (per window only): {t_abl / t_attr:.0f}×; vs per-position ablation "
          f"{t_pos * 1e3:.0f} ms/weight (per token, same resolution): {t_pos / t_attr:.0f}× — on {len(w)} windows")


if __name__ == "__main__":
    main()
