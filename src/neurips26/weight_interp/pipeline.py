"""The per-weight pipeline: importance over tokens → context selection → explanation → held-out
verification → interpretable fraction, with an attribution-coverage faithfulness number.

Per sampled nonzero weight ``w``:

1. ``|A_t(w)|`` on the explain windows and, separately, on the score windows (one capture each).
2. Threshold ``θ = max(q-quantile of |A| on the explain windows, ρ·max|A|)``; positives are
   tokens with ``|A| ≥ θ``, negatives tokens below. ``n_examples`` of each are drawn at random
   (explain set) and, with the same θ, from the score windows (held-out set). A weight with
   ``A ≡ 0`` is re-checked by exact ablation: ``dead`` only if that changes no loss either,
   else ``attribution_blind``. Dead, attribution-blind and rare weights (fewer than
   ``min_positives`` positives in a split) are not interpretable.
3. The explainer writes an account from the explain set; the scorer predicts the held-out items;
   the score is the balanced accuracy; interpretable iff score ≥ τ.
   A held-out set where fewer than :data:`MIN_ANSWERED` of the positives or of the negatives got
   a usable answer is ``scoring_failed``: counted apart and left out of the denominator, like a
   failed explanation.
4. Faithfulness (interpretable is not faithful): the share of the weight's attribution mass
   ``Σ|A_t|`` that falls where the account says it matters — over every token of the score
   windows for a symbolic account (its predicate), over the held-out items for a free-text
   account (the scorer's yes answers). It is a recall: a very broad account scores high here
   and low on the balanced accuracy.

Source: the abstract (account of when a weight matters, verified on held-out data, fraction of
nonzero weights interpretable); thresholds, sizes and the coverage measure are inferred choices.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import torch.nn as nn

from .attribution import WeightRef, attributions, capture
from .corpus import CharVocabulary
from .explainers import ExampleSet, Explainer, ExplanationFailed, Scorer, balanced_accuracy, token_features

__all__ = ["SelectionSettings", "WeightReport", "LeakageError", "select_examples", "importance_threshold",
           "explain_weights", "explain_from_importance", "interpretable_fraction", "check_disjoint",
           "check_vocabulary", "check_windows", "MIN_ANSWERED", "FAILED", "DEAD_TOL",
           "weight_importances"]


#: a held-out set is judged only when at least this share of its positives and of its negatives
#: got a usable yes/no answer (inferred: a balanced accuracy over a handful of answered items
#: would be noise; below it the weight is ``scoring_failed``, counted apart, never scored)
MIN_ANSWERED = 0.5

#: statuses that mean the pipeline, not the weight, failed: left out of the denominator
FAILED = ("explanation_failed", "scoring_failed")


class LeakageError(ValueError):
    """Explain and score windows overlap (the held-out test would see its training contexts)."""


@dataclass(frozen=True)
class SelectionSettings:
    """Context selection and verification settings.

    Attributes:
        quantile: q, the importance quantile that makes a token positive (0.98: the top 2 %).
        rel_floor: ρ, positives also need ``|A| ≥ ρ·max|A|``.
        n_examples: positives and negatives drawn per set (each).
        min_positives: fewer positives in a split → the weight is "rare", not interpretable.
        tau: interpretable iff held-out balanced accuracy ≥ τ.
        ablation: ``zero`` or ``mean`` (which attribution defines importance).

    Raises:
        ValueError: a value out of range (names it).
    """

    quantile: float = 0.98
    rel_floor: float = 0.1
    n_examples: int = 40
    min_positives: int = 8
    tau: float = 0.8
    ablation: str = "zero"

    def __post_init__(self) -> None:
        if not 0.0 < self.quantile < 1.0:
            raise ValueError(f"quantile={self.quantile}; allowed 0 < q < 1")
        if not 0.0 <= self.rel_floor < 1.0:
            raise ValueError(f"rel_floor={self.rel_floor}; allowed 0 <= ρ < 1")
        if self.n_examples < 2 or self.min_positives < 1:
            raise ValueError(f"n_examples={self.n_examples}, min_positives={self.min_positives}; need >= 2 and >= 1")
        if not 0.5 <= self.tau <= 1.0:
            raise ValueError(f"tau={self.tau}; allowed 0.5 <= τ <= 1 (0.5 is chance)")
        if self.ablation not in ("zero", "mean"):
            raise ValueError(f"ablation={self.ablation!r}; allowed: zero, mean")


@dataclass
class WeightReport:
    """Outcome for one weight.

    Attributes:
        weight: ``str(WeightRef)``.
        value: ``W_ij``.
        status: ``ok`` | ``dead`` (zero attribution on every explain token AND no exact-ablation
            effect) | ``attribution_blind`` (zero attribution, but exact ablation moves the loss:
            it matters where the first-order estimate is blind) | ``rare`` |
            ``explanation_failed`` | ``scoring_failed`` (fewer than :data:`MIN_ANSWERED` of the
            held-out positives or negatives got a usable answer).
        explanation: the account (``""`` if none).
        explain_score: balanced accuracy on the explain set.
        score: balanced accuracy on the held-out set.
        scored: held-out items with an answer.
        unanswered: held-out items without one.
        faithfulness: attribution coverage on the score windows.
        interpretable: ``status == ok and score >= τ``.
        failure: why explaining or scoring failed (``""`` if it did not).
    """

    weight: str
    value: float
    status: str
    explanation: str = ""
    explain_score: float = float("nan")
    score: float = float("nan")
    scored: int = 0
    unanswered: int = 0
    faithfulness: float = float("nan")
    interpretable: bool = False
    failure: str = ""

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def check_disjoint(a: np.ndarray, b: np.ndarray) -> None:
    """Raise :class:`LeakageError` if any window (row) occurs in both ``a`` and ``b``."""
    seen = {r.tobytes() for r in np.ascontiguousarray(a)}
    shared = sum(r.tobytes() in seen for r in np.ascontiguousarray(b))
    if shared:
        raise LeakageError(f"{shared} windows occur in both the explain and the score set; they must be disjoint")


def check_vocabulary(model: nn.Module, vocab, *windows: np.ndarray) -> None:
    """Raise ``ValueError`` when the vocabulary or the windows' token ids do not fit the model's
    vocabulary (``model.config.vocab_size`` where the model has one) — before anything is cached."""
    cfg = getattr(model, "config", None)
    n = getattr(cfg, "vocab_size", None)
    if n is None:
        return
    top = max((int(w.max()) for w in windows if np.size(w)), default=-1)
    if vocab.size > n or top >= n:
        raise ValueError(f"vocabulary of {vocab.size} tokens (largest id in the windows {top}) does not fit the "
                         f"model's vocab_size {n}: use the model's own tokenizer (TokenizerVocabulary)")
    if isinstance(vocab, CharVocabulary) and vocab.size != n:
        # character ids fed to a model with another vocabulary (e.g. a BPE model) run without an
        # error but mean nothing; a tokenizer's vocabulary may be padded, a character one is not
        raise ValueError(f"character vocabulary of {vocab.size} tokens but the model's vocab_size is {n}: this "
                         "model was not trained on our character tokens; use its own tokenizer "
                         "(TokenizerVocabulary)")


def _context_length(model: nn.Module) -> int | None:
    cfg = getattr(model, "config", None)
    for key in ("ctx", "n_positions", "max_position_embeddings", "block_size"):
        v = getattr(cfg, key, None)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def check_windows(model: nn.Module, **windows: np.ndarray) -> None:
    """Raise ``ValueError`` unless each window set is a non-empty integer array ``[N, T + 1]``
    with ``T >= 1`` and ``T`` within the model's context (``config.ctx``, ``n_positions``,
    ``max_position_embeddings`` or ``block_size``, where the model has one); names the set."""
    top = _context_length(model)
    for name, w in windows.items():
        a = np.asarray(w)
        if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 2 or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"{name} windows: shape {a.shape}, dtype {a.dtype}; expected a non-empty integer array "
                             "[N >= 1, T + 1 >= 2] (e.g. Corpus.split(...))")
        if top is not None and a.shape[1] - 1 > top:
            raise ValueError(f"{name} windows hold {a.shape[1] - 1} input tokens but the model's context is {top}; "
                             f"cut the corpus with make_corpus(ctx <= {top})")


def importance_threshold(imp: np.ndarray, s: SelectionSettings) -> float:
    """``θ = max(quantile_q(|A|), ρ·max|A|)`` (``inf`` for a dead weight)."""
    mx = float(imp.max()) if imp.size else 0.0
    if mx <= 0.0:
        return float("inf")
    return max(float(np.quantile(imp, s.quantile)), s.rel_floor * mx, np.finfo(np.float32).tiny)


def select_examples(imp: np.ndarray, windows: np.ndarray, theta: float, n: int,
                    rng: np.random.Generator) -> ExampleSet | None:
    """Up to ``n`` random positives (``imp ≥ θ``) and ``n`` random negatives from ``imp [N, T]``;
    ``None`` when there is no positive or no negative."""
    flat = imp.reshape(-1)
    pos, neg = np.flatnonzero(flat >= theta), np.flatnonzero(flat < theta)
    if len(pos) == 0 or len(neg) == 0:
        return None
    pos = rng.choice(pos, min(n, len(pos)), replace=False)
    neg = rng.choice(neg, min(n, len(neg)), replace=False)
    idx = np.concatenate([pos, neg])
    T = imp.shape[1]
    return ExampleSet(windows[idx // T], idx % T, np.r_[np.ones(len(pos), bool), np.zeros(len(neg), bool)],
                      flat[idx])


def explain_from_importance(weight: str, value: float, imp_explain: np.ndarray, imp_score: np.ndarray,
                            explain_windows: np.ndarray, score_windows: np.ndarray, explainer: Explainer,
                            scorer: Scorer, vocab: CharVocabulary, settings: SelectionSettings,
                            rng: np.random.Generator) -> WeightReport:
    """Steps 2–4 of the pipeline for one weight, given its importance ``|A|`` on both splits
    (``[N_e, T]`` and ``[N_s, T]``); see module docstring."""
    rep = WeightReport(weight, value, "ok")
    theta = importance_threshold(imp_explain, settings)
    if not np.isfinite(theta):
        rep.status = "dead"
        return rep
    n_pos = (int((imp_explain >= theta).sum()), int((imp_score >= theta).sum()))
    if min(n_pos) < settings.min_positives:
        rep.status = "rare"
        return rep
    ex = select_examples(imp_explain, explain_windows, theta, settings.n_examples, rng)
    held = select_examples(imp_score, score_windows, theta, settings.n_examples, rng)
    if ex is None or held is None:
        rep.status = "rare"
        return rep
    try:
        expl = explainer.explain(ex, vocab)
    except ExplanationFailed as e:
        rep.status, rep.failure = "explanation_failed", e.kind
        return rep
    rep.explanation = expl.text
    if expl.predicate is not None:
        rep.explain_score = balanced_accuracy(
            expl.predicate(token_features(ex.windows, ex.positions, vocab.size)).astype(np.int8), ex.labels)
    pred = scorer.predict(expl, held, vocab)
    rep.scored, rep.unanswered = int((pred >= 0).sum()), int((pred < 0).sum())
    answered = [int((pred[held.labels == y] >= 0).sum()) for y in (True, False)]
    need = [math.ceil(MIN_ANSWERED * int((held.labels == y).sum())) for y in (True, False)]
    if answered[0] < need[0] or answered[1] < need[1]:
        # too few usable answers to judge: counted apart (like a failed explanation), never scored
        rep.status, rep.failure = "scoring_failed", (f"usable answers: {answered[0]} of {int(held.labels.sum())} "
                                                     f"positives, {answered[1]} of {int((~held.labels).sum())} "
                                                     "negatives")
        return rep
    rep.score = balanced_accuracy(pred, held.labels)
    # faithfulness: share of Σ|A| on the score windows where the account says "matters"
    if expl.predicate is not None:
        N, T = imp_score.shape
        pos = np.tile(np.arange(T), N)
        says = expl.predicate(token_features(np.repeat(score_windows, T, axis=0), pos, vocab.size))
        flat = imp_score.reshape(-1)
    else:
        says, flat = pred == 1, held.importance
    total = float(flat.sum())
    rep.faithfulness = float(flat[says].sum()) / total if total > 0 else float("nan")
    rep.interpretable = bool(np.isfinite(rep.score) and rep.score >= settings.tau)
    return rep


def weight_importances(model: nn.Module, refs: list[WeightRef], explain_windows: np.ndarray,
                       score_windows: np.ndarray, ablation: str = "zero", logits_fn=None):
    """Importance ``|A|`` of each weight on the explain and on the score windows.

    One capture per split. With ``ablation="mean"`` both splits ablate to the mean input of the
    **explain** windows (the held-out split must not define its own ablation: the importance that
    chose θ on the explain set would mean something else on the score set).

    Returns:
        ``(imp_explain [N_e, T, n_refs], imp_score [N_s, T, n_refs], mean_x)`` (float32 arrays;
        ``mean_x``: ``module -> [in]`` mean inputs of the explain windows).

    Raises:
        as :func:`~.attribution.capture` and :func:`~.attribution.attributions`.
    """
    imp_e, imp_s, mean_x, _ = _importances(model, refs, explain_windows, score_windows, ablation, logits_fn)
    return imp_e, imp_s, mean_x


def _importances(model: nn.Module, refs: list[WeightRef], explain_windows: np.ndarray, score_windows: np.ndarray,
                 ablation: str, logits_fn):
    """:func:`weight_importances` plus, per weight, whether its input on the explain windows equals
    the ablation value (0, or the mean) at every position: ablating such a weight subtracts exactly
    0 from the forward pass, so its exact ablation effect is 0 without running it."""
    mods = sorted({r.module for r in refs})
    imps, mean_x, silent = [], None, None
    for w in (explain_windows, score_windows):
        cache = capture(model, w, mods, logits_fn=logits_fn)
        mean_x = cache.mean_x if mean_x is None else mean_x
        imps.append(np.abs(attributions(model, cache, refs, ablation, mean_x=mean_x)))
        if silent is None:
            silent = [bool((cache.x[r.module][:, r.col] == (0.0 if ablation == "zero" else mean_x[r.module][r.col]))
                           .all()) for r in refs]
        del cache
    return imps[0], imps[1], mean_x, silent


def explain_weights(model: nn.Module, refs: list[WeightRef], explain_windows: np.ndarray,
                    score_windows: np.ndarray, explainer: Explainer, scorer: Scorer, vocab: CharVocabulary,
                    settings: SelectionSettings = SelectionSettings(), seed: int = 0,
                    shuffle_control: bool = False, logits_fn=None, reuse: dict | None = None) -> list[WeightReport]:
    """The whole pipeline for ``refs`` (see module docstring).

    Args:
        model: a :class:`~.model.SparseGPT` or a causal LM (give ``logits_fn`` for other models).
        explain_windows, score_windows: int64 ``[N, T + 1]``, disjoint.
        shuffle_control: permute each weight's importance over tokens (within each split) before
            selection — a control whose account should not verify.
        reuse: a dict shared by calls with the same model, refs and windows (e.g. a run and its
            shuffled control): the importances and the exact rechecks of dead weights, which do not
            depend on ``shuffle_control`` or ``seed``, are computed by the first call and reused.

    Raises:
        LeakageError: the two window sets share a window.
        ValueError: empty, non-integer or too long windows (:func:`check_windows`); the vocabulary or
            the token ids do not fit the model (:func:`check_vocabulary`).
        ZeroWeightError, KeyError, IndexError: a bad reference (see :func:`~.attribution.attributions`).
    """
    check_windows(model, explain=explain_windows, score=score_windows)
    check_disjoint(explain_windows, score_windows)
    check_vocabulary(model, vocab, explain_windows, score_windows)
    rng = np.random.default_rng(seed)
    reuse = {} if reuse is None else reuse
    if "importances" not in reuse:
        reuse["importances"] = _importances(model, refs, explain_windows, score_windows, settings.ablation,
                                            logits_fn)
        reuse["worst"] = {}                       # ref -> max |ΔL| of its exact recheck (dead weights)
    *imps, mean_x, silent = reuse["importances"]
    from .attribution import _token_losses, weight_value

    clean = []                                    # the unablated losses, computed once for every recheck

    def clean_loss():
        if not clean:
            import torch

            from .model import logits_function

            dev = next(model.parameters()).device
            with torch.no_grad():
                w = torch.as_tensor(np.asarray(explain_windows)).to(dev)
                clean.append(_token_losses(logits_fn or logits_function(model), w).sum(1))
        return clean[0]

    reports = []
    for k, r in enumerate(refs):
        ie, is_ = imps[0][:, :, k], imps[1][:, :, k]
        if shuffle_control:
            ie = rng.permutation(ie.reshape(-1)).reshape(ie.shape)
            is_ = rng.permutation(is_.reshape(-1)).reshape(is_.shape)
        rep = explain_from_importance(str(r), weight_value(model, r), ie, is_, explain_windows, score_windows,
                                      explainer, scorer, vocab, settings, rng)
        if rep.status == "dead":
            if k not in reuse["worst"]:
                reuse["worst"][k] = 0.0 if silent[k] else _recheck_dead(
                    model, r, explain_windows, settings.ablation, mean_x, logits_fn, clean_loss())
            _mark_blind(rep, reuse["worst"][k])
        reports.append(rep)
    return reports


#: |ΔL| (nats per window) above which an exact ablation shows that a zero-attribution weight
#: matters. A weight whose contribution is exactly zero leaves the forward pass bit-identical
#: (ΔL = 0 exactly); the margin only absorbs float32 rounding of a loss summed over a window.
DEAD_TOL = 1e-5


def _recheck_dead(model: nn.Module, ref, windows: np.ndarray, ablation: str, mean_x, logits_fn,
                  clean=None) -> float:
    """Zero attribution is not zero effect: a weight into a ReLU/AbsTopK unit that is off has
    ∂L/∂y = 0, yet removing it can switch the unit on. Ablate it exactly (all positions of every
    explain window at once) and return the largest |ΔL| of a window (``clean``: the windows'
    unablated losses, when already computed); :func:`_mark_blind` keeps ``dead`` only if it is at
    most :data:`DEAD_TOL`."""
    from .attribution import ablation_effects

    mx = None if mean_x is None else mean_x[ref.module]
    dl = np.abs(ablation_effects(model, windows, ref, ablation, per_position=False, mean_x=mx,
                                 logits_fn=logits_fn, clean=clean))
    return float(dl.max()) if dl.size else 0.0


def _mark_blind(rep: WeightReport, worst: float) -> None:
    """A dead weight whose exact ablation moves a window's loss by more than :data:`DEAD_TOL`
    becomes ``attribution_blind`` (counted, not interpretable: it matters, but the first-order
    importance cannot say where)."""
    if worst > DEAD_TOL:
        rep.status = "attribution_blind"
        rep.failure = (f"attribution 0 on every explain token, but ablating it changes a window's loss by up to "
                       f"{worst:.3g} nats")


@dataclass
class FractionSummary:
    """Interpretable fraction over sampled weights.

    Attributes:
        interpretable / denominator / fraction: counts and their ratio (explanation and scoring
        failures are left out of the denominator and counted apart in ``by_status``); interval: Clopper–Pearson 95 %; by_status:
        counts per status; mean_faithfulness: over interpretable weights.
    """

    interpretable: int
    denominator: int
    fraction: float
    interval: tuple[float, float]
    by_status: dict[str, int] = field(default_factory=dict)
    mean_faithfulness: float = float("nan")


def interpretable_fraction(reports: list[WeightReport]) -> FractionSummary:
    """Fraction of weights judged interpretable (dead and rare count as not interpretable).

    Raises:
        ValueError: no reports, or none with a status outside :data:`FAILED`.
    """
    from neurips26.harness.claims import proportion_interval

    by = {}
    for r in reports:
        by[r.status] = by.get(r.status, 0) + 1
    if not reports:
        raise ValueError("no weight reports: explain at least one weight")
    denom = sum(v for k, v in by.items() if k not in FAILED)
    if denom == 0:
        raise ValueError(f"no weight reached a verdict (every explanation or scoring failed: {by}); nothing to count")
    k = sum(r.interpretable for r in reports)
    frac, iv = proportion_interval(k, denom)
    faith = [r.faithfulness for r in reports if r.interpretable and np.isfinite(r.faithfulness)]
    return FractionSummary(k, denom, frac, iv, by, float(np.mean(faith)) if faith else float("nan"))
