"""Reproduction of paper 19 (Bit-Mask Tuning: deleting gate-projection weights instead of fine-tuning).

Only the abstract was readable. Parts (one function each): (1) mechanics of the deletion mask on a
tiny Qwen2/Llama model pre-trained in-process on two rules: only gate tensors change, the zero
count stays within the budget, the identity at start, export → re-apply bit-exact, refusal of a
mismatched base; (2) adaptation to a new behaviour under SFT, GRPO and SDFT with BMT, against
full fine-tuning (FPT) and LoRA in the same run, with forgetting of the prior task measured
throughout, over seeds; (3) update geometry of ΔW (GRPO runs); (4) mask size against the
checkpoint for an 8B-shaped config (computed). Parity with FPT at 0.5B–8B is not checkable here.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import time
import warnings
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from pydantic import Field, field_validator

from neurips26.harness import ExperimentConfig, Outcome, RunContext
from neurips26.harness import claims as C
from neurips26.harness.config import Resources
from neurips26.harness.context import torch_threads

from .codec import MaskMismatchError, apply_mask, bitwise_equal, export_mask, mask_to_bytes, size_report
from .geometry import geometry
from .mask import count_parameters
from .task import accuracy, all_pairs, answer_logits, build_model, evaluate, make_batch, pretrain
from .training import adapt, weight_deltas

ABSTRACT = "abstract"
#: Seeds never used while choosing the GRPO/SDFT settings and LoRA's learning rate (claims tuned
#: after a look): ``reproduce`` re-runs the GRPO and SDFT part on them. A confirmation run trains ONE
#: base (its own seed, not seed, seed+1, …), so the three runs use three disjoint bases and cost what
#: one three-base confirmation run cost before.
CONFIRMATION_SEEDS = (101, 102, 103)
SRC_TOY = ("inferred: a laptop analogue of the abstract's statement; the two-rule task, the budget and the "
           "training settings are ours")
MEASURES = ("effective_rank", "spectrum_drift", "principal_overlap")


class Config(ExperimentConfig):
    """Sizes of the reproduction. Quick: the pre-training, SFT, GRPO/SDFT and trl step counts are set
    by the CPU budget of the quick run (about 65 CPU-s for the development and the confirmation run
    together; they were 200, 60, 100 and 40 steps before, when the two runs took about 220 CPU-s);
    the full config sets its own."""

    family: Literal["qwen2", "llama"] = Field("qwen2", description="tiny transformers config family")
    hidden: int = Field(64, ge=16, le=8192, description="hidden size of the tiny model")
    layers: int = Field(2, ge=1, le=64, description="transformer blocks")
    ffn: int = Field(256, ge=16, le=32768, description="MLP (gate/up) width")
    pretrain_steps: int = Field(200, ge=10, le=100_000, description="pre-training steps on rules A and B (quick: "
                                "200, as before the CPU-budget cut: at 120 one of three bases did not learn rule B "
                                "and the sdft_teacher_knows_more check failed)")
    pretrain_lr: float = Field(3e-3, gt=0, le=1, description="pre-training AdamW learning rate")
    n_seeds: int = Field(3, ge=2, le=50, description="seeds (seed, seed+1, …): each pre-trains its own model")
    rho: float = Field(0.01, gt=0, lt=1, description="BMT deleted fraction of all parameters (main runs)")
    rho_small: float = Field(0.0005, gt=0, lt=1, description="the abstract's budget (0.05 %), SFT only")
    sft_steps: int = Field(20, ge=1, le=100_000, description="SFT steps (quick: set by the CPU budget)")
    rl_steps: int = Field(25, ge=1, le=100_000, description="GRPO and SDFT steps (quick: set by the CPU budget)")
    batch_size: int = Field(64, ge=2, le=65_536, description="sequences per SFT/SDFT step")
    grpo_batch: int = Field(128, ge=2, le=65_536, description="sequences per GRPO step (prompts × group)")
    group: int = Field(16, ge=2, le=1024, description="GRPO group size G")
    sdft_teacher: Literal["live", "base"] = Field("live", description="BMT's SDFT teacher: current or initial model")
    sdft_teacher_fpt: Literal["live", "base"] = Field("base", description="FPT's SDFT teacher (live collapses)")
    eval_every: int = Field(5, ge=1, le=100_000, description="steps between prior/target evaluations")
    size_rho: float = Field(0.0005, gt=0, lt=1, description="budget of the 8B-shaped size computation")
    trl_steps: int = Field(40, ge=0, le=100_000, description="steps of the trl GRPOTrainer / SDFTTrainer BMT runs "
                           "(0 skips them): 40, as before the CPU-budget cut to 10, after which trl's GRPO learned "
                           "nothing (gain 0.007); about 2 CPU-s per trl run at 40")
    model_path: str = Field("", description="a local checkpoint folder (save_pretrained) to mask at size_rho: "
                                            "mechanics and mask/checkpoint size on a real model")
    target: str = Field("mlp.gate_proj", min_length=1, description="module path suffix masked in model_path's "
                        "model (gated MLPs: mlp.gate_proj; e.g. mlp.c_fc for GPT-2)")

    @field_validator("hidden")
    @classmethod
    def _heads_fit(cls, v: int) -> int:
        # the tiny model has 4 attention heads and rotary embeddings, which need an even head size
        if v % 8:
            raise ValueError(f"hidden={v}; allowed: a multiple of 8 (4 attention heads with an even head size)")
        return v

    def resources(self) -> Resources:
        """CPU only; the full configuration is hours on a few cores."""
        big = self.hidden >= 256
        return Resources(num_cpus=2, memory_gb=4 if big else 1, hours=3 if big else 0.05, on_cpu="the toy language model, masks, LoRA and full fine-tuning (not yet moved to the device: CPU)")

    @classmethod
    def full(cls) -> "Config":
        """Larger toy scale (d = 256, 4 blocks, 10 seeds, 10× steps). The paper's models are
        Qwen2.5 / Llama-class checkpoints of 0.5B–8B at ρ = 0.05 %: set ``model_path`` to a local
        folder (e.g. Qwen2.5-0.5B) to run the mechanics and the size claim on it; training them
        with trl's GRPOTrainer / SDFTTrainer (:mod:`neurips26.bit_mask_tuning.trl_adapters`) needs
        task data and a GPU and is not run by this experiment."""
        return cls(hidden=256, layers=4, ffn=1024, pretrain_steps=2000, n_seeds=10, sft_steps=600, rl_steps=1000,
                   trl_steps=40)


# --------------------------------------------------------------------------- part 1: mechanics

def _logits(model) -> torch.Tensor:
    a, b = all_pairs()
    with torch.no_grad():
        return torch.cat([answer_logits(model, make_batch(a, b, m, "A")) for m in (None, "A", "B")])


def _mechanics(base, run, config: Config, metrics: dict) -> list:
    """Invariants on one BMT run (seed 0, SFT)."""
    from .mask import attach_bit_mask

    chk = dict(kind="check")
    exact = "an exact property of the parametrisation; any difference is a bug"
    bm = run.bit_mask
    model = run.model
    # only gate tensors change: base parameters bitwise equal, effective weights differ only in gates
    base_sd = base.state_dict()
    changed_other, changed_gate = [], 0
    for name, t in model.state_dict().items():
        key = name.replace(".parametrizations.weight.original", ".weight")
        if ".parametrizations." in name and not name.endswith(".original"):
            continue
        if not bitwise_equal(t, base_sd[key]):
            changed_other.append(key)
    eff = {n: m.weight.detach() for n, m in model.named_modules() if hasattr(m, "weight") and
           isinstance(getattr(m, "weight", None), torch.Tensor)}
    for n, w in eff.items():
        bw = dict(base.named_modules())[n].weight
        if not torch.equal(w, bw):
            if n.endswith("mlp.gate_proj"):
                changed_gate += 1
            else:
                changed_other.append(n)
    # identity at start
    fresh = copy.deepcopy(base)
    attach_bit_mask(fresh, config.rho)
    id_diff = float((_logits(fresh) - _logits(base)).abs().max())
    # export -> bytes -> apply to a fresh copy
    data = mask_to_bytes(export_mask(bm))
    applied = copy.deepcopy(base)
    apply_mask(applied, data)
    reapply = float((_logits(applied) - _logits(model)).abs().max())
    w_equal = all(bitwise_equal(dict(applied.named_modules())[n].weight, dict(model.named_modules())[n].weight)
                  for n in bm.names)
    # refusal on another base
    other = copy.deepcopy(base)
    with torch.no_grad():
        dict(other.named_modules())[bm.names[0]].weight[0, 0] += 1e-3
    try:
        apply_mask(other, data)
        refused = False
    except MaskMismatchError:
        refused = True
    state_bytes = sum(t.numel() * t.element_size() for t in base.state_dict().values())
    metrics["mechanics"] = {"k": bm.k, "N_model": bm.n_model, "N_gate": bm.n_gate, "denominator": bm.denominator,
                            "changed_non_gate_tensors": changed_other, "changed_gate_tensors": changed_gate,
                            "identity_logit_diff": id_diff, "reapply_logit_diff": reapply,
                            "mask_file_bytes": len(data), "fp32_state_dict_bytes": state_bytes}
    return [
        C.check("only_gate_tensors_change", "BMT changes only gate-projection tensors: every base parameter is "
                "bitwise unchanged and the effective weights differ from the base only in mlp.gate_proj.",
                measured={"non_gate_changed": changed_other, "gate_tensors_changed": changed_gate},
                holds=not changed_other and changed_gate > 0, tolerance="0 other tensors changed, ≥ 1 gate tensor",
                reason=exact, paper_value="only the gate projection is masked", source=ABSTRACT + " (the mask is "
                "over the gate projection, with no other modification)", **{k: v for k, v in chk.items()}),
        C.at_most("identity_at_start", "An attached, untrained mask deletes nothing: max |logit difference| to "
                  "the base model (eval mode, all 300 prompts).", measured=id_diff, bound=0.0, reason=exact,
                  paper_value=None, source="inferred: scores start at 0 and a weight is deleted only when its "
                  "score exceeds τ = 0", **chk),
        C.at_most("export_reapply_bit_exact", "Export (delta-varint-zlib indices) → apply to a fresh copy of the "
                  "base gives logits identical to the in-training masked forward (max |difference|).",
                  measured=reapply if w_equal else float("inf"), bound=0.0, reason=exact, paper_value=None,
                  source="inferred: W ⊙ (1 − Z) with Z ∈ {0, 1} equals zeroing the indexed entries",
                  note=f"mask file {len(data)} B for k = {bm.k}; gate weights byte-equal (+0.0 at deletions): "
                       f"{w_equal}", **chk),
        C.check("mismatched_base_refused", "Applying the mask to a base whose gate tensor differs (one entry "
                "+1e-3) raises MaskMismatchError (the base tensor's XXH3-64 digest by default, SHA-256 on request).", measured=refused, holds=refused,
                tolerance="an error is raised", reason="a mask is only meaningful on the base it was trained on",
                paper_value=None, source="inferred: safe re-application of an exported mask", **chk),
    ]


# --------------------------------------------------------------------------- part 2: adaptation

def _runs_for_seed(config: Config, seed: int, confirmation: bool = False) -> tuple:
    """Pre-train one base and adapt it every way the claims need (``confirmation``: only the GRPO
    and SDFT runs, which the claims tuned after a look rest on)."""
    sizes = dict(hidden=config.hidden, layers=config.layers, ffn=config.ffn)
    base = build_model(config.family, seed, **sizes)
    pretrain(base, config.pretrain_steps, 128, config.pretrain_lr, seed)
    # step-0 scores of every run are the base's (identity mask, zero LoRA update): evaluated once
    common = dict(seed=seed + 1000, eval_every=config.eval_every, start=evaluate(base))
    sft = dict(steps=config.sft_steps, batch_size=config.batch_size, **common)
    grpo = dict(steps=config.rl_steps, batch_size=config.grpo_batch, group=config.group, **common)
    sdft = dict(steps=config.rl_steps, batch_size=config.batch_size, teacher=config.sdft_teacher, **common)
    plan = {
        ("bmt", "sft"): lambda: adapt(base, "bmt", "sft", rho=config.rho, **sft),
        ("bmt_small", "sft"): lambda: adapt(base, "bmt", "sft", rho=config.rho_small, **sft),
        ("fpt", "sft"): lambda: adapt(base, "fpt", "sft", **sft),
        ("lora", "sft"): lambda: adapt(base, "lora", "sft", **sft),
        ("bmt", "grpo"): lambda: adapt(base, "bmt", "grpo", rho=config.rho, **grpo),
        ("fpt", "grpo"): lambda: adapt(base, "fpt", "grpo", **grpo),
        ("lora", "grpo"): lambda: adapt(base, "lora", "grpo", **grpo),
        ("bmt", "sdft"): lambda: adapt(base, "bmt", "sdft", rho=config.rho, **sdft),
        ("fpt", "sdft"): lambda: adapt(base, "fpt", "sdft", **{**sdft, "teacher": config.sdft_teacher_fpt}),
    }
    runs = {key: make() for key, make in plan.items() if not (confirmation and key[1] == "sft")}
    return base, runs


def _learning_claims(config: Config, seeds: list[int], per_seed: list, metrics: dict,
                     confirmation: bool = False) -> list:
    """Learning and forgetting claims over seeds. With ``confirmation`` only the claims tuned after a
    look (GRPO/SDFT settings) are built: the runs of the other claims are skipped there."""
    claims = []
    table = {}
    for (method, obj) in per_seed[0][1]:
        rows = []
        for _base, runs in per_seed:
            r = runs[(method, obj)]
            c0, cf = r.curve[0][1], r.final
            rows.append({"target_0": c0.target, "target": cf.target, "prior_0": c0.prior, "prior": cf.prior,
                         "prior_min": min(c.prior for _, c in r.curve), "max_deleted": r.max_deleted,
                         "ms_per_step": 1000 * r.seconds / max(1, r.curve[-1][0]), "trainable": r.trainable,
                         "skipped_groups": r.skipped_groups, "groups": r.groups})
        table[f"{method}/{obj}"] = rows
    metrics["runs"] = table
    scale = (f"at ρ = {config.rho:g}, {config.rho / config.rho_small:.0f}× the abstract's budget of "
             f"{config.rho_small:g} (at the abstract's budget this toy model learns nothing, so forgetting there "
             "would be trivial)")
    gain_reason = ("20 points over the base (0.10 by construction: a rule-A answer is right for rule B in 10 of "
                   "100 prompts) is far beyond binomial noise of a 100-prompt accuracy (sd ≤ 5 points); judged on "
                   "the Student-t interval of the mean gain over seeds; rule fixed before the first run")
    tuned = ("GRPO group 16 / batch 128, SDFT teacher 'live' and 100 steps were chosen after a prototype on one "
             "seed-0 base where group 8 and teacher 'base' learned little (ρ = 1 % and the 20-point rule were "
             f"fixed before); the quick run now takes {config.rl_steps} GRPO/SDFT steps, a cut set by its CPU "
             "budget, not by a verdict")
    objs = ("grpo", "sdft") if confirmation else ("sft", "grpo", "sdft")
    if not confirmation:
        metrics["budget_k"] = {"rho": per_seed[0][1][("bmt", "sft")].bit_mask.k,
                               "rho_small": per_seed[0][1][("bmt_small", "sft")].bit_mask.k}
        k = per_seed[0][1][("bmt", "sft")].bit_mask.k
        k_small = per_seed[0][1][("bmt_small", "sft")].bit_mask.k
        max_del = max(r.max_deleted for _, runs in per_seed for (m, _), r in runs.items() if m in ("bmt", "bmt_hc"))
        max_small = max(runs[("bmt_small", "sft")].max_deleted for _, runs in per_seed)
        claims.append(C.check("zero_count_within_budget", f"‖Z‖₀ never exceeds the budget k = ⌊ρ·N⌋ after any "
                              f"optimiser step, in every BMT run (k = {k} at ρ = {config.rho:g}, {k_small} at ρ = "
                              f"{config.rho_small:g}; N = all {per_seed[0][1][('bmt', 'sft')].bit_mask.n_model} "
                              "parameters).", measured={"max_deleted": max_del, "k": k, "max_deleted_small": max_small,
                                                        "k_small": k_small},
                              holds=max_del <= k and max_small <= k_small, tolerance="max ‖Z‖₀ ≤ k",
                              reason="the global top-k selection enforces it exactly", paper_value="< 0.05 % zeroed",
                              kind="check", source="inferred: the budget as a hard top-k constraint"))
    for obj, paradigm in (("sft", "supervised fine-tuning"), ("grpo", "GRPO"), ("sdft", "SDFT (on-policy "
                                                                                       "self-distillation)")):
        if obj not in objs:
            continue
        per = []
        for _base, runs in per_seed:
            r = runs[("bmt", obj)]
            gain = r.final.target - r.curve[0][1].target
            per.append(C.at_least(f"bmt_learns_{obj}", f"Deleting ≤ ρ = {config.rho:g} of the weights (gate "
                                  f"projections only) learns the new behaviour under {paradigm}: unmarked-prompt "
                                  "accuracy on the new rule rises by ≥ 0.20 over the base.", measured=gain,
                                  bound=0.20, reason=gain_reason, kind="reconstruction", object="toy", source=SRC_TOY,
                                  paper_value="matches FPT at the largest backbones", domain=(-1.0, 1.0),
                                  tuned_after_look=tuned if obj != "sft" else ""))
        claims.append(C.over_seeds(per, seeds))
    if not confirmation:
        per = []
        for _base, runs in per_seed:
            r = runs[("bmt_small", "sft")]
            per.append(C.at_least("bmt_small_budget_learns_sft", f"At the abstract's budget ρ = {config.rho_small:g} "
                                  "(here only a few dozen deletions) SFT still raises the new-rule accuracy by ≥ 0.20.",
                                  measured=r.final.target - r.curve[0][1].target, bound=0.20, reason=gain_reason,
                                  kind="reconstruction", object="toy", source=SRC_TOY, paper_value="< 0.05 % suffices at 0.5B–8B",
                                  domain=(-1.0, 1.0),
                                  note="the abstract says the gap to FPT closes with model size; a ~10⁵-parameter "
                                       "model is far below its smallest backbone, so failure here is expected"))
        claims.append(C.over_seeds(per, seeds))
    # forgetting (reconstructions: judged at 20× the abstract's budget, where the toy model learns)
    drop_reason = ("FPT's prior-task drop (accuracy before minus final, marked prompts) minus BMT's, judged on the "
                   "Student-t interval of the mean over seeds against 0 (rule fixed before the first run)")
    quote = " The abstract: BMT \"forgets substantially less than FPT\"."
    for obj in objs:
        per = []
        for _base, runs in per_seed:
            b, f = runs[("bmt", obj)], runs[("fpt", obj)]
            db = b.curve[0][1].prior - b.final.prior
            dfp = f.curve[0][1].prior - f.final.prior
            per.append(C.at_least(f"forgets_less_than_fpt_{obj}", f"BMT forgets less than FPT under {obj.upper()} "
                                  f"(same steps, {scale}): FPT's prior-task accuracy drop minus BMT's is ≥ 0.",
                                  measured=dfp - db, bound=0.0, reason=drop_reason, kind="reconstruction", object="toy",
                                  source=SRC_TOY, paper_value="substantially less forgetting", domain=(-2.0, 2.0),
                                  note=f"drops BMT {db:.2f}, FPT {dfp:.2f}; new-rule accuracy BMT "
                                       f"{b.final.target:.2f}, FPT {f.final.target:.2f}." + quote,
                                  tuned_after_look=("" if obj == "sft" else tuned + (
                                      "; FPT's SDFT teacher is the frozen base (set after a first run where FPT "
                                      "with the live teacher moved its own teacher and collapsed to 0 accuracy); "
                                      "BMT's is live" if obj == "sdft" else ""))))
        claims.append(C.over_seeds(per, seeds))
    if confirmation:
        return claims
    retain, drift = [], []
    for _base, runs in per_seed:
        b, f = runs[("bmt", "sft")], runs[("fpt", "sft")]
        retain.append(C.at_most("bmt_retains_prior_throughout", f"BMT ({scale}) retains prior-task accuracy "
                                "throughout SFT: the largest drop below the starting accuracy along the training "
                                "curve is ≤ 0.05.",
                                measured=b.curve[0][1].prior - min(c.prior for _, c in b.curve), bound=0.05,
                                reason="'retaining' read as within 5 points of the starting accuracy (the accuracy is "
                                       "exact over all 200 marked prompts), judged on the Student-t interval of the "
                                       "mean over seeds; fixed before the first run",
                                kind="reconstruction", object="toy", source=SRC_TOY, paper_value="retains", domain=(0.0, 1.0),
                                note="The abstract: BMT retains \"prior-task accuracy throughout training\"."))
        drift.append(C.at_least("fpt_drifts", "FPT measurably drifts: its largest prior-task drop along SFT is "
                                "≥ 0.05.", measured=f.curve[0][1].prior - min(c.prior for _, c in f.curve),
                                bound=0.05, reason="5 points, the same reading as for retaining (exact accuracy "
                                "over 200 prompts), on the interval of the mean over seeds; fixed before the first "
                                "run", kind="reconstruction", object="toy",
                                source=ABSTRACT + " (where FPT measurably drifts)",
                                paper_value="drifts", domain=(0.0, 1.0),
                                note="FPT has no budget, so this one does not depend on ρ. Kind 'reconstruction' "
                                     "(was paper): in our two-rule toy the new rule overwrites the unmarked default "
                                     "that full fine-tuning is free to change, so FPT drifting is how the toy was "
                                     "built, with no control that could make it fail; it checks that the toy has "
                                     "something to forget."))
    claims.append(C.over_seeds(retain, seeds))
    claims.append(C.over_seeds(drift, seeds))
    matched = []
    for _base, runs in per_seed:
        b, f = runs[("bmt", "sft")], runs[("fpt", "sft")]
        goal = b.final.target
        step, dfp, reached = _drop_at_target(f.curve, goal)
        db = b.curve[0][1].prior - b.final.prior
        matched.append(C.at_least("forgets_less_at_matched_accuracy_sft", f"At matched new-rule accuracy BMT "
                                  f"({scale}) still forgets less than FPT under SFT: FPT's prior-task drop where its "
                                  "new-rule accuracy first reaches BMT's final one (interpolated between "
                                  "evaluations), minus BMT's final drop, is ≥ 0.",
                                  measured=dfp - db, bound=0.0, kind="reconstruction", object="toy", source=SRC_TOY,
                                  reason="FPT learns faster, so equal steps favour BMT; this compares at equal "
                                         "progress on the new rule, on the Student-t interval of the mean over seeds",
                                  paper_value="substantially less forgetting", domain=(-2.0, 2.0),
                                  note=f"FPT reaches BMT's {goal:.2f} at step ≈ {step:.1f} (prior accuracy linearly "
                                       f"interpolated between evaluations every {config.eval_every} steps"
                                       f"{'' if reached else '; FPT never reached it: its final drop is used'}); "
                                       f"drops BMT {db:.2f}, FPT {dfp:.2f}." + quote,
                                  tuned_after_look="the first evaluation at or above the goal was used before; "
                                                   "changed in review after the first runs to linear interpolation "
                                                   "(the first evaluation overshoots the goal and so overstates "
                                                   "FPT's drop)"))
    claims.append(C.over_seeds(matched, seeds))
    # teacher = the base shown marker B (marked-B → rule B); student = the base without it (unmarked → rule B)
    gap = [accuracy(base, "B", "B") - accuracy(base, None, "B") for base, _ in per_seed]
    claims.append(C.check("sdft_teacher_knows_more", "SDFT has something to distil: the base model shown the "
                          "privileged context (marker B) answers the new rule, the student without it does not "
                          "(teacher accuracy − student accuracy ≥ 0.5 in every seed).",
                          measured=[round(g, 3) for g in gap], holds=all(g >= 0.5 for g in gap),
                          tolerance="marked-B accuracy − unmarked rule-B accuracy ≥ 0.5 in every seed",
                          reason="SDFT needs a teacher better than the student (its authors report failure when "
                                 "in-context learning is weak)", kind="check",
                          source="inferred: SDFT distils a context-conditioned teacher (Shenfeld et al. 2026)"))
    claims.append(C.not_checkable("parity_with_fpt_at_scale", "Zeroing < 0.05 % of the weights matches FPT "
                                  "accuracy at the largest backbones under GRPO, SFT and SDFT.", paper_value="parity",
                                  reason="needs 0.5B–8B checkpoints, real benchmarks and GPUs; the one installed local "
                                         "model (smollm2-135m) is below that range",
                                  full_scale="no automated run; trl_adapters.bmt_grpo_trainer / bmt_sdft_trainer "
                                  "train a ρ = 0.0005 mask on a local Qwen2.5/Llama checkpoint with trl's trainers",
                                  kind="paper", source=ABSTRACT, object="real"))
    claims.append(C.not_checkable("grpo_gap_closes_with_size", "The GRPO gap to FPT closes monotonically from 0.5B "
                                  "to 8B.", paper_value="monotone", reason="needs five backbones 0.5B–8B",
                                  full_scale="the full config only scales the toy model (d = 256, 4 blocks)",
                                  kind="paper", source=ABSTRACT, object="real"))
    return claims


def _drop_at_target(curve: list, goal: float) -> tuple[float, float, bool]:
    """FPT's prior-task drop at the (interpolated) step where its new-rule accuracy first reaches ``goal``.

    Args:
        curve: ``[(step, TaskScores)]``, step 0 first.
        goal: the new-rule accuracy to match.

    Returns:
        ``(step, prior_0 − prior at that step, reached)``; linear interpolation between the last
        evaluation below ``goal`` and the first at or above it; the final evaluation when it is
        never reached (``reached=False``).

    Source: inferred: a matched-progress comparison of forgetting (ours).
    """
    p0 = curve[0][1].prior
    for i, (s1, c1) in enumerate(curve):
        if c1.target >= goal:
            if i == 0:
                return float(s1), p0 - c1.prior, True
            s0, c0 = curve[i - 1]
            t = (goal - c0.target) / (c1.target - c0.target)                # c0.target < goal ≤ c1.target
            return s0 + t * (s1 - s0), p0 - (c0.prior + t * (c1.prior - c0.prior)), True
    return float(curve[-1][0]), p0 - curve[-1][1].prior, False


# --------------------------------------------------------------------------- part 2b: trl trainers

def _trl_runs(config: Config, base, seed: int) -> dict:
    """BMT under trl's GRPOTrainer and SDFTTrainer on a copy of ``base`` saved to a temporary folder."""
    import logging
    import tempfile

    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    from .trl_adapters import (
        bmt_grpo_trainer,
        bmt_sdft_trainer,
        exact_match_reward,
        save_toy_model,
        toy_datasets,
        toy_teacher_prompt,
        toy_tokenizer,
    )

    try:
        import datasets  # noqa: F401
        import trl  # noqa: F401
    except ImportError as exc:
        return {"missing": str(exc)}
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    # A reproduction run prints one summary line per system: trl's per-step log dicts, the
    # weight-loading bars and transformers' deprecation warnings from inside trl are silenced here
    # (and restored afterwards); a user's own trainer.train() keeps them.
    verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
    trl_level = logging.getLogger("trl").level
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    logging.getLogger("trl").setLevel(logging.ERROR)
    try:
        out = {}
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            path = save_toy_model(base, f"{tmp}/base")
            tok = toy_tokenizer()
            grpo_ds, sdft_ds = toy_datasets(config.trl_steps * 64, seed=seed + 2000)
            for name in ("grpo", "sdft"):
                model = AutoModelForCausalLM.from_pretrained(path)
                before = {n: p.detach().clone() for n, p in model.named_parameters()}
                start = evaluate(model)
                common = dict(max_steps=config.trl_steps, batch_size=64, seed=seed, logging_steps=config.trl_steps)
                if name == "grpo":
                    trainer, bm = bmt_grpo_trainer(model, config.rho, exact_match_reward, grpo_ds, tok, f"{tmp}/o",
                                                   num_generations=config.group, temperature=1.5, **common)
                else:
                    trainer, bm = bmt_sdft_trainer(model, config.rho, sdft_ds, tok, f"{tmp}/o",
                                                   teacher_prompt_fn=toy_teacher_prompt, **common)
                for callback in (PrinterCallback, ProgressCallback):
                    trainer.remove_callback(callback)
                gc.freeze()      # trl's modules and this trainer too (see _gc_frozen; run() unfreezes at its end)
                t0 = time.process_time()
                trainer.train()
                secs = time.process_time() - t0
                model.eval()
                changed = [n for n, p in model.named_parameters()
                           if not n.endswith(".scores") and not torch.equal(p, before[n.replace(
                               ".parametrizations.weight.original", ".weight")])]
                out[name] = {"start": start, "final": evaluate(model), "n_deleted": bm.n_deleted(), "k": bm.k,
                             "changed_non_score": changed, "seconds": secs}
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
        logging.getLogger("trl").setLevel(trl_level)
    return out


