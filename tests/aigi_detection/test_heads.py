"""Detector heads: training, contributions, cue removal, state round trip, balancing."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.aigi_detection.diagnostics import contribution_entropy
from neurips26.aigi_detection.heads import LossSwitches, TrainedDetector, train_detector


def _one_dominant_cue(n=600, K=4, D=6, seed=0):
    """Cue 0 separates the classes almost perfectly; cues 1..3 carry a weaker copy of the label."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, K, D))
    x[:, 0, 0] += 4.0 * (2 * y - 1)
    x[:, 1:, 0] += 0.8 * (2 * y - 1)[:, None]
    content = rng.integers(0, 3, n)
    return x.astype(np.float32), y, content


def test_baseline_learns_a_separable_problem():
    x, y, _ = _one_dominant_cue()
    det = train_detector(x, y, LossSwitches.baseline(), epochs=40, seed=0)
    acc = ((det.scores(x) > 0.5) == y).mean()
    assert acc > 0.97  # cue 0 alone gives ~0.99999 (4 sd margin); 0.97 leaves room for a short training
    assert det.history["bce"][-1] < det.history["bce"][0]


def test_saafl_balances_cues_more_than_baseline():
    # the self-adversarial masking and KL balance must spread evidence off the dominant cue;
    # breaking contribution_balance or the masked view makes this fail (checked by hand)
    x, y, c = _one_dominant_cue()
    base = train_detector(x, y, LossSwitches.baseline(), epochs=40, seed=0)
    sa = train_detector(x, y, LossSwitches(adversarial=False, semantic_weight=0, orthogonal_weight=0), epochs=40,
                        seed=0)
    eb, es = contribution_entropy(base.contributions(x)), contribution_entropy(sa.contributions(x))
    assert es > eb + 0.05, (eb, es)  # the baseline puts most weight on cue 0 (entropy well below 1)


def test_cue_removal_subtracts_exactly_that_contribution():
    x, y, _ = _one_dominant_cue(n=100)
    det = train_detector(x, y, LossSwitches.baseline(), epochs=3, seed=1)
    full, drop = det.logits(x), det.logits(x, drop_cues=[2])
    assert np.allclose(full - drop, det.contributions(x)[:, 2], atol=1e-5)


def test_state_round_trip_gives_identical_scores():
    import torch

    x, y, c = _one_dominant_cue(n=120)
    det = train_detector(x, y, LossSwitches(), content=c, epochs=3, seed=2)
    back = TrainedDetector.from_state(det.state())
    assert np.array_equal(det.scores(x), back.scores(x))
    assert back.switches == det.switches
    import io
    buf = io.BytesIO()
    torch.save(det.state(), buf)
    buf.seek(0)
    assert np.array_equal(TrainedDetector.from_state(torch.load(buf, weights_only=True)).scores(x), det.scores(x))


def test_bad_inputs_are_clear_errors():
    x, y, c = _one_dominant_cue(n=50)
    with pytest.raises(ValueError, match="content labels"):
        train_detector(x, y, LossSwitches(), epochs=1)
    with pytest.raises(ValueError, match="integers >= 0"):
        train_detector(x, y, LossSwitches(), content=c - 1, epochs=1)
    with pytest.raises(ValueError, match="both 0"):
        train_detector(x, np.ones_like(y), LossSwitches.baseline(), epochs=1)
    with pytest.raises(ValueError, match="cues shape"):
        train_detector(x[:, 0], y, LossSwitches.baseline(), epochs=1)
    with pytest.raises(ValueError, match="n_drop=4"):
        train_detector(x, y, LossSwitches(n_drop=4), content=c, epochs=1)
    with pytest.raises(ValueError, match="p_drop"):
        LossSwitches(p_drop=2.0)
    det = train_detector(x, y, LossSwitches.baseline(), epochs=1)
    with pytest.raises(ValueError, match="allowed: \\[N, 4, 6\\]"):
        det.scores(x[:, :3])


