"""Detector heads on cached per-layer cues: the baseline linear/BCE detector and SA-AFL.

Both heads share one architecture so that the comparison isolates the losses. Cue ``k`` (the
class token after block ``k`` of the frozen encoder, standardised) is projected to a small
artifact latent and the detector is linear in the latents::

    a_k = P_k g_k + b_k                       (cue bottleneck, [m])
    c_k = w_kᵀ a_k                            (contribution of cue k to the logit)
    logit = Σ_k c_k + b                       (detector g(a))
    s = S g_L                                 (semantic branch on the deepest cue)

SA-AFL adds, each behind a switch in :class:`LossSwitches` (all **inferred** from the abstract's
wording and the earlier papers named in :mod:`.losses`)::

    L = BCE(y, logit)
      + 1[self_adversarial] · BCE(y, logit - Σ_{k in top} c_k)      (mask the dominant cue(s), RSC)
      + λ_adv  · ramp(p) · CE(content, h_c(GRL(a)))                 (semantics out of artifacts, DANN)
      + λ_sem  · CE(content, h_s(s))                                 (semantic branch)
      + λ_orth · ||Ŝᵀ Â||²_F / B²                                     (semantic ⟂ artifact)
      + λ_hsic · mean_{i<j} ||Cov(a_i, a_j)||²_F                    (decorrelate cues, DoU)
      + λ_bal  · KL(ĉ || uniform)                                     (balance cue contributions)
      + λ_cib  · KL(N(a_k, σ_k²) || N(0, I))                          (DoU's cue bottleneck; off by default)
      + λ_rc   · mean_k KL(p_full || p_{-k})                          (DoU's cue-removal consistency; off)

The baseline is the same head with every switch off (only BCE).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .losses import (
    bce,
    contribution_balance,
    cue_removal_consistency,
    dann_ramp,
    dominant_mask,
    gaussian_kl,
    grad_reverse,
    orthogonality,
    pairwise_linear_hsic,
)


@dataclass
class LossSwitches:
    """Which SA-AFL terms are on and their weights (every term is inferred; see module docstring).

    Attributes:
        adversarial: content adversary through gradient reversal on the artifact latents.
        adversarial_weight: λ_adv (inferred default 1.0).
        ramp: progressive DANN ramp λ(p) on the reversal strength (else constant 1).
        semantic_weight: λ_sem of the semantic branch's content CE (0 disables the branch).
        orthogonal_weight: λ_orth (inferred default 0.1).
        hsic_weight: λ_hsic of the pairwise cue decorrelation (DoU's 0.5).
        self_adversarial: train also on the view with the dominant cue(s) masked.
        p_drop: probability per step of using the masked view (RSC-like 0.5).
        n_drop: number of dominant cues masked.
        balance_weight: λ_bal of KL(ĉ || uniform) (inferred default 0.5).
        cib_weight: λ_cib of DoU's variational cue bottleneck (0 = deterministic latents; DoU uses 1e-3).
        removal_consistency_weight: λ_rc of DoU's cue-removal consistency (0 = off).
    """

    adversarial: bool = True
    adversarial_weight: float = 1.0
    ramp: bool = True
    semantic_weight: float = 1.0
    orthogonal_weight: float = 0.1
    hsic_weight: float = 0.5
    self_adversarial: bool = True
    p_drop: float = 0.5
    n_drop: int = 1
    balance_weight: float = 0.5
    cib_weight: float = 0.0
    removal_consistency_weight: float = 0.0

    @classmethod
    def baseline(cls) -> "LossSwitches":
        """Every SA-AFL term off: the plain linear/BCE detector."""
        return cls(adversarial=False, semantic_weight=0.0, orthogonal_weight=0.0, hsic_weight=0.0,
                   self_adversarial=False, balance_weight=0.0)

    def __post_init__(self) -> None:
        for name in ("adversarial_weight", "semantic_weight", "orthogonal_weight", "hsic_weight", "balance_weight",
                     "cib_weight", "removal_consistency_weight"):
            v = getattr(self, name)
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"LossSwitches.{name}={v}; allowed: a finite number >= 0")
        for name in ("adversarial", "ramp", "self_adversarial"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):  # a string such as "no" would be truthy
                raise ValueError(f"LossSwitches.{name}={getattr(self, name)!r}; allowed: True or False")
        if not 0.0 <= self.p_drop <= 1.0:
            raise ValueError(f"LossSwitches.p_drop={self.p_drop}; allowed: 0 <= p_drop <= 1")
        if not isinstance(self.n_drop, (int, np.integer)) or isinstance(self.n_drop, bool) or self.n_drop < 0:
            raise ValueError(f"LossSwitches.n_drop={self.n_drop!r}; allowed: an integer >= 0")

    @property
    def needs_content(self) -> bool:
        """Whether training needs content (semantic) labels."""
        return self.adversarial or self.semantic_weight > 0 or self.orthogonal_weight > 0


class CueDetector(nn.Module):
    """Per-cue bottleneck + linear detector + semantic branch + content adversary.

    Args:
        n_cues: K (encoder blocks used). cue_dim: D. latent_dim: m per cue.
        n_content: content classes for the semantic branch and the adversary (0: none).
        semantic_dim: width of the semantic feature s.
    """

    def __init__(self, n_cues: int, cue_dim: int, latent_dim: int = 8, n_content: int = 0, semantic_dim: int = 16):
        super().__init__()
        if min(n_cues, cue_dim, latent_dim) < 1:
            raise ValueError(f"n_cues={n_cues}, cue_dim={cue_dim}, latent_dim={latent_dim}; allowed: all >= 1")
        self.P = nn.Parameter(torch.randn(n_cues, cue_dim, latent_dim) / math.sqrt(cue_dim))
        self.pb = nn.Parameter(torch.zeros(n_cues, latent_dim))
        self.w = nn.Parameter(torch.randn(n_cues, latent_dim) / math.sqrt(n_cues * latent_dim))
        self.b = nn.Parameter(torch.zeros(()))
        # log-variance head of the optional variational bottleneck (zero init draws no random numbers)
        self.Q = nn.Parameter(torch.zeros(n_cues, cue_dim, latent_dim))
        self.qb = nn.Parameter(torch.full((n_cues, latent_dim), -4.0))
        self.n_content = n_content
        if n_content:
            self.semantic = nn.Linear(cue_dim, semantic_dim)
            self.semantic_head = nn.Linear(semantic_dim, n_content)
            self.adversary = nn.Sequential(nn.Linear(n_cues * latent_dim, 32), nn.ReLU(), nn.Linear(32, n_content))

    def latents(self, g: torch.Tensor) -> torch.Tensor:
        """Artifact latents ``a [B, K, m]`` from cues ``g [B, K, D]``: ``a_k = P_k g_k + b_k``."""
        return torch.einsum("bkd,kdm->bkm", g, self.P) + self.pb

    def log_variances(self, g: torch.Tensor) -> torch.Tensor:
        """Log-variances ``[B, K, m]`` of the variational bottleneck: ``log σ²_k = Q_k g_k + q_k``."""
        return torch.einsum("bkd,kdm->bkm", g, self.Q) + self.qb

    def contributions(self, a: torch.Tensor) -> torch.Tensor:
        """Per-cue contributions ``c [B, K]``, ``c_k = w_kᵀ a_k``."""
        return (a * self.w).sum(-1)

    def forward(self, g: torch.Tensor) -> torch.Tensor:
        """Detector logit ``[B]`` (positive = generated)."""
        return self.contributions(self.latents(g)).sum(-1) + self.b


@dataclass
class TrainedDetector:
    """A trained head with the cue standardisation it was trained with.

    Attributes:
        head: the :class:`CueDetector` (eval mode).
        mean, std: ``float32 [K, D]`` cue standardisation from the training set.
        switches: the :class:`LossSwitches` used.
        history: per-epoch mean losses (``{"bce": [...], ...}``).
    """

    head: CueDetector
    mean: np.ndarray
    std: np.ndarray
    switches: LossSwitches
    history: dict = field(default_factory=dict)

    def _g(self, cues: np.ndarray) -> torch.Tensor:
        cues = np.asarray(cues, np.float32)
        if cues.ndim != 3 or cues.shape[1:] != self.mean.shape:
            raise ValueError(f"cues shape {cues.shape}; allowed: [N, {self.mean.shape[0]}, {self.mean.shape[1]}]")
        if not np.isfinite(cues).all():
            bad = np.flatnonzero(~np.isfinite(cues).all((1, 2)))
            raise ValueError(f"cues of {len(bad)} image(s) are NaN or infinite (first rows {bad[:5].tolist()}); "
                             "allowed: finite numbers")
        return torch.from_numpy((cues - self.mean) / self.std)

    def logits(self, cues: np.ndarray, drop_cues: list[int] | None = None) -> np.ndarray:
        """Detector logits ``float64 [N]`` for cached cues ``[N, K, D]``; ``drop_cues`` removes
        the contributions of those cue indices (0-based) — the cue-removal test.

        Raises:
            ValueError: wrong cue shape, NaN or infinite cues, or a ``drop_cues`` index outside
                ``0..K-1`` (a negative index would silently drop a cue from the end).
        """
        K = self.mean.shape[0]
        if drop_cues and any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < K
                             for k in drop_cues):
            raise ValueError(f"drop_cues={list(drop_cues)}; allowed: integer cue indices in 0..{K - 1}")
        with torch.no_grad():
            c = self.head.contributions(self.head.latents(self._g(cues)))
            if drop_cues:
                c[:, list(drop_cues)] = 0.0
            return (c.sum(-1) + self.head.b).double().numpy()

    def scores(self, cues: np.ndarray) -> np.ndarray:
        """Probability of "generated", ``float64 [N]`` in (0, 1)."""
        return 1.0 / (1.0 + np.exp(-self.logits(cues)))

    def latents(self, cues: np.ndarray) -> np.ndarray:
        """Artifact latents flattened, ``float32 [N, K·m]`` (the detector's features)."""
        with torch.no_grad():
            return self.head.latents(self._g(cues)).flatten(1).numpy()

    def contributions(self, cues: np.ndarray) -> np.ndarray:
        """Per-cue contributions ``float32 [N, K]``."""
        with torch.no_grad():
            return self.head.contributions(self.head.latents(self._g(cues))).numpy()

    def unit_contributions(self, cues: np.ndarray) -> np.ndarray:
        """Per-latent-unit contributions ``w_j a_j``, ``float32 [N, K·m]`` (the evidence vector)."""
        with torch.no_grad():
            return (self.head.latents(self._g(cues)) * self.head.w).flatten(1).numpy()

    def state(self) -> dict:
        """A dict of tensors and plain values (loadable with ``torch.load(weights_only=True)``)
        that :meth:`from_state` restores."""
        h = self.head
        return {"shape": [int(h.P.shape[0]), int(h.P.shape[1]), int(h.P.shape[2]), int(h.n_content),
                          int(h.semantic.out_features) if h.n_content else 16],
                "state_dict": h.state_dict(), "mean": torch.from_numpy(self.mean), "std": torch.from_numpy(self.std),
                "switches": asdict(self.switches)}

    @classmethod
    def from_state(cls, state: dict) -> "TrainedDetector":
        """Inverse of :meth:`state`."""
        K, D, m, nc, sd = state["shape"]
        head = CueDetector(K, D, m, nc, sd)
        head.load_state_dict(state["state_dict"])
        head.eval()
        return cls(head, np.asarray(state["mean"], np.float32).copy(), np.asarray(state["std"], np.float32).copy(),
                   LossSwitches(**state["switches"]))


def train_detector(cues: np.ndarray, label: np.ndarray, switches: LossSwitches, content: np.ndarray | None = None,
                   latent_dim: int = 8, epochs: int = 60, batch_size: int = 256, lr: float = 1e-2,
                   weight_decay: float = 1e-4, seed: int = 0,
                   recompute_cues: Callable[[], np.ndarray] | None = None) -> TrainedDetector:
    """Train a :class:`CueDetector` on cached cues with Adam.

    Args:
        cues: ``float [N, K, D]`` per-layer class tokens.
        label: ``int [N]`` in {0 real, 1 generated}, both present.
        switches: which losses are on (:meth:`LossSwitches.baseline` for the plain detector).
        content: ``int [N]`` content classes (needed when ``switches.needs_content``).
        latent_dim: m per cue. epochs, batch_size, lr, weight_decay: Adam training.
        seed: torch seed for initialisation, batching and masking draws.
        recompute_cues: if given, called at the start of every epoch to recompute the cues (e.g.
            the frozen encoder run again, as an end-to-end loop would); standardised with the
            statistics of ``cues``. Only the benchmark's no-cache baseline uses it: with a
            deterministic encoder the trained head is identical to the cached one.

    Returns:
        A :class:`TrainedDetector`.

    Raises:
        ValueError: shapes disagree, cues NaN or infinite, ``epochs`` or ``batch_size`` < 1, labels
            not in {0, 1} or one class missing, content labels
            missing when needed or not integers >= 0, or ``n_drop >= K`` with self-adversarial masking on.
    """
    x = np.asarray(cues, np.float32)
    y = np.asarray(label)
    if x.ndim != 3 or len(x) != len(y):
        raise ValueError(f"cues shape {x.shape} and label length {len(y)}; allowed: [N, K, D] and N labels")
    if not np.isfinite(x).all():
        bad = np.flatnonzero(~np.isfinite(x).all((1, 2)))
        raise ValueError(f"cues of {len(bad)} image(s) are NaN or infinite (first rows {bad[:5].tolist()}); "
                         "allowed: finite numbers")
    if epochs < 1 or batch_size < 1:
        raise ValueError(f"epochs={epochs}, batch_size={batch_size}; allowed: both >= 1")
    if not set(np.unique(y).tolist()) == {0, 1}:
        raise ValueError(f"label values {sorted(set(np.unique(y).tolist()))}; allowed: both 0 (real) and 1 (generated)")
    N, K, D = x.shape
    n_content = 0
    if switches.needs_content:
        if content is None or len(content) != N:
            raise ValueError("these loss switches need content labels (one int per image); pass content= or use "
                             "LossSwitches(adversarial=False, semantic_weight=0, orthogonal_weight=0)")
        cont = np.asarray(content)
        if not np.issubdtype(cont.dtype, np.integer) or cont.min() < 0:
            raise ValueError(f"content labels must be integers >= 0, got dtype {cont.dtype} with minimum "
                             f"{cont.min()}")
        n_content = int(cont.max()) + 1
    if switches.self_adversarial and switches.n_drop >= K:
        raise ValueError(f"n_drop={switches.n_drop} with K={K} cues; allowed: n_drop < K")
    mean = x.mean(0)
    std = x.std(0) + 1e-6
    g_all = torch.from_numpy((x - mean) / std)
    y_all = torch.from_numpy(y.astype(np.int64))
    c_all = torch.from_numpy(np.asarray(content, np.int64)) if n_content else None
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    head = CueDetector(K, D, latent_dim, n_content)
    opt = torch.optim.Adam(head.parameters(), lr=lr, weight_decay=weight_decay)
    steps_per_epoch = max(1, math.ceil(N / batch_size))
    total = epochs * steps_per_epoch
    hist: dict[str, list[float]] = {}
    step = 0
    for _ in range(epochs):
        if recompute_cues is not None:
            g_all = torch.from_numpy((np.asarray(recompute_cues(), np.float32) - mean) / std)
        perm = torch.randperm(N, generator=gen)
        sums: dict[str, float] = {}
        for i in range(0, N, batch_size):
            idx = perm[i:i + batch_size]
            g, yb = g_all[idx], y_all[idx]
            a = head.latents(g)
            terms = {}
            if switches.cib_weight:  # a_k = μ_k + σ_k ⊙ ε (reparameterised), KL to N(0, I)
                logvar = head.log_variances(g)
                terms["cib"] = switches.cib_weight * gaussian_kl(a, logvar)
                a = a + (0.5 * logvar).exp() * torch.randn(a.shape, generator=gen)
            c = head.contributions(a)
            logit = c.sum(-1) + head.b
            terms["bce"] = bce(logit, yb)
            if switches.removal_consistency_weight:
                terms["removal_consistency"] = switches.removal_consistency_weight * cue_removal_consistency(logit, c)
            if switches.self_adversarial and torch.rand((), generator=gen).item() < switches.p_drop:
                keep = ~dominant_mask(c, switches.n_drop)
                terms["masked_bce"] = bce((c * keep).sum(-1) + head.b, yb)
            if n_content:
                cb = c_all[idx]
                if switches.adversarial:
                    lam = dann_ramp(step / max(1, total - 1)) if switches.ramp else 1.0
                    adv = head.adversary(grad_reverse(a.flatten(1), lam))
                    terms["adversarial"] = switches.adversarial_weight * F.cross_entropy(adv, cb)
                s = head.semantic(g[:, -1])
                if switches.semantic_weight:
                    terms["semantic"] = switches.semantic_weight * F.cross_entropy(head.semantic_head(s), cb)
                if switches.orthogonal_weight:
                    terms["orthogonal"] = switches.orthogonal_weight * orthogonality(s, a.flatten(1))
            if switches.hsic_weight:
                terms["hsic"] = switches.hsic_weight * pairwise_linear_hsic(a)
            if switches.balance_weight:
                terms["balance"] = switches.balance_weight * contribution_balance(c)
            loss = sum(terms.values())
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + float(v.detach()) / steps_per_epoch
        for k, v in sums.items():
            hist.setdefault(k, []).append(v)
    head.eval()
    return TrainedDetector(head, mean.astype(np.float32), std.astype(np.float32), switches, hist)