def _trl_claims(config: Config, seeds: list[int], trl: list[dict], metrics: dict) -> list:
    if not trl or not trl[0]:
        return []
    if "missing" in trl[0]:
        kw = dict(paper_value="GRPO and SDFT work with BMT", kind="reconstruction", object="toy", source=SRC_TOY,
                  reason=f"trl is not importable here ({trl[0]['missing']}); pip install -c constraints.txt -e '.[llm]'",
                  full_scale="the same trl runs whenever trl is importable")
        return [C.not_checkable("trl_grpo_bmt_learns", "BMT trained by trl.GRPOTrainer learns the new rule.", **kw),
                C.not_checkable("trl_sdft_bmt_learns", "BMT trained by trl's SDFTTrainer learns the new rule.", **kw)]
    metrics["trl"] = [{k: {"target_0": v["start"].target, "target": v["final"].target, "prior": v["final"].prior,
                           "n_deleted": v["n_deleted"], "k": v["k"], "cpu_s": v["seconds"]} for k, v in r.items()}
                      for r in trl]
    claims = []
    ok = all(not v["changed_non_score"] and v["n_deleted"] <= v["k"] for r in trl for v in r.values())
    claims.append(C.check("trl_trainers_train_only_the_mask", "Under trl's GRPOTrainer and SDFTTrainer only the "
                          "mask scores change (every base parameter bitwise equal) and ‖Z‖₀ ≤ k.",
                          measured={"changed": sorted({n for r in trl for v in r.values()
                                                       for n in v["changed_non_score"]}),
                                    "max_deleted": max(v["n_deleted"] for r in trl for v in r.values())},
                          holds=ok, tolerance="no base parameter changed; max ‖Z‖₀ ≤ k",
                          reason="the base weights are frozen and the mask is a parametrisation", kind="check",
                          source="inferred: the trainers optimise only parameters that require grad"))
    rule = ("same 20-point rule as the own-loop claims, on the interval of the mean over seeds; fixed before the "
            "first trl run. trl's "
            "prompts carry no left pad, unlike pre-training, a small distribution shift")
    for name, paradigm in (("grpo", "trl.GRPOTrainer (temperature 1.5, β = 0)"),
                           ("sdft", "trl.experimental.sdft.SDFTTrainer (live teacher, reverse KL, full logits)")):
        per = [C.at_least(f"trl_{name}_bmt_learns", f"BMT trained by {paradigm} for {config.trl_steps} steps raises "
                          "the new-rule accuracy by ≥ 0.20.", measured=r[name]["final"].target
                          - r[name]["start"].target, bound=0.20, reason=rule, kind="reconstruction", object="toy", source=SRC_TOY,
                          paper_value="GRPO and SDFT work with BMT", domain=(-1.0, 1.0),
                          note=f"prior-task accuracy after: {r[name]['final'].prior:.2f}",
                          tuned_after_look="trl steps raised from 10 (a CPU-budget cut) back to 40 after the "
                                           "10-step trl GRPO run learned nothing (gain 0.007 on seed 0)")
               for r in trl]
        claims.append(C.over_seeds(per, seeds))
    return claims


