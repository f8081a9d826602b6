"""The loss pieces of SA-AFL as small pure functions (PyTorch).

The abstract says only that SA-AFL "progressively disentangles semantics from artifacts and
employs a self-adversarial mechanism to balance learning across artifact dimensions". Each
function below is one **inferred** reading of those words, taken from a named earlier paper;
:class:`~neurips26.aigi_detection.heads.LossSwitches` turns each on or off.

References:
    Ganin & Lempitsky 2015, "Unsupervised Domain Adaptation by Backpropagation" (gradient
    reversal, the ramp ``2/(1+exp(-10 p)) - 1``); Gretton et al. 2005 (HSIC; linear kernel);
    He et al. 2026, "Diversity over Uniformity" (DoU: per-layer cues, decorrelation between cue
    latents, robustness to removing one cue); Huang et al. 2020, "Self-Challenging Improves
    Cross-Domain Generalization" (RSC: mask the dominant features and train on the rest).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


class _GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        ctx.lam = lam
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return -ctx.lam * g, None


def grad_reverse(x: torch.Tensor, lam: float) -> torch.Tensor:
    """Gradient reversal layer: identity forward, gradient multiplied by ``-lam`` backward.

    ``GRL_λ(x) = x``, ``∂GRL_λ/∂x = -λ I``. Source: Ganin & Lempitsky 2015.

    Raises:
        ValueError: ``lam`` negative or not finite.
    """
    if not math.isfinite(lam) or lam < 0:
        raise ValueError(f"lam={lam}; allowed: a finite number >= 0")
    return _GradReverse.apply(x, float(lam))


def dann_ramp(progress: float, gamma: float = 10.0) -> float:
    """Progressive adversarial weight ``λ(p) = 2 / (1 + exp(-γ p)) - 1`` for training progress
    ``p in [0, 1]`` (0 at the start, → 1 at the end). Source: Ganin & Lempitsky 2015; used here as
    the inferred meaning of "progressively disentangles".

    Raises:
        ValueError: ``progress`` outside [0, 1].
    """
    if not 0.0 <= progress <= 1.0:
        raise ValueError(f"progress={progress}; allowed: 0 <= progress <= 1")
    return 2.0 / (1.0 + math.exp(-gamma * progress)) - 1.0


def pairwise_linear_hsic(latents: torch.Tensor) -> torch.Tensor:
    """Mean over cue pairs ``i < j`` of ``||Cov_batch(z_i, z_j)||_F^2`` (linear-kernel HSIC).

    The covariance is the unbiased sample cross-covariance over the batch,
    ``Cov(z_i, z_j) = Σ_b (z_bi − z̄_i)(z_bj − z̄_j)ᵀ / (B − 1)`` (batch-centred, normalised by
    B − 1, not B). The classical biased linear HSIC estimator ``tr(K H L H)/(B−1)²`` with linear
    kernels equals this quantity exactly (both are ``||Z_iᵀ H Z_j||_F² / (B−1)²``).

    Args:
        latents: ``[B, K, m]`` cue latents (K cues of width m).

    Returns:
        A scalar tensor ``>= 0``; 0 when ``B < 2`` or ``K < 2`` (nothing to decorrelate).

    Source: DoU's anti-collapse term (linear HSIC on batch-centred latents), read in its code.
    """
    B, K, _ = latents.shape
    if B < 2 or K < 2:
        return latents.sum() * 0.0
    z = latents - latents.mean(0, keepdim=True)
    cov = torch.einsum("bim,bjn->ijmn", z, z) / (B - 1)          # Cov(z_i, z_j): [K, K, m, m]
    sq = cov.pow(2).sum((2, 3))                                     # ||Cov(z_i, z_j)||_F^2
    iu = torch.triu_indices(K, K, offset=1)
    return sq[iu[0], iu[1]].mean()


def orthogonality(s: torch.Tensor, a: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """``||Ŝᵀ Â||_F^2 / B^2`` between batch-standardised semantic ``s [B, p]`` and artifact
    ``a [B, q]`` features: the mean squared cross-correlation times ``p q`` (0 when uncorrelated).

    Source: inferred (a standard orthogonality penalty for two-branch disentanglement).
    """
    B = s.shape[0]
    if B < 2:
        return s.sum() * 0.0
    sh = (s - s.mean(0)) / (s.std(0) + eps)
    ah = (a - a.mean(0)) / (a.std(0) + eps)
    return (sh.T @ ah).pow(2).sum() / B ** 2


def contribution_balance(contrib: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """``KL(ĉ || uniform)`` with ``ĉ_k = c_k / Σ c``, ``c_k = mean_batch |contrib[:, k]|``.

    Args:
        contrib: ``[B, K]`` per-cue contributions ``w_kᵀ a_k`` to the detector's logit.

    Returns:
        A scalar in ``[0, log K]``: 0 when every cue contributes equally.

    Source: inferred ("balance learning across artifact dimensions").
    """
    c = contrib.abs().mean(0) + eps
    p = c / c.sum()
    return (p * (p * p.numel()).log()).sum()


def dominant_mask(contrib: torch.Tensor, n_drop: int) -> torch.Tensor:
    """Boolean ``[K]`` mask of the ``n_drop`` cues with the largest mean ``|contribution|``
    (computed without gradient). Source: RSC (Huang et al. 2020), applied to cues (inferred).

    Raises:
        ValueError: ``n_drop`` not in ``0..K-1``.
    """
    K = contrib.shape[1]
    if not 0 <= n_drop < K:
        raise ValueError(f"n_drop={n_drop}; allowed: 0..{K - 1} (at least one cue must remain)")
    imp = contrib.detach().abs().mean(0)
    mask = torch.zeros(K, dtype=torch.bool, device=contrib.device)
    if n_drop:
        mask[imp.topk(n_drop).indices] = True
    return mask


def bce(logit: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy with logits, mean over the batch (y = 1 generated)."""
    return F.binary_cross_entropy_with_logits(logit, y.float())


def gaussian_kl(mu: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
    """``KL(N(μ, σ²) || N(0, I))`` summed over the last dimension, averaged over the rest:
    ``½ Σ_j (μ_j² + σ_j² − log σ_j² − 1)``.

    Source: the cue information bottleneck of DoU (He et al. 2026; its code weights it 1e-3),
    the standard VAE closed form (Kingma & Welling 2014).
    """
    return 0.5 * (mu.pow(2) + logvar.exp() - logvar - 1.0).sum(-1).mean()


def cue_removal_consistency(logit: torch.Tensor, contrib: torch.Tensor) -> torch.Tensor:
    """Mean over cues ``k`` and the batch of ``KL(p_full || p_{-k})`` between Bernoulli
    predictions with all cues and with cue ``k`` removed (``logit − c_k``); ``p_full`` is
    detached, so only the cue-removed predictions move toward the full one.

    Args:
        logit: ``[B]`` full logits. contrib: ``[B, K]`` per-cue contributions.

    Source: DoU's consistency under removing one cue (He et al. 2026), read in its code; with a
    linear head removing a cue is subtracting its contribution (inferred equivalence).
    """
    p = torch.sigmoid(logit.detach())[:, None]
    lq = logit[:, None] - contrib                       # logits without cue k: [B, K]
    log_q1, log_q0 = F.logsigmoid(lq), F.logsigmoid(-lq)
    eps = 1e-7
    kl = p * (torch.log(p + eps) - log_q1) + (1 - p) * (torch.log(1 - p + eps) - log_q0)
    return kl.mean()
