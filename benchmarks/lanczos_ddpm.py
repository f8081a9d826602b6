"""Benchmark of the Lanczos Gaussian sampler (paper 13): ratios against baselines run here.

1. Cost of one JVP relative to one forward pass (ε-MLP on 64-D digits; tiny diffusers UNet).
2. Wall-clock per reverse step: LGS k = 3 and dense Σ* relative to an isotropic step.
3. Memory of the noise draw: (k + 2)·d floats for LGS against d² for a dense covariance.
4. Equal cost: LGS (T = 10, k = 3) against isotropic β I and the diagonal with
   T' = round((1 + 3c)·T) steps, c = 2 network evaluations per JVP (counted, not timed; capped at
   the 1000-step training grid; the diagonal is charged 1 forward per step, as a learned OCM head
   would be) — NLL gap to exact samples on the digits GMM.

Run: ``.venv/bin/python benchmarks/lanczos_ddpm.py`` (about a minute).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from neurips26.lanczos_ddpm import (
    ddpm_sample,
    equal_cost_steps,
    gaussian_mixture_law,
    gmm_covariance_oracle,
    gmm_denoiser,
    gmm_logpdf,
    gmm_sample,
    spaced_timesteps,
    vp_alphas_cumprod,
)
from neurips26.lanczos_ddpm.sampler import reverse_step
from neurips26.lanczos_ddpm.schedule import schedule_steps


def _time(fn, repeat: int = 20) -> float:
    """Median wall time of one call (robust to scheduler hiccups on a loaded machine; the mean of 5
    calls was dominated by single preemptions)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _mlp():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.SiLU(), torch.nn.Linear(256, 256), torch.nn.SiLU(),
                              torch.nn.Linear(256, 64))
    return lambda x, t: net(x)


def main() -> None:
    torch.manual_seed(0)
    B = 256
    print("# lanczos_ddpm benchmark (ratios against baselines in this process)")
    # 1. JVP vs forward
    mlp = _mlp()
    x = torch.randn(B, 64)
    t = torch.zeros(B, dtype=torch.long)
    f = lambda y: mlp(y, t)  # noqa: E731
    with torch.no_grad():
        t_fwd = _time(lambda: f(x))
        t_jvp = _time(lambda: torch.func.jvp(f, (x,), (x,)))
    c_mlp = t_jvp / t_fwd
    print(f"eps-MLP (d=64, B={B}):     JVP / forward = {c_mlp:.2f}x   (forward {t_fwd * 1e3:.2f} ms)")
    try:
        from diffusers import UNet2DModel

        unet = UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                           block_out_channels=(32, 64), down_block_types=("DownBlock2D", "DownBlock2D"),
                           up_block_types=("UpBlock2D", "UpBlock2D"), norm_num_groups=8, add_attention=False).eval()
        xu = torch.randn(16, 3, 16, 16)
        tu = torch.full((16,), 10, dtype=torch.long)
        g = lambda y: unet(y, tu).sample  # noqa: E731
        with torch.no_grad():
            u_fwd = _time(lambda: g(xu), 5)
            u_jvp = _time(lambda: torch.func.jvp(g, (xu,), (xu,)), 5)
        print(f"tiny UNet (3x16x16, B=16): JVP / forward = {u_jvp / u_fwd:.2f}x   (forward {u_fwd * 1e3:.1f} ms)")
    except ImportError:
        print("tiny UNet: diffusers not installed, skipped")

    # 2. per-step wall clock on the digits GMM denoiser (exact, 64-D)
    from sklearn.datasets import load_digits
    from sklearn.mixture import GaussianMixture

    X = load_digits().data / 8.0 - 1.0
    gm = GaussianMixture(10, covariance_type="full", reg_covar=1e-2, random_state=0).fit(X)
    law = gaussian_mixture_law(gm.weights_, gm.means_, gm.covariances_, dtype=torch.float32)
    ac = vp_alphas_cumprod(1000)
    model = gmm_denoiser(law, ac)
    t_step, co = schedule_steps(ac, [500, 400])[0]
    xs = torch.randn(B, 64)
    z = torch.randn(B, 64)
    step = {cov: _time(lambda cov=cov, k=k: reverse_step(model, xs, t_step, co, z, prediction_type="sample",
                                                         covariance=cov, k=k), 5)
            for cov, k in [("beta", 1), ("lanczos", 3), ("dense", 1)]}
    print(f"reverse step (GMM denoiser, B={B}): LGS k=3 / isotropic = {step['lanczos'] / step['beta']:.2f}x, "
          f"dense (64 JVPs + eigh) / isotropic = {step['dense'] / step['beta']:.2f}x")
    # GMM denoiser JVP cost ratio (used for equal-cost T')
    fx = lambda y: model(y, torch.full((B,), t_step, dtype=torch.long))  # noqa: E731
    with torch.no_grad():
        c_gmm = _time(lambda: torch.func.jvp(fx, (xs,), (xs,)), 10) / _time(lambda: fx(xs), 10)
    print(f"GMM denoiser:              JVP / forward = {c_gmm:.2f}x")

    # 3. memory
    for d in (64, 3072, 12288):
        print(f"memory of the noise draw, d={d}: dense d^2 / LGS (k+2)d (k=3) = {d * d / (5 * d):.0f}x")

    # 4. equal cost
    n = 1000
    exact_nll = -float(gmm_logpdf(law, gmm_sample(law, 4 * n, torch.Generator().manual_seed(1))).mean())
    oracle = gmm_covariance_oracle(law, ac)

    def gap(cov: str, T: int, k: int = 3) -> float:
        x0, _ = ddpm_sample(model, (n, 64), ac, spaced_timesteps(1000, T), prediction_type="sample", covariance=cov,
                            k=k, generator=torch.Generator().manual_seed(2), denoise_last=False,
                            posterior_covariance=oracle)
        return -float(gmm_logpdf(law, x0).mean()) - exact_nll

    T = 10
    T_eq, capped = equal_cost_steps(T, 3, jvp_cost=2.0, max_steps=1000)
    g_l = gap("lanczos", T)
    g_b = gap("beta", T_eq)
    g_d = gap("diagonal", T_eq)
    print(f"equal cost (counted: 1 forward + 3 JVPs x 2 evaluations per LGS step{', capped' if capped else ''}; "
          f"measured JVP/forward here: MLP {c_mlp:.2f}, GMM {c_gmm:.2f}): LGS T={T},k=3 NLL gap {g_l:.3f} | "
          f"beta T'={T_eq}: {g_b:.3f} ({g_b / g_l:.1f}x LGS) | diagonal T'={T_eq}: {g_d:.3f} ({g_d / g_l:.1f}x LGS)")


if __name__ == "__main__":
    main()
