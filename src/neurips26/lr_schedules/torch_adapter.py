"""PyTorch adapter: play a computed learning-rate schedule on any optimizer; horizon sweeps.

* :class:`ScheduleLR` — a ``torch.optim.lr_scheduler.LRScheduler`` that plays an array
  ``η(t)`` (one value per optimizer step; absolute learning rates or multipliers of the
  optimizer's base LR) or a callable ``t ↦ η``.
* Schedule shapes as arrays: the paper's easy-phase form (abstract)

      η(t) = η_peak · (T / T_ref)^{−ξ} · (1 − t / T)^{δ},     t = 0 … T−1,

  (:func:`fitted_schedule`), warmup–stable–decay (:func:`wsd_schedule`, the hard-phase shape),
  cosine (:func:`cosine_schedule`) and peak-1 multipliers of each (:func:`schedule_multipliers`).
* :func:`horizon_sweep` — train a model for several horizons ``T`` with an annealed schedule
  and a grid of base LRs; report the best base LR per ``T``.  The paper's signature of the two
  phases for real networks: in the *easy* phase the best base LR falls with ``T``
  (``∝ T^{−ξ}``, GPT-2-style LMs), in the *hard* phase it is ``T``-independent under enough
  annealing (ResNet on CIFAR-5M).  :func:`digits_mlp_task` and :func:`digits_cnn_task` are small
  offline demonstrations.

References:
    Bordelon & Mori, arXiv:2602.04774 (2026): abstract (easy-phase form, WSD-like hard phase,
    LR transfer across horizons for ResNet / GPT-2).
    Hägele et al., *Scaling Laws and Compute-Optimal Training Beyond Fixed Training Durations*,
    NeurIPS 2024 (WSD with a cooldown fraction; ``1 − sqrt`` cooldown).
    Loshchilov & Hutter, *SGDR*, ICLR 2017 (cosine schedule).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import torch

__all__ = [
    "ScheduleLR",
    "fitted_schedule",
    "wsd_schedule",
    "cosine_schedule",
    "schedule_multipliers",
    "SweepResult",
    "horizon_sweep",
    "TorchTask",
    "digits_mlp_task",
    "digits_cnn_task",
]

_MODES = ("absolute", "multiplier")
_SHAPES = ("constant", "cosine", "wsd", "linear", "fitted")
_DECAYS = ("linear", "cosine", "1-sqrt")


# --------------------------------------------------------------------------------------------
# The scheduler
# --------------------------------------------------------------------------------------------


class ScheduleLR(torch.optim.lr_scheduler.LRScheduler):
    """Play a given learning-rate schedule ``η(t)``, one value per optimizer step.

    Step ``t`` of the optimizer (the ``t``-th call of ``optimizer.step()``, counting from 0)
    uses ``η(t)``: the constructor sets ``η(0)``; the ``k``-th ``scheduler.step()`` sets
    ``η(k)``.  Standard loop::

        sched = ScheduleLR(opt, eta)            # eta: (T,) array
        for t in range(T):
            loss(model).backward(); opt.step(); opt.zero_grad(); sched.step()

    After the ``T``-th ``scheduler.step()`` the schedule is exhausted: the learning rate stays
    at ``η(T−1)``, :attr:`exhausted` is ``True``, and one more ``scheduler.step()`` raises.

    Args:
        optimizer: any ``torch.optim.Optimizer`` (every param group gets the same schedule).
        schedule: a 1-D array-like of ``T ≥ 1`` finite values ``≥ 0``, or a callable
            ``t ↦ η(t)`` (int → float; checked at each step; no end).
        last_epoch: as in ``LRScheduler``: ``-1`` to start. With ``last_epoch=j ≥ 0`` the
            constructor's own step advances to ``j + 1``, so the next optimizer step uses
            ``η(j + 1)``: to resume after ``k`` steps pass ``k − 1`` (torch's convention; the
            param groups must then carry ``initial_lr``). For exact resumes save
            ``scheduler.state_dict()`` and restore it with ``load_state_dict``.
        mode: ``"absolute"`` — ``lr = η(t)``; ``"multiplier"`` — ``lr = base_lr · η(t)``
            with ``base_lr`` each group's initial ``lr``.

    Raises:
        ValueError: a non-1-D, empty, NaN/inf or negative schedule (naming the first bad
            index and value); a callable returning such a value (naming ``t``); unknown
            ``mode``.
        IndexError: stepping past the end of an array schedule.
        TypeError: ``schedule`` neither array-like nor callable.

    Source: our adapter (the paper computes schedules; it ships no code).
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        schedule: Sequence[float] | np.ndarray | Callable[[int], float],
        last_epoch: int = -1,
        *,
        mode: str = "absolute",
    ) -> None:
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
        self.mode = mode
        if callable(schedule) and not isinstance(schedule, (np.ndarray, list, tuple)):
            self._fn: Callable[[int], float] | None = schedule
            self._eta: np.ndarray | None = None
            self.n_steps: int | None = None
        else:
            try:
                eta = np.asarray(schedule, dtype=np.float64)
            except (TypeError, ValueError) as e:
                raise TypeError(
                    f"schedule must be a 1-D array of learning rates or a callable, got {type(schedule).__name__}"
                ) from e
            if eta.ndim != 1 or eta.size == 0:
                raise ValueError(f"schedule must be a non-empty 1-D array, got shape {eta.shape}")
            _check_values(eta, "schedule")
            self._fn, self._eta, self.n_steps = None, eta, int(eta.size)
        super().__init__(optimizer, last_epoch)

    @property
    def exhausted(self) -> bool:
        """``True`` once every value of an array schedule has been played (never for callables)."""
        return self.n_steps is not None and self.last_epoch >= self.n_steps

    def eta(self, t: int) -> float:
        """``η(t)`` as given (before the ``multiplier`` scaling); validated."""
        if self._eta is not None:
            if not 0 <= t < self._eta.size:
                raise IndexError(
                    f"schedule has {self._eta.size} steps (t = 0 … {self._eta.size - 1}); asked for t = {t}"
                )
            return float(self._eta[t])
        v = self._fn(t)  # type: ignore[misc]
        try:
            v = float(v)
        except (TypeError, ValueError) as e:
            raise ValueError(f"schedule callable returned {v!r} at t = {t}; expected a float") from e
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"schedule callable returned {v!r} at t = {t}; must be finite and >= 0")
        return v

    def step(self, epoch: int | None = None) -> None:  # noqa: D102 - see class docstring
        if epoch is None and self.n_steps is not None and self.last_epoch >= self.n_steps:
            raise IndexError(
                f"ScheduleLR: the schedule has {self.n_steps} steps and all were played; "
                f"scheduler.step() was called {self.last_epoch + 1} times — pass a longer schedule"
            )
        super().step(epoch)

    def get_lr(self) -> list[float]:
        """Learning rate of each param group at step ``last_epoch`` (after the end: ``η(T−1)``)."""
        t = self.last_epoch
        if self.n_steps is not None and t == self.n_steps:  # exhausted: keep the last value
            t = self.n_steps - 1
        e = self.eta(t)
        if self.mode == "absolute":
            return [e for _ in self.optimizer.param_groups]
        return [float(b) * e for b in self.base_lrs]

    def state_dict(self) -> dict[str, Any]:
        """Scheduler state without the optimizer and the callable (arrays are kept, like
        ``LambdaLR`` keeps no functions); restore with :meth:`load_state_dict`."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_fn")}
        if self._eta is not None:  # a tensor, so torch.load(weights_only=True) accepts it
            state["_eta"] = torch.from_numpy(self._eta.copy())
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state from :meth:`state_dict`.

        Raises:
            ValueError: the saved schedule differs from this scheduler's (length or values), or
                the ``mode`` differs — resuming would silently play another schedule.
        """
        saved = state_dict.get("_eta")
        if saved is not None:
            saved = np.asarray(torch.as_tensor(saved, dtype=torch.float64).cpu())
        if state_dict.get("mode", self.mode) != self.mode:
            raise ValueError(f"saved mode {state_dict.get('mode')!r} != this scheduler's mode {self.mode!r}")
        if (saved is None) != (self._eta is None) or (
            saved is not None and (saved.shape != self._eta.shape or not np.array_equal(saved, self._eta))  # type: ignore[union-attr]
        ):
            raise ValueError("saved schedule differs from this scheduler's schedule; construct it with the same array")
        self.__dict__.update({k: v for k, v in state_dict.items() if k not in ("_fn", "_eta")})
        # the optimizer plays the restored step's LR whatever the load order (a scheduler built after the
        # optimizer's state was loaded has just set η(0) on it)
        last = state_dict.get("_last_lr")
        if last is not None and len(last) == len(self.optimizer.param_groups):
            for group, lr in zip(self.optimizer.param_groups, last):
                group["lr"] = lr


