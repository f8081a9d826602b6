"""Reproduction of paper 8 (per-weight interpretation of weight-sparse transformers) at laptop scale.

Only the abstract was read (the workshop forum page). Parts, one function per claim group:

1. Training: per seed, a weight-sparse GPT (top-k per matrix after every step, annealed, ≥ j
   nonzeros per neuron, AbsTopK activations, gradient-RMS normalisation, Adam ε = 0.1) on Python
   standard-library source, and its dense twin stopped at the sparse model's validation loss.
   Checks: sparsity invariants at every step, the schedule, gradient RMS, matched loss.
2. Planted weight: a hand-built model whose one weight acts only on "')' then ':'"; the pipeline
   must explain and verify it, and a shuffled control must fail.
3. Attribution vs exact per-position ablation (planted model and the trained sparse models).
4. Interpretable fraction, sparse vs dense, over seeds (the abstract's sign; its 17–35 % vs 5–9 %
   on the paper's models is not checkable here), with a shuffled control and faithfulness.
5. Optional LLM explainer/scorer arm through the model backends (``backend != none``).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
import warnings
from typing import Literal

import numpy as np
import torch
from pydantic import Field, field_validator, model_validator

from neurips26.harness import Outcome, RunContext
from neurips26.harness import claims as C
from neurips26.harness.config import ChatBackendConfig, Resources, model_label, no_model_reason, resolve_auto_backend
from neurips26.harness.context import torch_threads

from .attribution import ablation_effects, attributions, capture, sample_nonzero_weights
from .corpus import make_corpus, stdlib_source_text
from .explainers import LLMExplainer, LLMScorer, SymbolicExplainer, SymbolicScorer
from .model import SparseGPT, SparseGPTConfig
from .pipeline import FAILED, SelectionSettings, explain_weights, interpretable_fraction
from .planted import PlantedModel
from .sparsity import TrainConfig, kept_fraction, nonzeros_target, train_lm

PAPER_SPARSE, PAPER_DENSE = "17–35 %", "5–9 %"
#: Seeds never used while choosing the rules of the claims tuned after a look (sparse vs dense
#: rule, attribution-vs-ablation method, schedule counting): ``reproduce`` re-runs on them.
CONFIRMATION_SEEDS = (101, 102, 103)
FRACTION = (0.0, 1.0)          # domain of a fraction / balanced accuracy
DIFF = (-1.0, 1.0)             # domain of a difference of fractions, or of a Spearman correlation
NONNEG = (0.0, math.inf)


class Config(ChatBackendConfig):
    """Sizes of the reproduction. Quick: training steps, batch, evaluation interval, control steps and
    explain/score windows are set by the CPU budget of the quick run (about 65 CPU-s for the
    development and the confirmation run together; they were 300 steps, batch 16, eval every 25,
    control 150 steps, 150 + 150 windows before); the full config sets its own."""

    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=2, max_length=20,
                             description="seed offsets of the sparse/dense pairs (>= 2, for an interval)")
    corpus_chars: int = Field(600_000, ge=20_000, le=200_000_000, description="characters of stdlib source read")
    ctx: int = Field(32, ge=8, le=2048, description="context length (tokens = characters)")
    d_model: int = Field(64, ge=8, le=8192)
    n_layer: int = Field(2, ge=1, le=48)
    n_head: int = Field(4, ge=1, le=128)
    d_head: int = Field(16, ge=4, le=256, description="head size (16 in Gao et al.)")
    d_mlp: int = Field(256, ge=8, le=32768)
    activation_topk_fraction: float = Field(0.25, gt=0, le=1, description="AbsTopK keep fraction (1 = off)")
    positional_embedding: bool = Field(True, description="learned positions (Gao et al.: none in most runs)")
    steps: int = Field(100, ge=20, le=1_000_000, description="optimiser steps of the sparse model (quick: set by "
                       "the CPU budget of the quick run)")
    batch: int = Field(8, ge=1, le=4096, description="windows per step (quick: set by the CPU budget)")
    lr: float = Field(0.03, gt=0, le=1.0, description="peak learning rate (Adam ε = 0.1 makes it large)")
    target_fraction: float = Field(0.0625, gt=0, lt=1, description="kept fraction of every matrix at the end")
    min_per_neuron: int = Field(4, ge=0, le=64, description="floor j of nonzeros per output neuron")
    schedule: Literal["linear", "exp"] = Field("linear", description="anneal of the kept fraction")
    eval_every: int = Field(10, ge=1, le=100_000, description="steps between validation losses (dense stop; "
                            "quick: 1/10 of the steps, as 25 of 300 before)")
    dense_max_steps_factor: float = Field(3.0, ge=1.0, le=20.0, description="dense twin's step cap / sparse steps")
    val_windows: int = Field(100, ge=10, le=1_000_000)
    explain_windows: int = Field(80, ge=10, le=1_000_000, description="windows the explainer sees (quick: set by "
                                 "the CPU budget; 2 % of 80·32 tokens is still above n_examples)")
    score_windows: int = Field(80, ge=10, le=1_000_000, description="held-out windows for verification (quick: "
                               "set by the CPU budget)")
    n_weights: int = Field(100, ge=10, le=1_000_000, description="nonzero weights sampled per model")
    quantile: float = Field(0.98, gt=0, lt=1, description="importance quantile that makes a token positive")
    rel_floor: float = Field(0.1, ge=0, lt=1, description="positives also need |A| >= rel_floor * max|A|")
    n_examples: int = Field(40, ge=4, le=10_000, description="positives and negatives per set (each)")
    min_positives: int = Field(8, ge=1, le=10_000)
    tau: float = Field(0.8, ge=0.5, le=1.0, description="interpretable iff held-out balanced accuracy >= tau")
    ablation: Literal["zero", "mean"] = Field("zero", description="ablation defining importance")
    n_ablation_weights: int = Field(6, ge=2, le=1000, description="weights checked by exact per-position ablation")
    ablation_windows: int = Field(3, ge=1, le=1000, description="windows per weight in that check")
    control_steps: int = Field(50, ge=20, le=1_000_000, description="steps of the no-AbsTopK control model "
                               "(attribution vs ablation without activation sparsity; quick: set by the CPU budget)")
    planted_windows: int = Field(300, ge=20, le=100_000, description="explain and score windows of the planted test")
    llm_weights: int = Field(8, ge=2, le=100_000, description="weights per model explained by the LLM arm")
    max_tokens: int = Field(120, ge=8, le=4096, description="explainer reply token limit")
    llm_min_usable: int = Field(2, ge=1, le=100_000, description="usable LLM explanations (weights explained AND "
                                "scored, status ok) needed in EACH arm before llm_sparse_vs_dense is judged; "
                                "below it the claim is not checkable, with the counts")

    @field_validator("seeds")
    @classmethod
    def _distinct(cls, v: list[int]) -> list[int]:
        if len(set(v)) != len(v):
            raise ValueError("seeds must be distinct")
        return v

    @model_validator(mode="after")
    def _enough_nonzeros(self) -> "Config":
        """Fail at once (not after training) when a sparse model cannot hold the sampled weights."""
        from .corpus import CharVocabulary

        w = self.n_head * self.d_head
        shapes = [(w, self.d_model)] * 3 + [(self.d_model, w), (self.d_mlp, self.d_model), (self.d_model, self.d_mlp)]
        shapes = shapes * self.n_layer + [(CharVocabulary().size, self.d_model)]
        nnz = sum(nonzeros_target(sh, self.target_fraction, self.min_per_neuron) for sh in shapes)
        if self.llm_min_usable > self.llm_weights:
            raise ValueError(f"llm_min_usable={self.llm_min_usable} but only llm_weights={self.llm_weights} weights "
                             "are explained per model; allowed: llm_min_usable <= llm_weights")
        for key in ("n_weights", "llm_weights", "n_ablation_weights"):
            if getattr(self, key) > nnz:
                raise ValueError(f"{key}={getattr(self, key)} but the sparse model keeps {nnz} nonzero weights "
                                 f"(target_fraction={self.target_fraction}); allowed: {key} <= {nnz}")
        return self

    def resources(self) -> Resources:
        """Quick: 1 CPU. Full: one GPU node (and the endpoint key when OpenAI's own)."""
        base = super().resources()
        big = self.d_model >= 256 or self.steps > 5000
        return Resources(num_cpus=4 if big else 1, num_gpus=1 if big else 0, memory_gb=16 if big else 2,
                         hours=6.0 if big else None, credentials=base.credentials, on_device="training of the sparse and dense GPT twins and the attributions (models on ctx.device)", on_cpu="the corpus from the standard library; explanations and scores go to the chat endpoint")

    @classmethod
    def quick(cls) -> "Config":
        """The laptop configuration: ``backend=auto`` (the installed local model explains and scores
        ``llm_weights = 2`` weights per model of the first pair, else no LLM arm: its claim not
        checkable, saying how to install the model). Two weights: the measured cost of the arm on
        SmolLM2-135M is ≈ 42 CPU-s on one thread (every explanation malformed, so no scoring call)."""
        return cls(backend="auto", llm_weights=2)

    @classmethod
    def full(cls) -> "Config":
        """Paper-like: 4-layer d_model 256 twins at ctx 128, 1/64 kept weights, no positions,
        20k steps, 1000 weights per model, an LLM explainer and scorer through an
        OpenAI-compatible endpoint (e.g. a local vLLM server: set base_url). The LLM arm costs
        1 explanation + up to 80 yes/no calls per weight: 2 models × 200 weights ≈ 32k calls."""
        return cls(corpus_chars=30_000_000, ctx=128, d_model=256, n_layer=4, n_head=16, d_mlp=1024,
                   positional_embedding=False, steps=20_000, batch=64, lr=0.01, target_fraction=1 / 64,
                   eval_every=200, val_windows=500, explain_windows=2000, score_windows=2000, n_weights=1000,
                   n_ablation_weights=50, ablation_windows=8, control_steps=150, backend="openai",
                   model="gpt-4.1", llm_weights=200)


# --------------------------------------------------------------------------- helpers

def _model_config(config: Config, vocab_size: int) -> SparseGPTConfig:
    return SparseGPTConfig(vocab_size=vocab_size, ctx=config.ctx, d_model=config.d_model, n_layer=config.n_layer,
                           n_head=config.n_head, d_head=config.d_head, d_mlp=config.d_mlp,
                           activation_topk_fraction=config.activation_topk_fraction,
                           positional_embedding=config.positional_embedding)


def _settings(config: Config) -> SelectionSettings:
    return SelectionSettings(quantile=config.quantile, rel_floor=config.rel_floor, n_examples=config.n_examples,
                             min_positives=config.min_positives, tau=config.tau, ablation=config.ablation)


def _corpus(config: Config, seed: int):
    text, info = stdlib_source_text(config.corpus_chars)
    return make_corpus(text, config.ctx, {"val": config.val_windows, "explain": config.explain_windows,
                                          "score": config.score_windows, "train": -1}, seed, info=info)


def _train_pair(config: Config, corpus, seed: int, device: str = "cpu") -> dict:
    """Sparse model, then the dense twin stopped at the sparse validation loss (same init seed)."""
    mc = _model_config(config, corpus.vocab.size)
    torch.manual_seed(seed)
    sparse = SparseGPT(mc).to(device)
    tc = TrainConfig(steps=config.steps, batch=config.batch, lr=config.lr, target_fraction=config.target_fraction,
                     min_per_neuron=config.min_per_neuron, schedule=config.schedule, eval_every=config.eval_every)
    rs = train_lm(sparse, corpus.split("train"), corpus.split("val"), tc, seed)
    torch.manual_seed(seed)
    dense = SparseGPT(mc).to(device)
    td = TrainConfig(steps=int(config.dense_max_steps_factor * config.steps), batch=config.batch, lr=config.lr,
                     target_fraction=1.0, eval_every=config.eval_every, stop_at_loss=rs.val_loss)
    rd = train_lm(dense, corpus.split("train"), corpus.split("val"), td, seed)
    return {"sparse": sparse, "dense": dense, "sparse_run": rs, "dense_run": rd}


# --------------------------------------------------------------------------- claim groups

def _training(config: Config, pairs: dict, metrics: dict) -> list:
    viol = sum(p["sparse_run"].invariant_violations for p in pairs.values())
    rms = np.concatenate([p["sparse_run"].grad_rms + p["dense_run"].grad_rms for p in pairs.values()])
    fr = pairs[next(iter(pairs))]["sparse_run"].fractions
    expected = [kept_fraction(s, config.steps, config.target_fraction, shape=config.schedule)
                for s in range(config.steps)]
    s0 = 0.01 * config.steps
    dense_until = sum(1 for i, f in enumerate(fr) if i < s0 and f == 1.0)
    reach = next(i for i, f in enumerate(fr) if f == config.target_fraction)
    shape_ok = (fr == expected and all(b <= a for a, b in zip(fr, fr[1:]))
                and dense_until == math.ceil(s0) and all(f < 1.0 for i, f in enumerate(fr) if i > s0)
                and reach == math.ceil(0.5 * config.steps))
    nnz = {}
    for p in pairs.values():
        for name, m in p["sparse"].matrices().items():
            nnz.setdefault(name, []).append(float((m.weight != 0).float().mean()))
    gaps = {s: p["dense_run"].val_loss - p["sparse_run"].val_loss for s, p in pairs.items()}
    metrics["training"] = {str(s): {"sparse_val_loss": p["sparse_run"].val_loss,
                                    "dense_val_loss": p["dense_run"].val_loss,
                                    "dense_steps": p["dense_run"].steps_run,
                                    "sparse_steps": p["sparse_run"].steps_run,
                                    "sparse_s_per_step": p["sparse_run"].seconds_per_step,
                                    "dense_s_per_step": p["dense_run"].seconds_per_step,
                                    "sparse_history": p["sparse_run"].history,
                                    "dense_history": p["dense_run"].history} for s, p in pairs.items()}
    metrics["kept_fraction_per_matrix"] = {k: float(np.mean(v)) for k, v in nnz.items()}
    chk = dict(kind="check", source="inferred: invariants of the top-k training recipe of Gao et al. 2025 as "
               "described by an open re-implementation")
    why = "an exact property of the implementation; any violation is a bug"
    claims = [
        C.at_most("sparsity_invariant_every_step", "After every optimiser step each matrix of the sparse model "
                  "has exactly max(⌈f_t·size⌉, rows·j) nonzeros (f_t the scheduled kept fraction, j = "
                  f"{config.min_per_neuron} per output neuron); violations over all steps, matrices and seeds.",
                  measured=viol, bound=0, reason=why, paper_value="0", domain=NONNEG, **chk),
        C.check("kept_fraction_schedule", "The kept fraction is 1 for the first 1 % of steps, decreases "
                "monotonically after it and reaches the target at 50 % of training.",
                measured={"dense_steps": dense_until, "target_reached_at": reach, "steps": config.steps},
                holds=bool(shape_ok), tolerance="equal to the schedule at every step, monotone, 1 at every step < "
                "0.01·steps and < 1 after, target first reached at step ⌈0.5·steps⌉", reason=why,
                tuned_after_look="the first version of this check counted the step where the anneal starts "
                                 "(fraction still exactly 1) as dense and failed by one step; the counting was "
                                 "fixed, not the schedule",
                **chk),
        C.at_most("gradient_rms_normalised", "The gradient is rescaled to RMS 1 at every step (max |RMS − 1|).",
                  measured=float(np.max(np.abs(rms - 1.0))), bound=1e-4,
                  reason="float32 rounding of a sum over ~10^5 squares", paper_value="1", domain=NONNEG, **chk),
    ]
    claims.append(C.over_seeds([C.at_most("dense_twin_matched_loss", "The dense twin is stopped at the sparse "
                                          "model's validation loss (|dense − sparse|, nats/token).",
                                          measured=abs(gaps[s]), bound=0.05, kind="check",
                                          source="inferred: the abstract calls the control the equivalent "
                                                 "dense model; we match validation loss",
                                          reason="one evaluation interval of dense training moves the loss by "
                                                 "a few hundredths of a nat at this scale; 0.05 fixed before "
                                                 "the first run", paper_value="equivalent dense model",
                                          domain=NONNEG)
                                for s in pairs], list(pairs)))
    return claims


def _planted(config: Config, corpus, ctx: RunContext, metrics: dict) -> list:
    from scipy.stats import spearmanr

    V = corpus.vocab
    enc = lambda s: int(V.encode(s)[0])
    uni = np.bincount(corpus.split("train").reshape(-1), minlength=V.size)
    text, info = stdlib_source_text(config.corpus_chars)
    pc = make_corpus(text, config.ctx, {"explain": config.planted_windows, "score": config.planted_windows,
                                        "rest": -1}, ctx.seed + 17)
    model = PlantedModel(V.size, enc(":"), enc(")"), enc("\n"), unigram=uni)
    out = {}
    for shuffled in (False, True):
        rep = explain_weights(model, [model.planted], pc.split("explain"), pc.split("score"), SymbolicExplainer(),
                              SymbolicScorer(), V, _settings(config), seed=ctx.seed, shuffle_control=shuffled)[0]
        out["shuffled" if shuffled else "planted"] = rep.to_dict()
    sw = pc.split("score")
    A_all = attributions(model, capture(model, sw, ["readout"]), [model.planted])[:, :, 0]
    fires = np.flatnonzero((A_all != 0).any(1))
    quiet = np.flatnonzero(~(A_all != 0).any(1))
    pick = np.r_[fires[: 3 * config.ablation_windows + 3], quiet[: config.ablation_windows + 1]]  # both kinds
    w, A = sw[pick], A_all[pick]
    dl = ablation_effects(model, w, model.planted)
    rho = float(spearmanr(-A.ravel(), dl.ravel()).statistic)
    metrics["planted"] = {**out, "attribution_ablation_spearman": rho}
    src = "inferred: a hand-built model whose weight matters exactly when ')' is followed by ':'"
    p, s = out["planted"], out["shuffled"]
    return [
        C.at_least("planted_weight_explained", "A planted weight (acting only on ':' after ')') is explained and "
                   f"verified on held-out contexts: '{p['explanation']}'.", measured=p["score"], bound=0.95,
                   kind="check", source=src, reason="the weight's role is a single token conjunction; a "
                   "working pipeline recovers it almost perfectly, 0.95 leaves room for threshold effects",
                   paper_value=None, domain=FRACTION,
                   note="the account may be coarser than the planted rule (e.g. any ':' rather than ':' after "
                        "')'): held-out negatives are random tokens where the weight does not matter, and few of "
                        "them are a ':' elsewhere, so detection scoring cannot tell the two apart (a limit of "
                        "balanced yes/no verification, noted in review)"),
        C.at_most("shuffled_control_not_explained", "The same weight with its importance shuffled over tokens "
                  f"is not verified: '{s['explanation']}'.", measured=s["score"], bound=0.6, kind="check",
                  source=src, reason="chance is 0.5; with 2×40 held-out items the balanced accuracy of a "
                  "random predicate has s.d. ≈ 0.06, so 0.6 is above chance by under two s.d.", paper_value=None,
                  domain=FRACTION),
        C.at_least("planted_attribution_matches_ablation", "On the planted model, gradient × weight ranks "
                   "tokens like exact per-position zero ablation (Spearman of −A and ΔL).", measured=rho,
                   bound=0.99, kind="check", source=src, reason="the loss is smooth in the planted weight and "
                   "the ablation changes one logit by 2 nats; the rank order of the first-order estimate should "
                   "be nearly exact", paper_value=None, domain=DIFF),
    ]


def _median_rank_agreement(model, windows: np.ndarray, refs: list) -> dict:
    """Per weight: Spearman of −A and exact per-position ablation ΔL (zero and mean), in float64."""
    from scipy.stats import ConstantInputWarning, spearmanr

    model = copy.deepcopy(model).double()   # float64: one weight's ΔL is near float32 resolution
    cache = capture(model, windows, sorted({r.module for r in refs}))
    A0 = attributions(model, cache, refs, "zero")
    Am = attributions(model, cache, refs, "mean")
    rhos, rhos_m, agree = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantInputWarning)        # undefined rho: counted below
        for k, r in enumerate(refs):
            dz = ablation_effects(model, windows, r, "zero")
            dm = ablation_effects(model, windows, r, "mean", mean_x=cache.mean_x[r.module])
            rhos.append(float(spearmanr(-A0[:, :, k].ravel(), dz.ravel()).statistic))
            rhos_m.append(float(spearmanr(-Am[:, :, k].ravel(), dm.ravel()).statistic))
            agree.append(float(spearmanr(np.abs(dz).ravel(), np.abs(dm).ravel()).statistic))
    undefined = int(sum(not np.isfinite(x) for x in rhos))
    ok = [x for x in rhos if np.isfinite(x)]
    return {"weights": [str(r) for r in refs], "spearman_zero": rhos, "spearman_mean": rhos_m,
            "zero_vs_mean_ablation_spearman": agree, "undefined_spearman": undefined,
            "median": float(np.median(ok)) if ok else float("nan")}


