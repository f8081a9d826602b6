"""Tuned annealed Langevin dynamics for compositional score-based SBI (paper 4: Touron, Cardoso,
Arbel, Rodrigues, "Theoretical guidelines for annealed Langevin dynamics in compositional
simulation-based inference", arXiv:2605.21253).

The method in short. A score network s_φ(θ, x, t) ≈ ∇log p_t(θ | x) is trained on single observations
(sbi NPSE, VP diffusion θ_t = √α_t θ + √(1−α_t) ε). For n i.i.d. observations the tall
posterior p(θ | x_{1:n}) ∝ λ(θ)^{1−n} Π_j p(θ | x_j) is sampled with a *composite* score

    Geffner:  s^G_t = Σ_j s_φ(θ, x_j, t) + (1 − n) ∇log λ_t(θ)
    Linhart:  s^L_t = Λ_t⁻¹[Σ_j P̃_j,t s_φ(θ, x_j, t) + (1 − n) P̃_λ,t ∇log λ_t(θ)]

which is the exact score of a *bridging density* π_t (not of the diffused tall posterior), so
instead of a reverse SDE (irreducible bias) one runs annealed Langevin over levels
t_L > … > t_1: K_ℓ steps θ ← θ + h_ℓ s_{t_ℓ}(θ) + √(2h_ℓ) ξ per level. With π_ℓ m_ℓ-strongly
log-concave and M_ℓ-smooth and h_ℓ ≤ 2/(m_ℓ + M_ℓ),

    e_ℓ ≤ (1 − m_ℓ h_ℓ)^{K_ℓ} (e_{ℓ+1} + W2(π_{ℓ+1}, π_ℓ)) + 1.65 (M_ℓ/m_ℓ) √(h_ℓ d) + δ/m_ℓ,

and the paper inverts this chain into decision rules for h_ℓ, K_ℓ and L that guarantee W2 ≤ ε.
The rule implemented here (``tuning.tune``) is INFERRED from that bound, not copied from the paper
(its exact rule could not be read): see ``tuning``'s docstring for the choices we made. In the Gaussian setting every quantity has a closed form (``gaussian``).

Public API:
    VPSchedule                                   schedule.py
    geffner_score, geffner_undiffused_score, gauss_score, estimate_curvature   composite.py
    GaussianFit, bridge, w2_gaussian, ald_output, reverse_sde_output           gaussian.py
    tune, tune_for_levels, hand_tuned, level_bound, max_step_size              tuning.py
    annealed_langevin, reverse_sde                                             sampler.py
    sample_tall_posterior, single_scores_from_estimator                        sbi_adapter.py
"""

from .composite import (
                        COMPOSITE_SCORES,
                        IndefinitePrecisionWarning,
                        box_uniform_diffused_score,
                        estimate_curvature,
                        gauss_score,
                        geffner_score,
                        geffner_undiffused_score,
)
from .gaussian import (
                        BRIDGES,
                        GaussianBridge,
                        GaussianFit,
                        NonNormalisableBridgeError,
                        ald_output,
                        bridge,
                        require_normalisable,
                        reverse_sde_output,
                        w2_gaussian,
)
from .sampler import annealed_langevin, reverse_sde
from .sbi_adapter import (
                        TallPosteriorSamples,
                        composite_score_fn,
                        fit_from_single_samples,
                        sample_tall_posterior,
                        single_scores_from_estimator,
)
from .schedule import VPSchedule
from .tuning import (
                        ALDHyperparameters,
                        InfeasibleAccuracyError,
                        NotLogConcaveWarning,
                        hand_tuned,
                        level_bias,
                        level_bound,
                        level_gaps,
                        max_step_profile,
                        max_step_size,
                        tune,
                        tune_for_levels,
                        warn_if_not_log_concave,
)

__all__ = [
    "ALDHyperparameters", "BRIDGES", "COMPOSITE_SCORES", "box_uniform_diffused_score", "GaussianBridge", "GaussianFit",
    "IndefinitePrecisionWarning", "InfeasibleAccuracyError", "NonNormalisableBridgeError",
    "NotLogConcaveWarning", "TallPosteriorSamples", "VPSchedule", "ald_output", "annealed_langevin", "bridge",
    "composite_score_fn", "estimate_curvature", "fit_from_single_samples", "gauss_score", "geffner_score",
    "geffner_undiffused_score", "hand_tuned", "level_bias", "level_bound", "level_gaps", "max_step_profile",
    "max_step_size", "require_normalisable", "reverse_sde", "reverse_sde_output", "sample_tall_posterior",
    "single_scores_from_estimator", "tune", "tune_for_levels", "w2_gaussian", "warn_if_not_log_concave",
]
