"""KID and the tiny-size image benchmark (small UNet + self-trained feature network)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

pytest.importorskip("diffusers")

from neurips26.harness.context import RunContext  # noqa: E402
from neurips26.lanczos_ddpm.image_benchmark import IMAGE_METHODS, digit_images, image_benchmark, kid, train_feature_net  # noqa: E402


@pytest.fixture(autouse=True)
def _one_thread():
    # tiny tensors: thread start-up and oversubscription on a busy CPU cost more than they save
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def test_kid_zero_for_same_law_positive_for_shift():
    # Unbiased MMD²: E = 0 under the null. With m = 500 rows per subset in d = 16, the per-subset
    # standard deviation of MMD²_u is O(1/m) times the kernel scale (k(x, x) ≈ (|x|²/d + 1)³ ≈ 8 here),
    # i.e. ≈ 0.01; 2/m·8 = 0.03 is a generous bound for the subset mean. A mean shift of 0.5 per
    # coordinate moves the cubic-kernel MMD² by ≈ 3·(xᵀy/d) terms ~ 3·0.25 = 0.75 ≫ 0.03.
    rng = np.random.default_rng(0)
    d, n, m = 16, 2000, 500
    a, b = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    same, same_std = kid(a, b, subset_size=m, num_subsets=50)
    assert abs(same) < 2 / m * 8 and same_std < 0.05
    shifted, _ = kid(a, b + 0.5, subset_size=m, num_subsets=50)
    assert shifted > 0.3 and shifted > 20 * abs(same)
    # larger shifts give larger KID
    assert kid(a, b + 1.0, subset_size=m, num_subsets=20)[0] > shifted


def test_kid_rejects_bad_input():
    with pytest.raises(ValueError, match="features"):
        kid(np.zeros((5, 3)), np.zeros((5, 4)))
    with pytest.raises(ValueError, match="finite"):
        kid(np.full((5, 3), np.nan), np.zeros((5, 3)))


def test_digit_images_and_feature_net():
    X, y = digit_images(8)
    assert X.shape == (1797, 1, 8, 8) and X.min() >= -1 and X.max() <= 1 and y.shape == (1797,)
    X16, _ = digit_images(16)
    assert X16.shape == (1797, 1, 16, 16)
    with pytest.raises(ValueError):
        digit_images(4)
    net, acc = train_feature_net(X[:600], y[:600], steps=150, batch_size=64)
    assert acc > 0.8                                               # a working classifier after 150 steps
    assert net.features(X[:3]).shape == (3, 64)


def test_image_benchmark_tiny(tmp_path):
    from neurips26.lanczos_ddpm.experiment import Config

    cfg = Config(image_benchmark=True, image_size=8, image_unet_steps=10, image_unet_width=8,
                 image_feature_steps=30, image_samples=16, image_batch=16, image_T=[2, 3], num_train_steps=100)
    r = image_benchmark(cfg, RunContext(seed=0, out_dir=tmp_path))
    names = [n for n, _, _ in IMAGE_METHODS]
    assert set(r["kid"]) == set(names) and r["T"] == [2, 3]
    for n in names:
        assert len(r["kid"][n]) == 2 and all(math.isfinite(v) for v in r["kid"][n])
        assert r["samples_first_T"][n].shape == (16, 1, 8, 8)
    assert r["jvps"]["beta_tilde"] == [0, 0]
    assert r["jvps"]["lanczos3"][0] == 3 * 1                  # 3 JVPs × 1 noisy step (last step: mean)
    assert r["jvps"]["diagonal"][0] == 64 * 1                 # d = 64 JVPs per noisy step
    assert math.isfinite(r["kid_train_vs_test"]) and math.isfinite(r["unet_loss"])
    print("tiny KID", {n: [round(v, 4) for v in r["kid"][n]] for n in names}, "floor", r["kid_train_vs_test"])


def test_experiment_part_e_claims(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from neurips26.harness.claims import Verdict
    from neurips26.lanczos_ddpm.experiment import Config, _image_benchmark

    cfg = Config(image_benchmark=True, image_size=8, image_unet_steps=3, image_unet_width=8,
                 image_feature_steps=10, image_samples=10, image_batch=10, image_T=[2], num_train_steps=100)
    m, c = _image_benchmark(cfg, RunContext(seed=0, out_dir=tmp_path), plt)
    assert [x.id for x in c] == ["image_kid_k3_beats_diagonal"] and c[0].verdict in (Verdict.HOLDS, Verdict.DOES_NOT_HOLD)
    assert "image_kid" in m and (tmp_path / "figures" / "image_unet_samples.png").exists()
    assert Config.full().image_benchmark and not Config.quick().image_benchmark
    with pytest.raises(ValueError):             # pydantic's ValidationError is a ValueError
        Config(image_size=9)