def _attribution_vs_ablation(config: Config, corpus, pairs: dict, reports: dict, metrics: dict) -> list:
    per_seed, rows = [], {}
    w = corpus.split("score")[: config.ablation_windows]
    for s, p in pairs.items():
        cand = reports[s]["sparse"]["refs_ok"]
        pick = np.random.default_rng([s, 11]).choice(len(cand), min(len(cand), config.n_ablation_weights),
                                                     replace=False)
        ok = [cand[i] for i in np.sort(pick)]                 # spread over matrices, not the first ones
        row = _median_rank_agreement(p["sparse"], w, ok)
        rows[str(s)] = row
        per_seed.append(C.at_least("attribution_agrees_with_ablation", "On the trained sparse models, gradient × "
                                   "weight attribution ranks tokens like exact per-position zero ablation "
                                   "(median Spearman of −A and ΔL over checked weights).",
                                   measured=row["median"], bound=0.8, kind="reconstruction", object="real",
                                   source="inferred: the pipeline's importance is a first-order estimate of "
                                          "ablation; AbsTopK makes the model piecewise, so it may break",
                                   reason="0.8 fixed before the first run as 'strong rank agreement'; the "
                                          "planted model gives the noise-free reference", paper_value=None,
                                   domain=DIFF,
                                   note=f"{row['undefined_spearman']} weight(s) with no variation in these windows "
                                        "(Spearman undefined) left out.",
                                   tuned_after_look="changed after the first run (median 0.50): it counted "
                                        "undefined Spearmans as 0, took the first weights in matrix order (all "
                                        "attention q) and ran in float32; now random weights, float64"))
    # control: the same recipe without activation sparsity (AbsTopK off), to locate a disagreement
    s0 = next(iter(pairs))
    torch.manual_seed(s0)
    ctrl = SparseGPT(dataclasses.replace(_model_config(config, corpus.vocab.size), activation_topk_fraction=1.0))
    ctrl = ctrl.to(next(pairs[s0]["sparse"].parameters()).device)
    train_lm(ctrl, corpus.split("train"), corpus.split("val"),
             TrainConfig(steps=config.control_steps, batch=config.batch, lr=config.lr,
                         target_fraction=config.target_fraction, min_per_neuron=config.min_per_neuron,
                         schedule=config.schedule, eval_every=config.control_steps), s0)
    refs = sample_nonzero_weights(ctrl, config.n_ablation_weights, np.random.default_rng([s0, 12]))
    row = _median_rank_agreement(ctrl, w, refs)
    rows["control_no_abstopk"] = row
    metrics["attribution_vs_ablation"] = rows
    return [C.over_seeds(per_seed, list(pairs)),
            C.at_least("attribution_agrees_without_abstopk", "Control: in a weight-sparse model trained without "
                       "activation sparsity (AbsTopK off, otherwise the same recipe), attribution ranks tokens "
                       "like exact per-position ablation (median Spearman).", measured=row["median"], bound=0.95,
                       kind="check", source="inferred: for a smooth model the first-order estimate is accurate "
                       "for one small weight", reason="removing one weight of a smooth network is a small "
                       "perturbation; 0.95 allows for curvature", paper_value=None, domain=DIFF,
                       note="if this holds, a disagreement above comes from AbsTopK's discontinuities, not from "
                            "the code",
                       tuned_after_look="the control was added after attribution_agrees_with_ablation failed a "
                                        "first run, to locate the cause")]


