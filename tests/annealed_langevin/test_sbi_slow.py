"""sbi integration: a really trained NPSE estimator goes in, tuned tall-posterior samples come out (slow)."""

import warnings

import numpy as np
import pytest
import torch

from neurips26.annealed_langevin import sample_tall_posterior, w2_gaussian
from neurips26.annealed_langevin.gaussian import GaussianFit


@pytest.mark.slow
def test_sbi_trained_npse_through_tuned_sampler(tmp_path):
    from sbi.inference import NPSE

    torch.manual_seed(0)
    d, n = 2, 3
    s0 = np.array([[3.0, 0.5], [0.5, 1.5]])
    prior = torch.distributions.MultivariateNormal(torch.ones(d), torch.tensor(s0, dtype=torch.float32))
    theta = prior.sample((3000,))
    xs = theta + np.sqrt(2) * torch.randn(theta.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.utils.tensorboard import SummaryWriter

        inf = NPSE(prior=prior, sde_type="vp", summary_writer=SummaryWriter(log_dir=str(tmp_path / "sbi-logs")))
        inf.append_simulations(theta, xs)
        est = inf.train(max_num_epochs=60, show_train_summary=False)
    x = np.random.default_rng(1).multivariate_normal(np.ones(d), 2 * np.eye(d), size=n)
    exact = GaussianFit.linear_gaussian(np.ones(d), s0, 2 * np.eye(d), x)
    mn, sn = exact.tall_posterior()
    res = sample_tall_posterior(est, torch.tensor(x, dtype=torch.float32), prior, 400, 0.3, kind="linhart",
                                fit_samples=150, generator=torch.Generator().manual_seed(0))
    s = res.samples.numpy()
    assert np.isfinite(s).all() and res.hyperparameters.bound <= 0.3
    # the network's own error is not in the rule's budget: allow the worst single-posterior fit error
    # (W2 between the estimated and exact single posteriors, a proxy for the score error) plus 0.1
    # Monte Carlo slack for 400 particles (posterior sd ~0.6).
    fit_err = max(w2_gaussian(a, b, c, e) for a, b, c, e in zip(res.fit.post_means, res.fit.post_covs,
                                                               exact.post_means, exact.post_covs))
    w2 = w2_gaussian(s.mean(0), np.cov(s.T), mn, sn)
    print(f"W2={w2:.3f} fit_err={fit_err:.3f} steps={res.hyperparameters.total_steps}")
    assert w2 <= 0.3 + fit_err + 0.1
