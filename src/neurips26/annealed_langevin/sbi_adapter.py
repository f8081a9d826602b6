"""sbi integration: a trained NPSE score estimator (or any single-observation score callable) in,
tuned ALD posterior samples for n observations out, with the hyperparameters reported.

The n observations are batched into **one** network call per Langevin step: θ ``(b, d)`` is
broadcast to ``(b, n, d)`` against x ``(n, d_x)``.
"""

from __future__ import annotations

import warnings
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
from .tuning import ALDHyperparameters, StepCapWarning, tune, warn_if_not_log_concave

# θ (b, d), t -> (b, n, d): s(θ_b, x_j, t) for all j; and θ (b, n, d) -> (b, n, d): paired s(θ_bj, x_j, t)
SingleScore = Callable[[torch.Tensor, float], torch.Tensor]


SBI_DEFAULT_T_MIN = 0.05   # measured: trained NPSE scores are unreliable below t ~ 0.05 (see sample_tall_posterior)

#: smoothing of a box prior's walls at the last level, as a fraction of the tall posterior's smallest sd
#: (see :func:`box_t_min`). Measured on sbi's linear-Gaussian task with a box ±2 and a posterior near a
#: wall: t_min = 1e-3 diverges (walls' curvature ≈ 1/(1 − α_t) ≈ 6.7e4 against steps chosen for curvatures
#: ~10), t_min = 0.01–0.05 gives W2 0.011–0.035; a quarter of the posterior's sd keeps the walls' curvature
#: within 16× the posterior's, and costs W2(π_{t_min}, π_0) ≈ σ_t²/(2 sd) ≈ 3% of an sd.
BOX_WALL_SMOOTHING = 0.25


def walls_reached(low, high, mean, sd) -> bool:
    """True unless mean ± 5 sd lies strictly inside the box [low, high] in every coordinate."""
    low, high, mean, sd = (np.asarray(torch.as_tensor(v, dtype=torch.float64)) for v in (low, high, mean, sd))
    return not (np.all(mean - 5 * sd > low) and np.all(mean + 5 * sd < high))


def respect_walls(hp: ALDHyperparameters, schedule: VPSchedule, kind: str, n: int,
                  max_total_steps: int | None = None) -> ALDHyperparameters:
    """Step sizes that also respect a box prior's walls, whose curvature the Gaussian rule does not see.

    Near a wall each truncated single-posterior score has curvature ≈ 1/(1 − α_t); the composite's is
    ≈ 1/(1 − α_t) when its prior term is the diffused box's (``geffner``, ``linhart``: the n single
    pulls and the (1 − n) prior push net to one) and ≈ n/(1 − α_t) for ``geffner_undiffused`` (prior
    term 0 inside the box). Each level's step is capped at 1/(that curvature), so a step never
    overshoots the wall, and K_ℓ is raised by the same factor (the contraction m·h·K is kept). With
    ``max_total_steps`` the total is then scaled back to the cap (a :class:`.tuning.StepCapWarning`).
    """
    c = n if kind == "geffner_undiffused" else 1
    h_wall = np.array([(1 - schedule.alpha(float(t))) / c for t in hp.times])
    h = np.minimum(hp.step_sizes, h_wall)
    if np.array_equal(h, hp.step_sizes):
        return hp
    k = np.ceil(hp.n_steps * (hp.step_sizes / h) - 1e-9).astype(int)
    notes = [*hp.notes, f"box walls: steps capped at (1 − α_t)/{c} on {int(np.sum(h < hp.step_sizes))} levels, "
             f"K raised to keep the contraction ({hp.total_steps} -> {int(k.sum())} total)"]
    if max_total_steps is not None and k.sum() > max_total_steps:
        asked = int(k.sum())
        k = np.maximum(1, np.floor(k * (max_total_steps / asked))).astype(int)
        notes.append(f"steps capped: {asked} asked, max_total_steps={max_total_steps}")
        warnings.warn(f"box walls: the rule asked for {asked} total Langevin steps, more than max_total_steps="
                      f"{max_total_steps}; K scaled down to {int(k.sum())}: the accuracy is not guaranteed",
                      StepCapWarning, stacklevel=2)
    return ALDHyperparameters(hp.times, h, k, hp.bound, hp.level_bounds, hp.m, hp.M, hp.kind, hp.epsilon, notes,
                              hp.requested_total_steps)


