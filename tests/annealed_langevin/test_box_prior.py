"""Box-uniform prior with the exact score of the truncated posterior (sbi's linear-Gaussian task).

Bug caught: with a ``BoxUniform`` prior, the exact diffused scores of the truncated single posteriors and
the default t_min = 1e-3, the Geffner and Linhart compositions diverged and ``geffner_undiffused`` silently
returned a particle at θ = 32.3 while the box is ±2: the step-size rule does not see the walls' curvature
(≈ 1/(1 − α_t) ≈ 6.7e4 at t = 1e-3). Now t_min is chosen from the box, and a run that leaves the box raises
an error that says which t_min to use.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from neurips26.annealed_langevin import VPSchedule, sample_tall_posterior
from neurips26.annealed_langevin.sbi_adapter import BoxPriorDivergenceError, box_t_min

SCH = VPSchedule()
LOW, HIGH, S = -2.0, 2.0, 1.0          # box ±2 in each coordinate; x_j ~ N(θ, S² I)


def _log_diff_ndtr(hi: torch.Tensor, lo: torch.Tensor) -> torch.Tensor:
    """log(Φ(hi) − Φ(lo)) for hi > lo, on the tail that keeps it accurate."""
    right = lo > 0
    a, b = torch.where(right, -lo, hi), torch.where(right, -hi, lo)
    la, lb = torch.special.log_ndtr(a), torch.special.log_ndtr(b)
    return la + torch.log(-torch.expm1(lb - la))


def truncated_single_scores(x: np.ndarray, schedule: VPSchedule):
    """Exact diffused scores of the single posteriors N(x_j, S² I) truncated to the box, θ (b, d) -> (b, n, d)
    or paired (b, n, d): per coordinate p_t(θ) ∝ N(θ; √α x, α S² + 1 − α)·[Φ(u_b) − Φ(u_a)], u_c = (c − μ̃)/s̃,
    with μ̃, s̃² the mean and variance of θ_0 given θ_t under the untruncated Gaussian; score by autograd."""
    xs = torch.as_tensor(x, dtype=torch.float64)

    def f(theta, t):
        a = schedule.alpha(t)
        th = (theta[:, None, :] if theta.ndim == 2 else theta).detach().expand(-1, xs.shape[0], -1).clone()
        th.requires_grad_(True)
        prec = 1 / S**2 + a / (1 - a)
        mu = (xs / S**2 + np.sqrt(a) * th / (1 - a)) / prec
        sd = prec ** -0.5
        logp = (-0.5 * (th - np.sqrt(a) * xs) ** 2 / (a * S**2 + 1 - a)
                + _log_diff_ndtr((HIGH - mu) / sd, (LOW - mu) / sd))
        (g,) = torch.autograd.grad(logp.sum(), th)
        return g

    return f


def _exact_tall_samples(x: np.ndarray, num: int, seed: int) -> np.ndarray:
    """The tall posterior under the uniform prior: N(mean x, S²/n) truncated to the box, per coordinate."""
    m, s = x.mean(0), S / np.sqrt(len(x))
    return np.stack([stats.truncnorm.rvs((LOW - mi) / s, (HIGH - mi) / s, loc=mi, scale=s, size=num,
                                         random_state=seed + i) for i, mi in enumerate(m)], axis=1)


def _case():
    rng = np.random.default_rng(0)
    theta = np.array([1.8, -1.6])                            # near two walls: the truncation matters
    return rng.normal(theta, S, size=(8, 2))


@pytest.mark.parametrize("kind", ["geffner", "linhart", "geffner_undiffused"])
def test_box_prior_matches_the_truncated_tall_posterior(kind):
    """sbi's linear-Gaussian test with a box prior: c2st between our samples and exact ones near 0.5
    (≤ 0.6: sbi's own tests accept 0.5 ± 0.1 at this size), every sample inside the box."""
    from sbi.utils.metrics import c2st

    x = _case()
    prior = torch.distributions.Independent(torch.distributions.Uniform(LOW * torch.ones(2), HIGH * torch.ones(2)), 1)
    res = sample_tall_posterior(truncated_single_scores(x, SCH), torch.as_tensor(x), prior, 1000, 0.1, kind=kind,
                                schedule=SCH, fit_samples=300, generator=torch.Generator().manual_seed(1),
                                max_total_steps=3000)
    smp = res.samples
    assert bool(((smp >= LOW) & (smp <= HIGH)).all())
    assert res.hyperparameters.times[-1] > 0.01             # chosen from the box and the posterior, not 1e-3
    ref = torch.as_tensor(_exact_tall_samples(x, 1000, 5), dtype=torch.float32)
    torch.manual_seed(0)
    assert float(c2st(smp.float(), ref)) <= 0.6, kind


def test_box_prior_at_too_small_t_min_refuses_instead_of_returning_escaped_particles():
    """At the old default t_min = 1e-3 geffner_undiffused returned a particle at 32.3: now either every
    sample lies in the box or the run raises, naming the t_min to use."""
    x = _case()
    prior = torch.distributions.Independent(torch.distributions.Uniform(LOW * torch.ones(2), HIGH * torch.ones(2)), 1)
    try:
        res = sample_tall_posterior(truncated_single_scores(x, SCH), torch.as_tensor(x), prior, 300, 0.1,
                                    kind="geffner_undiffused", schedule=SCH, t_min=1e-3, fit_samples=200,
                                    generator=torch.Generator().manual_seed(1), max_total_steps=3000)
    except BoxPriorDivergenceError as err:
        assert "t_min >=" in str(err) and "walls" in str(err)
    else:
        assert bool(((res.samples >= LOW) & (res.samples <= HIGH)).all())


def test_box_t_min_smooths_the_walls_only_where_the_posterior_reaches_them():
    """Walls far from the posterior (mean ± 5 sd inside the box) keep the schedule's t_min (a wide box costs
    nothing); a posterior near a wall gets smoothing √(1 − α_t) = a quarter of its smallest sd."""
    box = (-2 * torch.ones(2), 2 * torch.ones(2))
    assert box_t_min(SCH, *box, np.zeros(2), 0.3 * np.ones(2)) == SCH.t_min
    t = box_t_min(SCH, *box, np.array([1.8, 0.0]), np.array([0.35, 0.4]))
    assert np.sqrt(1 - SCH.alpha(t)) == pytest.approx(0.25 * 0.35, rel=1e-6) and 0.01 < t < 0.06
    with pytest.raises(ValueError, match="low < high"):
        box_t_min(SCH, torch.ones(1), torch.ones(1), np.zeros(1), np.ones(1))
