"""A tracker for a user's own training loop: TL per layer, its Gram surrogate and NC1 per epoch.

Example::

    tracker = LinearityTracker(model)                  # every nn.Linear / nn.Conv2d
    for epoch in range(epochs):
        train_one_epoch(model, ...)                    # your loop, unchanged
        tracker.measure(X_train, labels=y_train, epoch=epoch)
    fig = tracker.plot()                               # TL per layer vs epoch (+ surrogate, NC1)

The features of layer ℓ are its *input* H_ℓ (so the first entry is the raw input, and the last
is the last hidden representation); the surrogate uses that layer's own weight W_ℓ
(Z = H_ℓ W_ℓᵀ). Measurements run under ``torch.no_grad()`` with the model in eval mode and
restore its mode afterwards.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from .neural_collapse import nc1
from .recorder import FeatureRecorder
from .target_linearity import (
    RidgeTargetLinearityWarning,
    TrivialTargetLinearityWarning,
    gram_surrogate,
    one_hot_targets,
    target_linearity_details,
)


@dataclass
class LinearityTracker:
    """Per-epoch Target Linearity, Gram surrogate and NC1 of each recorded layer.

    Args:
        model: any ``nn.Module`` with supported layers (``nn.Linear``, ``nn.Conv2d``).
        layers: layer names to track (``None``: every supported layer).
        intercept, pca_threshold, pca_components: passed to
            :func:`~neurips26.feature_learning.target_linearity.target_linearity`.
        batch_size: rows per forward pass during a measurement.

    Attributes:
        history: one dict per :meth:`measure` call: ``epoch``, ``tag``, and per layer name
            ``tl``, ``surrogate``, ``nc1`` (NaN when no labels were given), and ``ridge``/``rank``
            of the least squares (λ > 0 when the features were rank-deficient; no warning is emitted).

    Raises:
        TypeError, KeyError, ValueError: as :class:`~neurips26.feature_learning.recorder.FeatureRecorder`.
    """

    model: nn.Module
    layers: list[str] | None = None
    intercept: bool = False
    pca_threshold: int = 1000
    pca_components: int = 256
    batch_size: int = 4096
    history: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        probe = FeatureRecorder(self.model, self.layers, gradients=False)
        self.names = probe.names
        probe.remove()

    @torch.no_grad()
    def measure(self, inputs: torch.Tensor, labels=None, *, targets=None, epoch: int | None = None,
                tag: str = "train") -> dict:
        """Measure every tracked layer on ``inputs`` and append the result to :attr:`history`.

        Args:
            inputs: (n, ...) model inputs (same order as the labels/targets).
            labels: (n,) integer class labels 0..C−1 (one-hot targets; NC1 is measured), or
            targets: (n,) or (n, C) float regression targets (NC1 is NaN).
            epoch: recorded as is (defaults to the number of previous measurements with this tag).
            tag: e.g. ``"train"`` or ``"test"``.

        Returns:
            The appended dict.

        Raises:
            ValueError: neither or both of labels/targets, or a row-count mismatch.
        """
        if (labels is None) == (targets is None):
            raise ValueError("give exactly one of labels= (classification) or targets= (regression)")
        Y = one_hot_targets(labels) if labels is not None else targets
        n = len(inputs)
        if len(Y) != n:
            raise ValueError(f"inputs have {n} rows but labels/targets have {len(Y)}; they must list the same samples")
        was_training = self.model.training
        self.model.eval()
        feats: dict[str, list[torch.Tensor]] = {k: [] for k in self.names}
        try:
            with FeatureRecorder(self.model, self.names, gradients=False) as rec:
                for i in range(0, n, self.batch_size):
                    self.model(inputs[i:i + self.batch_size])
                    for k in self.names:
                        feats[k].append(rec.H(k))
                weights = {k: rec.W(k) for k in self.names}
        finally:
            self.model.train(was_training)
        if epoch is None:
            epoch = sum(h["tag"] == tag for h in self.history)
        row: dict = {"epoch": epoch, "tag": tag}
        kw = dict(intercept=self.intercept, pca_threshold=self.pca_threshold, pca_components=self.pca_components)
        for k in self.names:
            H = torch.cat(feats[k]).to(torch.float64)
            if len(H) != n:  # conv: rows are (sample, position) patches, pool them per sample
                H = H.reshape(n, -1, H.shape[1]).mean(1)
                w = None
            else:
                w = weights[k]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TrivialTargetLinearityWarning)
                warnings.simplefilter("ignore", RidgeTargetLinearityWarning)   # reported as "ridge" instead
                tl = target_linearity_details(H, Y, **kw)
            row[k] = {"tl": tl.value, "ridge": tl.ridge, "rank": tl.rank,
                      "surrogate": gram_surrogate(H, Y, w) if w is not None else float("nan"),
                      "nc1": nc1(H, labels) if labels is not None else float("nan")}
        self.history.append(row)
        return row

    def series(self, layer: str, key: str = "tl", tag: str = "train") -> tuple[np.ndarray, np.ndarray]:
        """(epochs, values) of ``key`` (``tl``, ``surrogate``, ``nc1``) for ``layer`` and ``tag``.

        Raises:
            KeyError: unknown layer or key.
        """
        if layer not in self.names:
            raise KeyError(f"layer {layer!r} is not tracked; tracked: {self.names}")
        if key not in ("tl", "surrogate", "nc1"):
            raise KeyError(f"key {key!r}; allowed: 'tl', 'surrogate', 'nc1'")
        rows = [h for h in self.history if h["tag"] == tag]
        return np.array([h["epoch"] for h in rows]), np.array([h[layer][key] for h in rows], dtype=float)

    def plot(self, tag: str = "train", ax=None):
        """TL of every tracked layer against epoch (darker = deeper), with the last layer's
        normalised Gram surrogate and NC1 on a second panel. Returns the matplotlib figure."""
        import matplotlib.pyplot as plt

        if ax is None:
            fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
        else:
            axes = ax
            fig = axes[0].figure
        cmap = plt.get_cmap("viridis")
        for i, k in enumerate(self.names):
            e, v = self.series(k, "tl", tag)
            axes[0].plot(e, v, color=cmap(i / max(len(self.names) - 1, 1)), label=f"layer {i} input")
        axes[0].set_xlabel("epoch")
        axes[0].set_ylabel("target linearity (TL)")
        axes[0].set_ylim(-0.02, 1.02)
        axes[0].legend(fontsize=7, loc="lower right")
        last = self.names[-1]
        e, tl = self.series(last, "tl", tag)
        _, s = self.series(last, "surrogate", tag)
        _, c = self.series(last, "nc1", tag)
        axes[1].plot(e, tl, color="k", label="TL (last layer input)")
        if np.isfinite(s).any():
            axes[1].plot(e, s / np.nanmax(s), color="tab:orange", label="Gram surrogate (÷ max)")
        if np.isfinite(c).any():
            axes[1].plot(e, c / np.nanmax(c), color="tab:red", ls="--", label="NC1 (÷ max)")
        axes[1].set_xlabel("epoch")
        axes[1].legend(fontsize=7)
        return fig
