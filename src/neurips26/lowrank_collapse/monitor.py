"""A training monitor: per-layer gradient and cumulative-update ranks logged from your own loop.

Usage (any PyTorch loop; call it after ``loss.backward()`` and before ``optimizer.step()``)::

    monitor = RankMonitor(model, every=50)
    for step in range(n_steps):
        opt.zero_grad(); loss = ...; loss.backward()
        monitor(step, loss)            # raises NonFiniteError on a NaN/inf loss, with the step
        opt.step()
    monitor.figure()                   # one panel per layer: effective ranks over steps
    monitor.seconds, monitor.calls     # time spent in the monitor (its overhead)

Logged per layer and recorded step: exact rank, participation ratio and entropy rank of the
gradient ∇_W L and of the cumulative update ΔW_t = W_t − W_0, plus the leading singular values
(see :mod:`neurips26.lowrank_collapse.diagnostics` for definitions and tolerances).
Source: inferred (the paper's tooling is unknown; the quantities are those of the gradient-rank
argument).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict

import torch
from torch import nn

from .diagnostics import SUPPORTED_LAYERS, SVD_METHODS, choose_svd_method, rank_summary
from .flows import NonFiniteError


def _supported_names() -> str:
    return ", ".join(f"torch.nn.{c.__name__}" for c in SUPPORTED_LAYERS)


class RankMonitor:
    """Per-layer rank diagnostics every ``every`` steps of a training loop.

    Args:
        model: the ``nn.Module`` being trained.
        every: record every this many steps (≥ 1); other calls only check the loss.
        layers: modules to watch (default: every Linear/Conv layer of ``model``); each must be one
            of the supported types.
        method: ``auto`` (default: the exact SVD for layers whose smaller side is at most
            6·(k + 10) — 252 for k = 32 — the randomised top-``k`` SVD above; below that size the
            exact SVD is the faster, see :func:`~neurips26.lowrank_collapse.diagnostics.choose_svd_method`;
            where the sketch cannot certify the exact rank — a layer of rank ≥ k + 10 — the exact SVD
            is computed as well, so ``rank`` is never ``None``), ``exact``, or ``randomized`` (top
            ``k`` values; ``rank`` only where the sketch certifies it, else ``None``).
        k: values kept by the randomised SVD (default min(32, min(shape))).
        rtol: exact-rank tolerance (default max(m, n)·eps(float32) — gradients are float32).

    Raises:
        TypeError: an unsupported layer (lists the supported ones).
        ValueError: no supported layer in ``model``, ``every < 1`` or an unknown method.
    """

    def __init__(self, model: nn.Module, every: int = 50, layers: list[nn.Module] | None = None,
                 method: str = "auto", k: int | None = None, rtol: float | None = None):
        if int(every) != every or every < 1:
            raise ValueError(f"RankMonitor: every={every!r}; allowed: an integer >= 1")
        if method not in SVD_METHODS:
            raise ValueError(f"RankMonitor: method={method!r}; allowed: {', '.join(repr(m) for m in SVD_METHODS)}")
        names = {m: n for n, m in model.named_modules()}
        if layers is None:
            layers = [m for m in model.modules() if isinstance(m, SUPPORTED_LAYERS)]
            if not layers:
                raise ValueError(f"RankMonitor: {type(model).__name__} has no supported layer; supported: "
                                 f"{_supported_names()}")
        for m in layers:
            if not isinstance(m, SUPPORTED_LAYERS):
                raise TypeError(f"RankMonitor: {type(m).__name__} is not supported; supported: {_supported_names()}")
        self.layers = list(layers)
        self.names = [names.get(m, f"layer{i}") or f"layer{i}" for i, m in enumerate(self.layers)]
        self.every, self.method, self.k, self.rtol = int(every), method, k, rtol
        self.initial = [m.weight.detach().clone() for m in self.layers]
        self.records: list[dict] = []
        self.seconds = 0.0
        self.calls = 0

    def _summary(self, M: torch.Tensor):
        shape = tuple(M.reshape(M.shape[0], -1).shape)
        k = self.k if self.k is not None else min(32, *shape)
        method = choose_svd_method(shape, k) if self.method == "auto" else self.method
        # auto never loses the rank: a randomised sketch that cannot certify it falls back to the exact SVD
        return rank_summary(M, method, k if method == "randomized" else None, self.rtol, source_dtype=M.dtype,
                            fallback=self.method == "auto")

    def __call__(self, step: int, loss: float | torch.Tensor | None = None) -> None:
        """Check the loss and, every ``every`` steps, record each layer's diagnostics.

        Raises:
            NonFiniteError: ``loss`` is NaN or inf (the error carries ``step``).
        """
        t0 = time.perf_counter()
        self.calls += 1
        if loss is not None:
            value = float(loss.detach()) if isinstance(loss, torch.Tensor) else float(loss)
            if not math.isfinite(value):
                raise NonFiniteError(f"loss is {value}", step)
        if step % self.every == 0:
            rec = {"step": int(step), "layers": {}}
            for name, m, W0 in zip(self.names, self.layers, self.initial):
                g = m.weight.grad
                entry = {"shape": list(m.weight.shape)}
                if g is not None:
                    if not torch.isfinite(g).all():
                        raise NonFiniteError(f"gradient of layer {name} has NaN/inf entries", step)
                    entry["gradient"] = asdict(self._summary(g.detach()))
                entry["update"] = asdict(self._summary(m.weight.detach() - W0))
                rec["layers"][name] = entry
            self.records.append(rec)
        self.seconds += time.perf_counter() - t0

    def history(self, layer: str, of: str = "gradient", quantity: str = "participation_ratio") -> tuple[list, list]:
        """``(steps, values)`` of ``quantity`` (``rank``, ``participation_ratio``, ``entropy_rank``)
        for the ``gradient`` or the cumulative ``update`` of ``layer`` (a name in ``self.names``).

        Raises:
            KeyError: unknown layer, ``of`` or ``quantity`` (names the allowed ones).
        """
        if layer not in self.names:
            raise KeyError(f"RankMonitor.history: layer {layer!r}; allowed: {self.names}")
        if of not in ("gradient", "update"):
            raise KeyError(f"RankMonitor.history: of={of!r}; allowed: 'gradient', 'update'")
        if quantity not in ("rank", "participation_ratio", "entropy_rank"):
            raise KeyError(f"RankMonitor.history: quantity={quantity!r}; allowed: rank, participation_ratio, "
                           "entropy_rank")
        steps, vals = [], []
        for r in self.records:
            e = r["layers"][layer].get(of)
            if e is not None:
                steps.append(r["step"])
                vals.append(e[quantity])
        return steps, vals

    def figure(self, title: str = ""):
        """A matplotlib figure, one panel per layer: participation ratio (solid) and entropy rank
        (dashed) of the gradient and of the cumulative update over steps."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        n = len(self.names)
        cols = min(n, 4)
        rows = math.ceil(n / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(3.3 * cols, 2.8 * rows), squeeze=False,
                                 constrained_layout=True)
        for ax, name, m in zip(axes.flat, self.names, self.layers):
            for of, colour in (("gradient", "tab:purple"), ("update", "tab:green")):
                s, pr = self.history(name, of, "participation_ratio")
                _, er = self.history(name, of, "entropy_rank")
                ax.plot(s, pr, color=colour, label=f"{of} PR")
                ax.plot(s, er, color=colour, ls="--", label=f"{of} erank")
            ax.set_title(f"{name} {tuple(m.weight.shape)}", fontsize=9)
            ax.set_xlabel("step")
            ax.set_ylim(bottom=0)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        axes.flat[0].set_ylabel("effective rank")
        axes.flat[0].legend(fontsize=7)
        if title:
            fig.suptitle(title, fontsize=10)
        return fig