# --------------------------------------------------------------------------- part 3: geometry

def _geometry_claims(config: Config, seeds: list[int], per_seed: list, metrics: dict) -> list:
    per = {m: [] for m in MEASURES}
    rows = []
    for base, runs in per_seed:
        base_w = {n: m.weight.detach().float() for n, m in base.named_modules() if n.endswith("mlp.gate_proj")}
        vals = {}
        for method in ("bmt", "fpt", "lora"):
            deltas = weight_deltas(base, runs[(method, "grpo")])
            g = [geometry(base_w[n], deltas[n]) for n in base_w]
            vals[method] = {m: float(np.mean([x[m] for x in g])) for m in MEASURES}
        rows.append(vals)
        for m in MEASURES:
            d_bmt = abs(vals["bmt"][m] - vals["fpt"][m])
            d_lora = abs(vals["lora"][m] - vals["fpt"][m])
            rel = (d_lora - d_bmt) / (abs(vals["fpt"][m]) + 1e-12)
            per[m].append(C.at_least(f"geometry_closer_to_fpt_{m}", f"On GRPO, BMT's ΔW (gate projections, at "
                                     f"ρ = {config.rho:g}, {config.rho / config.rho_small:.0f}× the abstract's budget) "
                                     f"is closer to FPT's than LoRA's on {m.replace('_', ' ')}: (|LoRA − FPT| − "
                                     "|BMT − FPT|) / |FPT| ≥ 0, mean over layers.", measured=rel, bound=0.0,
                                     reason="sign of the mean over seeds, on its Student-t interval (fixed before the "
                                            "first run); LoRA is the only other adapter here",
                                     kind="reconstruction", object="toy", source=SRC_TOY,
                                     paper_value="closer than other adapters",
                                     tuned_after_look="LoRA's learning rate was lowered from 1e-2 to 3e-3 after a "
                                                      "first run where LoRA-GRPO collapsed; the GRPO settings were "
                                                      "chosen after a prototype (group 16, batch 128)",
                                     note=f"BMT {vals['bmt'][m]:.4g}, FPT {vals['fpt'][m]:.4g}, LoRA "
                                          f"{vals['lora'][m]:.4g} (this seed); metric forms inferred. The abstract: "
                                          "\"closer to full-parameter updates than other adapters\" on effective "
                                          "rank, spectrum drift and principal-weight overlap"
                                          + (". BMT's ΔW is −W on its deletions, and the saliency g·w favours large |w|, "
                                             "which our definition (top entries of W's rank-q part) counts as principal "
                                             "almost by construction; the paper's definition was not readable (it may "
                                             "compare the updated entries of BMT and FPT directly), so this verdict may "
                                             "be about our definition" if m == "principal_overlap" else "")))
    metrics["geometry_grpo"] = rows
    return [C.over_seeds(per[m], seeds) for m in MEASURES]


