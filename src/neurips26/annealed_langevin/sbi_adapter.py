"""sbi integration: a trained NPSE score estimator (or any single-observation score callable) in,
tuned ALD posterior samples for n observations out, with the hyperparameters reported.

The n observations are batched into **one** network call per Langevin step: θ ``(b, d)`` is
broadcast to ``(b, n, d)`` against x ``(n, d_x)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from .composite import (
    COMPOSITE_SCORES,
    box_uniform_diffused_score,
    estimate_curvature,
    gauss_score,
    geffner_score,
    geffner_undiffused_score,
)
from .gaussian import GaussianFit
from .sampler import annealed_langevin, reverse_sde
from .schedule import VPSchedule
from .tuning import ALDHyperparameters, tune, warn_if_not_log_concave

# θ (b, d), t -> (b, n, d): s(θ_b, x_j, t) for all j; and θ (b, n, d) -> (b, n, d): paired s(θ_bj, x_j, t)
SingleScore = Callable[[torch.Tensor, float], torch.Tensor]


SBI_DEFAULT_T_MIN = 0.05   # measured: trained NPSE scores are unreliable below t ~ 0.05 (see sample_tall_posterior)


#: rows (particles × observations) per network call of :func:`single_scores_from_estimator`:
#: one call on all b·n rows is slower on CPU than a loop over the n observations once the
#: activations leave the cache (0.54–0.79× the loop at 1000 particles × n = 10 with a 64-wide
#: MLP); chunks of about a thousand rows were 1.2–1.4× the loop (benchmarks/annealed_langevin.py)
BATCH_ROWS = 1024


def single_scores_from_estimator(estimator, x: torch.Tensor, batch_rows: int = BATCH_ROWS) -> SingleScore:
    """Wrap an sbi ``ConditionalScoreEstimator`` (e.g. ``NPSE(...).train()``) into
    ``f(θ (b, d), t) -> (b, n, d)``: s_φ(θ, x_j, t) for all j, batched over the n observations
    (θ broadcast against x); a paired input θ ``(b, n, d)`` gives s_φ(θ_bj, x_j, t).

    The b·n rows go through the network in chunks of whole particles, about ``batch_rows`` rows
    per call (at least one particle per call): far fewer calls than a loop over particles or
    observations, without the cache misses of a single call on every row.

    Args:
        estimator: an sbi score estimator (``condition_shape``, ``forward(input, condition, time)``).
        x: observations ``(n, *condition_shape)``, finite.
        batch_rows: rows per network call (≥ 1).

    Raises:
        ValueError: if ``x`` is not ``(n, *condition_shape)`` or not finite, or ``batch_rows`` < 1.
    """
    cond_shape = tuple(estimator.condition_shape)
    if x.ndim != 1 + len(cond_shape) or tuple(x.shape[1:]) != cond_shape:
        raise ValueError(f"x must have shape (n, {', '.join(map(str, cond_shape))}), got {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError("x contains NaN or inf")
    if isinstance(batch_rows, bool) or not isinstance(batch_rows, (int, np.integer)) or batch_rows < 1:
        raise ValueError(f"batch_rows must be an integer >= 1, got {batch_rows!r}")
    n = x.shape[0]
    per_call = max(1, int(batch_rows) // n)                   # particles per network call
    cond = x.to(torch.float32)
    estimator.eval()

    def f(theta: torch.Tensor, t: float) -> torch.Tensor:
        if theta.ndim == 3:
            inp = theta
        else:
            b, d = theta.shape
            inp = theta[:, None, :].expand(b, n, d)
        b, _, d = inp.shape
        inp = inp.to(torch.float32)
        time_t = torch.tensor(float(t))
        with torch.no_grad():
            outs = [estimator(input=inp[i:i + per_call], condition=cond, time=time_t).reshape(-1, n, d)
                    for i in range(0, b, per_call)]
        out = outs[0] if len(outs) == 1 else torch.cat(outs)
        return out.reshape(b, n, d).to(theta.dtype)

    return f


def _prior_box(prior) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``(low, high)`` (float64, ``(d,)``) of a box-uniform prior — sbi's ``BoxUniform`` or an
    ``Independent(Uniform(low, high), 1)`` — else ``None``."""
    dists = torch.distributions
    if (isinstance(prior, dists.Independent) and isinstance(prior.base_dist, dists.Uniform)
            and prior.reinterpreted_batch_ndims == 1 and prior.base_dist.low.ndim == 1):
        return prior.base_dist.low.double(), prior.base_dist.high.double()
    return None