def _fractions(config: Config, corpus, pairs: dict, ctx: RunContext, metrics: dict) -> tuple[list, dict]:
    st = _settings(config)
    reports, summary = {}, {}
    for s, p in ctx.track(list(pairs.items()), "explain weights (sparse, dense)"):
        reports[s] = {}
        for kind in ("sparse", "dense"):
            model = p[kind]
            refs = sample_nonzero_weights(model, config.n_weights, np.random.default_rng([s, 5]))
            reuse: dict = {}          # importances and dead-weight rechecks, shared with the shuffled control
            reps = explain_weights(model, refs, corpus.split("explain"), corpus.split("score"), SymbolicExplainer(),
                                   SymbolicScorer(), corpus.vocab, st, seed=s, reuse=reuse)
            summ = interpretable_fraction(reps)
            reports[s][kind] = {"reports": reps, "summary": summ,
                                "refs_ok": [r for r, rep in zip(refs, reps) if rep.status == "ok"]}
            if kind == "sparse" and not ctx.confirmation:     # the shuffled control was not tuned after a look
                shuf = explain_weights(model, refs, corpus.split("explain"), corpus.split("score"),
                                       SymbolicExplainer(), SymbolicScorer(), corpus.vocab, st, seed=s,
                                       shuffle_control=True, reuse=reuse)
                reports[s]["shuffled"] = interpretable_fraction(shuf)
        summary[str(s)] = {k: {"fraction": reports[s][k]["summary"].fraction,
                               "interval": reports[s][k]["summary"].interval,
                               "by_status": reports[s][k]["summary"].by_status,
                               "mean_faithfulness_interpretable": reports[s][k]["summary"].mean_faithfulness}
                           for k in ("sparse", "dense")}
        if "shuffled" in reports[s]:
            summary[str(s)]["shuffled_sparse_fraction"] = reports[s]["shuffled"].fraction
    metrics["interpretable_fraction"] = summary
    examples = [(r.weight, r.explanation, round(r.score, 3), round(r.faithfulness, 3))
                for r in reports[next(iter(reports))]["sparse"]["reports"] if r.interpretable][:8]
    metrics["example_explanations"] = examples
    # interpretable but unfaithful (coverage < 0.5) among interpretable weights, pooled
    interp = [r for s in reports for k in ("sparse", "dense") for r in reports[s][k]["reports"] if r.interpretable]
    metrics["interpretable_with_faithfulness_below_half"] = (
        float(np.mean([r.faithfulness < 0.5 for r in interp])) if interp else float("nan"))

    diffs = [reports[s]["sparse"]["summary"].fraction - reports[s]["dense"]["summary"].fraction for s in reports]
    mean, iv = C.mean_interval(diffs, domain=DIFF)
    one = 1.0 / config.n_weights     # one weight of the sample: the resolution of a fraction
    # report-only (added in review): the fraction among weights that reached scoring (status ok),
    # i.e. without dead and rare weights, which the dense twin has more of
    scored = {str(s): {k: _scored_fraction(reports[s][k]["summary"]) for k in ("sparse", "dense")} for s in reports}
    metrics["interpretable_fraction_among_scored"] = scored
    diffs_scored = [v["sparse"] - v["dense"] for v in scored.values()]
    fs = [reports[s]["sparse"]["summary"].fraction for s in reports]
    fd = [reports[s]["dense"]["summary"].fraction for s in reports]
    shuf = [reports[s]["shuffled"].fraction for s in reports if "shuffled" in reports[s]]
    claims = [
        C.at_least("sparse_more_interpretable", "A larger fraction of nonzero weights is interpretable in the "
                   "weight-sparse model than in its dense twin at matched loss (same architecture with AbsTopK "
                   "activations, no weight sparsity; mean over seeds of sparse − dense fraction; sparse "
                   f"{np.mean(fs):.1%}, dense {np.mean(fd):.1%}).", measured=mean, interval=iv, bound=one,
                   kind="paper", source="abstract (17-35 % of nonzero weights on sparse "
                   "transformers vs 5-9 % on the equivalent dense model)",
                   reason=f"the sign only, over {len(diffs)} seeds (tiny models, symbolic explainer), on the "
                          "Student-t 95 % interval of the mean difference; 'larger' means by at least one weight "
                          f"of the {config.n_weights} sampled (1/{config.n_weights}), so equal fractions (e.g. both "
                          "0 from a broken scorer) do not hold",
                   paper_value=f"{PAPER_SPARSE} vs {PAPER_DENSE}", domain=DIFF, object="real",
                   control="the dense twin: same architecture, initialisation seed, data and pipeline without "
                           "weight sparsity, stopped at the sparse model's validation loss, on the same seeds; "
                           "judged on the paired sparse − dense difference",
                   note=f"τ = {config.tau} fixed before looking; object 'real': tiny models trained here on real "
                        "Python standard-library source (the paper's models are trained on Python code too); per-seed differences {[round(d, 3) for d in diffs]}. "
                        "Dead, attribution-blind and rare weights count as not interpretable (the denominator is "
                        "every sampled nonzero weight); among weights that reached scoring only, the per-seed "
                        f"differences are {[round(d, 3) for d in diffs_scored]} (report-only).",
                   tuned_after_look="the rule was 'interval ≥ 0' at first; changed in review to strictly larger "
                                    "(one weight in the sample) after identical fractions were seen to hold"),
        C.not_checkable("paper_fractions", "17–35 % of nonzero weights of the two sparse models are interpretable "
                        "vs 5–9 % for the dense twin and Pythia-70m.", paper_value=f"{PAPER_SPARSE} vs {PAPER_DENSE}",
                        kind="paper", source="abstract", object="real",
                        reason="needs the paper's sparse checkpoints and Pythia-70m weights (neither is available "
                               "offline) and the paper's frontier-grade LLM explainer and scorer (the installed "
                               "smollm2-135m is far smaller: llm_sparse_vs_dense); the percentages depend on them",
                        full_scale="4-layer d_model 256 sparse/dense twins trained 20k steps, 1000 weights per "
                                   "model through the symbolic explainer and 200 per model explained and scored "
                                   "by an OpenAI-compatible LLM (llm_sparse_vs_dense); a user's checkpoint "
                                   "(ours or a Hugging Face folder such as Pythia-70m) can be passed to the "
                                   "library's explain_weights"),
    ]
    if shuf:                      # not in a confirmation run (the control was not tuned after a look)
        claims.append(C.at_most("shuffled_control_trained", "With each weight's importance shuffled over tokens, "
                                "almost no weight of the sparse models verifies (mean fraction over seeds).",
                                measured=float(np.mean(shuf)), bound=0.05, kind="check",
                                source="inferred: a null control for the verification step",
                                reason="with τ = 0.8 and 2×40 items a random predicate passes with probability "
                                       "well under 1 %; 0.05 allows for a few chance passes", paper_value=None,
                                domain=FRACTION))
    return claims, reports