def test_dou_options_train_and_leave_inference_deterministic():
    x, y, c = _one_dominant_cue(n=200)
    sw = LossSwitches(adversarial=False, semantic_weight=0, orthogonal_weight=0, cib_weight=1e-3,
                      removal_consistency_weight=1.0)
    det = train_detector(x, y, sw, epochs=80, seed=0)
    assert {"cib", "removal_consistency"} <= set(det.history)
    assert np.array_equal(det.scores(x), det.scores(x))  # the mean latent at inference, no sampling
    assert ((det.scores(x) > 0.5) == y).mean() > 0.9  # still learns the easy problem (cue 0: 4 sd margin)


def _content_shortcut(n, seed, bias):
    """Weak artifact in every cue (feature 0) and content one-hot in features 1..3 of every cue;
    with ``bias`` > 0, 80% of fakes are content 0 and of reals content 1-2 (the shortcut)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    c = rng.integers(0, 3, n)
    if bias:
        c = np.where(rng.random(n) < bias, np.where(y == 1, 0, rng.integers(1, 3, n)), c)
    x = rng.normal(size=(n, 3, 6))
    x[:, :, 0] += (2 * y - 1)[:, None]
    x[:, :, 1:4] += 1.5 * np.eye(3)[c][:, None, :]
    return x.astype(np.float32), y, c


def test_content_adversary_reduces_the_score_shortcut():
    # the gradient-reversal adversary must make the score depend less on content: on reals of an
    # unbiased test set, the AUROC of "content 0" from the score drops (baseline ~0.73, adversary
    # ~0.68 over seeds 0-2). Review mutation: with the reversal switched off (grad_reverse as identity,
    # or the DANN ramp stuck at 0) the drop is ~0 and this fails.
    from sklearn.metrics import roc_auc_score

    x, y, c = _content_shortcut(900, 0, 0.8)
    xt, yt, ct = _content_shortcut(1500, 9, 0.0)
    real = yt == 0
    adv = LossSwitches(adversarial=True, semantic_weight=0, orthogonal_weight=0, hsic_weight=0,
                       self_adversarial=False, balance_weight=0)
    drops = []
    for seed in range(3):
        b = train_detector(x, y, LossSwitches.baseline(), epochs=60, seed=seed)
        a = train_detector(x, y, adv, content=c, epochs=60, seed=seed)
        auc = [roc_auc_score(ct[real] == 0, d.scores(xt)[real]) for d in (b, a)]
        drops.append(auc[0] - auc[1])
    # paired on one test set; the AUROC noise of ~500 reals (sd ~0.025) largely cancels in the pair,
    # so a mean drop of 0.02 is a clear effect, not noise
    assert np.mean(drops) > 0.02, drops


def test_self_adversarial_step_masks_the_dominant_cue_and_shifts_evidence_to_the_next():
    """Catches a self-adversarial step that masks the *weakest* cue(s) instead of the dominant one
    (issue 34 weak spot: that bug moved seven measured values and no verdict). Cue 0 carries the
    label strongly, cue 1 weakly, cues 2–3 are noise. Training on the view with the dominant cue
    masked (p_drop = 1, every other term off) must push evidence onto cue 1: its share of
    |contribution| rises from ≈ 0.17 (plain BCE) to ≈ 0.25–0.27 over seeds 0–2, while masking the
    weakest cue leaves it at ≈ 0.17 (masked view ≈ full view). Bound 1.3×: halfway between the
    two measured ratios (≈ 1.0 wrong, ≥ 1.5 right)."""
    from dataclasses import replace

    rng = np.random.default_rng(0)
    n, k, d = 800, 4, 6
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, k, d)).astype(np.float32)
    x[:, 0, 0] += 3.0 * (2 * y - 1)
    x[:, 1, 0] += 0.8 * (2 * y - 1)
    plain = LossSwitches(adversarial=False, semantic_weight=0.0, orthogonal_weight=0.0, hsic_weight=0.0,
                         balance_weight=0.0, self_adversarial=False)
    shares = {}
    for name, sw in (("plain", plain), ("masked", replace(plain, self_adversarial=True, p_drop=1.0))):
        c = np.abs(train_detector(x, y, sw, epochs=30, seed=0).contributions(x)).mean(0)
        shares[name] = c / c.sum()
    assert shares["plain"].argmax() == shares["masked"].argmax() == 0
    assert shares["masked"][1] >= 1.3 * shares["plain"][1], shares