def _check_values(eta: np.ndarray, name: str) -> None:
    bad = ~np.isfinite(eta) | (eta < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} values must be finite and >= 0; {name}[{i}] = {float(eta[i])!r}")


# --------------------------------------------------------------------------------------------
# Schedule shapes
# --------------------------------------------------------------------------------------------


def fitted_schedule(
    T: int,
    eta_peak: float,
    xi: float,
    delta: float,
    *,
    reference_horizon: int | None = None,
    warmup_steps: int = 0,
) -> np.ndarray:
    """The paper's easy-phase schedule ``η(t) = η_peak (T/T_ref)^{−ξ} (1 − t/T)^δ``.

    Normalisation: ``eta_peak`` is the peak (``t = 0``) learning rate at the reference
    horizon ``T_ref`` (default ``T_ref = T``, so ``η(0) = eta_peak``).  Giving
    ``reference_horizon`` transfers a peak measured at ``T_ref`` to horizon ``T`` with the
    exponent ``ξ`` (abstract: ``η*_T(t) ≃ T^{−ξ}(1 − t/T)^δ``).  The last step has
    ``η(T−1) = η(0)·T^{−δ} > 0``.  An optional linear warmup multiplies the first
    ``warmup_steps`` values by ``(t + 1) / (warmup_steps + 1)`` (not part of the paper's form).

    Args:
        T: horizon, ``≥ 1`` steps.
        eta_peak: ``> 0``.
        xi: peak-scaling exponent ``ξ`` (any finite real; ``ξ > 0`` means a lower peak for longer runs).
        delta: decay exponent ``δ ≥ 0`` (``0`` = constant).
        reference_horizon: ``T_ref ≥ 1`` or ``None`` (= ``T``).
        warmup_steps: ``0 ≤ warmup_steps < T``.

    Returns:
        ``(T,)`` float64 learning rates.

    Raises:
        ValueError: any argument outside the ranges above.
    """
    T = _int("T", T, 1)
    _pos("eta_peak", eta_peak)
    if not math.isfinite(xi):
        raise ValueError(f"xi must be finite, got {xi!r}")
    if not (math.isfinite(delta) and delta >= 0):
        raise ValueError(f"delta must be finite and >= 0, got {delta!r}")
    T_ref = T if reference_horizon is None else _int("reference_horizon", reference_horizon, 1)
    t = np.arange(T, dtype=np.float64)
    eta = eta_peak * (T / T_ref) ** (-xi) * (1.0 - t / T) ** delta
    return eta * _warmup(T, warmup_steps)


