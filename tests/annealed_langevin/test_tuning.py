"""The W2 bounds and the decision rule, checked with the exact W2 of the sampler's output law."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips26.annealed_langevin import (
    GaussianFit,
    InfeasibleAccuracyError,
    NonNormalisableBridgeError,
    VPSchedule,
    ald_output,
    bridge,
    level_bound,
    max_step_profile,
    max_step_size,
    tune,
    tune_for_levels,
    w2_gaussian,
)

from .conftest import make_fit

SCH = VPSchedule()


@settings(max_examples=25, deadline=None)
@given(d=st.integers(1, 4), n=st.integers(2, 60), seed=st.integers(0, 10_000),
       scale=st.floats(0.05, 20.0), lik=st.floats(0.1, 10.0))
def test_linhart_admits_larger_steps_than_geffner(d, n, seed, scale, lik):
    # Paper's theorem (Gaussian setting): h^L_max(t) >= h^G_max(t) at every t, any prior/likelihood.
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    s0 = scale * q @ np.diag(np.exp(rng.standard_normal(d))) @ q.T
    x = rng.standard_normal((n, d))
    fit = GaussianFit.linear_gaussian(np.ones(d), s0, lik * np.eye(d), x)
    ts = np.linspace(1.0, 1e-3, 40)
    hg, hl = max_step_profile("geffner", ts, SCH, fit), max_step_profile("linhart", ts, SCH, fit)
    assert np.all(hl >= hg * (1 - 1e-9))   # 1e-9: float64 eigenvalue round-off


@pytest.mark.parametrize("d,n", [(2, 3), (2, 30), (4, 10)])
@pytest.mark.parametrize("kind", ["geffner", "linhart"])
def test_tuned_rule_meets_epsilon_exactly(d, n, kind):
    # Exact W2 of the output law (no Monte Carlo), so the guarantee W2 <= ε is checked with no slack.
    fit = make_fit(d, n, seed=d * 100 + n)
    mn, sn = fit.tall_posterior()
    for eps, delta, bias_term in [(0.1, 0.0, "lipschitz"), (0.05, 0.0, "hessian_lipschitz"),
                                  (0.1, 0.02, "hessian_lipschitz")]:
        hp = tune(kind, SCH, fit, eps, delta=delta, bias_term=bias_term)
        assert hp.bound <= eps
        bs = [bridge(kind, float(t), SCH, fit) for t in hp.times]
        u = np.ones(d) / np.sqrt(d)
        m, c = ald_output(np.zeros(d), np.eye(d), bs, hp.step_sizes, hp.n_steps, delta * u)
        assert w2_gaussian(m, c, bs[-1].mean, bs[-1].cov) <= hp.bound
        assert w2_gaussian(m, c, mn, sn) <= eps
        assert np.all(hp.step_sizes <= 2 / (hp.m + hp.M) + 1e-15)


def test_single_level_bound_holds_over_h_and_k_sweep():
    # DK19 bound vs exact W2 over a grid of (h, K) and a constant score error.
    fit = make_fit(2, 10, seed=5)
    b = bridge("geffner", 0.01, SCH, fit)
    w0 = w2_gaussian(np.zeros(2), np.eye(2), b.mean, b.cov)
    for h in np.linspace(0.05, 1.0, 6) * max_step_size(b.m, b.M):
        for k in (1, 5, 50, 500):
            for delta in (0.0, 0.3):
                m, c = ald_output(np.zeros(2), np.eye(2), [b], [h], [k], delta * np.array([1.0, 0.0]))
                assert w2_gaussian(m, c, b.mean, b.cov) <= level_bound(w0, h, k, b.m, b.M, 2, delta) + 1e-12


def test_rule_respects_the_stability_bound_and_rejects_large_steps():
    with pytest.raises(ValueError, match=r"stability bound 2/\(m\+M\)=0\.6667"):
        level_bound(1.0, 0.7, 3, 1.0, 2.0, 2)
    fit = make_fit(2, 5, seed=0)
    b = bridge("linhart", 0.01, SCH, fit)
    with pytest.raises(ValueError, match="diverges"):
        ald_output(np.zeros(2), np.eye(2), [b], [2.5 / b.M], [3])


def test_undiffused_geffner_is_refused_for_a_narrow_prior():
    # sbi's fnpe form with a narrow prior has an indefinite bridging precision (min eigenvalue < 0, measured).
    fit = make_fit(2, 10, seed=1, prior_scale=0.05)
    ms = [bridge("geffner_undiffused", float(t), SCH, fit).m for t in SCH.levels(20)]
    assert min(ms) < 0
    with pytest.raises(NonNormalisableBridgeError, match="not normalisable"):
        tune("geffner_undiffused", SCH, fit, 0.1)
    assert tune("geffner", SCH, fit, 0.1, bias_term="hessian_lipschitz").bound <= 0.1   # diffused prior is fine


def test_infeasible_accuracy_and_bad_arguments():
    fit = make_fit(2, 3, seed=2)
    with pytest.raises(InfeasibleAccuracyError, match="delta/m_t"):
        tune_for_levels("linhart", SCH.levels(5), SCH, fit, 0.01, delta=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        tune("linhart", SCH, fit, -1.0)
    with pytest.raises(ValueError, match="kind must be one of"):
        tune("song", SCH, fit, 0.1)
    with pytest.raises(ValueError, match="strictly decreasing"):
        tune_for_levels("linhart", [0.1, 0.5], SCH, fit, 0.1)
    with pytest.raises(ValueError, match="bias_fraction"):
        tune("linhart", SCH, fit, 0.1, bias_fraction=1.5)


def test_min_total_rule_is_never_costlier_than_max_gap():
    fit = make_fit(2, 10, seed=3)
    a = tune("linhart", SCH, fit, 0.1, level_rule="min_total", bias_term="hessian_lipschitz")
    b = tune("linhart", SCH, fit, 0.1, level_rule="max_gap", bias_term="hessian_lipschitz")
    assert a.total_steps <= b.total_steps and a.bound <= 0.1


def _exact_w2(kind, hp, fit):
    bs = [bridge(kind, float(t), SCH, fit) for t in hp.times]
    m, c = ald_output(np.zeros(fit.d), np.eye(fit.d), bs, hp.step_sizes, hp.n_steps)
    return w2_gaussian(m, c, *fit.tall_posterior())


@pytest.mark.parametrize("kind", ["linhart", "geffner"])
def test_tuned_rule_spends_no_more_than_hand_tuned_ald_and_reaches_eps(kind):
    """Catches: the rule keeping every annealing level within ε (track = 1), which made each of
    Geffner's 65 levels pay a full contraction: 2.31× the score evaluations of hand-tuned ALD
    (h = 1e-3, K = 5, smallest L reaching ε) in the benchmark's Gaussian example (d = 2, n = 10,
    ε = 0.1). The default must cost ≤ 1× hand-tuned on both compositions and still reach ε exactly
    (exact W2 of the output law, not a simulation)."""
    from neurips26.annealed_langevin import hand_tuned
    from neurips26.annealed_langevin.experiment import _gaussian_problem

    fit = _gaussian_problem(2, 10, np.random.default_rng(0))
    hp = tune(kind, SCH, fit, 0.1)
    L = 25
    while _exact_w2(kind, hand_tuned(kind, SCH, fit, num_levels=L), fit) > 0.1:
        L *= 2
    hand = hand_tuned(kind, SCH, fit, num_levels=L)
    assert hp.bound <= 0.1 and _exact_w2(kind, hp, fit) <= 0.1
    assert hp.total_steps <= hand.total_steps, (hp.total_steps, hand.total_steps)
    old = tune(kind, SCH, fit, 0.1, track=1)                  # every level within ε: the old rule
    assert old.total_steps > hp.total_steps and old.bound <= 0.1
    with pytest.raises(ValueError, match="track must be 'auto' or a finite number >= 1"):
        tune(kind, SCH, fit, 0.1, track=0.5)


def test_tune_cache_gives_the_same_hyperparameters():
    """tune(cache=...) reuses bridges and level gaps across calls on one problem; every field of the
    result must equal the uncached one exactly (same functions on the same inputs), also after the
    cache was filled by other ε, δ and bias terms."""
    fit = make_fit(3, 10, seed=4)
    cache: dict = {}
    for eps, delta, bt in ((0.1, 0.0, "lipschitz"), (0.05, 0.0, "hessian_lipschitz"), (0.1, 0.02, "lipschitz"),
                           (0.2, 0.0, "hessian_lipschitz")):
        for kind in ("geffner", "linhart"):
            a = tune(kind, SCH, fit, eps, delta=delta, bias_term=bt)
            b = tune(kind, SCH, fit, eps, delta=delta, bias_term=bt, cache=cache)
            assert np.array_equal(a.times, b.times) and np.array_equal(a.step_sizes, b.step_sizes)
            assert np.array_equal(a.n_steps, b.n_steps) and a.bound == b.bound
    assert cache and all(k[0] in ("geffner", "linhart") for k in cache)


def test_isotropic_bridges_with_a_binding_step_cap_tune_and_sample():
    """Bug caught: ``tune()`` crashed with ``ValueError: math domain error`` at log1p(−m·h) when a level's
    bridging density had m = M (isotropic prior, likelihood and observations) and the stability cap
    h = 2/(m + M) = 1/m bound (a loose tolerance, 10.0; ``track="auto"`` reaches it), also through
    ``sample_tall_posterior`` at N = 16 observations. With m·h = 1 one step contracts fully, so K = 1, and
    the exact output law is within ε (exact W2, no Monte Carlo: only float round-off)."""
    import torch

    from neurips26.annealed_langevin import GaussianFit, sample_tall_posterior, w2_gaussian
    from neurips26.annealed_langevin.gaussian import ald_output, bridge
    from neurips26.annealed_langevin.tuning import tune, tune_for_levels

    from .conftest import analytic_single_scores

    sch = VPSchedule()
    fit = GaussianFit.linear_gaussian(np.ones(2), np.eye(2), 2 * np.eye(2),
                                      np.random.default_rng(0).normal(size=(16, 2)))
    for kind in ("geffner", "linhart"):
        hp = tune_for_levels(kind, sch.levels(5), sch, fit, 10.0)
        assert np.allclose(hp.m * hp.step_sizes, 1.0) and np.all(hp.n_steps == 1) and hp.bound <= 10.0
        hp = tune(kind, sch, fit, 10.0)
        bs = [bridge(kind, float(t), sch, fit) for t in hp.times]
        m, c = ald_output(np.zeros(2), np.eye(2), bs, hp.step_sizes, hp.n_steps)
        assert w2_gaussian(m, c, *fit.tall_posterior()) <= 10.0
    res = sample_tall_posterior(analytic_single_scores(fit, sch), torch.zeros(16, 2), (np.ones(2), np.eye(2)), 50,
                                10.0, schedule=sch, fit=fit, generator=torch.Generator().manual_seed(0))
    assert torch.isfinite(res.samples).all() and res.hyperparameters.total_steps >= 1


def test_max_total_steps_caps_the_rule_and_reports_the_bound_of_what_runs():
    """Bug caught: one run seed of the sbi claim cost 23× the others because the rule, on a badly
    conditioned Gaussian fit, asked for 45,576 network steps with nothing to stop it. With
    ``max_total_steps`` the total is capped (at most max(cap, L)), a StepCapWarning says so,
    ``requested_total_steps`` keeps what the rule asked for, and the bound is recomputed for the capped
    values (never below the uncapped one: fewer contraction steps). The experiment's NPSE run passes its cap."""
    import warnings

    from neurips26.annealed_langevin.experiment import Config
    from neurips26.annealed_langevin.tuning import StepCapWarning, tune

    from .conftest import make_fit

    sch = VPSchedule()
    fit = make_fit(2, 10, 0)
    full = tune("geffner", sch, fit, 0.05, bias_term="lipschitz")
    assert full.total_steps > 2000 and full.requested_total_steps is None
    with pytest.warns(StepCapWarning, match="asked for"):
        capped = tune("geffner", sch, fit, 0.05, bias_term="lipschitz", max_total_steps=500)
    assert capped.total_steps <= max(500, capped.num_levels) and capped.requested_total_steps == full.total_steps
    assert capped.bound >= full.bound and np.array_equal(capped.step_sizes, full.step_sizes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StepCapWarning)                 # under the cap: unchanged, no warning
        same = tune("geffner", sch, fit, 0.05, bias_term="lipschitz", max_total_steps=10 * full.total_steps)
    assert np.array_equal(same.n_steps, full.n_steps)
    with pytest.raises(ValueError, match="max_total_steps"):
        tune("geffner", sch, fit, 0.05, max_total_steps=0)
    assert Config().sbi_max_total_steps <= 5000