# --------------------------------------------------------------------------- part 3b: a local checkpoint

def preflight(config: Config) -> None:
    """Validate ``model_path`` in seconds, before any toy training: a folder with a readable
    config.json, weights (safetensors headers parse), no ``quantization_config`` (BMT indexes dense
    float weights), and at least one module whose path ends with ``target`` (built on the meta
    device from the config: no weights are read).

    Raises:
        ValueError: one line naming the folder or file and what is allowed.
    """
    if not config.model_path:
        return
    import json

    from transformers import AutoConfig, AutoModelForCausalLM

    from neurips26.backends.local import check_model_folder

    from .mask import NoGateProjectionError, find_gate_projections

    path = check_model_folder(config.model_path, tokenizer=False)
    raw = json.loads((path / "config.json").read_text(encoding="utf-8"))
    q = raw.get("quantization_config")
    if q:
        method = q.get("quant_method", "?") if isinstance(q, dict) else q
        raise ValueError(f"{path / 'config.json'} declares a quantised checkpoint (quantization_config, quant_method="
                         f"{method!r}); allowed: an unquantised float32/bfloat16/float16 checkpoint (mask indices refer "
                         "to dense float weights)")
    try:
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(path, local_files_only=True))
    except Exception as exc:  # noqa: BLE001 — an architecture transformers cannot build is one error
        raise ValueError(f"{path}: transformers cannot build a causal LM from its config.json ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:160]})") from None
    try:
        find_gate_projections(model, config.target)
    except NoGateProjectionError as exc:
        raise ValueError(f"model_path {str(path)!r}: " + " ".join(str(exc).split()).replace(
            "Pass target=", "Pass --set target=").replace("pass target=", "pass --set target=")) from None