def wsd_schedule(
    T: int,
    eta_peak: float,
    decay_fraction: float,
    *,
    warmup_steps: int = 0,
    decay_shape: str = "linear",
) -> np.ndarray:
    """Warmup–stable–decay: constant ``eta_peak``, then a cooldown over the last fraction of ``T``.

    With ``D = ceil(decay_fraction · T)`` decay steps starting at ``t_d = T − D`` and
    ``u = (t − t_d + 1) / (D + 1) ∈ (0, 1)``, the decay multiplies ``eta_peak`` by
    ``1 − u`` (``"linear"``), ``(1 + cos πu) / 2`` (``"cosine"``) or ``1 − √u``
    (``"1-sqrt"``, Hägele et al. 2024); every value stays ``> 0``.  The hard-phase optimum of
    the paper resembles this shape with a decay fraction that shrinks with ``T`` (abstract).

    Args:
        T: horizon, ``≥ 1``.
        eta_peak: ``> 0``.
        decay_fraction: ``0 ≤ decay_fraction ≤ 1`` (``0``: constant; ``1``: pure decay).
        warmup_steps: ``0 ≤ warmup_steps < T`` (linear warmup, as in :func:`fitted_schedule`), and
            ``warmup_steps + ceil(decay_fraction·T) ≤ T`` (warmup and decay must not overlap).
        decay_shape: ``"linear"``, ``"cosine"`` or ``"1-sqrt"``.

    Returns:
        ``(T,)`` float64.

    Raises:
        ValueError: any argument outside the ranges above.
    """
    T = _int("T", T, 1)
    _pos("eta_peak", eta_peak)
    if not (math.isfinite(decay_fraction) and 0 <= decay_fraction <= 1):
        raise ValueError(f"decay_fraction must be in [0, 1], got {decay_fraction!r}")
    if decay_shape not in _DECAYS:
        raise ValueError(f"decay_shape must be one of {_DECAYS}, got {decay_shape!r}")
    D = int(math.ceil(decay_fraction * T - 1e-12))
    if warmup_steps and not isinstance(warmup_steps, bool) and isinstance(warmup_steps, (int, np.integer)) \
            and warmup_steps + D > T:
        raise ValueError(f"warmup_steps={warmup_steps} and the {D} decay steps (decay_fraction={decay_fraction} of "
                         f"T={T}) overlap: the schedule would never reach eta_peak; allowed: "
                         f"warmup_steps + ceil(decay_fraction·T) <= T")
    mult = np.ones(T)
    if D > 0:
        u = np.arange(1, D + 1, dtype=np.float64) / (D + 1)
        mult[T - D :] = {"linear": 1 - u, "cosine": 0.5 * (1 + np.cos(np.pi * u)), "1-sqrt": 1 - np.sqrt(u)}[decay_shape]
    return eta_peak * mult * _warmup(T, warmup_steps)