def _scored_fraction(summary) -> float:
    """Interpretable share of the weights that reached scoring (status ``ok``); NaN if none did."""
    ok = summary.by_status.get("ok", 0)
    return summary.interpretable / ok if ok else float("nan")


class _CountedBackend:
    """Wraps a chat backend and counts its calls and the calls that raised (for :class:`BackendUse`)."""

    def __init__(self, backend, what: str, model: str = "") -> None:
        self._backend, self.what, self.model = backend, what, model
        self.name = getattr(backend, "name", type(backend).__name__)
        self.calls = self.failed = self.prompt_tokens = self.completion_tokens = 0

    def identity(self) -> dict:
        """The wrapped backend's identity."""
        ident = getattr(self._backend, "identity", None)
        return ident() if callable(ident) else {"kind": self.name}

    def chat(self, messages, params=None):
        """One call to the wrapped backend, counted (a raised error counts as failed)."""
        from neurips26.backends import ChatParams

        self.calls += 1
        try:
            reply = self._backend.chat(messages, params or ChatParams())
        except Exception:
            self.failed += 1
            raise
        self.prompt_tokens += int(getattr(reply, "prompt_tokens", 0) or 0)
        self.completion_tokens += int(getattr(reply, "completion_tokens", 0) or 0)
        return reply

    def use(self) -> C.BackendUse:
        """Calls made and failed so far (at most 5 % may fail before the run is marked failed)."""
        return C.BackendUse(calls=self.calls, failed=self.failed, max_failed_fraction=0.05, what=self.what,
                            prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
                            model=self.model)


