"""Adaptive Fourier decomposition (AFD) in the Hardy space H²(D) of the unit disc.

Everything here is classical AFD (Qian & Wang, *Adaptive Fourier decomposition of functions*,
Math. Comp. 2011), re-derived for this project; the AFDONet abstract names AFD as the
framework guiding its architecture, nothing more was readable.

A function f ∈ H²(D) is represented by its boundary samples ``f[m] = f(z_m)``,
``z_m = exp(2πi m / M)``; the inner product is the boundary mean

    ⟨f, g⟩ = (1/2π) ∫₀^{2π} f(e^{it}) conj(g(e^{it})) dt ≈ (1/M) Σ_m f(z_m) conj(g(z_m)),

exact (up to aliasing ~ max|a|^M) for the rational functions used below.

* normalised Szegő kernel  e_a(z) = √(1−|a|²) / (1 − ā z),  |a| < 1;
* Takenaka–Malmquist (TM) basis  B_k(z) = √(1−|a_k|²)/(1−ā_k z) · Π_{j<k} (z−a_j)/(1−ā_j z);
* reduced remainders  g₁ = f,  g_{k+1}(z) = [g_k(z) − ⟨g_k, e_{a_k}⟩ e_{a_k}(z)] (1−ā_k z)/(z−a_k);
* coefficients  ⟨f, B_k⟩ = ⟨g_k, e_{a_k}⟩ = √(1−|a_k|²) g_k(a_k);
* maximal selection  a_k = argmax_{|a|<1} (1−|a|²) |g_k(a)|²;
* energy identity  ‖f − Σ_{k≤n} ⟨f,B_k⟩B_k‖² = ‖f‖² − Σ_{k≤n} |⟨g_k, e_{a_k}⟩|².

All arrays are ``torch`` tensors, complex128 unless stated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

CDTYPE = torch.complex128


# --------------------------------------------------------------------------- validation

def _as_complex(x, name: str) -> torch.Tensor:
    t = torch.as_tensor(x)
    if not (t.is_complex() or t.is_floating_point()):
        t = t.to(torch.float64)
    t = t.to(CDTYPE) if not t.is_complex() or t.dtype != CDTYPE else t
    if not bool(torch.isfinite(torch.view_as_real(t)).all()):
        raise ValueError(f"{name} contains NaN or inf; AFD needs finite samples")
    return t


def check_poles(poles: torch.Tensor, name: str = "poles") -> torch.Tensor:
    """Validate poles strictly inside the unit disc.

    Args:
        poles: complex tensor of any shape.

    Returns:
        the poles as complex128.

    Raises:
        ValueError: a pole with |a| ≥ 1 (on or outside the unit circle, where the Szegő kernel
            is singular or leaves H²) or a non-finite pole.
    """
    a = _as_complex(poles, name)
    r = a.abs()
    if a.numel() and float(r.max()) >= 1.0:
        i = int(r.argmax())
        raise ValueError(f"{name}: |a| = {float(r.flatten()[i]):.6g} at index {i}; poles must satisfy |a| < 1 "
                         "(strictly inside the unit disc)")
    return a


def boundary_points(m: int) -> torch.Tensor:
    """The M equispaced boundary points z_m = exp(2πi m/M), complex128 of shape (M,).

    Raises:
        ValueError: M < 8.
    """
    if int(m) < 8:
        raise ValueError(f"boundary_points(M={m}): need M >= 8 samples on the circle")
    t = 2 * math.pi * torch.arange(int(m), dtype=torch.float64) / int(m)
    return torch.polar(torch.ones_like(t), t)


def _check_boundary(f, name: str = "f") -> torch.Tensor:
    f = _as_complex(f, name)
    if f.ndim != 1 or f.shape[0] < 8:
        raise ValueError(f"{name}: expected boundary samples of shape (M,) with M >= 8, got {tuple(f.shape)}")
    return f


NEGATIVE_FREQUENCY_TOL = 1e-2


def check_hardy(f: torch.Tensor, name: str = "f", tol: float = NEGATIVE_FREQUENCY_TOL) -> None:
    """Refuse boundary samples that are not (a resolved sample of) an H² function.

    An H² boundary function has only non-negative Fourier frequencies; the DFT bins M/2..M−1
    hold the negative ones (or the aliased tail of an under-resolved pole). A real non-constant
    signal puts half its energy there: it must go through :func:`analytic_signal` first, else
    every Taylor coefficient read from the DFT is wrong and AFD decomposes another function.

    Raises:
        ValueError: more than ``tol`` of the energy (default 1 %) in bins M/2..M−1, naming the
            fraction. Source: inferred (H² = non-negative frequencies, Qian & Wang 2011).
    """
    p = torch.fft.fft(f, dim=-1).abs() ** 2
    total = float(p.sum())
    frac = float(p[(f.shape[-1] + 1) // 2:].sum()) / total if total > 0 else 0.0
    if frac > tol:
        raise ValueError(f"{name} is not an H² boundary function: {frac:.1%} of its energy sits at negative "
                         f"frequencies (DFT bins M/2..M−1; allowed ≤ {tol:.0%}). For a real signal pass "
                         "analytic_signal(f) and take the real part of the reconstruction; for a sharp H² "
                         "function use more boundary samples M")


# --------------------------------------------------------------------------- kernels and basis

def szego_kernel(a: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Normalised Szegő kernel e_a(z) = √(1−|a|²)/(1 − ā z).

    Args:
        a: poles, complex, shape (...,), |a| < 1.
        z: evaluation points, complex, shape (M,) (usually the boundary points).

    Returns:
        complex128 tensor of shape (..., M), unit norm in H² for every a.

    Raises:
        ValueError: |a| ≥ 1.

    Source: Qian & Wang (2011), the reproducing kernel of H²(D) normalised.
    """
    a = check_poles(a)
    z = _as_complex(z, "z")
    a = a[..., None]
    return torch.sqrt(1 - a.abs() ** 2) / (1 - a.conj() * z)  # e_a(z) = √(1−|a|²)/(1−āz)