def local_model_claims(config: Config, metrics: dict, seed: int = 0) -> list:
    """Mechanics and size on the checkpoint folder ``config.model_path`` (skipped when empty): attach
    a mask at ``size_rho`` with k deletions at random positions (the shape of a trained mask; no
    training data is assumed), export, re-apply to a fresh load, compare; mask bytes against the
    checkpoint files on disk. ``seed`` (the run seed) draws the random deletion positions."""
    if not config.model_path:
        return []

    from transformers import AutoModelForCausalLM

    from .mask import attach_bit_mask

    preflight(config)
    path = Path(config.model_path).expanduser()
    model = AutoModelForCausalLM.from_pretrained(path, dtype="auto", local_files_only=True)
    bm = attach_bit_mask(model, config.size_rho, target=config.target)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in bm.masks:
            m.scores.copy_(torch.rand(m.scores.shape, generator=g))
    data = mask_to_bytes(export_mask(bm))
    fresh = AutoModelForCausalLM.from_pretrained(path, dtype="auto", local_files_only=True)
    apply_mask(fresh, data)
    mods = dict(fresh.named_modules())
    equal = all(bitwise_equal(mods[n].weight, m.weight) for n, m in bm.modules().items())
    ckpt = sum(f.stat().st_size for f in path.iterdir() if f.suffix in (".safetensors", ".bin"))
    ratio = ckpt / len(data)
    metrics["local_model"] = {"path": str(path), "k": bm.k, "n_model": bm.n_model, "n_gate": bm.n_gate,
                              "mask_bytes": len(data), "checkpoint_bytes": ckpt, "ratio": ratio}
    src = "inferred: the abstract's mask on the user's own checkpoint"
    return [
        C.check("local_model_reapply_bit_exact", f"On {path.name}: export → apply to a fresh load reproduces the "
                "masked gate weights bitwise.", measured=equal, holds=equal, tolerance="all gate tensors equal",
                reason="exact zeroing of the indexed entries", kind="check", source=src),
        C.at_least("local_model_mask_ratio", f"On {path.name} at ρ = {config.size_rho:g} (k = {bm.k:,}): checkpoint "
                   "files / mask file ≥ 1000.", measured=ratio, bound=1000.0, kind="check", object="real",
                   source=ABSTRACT + " (the trained mask is several 1000x smaller than the checkpoint)",
                   reason="'several 1000×' read as at least 1000×; random deletion positions (no structure to "
                   "compress)", paper_value="several 1000×",
                   note=f"{len(data):,} B vs {ckpt:,} B (raw int32 indices: {ckpt / (4 * bm.k):.0f}×); a model "
                        "far below 0.5B has a relatively larger embedding share and per-tensor header overhead. "
                        "Kind 'check': the ratio follows from the budget (raw indices already give about "
                        "1/(2ρ) on a bf16 checkpoint), so it cannot fail through the mask."),
    ]


