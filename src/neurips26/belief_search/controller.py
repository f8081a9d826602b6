"""The Bayesian search controller and the baselines it is compared with at matched budgets.

One belief drives every decision (:func:`belief_search`):

1. **whether to search** — skip when the prior is already sharp (``H(b₀) < skip_entropy``) and
   a preview answer (``base``) is given; without one, a sharp prior still needs a look at its
   most probable segment to read the answer there;
2. **which segment next** — ``argmax_i EIG_i(b)`` (:func:`~.belief.expected_information_gain`),
   ties broken by a seeded generator; a revisit samples frames not seen before;
3. **when to stop** — ``max_i b(i) ≥ τ`` and an answer was read on that most probable segment
   (a "relevant" look reporting an option) or a preview answer is given — otherwise that
   segment is looked at next, since knowing *where* the evidence is does not answer the
   question — or the look budget is spent;
4. **the answer** — posterior-weighted: ``P(a) = Σ_i b(i)·q_i(a)``, with ``q_i`` the answer
   distribution given the answers reported on segment ``i`` (:func:`aggregate_answer`).

Every step is recorded (:class:`Look`: segment, frames, reply, entropy before and after, the EIG
it was chosen for, the belief after), so every choice can be traced.

Baselines (same sensor, same frames per look, same posterior-weighted answer):
:func:`uniform_plan` (evenly spaced segments), :func:`prior_topk_plan` (the k most probable
segments under the prior) run through :func:`fixed_plan_search`, and :func:`navigator_search`, a
navigator that walks segments in its own order (the storyboard ranking) and stops at its first
"relevant" look — the "model navigates" pattern the paper argues against.

Source: abstract (one belief decides whether to search, which segment next and when to stop;
the VLM does not navigate); the stopping threshold, EIG one-step look-ahead and answer
aggregation are inferred.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .belief import Belief, SensorModel, expected_information_gain
from .sensors import SensorReply

__all__ = ["Look", "SearchResult", "LookFn", "belief_search", "fixed_plan_search", "navigator_search",
           "uniform_plan", "prior_topk_plan", "aggregate_answer"]

#: ``look(segment, frames_seen_in_that_segment) -> (frame_indices, reply)``
LookFn = Callable[[int, Sequence[int]], "tuple[Sequence[int], SensorReply]"]


@dataclass
class Look:
    """One step of a search.

    Attributes:
        segment: segment looked at; frames: frame indices shown to the sensor.
        reply: the sensor's :class:`SensorReply`.
        entropy_before, entropy_after: ``H(b)`` in nats around the update.
        eig: expected information gain (nats) of this look under the belief before it.
        belief_after: ``float64 (N,)`` belief after the update.
    """

    segment: int
    frames: list[int]
    reply: SensorReply
    entropy_before: float
    entropy_after: float
    eig: float
    belief_after: np.ndarray


@dataclass
class SearchResult:
    """Outcome of one search.

    Attributes:
        method: ``belief``, ``uniform``, ``prior_topk``, ``navigator``.
        prior, posterior: ``float64 (N,)`` beliefs before and after.
        looks: the :class:`Look` steps in order.
        answer: chosen option index; answer_probs: ``float64 (M,)`` posterior-weighted answer.
        stop: ``confident`` (max b ≥ τ), ``budget``, ``skip`` (no search), ``navigator`` (its own stop).
    """

    method: str
    prior: np.ndarray
    posterior: np.ndarray
    looks: list[Look]
    answer: int
    answer_probs: np.ndarray
    stop: str
    extra: dict = field(default_factory=dict)

    @property
    def n_looks(self) -> int:
        """Looks made."""
        return len(self.looks)

    @property
    def n_frames(self) -> int:
        """Frames shown to the sensor."""
        return sum(len(lk.frames) for lk in self.looks)

    @property
    def entropy_drop(self) -> float:
        """``(H₀ − H_T)/H₀`` (0 when ``H₀ ≈ 0`` or nothing was looked at)."""
        from .belief import entropy

        h0 = float(entropy(self.prior))
        return 0.0 if h0 < 1e-6 else (h0 - float(entropy(self.posterior))) / h0


def aggregate_answer(posterior: np.ndarray, looks: Sequence[Look], sensor: SensorModel,
                     base: np.ndarray | None = None) -> np.ndarray:
    """``P(a) = Σ_i b(i)·q_i(a)``, with ``q_i ∝ base · Π_{looks at i saying yes} P(report | a)``.

    Args:
        posterior: ``float (N,)``; looks: steps whose relevant answers count.
        sensor: gives ``P(report | a)`` (:meth:`SensorModel.answer_likelihood`).
        base: ``float (M,)`` answer distribution without evidence (uniform if ``None``; e.g. a
            preview guess).

    Returns:
        ``float64 (M,)`` summing to 1.
    """
    m = sensor.n_options
    base = np.full(m, 1.0 / m) if base is None else np.asarray(base, float) / np.sum(base)
    logq = np.tile(np.log(np.maximum(base, 1e-300)), (len(posterior), 1))          # (N, M)
    for lk in looks:
        if lk.reply.relevant and lk.reply.answer is not None:
            logq[lk.segment] += np.log(sensor.answer_likelihood(lk.reply.answer))
    q = np.exp(logq - logq.max(axis=1, keepdims=True))
    q /= q.sum(axis=1, keepdims=True)
    p = np.asarray(posterior, float) @ q                                             # Σ_i b(i) q_i(a)
    return p / p.sum()


def _argmax(x: np.ndarray, rng: np.random.Generator) -> int:
    """Index of the maximum, ties (within 1e-12) broken uniformly by ``rng``."""
    best = np.flatnonzero(x >= x.max() - 1e-12)
    return int(best[0] if best.size == 1 else rng.choice(best))


def _step(belief: Belief, segment: int, look: LookFn, seen: dict[int, list[int]], sensor: SensorModel,
          eig: float) -> Look:
    h0 = belief.entropy
    frames, reply = look(segment, seen.setdefault(segment, []))
    seen[segment].extend(int(f) for f in frames)
    belief.update(segment, sensor.outcome(reply.relevant, reply.confidence), sensor)
    return Look(segment, [int(f) for f in frames], reply, h0, belief.entropy, eig, belief.probs)


def _check_budget(budget) -> int:
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"budget={budget!r}; allowed: an integer >= 1")
    return int(budget)


def _finish(method: str, prior: np.ndarray, belief: Belief, looks: list[Look], sensor: SensorModel,
            stop: str, rng: np.random.Generator, base: np.ndarray | None) -> SearchResult:
    post = belief.probs
    p = aggregate_answer(post, looks, sensor, base)
    return SearchResult(method, np.asarray(prior, float), post, looks, _argmax(p, rng), p, stop)


def belief_search(prior: np.ndarray, sensor: SensorModel, look: LookFn, *, budget: int, tau: float = 0.9,
                  skip_entropy: float = 1e-6, rng: np.random.Generator, base: np.ndarray | None = None) -> SearchResult:
    """Search with the Bayesian controller (module docstring, steps 1–4).

    Args:
        prior: ``float (N,)`` prior over segments (:func:`~.belief.prior_from_scores`).
        sensor: the calibrated, frozen :class:`SensorModel`.
        look: the sensor call (:data:`LookFn`).
        budget: most looks (an integer >= 1).
        tau: stop when ``max b ≥ tau`` and that segment's answer was read (in (0, 1]; 1 never
            stops early).
        skip_entropy: skip the search when ``H(b₀)`` (nats) is below it and ``base`` is given.
        rng: tie-breaking generator.
        base: answer distribution without evidence (the preview guess), uniform if ``None``.

    Raises:
        ValueError: ``budget`` not an integer >= 1 or ``tau`` outside (0, 1].
    """
    budget = _check_budget(budget)
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"tau={tau}; allowed: 0 < tau <= 1")
    belief = Belief(prior)
    looks: list[Look] = []
    seen: dict[int, list[int]] = {}
    if base is not None and belief.entropy < skip_entropy:
        return _finish("belief", prior, belief, looks, sensor, "skip", rng, base)
    answered: set[int] = set()  # segments with a "relevant" look that reported an option

    def located() -> int | None:
        """The most probable segment once ``max b ≥ τ`` (``None`` below τ, or with ``tau = 1``)."""
        b = belief.probs
        return _argmax(b, rng) if tau < 1.0 and b.max() >= tau else None

    stop = "budget"
    while len(looks) < budget:
        top = located()
        if top is not None and (base is not None or top in answered):
            stop = "confident"
            break
        gains = expected_information_gain(belief.probs, sensor)
        i = _argmax(gains, rng) if top is None else top  # located but unanswered: read the answer there
        lk = _step(belief, i, look, seen, sensor, float(gains[i]))
        looks.append(lk)
        if lk.reply.relevant and lk.reply.answer is not None:
            answered.add(i)
    top = located()
    if stop == "budget" and top is not None and (base is not None or top in answered):
        stop = "confident"
    return _finish("belief", prior, belief, looks, sensor, stop, rng, base)


def fixed_plan_search(method: str, plan: Sequence[int], prior: np.ndarray, sensor: SensorModel, look: LookFn, *,
                      rng: np.random.Generator, base: np.ndarray | None = None) -> SearchResult:
    """Look at the segments of ``plan`` in order; the same belief updates and posterior-weighted
    answer as the controller (only the choice of segments differs)."""
    belief = Belief(prior)
    looks: list[Look] = []
    seen: dict[int, list[int]] = {}
    bad = [i for i in plan if not 0 <= int(i) < belief.n]
    if bad:
        raise ValueError(f"plan segment {bad[0]}; allowed: 0..{belief.n - 1}")
    for i in plan:
        gain = float(expected_information_gain(belief.probs, sensor)[int(i)])
        looks.append(_step(belief, int(i), look, seen, sensor, gain))
    return _finish(method, prior, belief, looks, sensor, "budget", rng, base)


def uniform_plan(n_segments: int, k: int, rng: np.random.Generator) -> list[int]:
    """``k`` evenly spaced segments with a random phase, ``⌊(j + u)·N/k⌋`` (cycling when k > N)."""
    if k < 1 or n_segments < 1:
        raise ValueError(f"k={k}, n_segments={n_segments}; both must be >= 1")
    u = rng.random()
    return [int(np.floor((j + u) * n_segments / k)) % n_segments for j in range(k)]


def prior_topk_plan(prior: np.ndarray, k: int) -> list[int]:
    """The ``k`` most probable segments under the prior, best first (cycling when k > N)."""
    if k < 1:
        raise ValueError(f"k={k}; allowed: >= 1")
    order = np.argsort(-np.asarray(prior, float), kind="stable")
    return [int(order[j % len(order)]) for j in range(k)]


def navigator_search(prior: np.ndarray, sensor: SensorModel, look: LookFn, *, budget: int,
                     rng: np.random.Generator, base: np.ndarray | None = None,
                     choose: Callable[[list[Look], np.ndarray], int | None] | None = None) -> SearchResult:
    """A navigator picks the next segment itself and stops when it believes it found the evidence.

    The default ``choose`` walks the storyboard ranking (the prior) over unvisited segments and
    stops at the first look that says relevant — a scripted stand-in for a VLM that navigates;
    pass ``choose(looks, storyboard_scores) -> segment or None`` to plug in another navigator.
    The belief is still updated so the answer is posterior-weighted like every method's.
    """
    budget = _check_budget(budget)
    order = list(np.argsort(-np.asarray(prior, float), kind="stable"))

    def default(looks: list[Look], _scores: np.ndarray) -> int | None:
        if looks and looks[-1].reply.relevant:
            return None
        visited = {lk.segment for lk in looks}
        rest = [int(i) for i in order if int(i) not in visited]
        return rest[0] if rest else int(order[len(looks) % len(order)])

    choose = choose or default
    belief = Belief(prior)
    looks: list[Look] = []
    seen: dict[int, list[int]] = {}
    stop = "budget"
    while len(looks) < budget:
        i = choose(looks, np.asarray(prior, float))
        if i is None:
            stop = "navigator"
            break
        if not 0 <= int(i) < belief.n:
            raise ValueError(f"navigator chose segment {i}; allowed: 0..{belief.n - 1}")
        gain = float(expected_information_gain(belief.probs, sensor)[int(i)])
        looks.append(_step(belief, int(i), look, seen, sensor, gain))
    return _finish("navigator", prior, belief, looks, sensor, stop, rng, base)