def cosine_schedule(T: int, eta_peak: float, *, warmup_steps: int = 0, final_fraction: float = 0.0) -> np.ndarray:
    """Cosine decay ``η(t) = η_f + (η_peak − η_f)(1 + cos(π t / T)) / 2``, ``η_f = final_fraction·η_peak``.

    Args:
        T: horizon ``≥ 1``; eta_peak ``> 0``; warmup_steps in ``[0, T)``;
        final_fraction: ``0 ≤ final_fraction ≤ 1``.

    Returns:
        ``(T,)`` float64 (``η(0) = η_peak``; the last value is ``> η_f`` since ``t < T``).

    Raises:
        ValueError: any argument outside its range.

    Source: Loshchilov & Hutter 2017 (one cycle, no restarts).
    """
    T = _int("T", T, 1)
    _pos("eta_peak", eta_peak)
    if not (math.isfinite(final_fraction) and 0 <= final_fraction <= 1):
        raise ValueError(f"final_fraction must be in [0, 1], got {final_fraction!r}")
    t = np.arange(T, dtype=np.float64)
    eta_f = final_fraction * eta_peak
    return (eta_f + (eta_peak - eta_f) * 0.5 * (1 + np.cos(np.pi * t / T))) * _warmup(T, warmup_steps)


def schedule_multipliers(shape: str, T: int, **params: Any) -> np.ndarray:
    """Peak-1 multipliers of a named schedule shape (for sweeps over a base LR).

    ``"constant"`` (ones), ``"cosine"`` (:func:`cosine_schedule`), ``"wsd"``
    (:func:`wsd_schedule`; ``decay_fraction`` default 0.2, ``decay_shape``), ``"linear"``
    (``1 − t/T``), ``"fitted"`` (``(1 − t/T)^δ``; ``delta`` required).  ``warmup_steps`` is
    accepted by all.

    Raises:
        ValueError: unknown ``shape``, or a parameter the shape does not take / out of range.
    """
    if shape not in _SHAPES:
        raise ValueError(f"shape must be one of {_SHAPES}, got {shape!r}")
    allowed = {
        "constant": {"warmup_steps"},
        "cosine": {"warmup_steps", "final_fraction"},
        "wsd": {"warmup_steps", "decay_fraction", "decay_shape"},
        "linear": {"warmup_steps"},
        "fitted": {"warmup_steps", "delta"},
    }[shape]
    extra = set(params) - allowed
    if extra:
        raise ValueError(f"schedule shape {shape!r} takes {sorted(allowed)}, got unexpected {sorted(extra)}")
    w = params.get("warmup_steps", 0)
    if shape == "constant":
        return np.ones(_int("T", T, 1)) * _warmup(T, w)
    if shape == "cosine":
        return cosine_schedule(T, 1.0, warmup_steps=w, final_fraction=params.get("final_fraction", 0.0))
    if shape == "wsd":
        return wsd_schedule(T, 1.0, params.get("decay_fraction", 0.2), warmup_steps=w,
                            decay_shape=params.get("decay_shape", "linear"))
    if shape == "linear":
        return fitted_schedule(T, 1.0, 0.0, 1.0, warmup_steps=w)
    if "delta" not in params:
        raise ValueError("schedule shape 'fitted' needs delta (the decay exponent δ >= 0)")
    return fitted_schedule(T, 1.0, 0.0, params["delta"], warmup_steps=w)