# --------------------------------------------------------------------------- part 4: sizes

def llama_8b_gate_shapes() -> tuple[dict[str, tuple[int, int]], int]:
    """Gate-projection shapes and total parameters of a Llama-3.1-8B-shaped config, counted on the
    meta device from a transformers ``LlamaConfig`` (public config values: d = 4096, 32 blocks,
    ffn 14336, 8 KV heads, vocab 128256, untied embeddings)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                      num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False)
    with torch.device("meta"):
        model = LlamaForCausalLM(cfg)
    shapes = {n: tuple(m.weight.shape) for n, m in model.named_modules() if n.endswith("mlp.gate_proj")}
    return shapes, count_parameters(model)


def _size_claims(config: Config, per_seed: list, metrics: dict) -> list:
    shapes, n_model = llama_8b_gate_shapes()
    rep = size_report(shapes, n_model, config.size_rho)
    metrics["size_8b"] = rep
    mech = metrics["mechanics"]
    tiny_ratio = mech["fp32_state_dict_bytes"] / mech["mask_file_bytes"]
    src = "inferred: Llama-3.1-8B's public config shapes, deletions at uniformly random positions (no structure)"
    return [
        C.at_least("mask_several_1000x_smaller", f"The mask file is ≥ 1000× smaller than the bf16 checkpoint for "
                   f"an 8B-shaped model at ρ = {config.size_rho:g} of all parameters ({rep['k']:,} deletions in "
                   f"the gate projections; computed with this library's codec).", measured=rep["ratio_sparse"],
                   bound=1000.0, reason="'several 1000×' read as at least 1000×; the codec runs on real index "
                   "sets, so the ratio is measured, not estimated", paper_value="several 1000×", kind="check",
                   object="theory",
                   source=ABSTRACT + " (the trained mask is several 1000x smaller than the checkpoint)",
                   note=f"{rep['mask_bytes'] / 1e6:.1f} MB vs {rep['checkpoint_bytes'] / 1e9:.1f} GB; "
                        f"{rep['bytes_per_index']:.2f} B per index. Kind 'check' (was paper): raw int32 indices of "
                        f"ρ = {config.size_rho:g} of the weights already give 2 B / (4 B · ρ) = "
                        f"{rep['ratio_int32']:.0f}× with no mask trained, so the ratio follows from the budget "
                        "and cannot fail; what the encoding buys over raw indices is codec_beats_raw_indices."),
        C.at_least("codec_beats_raw_indices", "The codec's mask file is smaller than the same deletions written as "
                   f"raw int32 indices (8B-shaped model, ρ = {config.size_rho:g}; ratio raw bytes / codec bytes).",
                   measured=rep["ratio_sparse"] / rep["ratio_int32"], bound=1.0,
                   reason="the raw-index baseline is the control for 'the mask is small': anything above 1 is what "
                          "the encoding buys; deterministic arithmetic on one random index set",
                   paper_value=None, kind="check", object="theory",
                   source="inferred: the raw int32 index list is the encoding-free baseline of a sparse mask",
                   note=f"{rep['bytes_per_index']:.2f} B per index against 4 B raw"),
        C.within("dense_bitmap_only_about_70x", "A dense 1-bit bitmap over the gate projections would be only "
                 "~70× smaller (so the abstract's ratio needs sparse indices).", measured=rep["ratio_bitmap"],
                 low=50.0, high=100.0, reason="arithmetic: 2 bytes per parameter over 1 bit per gate entry; the "
                 "band 50–100 brackets the ~70× estimate (about −30 % / +40 %)", paper_value=None, kind="reconstruction",
                 object="theory", source=src),
        C.at_least("tiny_mask_smaller_than_state_dict", f"On the tiny model the mask file (k = {mech['k']}) is "
                   "smaller than the fp32 state dict by ≥ 10×.", measured=tiny_ratio, bound=10.0,
                   reason="k = 1 % of parameters at ~2 B per index against 4 B per parameter gives ~200×; 10× "
                   "leaves room for the JSON header of a tiny file", paper_value=None, kind="check",
                   source="inferred: sparse indices of 1 % of the weights"),
    ]


# --------------------------------------------------------------------------- figures and run

def _figures(ctx: RunContext, per_seed: list, metrics: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = per_seed[0][1]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4), constrained_layout=True)
    for ax, obj in zip(axes, ("sft", "grpo", "sdft")):
        for (method, o), r in runs.items():
            if o != obj:
                continue
            steps = [s for s, _ in r.curve]
            color = {"bmt": "C0", "bmt_small": "C9", "bmt_hc": "C1", "fpt": "C3", "lora": "C2"}[method]
            ax.plot(steps, [c.prior for _, c in r.curve], "-", color=color, label=f"{method} prior")
            ax.plot(steps, [c.target for _, c in r.curve], "--", color=color, label=f"{method} new rule")
        ax.set_title(f"{obj.upper()} (seed {ctx.seed})")
        ax.set_xlabel("step")
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("accuracy")
    ctx.save_figure("forgetting_curves", fig, caption=(
        "Prior-task accuracy (solid, marked prompts) and new-rule accuracy (dashed, unmarked prompts) during "
        "adaptation, first seed. The abstract predicts BMT (blue) keeps the prior task while FPT (red) drifts."))
    rows = metrics["geometry_grpo"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), constrained_layout=True)
    for ax, m in zip(axes, MEASURES):
        for i, method in enumerate(("bmt", "fpt", "lora")):
            v = [r[method][m] for r in rows]
            ax.bar(i, np.mean(v), yerr=np.std(v), color=f"C{[0, 3, 2][i]}")
        ax.set_xticks(range(3), ["BMT", "FPT", "LoRA"])
        ax.set_title(m.replace("_", " "))
    ctx.save_figure("update_geometry", fig, caption=(
        "Geometry of the gate-projection ΔW after GRPO (mean over layers, bars: mean ± sd over seeds). The abstract "
        "predicts BMT closer to FPT than other adapters on all three measures."))


@contextlib.contextmanager
def _gc_frozen():
    """Move the objects alive now (imported modules, the harness) out of the cyclic garbage
    collector's reach for the duration of the run (``gc.freeze``): trl's Trainer calls
    ``gc.collect()`` after each train() (accelerate's clear_device_cache), about 0.4 CPU-s per call
    over the ~500k objects of torch/transformers/trl. Collection only; no number depends on it.
    :func:`_trl_runs` freezes again before each train(); everything is unfrozen on exit."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def run(config: Config, ctx: RunContext) -> Outcome:
    """Run all parts and return the claims (see the module docstring)."""
    preflight(config)       # the checkpoint folder is validated before the toy runs, so the error comes at once
    metrics: dict = {"config_family": config.family}
    # all randomness from the run seed: a development run trains n_seeds bases (seed, seed+1, …); a
    # confirmation run one base on its own seed (CONFIRMATION_SEEDS are consecutive, so n_seeds bases each
    # would overlap between confirmation runs)
    seeds = [ctx.seed] if ctx.confirmation else [ctx.seed + i for i in range(config.n_seeds)]
    claims = []
    with warnings.catch_warnings(), torch_threads(1), _gc_frozen():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", FutureWarning)  # transformers v6 deprecations raised inside peft/trl
        if ctx.confirmation:   # only the claims tuned after a look (GRPO/SDFT settings) are judged here
            per_seed = [_runs_for_seed(config, s, confirmation=True)
                        for s in ctx.track(seeds, "seeds (pre-train + 5 GRPO/SDFT adaptations)")]
            claims += _learning_claims(config, seeds, per_seed, metrics, confirmation=True)
            claims += _geometry_claims(config, seeds, per_seed, metrics)
            if config.trl_steps:   # the trl claims' step count was chosen after a look: confirmed here too
                trl = [_trl_runs(config, base, s) for (base, _), s in zip(per_seed, seeds)]
                claims += [c for c in _trl_claims(config, seeds, trl, metrics) if not c.preregistered]
            return Outcome(metrics=metrics, claims=claims, notes="Confirmation run: only the claims tuned after a "
                           "look (GRPO and SDFT settings) are judged.")
        per_seed, trl = [], []
        for s in ctx.track(seeds, "seeds (pre-train + 9 adaptations + 2 trl runs)"):
            per_seed.append(_runs_for_seed(config, s))
            trl.append(_trl_runs(config, per_seed[-1][0], s) if config.trl_steps else {})
        claims += _mechanics(per_seed[0][0], per_seed[0][1][("bmt", "sft")], config, metrics)
        claims += _learning_claims(config, seeds, per_seed, metrics)
        claims += _trl_claims(config, seeds, trl, metrics)
        claims += _geometry_claims(config, seeds, per_seed, metrics)
        claims += _size_claims(config, per_seed, metrics)
        claims += local_model_claims(config, metrics, ctx.seed)
        _figures(ctx, per_seed, metrics)
    notes = ("Only the abstract was readable. The estimator (straight-through on scores updated by SGD, so a score "
             "is the accumulated first-order saliency Σ g·w of deleting a weight; hard-concrete as an option), the "
             "budget denominator (all parameters), the toy task and every training setting are ours. The BMT/FPT/LoRA "
             "comparisons use our small SFT/GRPO/SDFT loops (9 runs per seed fit the CPU budget only without trl's "
             "per-step overhead); BMT is also trained with trl's GRPOTrainer and SDFTTrainer (trl_* claims). The "
             "hard-concrete option is not run here: in a prototype (Adam lr 0.1–1 on log α, 60 SFT steps) its "
             "deterministic eval-mode mask did not move the new-rule accuracy.")
    return Outcome(metrics=metrics, claims=claims, notes=notes)
