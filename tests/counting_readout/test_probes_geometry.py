"""SNR, probes, count subspace and principal angles on cases with known answers."""

import math

import numpy as np
import pytest
from scipy.linalg import subspace_angles

from neurips26.counting_readout import (
    count_subspace,
    fisher_snr,
    principal_angles_deg,
    principal_cosines,
    probe_layers,
    random_abs_cosine,
    readout_alignment,
    to_db,
)
from neurips26.counting_readout.geometry import random_principal_cosine


def _gaussian_counts(rng, n=3000, d=16, sigma=1.0, scale=1.0):
    u = rng.standard_normal((d, 2))
    means = scale * np.stack([np.cos(np.arange(9) / 3), np.sin(np.arange(9) / 3)], 1) @ u.T
    y = np.repeat(np.arange(1, 10), n // 9)
    return means[y - 1] + sigma * rng.standard_normal((len(y), d)), y, means


def test_snr_matches_analytic_fisher_ratio():
    rng = np.random.default_rng(0)
    X, y, means = _gaussian_counts(rng, n=27000, d=6, sigma=0.8)
    analytic = np.mean(np.sum((means - means.mean(0)) ** 2, 1)) / (6 * 0.8 ** 2)
    assert fisher_snr(X, y) == pytest.approx(analytic, rel=0.05)    # 27k samples: ~1 % sampling error
    assert to_db(10.0) == pytest.approx(10.0)


def test_snr_degenerate_cases():
    y = np.repeat([1, 2], 10)
    assert fisher_snr(np.ones((20, 3)), y) == 0.0
    assert fisher_snr(np.c_[y, y].astype(float), y) == math.inf
    with pytest.raises(ValueError, match="2 classes"):
        fisher_snr(np.ones((5, 2)), np.ones(5))


def test_count_subspace_recovers_the_planted_plane():
    rng = np.random.default_rng(1)
    X, y, means = _gaussian_counts(rng, d=32, sigma=0.3)
    plane = (means - means.mean(0)).T
    Q = count_subspace(X, y, 2)
    assert np.allclose(Q.T @ Q, np.eye(2), atol=1e-10)
    assert principal_cosines(Q, plane)[-1] > 0.95          # the planted means span a plane; C must match it
    Xb, yb, _ = _gaussian_counts(np.random.default_rng(1), n=9000, d=32, sigma=0.3)   # same plane, more samples
    Qp = count_subspace(Xb, yb, 2, method="probe")          # regularised probe rows: close, not equal
    assert np.allclose(Qp.T @ Qp, np.eye(2), atol=1e-10) and principal_cosines(Qp, plane)[0] > 0.95
    with pytest.raises(ValueError, match="5·r"):
        few = np.concatenate([np.nonzero(y == c)[0][:10] for c in range(1, 10)])    # 10 per count < 5·8
        count_subspace(X[few], y[few], 8)
    with pytest.raises(ValueError, match="allowed"):
        count_subspace(X, y, 2, method="pca")


def test_principal_angles_equal_scipy():
    rng = np.random.default_rng(2)
    A, B = rng.standard_normal((50, 4)), rng.standard_normal((50, 7))
    ours = np.sort(np.radians(principal_angles_deg(A, B)))
    assert np.allclose(ours, np.sort(subspace_angles(A, B)), atol=1e-8)
    with pytest.raises(ValueError, match="ambient"):
        principal_cosines(A, rng.standard_normal((40, 2)))


def test_random_cosine_baseline():
    rng = np.random.default_rng(3)
    d = 1024
    u, v = rng.standard_normal((2000, d)), rng.standard_normal((2000, d))
    emp = np.mean(np.abs(np.sum(u * v, 1)) / (np.linalg.norm(u, axis=1) * np.linalg.norm(v, axis=1)))
    assert emp == pytest.approx(math.sqrt(2 / (math.pi * d)), rel=0.2)     # ~1.6 % standard error
    assert random_abs_cosine(d) == pytest.approx(math.sqrt(2 / (math.pi * d)), rel=0.01)
    assert 0 < random_principal_cosine(64, 8, 9, n=50) < 1


def test_readout_alignment_extremes():
    rng = np.random.default_rng(4)
    Q = np.linalg.qr(rng.standard_normal((20, 3)))[0]
    inside = (Q @ rng.standard_normal((3, 9))).T
    assert readout_alignment(Q, inside)["cos_theta1"] == pytest.approx(1.0)
    outside = rng.standard_normal((9, 20))
    outside -= outside @ Q @ Q.T
    a = readout_alignment(Q, outside)
    assert a["cos_theta1"] < 1e-10 and a["mean_abs_cos"] < 1e-10


def test_probe_layers_finds_signal_only_where_planted():
    rng = np.random.default_rng(5)
    X, y, _ = _gaussian_counts(rng, n=1800, d=16, sigma=0.2)
    noise = rng.standard_normal(X.shape)
    H = np.stack([noise, X])
    n = len(y) // 2
    perm = rng.permutation(len(y))
    tr, te = perm[:n], perm[n:]
    res = probe_layers(H[:, tr], y[tr], H[:, te], y[te], rank=2)
    assert res[0].accuracy < 0.25 and res[1].accuracy > 0.9          # chance is 1/9
    assert res[1].selectivity > 0.6 and res[1].snr > res[0].snr


def test_count_subspace_is_recovered_despite_a_large_common_offset():
    """Catches an uncentred class-mean subspace: residual states share a large common offset (as real
    residual streams do), which then takes the top singular direction instead of the count span.
    Planted: a rank-3 count span in R^32 plus an offset 100× larger; recovered min principal cosine
    is ≥ 0.9 when class means are centred (about 0.1 uncentred)."""
    import numpy as np

    from neurips26.counting_readout.probes import count_subspace

    rng = np.random.default_rng(0)
    d, r, per = 32, 3, 60
    Q, _ = np.linalg.qr(rng.standard_normal((d, r)))
    offset = 100.0 * rng.standard_normal(d)
    y = np.repeat(np.arange(1, 10), per)
    means = 3.0 * rng.standard_normal((9, r))
    H = offset + means[y - 1] @ Q.T + rng.standard_normal((len(y), d))
    Qh = count_subspace(H, y, r)
    cos = np.linalg.svd(Q.T @ Qh, compute_uv=False)
    assert cos.min() >= 0.9, cos


def test_paired_difference_matches_newcombe_and_uses_the_pairing():
    """Catches a paired interval computed as if the two accuracies came from independent samples (too wide
    when both methods get the same prompts right), or a sign/cell mix-up. Reference: Newcombe's paired
    worked example (36 both right, 12 only A, 2 only B, 0 neither; method 10: 0.0569 to 0.3404), to 4
    decimals as published."""
    from neurips26.counting_readout.probes import paired_accuracy_difference

    a = np.array([1] * 36 + [1] * 12 + [0] * 2, bool)
    b = np.array([1] * 36 + [0] * 12 + [1] * 2, bool)
    d, (lo, hi) = paired_accuracy_difference(a, b)
    assert d == pytest.approx(0.2) and (round(lo, 4), round(hi, 4)) == (0.0569, 0.3404)
    d2, (lo2, hi2) = paired_accuracy_difference(b, a)              # swapping A and B mirrors the interval
    assert d2 == pytest.approx(-0.2) and lo2 == pytest.approx(-hi) and hi2 == pytest.approx(-lo)
    # the same two accuracies (90 % vs 80 %) on 200 prompts: nested (B right ⇒ A right) is much tighter
    # than disjoint errors, which an unpaired interval could not tell apart
    nested = paired_accuracy_difference(np.r_[np.ones(180), np.zeros(20)].astype(bool),
                                        np.r_[np.ones(160), np.zeros(40)].astype(bool))[1]
    disjoint = paired_accuracy_difference(np.r_[np.ones(180), np.zeros(20)].astype(bool),
                                          np.r_[np.zeros(40), np.ones(160)].astype(bool))[1]
    assert nested[0] > 0.05 and nested[1] - nested[0] < disjoint[1] - disjoint[0]
    assert paired_accuracy_difference(a, a)[0] == 0.0
    with pytest.raises(ValueError, match="equal-length"):
        paired_accuracy_difference(a, b[:-1])


def test_probe_layers_keep_per_prompt_correctness_for_paired_controls():
    """Catches the per-prompt arrays disagreeing with the reported accuracies (a paired interval on the
    selectivity would then judge other numbers than the ones reported)."""
    rng = np.random.default_rng(0)
    H, y, _ = _gaussian_counts(rng, n=900, d=8)
    P = probe_layers(H[None, ::2], y[::2], H[None, 1::2], y[1::2], rank=2, seed=0)[0]
    assert P.correct.shape == P.control_correct.shape == (len(y[1::2]),)
    assert P.correct.mean() == pytest.approx(P.accuracy) and P.control_correct.mean() == pytest.approx(
        P.control_accuracy) and int(P.correct.sum()) == P.n_correct
