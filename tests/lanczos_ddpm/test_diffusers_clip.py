"""``sample_with_diffusers`` against diffusers' own ``DDPMScheduler.step`` loop (clip_sample, thresholding).

Bug caught: the adapter ignored the scheduler's ``clip_sample`` (True by default in diffusers) and
``thresholding``, so on diffusers' own full-loop fixtures it gave sums 263.345 / 202.2965 where diffusers
gives 258.9606 / 202.0296, and an untrained UNet's samples ran to |x| ≈ 84 with no warning.
"""

from __future__ import annotations

import pytest
import torch

from neurips26.lanczos_ddpm.diffusers_adapter import sample_with_diffusers, scheduler_x0_transform
from neurips26.lanczos_ddpm.sampler import ddpm_sample

diffusers = pytest.importorskip("diffusers")


def _dummy_model(sample, t):
    """diffusers' scheduler-test model: sample · t / (t + 1), t an int or a (B,) tensor."""
    if isinstance(t, torch.Tensor):
        t = t.reshape(-1, *(1,) * (sample.ndim - 1)).to(sample.dtype)
    return sample * t / (t + 1)


def _dummy_sample_deter():
    """diffusers' deterministic scheduler-test sample, shape (4, 3, 8, 8)."""
    n = 4 * 3 * 8 * 8
    return (torch.arange(n).flip(-1).reshape(3, 8, 8, 4) / n).permute(3, 0, 1, 2)


class _FakeUNet(torch.nn.Module):
    """A UNet2DModel stand-in (config, parameters, ``.sample`` output) around the dummy model."""

    class _Out:
        def __init__(self, sample):
            self.sample = sample

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(()))
        self.config = type("Cfg", (), {"sample_size": 8, "in_channels": 3, "out_channels": 3})()

    def forward(self, x, t):
        return self._Out(_dummy_model(x, t))


def _sched(**kw):
    return diffusers.DDPMScheduler(num_train_timesteps=1000, beta_start=0.0001, beta_end=0.02,
                                   beta_schedule="linear", variance_type="fixed_small", **kw)


@pytest.mark.parametrize("prediction_type", ["epsilon", "v_prediction"])
def test_full_loop_fixture_matches_diffusers(prediction_type):
    """diffusers' own full-loop test (its deterministic sample and model, 1000 steps, clip_sample=True by
    default, generator seed 0), run here through diffusers' step and through our sampler with the
    scheduler's clipping: the sums agree to diffusers' own tolerance (1e-2 on the sum; diffusers records
    258.9606 / 202.0296, this torch build gives 258.992 / 202.037). Without clipping ours gave 263.345."""
    sched = _sched(prediction_type=prediction_type)
    g, ref = torch.manual_seed(0), _dummy_sample_deter()
    for t in reversed(range(1000)):
        ref = sched.step(_dummy_model(ref, t), t, ref, generator=g).prev_sample
    x, _ = ddpm_sample(_dummy_model, (4, 3, 8, 8), sched.alphas_cumprod.double().numpy(), list(range(999, -1, -1)),
                       prediction_type=prediction_type, covariance="beta_tilde", generator=torch.manual_seed(0),
                       x_T=_dummy_sample_deter(), x0_transform=scheduler_x0_transform(sched))
    assert abs(float(x.abs().sum()) - float(ref.abs().sum())) < 1e-2


def _diffusers_loop(sched, steps, seed, shape=(2, 3, 8, 8)):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g)
    sched.set_timesteps(steps)
    for t in sched.timesteps:
        x = sched.step(_dummy_model(x, int(t)), t, x, generator=g).prev_sample
    return x


@pytest.mark.parametrize("kw", [dict(), dict(clip_sample=True, clip_sample_range=0.5),
                                dict(thresholding=True, sample_max_value=1.5, dynamic_thresholding_ratio=0.9),
                                dict(clip_sample=False)])
@pytest.mark.parametrize("steps", [1000, 50])
def test_sample_with_diffusers_equals_diffusers_step_loop(kw, steps):
    """The adapter against diffusers' DDPMScheduler.step loop (same generator, same noise order), for the
    default clip_sample=True, another clip range, dynamic thresholding and no clipping, with all 1000 steps
    and a skipped 50-step subset. Tolerance 1e-4: our step coefficients are float64, diffusers' float32."""
    ours, _ = sample_with_diffusers(_FakeUNet(), _sched(**kw), batch_size=2, num_inference_steps=steps,
                                    covariance="beta_tilde", generator=torch.Generator().manual_seed(3))
    theirs = _diffusers_loop(_sched(**kw), steps, 3)
    torch.testing.assert_close(ours.detach(), theirs, atol=1e-4, rtol=1e-4)


def test_clipping_keeps_an_untrained_network_in_range():
    """With the default scheduler (clip_sample=True) the predicted x_0 is clipped to [-1, 1] at every step,
    so the final sample (the last step's mean) stays within the data range."""
    torch.manual_seed(0)
    unet = diffusers.UNet2DModel(sample_size=8, in_channels=1, out_channels=1, layers_per_block=1,
                                 block_out_channels=(8, 16), down_block_types=("DownBlock2D", "DownBlock2D"),
                                 up_block_types=("UpBlock2D", "UpBlock2D"), norm_num_groups=4).eval()
    x, _ = sample_with_diffusers(unet, diffusers.DDPMScheduler(num_train_timesteps=100), batch_size=2,
                                 num_inference_steps=10, covariance="beta_tilde",
                                 generator=torch.Generator().manual_seed(0))
    assert float(x.abs().max()) <= 1.0 + 1e-5