def _prior_gaussian(prior) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean ``(d,)`` and covariance ``(d, d)`` (float64) of a Gaussian prior, or the moments of a box.

    Accepts a torch ``MultivariateNormal``, an ``Independent(Normal(loc, scale), 1)`` (sbi's
    diagonal Gaussian; covariance diag(scale²)), a ``(mean, cov)`` tuple, or a box-uniform prior
    (sbi's ``BoxUniform`` / ``Independent(Uniform, 1)``): its moments, mean (a + b)/2 and
    covariance diag((b − a)²/12), which the tuning rule's Gaussian bridges and GAUSS's prior
    precision use while the score uses the box itself (see :func:`sample_tall_posterior`).

    Raises:
        TypeError: any other prior, saying what to pass instead.
    """
    if isinstance(prior, tuple) and len(prior) == 2:
        mean, cov = (torch.as_tensor(a, dtype=torch.float64) for a in prior)
        return mean, cov
    if isinstance(prior, torch.distributions.MultivariateNormal):
        return prior.mean.double(), prior.covariance_matrix.double()
    dists = torch.distributions
    if (isinstance(prior, dists.Independent) and isinstance(prior.base_dist, dists.Normal)
            and prior.reinterpreted_batch_ndims == 1 and prior.base_dist.loc.ndim == 1):
        loc, scale = prior.base_dist.loc.double(), prior.base_dist.scale.double()
        return loc, torch.diag(scale ** 2)
    box = _prior_box(prior)
    if box is not None:
        low, high = box
        return (low + high) / 2, torch.diag((high - low) ** 2 / 12)
    raise TypeError(
        f"prior {type(prior).__name__} has no closed-form diffused score: pass a Gaussian prior as a torch "
        "MultivariateNormal, an Independent(Normal(loc, scale), 1), a (mean, cov) tuple, or a box-uniform prior "
        "(sbi's BoxUniform / Independent(Uniform(low, high), 1)); for another prior, re-parametrise to an "
        "unbounded space with a Gaussian prior there, or pass a Gaussian (mean, cov) approximating it (the "
        "result then targets that prior)")


@dataclass
class TallPosteriorSamples:
    """Result of :func:`sample_tall_posterior`.

    Attributes:
        samples: ``(num_samples, d)`` float64.
        hyperparameters: the ALD hyperparameters used (tuned).
        fit: the Gaussian fit the rule was computed on.
        score_evaluations: network evaluations = num_samples × n × Σ K_ℓ.
    """

    samples: torch.Tensor
    hyperparameters: ALDHyperparameters
    fit: GaussianFit
    score_evaluations: int


def composite_score_fn(kind: str, single: SingleScore, n: int, prior_mean: torch.Tensor,
                       prior_cov: torch.Tensor, schedule: VPSchedule,
                       posterior_precisions: torch.Tensor | None = None, *,
                       box_prior: tuple[torch.Tensor, torch.Tensor] | None = None):
    """Composite score ``(θ (b, d), t) -> (b, d)`` for ``kind`` in ``composite.COMPOSITE_SCORES``
    with a Gaussian prior N(prior_mean, prior_cov); ``posterior_precisions`` ``(n, d, d)`` or
    ``(d, d)`` is required for ``"linhart"``.

    With ``box_prior=(low, high)`` the prior is U(box) instead: its diffused score
    (:func:`.composite.box_uniform_diffused_score`) replaces the Gaussian one in ``geffner`` and
    ``linhart``; ``geffner_undiffused`` uses the undiffused score 0 (exact inside the box, where
    a uniform density is constant; outside it has no density and the single scores pull back);
    ``prior_mean``/``prior_cov`` are then the box's moments, used only for GAUSS's prior
    precision P̃_λ,t (a Gaussian approximation of the box's denoising precision).

    Raises:
        ValueError: unknown kind or missing precisions.
    """
    if kind not in COMPOSITE_SCORES:
        raise ValueError(f"kind must be one of {COMPOSITE_SCORES}, got {kind!r}")
    if kind == "linhart" and posterior_precisions is None:
        raise ValueError("the linhart (GAUSS) score needs posterior_precisions (n, d, d) or (d, d)")
    d = prior_mean.shape[0]
    eye = torch.eye(d, dtype=torch.float64)
    prior_prec = torch.linalg.inv(prior_cov)

    def score(theta: torch.Tensor, t: float) -> torch.Tensor:
        a = schedule.alpha(t)
        s = single(theta, t).double()
        if kind == "geffner_undiffused":
            ps0 = torch.zeros_like(theta) if box_prior else -(theta - prior_mean) @ prior_prec.T
            return geffner_undiffused_score(s, ps0, t, schedule.t_max)
        if box_prior:
            ps = box_uniform_diffused_score(theta, box_prior[0], box_prior[1], a)
        else:
            cov_t = a * prior_cov + (1 - a) * eye
            ps = -torch.linalg.solve(cov_t, (theta - np.sqrt(a) * prior_mean).T).T
        if kind == "geffner":
            return geffner_score(s, ps)
        return gauss_score(s, ps, posterior_precisions, prior_prec, a)

    return score


def fit_from_single_samples(prior_mean, prior_cov, single_samples: torch.Tensor) -> GaussianFit:
    """Gaussian moment fit from samples of each single posterior, ``(m, n, d)`` (m ≥ d + 1)."""
    m, n, d = single_samples.shape
    if m < d + 2:
        raise ValueError(f"need at least d+2={d + 2} samples per observation, got {m}")
    xs = single_samples.double().numpy()
    means = xs.mean(0)
    diff = xs - means
    covs = np.einsum("mni,mnj->nij", diff, diff) / (m - 1)
    return GaussianFit(np.asarray(prior_mean, float), np.asarray(prior_cov, float), means, covs)


def sample_tall_posterior(single: SingleScore | object, x: torch.Tensor, prior, num_samples: int,
                          epsilon: float, kind: str = "linhart", schedule: VPSchedule | None = None,
                          fit: GaussianFit | None = None, fit_samples: int = 500, t_min: float | None = None,
                          generator: torch.Generator | None = None, **tune_kwargs) -> TallPosteriorSamples:
    """Tuned annealed Langevin for the tall posterior p(θ | x_{1:n}).

    Steps: (1) wrap the estimator (one batched call for the n observations); (2) if no ``fit`` is
    given, fit a Gaussian to each single posterior from ``fit_samples`` reverse-SDE samples of
    the single-observation score (all n at once); (3) tune (h_ℓ, K_ℓ, L) with the Gaussian rule
    (``tuning.tune``; ``tune_kwargs`` are passed on; its default bias term is the
    Hessian-Lipschitz one with H = 0, i.e. the Gaussian-setting rule); (4) estimate m_t of the actual composite score by finite
    differences around the fitted posterior and warn (``NotLogConcaveWarning``) if ≤ 0: the
    guarantee is then only a heuristic; (5) run ALD from N(0, I) with the ``kind`` composite score.

    Args:
        single: an sbi VP score estimator, or a callable ``SingleScore`` (both input shapes are
            needed when ``fit`` is None).
        x: observations ``(n, *condition_shape)``; n = 1 is allowed (no composition: every
            composite score reduces to the single score).
        prior: torch ``MultivariateNormal``, ``Independent(Normal, 1)``, ``(mean, cov)``, or a
            box-uniform prior (sbi's default ``BoxUniform``, or ``Independent(Uniform, 1)``). For a
            box, the composite score's prior term is the box's exact diffused score
            (:func:`.composite.box_uniform_diffused_score`), so the bridging densities ALD
            anneals through are π_t ∝ λ_t^{1−n} Π_j p_t(θ | x_j) with λ_t the diffused box (its
            faces smoothed at scale √(1 − α_t)); the step-size rule, which needs Gaussian bridges,
            computes them with the box's moment-matched Gaussian N((a+b)/2, diag((b−a)²/12)) in
            place of the prior (like GAUSS's prior precision). The rule's guarantee is then a
            Gaussian-setting heuristic, as for any non-Gaussian posterior. Other priors raise
            TypeError saying what to pass instead.
        num_samples: number of posterior samples (≥ 1). epsilon: prescribed W2 accuracy (> 0).
        kind: composite score, one of ``composite.COMPOSITE_SCORES``.
        schedule: required when ``single`` is a callable (read from an sbi estimator otherwise).
        t_min: last annealing level (default: the schedule's for callables,
            ``SBI_DEFAULT_T_MIN`` = 0.05 for sbi estimators). Trained NPSE networks are often
            inaccurate at very small t (sbi's output subtracts (θ − m_t)/σ_t² and σ_t → 0): we
            measured score errors of ~2 at t = 0.01 and ~14 at t = 1e-3 on a 2-D task, which the
            rule cannot budget; stopping at t_min ≈ 0.05 costs only W2(π_{t_min}, π_0) ≈ 0.01–0.02.

    Returns:
        :class:`TallPosteriorSamples`.

    Raises:
        TypeError: a prior that is neither Gaussian nor box-uniform. ValueError: bad shapes/arguments.
        NonNormalisableBridgeError / InfeasibleAccuracyError: from the rule.
    """
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)) or num_samples < 1:
        raise ValueError(f"num_samples must be an integer >= 1, got {num_samples!r}")
    if not isinstance(x, torch.Tensor):
        x = torch.as_tensor(np.asarray(x, dtype=float))
    if x.ndim < 2 or x.shape[0] < 1:
        raise ValueError(f"x must have shape (n, *condition_shape) with n >= 1 observations, got {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError("x contains NaN or inf")
    mean0, cov0 = _prior_gaussian(prior)
    box = _prior_box(prior)
    d = mean0.shape[0]
    if fit is not None:
        if fit.d != d:
            raise ValueError(f"prior dimension {d} does not match fit dimension {fit.d}")
        if fit.n != x.shape[0]:
            raise ValueError(f"fit has {fit.n} single posteriors but x has n = {x.shape[0]} observations")
    if callable(single) and not isinstance(single, torch.nn.Module):
        if schedule is None:
            raise ValueError("pass schedule= (a VPSchedule) when single is a plain callable")
        fn = single
    else:
        schedule = schedule or VPSchedule.from_sbi(single)
        fn = single_scores_from_estimator(single, x)
        if t_min is None:
            t_min = max(schedule.t_min, SBI_DEFAULT_T_MIN)
    if t_min is not None:
        schedule = VPSchedule(schedule.beta_min, schedule.beta_max, float(t_min), schedule.t_max)
    n = x.shape[0]
    if fit is None:
        z = torch.randn((fit_samples * n, d), generator=generator, dtype=torch.float64)

        def per_obs(theta_flat: torch.Tensor, t: float) -> torch.Tensor:
            # paired call: particle i of observation j is scored against x_j only
            return fn(theta_flat.reshape(fit_samples, n, d), t).reshape(-1, d)

        single_samples = reverse_sde(per_obs, z, schedule, 200, generator).reshape(fit_samples, n, d)
        fit = fit_from_single_samples(mean0.numpy(), cov0.numpy(), single_samples)
    hp = tune(kind, schedule, fit, epsilon, **tune_kwargs)
    precs = torch.as_tensor(np.linalg.inv(fit.post_covs)) if kind == "linhart" else None
    score = composite_score_fn(kind, fn, n, mean0, cov0, schedule, precs, box_prior=box)
    probe = fit.tall_posterior()[0] + 2 * torch.randn((32, d), generator=generator, dtype=torch.float64).numpy() \
        * np.sqrt(np.diag(fit.tall_posterior()[1]))
    probe_t = torch.as_tensor(probe)
    m_est = [estimate_curvature(lambda th, t=t: score(th, float(t)), probe_t)[0]
             for t in hp.times[:: max(1, len(hp.times) // 4)]]
    warn_if_not_log_concave(m_est, "(estimated from the composite score's Jacobian) ")
    theta0 = torch.randn((num_samples, d), generator=generator, dtype=torch.float64)
    samples = annealed_langevin(score, theta0, hp.times, hp.step_sizes, hp.n_steps, generator)
    return TallPosteriorSamples(samples, hp, fit, int(num_samples * n * hp.total_steps))