def takenaka_malmquist(poles: torch.Tensor, z: torch.Tensor, validate: bool = True) -> torch.Tensor:
    """Takenaka–Malmquist system B_1..B_n for poles a_1..a_n, evaluated at ``z``.

    B_k(z) = √(1−|a_k|²)/(1−ā_k z) · Π_{j<k} (z − a_j)/(1 − ā_j z). Orthonormal in H²(D) for any
    poles (repeats allowed). Works batched and is differentiable (used by the AFD decoder).

    Args:
        poles: complex, shape (..., n), |a| < 1.
        validate: check the poles (one reduction); the AFD decoder passes False (its poles are
            kept inside the disc by construction, and a diverged model should give NaN, not stop).
        z: complex, shape (M,).

    Returns:
        complex tensor of shape (..., n, M) (dtype follows ``poles``).

    Raises:
        ValueError: a pole with |a| ≥ 1 or non-finite (when ``validate``).

    Source: Takenaka (1925), Malmquist (1926); as used in AFD (Qian & Wang 2011).
    """
    if validate:                                               # user input; the AFD decoder skips this (its
        check_poles(poles)                                     # poles are |a| < 1 − δ by construction)
    a = poles[..., :, None]                                    # (..., n, 1)
    z = z.to(poles.dtype)
    denom = 1 - a.conj() * z                                   # 1 − ā_k z
    blaschke = (z - a) / denom                                 # (z − a_j)/(1 − ā_j z)
    ones = torch.ones_like(blaschke[..., :1, :])
    prefix = torch.cumprod(torch.cat([ones, blaschke[..., :-1, :]], dim=-2), dim=-2)  # Π_{j<k}
    return torch.sqrt(1 - a.abs() ** 2) / denom * prefix       # B_k(z)


