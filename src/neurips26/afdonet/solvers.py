"""PDE data generated in-process (no downloads): Burgers (1-D periodic), incompressible
Navier–Stokes (2-D periodic, vorticity form), Allen–Cahn and heat on the sphere S².

Each solver has a check against a known solution or a conserved / monotone quantity (see the
tests and the experiment): Burgers vs the Cole–Hopf solution, Navier–Stokes vs the decaying
Taylor–Green vortex, sphere heat vs the heat-kernel integral (addition theorem), Allen–Cahn by its
non-increasing Ginzburg–Landau energy.

Sources: pseudo-spectral ETDRK4 (Cox & Matthews 2002; contour-integral coefficients of
Kassam & Trefethen 2005); Crank–Nicolson/Heun vorticity scheme as used to generate the FNO
Navier–Stokes data (Li et al. 2021); stabilised semi-implicit Allen–Cahn (Shen & Yang 2010).
The equations' parameters are ours (the paper's are unknown).
"""

from __future__ import annotations

import math

import numpy as np
import torch


def _finite(x: np.ndarray | torch.Tensor, name: str) -> None:
    ok = np.isfinite(np.asarray(x)).all() if not torch.is_tensor(x) else bool(torch.isfinite(x).all())
    if not ok:
        raise ValueError(f"{name} contains NaN or inf")


# --------------------------------------------------------------------------- random initial fields

def periodic_grf(n_samples: int, n: int, rng: np.random.Generator, alpha: float = 2.5, tau: float = 5.0,
                 scale: float = 1.0) -> np.ndarray:
    """Mean-zero Gaussian random field on [0, 2π) with covariance (−Δ + τ²)^{−α} (shape (S, n)).

    Normalised so each sample has unit RMS, then times ``scale``. Source: the FNO Burgers data
    (Li et al. 2021) use this family; parameters ours.
    """
    k = np.fft.rfftfreq(n, 1.0 / n)
    amp = (k ** 2 + tau ** 2) ** (-alpha / 2)
    amp[0] = 0.0
    c = (rng.normal(size=(n_samples, len(k))) + 1j * rng.normal(size=(n_samples, len(k)))) * amp
    u = np.fft.irfft(c, n=n, axis=-1)
    return scale * u / np.sqrt((u ** 2).mean(axis=-1, keepdims=True))


# --------------------------------------------------------------------------- Burgers

def burgers_1d(u0: np.ndarray, nu: float, t_final: float, dt: float = 1e-3) -> np.ndarray:
    """Viscous Burgers u_t + (u²/2)_x = ν u_xx on [0, 2π) periodic, pseudo-spectral ETDRK4.

    Args:
        u0: initial data, shape (B, N) or (N,), float; N even.
        nu: viscosity ν > 0.
        t_final: final time T > 0 (rounded to a whole number of steps of size ≤ dt).
        dt: time step.

    Returns:
        u(T), same shape as u0 (float64).

    Raises:
        ValueError: ν ≤ 0, T ≤ 0, dt ≤ 0, odd N, non-finite data; RuntimeError if the solution
            blows up (time step too large for the data).
    """
    u0 = np.asarray(u0, dtype=np.float64)
    squeeze = u0.ndim == 1
    u = u0[None] if squeeze else u0
    if u.ndim != 2 or u.shape[1] % 2:
        raise ValueError(f"burgers_1d(): u0 must have shape (B, N) with N even, got {u0.shape}")
    if not (nu > 0 and t_final > 0 and dt > 0):
        raise ValueError(f"burgers_1d(nu={nu}, t_final={t_final}, dt={dt}): all must be > 0")
    _finite(u, "u0")
    n = u.shape[1]
    steps = max(1, math.ceil(t_final / dt))
    h = t_final / steps
    k = np.fft.rfftfreq(n, 1.0 / n)
    lin = -nu * k ** 2                                              # L = ν ∂xx
    dealias = k < n / 3                                             # 2/3 rule
    g = -0.5j * k * dealias                                         # N(u) = −½ ∂x(u²)
    # ETDRK4 coefficients by contour integrals (Kassam & Trefethen 2005)
    e, e2 = np.exp(h * lin), np.exp(h * lin / 2)
    r = np.exp(1j * np.pi * (np.arange(1, 33) - 0.5) / 32)
    lr = h * lin[:, None] + r[None, :]
    q = h * np.real(np.mean((np.exp(lr / 2) - 1) / lr, axis=1))
    f1 = h * np.real(np.mean((-4 - lr + np.exp(lr) * (4 - 3 * lr + lr ** 2)) / lr ** 3, axis=1))
    f2 = h * np.real(np.mean((2 + lr + np.exp(lr) * (-2 + lr)) / lr ** 3, axis=1))
    f3 = h * np.real(np.mean((-4 - 3 * lr - lr ** 2 + np.exp(lr) * (4 - lr)) / lr ** 3, axis=1))
    v = np.fft.rfft(u, axis=-1)

    def nonlin(vh):
        return g * np.fft.rfft(np.fft.irfft(vh, n=n, axis=-1) ** 2, axis=-1)

    for _ in range(steps):
        nv = nonlin(v)
        a = e2 * v + q * nv
        na = nonlin(a)
        b = e2 * v + q * na
        nb = nonlin(b)
        c = e2 * a + q * (2 * nb - nv)
        nc = nonlin(c)
        v = e * v + nv * f1 + 2 * (na + nb) * f2 + nc * f3
    out = np.fft.irfft(v, n=n, axis=-1)
    if not np.isfinite(out).all():
        raise RuntimeError(f"burgers_1d(): solution blew up; reduce dt={dt}")
    return out[0] if squeeze else out