def _make_backend(config: Config, cache_dir=None, device: str = "cpu"):
    """The configured chat backend after one preflight call (``None`` for ``backend=none``;
    ``backend=auto`` is resolved first: the installed local model, else none).

    Raises:
        ValueError / BackendError: a missing model folder, or an endpoint that does not answer one
            short call (one line: kind, URL or folder, model, what failed).
    """
    config = resolve_auto_backend(config)
    if config.backend == "none":
        return None
    from neurips26.backends import describe, make_backend, preflight

    backend = make_backend(config.backend, model=config.model, base_url=config.base_url,
                           model_path=config.model_path, cache_dir=cache_dir, device=device)
    preflight(backend)
    return _CountedBackend(backend, describe(backend), model_label(config))


def preflight(config: Config) -> None:
    """Before any run: the chat backend (when configured) is built and answers one short call.

    Raises:
        ValueError / BackendError: as :func:`_make_backend`, in one line.
    """
    _make_backend(config)


def _llm_arm(config: Config, corpus, pairs: dict, backend, metrics: dict) -> list:
    statement = ("With an LLM explainer and scorer, the sparse model has a larger interpretable fraction than "
                 "its dense twin (first seed, difference of fractions).")
    kw = dict(kind="reconstruction", source="inferred: the abstract's LLM pipeline at our model scale", object="real")
    if backend is None:
        return [C.not_checkable("llm_sparse_vs_dense", statement, paper_value=f"{PAPER_SPARSE} vs {PAPER_DENSE}",
                                reason=no_model_reason(config, "no chat model configured (backend=none; set "
                                                       "backend=auto or transformers with model=smollm2-135m, or "
                                                       "backend=openai)"),
                                full_scale="an OpenAI-compatible endpoint (or a local transformers folder) "
                                           "explains and scores llm_weights weights per model", **kw)]
    statement += f" Explainer and scorer: {backend.model or backend.name}."
    s = next(iter(pairs))
    res = {}
    for kind in ("sparse", "dense"):
        model = pairs[s][kind]
        ex, sc = LLMExplainer(backend, max_tokens=config.max_tokens), LLMScorer(backend)
        refs = sample_nonzero_weights(model, config.llm_weights, np.random.default_rng([s, 9]))
        reps = explain_weights(model, refs, corpus.split("explain"), corpus.split("score"), ex, sc, corpus.vocab,
                               _settings(config), seed=s)
        try:
            summ = interpretable_fraction(reps)
            frac = summ.fraction
        except ValueError:
            frac = float("nan")
        res[kind] = {"fraction": frac, "explainer_failures": ex.failures.counts,
                     "by_status": {st: sum(r.status == st for r in reps) for st in sorted({r.status for r in reps})},
                     "scorer_failures": sc.failures.counts,
                     "statuses": [r.status for r in reps], "explanations": [r.explanation for r in reps][:5]}
    use = backend.use()
    metrics["llm_arm"] = {"backend": backend.name, "model": use.model, "model_sha256": config.model_sha256,
                          "calls": use.calls, "failed_calls": use.failed, "prompt_tokens": use.prompt_tokens,
                          "completion_tokens": use.completion_tokens, **res}
    return C.unless_backend_ok([llm_claim(config, res, statement, **kw)], use)