def hardy_inner(f: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """Boundary inner product ⟨f, g⟩ = mean_m f(z_m) conj(g(z_m)) over the last axis."""
    return (f * g.conj()).mean(dim=-1)


def analytic_signal(f: torch.Tensor) -> torch.Tensor:
    """Analytic extension of a real periodic signal: F = f + i H f (Hilbert transform H).

    The boundary values of F ∈ H²(D) have Fourier coefficients F̂_0 = f̂_0, F̂_n = 2 f̂_n (n > 0),
    F̂_n = 0 (n < 0), so Re F = f on the circle. For even M the Nyquist bin is kept once.

    Args:
        f: real tensor of shape (..., M), samples at t_m = 2πm/M.

    Returns:
        complex128 tensor of shape (..., M).

    Raises:
        ValueError: complex or non-finite input.

    Source: the classical Hilbert-transform convention for real signals in AFD (Qian & Wang 2011).
    """
    f = torch.as_tensor(f)
    if f.is_complex():
        raise ValueError("analytic_signal(): f must be real (a complex f is already a boundary function)")
    f = f.to(torch.float64)
    if not bool(torch.isfinite(f).all()):
        raise ValueError("analytic_signal(): f contains NaN or inf")
    m = f.shape[-1]
    c = torch.fft.fft(f, dim=-1)
    h = torch.zeros(m, dtype=torch.float64)
    h[0] = 1.0
    h[1:(m + 1) // 2] = 2.0
    if m % 2 == 0:
        h[m // 2] = 1.0
    return torch.fft.ifft(c * h, dim=-1)


# --------------------------------------------------------------------------- evaluation inside the disc

def taylor_coefficients(g: torch.Tensor) -> torch.Tensor:
    """Taylor coefficients ĝ_n (n = 0..M−1) of an H² function from its M boundary samples.

    For g ∈ H² the boundary series has only n ≥ 0, so DFT bin n is read as the power z^n
    (aliasing error ~ decay of ĝ_n at n = M).
    """
    return torch.fft.fft(g, dim=-1) / g.shape[-1]


def evaluate_inside(coef: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """g(a) = Σ_n ĝ_n aⁿ for arbitrary points a in the disc (vectorised over a).

    Args:
        coef: Taylor coefficients, shape (M,).
        a: points, complex, shape (P,), |a| < 1.

    Returns:
        complex128 tensor of shape (P,). Cost O(P·M).

    Raises:
        ValueError: a point with |a| ≥ 1 or non-finite.
    """
    m = coef.shape[-1]
    a = check_poles(a, "a")                                    # the power series diverges for |a| ≥ 1
    # aⁿ = (a^B)^q · a^r with n = qB + r, B ≈ √M: 2·P·√M complex powers instead of P·M (the P·M powers
    # dominated AFD's zoom rounds); equal to the direct sum up to round-off
    b = max(1, math.isqrt(m - 1) + 1) if m > 1 else 1
    q = -(-m // b)
    r_abs, ang = a.abs()[:, None], a.angle()[:, None]
    nr = torch.arange(b, dtype=torch.float64)[None, :]
    nq = b * torch.arange(q, dtype=torch.float64)[None, :]
    low = torch.polar(torch.pow(r_abs, nr), nr * ang)          # a^r, r < B          (P, B)
    high = torch.polar(torch.pow(r_abs, nq), nq * ang)         # a^{qB}, q < Q       (P, Q)
    c = torch.zeros(q * b, dtype=coef.dtype)
    c[:m] = coef
    return ((low @ c.view(q, b).T) * high).sum(-1)


def evaluate_polar_grid(coef: torch.Tensor, radii: torch.Tensor, n_angles: int | None = None) -> torch.Tensor:
    """g on the polar grid a = r_i e^{2πij/P} for all radii at once, by one batched inverse FFT.

    g(r e^{iφ_j}) = Σ_n ĝ_n rⁿ e^{inφ_j}; with φ_j = 2πj/P the powers fold modulo P and the sum
    is P·ifft of the folded coefficients. Cost O(R·M + R·P log P) instead of O(R·P·M).

    Args:
        coef: Taylor coefficients, shape (M,).
        radii: shape (R,), values in [0, 1).
        n_angles: P (default M), any P ≥ 1 (powers are folded modulo P).

    Returns:
        complex128 tensor of shape (R, P).
    """
    m = coef.shape[-1]
    p = m if n_angles is None else int(n_angles)
    n = torch.arange(m, dtype=torch.float64)
    scaled = coef[None, :] * torch.pow(radii.to(torch.float64)[:, None], n[None, :])     # ĝ_n rⁿ
    if p != m:
        folded = torch.zeros(radii.shape[0], p, dtype=CDTYPE)
        folded.index_add_(1, torch.arange(m) % p, scaled)                               # fold n ↦ n mod P
        scaled = folded
    return torch.fft.ifft(scaled, dim=-1) * p


# --------------------------------------------------------------------------- maximal selection

def default_radii(r_max: float = 0.99, n_radii: int = 64) -> torch.Tensor:
    """Candidate radii clustered towards the circle: r_i = 1 − (1 − r_max)^{i/(R−1)}, i = 0..R−1.

    So r_0 = 0 and r_{R−1} = r_max, dense near the boundary where sharp features put their poles
    (inferred design choice). Returns float64 (R,).

    Raises:
        ValueError: r_max outside (0, 1) or n_radii < 2.
    """
    if not 0.0 < r_max < 1.0 or n_radii < 2:
        raise ValueError(f"default_radii(r_max={r_max}, n_radii={n_radii}): need 0 < r_max < 1 and n_radii >= 2")
    return 1.0 - torch.exp(torch.linspace(0.0, math.log(1.0 - r_max), n_radii, dtype=torch.float64))


def maximal_selection(g: torch.Tensor, radii: torch.Tensor | None = None, n_angles: int | None = None,
                      refine_rounds: int = 6, r_max: float = 0.99) -> tuple[complex, float]:
    """Pole a maximising (1−|a|²)|g(a)|² = |⟨g, e_a⟩|² over a polar candidate grid, then refined.

    The grid search is one batched FFT (:func:`evaluate_polar_grid`); refinement evaluates a 9×9
    local (r, φ) grid around the best point (spacing = the local grid spacing, quartered each
    round) ``refine_rounds`` times, clipped to r ≤ r_max.

    Args:
        g: reduced remainder, boundary samples, complex (M,).
        radii: candidate radii (default :func:`default_radii`).
        n_angles: candidate angles P (default M).
        refine_rounds: local zoom rounds (0: grid only).
        r_max: largest pole modulus allowed (< 1).

    Returns:
        (a, value): the selected pole and (1−|a|²)|g(a)|².

    Source: maximal selection principle (Qian & Wang 2011); grid + zoom search is ours.
    """
    if not 0.0 < r_max < 1.0:
        raise ValueError(f"maximal_selection(r_max={r_max}): need 0 < r_max < 1")
    if n_angles is not None and (int(n_angles) != n_angles or n_angles < 1):
        raise ValueError(f"maximal_selection(n_angles={n_angles}): need an integer >= 1")
    if int(refine_rounds) != refine_rounds or refine_rounds < 0:
        raise ValueError(f"maximal_selection(refine_rounds={refine_rounds}): need an integer >= 0")
    coef = taylor_coefficients(g)
    radii = default_radii(r_max) if radii is None else radii.to(torch.float64)
    if radii.numel() and (float(radii.max()) > r_max or float(radii.min()) < 0):
        raise ValueError(f"maximal_selection(): radii must lie in [0, r_max={r_max}]")
    vals = evaluate_polar_grid(coef, radii, n_angles)
    obj = (1 - radii[:, None] ** 2) * vals.abs() ** 2           # (1−|a|²)|g(a)|²
    i = int(obj.argmax())
    p = vals.shape[1]
    ri, pj = divmod(i, p)
    r0, phi0, best = float(radii[ri]), 2 * math.pi * pj / p, float(obj.flatten()[i])
    dr = 0.05                                                   # local radial spacing around the best radius
    if radii.numel() > 1:
        lo, hi = max(ri - 1, 0), min(ri + 1, radii.numel() - 1)
        dr = float(radii[hi] - radii[lo]) / (hi - lo)
    dphi = 2 * math.pi / p
    for _ in range(refine_rounds):
        rr = torch.clamp(r0 + dr * torch.linspace(-1, 1, 9, dtype=torch.float64), 0.0, r_max)
        pp = phi0 + dphi * torch.linspace(-1, 1, 9, dtype=torch.float64)
        cand = torch.polar(rr[:, None].expand(9, 9), pp[None, :].expand(9, 9)).flatten()
        o = (1 - cand.abs() ** 2) * evaluate_inside(coef, cand).abs() ** 2
        k = int(o.argmax())
        if float(o[k]) > best:
            best, r0, phi0 = float(o[k]), float(cand[k].abs()), float(cand[k].angle())
        dr, dphi = dr / 4, dphi / 4
    return complex(torch.polar(torch.tensor(r0, dtype=torch.float64), torch.tensor(phi0, dtype=torch.float64))), best


def maximal_selection_loop(g: torch.Tensor, candidates: torch.Tensor) -> tuple[complex, float]:
    """Reference (slow) maximal selection: one candidate at a time, |⟨g, e_a⟩|² by quadrature.

    Used by the benchmark as the loop baseline; same objective as :func:`maximal_selection`.
    """
    z = boundary_points(g.shape[-1])
    best, arg = -1.0, 0j
    for a in candidates.tolist():
        a = complex(a)
        e = math.sqrt(1 - abs(a) ** 2) / (1 - a.conjugate() * z)
        v = float(hardy_inner(g, e).abs() ** 2)
        if v > best:
            best, arg = v, a
    return arg, best


# --------------------------------------------------------------------------- the decomposition

@dataclass
class AFDResult:
    """Output of :func:`adaptive_fourier_decomposition`.

    Attributes:
        poles: complex128 (n,), the selected a_k.
        coefficients: complex128 (n,), ⟨f, B_k⟩ = ⟨g_k, e_{a_k}⟩.
        energy: ‖f‖² (boundary mean of |f|²).
        remainder_energy: float64 (n+1,), ‖f‖² − Σ_{j≤k}|⟨f,B_j⟩|² for k = 0..n (energy identity).
        m: number of boundary samples M.
    """

    poles: torch.Tensor
    coefficients: torch.Tensor
    energy: float
    remainder_energy: torch.Tensor
    m: int

    @property
    def n_terms(self) -> int:
        """Number of selected terms."""
        return int(self.poles.numel())

    def reconstruct(self, n_terms: int | None = None, z: torch.Tensor | None = None) -> torch.Tensor:
        """Σ_{k≤n} ⟨f,B_k⟩ B_k(z) (default: all terms, on the M boundary points); complex (M,)."""
        n = self.n_terms if n_terms is None else int(n_terms)
        if not 0 <= n <= self.n_terms:
            raise ValueError(f"n_terms={n_terms}; allowed 0..{self.n_terms}")
        z = boundary_points(self.m) if z is None else z
        if n == 0:
            return torch.zeros(z.shape[-1], dtype=CDTYPE)
        return self.coefficients[:n] @ takenaka_malmquist(self.poles[:n], z)


def reduced_remainder(g: torch.Tensor, a: complex, z: torch.Tensor) -> tuple[torch.Tensor, complex]:
    """One AFD step: g_{k+1} = [g − ⟨g, e_a⟩ e_a] (1 − ā z)/(z − a), and ⟨g, e_a⟩ = √(1−|a|²) g(a).

    Args:
        g: boundary samples (M,), complex.
        a: pole, |a| < 1.
        z: boundary points (M,).

    Returns:
        (g_next, coefficient).
    """
    if abs(a) >= 1:
        raise ValueError(f"reduced_remainder(): |a| = {abs(a):.6g}; need |a| < 1")
    coef = taylor_coefficients(g)
    ga = complex(evaluate_inside(coef, torch.tensor([a], dtype=CDTYPE))[0])
    c = math.sqrt(1 - abs(a) ** 2) * ga                       # ⟨g, e_a⟩ = √(1−|a|²) g(a)
    e = math.sqrt(1 - abs(a) ** 2) / (1 - a.conjugate() * z)  # e_a(z)
    return (g - c * e) * (1 - a.conjugate() * z) / (z - a), c


def adaptive_fourier_decomposition(f, n_terms: int, *, r_max: float = 0.99, n_radii: int = 64,
                                   n_angles: int | None = None, refine_rounds: int = 6,
                                   first_pole_at_origin: bool = False, rtol: float = 1e-13) -> AFDResult:
    """Core AFD of a boundary function f ∈ H²(D) by maximal selection.

    Args:
        f: boundary samples, shape (M,), complex (an H² function) — for a real signal pass
            :func:`analytic_signal` of it and take the real part of the reconstruction.
        n_terms: maximal number of terms n ≥ 1; stops earlier when the remainder energy falls
            below ``rtol·‖f‖²`` (a zero f gives an empty expansion).
        r_max: largest pole modulus; needs M ≳ 30/(1−r_max) for float-precision quadrature.
        n_radii, n_angles: candidate polar grid size (angles default M).
        refine_rounds: local zoom rounds after the grid search.
        first_pole_at_origin: force a₁ = 0 (the customary start; then ⟨f,B_1⟩ = f(0)).

    Returns:
        :class:`AFDResult`.

    Raises:
        ValueError: f not 1-D/finite, f not in H² (> 1 % of its energy at negative frequencies,
            e.g. a real signal passed without :func:`analytic_signal`), n_terms not an integer
            ≥ 1, r_max outside (0, 1), n_angles < 1, refine_rounds < 0.

    Source: Qian & Wang (2011) (core AFD); candidate grid + zoom is ours.
    """
    f = _check_boundary(f)
    if isinstance(n_terms, bool) or int(n_terms) != n_terms or n_terms < 1:
        raise ValueError(f"n_terms={n_terms!r}; need an integer >= 1")
    if not 0.0 < r_max < 1.0:
        raise ValueError(f"r_max={r_max}; need 0 < r_max < 1 (poles strictly inside the unit disc)")
    check_hardy(f)
    m = f.shape[0]
    if m < 30 / (1 - r_max):
        import warnings
        warnings.warn(f"M={m} boundary samples resolve poles only up to |a| ≈ {max(1 - 30 / m, 0.0):.3f}; "
                      f"r_max={r_max} may lose float precision in the energy identity (use M >= "
                      f"{math.ceil(30 / (1 - r_max))})", stacklevel=2)
    z = boundary_points(m)
    radii = default_radii(r_max, n_radii)
    energy = float(hardy_inner(f, f).real)
    poles, coefs, rem = [], [], [energy]
    g = f.clone()
    for k in range(int(n_terms)):
        if rem[-1] <= rtol * max(energy, 1e-300):
            break
        if k == 0 and first_pole_at_origin:
            a = 0j
        else:
            a, _ = maximal_selection(g, radii, n_angles, refine_rounds, r_max)
        g, c = reduced_remainder(g, a, z)
        poles.append(a)
        coefs.append(c)
        rem.append(rem[-1] - abs(c) ** 2)                       # energy identity
    return AFDResult(torch.tensor(poles, dtype=CDTYPE), torch.tensor(coefs, dtype=CDTYPE), energy,
                     torch.tensor(rem, dtype=torch.float64), m)


def truncated_fourier_error(f: torch.Tensor, n_terms: int, best: bool = False) -> float:
    """Relative L² error of the n-term Fourier (Taylor) approximation of an H² boundary function.

    ``best=False``: the first n powers z⁰..z^{n−1} (= AFD with every pole at 0);
    ``best=True``: the n largest-magnitude coefficients (best n-term Fourier).
    """
    c = taylor_coefficients(_check_boundary(f))
    p = c.abs() ** 2
    total = float(p.sum())
    kept = float(torch.sort(p, descending=True).values[:n_terms].sum()) if best else float(p[:n_terms].sum())
    return math.sqrt(max(total - kept, 0.0) / total) if total > 0 else 0.0


def terms_to_reach(errors, target: float) -> int | None:
    """Smallest n (1-based) with errors[n−1] ≤ target, or None."""
    for i, e in enumerate(errors):
        if e <= target:
            return i + 1
    return None
