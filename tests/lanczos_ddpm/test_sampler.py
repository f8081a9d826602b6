"""The DDPM sampler: exactness on Gaussian data, prediction types, timestep subsets, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from neurips26.lanczos_ddpm import (
    ForwardModeUnsupportedWarning,
    SamplerStats,
    covariance_matvec,
    ddpm_sample,
    gaussian_mixture_law,
    gmm_denoiser,
    linearize,
    reverse_step,
    schedule_steps,
    spaced_timesteps,
    vp_alphas_cumprod,
)

D = 4
M = np.array([0.5, -1.0, 0.0, 1.0])
_A = np.random.default_rng(0).normal(size=(D, D))
S = 0.5 * _A @ _A.T / D + 0.02 * np.eye(D)
AC = vp_alphas_cumprod(1000)


def _gauss_model(prediction_type: str = "sample", dtype=torch.float64):
    law = gaussian_mixture_law([1.0], [M], [S])
    x0_model = gmm_denoiser(law, AC)

    def model(x, t):
        x0 = x0_model(x, t)
        a = float(AC[int(t[0])])
        eps = (x - math.sqrt(a) * x0) / math.sqrt(1 - a)
        return {"sample": x0, "epsilon": eps, "v_prediction": math.sqrt(a) * eps - math.sqrt(1 - a) * x0}[prediction_type]

    return model


def _sample(cov, k=3, T=4, n=4000, ptype="sample", seed=0, **kw):
    return ddpm_sample(_gauss_model(ptype), (n, D), AC, spaced_timesteps(1000, T), prediction_type=ptype,
                       covariance=cov, k=k, generator=torch.Generator().manual_seed(seed), dtype=torch.float64,
                       denoise_last=False, **kw)


def test_full_covariance_chain_is_exact_on_gaussian_data_with_skipped_steps():
    # For Gaussian data every reverse conditional is Gaussian with covariance Sigma*: the full-covariance
    # chain samples N(M, S) exactly for ANY timestep subset (here 4 of 1000), provided beta is recomputed
    # from the actual previous step. Lanczos with k = d is the same as dense.
    x, st = _sample("lanczos", k=D)
    assert st.forward == 4 and st.jvp == 4 * D and st.clipped == 0
    n = x.shape[0]
    # mean: standard error sqrt(S_ii / n) <= 0.02; 5 sigma
    assert np.abs(x.mean(0).numpy() - M).max() < 5 * math.sqrt(S.diagonal().max() / n)
    # covariance entries: standard error <= sqrt(2/n)*max S ~ 0.02*max S; 5 sigma
    assert np.abs(np.cov(x.numpy().T) - S).max() < 5 * math.sqrt(2.0 / n) * S.max()


def test_isotropic_chain_is_biased_at_few_steps():
    # Same test, beta I: with 4 steps the sample covariance is far off (the Omega(1/T) error):
    # more than 10 standard errors (the exact chain passes at 5).
    x, _ = _sample("beta")
    assert np.abs(np.cov(x.numpy().T) - S).max() > 10 * math.sqrt(2.0 / x.shape[0]) * S.max()


def test_lanczos_k_eq_d_equals_dense_pathwise():
    a, _ = _sample("lanczos", k=D, n=200)
    b, _ = _sample("dense", n=200)
    torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-8)  # same z, same Sigma^{1/2} z up to round-off


@pytest.mark.parametrize("ptype", ["epsilon", "v_prediction"])
def test_prediction_types_are_equivalent(ptype):
    a, _ = _sample("lanczos", n=100, ptype="sample")
    b, _ = _sample("lanczos", n=100, ptype=ptype)
    torch.testing.assert_close(a, b, rtol=1e-7, atol=1e-7)  # float64 conversions; c0² (1-a)/sqrt(a) amplifies round-off


def test_symmetrize_is_a_no_op_for_a_symmetric_jacobian_and_counts_vjps():
    a, sa = _sample("lanczos", n=100)
    b, sb = _sample("lanczos", n=100, symmetrize=True)
    torch.testing.assert_close(a, b, rtol=1e-8, atol=1e-8)
    assert sa.vjp == 0 and sb.vjp == sb.jvp == 4 * 3


def test_oracle_covariances_run_and_order():
    # trace, diagonal and full (dense) on Gaussian data at T = 4: full is best, covariance error decreasing
    errs = {}
    for cov in ("trace", "diagonal", "dense"):
        x, _ = _sample(cov, n=4000)
        errs[cov] = np.abs(np.cov(x.numpy().T) - S).max()
    assert errs["dense"] < errs["diagonal"] < errs["trace"]


def test_denoise_last_returns_mean():
    x, st = ddpm_sample(_gauss_model(), (10, D), AC, [999, 500], prediction_type="sample", covariance="lanczos",
                        k=2, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert st.jvp == 2  # only the first step draws noise


class _NoForwardAD(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.tanh(x)

    @staticmethod
    def backward(ctx, g):  # pragma: no cover - not used
        raise NotImplementedError


def test_forward_mode_fallback_warns_counts_and_is_accurate():
    W = torch.randn(D, D, generator=torch.Generator().manual_seed(0))

    def f(x):
        return _NoForwardAD.apply(x @ W)

    x = torch.randn(3, D, generator=torch.Generator().manual_seed(1))
    v = torch.randn(3, D, generator=torch.Generator().manual_seed(2))
    stats = SamplerStats()
    with pytest.warns(ForwardModeUnsupportedWarning):
        _, jvp, _ = linearize(f, x, stats)
        out = jvp(v)
    exact = (1 - torch.tanh(x @ W) ** 2) * (v @ W)
    # forward difference with h ~ sqrt(eps32): error O(h) relative ~ 1e-3
    torch.testing.assert_close(out, exact, rtol=2e-2, atol=2e-2)
    assert stats.fd_fallback == 1
    with pytest.raises((RuntimeError, NotImplementedError)):
        linearize(f, x, SamplerStats(), allow_fallback=False)[1](v)


def test_bad_input_errors():
    model = _gauss_model()
    g = torch.Generator().manual_seed(0)
    kw = dict(prediction_type="sample", generator=g, dtype=torch.float64)
    with pytest.raises(ValueError, match="positive integer"):
        ddpm_sample(model, (2, D), AC, [999, 10], k=0, **kw)
    with pytest.raises(ValueError, match="covariance 'full'"):
        ddpm_sample(model, (2, D), AC, [999, 10], covariance="full", **kw)
    with pytest.raises(ValueError, match="prediction_type 'eps'"):
        ddpm_sample(model, (2, D), AC, [999, 10], prediction_type="eps", generator=g)
    with pytest.raises(ValueError, match="does not match its input"):
        ddpm_sample(lambda x, t: torch.cat([x, x], 1), (2, D), AC, [999, 10], **kw)
    with pytest.raises(FloatingPointError, match="NaN"):
        ddpm_sample(lambda x, t: x * float("nan"), (2, D), AC, [999, 10], **kw)
    with pytest.raises(ValueError, match="x_T shape"):
        ddpm_sample(model, (2, D), AC, [999, 10], x_T=torch.zeros(3, D), **kw)
    co = schedule_steps(AC, [999, 10])[0][1]
    with pytest.raises(ValueError, match="z shape"):
        reverse_step(model, torch.zeros(2, D), 999, co, torch.zeros(2, D + 1), prediction_type="sample")


def test_k_larger_than_d_is_capped():
    x, st = _sample("lanczos", k=50, n=10)
    assert st.jvp == 4 * D


def test_review_dtype_and_integer_arguments():
    model = _gauss_model()
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="real floating torch dtype"):   # used to be a NotImplementedError
        ddpm_sample(model, (2, D), AC, [999, 10], prediction_type="sample", generator=g, dtype=torch.int64)
    with pytest.raises(ValueError, match="num_inference_steps must be an integer, got 2.5"):
        spaced_timesteps(100, 2.5)
    x, st = ddpm_sample(model, (2, D), AC, spaced_timesteps(np.int64(1000), np.int64(5)), prediction_type="sample",
                        generator=g, dtype=torch.float64, k=np.int64(2))
    assert torch.isfinite(x).all() and st.jvp == 4 * 2
    xh, _ = ddpm_sample(lambda x, t: 0.5 * x, (2, D), AC, [999, 10], prediction_type="sample",
                        generator=g, dtype=torch.float16)                 # half precision: eigh runs in float32
    assert xh.dtype == torch.float16 and torch.isfinite(xh).all()


def test_symmetrize_uses_the_symmetric_part_of_a_non_symmetric_jacobian():
    # m(x) = A x with A non-symmetric: Σ v must be β̃ v + c0²·(1-ᾱ)/√ᾱ · ½(A + Aᵀ) v (the ε-/x0-Tweedie factor)
    g = torch.Generator().manual_seed(3)
    A = torch.randn(D, D, dtype=torch.float64, generator=g) * 0.3
    co = schedule_steps(AC, [700, 300])[0][1]
    x = torch.randn(2, D, dtype=torch.float64, generator=g)
    v = torch.randn(2, D, dtype=torch.float64, generator=g)
    st = SamplerStats()
    _, jvp, vjp = linearize(lambda y: y @ A.T, x, st, need_vjp=True)
    scale = co.c0 ** 2 * (1 - co.alpha_bar) / math.sqrt(co.alpha_bar)
    sym = covariance_matvec(jvp, co, x.shape, vjp)(v)
    torch.testing.assert_close(sym, co.beta_tilde * v + scale * v @ (0.5 * (A + A.T)).T)
    raw = covariance_matvec(jvp, co, x.shape)(v)
    torch.testing.assert_close(raw, co.beta_tilde * v + scale * v @ A.T)
    assert st.vjp == 1 and st.jvp == 2


def test_dense_covariance_vmap_equals_the_column_loop_and_counts_d_jvps():
    """The vmap-batched materialisation must equal the one-column-per-JVP loop (max_rows=1 forces the
    loop) to float round-off and still count d JVPs (and d VJPs with symmetrisation)."""
    from neurips26.lanczos_ddpm.covariance import dense_covariance

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(D, 16), torch.nn.Tanh(), torch.nn.Linear(16, D)).double()
    t, co = schedule_steps(AC, spaced_timesteps(1000, 10))[3]
    x = torch.randn(7, D, dtype=torch.float64)
    for sym in (False, True):
        st = SamplerStats()
        _, jvp, vjp = linearize(lambda v: net(v), x, st, need_vjp=sym)
        mv = covariance_matvec(jvp, co, x.shape, vjp)
        batched = dense_covariance(mv, 7, D, torch.float64, "cpu", stats=st)
        assert st.jvp == D and st.vjp == (D if sym else 0)
        loop = dense_covariance(mv, 7, D, torch.float64, "cpu", max_rows=1)
        torch.testing.assert_close(batched, loop, rtol=1e-12, atol=1e-12)   # float64 round-off only