def burgers_cole_hopf(u0: np.ndarray, nu: float, t: float) -> np.ndarray:
    """Exact Burgers solution by the Cole–Hopf transform u = −2ν φ_x/φ, φ_t = ν φ_xx.

    φ₀ = exp(−U₀/(2ν)) with U₀ = ∫u₀ (periodic because u₀ has zero mean); the heat equation is
    solved exactly in Fourier space. Accurate while φ₀'s dynamic range stays within float64
    (use moderate ν, e.g. ≥ 0.05 for unit-RMS data).

    Args:
        u0: zero-mean initial data on [0, 2π), shape (N,) or (B, N).

    Raises:
        ValueError: u0 not (near) zero-mean, ν ≤ 0 or t < 0.
    """
    u0 = np.asarray(u0, dtype=np.float64)
    if not (nu > 0 and t >= 0):
        raise ValueError(f"burgers_cole_hopf(nu={nu}, t={t}): need nu > 0, t >= 0")
    if np.abs(u0.mean(axis=-1)).max() > 1e-10 * max(1.0, np.abs(u0).max()):
        raise ValueError("burgers_cole_hopf(): u0 must have zero mean (its antiderivative must be periodic)")
    n = u0.shape[-1]
    k = np.fft.rfftfreq(n, 1.0 / n)
    uh = np.fft.rfft(u0, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        Uh = np.where(k > 0, uh / (1j * k), 0.0)
    U0 = np.fft.irfft(Uh, n=n, axis=-1)
    w = -U0 / (2 * nu)
    phi0 = np.exp(w - w.max(axis=-1, keepdims=True))
    ph = np.fft.rfft(phi0, axis=-1) * np.exp(-nu * k ** 2 * t)
    phi = np.fft.irfft(ph, n=n, axis=-1)
    phix = np.fft.irfft(1j * k * ph, n=n, axis=-1)
    return -2 * nu * phix / phi


# --------------------------------------------------------------------------- Navier–Stokes

def kolmogorov_forcing(n: int, amplitude: float = 0.1, wavenumber: int = 1) -> np.ndarray:
    """Forcing f(x, y) = A (sin(k(x+y)) + cos(k(x+y))) on the 2π-periodic square, shape (n, n).

    The same form as the FNO Navier–Stokes data (Li et al. 2021, on the unit square).
    """
    x = 2 * np.pi * np.arange(n) / n
    xx, yy = np.meshgrid(x, x, indexing="ij")
    return amplitude * (np.sin(wavenumber * (xx + yy)) + np.cos(wavenumber * (xx + yy)))


def navier_stokes_2d(w0: np.ndarray, nu: float, t_final: float, n_save: int, dt: float = 1e-2,
                     forcing: np.ndarray | None = None) -> np.ndarray:
    """2-D incompressible Navier–Stokes in vorticity form on the 2π-periodic square.

    ω_t + u·∇ω = ν Δω + f, u = ∇^⊥ψ = (ψ_y, −ψ_x), −Δψ = ω. Pseudo-spectral, 2/3 de-aliasing,
    Crank–Nicolson for diffusion and Heun (RK2) for advection and forcing.

    Args:
        w0: initial vorticity, shape (B, n, n) (axes x, y), zero mean.
        nu: viscosity ν > 0.
        t_final: final time; snapshots at t_final·j/n_save, j = 1..n_save.
        n_save: number of snapshots ≥ 1.
        dt: time step (rounded so snapshots fall on steps).
        forcing: (n, n) array or None.

    Returns:
        vorticity snapshots, shape (B, n_save + 1, n, n) (index 0 is w0).

    Raises:
        ValueError: bad shapes or parameters; RuntimeError on blow-up.
    """
    w0 = np.asarray(w0, dtype=np.float64)
    if w0.ndim != 3 or w0.shape[1] != w0.shape[2] or w0.shape[1] % 2:
        raise ValueError(f"navier_stokes_2d(): w0 must have shape (B, n, n) with n even, got {w0.shape}")
    if not (nu > 0 and t_final > 0 and dt > 0 and n_save >= 1):
        raise ValueError(f"navier_stokes_2d(nu={nu}, t_final={t_final}, dt={dt}, n_save={n_save}): invalid")
    _finite(w0, "w0")
    n = w0.shape[1]
    per = max(1, math.ceil(t_final / n_save / dt))
    h = t_final / n_save / per
    kx = np.fft.fftfreq(n, 1.0 / n)[:, None]
    ky = np.fft.rfftfreq(n, 1.0 / n)[None, :]
    k2 = kx ** 2 + ky ** 2
    k2_inv = np.where(k2 > 0, 1.0 / np.where(k2 > 0, k2, 1), 0.0)
    dealias = (np.abs(kx) < n / 3) & (ky < n / 3)
    fh = np.fft.rfft2(forcing) if forcing is not None else 0.0
    if forcing is not None and np.shape(forcing) != (n, n):
        raise ValueError(f"forcing shape {np.shape(forcing)} != ({n}, {n})")

    def rhs(wh):
        psih = wh * k2_inv                                           # ψ̂ = ω̂/|k|²
        u = np.fft.irfft2(1j * ky * psih, s=(n, n))                 # u = ψ_y
        v = np.fft.irfft2(-1j * kx * psih, s=(n, n))                # v = −ψ_x
        wx = np.fft.irfft2(1j * kx * wh, s=(n, n))
        wy = np.fft.irfft2(1j * ky * wh, s=(n, n))
        return -np.fft.rfft2(u * wx + v * wy) * dealias + fh         # −u·∇ω + f

    wh = np.fft.rfft2(w0)
    out = [w0]
    lhs = 1 + 0.5 * h * nu * k2
    rhs_lin = 1 - 0.5 * h * nu * k2
    for _ in range(n_save):
        for _ in range(per):
            n1 = rhs(wh)
            w_star = (rhs_lin * wh + h * n1) / lhs                     # predictor
            n2 = rhs(w_star)
            wh = (rhs_lin * wh + 0.5 * h * (n1 + n2)) / lhs          # Heun corrector, CN diffusion
        out.append(np.fft.irfft2(wh, s=(n, n)))
    res = np.stack(out, axis=1)
    if not np.isfinite(res).all():
        raise RuntimeError(f"navier_stokes_2d(): blow-up; reduce dt={dt}")
    return res


def velocity_from_vorticity(w: np.ndarray) -> np.ndarray:
    """Velocity (u, v) = (ψ_y, −ψ_x) with −Δψ = ω on the 2π-periodic square.

    Args:
        w: (..., n, n) vorticity.

    Returns:
        (..., 2, n, n) velocity, divergence-free to round-off.
    """
    n = w.shape[-1]
    kx = np.fft.fftfreq(n, 1.0 / n)[:, None]
    ky = np.fft.rfftfreq(n, 1.0 / n)[None, :]
    k2 = kx ** 2 + ky ** 2
    psih = np.fft.rfft2(w) * np.where(k2 > 0, 1.0 / np.where(k2 > 0, k2, 1), 0.0)
    psih = psih * (np.abs(kx) < n // 2) * (ky < n // 2)             # drop Nyquist modes (derivative undefined)
    u = np.fft.irfft2(1j * ky * psih, s=(n, n))
    v = np.fft.irfft2(-1j * kx * psih, s=(n, n))
    return np.stack([u, v], axis=-3)


def random_vorticity(n_samples: int, n: int, rng: np.random.Generator, alpha: float = 2.5,
                     tau: float = 3.0, scale: float = 1.0) -> np.ndarray:
    """Mean-zero Gaussian random vorticity (−Δ + τ²)^{−α/2}·white noise, unit RMS × scale, (S, n, n)."""
    kx = np.fft.fftfreq(n, 1.0 / n)[:, None]
    ky = np.fft.fftfreq(n, 1.0 / n)[None, :]
    amp = (kx ** 2 + ky ** 2 + tau ** 2) ** (-alpha / 2)
    amp[0, 0] = 0.0
    w = np.real(np.fft.ifft2(np.fft.fft2(rng.normal(size=(n_samples, n, n))) * amp))
    return scale * w / np.sqrt((w ** 2).mean(axis=(-2, -1), keepdims=True))


# --------------------------------------------------------------------------- sphere

class SphereSpectral:
    """Spherical-harmonic transforms on an (nlat, nlon) grid via ``torch-harmonics`` (RealSHT).

    Exactness (the forward transform recovers every coefficient of a field band-limited to
    degrees l < ``lmax``, to round-off): the quadrature in latitude must integrate the product of
    two associated Legendre functions, a polynomial of degree < 2·lmax − 1 in cos θ.

    * ``grid="legendre-gauss"`` (the default): nlat Gauss–Legendre nodes integrate degree
      ≤ 2·nlat − 1 exactly, so ``lmax = nlat`` (degrees 0..nlat−1) is exact.
    * ``grid="equiangular"`` (poles included, Clenshaw–Curtis weights): exact only up to degree
      nlat − 1, so ``lmax`` is truncated to ⌈nlat/2⌉ (degrees 0..⌈nlat/2⌉−1). Keeping
      lmax = nlat there (torch-harmonics' own default) aliases: zonal Y₂₄,₀ on (33, 64) came back
      with norm 0.98 and Y₃₂,₀ with 1.65, and Allen–Cahn blew up.

    ``mmax`` is min(lmax, nlon//2 + 1). The Laplace–Beltrami operator acts as −l(l+1) on degree l.

    Args:
        nlat, nlon: grid size; nlat ≥ 4, nlon ≥ 2(nlat − 1).
        grid: ``"legendre-gauss"`` or ``"equiangular"``.

    Attributes:
        lmax: number of degrees kept (degrees 0..lmax−1), exact as above.

    Raises:
        ValueError: nlat < 4, nlon < 2(nlat − 1), or an unknown grid.
    """

    def __init__(self, nlat: int, nlon: int, grid: str = "legendre-gauss"):
        import torch_harmonics as th

        if nlat < 4 or nlon < 2 * (nlat - 1):
            raise ValueError(f"SphereSpectral(nlat={nlat}, nlon={nlon}): need nlat >= 4 and nlon >= 2(nlat-1)")
        if grid not in ("legendre-gauss", "equiangular"):
            raise ValueError(f"SphereSpectral(grid={grid!r}); allowed: 'legendre-gauss' (exact to lmax = nlat), "
                             "'equiangular' (exact to lmax = ceil(nlat/2))")
        self.nlat, self.nlon, self.grid = nlat, nlon, grid
        lmax = nlat if grid == "legendre-gauss" else (nlat + 1) // 2      # exact band (see docstring)
        mmax = min(lmax, nlon // 2 + 1)
        self.sht = th.RealSHT(nlat, nlon, lmax=lmax, mmax=mmax, grid=grid).double()
        self.isht = th.InverseRealSHT(nlat, nlon, lmax=lmax, mmax=mmax, grid=grid).double()
        self.lmax = self.sht.lmax
        self.l = torch.arange(self.lmax, dtype=torch.float64)[:, None]   # (lmax, 1), broadcast over m
        self.eig = self.l * (self.l + 1)                                  # −Δ Y_l^m = l(l+1) Y_l^m

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        """Grid (…, nlat, nlon) → coefficients (…, lmax, mmax), complex."""
        return self.sht(u.to(torch.float64))

    def inverse(self, c: torch.Tensor) -> torch.Tensor:
        """Coefficients → grid."""
        return self.isht(c)


def sphere_heat(u0: torch.Tensor, t: float, spectral: SphereSpectral, kappa: float = 1.0) -> torch.Tensor:
    """Exact heat flow u_t = κ Δu on S² of a grid field: multiply degree l by e^{−κ l(l+1) t}."""
    if not t >= 0 or not kappa > 0:
        raise ValueError(f"sphere_heat(t={t}, kappa={kappa}): need t >= 0, kappa > 0")
    _finite(u0, "u0")
    c = spectral.forward(u0)
    return spectral.inverse(c * torch.exp(-kappa * spectral.eig * t))


def allen_cahn_sphere(u0: torch.Tensor, eps: float, t_final: float, spectral: SphereSpectral, dt: float = 0.01,
                      stabiliser: float = 2.0, return_energy: bool = False):
    """Allen–Cahn u_t = ε² Δu + u − u³ on the unit sphere, stabilised semi-implicit in SH space.

    (1 + S·dt + ε² dt l(l+1)) û^{n+1} = (1 + S·dt) û^n + dt·(u^n − (u^n)³)^ with S ≥ 2 keeps the
    Ginzburg–Landau energy E(u) = ∫ ε²/2 |∇u|² + (u² − 1)²/4 non-increasing for |u| ≤ 1.

    Args:
        u0: (B, nlat, nlon) initial field.
        eps: interface width ε > 0 (interfaces sharpen to width ~ε).
        t_final: final time.
        spectral: :class:`SphereSpectral` for the grid.
        dt: time step.
        stabiliser: S.
        return_energy: also return the energy after every step (B, steps+1).

    Returns:
        u(T) (B, nlat, nlon) [and energies].
    """
    if not (eps > 0 and t_final > 0 and dt > 0):
        raise ValueError(f"allen_cahn_sphere(eps={eps}, t_final={t_final}, dt={dt}): need all > 0")
    _finite(u0, "u0")
    steps = max(1, math.ceil(t_final / dt))
    h = t_final / steps
    u = u0.to(torch.float64)
    denom = 1 + stabiliser * h + eps ** 2 * h * spectral.eig
    energies = [ginzburg_landau_energy(u, eps, spectral)] if return_energy else None
    for _ in range(steps):
        c = spectral.forward(u)
        nl = spectral.forward(u - u ** 3)
        u = spectral.inverse(((1 + stabiliser * h) * c + h * nl) / denom)
        if return_energy:
            energies.append(ginzburg_landau_energy(u, eps, spectral))
    if return_energy:
        return u, torch.stack(energies, dim=-1)
    return u


def ginzburg_landau_energy(u: torch.Tensor, eps: float, spectral: SphereSpectral) -> torch.Tensor:
    """E(u) = ∫_{S²} ε²/2 |∇u|² + (u²−1)²/4 dA, per batch element.

    With orthonormal SH, ∫|∇u|² = Σ l(l+1)|û_lm|² (m > 0 counted twice for a real field) and the
    potential is integrated with the SHT (its l = 0 coefficient times √(4π)).
    """
    c = spectral.forward(u)
    w = torch.ones(c.shape[-1], dtype=torch.float64)
    w[1:] = 2.0
    grad2 = (spectral.eig * c.abs() ** 2 * w).sum(dim=(-2, -1))
    pot = spectral.forward((u ** 2 - 1) ** 2 / 4)[..., 0, 0].real * math.sqrt(4 * math.pi)
    return eps ** 2 / 2 * grad2 + pot


def random_sphere_field(n_samples: int, spectral: SphereSpectral, rng: np.random.Generator, lmax: int = 6,
                        scale: float = 1.0) -> torch.Tensor:
    """Random band-limited field (degrees 1..lmax, equal variance per degree), unit RMS × scale."""
    c = torch.zeros(n_samples, spectral.sht.lmax, spectral.sht.mmax, dtype=torch.complex128)
    for l in range(1, lmax + 1):
        re = torch.as_tensor(rng.normal(size=(n_samples, l + 1)))
        im = torch.as_tensor(rng.normal(size=(n_samples, l + 1)))
        im[:, 0] = 0.0
        c[:, l, :l + 1] = torch.complex(re, im) / math.sqrt(2 * l + 1)
    u = spectral.inverse(c)
    return scale * u / u.pow(2).mean(dim=(-2, -1), keepdim=True).sqrt()