def llm_claim(config: Config, res: dict, statement: str, **kw) -> C.Claim:
    """The ``llm_sparse_vs_dense`` claim from the two arms' results.

    Args:
        res: ``{"sparse": arm, "dense": arm}``, each arm with ``"fraction"`` (interpretable fraction,
            NaN when no weight reached a verdict), ``"by_status"`` (weights per pipeline status) and
            ``"explainer_failures"``.
        kw: ``kind`` and ``source`` of the claim.

    Returns:
        not checkable when an arm has fewer than ``config.llm_min_usable`` usable explanations
        (weights explained and scored: status ``ok``), naming the counts per arm — a fraction of 0
        over dead, rare or unexplained weights says nothing about the explainer; otherwise the sign
        check (difference > 0 holds; equal fractions do not).
    """
    usable = {k: int(res[k]["by_status"].get("ok", 0)) for k in ("sparse", "dense")}
    counts = (f"usable explanations (explained and scored): sparse {usable['sparse']}, dense {usable['dense']}; "
              f"statuses: sparse {res['sparse']['by_status']}, dense {res['dense']['by_status']}; explainer "
              f"failures: sparse {res['sparse']['explainer_failures']}, dense {res['dense']['explainer_failures']}")
    pv = f"{PAPER_SPARSE} vs {PAPER_DENSE}"
    if min(usable.values()) < config.llm_min_usable:
        return C.not_checkable("llm_sparse_vs_dense", statement, paper_value=pv,
                               reason=f"fewer than llm_min_usable = {config.llm_min_usable} usable explanations in "
                                      f"an arm ({counts}): a fraction over weights the model never explained is "
                                      "not a measurement of interpretability",
                               full_scale="an explainer that follows the reply format (a larger model, or more "
                                          "weights: llm_weights) gives at least llm_min_usable per arm", **kw)
    diff = res["sparse"]["fraction"] - res["dense"]["fraction"]
    return C.check("llm_sparse_vs_dense", statement, measured=diff, holds=bool(diff > 0) if np.isfinite(diff) else None,
                   tolerance="difference > 0 (strictly: equal fractions, e.g. both 0, do not hold); not checkable "
                             f"below {config.llm_min_usable} usable explanations per arm",
                   reason=f"sign only, {config.llm_weights} weights per model (no interval: one seed; explanation "
                          "and scoring failures are counted apart, out of the denominator)",
                   paper_value=pv, note=counts + ".",
                   tuned_after_look="the rule was 'difference ≥ 0' at first; changed in review after it held for "
                                    "a scorer that always says no (0 vs 0)", **kw)


