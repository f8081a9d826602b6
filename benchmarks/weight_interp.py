"""Benchmark of the weight-interp pipeline (CPU, one thread).

1. Pipeline throughput: nonzero weights of a trained tiny sparse GPT taken through importance,
   selection, symbolic explanation and held-out verification, per CPU minute — against the same
   pipeline with importance from exact per-position ablation (the baseline), in the same run.
2. Attribution vs ablation: cost per weight of gradient × weight attribution (one forward and
   backward for all weights, then a gather) against exact re-forward ablation (one forward per
   weight for whole-window ablation; T forwards per window for per-position ablation), on the
   same windows; ratios from the same run.
3. Sparse training step vs its dense twin (same model, same batches): the top-k projection's cost.

Times are CPU seconds (``time.process_time``: not inflated by other processes on a shared
machine); each comparison is recorded through ``record()``.
Run: ``.venv/bin/python benchmarks/weight_interp.py``.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from _timing import record

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
    steps = 150
    torch.manual_seed(0)
    sparse = SparseGPT(mc)
    t = time.process_time()
    train_lm(sparse, c.split("train"), c.split("val"),
             TrainConfig(steps=steps, batch=16, lr=0.03, target_fraction=0.0625, eval_every=steps), 0)
    ts = (time.process_time() - t) / steps
    torch.manual_seed(0)
    dense = SparseGPT(mc)
    t = time.process_time()
    train_lm(dense, c.split("train"), c.split("val"),
             TrainConfig(steps=steps, batch=16, lr=0.03, target_fraction=1.0, eval_every=steps), 0)
    td = (time.process_time() - t) / steps
    print(f"training step (CPU): sparse {ts * 1e3:.1f} ms, dense {td * 1e3:.1f} ms; "
          f"sparse/dense {ts / td:.2f}× (top-k projection of {len(sparse.matrices())} matrices per step)")
    record("training step, tiny GPT: sparse (top-k projection, annealed to 6.25 % kept) vs its dense twin", ts, td,
           note=f"{steps} steps, batch 16, same batches, one validation pass included; ratio < 1: the projection's cost")

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
    record("explanation pipeline per weight: attribution importance vs exact per-position ablation importance",
           dt / len(refs), db, note=f"{len(refs)} weights ours, {k_base} baseline; 2×150 windows of 32 tokens, "
                                    "symbolic explainer")

    w = c.split("score")[:64]
    n = 100
    sub = refs[:n]
    t = time.process_time()
    attributions(sparse, capture(sparse, w, sorted({r.module for r in sub})), sub)
    t_attr = (time.process_time() - t) / n
    k = 10
    t = time.process_time()
    for r in sub[:k]:
        ablation_effects(sparse, w, r, per_position=False)
    t_abl = (time.process_time() - t) / k
    t = time.process_time()
    for r in sub[:2]:
        ablation_effects(sparse, w[:8], r, per_position=True)
    t_pos = (time.process_time() - t) / 2 * (len(w) / 8)
    print(f"attribution: {t_attr * 1e3:.2f} ms/weight (per token, {n} weights share one backward) vs whole-window "
          f"ablation {t_abl * 1e3:.1f} ms/weight (per window only): {t_abl / t_attr:.0f}×; vs per-position ablation "
          f"{t_pos * 1e3:.0f} ms/weight (per token, same resolution): {t_pos / t_attr:.0f}× — on {len(w)} windows")
    record(f"importance per weight, {len(w)} windows: gradient × weight attribution vs whole-window ablation", t_attr,
           t_abl, note=f"attribution per token ({n} weights share one backward); ablation per window only")
    record(f"importance per weight, {len(w)} windows: gradient × weight attribution vs per-position ablation", t_attr,
           t_pos, note="same (per-token) resolution; ablation timed on 8 windows and scaled")


if __name__ == "__main__":
    main()
