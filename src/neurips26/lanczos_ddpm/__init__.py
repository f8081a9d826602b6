"""Full-covariance DDPM reverse steps and the Lanczos Gaussian sampler (paper 13).

Akhtar, El Gadarri, Farias, Jozefiak (2026), "The Value of Covariance Matching in Gaussian
DDPMs and the Lanczos Sampler", arXiv:2605.22723.

The method in short. A DDPM reverse step t → s draws x_s = μ_t + ξ with

    μ_t  = c0 E[x_0|x_t] + c1 x_t,    c0 = √ᾱ_s β/(1-ᾱ_t),  c1 = √(1-β)(1-ᾱ_s)/(1-ᾱ_t)
    Σ*_t = β̃ I + c0² Cov[x_0|x_t],   Cov[x_0|x_t] = ((1-ᾱ_t)/√ᾱ_t) ∂E[x_0|x_t]/∂x_t  (Tweedie)

Isotropic Σ_t gives path KL Ω(1/T); Σ*_t gives O(1/T²). Σ*_t v is one Jacobian-vector product
of the network's posterior mean, so the Lanczos Gaussian sampler (LGS) draws ξ ≈ Σ*^{1/2} z as

    ξ_k = ‖z‖ V_k T_k^{1/2} e_1       (k Lanczos steps on v ↦ Σ*_t v from z/‖z‖; k JVPs)

matrix-free ((k+2)·d memory), training-free, with error decaying geometrically in k.

Public API::

    from neurips26.lanczos_ddpm import ddpm_sample, spaced_timesteps, vp_alphas_cumprod
    x0, stats = ddpm_sample(model, (16, 3, 32, 32), alphas_cumprod, timesteps,
                            prediction_type="epsilon", covariance="lanczos", k=3)
"""

from .covariance import (
                         COVARIANCES,
                         PREDICTION_TYPES,
                         ForwardModeUnsupportedWarning,
                         SamplerStats,
                         covariance_matvec,
                         dense_covariance,
                         linearize,
                         posterior_mean_from_prediction,
                         reverse_noise,
)
from .diffusers_adapter import diffusers_model, sample_with_diffusers
from .gmm import (
                         GaussianMixtureLaw,
                         gaussian_mixture_law,
                         gmm_covariance_oracle,
                         gmm_denoiser,
                         gmm_logpdf,
                         gmm_posterior_covariance,
                         gmm_posterior_mean,
                         gmm_reverse_logpdf,
                         gmm_sample,
)
from .lanczos import LanczosDecomposition, dense_sqrt_apply, lanczos_gaussian_sample, lanczos_sqrt, lanczos_tridiagonal
from .path_kl import PATH_KL_COVARIANCES, PathKL, gaussian_kl_same_mean, path_kl_gaussian_mixture
from .sampler import ddpm_sample, equal_cost_steps, reverse_step
from .schedule import StepCoefficients, schedule_steps, spaced_timesteps, step_coefficients, vp_alphas_cumprod

__all__ = [
    "COVARIANCES", "PREDICTION_TYPES", "PATH_KL_COVARIANCES", "ForwardModeUnsupportedWarning", "SamplerStats",
    "covariance_matvec", "dense_covariance", "linearize", "posterior_mean_from_prediction", "reverse_noise",
    "diffusers_model", "sample_with_diffusers",
    "GaussianMixtureLaw", "gaussian_mixture_law", "gmm_covariance_oracle", "gmm_denoiser", "gmm_logpdf",
    "gmm_posterior_covariance", "gmm_posterior_mean", "gmm_reverse_logpdf", "gmm_sample",
    "LanczosDecomposition", "dense_sqrt_apply", "lanczos_gaussian_sample", "lanczos_sqrt", "lanczos_tridiagonal",
    "PathKL", "gaussian_kl_same_mean", "path_kl_gaussian_mixture",
    "ddpm_sample", "equal_cost_steps", "reverse_step",
    "StepCoefficients", "schedule_steps", "spaced_timesteps", "step_coefficients", "vp_alphas_cumprod",
]