def _warmup(T: int, warmup_steps: int) -> np.ndarray:
    T = _int("T", T, 1)
    w = _int("warmup_steps", warmup_steps, 0)
    if w >= T:
        raise ValueError(f"warmup_steps must be < T = {T}, got {w}")
    m = np.ones(T)
    if w:
        m[:w] = np.arange(1, w + 1) / (w + 1)
    return m


def _int(name: str, v: Any, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {v!r}")
    if v < lo:
        raise ValueError(f"{name} must be >= {lo}, got {v}")
    return int(v)


def _pos(name: str, v: Any) -> None:
    if not (isinstance(v, (int, float, np.floating, np.integer)) and math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {v!r}")


# --------------------------------------------------------------------------------------------
# Horizon sweep
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepResult:
    """Result of :func:`horizon_sweep`.

    Attributes:
        horizons: ``(H,)`` int, the horizons ``T`` (steps).
        base_lrs: ``(B,)`` the base (peak) learning rates tried.
        final_loss: ``(H, B)`` final evaluation loss, mean over seeds; ``inf`` where any seed
            diverged (non-finite training or evaluation loss).
        final_loss_runs: ``(H, B, S)`` per seed.
        diverged: ``(H, B)`` bool.
        best_base_lr: ``(H,)`` grid argmin of ``final_loss`` per ``T``.
        best_base_lr_interp: ``(H,)`` argmin of a parabola in ``log η`` through the grid
            minimum and its two neighbours (= grid value at an edge).
        best_loss: ``(H,)``.
        best_at_edge: ``(H,)`` bool — the best LR is the smallest or largest tried (extend the grid).
        lr_exponent: OLS slope of ``log best_base_lr_interp`` on ``log T``: ``≈ −ξ``; ``≈ 0``
            is the hard-phase signature (LR transfers across horizons), ``< 0`` the easy-phase one.
        lr_exponent_se: its standard error (``inf`` with fewer than 3 horizons).
        schedule_shape: the shape name; shape_params: its parameters.
    """

    horizons: np.ndarray
    base_lrs: np.ndarray
    final_loss: np.ndarray
    final_loss_runs: np.ndarray
    diverged: np.ndarray
    best_base_lr: np.ndarray
    best_base_lr_interp: np.ndarray
    best_loss: np.ndarray
    best_at_edge: np.ndarray
    lr_exponent: float
    lr_exponent_se: float
    schedule_shape: str
    shape_params: dict

    def table(self) -> str:
        """Plain-text table: one row per ``T``, the loss per base LR, the best LR."""
        head = "T".rjust(7) + "".join(f"{lr:>10.3g}" for lr in self.base_lrs) + "   best lr (interp)"
        rows = [head]
        for i, T in enumerate(self.horizons):
            cells = "".join(f"{v:>10.4g}" if np.isfinite(v) else f"{'div':>10}" for v in self.final_loss[i])
            edge = " (edge)" if self.best_at_edge[i] else ""
            rows.append(f"{T:>7d}{cells}   {self.best_base_lr[i]:.3g} ({self.best_base_lr_interp[i]:.3g}){edge}")
        rows.append(f"d log(best lr) / d log T = {self.lr_exponent:+.3f} ± {self.lr_exponent_se:.3f}")
        return "\n".join(rows)


def horizon_sweep(
    make_model: Callable[[], torch.nn.Module],
    train_loss: Callable[[torch.nn.Module, int, torch.Generator], torch.Tensor],
    eval_loss: Callable[[torch.nn.Module], float],
    horizons: Sequence[int],
    base_lrs: Sequence[float],
    schedule_shape: str = "wsd",
    seed: int = 0,
    *,
    shape_params: dict | None = None,
    make_optimizer: Callable[[Iterable[torch.nn.Parameter], float], torch.optim.Optimizer] | None = None,
    n_seeds: int = 1,
    track: Callable[[Iterable, str], Iterable] | None = None,
    num_threads: int | None = 1,
) -> SweepResult:
    """Train for each horizon ``T`` and base LR with an annealed schedule; best base LR per ``T``.

    For every seed ``s``, horizon ``T`` and base LR ``η0``: ``make_model()`` is called under
    ``torch.manual_seed(seed·1000 + s)`` inside ``torch.random.fork_rng`` (same initial
    weights for every ``T`` and ``η0``; the global RNG is left untouched), the optimizer
    (default ``torch.optim.SGD(params, lr=η0)``) is driven by :class:`ScheduleLR` playing
    ``η0 · schedule_multipliers(schedule_shape, T)``, and each step minimises
    ``train_loss(model, t, generator)`` where ``generator`` is a ``torch.Generator`` seeded the
    same way — so all runs of a seed see the same minibatch sequence (common random numbers:
    differences between LRs are not sampling noise).  The final ``eval_loss(model)`` is recorded.

    Args:
        make_model: ``() → nn.Module``.
        train_loss: ``(model, t, generator) → scalar tensor`` (draws its own minibatch).
        eval_loss: ``model → float``, evaluated once at the end of training.
        horizons: ``≥ 1`` distinct integers ``T ≥ 2``.
        base_lrs: ``≥ 2`` distinct finite values ``> 0``, sorted internally.
        schedule_shape: a name accepted by :func:`schedule_multipliers` (default ``"wsd"``).
        seed: integer base seed.
        shape_params: keyword parameters for :func:`schedule_multipliers`.
        make_optimizer: ``(params, lr) → Optimizer``; default SGD without momentum.
        n_seeds: ``≥ 1`` seeds averaged.
        track: optional progress wrapper ``(iterable, desc) → iterable`` (e.g. ``ctx.track``).
        num_threads: torch intra-op threads during the sweep (restored afterwards); ``1`` by
            default — small models are dominated by per-op overhead, and on a busy 2-core
            machine 2 threads were measured 40× slower per step than 1; ``None`` leaves it.

    Returns:
        :class:`SweepResult`.

    Raises:
        ValueError: bad horizons / base LRs / seeds / shape.
        RuntimeError: every base LR diverged at some ``T`` (names ``T``; lower the grid).

    Source: the paper's horizon-transfer experiments (ResNet / GPT-2; abstract); this small
    utility is ours.
    """
    Ts = [int(T) for T in horizons]
    if not Ts or any(isinstance(T, bool) or T < 2 for T in horizons) or len(set(Ts)) != len(Ts):
        raise ValueError(f"horizons must be distinct integers >= 2, got {list(horizons)!r}")
    lrs = np.sort(np.asarray(base_lrs, dtype=np.float64))
    if lrs.ndim != 1 or lrs.size < 2 or not np.all(np.isfinite(lrs)) or np.any(lrs <= 0) or np.unique(lrs).size != lrs.size:
        raise ValueError(f"base_lrs must be >= 2 distinct finite values > 0, got {list(base_lrs)!r}")
    S = _int("n_seeds", n_seeds, 1)
    seed = _int("seed", seed, 0)
    params = dict(shape_params or {})
    shapes = {T: schedule_multipliers(schedule_shape, T, **params) for T in Ts}  # validates early
    make_opt = make_optimizer or (lambda p, lr: torch.optim.SGD(p, lr=lr))
    wrap = track or (lambda it, desc: it)

    if num_threads is not None:
        num_threads = _int("num_threads", num_threads, 1)
    old_threads = torch.get_num_threads()
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    try:
        runs = _sweep_runs(make_model, train_loss, eval_loss, Ts, lrs, S, seed, shapes, make_opt,
                           wrap, schedule_shape)
    finally:
        torch.set_num_threads(old_threads)

    final = runs.mean(axis=2)
    diverged = ~np.isfinite(runs).all(axis=2)
    for i, T in enumerate(Ts):
        if diverged[i].all():
            raise RuntimeError(f"every base LR diverged at horizon T = {T}; lower base_lrs (tried {lrs.tolist()})")
    best_j = np.argmin(final, axis=1)
    interp = np.array([_parabola_argmin(np.log(lrs), final[i], j) for i, j in enumerate(best_j)])
    x, z = np.log(np.asarray(Ts, float)), np.log(interp)
    if len(Ts) >= 2:
        slope, inter = np.polyfit(x, z, 1)
        se = (
            float(np.sqrt(np.sum((z - (slope * x + inter)) ** 2) / (len(Ts) - 2) / np.sum((x - x.mean()) ** 2)))
            if len(Ts) >= 3 else float("inf")
        )
    else:
        slope, se = float("nan"), float("inf")
    return SweepResult(
        horizons=np.asarray(Ts),
        base_lrs=lrs,
        final_loss=final,
        final_loss_runs=runs,
        diverged=diverged,
        best_base_lr=lrs[best_j],
        best_base_lr_interp=interp,
        best_loss=final[np.arange(len(Ts)), best_j],
        best_at_edge=(best_j == 0) | (best_j == lrs.size - 1),
        lr_exponent=float(slope),
        lr_exponent_se=se,
        schedule_shape=schedule_shape,
        shape_params=params,
    )


def _sweep_runs(make_model, train_loss, eval_loss, Ts, lrs, S, seed, shapes, make_opt, wrap, shape_name):
    """The training runs of :func:`horizon_sweep`: ``(H, B, S)`` final losses, ``inf`` if diverged."""
    runs = np.full((len(Ts), lrs.size, S), np.inf)
    jobs = [(i, j, s) for s in range(S) for i in range(len(Ts)) for j in range(lrs.size)]
    for i, j, s in wrap(jobs, f"horizon sweep ({shape_name})"):
        T, run_seed = Ts[i], seed * 1000 + s
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(run_seed)
            model = make_model()
        gen = torch.Generator().manual_seed(run_seed)
        opt = make_opt(model.parameters(), float(lrs[j]))
        sched = ScheduleLR(opt, shapes[T], mode="multiplier")
        ok = True
        for t in range(T):
            loss = train_loss(model, t, gen)
            if not torch.isfinite(loss):
                ok = False
                break
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        if ok:
            with torch.no_grad():
                v = float(eval_loss(model))
            runs[i, j, s] = v if math.isfinite(v) else np.inf
    return runs


def _parabola_argmin(x: np.ndarray, y: np.ndarray, j: int) -> float:
    """``exp`` of the vertex of the parabola through ``(x, y)`` at ``j−1, j, j+1``; grid value at edges."""
    if j == 0 or j == x.size - 1 or not np.all(np.isfinite(y[j - 1 : j + 2])):
        return float(np.exp(x[j]))
    a, b, _ = np.polyfit(x[j - 1 : j + 2], y[j - 1 : j + 2], 2)
    if a <= 0:
        return float(np.exp(x[j]))
    return float(np.exp(np.clip(-b / (2 * a), x[j - 1], x[j + 1])))


# --------------------------------------------------------------------------------------------
# A small offline task: an MLP on digits
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TorchTask:
    """The three callables :func:`horizon_sweep` needs, plus a description.

    Attributes:
        make_model: ``() → nn.Module`` (initialised from torch's global RNG).
        train_loss: ``(model, t, generator) → scalar tensor`` on a fresh minibatch.
        eval_loss: ``model → float`` on held-out data.
        description: what the task is.
    """

    make_model: Callable[[], torch.nn.Module]
    train_loss: Callable[[torch.nn.Module, int, torch.Generator], torch.Tensor]
    eval_loss: Callable[[torch.nn.Module], float]
    description: str


def _digits_tensors(n_train: int, split_seed: int, device: torch.device):
    """Digits pixels / 16 centred with the training mean, fixed shuffle; float32 / long tensors."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    n_train = _int("n_train", n_train, 10)
    if n_train > X.shape[0] - 10:
        raise ValueError(f"n_train must be in [10, {X.shape[0] - 10}], got {n_train}")
    perm = np.random.default_rng(split_seed).permutation(X.shape[0])
    X, y = X[perm] / 16.0, y[perm]
    X = X - X[:n_train].mean(axis=0)
    f = lambda a, dt: torch.tensor(a, dtype=dt, device=device)  # noqa: E731
    return (f(X[:n_train], torch.float32), f(y[:n_train], torch.long),
            f(X[n_train:], torch.float32), f(y[n_train:], torch.long))


def _classification_task(make_model, data, batch_size: int, description: str) -> TorchTask:
    Xtr, ytr, Xte, yte = data
    ce = torch.nn.functional.cross_entropy
    n_train = Xtr.shape[0]

    def train_loss(model: torch.nn.Module, t: int, gen: torch.Generator) -> torch.Tensor:
        idx = torch.randint(0, n_train, (batch_size,), generator=gen).to(Xtr.device)
        return ce(model(Xtr[idx]), ytr[idx])

    def eval_loss(model: torch.nn.Module) -> float:
        with torch.no_grad():
            return float(ce(model(Xte), yte))

    return TorchTask(make_model, train_loss, eval_loss, description)


def digits_mlp_task(
    hidden: int = 64,
    batch_size: int = 32,
    *,
    depth: int = 2,
    n_train: int = 1437,
    split_seed: int = 0,
    device: str | torch.device = "cpu",
) -> TorchTask:
    """A small MLP classifying scikit-learn's digits (offline), cross-entropy loss.

    Inputs are the 64 pixels divided by 16 and centred with the training mean; the split is a
    fixed shuffle (``split_seed``) with ``n_train`` training and ``1797 − n_train`` test images.
    The network is ``depth`` ReLU hidden layers of width ``hidden`` and a 10-way linear read-out
    (PyTorch default init).  Minibatches of ``batch_size`` are drawn with replacement using the
    generator :func:`horizon_sweep` passes; evaluation is the test cross-entropy (nats).

    Raises:
        ValueError: ``hidden``, ``batch_size``, ``depth`` < 1 or ``n_train`` outside ``[10, 1787]``.
    """
    hidden, batch_size, depth = _int("hidden", hidden, 1), _int("batch_size", batch_size, 1), _int("depth", depth, 1)
    dev = torch.device(device)
    data = _digits_tensors(n_train, split_seed, dev)

    def make_model() -> torch.nn.Module:
        layers: list[torch.nn.Module] = []
        width = 64
        for _ in range(depth):
            layers += [torch.nn.Linear(width, hidden), torch.nn.ReLU()]
            width = hidden
        layers.append(torch.nn.Linear(width, 10))
        return torch.nn.Sequential(*layers).to(dev)

    return _classification_task(
        make_model, data, batch_size,
        f"digits MLP 64→{'→'.join([str(hidden)] * depth)}→10, batch {batch_size}, "
        f"{n_train} train / {1797 - n_train} test, test cross-entropy",
    )


def digits_cnn_task(
    channels: int = 16,
    batch_size: int = 32,
    *,
    n_train: int = 1437,
    split_seed: int = 0,
    device: str | torch.device = "cpu",
) -> TorchTask:
    """A small CNN on the 8×8 digits (the full configuration's "small CNN" horizon sweep).

    ``conv3×3(1→c) → ReLU → conv3×3(c→2c, stride 2) → ReLU → global average pool → linear(2c→10)``,
    same data, split, minibatches and test cross-entropy as :func:`digits_mlp_task`.

    Raises:
        ValueError: ``channels`` or ``batch_size`` < 1, or ``n_train`` outside ``[10, 1787]``.
    """
    c, batch_size = _int("channels", channels, 1), _int("batch_size", batch_size, 1)
    dev = torch.device(device)
    data = _digits_tensors(n_train, split_seed, dev)

    def make_model() -> torch.nn.Module:
        return torch.nn.Sequential(
            torch.nn.Unflatten(1, (1, 8, 8)),
            torch.nn.Conv2d(1, c, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(2 * c, 10),
        ).to(dev)

    return _classification_task(
        make_model, data, batch_size,
        f"digits CNN (conv {c}, conv {2 * c} stride 2, avg-pool, linear), batch {batch_size}, "
        f"{n_train} train / {1797 - n_train} test, test cross-entropy",
    )
