"""Review fixes: bad input that used to give a silent wrong answer or an unclear error."""

import numpy as np
import pytest
import torch

from neurips26.annealed_langevin import (
    GaussianFit,
    VPSchedule,
    annealed_langevin,
    sample_tall_posterior,
    tune,
    w2_gaussian,
)

FIT = GaussianFit.linear_gaussian(np.ones(2), np.eye(2), 2 * np.eye(2), np.ones((5, 2)))
PRIOR = torch.distributions.MultivariateNormal(torch.ones(2), torch.eye(2))


def single(th, t):
    return -th[:, None, :].expand(-1, 5, -1) if th.ndim == 2 else -th


def _stp(x=None, prior=PRIOR, num=10, fit=FIT):
    x = torch.ones(5, 2) if x is None else x
    return sample_tall_posterior(single, x, prior, num, 0.2, schedule=VPSchedule(), fit=fit)


def test_w2_gaussian_refuses_non_psd_and_nan_instead_of_returning_0_or_nan():
    with pytest.raises(ValueError, match="positive semi-definite"):
        w2_gaussian(np.zeros(2), -np.eye(2), np.zeros(2), np.eye(2))    # used to return 0.0
    with pytest.raises(ValueError, match="NaN or inf"):
        w2_gaussian(np.full(2, np.nan), np.eye(2), np.zeros(2), np.eye(2))   # used to return nan


def test_fit_with_no_observations_is_refused():
    with pytest.raises(ValueError, match="at least one observation"):
        GaussianFit.linear_gaussian(np.ones(2), np.eye(2), 2 * np.eye(2), np.ones((0, 2)))


def test_sampler_length_mismatch_and_integer_particles_name_the_problem():
    hp = tune("linhart", VPSchedule(), FIT, 0.2)
    th = torch.randn(4, 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="one entry per level"):
        annealed_langevin(lambda t, s: -t, th, hp.times[:-1], hp.step_sizes, hp.n_steps)
    with pytest.raises(ValueError, match="floating-point"):
        annealed_langevin(lambda t, s: -t, torch.ones(4, 2, dtype=torch.int64), hp.times, hp.step_sizes, hp.n_steps)


def test_sample_tall_posterior_refuses_mismatched_or_bad_observations():
    with pytest.raises(ValueError, match="fit has 5 single posteriors but x has n = 3"):
        _stp(x=torch.ones(3, 2))            # used to run silently with the wrong fit
    with pytest.raises(ValueError, match="n >= 1 observations"):
        _stp(x=torch.ones(2))               # a 1-D x used to be read as n = 2 observations
    with pytest.raises(ValueError, match="n >= 1 observations"):
        _stp(x=torch.ones(0, 2))
    with pytest.raises(ValueError, match="NaN or inf"):
        _stp(x=torch.full((5, 2), float("nan")))
    with pytest.raises(ValueError, match="prior dimension 3 does not match fit dimension 2"):
        _stp(prior=torch.distributions.MultivariateNormal(torch.ones(3), torch.eye(3)))
    with pytest.raises(ValueError, match="integer >= 1, got 2.5"):
        _stp(num=2.5)


@pytest.mark.parametrize("bad", [dict(ns=[1, 2]), dict(dims=[0]), dict(epsilons=[0.1, -1.0]),
                                 dict(score_error=float("inf")), dict(rsde_steps=[100]), dict(transfer_ns=[1]),
                                 dict(sbi_epsilon=float("nan"))])
def test_config_rejects_bad_values_up_front(bad):
    """These used to pass validation and fail mid-run (or, for score_error=inf, inside the tuner)."""
    from pydantic import ValidationError

    from neurips26.annealed_langevin.experiment import Config

    with pytest.raises(ValidationError):
        Config(**bad)