def box_t_min(schedule: VPSchedule, low, high, mean, sd, fraction: float = BOX_WALL_SMOOTHING) -> float:
    """The last annealing level for a box prior, from the box and the (fitted) tall posterior.

    Near a wall the diffused box, and every truncated single posterior, has curvature ≈ 1/(1 − α_t),
    which the Gaussian step-size rule does not see. If the tall posterior's mean ± 5 sd lies inside the
    box in every coordinate, the walls carry no mass and ``schedule.t_min`` is kept; otherwise the
    smallest t in [schedule.t_min, schedule.t_max] whose smoothing √(1 − α_t) is at least ``fraction``
    × the smallest sd (bisection; α_t decreases in t).

    Args:
        schedule: the VP schedule. low, high: the box, ``(d,)``. mean, sd: ``(d,)`` of the tall
            posterior (e.g. the Gaussian fit's). fraction: in (0, 1).

    Raises:
        ValueError: low ≥ high somewhere, a non-positive sd, or fraction not in (0, 1).
    """
    low, high, mean, sd = (np.asarray(torch.as_tensor(v, dtype=torch.float64)) for v in (low, high, mean, sd))
    if not np.all(high > low):
        raise ValueError(f"box needs low < high in every coordinate; got low={low.tolist()}, high={high.tolist()}")
    if not (np.all(np.isfinite(sd)) and np.all(sd > 0)):
        raise ValueError(f"sd must be finite and > 0, got {sd.tolist()}")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    if not walls_reached(low, high, mean, sd):
        return float(schedule.t_min)
    need = (fraction * float(np.min(sd))) ** 2              # 1 − α_t ≥ need
    lo, hi = schedule.t_min, schedule.t_max
    if 1 - schedule.alpha(lo) >= need:
        return float(lo)
    if 1 - schedule.alpha(hi) < need:
        return float(hi)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if 1 - schedule.alpha(mid) < need else (lo, mid)
    return float(hi)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if 1 - schedule.alpha(mid) < need else (lo, mid)
    return float(hi)


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
            ``SBI_DEFAULT_T_MIN`` = 0.05 for sbi estimators; for a box prior whose posterior
            reaches a wall, at least :func:`box_t_min`, where the walls are smoothed at a quarter of
            the fitted tall posterior's smallest sd). Trained NPSE networks are often
            inaccurate at very small t (sbi's output subtracts (θ − m_t)/σ_t² and σ_t → 0): we
            measured score errors of ~2 at t = 0.01 and ~14 at t = 1e-3 on a 2-D task, which the
            rule cannot budget; stopping at t_min ≈ 0.05 costs only W2(π_{t_min}, π_0) ≈ 0.01–0.02.

    Returns:
        :class:`TallPosteriorSamples`.

    Raises:
        TypeError: a prior that is neither Gaussian nor box-uniform. ValueError: bad shapes/arguments.
        NonNormalisableBridgeError / InfeasibleAccuracyError: from the rule.
        BoxPriorDivergenceError: a box prior and particles that left the box or diverged (a ``t_min``
            below :func:`box_t_min`: the step rule does not see the walls' curvature); the message
            says which ``t_min`` to use. No sample outside a box prior's support is ever returned:
            samples of π_{t_min} within the walls' smoothing (5√(1 − α_{t_min})) outside a wall are
            reflected across it.
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
    t_user = t_min                  # None: the defaults below (and, for a box prior, box_t_min) decide
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
    t_box = None
    if box is not None:
        tall_mean, tall_cov = fit.tall_posterior()
        t_box = box_t_min(schedule, *box, tall_mean, np.sqrt(np.diag(tall_cov)))
        if t_user is None and t_box > schedule.t_min:   # an explicit t_min is the user's (divergence caught below)
            schedule = VPSchedule(schedule.beta_min, schedule.beta_max, t_box, schedule.t_max)
    hp = tune(kind, schedule, fit, epsilon, **tune_kwargs)
    if box is not None and walls_reached(*box, tall_mean, np.sqrt(np.diag(tall_cov))):
        hp = respect_walls(hp, schedule, kind, x.shape[0], tune_kwargs.get("max_total_steps"))
    precs = torch.as_tensor(np.linalg.inv(fit.post_covs)) if kind == "linhart" else None
    score = composite_score_fn(kind, fn, n, mean0, cov0, schedule, precs, box_prior=box)
    probe = fit.tall_posterior()[0] + 2 * torch.randn((32, d), generator=generator, dtype=torch.float64).numpy() \
        * np.sqrt(np.diag(fit.tall_posterior()[1]))
    probe_t = torch.as_tensor(probe)
    m_est = [estimate_curvature(lambda th, t=t: score(th, float(t)), probe_t)[0]
             for t in hp.times[:: max(1, len(hp.times) // 4)]]
    warn_if_not_log_concave(m_est, "(estimated from the composite score's Jacobian) ")
    theta0 = torch.randn((num_samples, d), generator=generator, dtype=torch.float64)
    if box is None:
        samples = annealed_langevin(score, theta0, hp.times, hp.step_sizes, hp.n_steps, generator)
    else:
        advice = (f"the step-size rule does not see the box's walls, whose curvature is about 1/(1 − α_t) = "
                  f"{1 / (1 - schedule.alpha(schedule.t_min)):.3g} at t_min = {schedule.t_min:.3g}; use "
                  f"t_min >= {t_box:.3g} (the default here: walls smoothed at {BOX_WALL_SMOOTHING:g} of the fitted "
                  "posterior's smallest sd) or leave t_min unset")
        try:
            samples = annealed_langevin(score, theta0, hp.times, hp.step_sizes, hp.n_steps, generator)
        except FloatingPointError as err:
            raise BoxPriorDivergenceError(f"annealed Langevin diverged with the box prior ({err}): {advice}") from None
        samples = _into_box(samples, *box, float(np.sqrt(1 - schedule.alpha(schedule.t_min))), advice)
    return TallPosteriorSamples(samples, hp, fit, int(num_samples * n * hp.total_steps))


def _into_box(samples: torch.Tensor, low: torch.Tensor, high: torch.Tensor, sigma: float, advice: str) -> torch.Tensor:
    """Samples of π_{t_min} inside the box prior's support.

    π_{t_min} is the posterior diffused to t_min, whose walls are smoothed at scale σ = √(1 − α_{t_min}):
    a sample within 5σ outside a wall is a legitimate sample of it and is reflected across that wall
    (the mirror image of the smoothed mass); one further out, or not finite, means the run diverged and
    raises :class:`BoxPriorDivergenceError` with ``advice``."""
    tol = 5 * sigma
    far = ~torch.isfinite(samples).all(1) | (samples < low - tol).any(1) | (samples > high + tol).any(1)
    if bool(far.any()):
        worst = samples[far].abs()
        worst = float(worst[torch.isfinite(worst)].max()) if bool(torch.isfinite(worst).any()) else float("inf")
        raise BoxPriorDivergenceError(
            f"{int(far.sum())} of {len(samples)} samples left the box prior's support [{low.tolist()}, "
            f"{high.tolist()}] by more than the walls' smoothing 5·√(1 − α_t_min) = {tol:.3g} (furthest at "
            f"|θ| = {worst:.3g}): {advice}")
    out = torch.where(samples < low, 2 * low - samples, samples)
    out = torch.where(out > high, 2 * high - out, out)
    return torch.minimum(torch.maximum(out, low), high)


class BoxPriorDivergenceError(ValueError):
    """With a box prior, particles left the box or diverged: the step-size rule does not account for
    the walls' curvature below :func:`box_t_min`; the message says which ``t_min`` to use."""
