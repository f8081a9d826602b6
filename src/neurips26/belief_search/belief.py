"""The belief over video segments: prior, sensor model, log-space Bayes updates, information gain.

The latent ``z ∈ {0..N−1}`` is the segment holding the decisive evidence. The belief
``b(i) = P(z = i | question, observations)`` is kept as log-probabilities and renormalised with
``logsumexp`` after every update, so it never underflows, sums to 1 and is never negative.

* **Prior** (the question sets it): ``b₀(i) ∝ exp(β · sim(q, preview_i))`` mixed with uniform,
  ``b₀ ← (1 − ε) b₀ + ε/N``, so an overconfident similarity can never zero out a segment.
* **Sensor model**: a look at segment ``i`` returns an outcome ``o`` (yes/no, optionally
  crossed with a bin of the reported confidence) with ``P(o | z = i)`` and ``P(o | z ≠ i)``
  fitted on labelled probes (for yes/no alone: ``TPR`` and ``FPR``); every likelihood is floored
  at η = 1e-3 so one false "no" cannot eliminate the true segment for good.
* **Update**: ``log b(j) ← log b(j) + log L_j(o) − logsumexp(·)`` with ``L_i = P(o | z = i)`` and
  ``L_{j≠i} = P(o | z ≠ i)``.
* **Expected information gain** of looking at ``i`` (one-step look-ahead) is the mutual
  information between ``z`` and ``o``, ``EIG_i = H(P(o)) − [b_i·H(P(o|z=i)) + (1 − b_i)·H(P(o|z≠i))]``
  (for yes/no: ``h(b_i·TPR + (1 − b_i)·FPR) − [b_i·h(TPR) + (1 − b_i)·h(FPR)]``); it equals
  ``H(b) − E_o[H(b | o)]`` and is never negative (concavity of entropy).

Source: abstract ("the question sets the prior, each VLM observation updates it"); the
binary confusion-matrix sensor, the uniform mixing and the floor are inferred (the paper's sensor
model is unknown); expected information gain as in Bayesian experimental design (Lindley, 1956).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import logsumexp

__all__ = ["SensorModel", "outcome_index", "calibrate_sensor", "prior_from_scores", "Belief", "entropy", "binary_entropy",
           "expected_information_gain", "LIKELIHOOD_FLOOR"]

#: η: likelihoods are kept in [η, 1 − η].
LIKELIHOOD_FLOOR = 1e-3


def entropy(p: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy in nats, ``H(p) = −Σ p log p`` (0·log 0 = 0) along ``axis``."""
    p = np.asarray(p, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=axis)


def binary_entropy(p: np.ndarray) -> np.ndarray:
    """``h(p) = −p log p − (1 − p) log(1 − p)`` in nats, elementwise (h(0) = h(1) = 0)."""
    p = np.asarray(p, float)
    return entropy(np.stack([p, 1.0 - p], axis=-1))


