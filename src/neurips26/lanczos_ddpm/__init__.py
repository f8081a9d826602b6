r"""Full-covariance DDPM reverse steps and the Lanczos Gaussian sampler (paper 13).

Akhtar, El Gadarri, Farias, Jozefiak (2026), "The Value of Covariance Matching in Gaussian
DDPMs and the Lanczos Sampler", arXiv:2605.22723.

The method in short. A DDPM reverse step :math:`t \to s` draws :math:`x_s = \mu_t + \xi` with

.. math::

    \begin{aligned}
    \mu_t &= c_0\,\mathbb{E}[x_0 \mid x_t] + c_1 x_t, &
    c_0 &= \frac{\sqrt{\bar\alpha_s}\,\beta}{1-\bar\alpha_t}, \quad
    c_1 = \frac{\sqrt{1-\beta}\,(1-\bar\alpha_s)}{1-\bar\alpha_t},\\
    \Sigma^*_t &= \tilde\beta I + c_0^2\,\mathrm{Cov}[x_0 \mid x_t], &
    \mathrm{Cov}[x_0 \mid x_t] &= \frac{1-\bar\alpha_t}{\sqrt{\bar\alpha_t}}\,
    \frac{\partial\,\mathbb{E}[x_0 \mid x_t]}{\partial x_t} \quad \text{(Tweedie)}.
    \end{aligned}

Isotropic :math:`\Sigma_t` gives path KL :math:`\Omega(1/T)`; :math:`\Sigma^*_t` gives
:math:`O(1/T^2)`. :math:`\Sigma^*_t v` is one Jacobian-vector product of the network's posterior
mean, so the Lanczos Gaussian sampler (LGS) draws :math:`\xi \approx \Sigma^{*1/2} z` as

.. math::

    \xi_k = \lVert z\rVert\, V_k T_k^{1/2} e_1
    \qquad (k \text{ Lanczos steps on } v \mapsto \Sigma^*_t v \text{ from } z/\lVert z\rVert;\ k \text{ JVPs}),

matrix-free (:math:`(k+2)\,d` memory), training-free, with error decaying geometrically in
:math:`k`.

Example (a stand-in network; pass your trained ε-, x0- or v-prediction model)::

    import torch
    from neurips26.lanczos_ddpm import ddpm_sample, spaced_timesteps, vp_alphas_cumprod
    model = lambda x, t: 0.1 * torch.tanh(x)             # noqa: E731 — model(x, t) -> ε̂, t a LongTensor (B,)
    x0, stats = ddpm_sample(model, (4, 3, 8, 8), vp_alphas_cumprod(1000), spaced_timesteps(1000, 10),
                            prediction_type="epsilon", covariance="lanczos", k=3,
                            generator=torch.Generator().manual_seed(0))
    print(x0.shape, stats.forward, stats.jvp)            # 10 network calls, k JVPs per noisy step
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
