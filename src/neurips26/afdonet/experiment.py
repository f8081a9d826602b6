"""Reproduction of paper 3 (AFDONet: adaptive Fourier decomposition in a neural-operator VAE).

Only the abstract was read; the paper text was not found and the paper gives no numbers in what
was read. The authors' released code was read for understanding (not copied); it differs from the
abstract, so both are built: ``arch="reference"`` (the released model) and ``arch="afd"`` (the
abstract's design, inferred). Parts: (1) AFD numerics on the disc and pre-orthogonal AFD on the
sphere and on a mesh; (2) the PDE solvers against known solutions / monotone quantities;
(3) the reference model on 2-D Navier–Stokes vs "no change"; (4) the AFD mode vs the
Fourier-decoder ablation and an equal-parameter FNO on 1-D Burgers at low viscosity (with
resolution transfer 64 → 128) and on Allen–Cahn on the sphere; (5) cost.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import torch
from pydantic import Field, field_validator, model_validator

from neurips26.harness import ExperimentConfig, Outcome, Resources, RunContext
from neurips26.harness import claims as C
from neurips26.harness.context import blas_threads, torch_threads

from .hardy import (
    adaptive_fourier_decomposition,
    analytic_signal,
    boundary_points,
    default_radii,
    hardy_inner,
    maximal_selection,
    maximal_selection_loop,
    takenaka_malmquist,
    taylor_coefficients,
    terms_to_reach,
)
from .manifold import (
    heat_kernel_from_eigenpairs,
    icosphere,
    mesh_eigenpairs,
    pre_orthogonal_afd,
    sphere_heat_kernel,
    sphere_points,
)
from .models import AFDOperator, FNOBaseline, ReferenceAFDONet, count_parameters, matched_fno, relative_l2
from .solvers import (
    SphereSpectral,
    allen_cahn_sphere,
    burgers_1d,
    burgers_cole_hopf,
    kolmogorov_forcing,
    navier_stokes_2d,
    periodic_grf,
    random_sphere_field,
    random_vorticity,
    sphere_heat,
    velocity_from_vorticity,
)
from .training import evaluate, fit, inference_seconds_per_sample

# Pre-registered before any run of this file: the sharp test functions and the required ratios.
SHARP_TARGET = "F(z) = 1/(1 − 0.97e^{−0.5i} z) + 0.5/(1 − 0.9e^{2i} z)² + 0.3 z³"
SHARP_RATIO = 5.0        # first-n Fourier needs ≥ 5× the AFD terms to reach 1e-2 relative L² on F
TANH_RATIO = 2.0         # … and ≥ 2× on the analytic signal of tanh(10 sin t)
TRANSFER_TOL = 0.20      # |err(128)/err(64) − 1| ≤ 20 % for a discretisation-invariant model
COST_FACTOR = 2.0        # "competitive cost": AFD-mode training time per sample ≤ 2 × FNO's
#: Run seeds never used while choosing the AFD-mode design (development: run seed 0, training seeds 0–2, a pilot
#: on seed-0 data; 101, the former single confirmation seed, was read and is not reused); ``reproduce`` reruns
#: the claims on AFD-mode models (tuned after that pilot) on them. A run with seed c trains seeds c + config.seeds,
#: so they are 10 apart and never share a model.
CONFIRMATION_SEEDS = (1001, 1011, 1021)
TUNED_DESIGN = ("decoder design chosen after a pilot on seed-0 data in which free-only poles trained worse: "
                "n_origin = 8 TM terms fixed at the origin (circle), a smooth SH part of degree 3 (sphere)")


class Config(ExperimentConfig):
    """Sizes of the reproduction.

    Quick: the NS, Burgers and sphere sizes (trajectories, snapshots, training/test pairs, epochs) are set by the
    CPU budget of the quick run (development + confirmation run ≤ 80 CPU-s): about 4× less training
    than before (16×8 NS snapshots, 192/64 Burgers pairs × 25 epochs, 128/32 sphere pairs × 12 epochs), chosen
    from the profile, not from the verdicts."""

    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], description="training seeds (≥ 2)")
    afd_samples: int = Field(4096, ge=3000, le=1 << 20, description="boundary samples M for disc AFD (≥ 30/(1 − r_max) "
                             "= 3000 resolves the poles up to r_max = 0.99 to float precision)")
    afd_terms: int = Field(40, ge=8, le=500, description="AFD terms computed for the sharp functions")
    # Navier–Stokes (reference mode)
    ns_trajectories: int = Field(5, ge=4, le=100_000, description="NS trajectories (80/20 split by trajectory; quick: set by the CPU budget)")
    ns_steps: int = Field(4, ge=3, le=1000, description="saved NS snapshots per trajectory (quick: set by the CPU budget)")
    ns_epochs: int = Field(10, ge=1, le=1000, description="epochs of the reference model (released: 10)")
    ns_fno_width: int = Field(12, ge=0, le=256, description="FNO width on NS (0 → equal parameters, slow)")
    # Burgers
    burgers_train: int = Field(64, ge=16, le=1_000_000, description="Burgers training pairs (quick: set by the CPU budget)")
    burgers_test: int = Field(32, ge=8, le=1_000_000, description="Burgers test pairs (quick: set by the CPU budget)")
    burgers_nu: float = Field(0.01, gt=0, le=1.0, description="Burgers viscosity (low: sharp fronts)")
    burgers_epochs: int = Field(12, ge=1, le=10_000, description="Burgers training epochs (quick: set by the CPU budget)")
    n_poles: int = Field(8, ge=2, le=64, description="latent budget n (latent size 4n+1) on the circle")
    n_origin: int = Field(8, ge=0, le=64, description="TM terms with the pole fixed at the origin (even)")
    # sphere
    sphere_nlat: int = Field(16, ge=8, le=512, description="Gauss–Legendre latitudes of the sphere grid")
    sphere_train: int = Field(48, ge=16, le=1_000_000, description="sphere training pairs (quick: set by the CPU budget)")
    sphere_test: int = Field(16, ge=8, le=1_000_000, description="sphere test pairs (quick: set by the CPU budget)")
    sphere_epochs: int = Field(6, ge=1, le=10_000, description="sphere training epochs (quick: set by the CPU budget)")
    sphere_eps: float = Field(0.05, gt=0, le=1.0, description="Allen–Cahn interface width ε on the unit sphere")
    sphere_atoms: int = Field(13, ge=1, le=256, description="heat-kernel atoms of the sphere AFD decoder")
    sphere_smooth_degree: int = Field(3, ge=-1, le=64, description="SH degree of the smooth part of the decoder")

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int]) -> list[int]:
        if len(v) < 2 or len(set(v)) != len(v):
            raise ValueError("must be >= 2 distinct seeds (random claims are judged over seeds)")
        return v

    @field_validator("n_origin")
    @classmethod
    def _origin(cls, v: int) -> int:
        if v % 2:
            raise ValueError("must be even (two real latent coordinates per fixed term)")
        return v

    @model_validator(mode="after")
    def _sizes_fit_the_grids(self) -> "Config":
        # found in review: these combinations were accepted and failed minutes into the run
        if self.n_origin // 2 >= self.n_poles:
            raise ValueError(f"n_origin={self.n_origin} needs n_origin/2 < n_poles={self.n_poles} (at least one free "
                             "pole)")
        if 4 * self.n_poles + 1 > 64:
            raise ValueError(f"n_poles={self.n_poles}: the Fourier-decoder ablation needs 2·n_poles modes on the "
                             "N = 64 training grid (4·n_poles + 1 <= 64, so n_poles <= 15)")
        size = 5 * self.sphere_atoms + ((self.sphere_smooth_degree + 1) ** 2 if self.sphere_smooth_degree >= 0 else 1)
        degree = math.isqrt(size) - 1                               # the spherical-harmonic ablation's degree
        if max(degree, self.sphere_smooth_degree) >= self.sphere_nlat:
            raise ValueError(f"sphere_nlat={self.sphere_nlat} cannot resolve spherical harmonics of degree "
                             f"{max(degree, self.sphere_smooth_degree)} (smooth part / equal-latent SH ablation for "
                             f"sphere_atoms={self.sphere_atoms}); need sphere_nlat > that degree")
        return self

    def resources(self) -> Resources:
        """One GPU for the full configuration (NS at equal parameters, 500 epochs); one CPU otherwise."""
        big = self.ns_trajectories > 200 or self.burgers_epochs > 200
        return Resources(num_cpus=1, num_gpus=1 if big else 0, memory_gb=16 if big else 2, hours=4 if big else None, on_device="training and evaluation of AFDONet, the FNO and the decoders (models and batches on ctx.device)", on_cpu="the PDE data generation (spectral solvers in numpy) and the sphere's spherical-harmonic tables")

    @classmethod
    def full(cls) -> "Config":
        """Paper-like scale (GPU): 1000 NS trajectories, FNO at equal parameters, long training,
        finer sphere grid, 5 seeds."""
        return cls(seeds=[0, 1, 2, 3, 4], afd_samples=16384, afd_terms=80, ns_trajectories=1000, ns_steps=20,
                   ns_epochs=10, ns_fno_width=0, burgers_train=2048, burgers_test=512, burgers_epochs=500,
                   n_poles=15, n_origin=16, sphere_nlat=64, sphere_train=2048, sphere_test=256, sphere_epochs=300,
                   sphere_atoms=48, sphere_smooth_degree=5)


# =========================================================================== (1) AFD numerics

def _sharp_function(z: torch.Tensor) -> torch.Tensor:
    a1 = 0.97 * complex(math.cos(-0.5), math.sin(-0.5))
    a2 = 0.9 * complex(math.cos(2.0), math.sin(2.0))
    return 1 / (1 - a1 * z) + 0.5 / (1 - a2 * z) ** 2 + 0.3 * z ** 3


def _afd_errors(f: torch.Tensor, res) -> list[float]:
    nf = math.sqrt(res.energy)
    out = []
    for n in range(1, res.n_terms + 1):
        r = f - res.reconstruct(n)
        out.append(math.sqrt(max(float(hardy_inner(r, r).real), 0.0)) / nf)
    return out


def _fourier_errors(f: torch.Tensor, n_max: int, best: bool = False) -> list[float]:
    """``[truncated_fourier_error(f, n, best) for n in 1..n_max]`` from one FFT and one cumulative sum (the
    loop redid the FFT and sort 2047 times per curve); equal up to summation-order round-off."""
    p = taylor_coefficients(f).abs() ** 2
    total = float(p.sum())
    if total <= 0:
        return [0.0] * n_max
    kept = torch.cumsum(torch.sort(p, descending=True).values if best else p, 0)[:n_max]
    return [math.sqrt(max(total - float(k), 0.0) / total) for k in kept]


def _afd_numerics(config: Config, metrics: dict, figs: dict) -> list:
    m = config.afd_samples
    z = boundary_points(m)
    f = _sharp_function(z)
    res = adaptive_fourier_decomposition(f, config.afd_terms)
    errs = _afd_errors(f, res)
    # energy identity: direct ‖f − S_n‖² against ‖f‖² − Σ|c_k|²
    direct = [(e * math.sqrt(res.energy)) ** 2 for e in errs]
    ident = max(abs(d - float(r)) for d, r in zip(direct, res.remainder_energy[1:])) / res.energy
    basis = takenaka_malmquist(res.poles, z)
    gram = basis @ basis.conj().T / m
    orth = float((gram - torch.eye(res.n_terms, dtype=gram.dtype)).abs().max())
    mono = int(sum(b > a * (1 + 1e-9) + 1e-15 for a, b in zip(errs, errs[1:])))
    fourier = _fourier_errors(f, m // 2 - 1)
    best_fourier = _fourier_errors(f, m // 2 - 1, best=True)
    n_afd, n_f, n_best = (terms_to_reach(e, 1e-2) for e in (errs, fourier, best_fourier))
    # real sharp signal: tanh(10 sin t) through its analytic extension
    t = 2 * math.pi * torch.arange(m, dtype=torch.float64) / m
    g_real = torch.tanh(10 * torch.sin(t))
    g = analytic_signal(g_real)
    res_g = adaptive_fourier_decomposition(g, config.afd_terms)
    real_err = []
    for n in range(1, res_g.n_terms + 1):
        real_err.append(float((res_g.reconstruct(n).real - g_real).norm() / g_real.norm()))
    fourier_g = _fourier_errors(g, m // 2 - 1)
    n_afd_g, n_f_g = terms_to_reach(real_err, 1e-2), terms_to_reach(fourier_g, 1e-2)
    # one Szegő atom on the candidate grid is recovered in one step
    radii = default_radii(0.99, 64)
    b = complex(torch.polar(radii[50], torch.tensor(2 * math.pi * 100 / m, dtype=torch.float64)))
    e_b = math.sqrt(1 - abs(b) ** 2) / (1 - b.conjugate() * z)
    res_b = adaptive_fourier_decomposition(e_b, 1, refine_rounds=0)
    err_b = float((e_b - res_b.reconstruct()).abs().pow(2).mean().sqrt())
    # vectorised selection agrees with the loop on a small candidate grid
    rad_small = default_radii(0.95, 8)
    p_small = 64
    a_vec, v_vec = maximal_selection(f, rad_small, p_small, refine_rounds=0, r_max=0.95)
    cands = torch.polar(rad_small[:, None].expand(-1, p_small),
                        (2 * math.pi * torch.arange(p_small, dtype=torch.float64) / p_small)[None].expand(8, -1))
    a_loop, v_loop = maximal_selection_loop(f, cands.flatten())
    metrics["afd"] = {"M": m, "terms": res.n_terms, "afd_rel_l2_at": {n: errs[n - 1] for n in (4, 8, 12, 16)
                                                                       if n <= len(errs)},
                      "fourier_rel_l2_at": {n: fourier[n - 1] for n in (4, 8, 12, 16)},
                      "terms_to_1e-2": {"afd": n_afd, "first_n_fourier": n_f, "best_n_fourier": n_best},
                      "tanh_terms_to_1e-2": {"afd": n_afd_g, "first_n_fourier": n_f_g},
                      "first_poles": [[p.real, p.imag] for p in res.poles[:3].tolist()],
                      "energy_identity_rel": ident, "tm_gram_max_dev": orth}
    figs["afd"] = (errs, fourier[:len(errs) * 4], best_fourier[:len(errs) * 4], real_err, fourier_g[:len(errs) * 4])
    src_chk = "inferred: classical AFD theory (Qian & Wang 2011), an implementation invariant"
    why_fp = "exact identities; only float64 round-off and quadrature aliasing ~ 0.99^M remain"
    claims = [
        C.at_most("tm_orthonormal", "The Takenaka–Malmquist system of the selected poles is orthonormal on the "
                  "boundary (max |G − I|).", measured=orth, bound=1e-10, reason=why_fp, kind="check",
                  source=src_chk, paper_value="orthonormal", domain=(0, math.inf)),
        C.at_most("energy_identity", "Energy identity: ‖f − Σ⟨f,B_k⟩B_k‖² = ‖f‖² − Σ|⟨g_k,e_ak⟩|² for every n "
                  "(max relative difference).", measured=ident, bound=1e-10, reason=why_fp, kind="check",
                  source=src_chk, paper_value="equal", domain=(0, math.inf)),
        C.at_most("afd_error_monotone", "The AFD error is non-increasing in the number of terms (count of "
                  "increases).", measured=mono, bound=0, reason="follows from the energy identity", kind="check",
                  source=src_chk, paper_value="0", domain=(0, math.inf)),
        C.at_most("szego_atom_one_step", "A normalised Szegő kernel e_b with b on the candidate grid is recovered "
                  "by one maximal-selection step (RMS residual).", measured=err_b, bound=1e-10, reason=why_fp,
                  kind="check", source=src_chk, paper_value="exact", domain=(0, math.inf)),
        C.check("vectorised_selection_equals_loop", "Maximal selection by batched FFT picks the same pole and "
                "value as a loop over candidates (8 radii × 64 angles).",
                measured={"vectorised": [a_vec.real, a_vec.imag, v_vec], "loop": [a_loop.real, a_loop.imag, v_loop]},
                holds=abs(a_vec - a_loop) < 1e-12 and abs(v_vec - v_loop) <= 1e-9 * max(v_loop, 1),
                tolerance="same pole (|Δa| < 1e-12), same value to 1e-9 relative",
                reason="same objective evaluated two ways; only round-off differs", kind="check", source=src_chk),
    ]
    ratio = (n_f / n_afd) if (n_afd and n_f) else (float("inf") if n_afd else 0.0)
    claims.append(C.at_least(
        "sharp_function_fewer_terms", f"On the pre-registered sharp function {SHARP_TARGET} (M = {m}), AFD reaches "
        "relative L² ≤ 1e-2 with far fewer terms than the first-n Fourier (Taylor) expansion: ratio of term counts.",
        measured=ratio if math.isfinite(ratio) else 1e9, bound=SHARP_RATIO,
        reason="'far fewer' read as at least 5×, fixed before the run; the pole at |a| = 0.97 makes Fourier "
               "coefficients decay like 0.97ⁿ", kind="reconstruction",
        source="inferred: the abstract motivates AFD for data with sharp gradients; the function is ours",
        paper_value="far fewer (no number)", domain=(0, math.inf),
        note=f"AFD {n_afd} terms, first-n Fourier {n_f}, best-n Fourier {n_best}; free maximal selection "
             "(a₁ not forced to 0), radii up to 0.99, 64 radii × M angles + 6 zoom rounds."))
    ratio_g = (n_f_g / n_afd_g) if (n_afd_g and n_f_g) else 0.0
    claims.append(C.at_least(
        "tanh_front_fewer_terms", "On the real sharp front tanh(10 sin t) (through its analytic extension), AFD "
        "needs fewer terms than first-n Fourier to reach relative L² ≤ 1e-2 (ratio of term counts).",
        measured=ratio_g, bound=TANH_RATIO, reason="pre-registered 2× for a front that is not a rational "
        "function (less favourable to AFD than the rational target)", kind="reconstruction",
        source="inferred: the abstract's 'sharp gradients'; function and ratio are ours", paper_value="no number",
        domain=(0, math.inf),
        note=f"AFD {n_afd_g} terms, first-n Fourier {n_f_g} (counting complex terms of the analytic signal)."))
    return claims


def _poafd_numerics(metrics: dict) -> list:
    # sphere: candidates on a coarse grid (poles removed), f = 3 kernel atoms
    cand = sphere_points(12, 24, "legendre-gauss").reshape(-1, 3)
    gram = sphere_heat_kernel(cand, cand, 0.1, lmax=40)
    idx, coef = [5, 100, 200], torch.tensor([1.0, -0.7, 0.4], dtype=torch.float64)
    norm2 = float(coef @ gram[idx][:, idx] @ coef)
    res = pre_orthogonal_afd(gram, gram[:, idx] @ coef, 10, norm2)
    rel = float(res.remainder_energy[-1]) / norm2
    recovered = sorted(res.indices.tolist()) == sorted(idx)
    # mesh: icosphere Laplace–Beltrami eigenpairs (λ ≈ l(l+1)) and POAFD on the heat kernel
    v, f = icosphere(3)
    lam, phi, _ = mesh_eigenpairs(v, f, k=16)
    eig_err = float(max(np.abs(lam[1:4] - 2).max() / 2, np.abs(lam[4:9] - 6).max() / 6))
    kmesh = heat_kernel_from_eigenpairs(lam, phi, 0.05)
    ids, cm = [3, 300, 500], torch.tensor([1.0, -0.5, 0.8], dtype=torch.float64)
    n2m = float(cm @ kmesh[ids][:, ids] @ cm)
    res_m = pre_orthogonal_afd(kmesh, kmesh[:, ids] @ cm, 16, n2m)
    approx = kmesh @ res_m.kernel_expansion()
    truth = kmesh[:, ids] @ cm
    direct = float((res_m.kernel_expansion() @ kmesh @ res_m.kernel_expansion()) - 2 * (res_m.kernel_expansion() @ truth)
                   + n2m)
    ident_m = abs(direct - float(res_m.remainder_energy[-1])) / n2m
    metrics["poafd"] = {"sphere_selected": res.indices.tolist(), "sphere_rel_remainder": rel,
                        "mesh_vertices": len(v), "mesh_eigenvalues": lam[:9].tolist(),
                        "mesh_terms": len(res_m.indices), "mesh_rel_remainder": float(res_m.remainder_energy[-1]) / n2m,
                        "mesh_values_max_err": float((approx - truth).abs().max())}
    src = "inferred: pre-orthogonal AFD in a reproducing-kernel space (Qian 2014) with the heat kernel"
    return [
        C.check("poafd_sphere_recovers_atoms", "POAFD with the S² heat kernel (τ = 0.1, degree ≤ 40) recovers a sum "
                "of 3 kernel atoms in 3 selections (same centres, remainder energy < 1e-10 relative).",
                measured={"selected": res.indices.tolist(), "rel_remainder": rel},
                holds=recovered and len(res.indices) == 3 and rel < 1e-10,
                tolerance="selected set = true set, 3 steps, relative remainder < 1e-10",
                reason="the target lies in the span of 3 candidate kernels; exact in exact arithmetic",
                kind="check", source=src),
        C.at_most("mesh_laplacian_eigenvalues", "robust-laplacian + eigsh on an icosphere (642 vertices) gives "
                  "λ₁..₃ ≈ 2 and λ₄..₈ ≈ 6 (= l(l+1)); max relative error.", measured=eig_err, bound=0.02, domain=(0, math.inf),
                  reason="cotangent Laplacian discretisation error at this mesh size is ~h² ≈ 1 %",
                  kind="check", source="inferred: spherical harmonics are the eigenfunctions of the sphere"),
        C.at_most("poafd_mesh_energy_identity", "POAFD on the mesh heat kernel (16 eigenpairs): energy identity "
                  "(direct ‖f − f_n‖² vs ‖f‖² − Σ⟨f,B_k⟩²), relative.", measured=ident_m, bound=1e-9, domain=(0, math.inf),
                  reason="exact identity; only round-off of a 642×642 Gram matrix", kind="check", source=src),
    ]


# =========================================================================== (2) solvers

def _solver_checks(metrics: dict, seed: int) -> list:
    rng = np.random.default_rng([seed, 123])     # the run seed's own initial fields
    u0 = periodic_grf(2, 1024, rng)
    ub = burgers_1d(u0, 0.05, 1.0, dt=2e-3)
    err_b = float(np.abs(ub - burgers_cole_hopf(u0, 0.05, 1.0)).max() / np.abs(ub).max())
    n = 64
    x = 2 * np.pi * np.arange(n) / n
    xx, yy = np.meshgrid(x, x, indexing="ij")
    w0 = (2 * np.sin(xx) * np.sin(yy))[None]
    w = navier_stokes_2d(w0, 0.01, 1.0, 2, dt=0.01)
    err_tg = float(np.abs(w[0, -1] - w0[0] * math.exp(-2 * 0.01 * 1.0)).max() / 2)
    vel = velocity_from_vorticity(random_vorticity(2, n, rng))
    k = np.fft.fftfreq(n, 1.0 / n)
    div = np.fft.ifft2(1j * k[:, None] * np.fft.fft2(vel[:, 0]) + 1j * k[None, :] * np.fft.fft2(vel[:, 1])).real
    div_err = float(np.abs(div).max() / np.abs(vel).max())
    sp = SphereSpectral(32, 64, "legendre-gauss")
    uh0 = random_sphere_field(1, sp, rng, lmax=8)
    uh = sphere_heat(uh0, 0.05, sp)
    pts = sphere_points(32, 64, "legendre-gauss").reshape(-1, 3)
    _, wts = np.polynomial.legendre.leggauss(32)
    qw = torch.tensor(np.repeat(wts[::-1].copy(), 64) * 2 * np.pi / 64)
    # the 2048 × 2048 kernel in blocks of 32 rows (same products, bitwise equal; the whole matrix at once was
    # memory-bound: 12.5 s → 4.0 s CPU)
    vq = uh0.reshape(-1) * qw
    via_kernel = torch.cat([sphere_heat_kernel(pts[i:i + 32], pts, 0.05, lmax=60) @ vq for i in range(0, len(pts), 32)])
    err_heat = float((via_kernel - uh.reshape(-1)).abs().max() / uh.abs().max())
    sp24 = SphereSpectral(24, 48, "legendre-gauss")
    _, energy = allen_cahn_sphere(0.5 * random_sphere_field(4, sp24, rng), 0.05, 1.0, sp24, dt=0.02,
                                  return_energy=True)
    rises = float((energy.diff(dim=-1) / energy[..., :-1].abs()).max().clamp_min(0))
    metrics["solvers"] = {"burgers_vs_cole_hopf": err_b, "taylor_green": err_tg, "divergence": div_err,
                          "sphere_heat_vs_kernel": err_heat, "allen_cahn_max_energy_rise": rises,
                          "allen_cahn_energy_first_last": [float(energy[0, 0]), float(energy[0, -1])]}
    src = "inferred: a known exact solution / monotone quantity of the equation"
    return [
        C.at_most("burgers_matches_cole_hopf", "ETDRK4 Burgers (ν = 0.05, N = 1024, T = 1) matches the exact "
                  "Cole–Hopf solution (max error / max |u|).", measured=err_b, bound=1e-6,
                  reason="4th-order scheme with dt = 2e-3 and a resolved spectrum; 1e-6 leaves room for time error",
                  kind="check", source=src, domain=(0, math.inf)),
        C.at_most("ns_taylor_green", "The NS solver keeps the Taylor–Green vortex ω = 2 sin x sin y exact: "
                  "ω(t) = ω(0)e^{−2νt} (ν = 0.01, t = 1; relative max error).", measured=err_tg, bound=1e-8,
                  reason="the nonlinear term vanishes identically; Crank–Nicolson error in e^{−2νt} is O((ν dt)²)",
                  kind="check", source=src, domain=(0, math.inf)),
        C.at_most("ns_velocity_divergence_free", "Velocity from vorticity is divergence-free (relative).",
                  measured=div_err, bound=1e-12, reason="exact in Fourier space; round-off only", kind="check",
                  source=src, domain=(0, math.inf)),
        C.at_most("sphere_heat_matches_kernel", "Spectral heat flow on S² (torch-harmonics SHT) equals the "
                  "heat-kernel integral by the addition theorem (Gauss–Legendre quadrature), relative max error.",
                  measured=err_heat, bound=1e-10, reason="two exact routes for a band-limited field", kind="check",
                  source=src, domain=(0, math.inf)),
        C.at_most("allen_cahn_energy_decreases", "Stabilised semi-implicit Allen–Cahn on S² never increases the "
                  "Ginzburg–Landau energy (max relative step increase).", measured=rises, bound=1e-10,
                  reason="the scheme is unconditionally energy-stable for |u| ≲ 1 (stabiliser S = 2)",
                  kind="check", source=src, domain=(0, math.inf)),
    ]


# =========================================================================== (3) reference mode on NS

def _ns_velocity(config: Config, data_seed: int) -> torch.Tensor:
    """NS velocity trajectories (traj, T+1, 2, 64, 64), generated once per run."""
    rng = np.random.default_rng([data_seed, 3])
    w0 = random_vorticity(config.ns_trajectories, 64, rng, scale=1.0)
    w = navier_stokes_2d(w0, 1e-3, 0.4 * config.ns_steps, config.ns_steps, dt=0.02,
                         forcing=kolmogorov_forcing(64))
    return torch.tensor(velocity_from_vorticity(w), dtype=torch.float32)


def _ns_split(vel: torch.Tensor, seed: int):
    """80/20 split by trajectory (seeded), then one-step pairs (u(t), u(t+1))."""
    perm = np.random.default_rng([seed, 4]).permutation(vel.shape[0])
    n_test = max(1, vel.shape[0] // 5)
    te, tr = perm[:n_test], perm[n_test:]

    def pairs(ids):
        v = vel[ids]
        return v[:, :-1].reshape(-1, 2, 64, 64), v[:, 1:].reshape(-1, 2, 64, 64)

    return pairs(tr), pairs(te)


def _reference_ns(config: Config, ctx: RunContext, metrics: dict) -> list:
    per_seed, rows = [], []
    vel = _ns_velocity(config, _seeds(config, ctx)[0])     # the NS data set follows the run seed
    for seed in ctx.track(_seeds(config, ctx), "reference AFDONet on Navier–Stokes"):
        (xtr, ytr), (xte, yte) = _ns_split(vel, seed)
        torch.manual_seed(seed)
        ref = ReferenceAFDONet().to(ctx.device)
        rep = fit(ref, xtr, ytr, epochs=config.ns_epochs, batch_size=16, lr=1e-3, seed=seed, grad_clip=None,
                  scheduler=False)
        e_ref = float(evaluate(ref, xte, yte).mean())
        e_none = float(relative_l2(xte, yte).mean())
        row = {"seed": seed, "reference": e_ref, "no_change": e_none, "reference_params": count_parameters(ref),
               "train_s_per_sample": rep.seconds_per_sample}
        if seed == _seeds(config, ctx)[0]:
            if config.ns_fno_width > 0:
                fno = FNOBaseline(2, 2, config.ns_fno_width, 12, 4)
            else:
                fno, _ = matched_fno(count_parameters(ref), 2, 2, modes=12, widths=range(8, 129, 2))
            fno = fno.to(ctx.device)
            fit(fno, xtr, ytr, epochs=config.ns_epochs, batch_size=16, lr=1e-3, seed=seed)
            row.update(fno=float(evaluate(fno, xte, yte).mean()), fno_params=count_parameters(fno))
        rows.append(row)
        per_seed.append(C.at_most(
            "reference_beats_no_change", "The released AFDONet architecture (MLP-encoder VAE, half-spectrum "
            "spectral decoder, 10 epochs, batch 16, Adam 1e-3) beats 'no change' u(t+1) = u(t) on held-out NS "
            "trajectories: ratio of test relative L² (reference / no change).", measured=e_ref / e_none, bound=1.0,
            reason="beating persistence is the minimal bar of a one-step forecaster; no paper number exists",
            kind="reconstruction", source="inferred: the authors' released code trains this model on NS; the "
            "paper's data (token-gated) is replaced by our NS solver", paper_value="no number",
            domain=(0, math.inf),
            note="one NS data set per run (seed of the first training seed); seeds vary the trajectory split and "
            "the initialisation. Snapshots 0.4 time units apart."))
    metrics["navier_stokes"] = rows
    claims = [C.over_seeds(per_seed, _seeds(config, ctx))]
    # the released 'holomorphic' term has no gradient: gradients with weight 1e-8 vs 0 are identical
    torch.manual_seed(0)
    m1 = ReferenceAFDONet()
    m0 = ReferenceAFDONet(holomorphic_weight=0.0)
    m0.load_state_dict(m1.state_dict())
    x = torch.randn(4, 2, 64, 64)
    grads = []
    for mdl in (m1, m0):
        mdl.eval()
        pred, mu, lv = mdl(x)
        mdl.zero_grad()
        mdl.loss(pred, x, mu, lv).backward()
        grads.append(torch.cat([p.grad.flatten() for p in mdl.parameters()]))
    gdiff = float((grads[0] - grads[1]).abs().max())
    try:
        ReferenceAFDONet()(torch.zeros(1, 2, 128, 128))
        refused = False
    except ValueError:
        refused = True
    claims += [
        C.at_most("released_holomorphic_term_no_gradient", "The released 'holomorphic' loss term (the derivative "
                  "of the output with respect to itself) contributes no gradient: max |Δgrad| between weights 1e-8 "
                  "and 0.", measured=gdiff, bound=0.0, domain=(0, math.inf), reason="a constant term; any difference would be a bug",
                  kind="check", source="inferred: reading the released training code", paper_value="holomorphic "
                  "regulariser (abstract framing)"),
        C.check("reference_refuses_other_grid", "The reference mode (fixed 64×64 by its dense encoder and lift) "
                "refuses a 128×128 input with a clear error instead of resampling silently.",
                measured=refused, holds=refused, tolerance="ValueError raised", reason="not "
                "discretisation-invariant by construction", kind="check", source="inferred: released architecture"),
    ]
    return claims


# =========================================================================== (4) AFD mode: Burgers and sphere

def _burgers_data(config: Config, seed: int):
    rng = np.random.default_rng([seed, 1])
    n = config.burgers_train + config.burgers_test
    u0 = periodic_grf(n, 512, rng)
    u = burgers_1d(u0, config.burgers_nu, 1.0, dt=2e-3)

    def sub(a, res):
        return torch.tensor(a[:, ::512 // res], dtype=torch.float32)[:, None]

    return {res: (sub(u0, res), sub(u, res)) for res in (64, 128)}


def _train_three(config: Config, seed: int, x, y, tr, te, domain: str, kwargs: dict, epochs: int, lr: float,
                 fno_modes: int, extra_eval: dict | None = None, device: str = "cpu") -> dict:
    out = {}
    models = {}
    for dec in ("afd", "fourier"):
        torch.manual_seed(seed)
        models[dec] = AFDOperator(domain, dec, **kwargs)
    params = count_parameters(models["afd"])
    torch.manual_seed(seed)
    models["fno"], width = matched_fno(params, 1 if domain == "circle" else 2, 1, modes=fno_modes, n_layers=4)
    for name, mdl in models.items():
        mdl.to(device)
        rep = fit(mdl, x[tr], y[tr], epochs=epochs, batch_size=32 if domain == "circle" else 16, lr=lr, seed=seed,
                  grad_clip=None)
        out[name] = {"test_rel_l2": float(evaluate(mdl, x[te], y[te]).mean()), "params": count_parameters(mdl),
                     "train_s_per_sample": rep.seconds_per_sample,
                     "infer_s_per_sample": inference_seconds_per_sample(mdl, x[te], repeats=1)}
        if extra_eval:
            for key, (xe, ye) in extra_eval.items():
                out[name][key] = float(evaluate(mdl, xe, ye).mean())
    out["fno"]["width"] = width
    out["no_change"] = {"test_rel_l2": float(relative_l2(x[te], y[te]).mean())}
    out["_models"] = models
    return out


def _burgers(config: Config, ctx: RunContext, metrics: dict, figs: dict) -> list:
    rows = []
    kw = dict(n_poles=config.n_poles, n_origin=config.n_origin, width=24, modes=16, n_layers=3, pool=16)
    for seed in ctx.track(_seeds(config, ctx), "Burgers: AFD vs Fourier decoder vs FNO"):
        data = _burgers_data(config, seed)
        x, y = data[64]
        ntr = config.burgers_train
        tr, te = slice(0, ntr), slice(ntr, ntr + config.burgers_test)
        x128, y128 = data[128]
        r = _train_three(config, seed, x, y, tr, te, "circle", kw, config.burgers_epochs, 1e-2, 16,
                         {"test_rel_l2_128": (x128[te], y128[te])}, device=ctx.device)
        models = {k: v.cpu() for k, v in r.pop("_models").items()}
        r["pole_near_front"] = _pole_front_hits(models["afd"], x[te], y[te], config.n_origin)
        r["decoder_parseval"] = _decoder_parseval(models["afd"], x[te][:8])
        if seed == _seeds(config, ctx)[0]:
            ex = models["afd"].explain(x[te][:1])
            pred = models["afd"](x128[te][:1], sample=False)[0]
            figs["burgers"] = (x128[te][0, 0].numpy(), y128[te][0, 0].numpy(), pred[0, 0].detach().numpy(),
                               models["fourier"](x128[te][:1], sample=False)[0][0, 0].detach().numpy(),
                               models["fno"](x128[te][:1], sample=False)[0][0, 0].detach().numpy(),
                               ex["poles"][0].numpy(), ex["term_energy"][0].numpy())
        rows.append({"seed": seed, **r})
    metrics["burgers"] = rows
    claims = _comparison_claims(rows, config, "burgers", "1-D viscous Burgers at ν = "
                                f"{config.burgers_nu} (sharp fronts; GRF u₀ → u(1), train at N = 64)", transfer=True)
    worst = max(r["decoder_parseval"] for r in rows)
    claims.append(C.at_most(
        "burgers_decoder_basis_orthonormal", "The trained AFD decoder synthesises with an orthonormal "
        "Takenaka–Malmquist basis at its learned poles: ‖Σ c_k B_k‖² = Σ|c_k|² on held-out samples (Parseval; max "
        "relative difference over 8 samples and the seeds, basis evaluated in float64 on 4096 boundary points).",
        measured=worst, bound=1e-6, domain=(0, math.inf), kind="check",
        source="inferred: TM systems are orthonormal for any poles in the disc (Takenaka 1925; Qian & Wang 2011)",
        reason="exact identity; the float32 latents are cast to float64 and 4096 points resolve poles with "
               "|a| < 0.98 (aliasing ~0.98^4096); a basis missing a conjugate or a factor breaks it by orders of "
               "magnitude, while the model comparisons above do not notice"))
    hits = sum(r["pole_near_front"][0] for r in rows)
    total = sum(r["pole_near_front"][1] for r in rows)
    rate, iv = C.proportion_interval(hits, total)
    claims.append(C.at_least(
        "burgers_poles_mark_fronts", "Explainability: the AFD decoder's free pole closest to the unit circle points "
        "(by its angle) within ±π/8 of the steepest front of the target, more often than chance (1/8): hit rate "
        "over held-out samples, pooled over seeds.", measured=rate, interval=iv, bound=1 / 8, domain=(0, 1),
        tuned_after_look=TUNED_DESIGN,
        reason="a uniformly placed pole lands within ±π/8 of a given angle with probability 1/8; the exact "
               "(Clopper–Pearson) interval over samples must clear it", kind="reconstruction",
        source="inferred: the abstract claims explainability; AFD poles near the circle mark sharp features",
        paper_value="explainable (no number)", note=f"{hits} of {total} held-out samples (pooled over seeds); "
        "front = argmin of the target's slope."))
    return claims


def _seeds(config: Config, ctx: RunContext) -> list[int]:
    """Training seeds of the model parts: the config's seeds offset by the run seed (so confirmation seeds
    train other models; run seed 0 keeps the development seeds)."""
    return [ctx.seed + s for s in config.seeds]


@torch.no_grad()
def _decoder_parseval(model, x) -> float:
    """Max over samples of |‖Σ c_k B_k‖² − Σ|c_k|²| / Σ|c_k|² for the decoder's posterior-mean poles and
    coefficients, with the TM basis evaluated in float64 on 4096 boundary points (``takenaka_malmquist``, the
    function the decoder synthesises with)."""
    ex = model.explain(x)
    a, c = ex["poles"].to(torch.complex128), ex["coefficients"].to(torch.complex128)
    z = boundary_points(4096)
    f = (c[:, :, None] * takenaka_malmquist(a, z, validate=False)).sum(1)
    norm2 = (f.abs() ** 2).mean(-1)
    coef2 = (c.abs() ** 2).sum(-1)
    return float(((norm2 - coef2).abs() / coef2.clamp_min(1e-300)).max())


@torch.no_grad()
def _pole_front_hits(model, x, y, n_origin: int) -> tuple[int, int]:
    """(hits, n): samples whose outermost free pole angle is within π/8 of the steepest descent of y."""
    ex = model.explain(x)
    poles = ex["poles"][:, n_origin:]
    outer = poles[torch.arange(poles.shape[0]), poles.abs().argmax(dim=1)]
    n = y.shape[-1]
    slope = torch.roll(y[:, 0], -1, dims=-1) - y[:, 0]
    front = 2 * math.pi * (slope.argmin(dim=-1).double() + 0.5) / n
    d = torch.remainder(outer.angle().double() - front + math.pi, 2 * math.pi) - math.pi
    return int((d.abs() <= math.pi / 8).sum()), int(y.shape[0])


def _sphere_data(config: Config, seed: int):
    rng = np.random.default_rng([seed, 2])
    sp = SphereSpectral(config.sphere_nlat, 2 * config.sphere_nlat, "legendre-gauss")
    n = config.sphere_train + config.sphere_test
    u0 = 0.5 * random_sphere_field(n, sp, rng, lmax=6)
    u = allen_cahn_sphere(u0, config.sphere_eps, 1.5, sp, dt=0.02)
    return u0.float()[:, None], u.float()[:, None]


def _sphere(config: Config, ctx: RunContext, metrics: dict) -> list:
    rows = []
    kw = dict(n_poles=config.sphere_atoms, smooth_degree=config.sphere_smooth_degree, kernel_lmax=24, width=12,
              modes=8, n_layers=2, pool=8)
    for seed in ctx.track(_seeds(config, ctx), "sphere Allen–Cahn: AFD vs SH decoder vs FNO"):
        x, y = _sphere_data(config, seed)
        ntr = config.sphere_train
        tr, te = slice(0, ntr), slice(ntr, ntr + config.sphere_test)
        r = _train_three(config, seed, x, y, tr, te, "sphere", kw, config.sphere_epochs, 3e-3, 8, device=ctx.device)
        r.pop("_models")
        rows.append({"seed": seed, **r})
    metrics["sphere"] = rows
    return _comparison_claims(rows, config, "sphere", "Allen–Cahn on the unit sphere (ε = "
                              f"{config.sphere_eps}, sharp interfaces; u₀ → u(1.5))", transfer=False)


def _unless_untrained(claim, rows: list[dict], models: tuple[str, str]):
    """The comparison ``claim``, or not checkable when one of the two ``models`` has not learned the map.

    A model has learned it when its test relative L² (mean over seeds) is below that of 'no change'
    (predicting u₀ for u(T)): ranking two models that both do worse than persistence says nothing
    about their architectures. At quick scale the training sizes are set by the CPU budget (see
    :class:`Config`), which can leave the models there; the full configuration trains to paper-like
    sizes on a GPU.
    """
    err = {m: float(np.mean([r[m]["test_rel_l2"] for r in rows])) for m in (*models, "no_change")}
    behind = [m for m in models if not err[m] < err["no_change"]]
    if not behind:
        return claim
    errs = ", ".join(f"{m} {err[m]:.3g}" for m in models)
    return C.as_not_checkable(
        claim,
        reason=f"at these sizes {' and '.join(behind)} did not learn the map: test relative L² (mean over seeds) "
        f"{errs} vs 'no change' {err['no_change']:.3g}; ranking models that do worse than persistence is no "
        f"evidence about their architectures (the quick run's training sizes are set by its CPU budget)",
        full_scale="trains the three operators at paper-like sizes on the GPU (2048 training pairs, 500 Burgers / "
        "300 sphere epochs) and judges the comparison there")


def _comparison_claims(rows: list[dict], config: Config, tag: str, task: str, transfer: bool) -> list:
    seeds = [r["seed"] for r in rows]
    note_design = ("AFD-mode design inferred (FNO encoder → variational latent → parameter-free synthesis "
                   "decoder).")
    claims = []
    vs_fourier = [C.at_most(f"{tag}_afd_beats_fourier_decoder", f"{task}: the AFD decoder beats the "
                            "Fourier-decoder ablation at the same latent size and encoder (ratio of test relative L², "
                            "AFD / Fourier).", measured=r["afd"]["test_rel_l2"] / r["fourier"]["test_rel_l2"],
                            bound=1.0, reason="'superior' read as a lower mean test error (interval of the seed mean)",
                            domain=(0, math.inf), tuned_after_look=TUNED_DESIGN, kind="reconstruction", source="inferred: the abstract credits AFD for sharp gradients; "
                            "the ablation isolates the decoder", paper_value="superior (no number)", note=note_design)
                  for r in rows]
    claims.append(_unless_untrained(C.over_seeds(vs_fourier, seeds), rows, ("afd", "fourier")))
    vs_fno = [C.at_most(f"{tag}_afd_beats_fno", f"{task}: AFDONet (AFD mode) beats an FNO with the same parameter "
                        "count (ratio of test relative L², AFDONet / FNO).",
                        measured=r["afd"]["test_rel_l2"] / r["fno"]["test_rel_l2"], bound=1.0,
                        reason="'superior' read as a lower mean test error (interval of the seed mean)",
                        domain=(0, math.inf), tuned_after_look=TUNED_DESIGN, kind="reconstruction", source="inferred: our reading of the abstract's design (the paper's "
                        "architecture, benchmarks and training are unknown), tested against the abstract's 'superior "
                        "performance on manifolds and on data with sharp gradients'",
                        paper_value="superior (no number given)",
                        note="Kind reconstruction, not paper: the model is our inferred AFD mode, so a failure counts "
                        "against our reconstruction, not against the paper's model (see "
                        "superior_on_manifolds_and_sharp_gradients). " + note_design + f" FNO width {r['fno']['width']}, params {r['fno']['params']} vs "
                        f"{r['afd']['params']}.") for r in rows]
    claims.append(_unless_untrained(C.over_seeds(vs_fno, seeds), rows, ("afd", "fno")))
    if transfer:
        for name in ("afd", "fourier", "fno"):
            per = [C.at_most(f"{tag}_{name}_resolution_transfer", f"{task}: the {name} model trained at N = 64 keeps "
                             "its error at N = 128 (|err₁₂₈ / err₆₄ − 1|).",
                             measured=abs(r[name]["test_rel_l2_128"] / r[name]["test_rel_l2"] - 1), bound=TRANSFER_TOL,
                             reason="a discretisation-invariant operator should change little; 20 % allows the "
                             "finer grid resolving more of the front", kind="reconstruction", domain=(0, math.inf),
                             tuned_after_look=TUNED_DESIGN if name == "afd" else "",
                             source="inferred: discretisation invariance of neural operators (the abstract calls "
                             "AFDONet a neural operator)") for r in rows]
            claims.append(C.over_seeds(per, seeds))
    return claims


# =========================================================================== (5) cost and unreadable claims

def _cost_claims(metrics: dict, config: Config, ctx: RunContext) -> list:
    rows = metrics["burgers"]
    ratios = [r["afd"]["train_s_per_sample"] / r["fno"]["train_s_per_sample"] for r in rows]
    mean, iv = C.mean_interval(ratios, domain=(0, math.inf))
    return [
        C.at_most("competitive_training_cost", "AFD mode trains at a cost competitive with an equal-parameter FNO "
                  "on Burgers: ratio of CPU seconds per training sample (AFDONet / FNO).", measured=mean,
                  interval=iv, bound=COST_FACTOR, domain=(0, math.inf), tuned_after_look=TUNED_DESIGN,
                  reason="'competitive' read as within 2×, fixed before the run; "
                  "interval over seeds", kind="reconstruction", source="inferred: our AFD-mode design, timed against "
                  "the abstract's 'competitive computational efficiency'", paper_value="competitive (no number)",
                  note="Kind reconstruction, not paper: it times our inferred architecture, not the paper's."),
    ] + ([] if ctx.confirmation else [
        C.not_checkable("superior_on_manifolds_and_sharp_gradients", "The paper's AFDONet is superior on (i) "
                        "arbitrary Riemannian manifolds and (ii) data with sharp gradients, at competitive "
                        "computational efficiency.", paper_value="superior / competitive (no numbers)",
                        reason="the paper's architecture, benchmarks, baselines and numbers are not readable (only "
                        "the abstract); the released code is a different model (arch='reference'). Our inferred "
                        "AFD mode is measured instead in the reconstruction claims burgers_afd_beats_fno, "
                        "sphere_afd_beats_fno and competitive_training_cost",
                        full_scale="repeats those reconstruction comparisons at paper-like sizes (GPU); it cannot "
                        "test the paper's own model either", kind="paper", source="abstract", object="toy"),
        C.not_checkable("outstanding_accuracy_several_benchmarks", "Outstanding accuracy on several benchmark "
                        "problems, with the paper's numbers.", paper_value="no numbers in the abstract",
                        reason="the paper text (tables, benchmarks, baselines' numbers) was not available; only "
                        "the abstract was read", full_scale="runs the same comparisons at paper-like sizes on a "
                        "GPU; the user can pass the authors' NS data (.npz, key 'data') to the reference mode",
                        kind="paper", source="abstract", object="toy"),
    ])


# =========================================================================== figures

def _figures(ctx: RunContext, figs: dict, metrics: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    errs, fourier, best, real_err, fourier_g = figs["afd"]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    ax[0].semilogy(range(1, len(errs) + 1), errs, "o-", ms=3, label="AFD (maximal selection)")
    ax[0].semilogy(range(1, len(fourier) + 1), fourier, label="first-n Fourier")
    ax[0].semilogy(range(1, len(best) + 1), best, "--", label="best n-term Fourier")
    ax[0].axhline(1e-2, color="grey", lw=0.8)
    ax[0].set(xlabel="terms n", ylabel="relative L²", title="sharp rational target F")
    ax[0].legend(fontsize=8)
    ax[1].semilogy(range(1, len(real_err) + 1), real_err, "o-", ms=3, label="AFD")
    ax[1].semilogy(range(1, len(fourier_g) + 1), fourier_g, label="first-n Fourier")
    ax[1].axhline(1e-2, color="grey", lw=0.8)
    ax[1].set(xlabel="terms n", title="tanh(10 sin t)")
    ax[1].legend(fontsize=8)
    ctx.save_figure("afd_vs_fourier_terms", fig, caption="Relative L² error against the number of terms: AFD "
                    "(adaptive poles) reaches 1e-2 with far fewer terms than the Fourier expansion on sharp "
                    "functions — the property the abstract builds on.")
    if "burgers" in figs:
        x0, y1, pa, pf, pn, poles, energy = figs["burgers"]
        th = np.linspace(0, 2 * np.pi, len(x0), endpoint=False)
        fig, ax = plt.subplots(figsize=(7, 3.4))
        ax.plot(th, x0, color="grey", lw=0.8, label="u₀")
        ax.plot(th, y1, "k", lw=1.5, label="u(1) (target)")
        ax.plot(th, pa, label="AFDONet (AFD decoder)")
        ax.plot(th, pf, label="Fourier decoder")
        ax.plot(th, pn, label="FNO")
        free = np.abs(poles) > 1e-9
        for p in poles[free]:
            ax.axvline(np.angle(p) % (2 * np.pi), color="C0", alpha=min(1.0, 0.2 + abs(p) ** 4), lw=0.8)
        ax.set(xlabel="θ", title="Burgers test sample at N = 128 (trained at 64); vertical lines: pole angles")
        ax.legend(fontsize=7, ncol=2)
        ctx.save_figure("burgers_sample", fig, caption="One held-out Burgers sample evaluated at twice the training "
                        "resolution; blue lines mark the angles of the AFD decoder's free poles (darker = closer "
                        "to the circle), the explanation hook of the AFD mode.")
    groups = {}
    for task in ("burgers", "sphere"):
        for r in metrics.get(task, []):
            for name in ("afd", "fourier", "fno", "no_change"):
                groups.setdefault((task, name), []).append(r[name]["test_rel_l2"])
    fig, ax = plt.subplots(figsize=(7, 3.4))
    names = ("afd", "fourier", "fno", "no_change")
    for i, task in enumerate(("burgers", "sphere")):
        for j, name in enumerate(names):
            vals = groups.get((task, name), [])
            if vals:
                ax.bar(i * 5 + j, np.mean(vals), yerr=np.std(vals), color=f"C{j}", label=name if i == 0 else None)
    ax.set_xticks([1.5, 6.5], ["Burgers ν=0.01", "sphere Allen–Cahn"])
    ax.set(ylabel="test relative L²", yscale="log")
    ax.legend(fontsize=8)
    ctx.save_figure("operator_errors", fig, caption="Test relative L² (mean ± sd over seeds) of AFDONet's AFD "
                    "mode, the Fourier-decoder ablation, an equal-parameter FNO and 'no change'. The abstract "
                    "predicts AFDONet best on sharp gradients and manifolds.")


# =========================================================================== run


def run(config: Config, ctx: RunContext) -> Outcome:
    """Run all parts and return the claims (see module docstring)."""
    metrics: dict = {}
    figs: dict = {}
    claims: list = []
    t0 = time.process_time()
    with warnings.catch_warnings(), torch_threads(1), blas_threads(1):
        warnings.simplefilter("ignore", UserWarning)
        timed = metrics["cpu_seconds_by_part"] = {}

        def part(name, fn, *args):
            t = time.process_time()
            out = fn(*args)
            timed[name] = round(time.process_time() - t, 2)
            return out

        if not ctx.confirmation:                 # a confirmation run judges only the AFD-mode claims (tuned)
            claims += part("afd_numerics", _afd_numerics, config, metrics, figs)
            claims += part("poafd_numerics", _poafd_numerics, metrics)
            claims += part("solver_checks", _solver_checks, metrics, ctx.seed)
            claims += part("reference_ns", _reference_ns, config, ctx, metrics)
        claims += part("burgers", _burgers, config, ctx, metrics, figs)
        claims += part("sphere", _sphere, config, ctx, metrics)
        claims += _cost_claims(metrics, config, ctx)
    metrics["cpu_seconds"] = time.process_time() - t0
    if not ctx.confirmation:
        _figures(ctx, figs, metrics)
    notes = (
        "Only the abstract was read (the paper text was not found; it gives no numbers). The authors' released code "
        "was read for understanding and re-implemented as arch='reference' (MLP-encoder VAE, dense lift to 32×64×64, "
        "two half-spectrum spectral blocks, loss MSE + 1e-8·KL + 1e-8·constant 'holomorphic' term); it has no AFD "
        "numerics. arch='afd' is our reading of the abstract: FNO encoder (neuraloperator) → variational latent → "
        "Takenaka–Malmquist synthesis on the circle (poles kept in |a| < 0.98) or normalised heat-kernel atoms on S² "
        "(plus a low-degree smooth part), loss relative L² + 1e-3·KL. Data are generated here: NS vorticity "
        "(ν = 1e-3, Kolmogorov forcing, 64², Δt = 0.4 between snapshots) as velocity pairs; Burgers ETDRK4 at N = 512 "
        "subsampled to 64/128; Allen–Cahn on a Gauss–Legendre sphere grid via torch-harmonics. The NS FNO in quick "
        "mode has width ns_fno_width (not equal parameters; full uses equal parameters). Cut: the AFD mode on the "
        "NS torus (product-TM decoder) and mesh operator learning (POAFD is checked on a mesh numerically only).")
    return Outcome(metrics=metrics, claims=claims, notes=notes)