@dataclass(frozen=True)
class SensorModel:
    """Likelihood model of a sensor whose look yields one of ``K`` outcomes.

    An outcome is the reply's ``relevant`` (no/yes) crossed with a bin of its reported
    confidence (``confidence_edges``; no edges: the plain yes/no sensor, K = 2). Outcomes
    ``0..B−1`` are "no" by confidence bin, ``B..2B−1`` are "yes", with ``B = len(edges) + 1``.

    Attributes:
        p_evidence: ``P(outcome k | this segment holds the evidence)``, K values summing to 1.
        p_other: ``P(outcome k | it does not)``.
        confidence_edges: increasing bin edges in (0, 1) for the reported confidence.
        answer_accuracy: ``P(reported answer is right | yes on the evidence segment)``.
        n_options: answer options (for the likelihood of a wrong report).

    Raises:
        ValueError: lengths that do not match ``2·(len(edges)+1)``, negative or non-normalised
            rows, edges not increasing in (0, 1), ``TPR <= FPR`` (a "yes" carries no evidence),
            accuracy outside [0, 1] or ``n_options < 2``.

    Source: inferred (a confusion model over yes/no, refined by binned confidence, is a
    calibration map fitted on labelled probes; the paper's sensor model is unknown).
    """

    p_evidence: tuple[float, ...]
    p_other: tuple[float, ...]
    confidence_edges: tuple[float, ...] = ()
    answer_accuracy: float = 0.9
    n_options: int = 4

    def __post_init__(self) -> None:
        k = 2 * (len(self.confidence_edges) + 1)
        e = np.asarray(self.confidence_edges, float)
        if e.size and (np.any(np.diff(e) <= 0) or e[0] <= 0 or e[-1] >= 1):
            raise ValueError(f"confidence_edges={self.confidence_edges}; allowed: increasing values in (0, 1)")
        for name in ("p_evidence", "p_other"):
            p = np.asarray(getattr(self, name), float)
            if p.shape != (k,) or np.any(p < 0) or abs(p.sum() - 1) > 1e-6:
                raise ValueError(f"SensorModel.{name}={getattr(self, name)}: need {k} non-negative values "
                                 "summing to 1")
        if not self.tpr > self.fpr:
            raise ValueError(f"SensorModel: TPR={self.tpr:.3g} must exceed FPR={self.fpr:.3g} (else a 'yes' "
                             "carries no evidence for the segment)")
        if not 0.0 <= self.answer_accuracy <= 1.0:
            raise ValueError(f"SensorModel.answer_accuracy={self.answer_accuracy}; allowed: 0..1")
        if isinstance(self.n_options, bool) or not isinstance(self.n_options, (int, np.integer)) or self.n_options < 2:
            raise ValueError(f"SensorModel.n_options={self.n_options!r}; allowed: an integer >= 2")

    @classmethod
    def binary(cls, tpr: float, fpr: float, answer_accuracy: float = 0.9, n_options: int = 4) -> "SensorModel":
        """The plain yes/no sensor: ``P(yes | evidence) = tpr``, ``P(yes | other) = fpr``.

        Raises:
            ValueError: rates outside [0, 1] or ``tpr <= fpr``.
        """
        if not (0 <= tpr <= 1 and 0 <= fpr <= 1):
            raise ValueError(f"tpr={tpr}, fpr={fpr}; allowed: 0..1")
        return cls((1 - tpr, tpr), (1 - fpr, fpr), (), answer_accuracy, n_options)

    @property
    def n_bins(self) -> int:
        """Confidence bins per yes/no (``B``)."""
        return len(self.confidence_edges) + 1

    @property
    def tpr(self) -> float:
        """``P(yes | evidence)`` (all "yes" outcomes)."""
        return float(np.sum(self.p_evidence[self.n_bins:]))

    @property
    def fpr(self) -> float:
        """``P(yes | other)``."""
        return float(np.sum(self.p_other[self.n_bins:]))

    def collapsed(self) -> "SensorModel":
        """The yes/no model with the same TPR and FPR (confidence ignored)."""
        return SensorModel.binary(self.tpr, self.fpr, self.answer_accuracy, self.n_options)

    def outcome(self, relevant: bool | None, confidence: float = 0.5) -> int | None:
        """Outcome index of a reply (``None`` for a non-informative one); see :func:`outcome_index`."""
        return outcome_index(relevant, confidence, self.confidence_edges)

    @cached_property
    def likelihoods(self) -> tuple[np.ndarray, np.ndarray]:
        """``(p_evidence, p_other)`` as float arrays floored at η and renormalised (computed once)."""
        out = []
        for p in (self.p_evidence, self.p_other):
            q = np.maximum(np.asarray(p, float), LIKELIHOOD_FLOOR)
            out.append(q / q.sum())
        return out[0], out[1]

    @cached_property
    def likelihood_entropies(self) -> tuple[float, float]:
        """``(H(p_evidence), H(p_other))`` of :attr:`likelihoods` in nats (computed once)."""
        p_in, p_out = self.likelihoods
        return float(entropy(p_in)), float(entropy(p_out))

    def answer_likelihood(self, reported: int | None) -> np.ndarray:
        """``P(report | true answer = a)`` over options, as ``float64 (n_options,)``; uniform when
        nothing was reported.

        Raises:
            ValueError: ``reported`` not ``None`` and not an option index ``0..n_options−1`` (a
                negative index would otherwise silently count as the last option).
        """
        m = self.n_options
        if reported is None:
            return np.full(m, 1.0 / m)
        if isinstance(reported, bool) or not isinstance(reported, (int, np.integer)) or not 0 <= reported < m:
            raise ValueError(f"reported answer={reported!r}; allowed: an option index 0..{m - 1} or None")
        q = np.full(m, (1.0 - self.answer_accuracy) / (m - 1))
        q[int(reported)] = self.answer_accuracy
        return q