def _figures(config: Config, pairs: dict, reports: dict, ctx: RunContext) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    taus = np.linspace(0.5, 1.0, 26)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    seeds = list(reports)
    x = np.arange(len(seeds))
    for k, (kind, col) in enumerate((("sparse", "C0"), ("dense", "C1"))):
        f = [reports[s][kind]["summary"].fraction for s in seeds]
        lo = [reports[s][kind]["summary"].interval[0] for s in seeds]
        hi = [reports[s][kind]["summary"].interval[1] for s in seeds]
        axes[0].bar(x + (k - 0.5) * 0.35, f, 0.35, color=col, label=kind,
                    yerr=[np.subtract(f, lo), np.subtract(hi, f)], capsize=3)
        curves = [[np.mean([r.status == "ok" and np.isfinite(r.score) and r.score >= t
                            for r in reports[s][kind]["reports"] if r.status not in FAILED])
                   for t in taus] for s in seeds]
        m = np.mean(curves, axis=0)
        axes[1].plot(taus, m, color=col, label=kind)
    axes[0].set_xticks(x, [f"seed {s}" for s in seeds])
    axes[0].set_ylabel(f"interpretable fraction (τ = {config.tau})")
    axes[0].legend()
    axes[0].set_title("Sparse vs dense twin at matched loss")
    axes[1].axvline(config.tau, color="k", ls=":")
    axes[1].set_xlabel("threshold τ on held-out balanced accuracy")
    axes[1].set_ylabel("fraction of sampled weights ≥ τ")
    axes[1].legend()
    axes[1].set_title("Fraction over the threshold (mean over seeds)")
    ctx.save_figure("interpretable_fraction", fig, caption=(
        "Left: fraction of sampled nonzero weights whose symbolic account verifies on held-out contexts "
        "(balanced accuracy ≥ τ), sparse model vs dense twin, per seed with Clopper–Pearson intervals. Right: the "
        "same fraction as τ varies. The abstract predicts the sparse model higher (17–35 % vs 5–9 % on its "
        "models)."))

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), constrained_layout=True)
    for s, p in pairs.items():
        h = np.array(p["sparse_run"].history)
        d = np.array(p["dense_run"].history)
        axes[0].plot(h[:, 0], h[:, 1], "C0", alpha=0.7, label="sparse" if s == seeds[0] else None)
        axes[0].plot(d[:, 0], d[:, 1], "C1", alpha=0.7, label="dense (stopped at matched loss)"
                     if s == seeds[0] else None)
    axes[0].set_xlabel("step")
    axes[0].set_ylabel("validation loss (nats/char)")
    axes[0].legend()
    fr = pairs[seeds[0]]["sparse_run"].fractions
    axes[1].plot(fr)
    axes[1].set_yscale("log")
    axes[1].set_xlabel("step")
    axes[1].set_ylabel("kept fraction per matrix")
    ctx.save_figure("training", fig, caption=(
        "Left: validation loss of the weight-sparse models and their dense twins, each dense run stopped at the "
        "sparse model's final loss. Right: the kept-weight fraction schedule (dense until 1 %, target at 50 %)."))


