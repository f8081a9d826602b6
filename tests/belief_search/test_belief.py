"""The belief: prior, log-space updates, information gain, calibration."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.belief_search import (
    Belief,
    SensorModel,
    binary_entropy,
    calibrate_sensor,
    entropy,
    expected_information_gain,
    outcome_index,
    prior_from_scores,
)

MAP = SensorModel((0.2, 0.05, 0.25, 0.5), (0.85, 0.05, 0.07, 0.03), (0.9,))


def test_prior_is_normalised_and_mixed():
    p = prior_from_scores(np.array([0.0, 10.0, -5.0, 1.0]), beta=5.0, mix=0.2)
    assert p.sum() == pytest.approx(1.0) and p.min() >= 0.2 / 4 - 1e-15
    assert np.allclose(prior_from_scores(np.arange(5.0), beta=0.0), 0.2)
    with pytest.raises(ValueError, match="finite"):
        prior_from_scores(np.array([np.nan, 1.0]))
    for beta in (np.inf, np.nan, -1.0):  # beta = inf used to return an all-NaN prior
        with pytest.raises(ValueError, match="beta="):
            prior_from_scores(np.array([0.0, 1.0]), beta=beta)


def test_updates_stay_normalised_non_negative_and_match_bayes():
    rng = np.random.default_rng(0)
    prior = rng.dirichlet(np.ones(16))
    b = Belief(prior)
    direct = prior.copy()
    p_in, p_out = MAP.likelihoods
    for _ in range(300):  # long runs of evidence would underflow a probability-space product
        i, o = int(rng.integers(16)), int(rng.integers(4))
        b.update(i, o, MAP)
        lik = np.full(16, p_out[o])
        lik[i] = p_in[o]
        direct = direct * lik
        direct /= direct.sum()
        assert abs(b.probs.sum() - 1) < 1e-12 and b.probs.min() >= 0
    assert np.allclose(b.probs, direct, atol=1e-9)
    before = b.probs.copy()
    b.update(3, None, MAP)  # non-informative look: belief unchanged, look recorded
    assert np.array_equal(b.probs, before) and b.history[-1] == (3, None)


def test_floor_keeps_a_false_no_from_eliminating_the_truth():
    b = Belief(np.full(4, 0.25))
    b.update(0, 0, SensorModel.binary(1.0, 0.0))  # a "no" from a sensor claimed perfect
    assert b.probs[0] > 0 and np.isfinite(b.log_b).all()


def test_eig_is_mutual_information_and_never_negative():
    rng = np.random.default_rng(1)
    p_in, p_out = MAP.likelihoods
    for _ in range(50):
        b = rng.dirichlet(np.full(10, 0.3))
        eig = expected_information_gain(b, MAP)
        assert eig.min() >= 0
        for i in range(10):
            exp_h = 0.0
            for o in range(4):
                lik = np.full(10, p_out[o])
                lik[i] = p_in[o]
                joint = b * lik
                exp_h += joint.sum() * entropy(joint / joint.sum())
            assert eig[i] == pytest.approx(entropy(b) - exp_h, abs=1e-10)


def test_binary_eig_closed_form():
    m = SensorModel.binary(0.8, 0.1)
    b = np.array([0.5, 0.3, 0.2])
    p_yes = b * 0.8 + (1 - b) * 0.1
    want = binary_entropy(p_yes) - (b * binary_entropy(0.8) + (1 - b) * binary_entropy(0.1))
    assert np.allclose(expected_information_gain(b, m), want)
    assert expected_information_gain(np.array([1.0, 0.0]), m).max() == pytest.approx(0.0, abs=1e-12)


def test_calibration_recovers_rates():
    rng = np.random.default_rng(2)
    e = rng.random(20_000) < 0.2
    yes = np.where(e, rng.random(e.size) < 0.8, rng.random(e.size) < 0.1)
    m = calibrate_sensor(yes.astype(int), e)
    # 4000 positives: binomial SE of the TPR ≈ 0.006; 0.03 is 5 SE
    assert m.tpr == pytest.approx(0.8, abs=0.03) and m.fpr == pytest.approx(0.1, abs=0.02)
    with pytest.raises(ValueError, match="both evidence and non-evidence"):
        calibrate_sensor(np.ones(5, int), np.ones(5, bool))
    with pytest.raises(ValueError, match="must exceed"):
        calibrate_sensor(np.array([0, 0, 1, 1]), np.array([True, True, False, False]))


def test_outcome_bins():
    assert outcome_index(False, 0.2, (0.5, 0.9)) == 0
    assert outcome_index(True, 0.95, (0.5, 0.9)) == 5
    assert outcome_index(True, 0.6) == 1 and outcome_index(None, 0.6) is None
    for conf in (np.nan, 1.5, -0.1):  # NaN used to land silently in the top bin
        with pytest.raises(ValueError, match="confidence="):
            outcome_index(True, conf, (0.5, 0.9))
    with pytest.raises(ValueError, match="n_options=2.5"):
        SensorModel.binary(0.8, 0.1, n_options=2.5)
    with pytest.raises(ValueError, match="integer outcome"):
        calibrate_sensor(np.array([1.7, 0.2]), np.array([True, False]))
    with pytest.raises(ValueError, match="pseudo="):
        calibrate_sensor(np.array([1, 0]), np.array([True, False]), pseudo=-1)
    with pytest.raises(ValueError, match="summing to 1"):
        SensorModel((0.5, 0.5), (0.9, 0.1), (0.5,))