def outcome_index(relevant: bool | None, confidence: float, confidence_edges: tuple[float, ...] = ()) -> int | None:
    """Outcome of a reply: ``bin + B·1[relevant]`` with ``bin`` the confidence bin among
    ``B = len(edges) + 1`` (``searchsorted(edges, confidence, side="right")``); ``None`` when
    ``relevant`` is ``None`` (non-informative).

    Raises:
        ValueError: ``confidence`` not a finite number in [0, 1] (NaN would silently land in the
            top bin).
    """
    if relevant is None:
        return None
    if not 0.0 <= float(confidence) <= 1.0:
        raise ValueError(f"confidence={confidence!r}; allowed: a number in [0, 1]")
    b = int(np.searchsorted(np.asarray(confidence_edges, float), float(confidence), side="right"))
    return b + (len(confidence_edges) + 1 if relevant else 0)


def calibrate_sensor(outcomes: np.ndarray, is_evidence: np.ndarray, answer_right: np.ndarray | None = None, *,
                     confidence_edges: tuple[float, ...] = (), n_options: int = 4,
                     pseudo: float = 1.0) -> SensorModel:
    """Fit the outcome likelihoods (and answer accuracy) from labelled probe looks, with
    ``pseudo`` counts per cell (Laplace smoothing for 1).

    Args:
        outcomes: ``int (m,)`` outcome indices (:meth:`SensorModel.outcome`) of probe looks;
            ``-1`` for a non-informative look (skipped).
        is_evidence: ``bool (m,)`` whether the probed segment held the evidence.
        answer_right: ``bool (m,)`` whether the reported answer was right (used on "yes" looks at
            evidence segments), or ``None`` to keep 0.9.
        confidence_edges: the bins the outcomes were computed with.

    Raises:
        ValueError: non-integer outcomes, ``pseudo < 0``, mismatched lengths, an outcome out of
            range, no evidence or no non-evidence probes, or a fit with ``TPR <= FPR`` (the sensor
            does not discriminate on these probes).

    Source: inferred (calibration on held-out labelled segments, frozen afterwards).
    """
    raw = np.asarray(outcomes)
    if raw.size and not np.issubdtype(raw.dtype, np.integer):
        raise ValueError(f"outcomes must be integer outcome indices, got dtype {raw.dtype}")
    if not pseudo >= 0:
        raise ValueError(f"pseudo={pseudo}; allowed: >= 0")
    o, e = raw.astype(np.int64), np.asarray(is_evidence, bool)
    k = 2 * (len(confidence_edges) + 1)
    if o.shape != e.shape or o.ndim != 1:
        raise ValueError(f"outcomes {o.shape} and is_evidence {e.shape} must be equal-length 1-D arrays")
    if np.any((o < -1) | (o >= k)):
        raise ValueError(f"outcomes must be in -1..{k - 1} for {len(confidence_edges)} confidence edges")
    ok = o >= 0
    if not (e & ok).any() or not (~e & ok).any():
        raise ValueError("calibration needs informative probes of both evidence and non-evidence segments")
    p_in = np.bincount(o[e & ok], minlength=k) + pseudo
    p_out = np.bincount(o[~e & ok], minlength=k) + pseudo
    acc = 0.9
    if answer_right is not None:
        r = np.asarray(answer_right, bool)
        if r.shape != o.shape:
            raise ValueError(f"answer_right {r.shape} must match outcomes {o.shape}")
        yes_in = e & (o >= k // 2)
        acc = float((r[yes_in].sum() + pseudo) / (yes_in.sum() + 2 * pseudo))
    return SensorModel(tuple(p_in / p_in.sum()), tuple(p_out / p_out.sum()), tuple(confidence_edges), acc, n_options)


def prior_from_scores(scores: np.ndarray, beta: float = 1.5, mix: float = 0.1) -> np.ndarray:
    """``b₀ = (1 − ε)·softmax(β·s) + ε/N``.

    Args:
        scores: ``float (N,)`` text–frame similarities (any scale; finite).
        beta: inverse temperature β >= 0 (0 gives the uniform prior).
        mix: uniform weight ε in [0, 1].

    Returns:
        ``float64 (N,)`` probabilities, all >= ε/N.

    Raises:
        ValueError: empty or non-finite scores, ``beta`` negative or not finite (β = ∞ gave an
            all-NaN prior), or ``mix`` outside [0, 1].
    """
    s = np.asarray(scores, float).reshape(-1)
    if s.size == 0 or not np.all(np.isfinite(s)):
        raise ValueError(f"scores must be a non-empty finite vector, got {s[:5]}...")
    if not 0.0 <= beta < np.inf or not 0.0 <= mix <= 1.0:
        raise ValueError(f"beta={beta} (allowed: finite, >= 0), mix={mix} (allowed 0..1)")
    z = beta * s
    p = np.exp(z - logsumexp(z))
    return (1.0 - mix) * p + mix / s.size


def expected_information_gain(b: np.ndarray, sensor: SensorModel) -> np.ndarray:
    """EIG (nats) of one look at each segment: the mutual information between ``z`` and the
    outcome ``o``, ``I_i = H(P(o)) − [b_i·H(p_evidence) + (1 − b_i)·H(p_other)]`` with
    ``P(o = k) = b_i·p_evidence[k] + (1 − b_i)·p_other[k]``.

    Args:
        b: ``float (N,)`` belief (probabilities).

    Returns:
        ``float64 (N,)``, each >= 0 (clipped at 0 against rounding).
    """
    p_in, p_out = sensor.likelihoods
    b = np.asarray(b, float)[:, None]
    h_in, h_out = sensor.likelihood_entropies
    p_o = b * p_in + (1.0 - b) * p_out                                        # (N, K) predictive of o
    gain = entropy(p_o) - (b[:, 0] * h_in + (1.0 - b[:, 0]) * h_out)
    return np.maximum(gain, 0.0)


class Belief:
    """A categorical belief over ``N`` segments kept in log space.

    Args:
        prior: ``float (N,)`` probabilities (renormalised; must be > 0 somewhere, finite).

    Attributes:
        log_b: ``float64 (N,)`` log-probabilities (``logsumexp(log_b) == 0``).
        history: ``(segment, outcome)`` of every update, in order.

    Raises:
        ValueError: empty, negative, non-finite or all-zero prior.
    """

    def __init__(self, prior: np.ndarray) -> None:
        p = np.asarray(prior, float).reshape(-1)
        if p.size == 0 or not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
            raise ValueError("prior must be a non-empty, finite, non-negative vector with positive mass")
        with np.errstate(divide="ignore"):
            lp = np.log(p)
        self.log_b = lp - logsumexp(lp)
        self.history: list[tuple[int, int | None]] = []
        self._cache: tuple | None = None  # (log_b it was computed from, probs, entropy)

    def _cached(self) -> tuple:
        if self._cache is None or self._cache[0] is not self.log_b:
            p = np.exp(self.log_b)
            self._cache = (self.log_b, p, float(entropy(p)))
        return self._cache

    @property
    def n(self) -> int:
        """Number of segments."""
        return self.log_b.size

    @property
    def probs(self) -> np.ndarray:
        """``b`` as probabilities (``float64 (N,)``, sums to 1; computed once per state, do not modify)."""
        return self._cached()[1]

    @property
    def entropy(self) -> float:
        """``H(b)`` in nats."""
        return self._cached()[2]

    def update(self, segment: int, outcome: int | None, sensor: SensorModel) -> None:
        """Bayes update after a look at ``segment``: ``log b ← log b + log L(o) − logsumexp``.

        ``outcome=None`` is a non-informative observation (a malformed reply): likelihood 1
        everywhere, the belief is unchanged (the look is still recorded).

        Raises:
            ValueError: ``segment`` outside ``0..N−1`` or ``outcome`` outside the model's outcomes.
        """
        if not 0 <= int(segment) < self.n:
            raise ValueError(f"segment={segment}; allowed: 0..{self.n - 1}")
        self.history.append((int(segment), outcome))
        if outcome is None:
            return
        p_in, p_out = sensor.likelihoods
        if not 0 <= int(outcome) < p_in.size:
            raise ValueError(f"outcome={outcome}; allowed: 0..{p_in.size - 1}")
        lik = np.full(self.n, np.log(p_out[outcome]))                       # L_j = P(o | z != j)
        lik[int(segment)] = np.log(p_in[outcome])                           # L_i = P(o | z = i)
        lb = self.log_b + lik
        m = lb.max()
        self.log_b = lb - (m + np.log(np.sum(np.exp(lb - m))))              # − logsumexp, in numpy
