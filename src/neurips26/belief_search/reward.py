"""The entropy-gated reward for training a search policy, and a toy policy-gradient demonstration.

Per-turn credit (each turn earns the uncertainty it removes), normalised by the largest entropy
``log N`` and capped::

    r_t = λ · clip((H_{t−1} − H_t) / log N, −c, c)

Final reward, gated by how much the whole search lowered entropy (``ΔH = (H₀ − H_T)/H₀``)::

    R = 1[correct] · g(ΔH),   hard g = 1[ΔH ≥ δ],   soft g = clip(ΔH/δ, 0, 1)

Guessing from the preview frames makes no look, so ``ΔH = 0`` and ``R = 0``: the shortcut earns
nothing. A look can raise entropy (ΔH < 0); the gate is then 0, never negative. The per-turn
credit can be negative, and its sum telescopes to ``λ (H₀ − H_T)/log N`` when no cap binds.

Confidence farming: if likelihoods came from the policy's own reported confidence, inflating
confidence would sharpen the belief and farm ``r_t`` without finding anything. Rewards are
therefore computed with a **frozen yes/no sensor model** (:meth:`SensorModel.collapsed`): the
credit depends on the yes/no outcomes only, not on the reported confidence
(:func:`per_turn_credit` is evaluated on that model by the experiment's farming check).

:func:`toy_policy_gradient` is a two-action REINFORCE toy (search or guess from the preview)
where searching is worse than guessing at first but improves with practice: with an ungated
reward (plus a frame cost) the policy collapses to guessing; gated, it keeps searching. The
outcome is built into the toy: it checks the wiring of the gate, not a learning result.

Source: abstract ("each turn earns credit for the uncertainty it reduces, and the final reward
is gated by how much the search lowered entropy ... blocks a reward-hacking shortcut where the
model ... skip[s] search and guess[es] from the preview frames"); λ, δ, the cap, the
normalisations and the toy are inferred.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["entropy_gate", "final_reward", "per_turn_credit", "ToyResult", "toy_policy_gradient"]


def entropy_gate(delta_h: float | np.ndarray, delta: float = 0.3, kind: str = "hard") -> np.ndarray:
    """``g(ΔH)``: hard ``1[ΔH ≥ δ]`` or soft ``clip(ΔH/δ, 0, 1)``; 0 for ΔH <= 0 either way.

    Raises:
        ValueError: ``delta <= 0`` or an unknown ``kind``.
    """
    if not delta > 0:
        raise ValueError(f"delta={delta}; allowed: > 0")
    d = np.asarray(delta_h, float)
    if kind == "hard":
        return (d >= delta).astype(float)
    if kind == "soft":
        return np.clip(d / delta, 0.0, 1.0)
    raise ValueError(f"kind={kind!r}; allowed: 'hard', 'soft'")


def final_reward(correct: bool | np.ndarray, h0: float | np.ndarray, h_final: float | np.ndarray, *,
                 delta: float = 0.3, kind: str = "hard", gated: bool = True) -> np.ndarray:
    """``R = 1[correct]·g((H₀ − H_T)/H₀)`` (ungated: ``1[correct]``); ``H₀ < 1e-6`` gives ``ΔH = 0``."""
    h0, hT = np.asarray(h0, float), np.asarray(h_final, float)
    dh = np.where(h0 < 1e-6, 0.0, (h0 - hT) / np.where(h0 < 1e-6, 1.0, h0))
    c = np.asarray(correct, float)
    return c * entropy_gate(dh, delta, kind) if gated else c


def per_turn_credit(entropies: np.ndarray, n_segments: int, *, lam: float = 0.1, cap: float = 0.5) -> np.ndarray:
    """``r_t = λ·clip((H_{t−1} − H_t)/log N, −cap, cap)`` for a trajectory of entropies.

    Args:
        entropies: ``float (T+1,)`` belief entropies ``H_0..H_T`` (nats).
        n_segments: ``N`` (>= 2).

    Returns:
        ``float64 (T,)``.

    Raises:
        ValueError: ``n_segments < 2`` or ``cap <= 0``.
    """
    if n_segments < 2 or not cap > 0:
        raise ValueError(f"n_segments={n_segments} (>= 2), cap={cap} (> 0)")
    h = np.asarray(entropies, float)
    return lam * np.clip(-np.diff(h) / np.log(n_segments), -cap, cap)


@dataclass
class ToyResult:
    """Trajectory of :func:`toy_policy_gradient`.

    Attributes:
        p_search: ``float (steps,)`` probability of searching after each update.
        accuracy: ``float (steps,)`` mean accuracy of each batch.
        skill: final search skill in [0, 1].
    """

    p_search: np.ndarray
    accuracy: np.ndarray
    skill: float


def toy_policy_gradient(gated: bool, rng: np.random.Generator, *, steps: int = 400, batch: int = 32,
                        lr: float = 2.0, guess_accuracy: float = 0.35, search_accuracy: tuple[float, float] = (0.3, 0.9),
                        learn_rate: float = 0.002, frame_cost: float = 0.05, delta: float = 0.3,
                        lam: float = 0.1, credit: bool = True) -> ToyResult:
    """REINFORCE on a two-action policy ``π(search) = σ(θ)``, ``θ₀ = 0``.

    * guess: correct w.p. ``guess_accuracy``; no look, so ``ΔH = 0``.
    * search: correct w.p. ``a₀ + (a₁ − a₀)·skill``; ``ΔH ~ clip(0.2 + 0.7·skill + N(0, 0.1), 0, 1)``;
      costs ``frame_cost``; earns per-turn credit ``λ·ΔH``; every search raises ``skill`` by
      ``learn_rate`` (the search policy improves only by searching).
    * reward: ungated ``1[correct] − cost``; gated ``1[correct]·1[ΔH ≥ δ] + λ·ΔH − cost``
      (``credit=False`` drops the per-turn term ``λ·ΔH`` from the gated reward: the gate alone).
    * update: ``θ ← θ + lr · mean((R − mean R)(a − σ(θ)))`` (``∂ log π(a)/∂θ = a − σ(θ)``).

    Raises:
        ValueError: ``steps`` or ``batch`` < 1.
    """
    if steps < 1 or batch < 1:
        raise ValueError(f"steps={steps}, batch={batch}; both must be >= 1")
    theta, skill = 0.0, 0.0
    p_hist, acc_hist = np.empty(steps), np.empty(steps)
    a0, a1 = search_accuracy
    for t in range(steps):
        p = 1.0 / (1.0 + np.exp(-theta))
        a = rng.random(batch) < p                                                    # 1 = search
        acc = np.where(a, a0 + (a1 - a0) * skill, guess_accuracy)
        correct = rng.random(batch) < acc
        dh = np.where(a, np.clip(0.2 + 0.7 * skill + 0.1 * rng.standard_normal(batch), 0, 1), 0.0)
        if gated:
            reward = correct * entropy_gate(dh, delta) + (lam * dh if credit else 0.0) - frame_cost * a
        else:
            reward = correct - frame_cost * a
        adv = reward - reward.mean()                                                 # baseline: batch mean
        theta += lr * float(np.mean(adv * (a - p)))                                  # REINFORCE
        skill = min(1.0, skill + learn_rate * int(a.sum()) / batch)
        p_hist[t] = 1.0 / (1.0 + np.exp(-theta))
        acc_hist[t] = correct.mean()
    return ToyResult(p_hist, acc_hist, skill)