def run(config: Config, ctx: RunContext) -> Outcome:
    """Run all parts and return the claims (see module docstring)."""
    metrics: dict = {}
    claims: list = []
    t0 = time.process_time()
    config = resolve_auto_backend(config)  # backend=auto: the installed local model, else none (the CLI did it already)
    # the endpoint (or local model folder) answers one call before any training; confirmation runs
    # skip the LLM arm (its one claim is a reconstruction, and three more runs of it would triple
    # the model's cost)
    backend = None if ctx.confirmation else _make_backend(config, ctx.out_dir / "llm_cache", ctx.device)
    with torch_threads(1), warnings.catch_warnings():
        corpus = _corpus(config, ctx.seed)
        metrics["corpus"] = corpus.info
        pairs = {}
        for off in ctx.track(config.seeds, "train sparse/dense twins"):
            pairs[ctx.seed * 1000 + off] = _train_pair(config, corpus, ctx.seed * 1000 + off, ctx.device)
        claims += _training(config, pairs, metrics)
        if not ctx.confirmation:          # no claim of the planted group was tuned after a look
            claims += _planted(config, corpus, ctx, metrics)
        frac_claims, reports = _fractions(config, corpus, pairs, ctx, metrics)
        claims += _attribution_vs_ablation(config, corpus, pairs, reports, metrics)
        claims += frac_claims
        if not ctx.confirmation:
            claims += _llm_arm(config, corpus, pairs, backend, metrics)
        _figures(config, pairs, reports, ctx)
    metrics["cpu_seconds"] = time.process_time() - t0
    notes = (
        "Only the abstract was read. The sparse-training recipe follows Gao et al. (2025) as described by an open "
        "re-implementation (top-k per matrix after every step, kept fraction 1 → target between 1 % and 50 % of "
        "training, ≥ 4 nonzeros per output neuron reserved first, AbsTopK 1/4, RMSNorm without gain, d_head 16, "
        "gradient RMS 1, Adam ε 0.1); attention sinks, the bigram table and bias sparsification are not "
        "implemented. Tokens are characters of the local Python standard library. The pipeline is ours: "
        "importance |A_t| = |W_ij x_tj ∂L/∂y_ti| (zero ablation by default), positives above the 98th "
        "percentile and ≥ 0.1·max, 40 positives and 40 negatives per set, explain and score windows disjoint, "
        "interpretable iff held-out balanced accuracy ≥ τ. The quick run uses the offline symbolic explainer; "
        "faithfulness is the share of attribution mass where the account says the weight matters. Embedding "
        "tables are excluded from the sampled weights.")
    return Outcome(metrics=metrics, claims=claims, notes=notes,
                   backend=backend.use() if backend is not None else None)
