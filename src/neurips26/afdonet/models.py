"""AFDONet models: the released architecture (``arch="reference"``) and the abstract's design
(``arch="afd"``, inferred), plus the Fourier-decoder ablation and the FNO / no-change baselines.

Tensor layout: channels first, ``(batch, channels, *grid)``, float32.

* :class:`ReferenceAFDONet` — what the authors' released code does (read for understanding, not
  copied): an MLP-encoder VAE (flatten → 256 → 2·10), a dense lift of the 10-d latent to a
  32×64×64 feature map, two blocks ``GELU(BatchNorm(x + S(x) + C(x)))`` with a spectral layer S
  that keeps the lowest 12×12 modes of the *first* index only, and a 1×1 projection. Loss
  ``MSE + 1e-8·KL + 1e-8·holomorphic``, where the released "holomorphic" term is a constant (the
  derivative of a tensor with respect to itself) and so has no gradient. Quirks are options
  defaulting to the released behaviour. Fixed grid: not discretisation-invariant.
* :class:`AFDOperator` — the abstract's description made concrete (our inference): a neural
  operator encoder (FNO trunk from ``neuraloperator`` + resolution-independent spectral pooling)
  → a variational latent → a parameter-free synthesis decoder:

  - circle (1-D periodic): poles a_k = (1−δ)·tanh(|w_k|)·w_k/|w_k| (strictly inside the disc)
    and complex coefficients, û(θ) = c₀ + Re Σ_k c_k B_k(e^{iθ}) (Takenaka–Malmquist);
  - sphere: normalised heat-kernel atoms at learned centres a_k ∈ S² and widths τ_k,
    û(x) = c₀ + Σ_k c_k K_{τ_k}(x, a_k)/√K_{τ_k}(a_k, a_k) (the RKHS analogue of the Szegő
    kernel, as in pre-orthogonal AFD on manifolds).

  ``decoder="fourier"`` swaps in the ablation with the *same latent size*: the first Fourier
  modes (circle) or spherical harmonics up to degree L (sphere).
"""

from __future__ import annotations

import math
import numbers

import torch
from torch import nn
from torch.nn import functional as F

from .hardy import takenaka_malmquist
from .manifold import legendre_series, sphere_points


def _check_field(x: torch.Tensor, ndim: int, name: str = "input", model: nn.Module | None = None) -> None:
    if not torch.is_tensor(x) or x.ndim != ndim:
        raise ValueError(f"{name} must be a tensor with {ndim} dims (batch, channels, grid...), got "
                         f"{getattr(x, 'shape', type(x))}")
    if x.shape[0] == 0:
        raise ValueError(f"{name} has an empty batch (shape {tuple(x.shape)}); need >= 1 sample")
    want = next((p.dtype for p in model.parameters() if not p.is_complex()), None) if model is not None else None
    if not x.is_floating_point() or (want is not None and x.dtype != want):
        raise ValueError(f"{name} has dtype {x.dtype}; the model's weights are {want or 'floating point'}: "
                         f"convert with x.to({want or torch.float32}) (or the model with model.to(dtype))")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} contains NaN or inf values")


def check_periodic(x: torch.Tensor, dim: int = -1, factor: float = 3.0) -> None:
    """Refuse data that are not periodic along ``dim`` (a periodic model would wrap them wrongly).

    Heuristic, per row (one sample/channel/latitude): the wrap-around jump |x[..., 0] − x[..., N−1]|
    exceeding ``factor`` × the largest interior increment marks a suspect row. A single periodic
    sample with a shock exactly at the wrap looks the same (a Burgers sawtooth *is* a ramp with a
    jump), so the input is refused only when more than half of its rows are suspect — non-periodic
    data (a ramp, a cut-off signal) break at the wrap in every row, periodic shocks sit anywhere.
    Also refused: every row that is not flat at the start repeating its first value at the end
    (wrap ≤ 1e-4 × the first increment: a grid that includes both 0 and 2π; drop the last point).

    Raises:
        ValueError: naming the count of rows and one ratio. Source: inferred (a practical guard).
    """
    xt = x.movedim(dim, -1).flatten(0, -2) if x.ndim > 1 else x[None]
    scale = xt.abs().amax(dim=1).clamp_min(1e-12)
    inner = (xt[:, 1:] - xt[:, :-1]).abs().amax(dim=1)
    wrap = (xt[:, 0] - xt[:, -1]).abs()
    bad = wrap > factor * inner + 1e-6 * scale
    if 2 * int(bad.sum()) > xt.shape[0]:
        i = int(bad.nonzero()[0])
        raise ValueError(f"input looks non-periodic along the periodic axis: in {int(bad.sum())} of {xt.shape[0]} "
                         f"rows the wrap-around jump exceeds {factor} × the largest interior increment (row {i}: "
                         f"{float(wrap[i]):.3g} vs {float(inner[i]):.3g}); use a periodic extension or pass "
                         "check_periodic=False to the model")
    first = (xt[:, 1] - xt[:, 0]).abs() if xt.shape[-1] > 2 else torch.zeros_like(wrap)
    moving = first > 1e-3 * scale                            # rows that are not flat at the start
    if bool(moving.any()) and bool((wrap[moving] <= 1e-4 * first[moving]).all()):
        raise ValueError("every row ends with its first value (x[..., N−1] = x[..., 0]): the grid seems to include "
                         "both endpoints 0 and 2π of the period; drop the last point (periodic grids are "
                         "θ_m = 2πm/N, m = 0..N−1)")


def count_parameters(model: nn.Module) -> int:
    """Number of trainable scalar parameters (a complex weight counts as 2)."""
    return sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters() if p.requires_grad)


def kl_standard_normal(mu: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
    """KL(N(μ, σ²) ‖ N(0, I)) averaged over all entries: −½ mean(1 + log σ² − μ² − σ²)."""
    return -0.5 * torch.mean(1 + logvar - mu ** 2 - logvar.exp())


def relative_l2(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-sample relative L² error ‖pred − target‖/‖target‖ over all non-batch axes, shape (B,)."""
    d = (pred - target).flatten(1).norm(dim=1)
    return d / target.flatten(1).norm(dim=1).clamp_min(1e-12)


# =========================================================================== reference (released code)

class HalfSpectrumConv2d(nn.Module):
    """Spectral layer of the released code: rfft2 (ortho), multiply the lowest ``modes × modes``
    block of the *first* frequency index only (non-negative k₁), irfft2.

    ``half_spectrum=False`` also keeps the negative-k₁ corner (the standard FNO layer).
    Weights are complex, initialised uniform[0, 1)/(C_in·C_out) as in the released code.
    """

    def __init__(self, c_in: int, c_out: int, modes: int, half_spectrum: bool = True):
        super().__init__()
        self.modes, self.half = modes, half_spectrum
        scale = 1.0 / (c_in * c_out)
        self.w1 = nn.Parameter(scale * torch.rand(c_in, c_out, modes, modes, dtype=torch.cfloat))
        self.w2 = None if half_spectrum else nn.Parameter(scale * torch.rand(c_in, c_out, modes, modes,
                                                                             dtype=torch.cfloat))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, C_in, H, W) → (B, C_out, H, W)."""
        b, _, h, w = x.shape
        m = self.modes
        xf = torch.fft.rfft2(x, norm="ortho")
        out = torch.zeros(b, self.w1.shape[1], h, w // 2 + 1, dtype=xf.dtype, device=x.device)
        out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], self.w1)
        if self.w2 is not None:
            out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -m:, :m], self.w2)
        return torch.fft.irfft2(out, s=(h, w), norm="ortho")


class ReferenceAFDONet(nn.Module):
    """AFDONet as released (inferred from reading the authors' code; our own implementation).

    Args:
        grid: the fixed square grid size (released: 64).
        channels: field channels (released: 2, velocity components).
        latent_dim: VAE latent size (released: 10).
        hidden: encoder hidden width (released: 256).
        width: decoder channels (released: 32).
        modes: kept spectral modes per axis (released: 12).
        n_blocks: decoder blocks (released: 2).
        half_spectrum: keep only non-negative first-index modes (released quirk: True).
        holomorphic: ``"released"`` (a constant term with no gradient, as released) or
            ``"cauchy_riemann"`` (our alternative: mean of (u_x − v_y)² + (u_y + v_x)², treating
            the two channels as real and imaginary parts of a function of x + iy).
        kl_weight, holomorphic_weight: loss weights (released: 1e-8 each).

    Raises:
        ValueError: unknown ``holomorphic``; at call time, an input whose grid or channels differ
            from the model's (the dense encoder and lift fix the grid: not discretisation-invariant).

    Source: the authors' released code (read), re-implemented; quirks documented above.
    """

    def __init__(self, grid: int = 64, channels: int = 2, latent_dim: int = 10, hidden: int = 256, width: int = 32,
                 modes: int = 12, n_blocks: int = 2, half_spectrum: bool = True, holomorphic: str = "released",
                 kl_weight: float = 1e-8, holomorphic_weight: float = 1e-8):
        super().__init__()
        if holomorphic not in ("released", "cauchy_riemann"):
            raise ValueError(f"holomorphic={holomorphic!r}; allowed: 'released', 'cauchy_riemann'")
        if modes > grid // 2:
            raise ValueError(f"modes={modes} > grid//2={grid // 2}")
        self.grid, self.channels, self.latent_dim, self.width = grid, channels, latent_dim, width
        self.holomorphic, self.kl_weight, self.holomorphic_weight = holomorphic, kl_weight, holomorphic_weight
        self.encoder = nn.Sequential(nn.Linear(channels * grid * grid, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 2 * latent_dim))
        self.lift = nn.Linear(latent_dim, width * grid * grid)
        self.spectral = nn.ModuleList(HalfSpectrumConv2d(width, width, modes, half_spectrum) for _ in range(n_blocks))
        self.pointwise = nn.ModuleList(nn.Conv2d(width, width, 1) for _ in range(n_blocks))
        self.norms = nn.ModuleList(nn.BatchNorm2d(width) for _ in range(n_blocks))
        self.project = nn.Conv2d(width, channels, 1)

    def _check(self, x: torch.Tensor) -> None:
        _check_field(x, 4, model=self)
        if tuple(x.shape[1:]) != (self.channels, self.grid, self.grid):
            raise ValueError(f"ReferenceAFDONet is fixed to (channels, H, W) = ({self.channels}, {self.grid}, "
                             f"{self.grid}) by its dense encoder and lift; got {tuple(x.shape[1:])}. The released "
                             "architecture is not discretisation-invariant: resample the data or use arch='afd'")

    def forward(self, x: torch.Tensor, sample: bool | None = None):
        """x (B, C, G, G) → (û (B, C, G, G), μ (B, d), log σ² (B, d)); samples z in training mode."""
        self._check(x)
        mu, logvar = self.encoder(x.flatten(1)).chunk(2, dim=1)
        sample = self.training if sample is None else sample
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp() if sample else mu   # z = μ + σ ⊙ ε
        h = self.lift(z).view(-1, self.width, self.grid, self.grid)
        for s, c, bn in zip(self.spectral, self.pointwise, self.norms):
            h = F.gelu(bn(h + s(h) + c(h)))                                    # y = GELU(BN(x + S(x) + C(x)))
        return self.project(h), mu, logvar

    def loss(self, pred: torch.Tensor, target: torch.Tensor, mu: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
        """MSE + kl_weight·KL + holomorphic_weight·holomorphic term (see class docstring)."""
        mse = F.mse_loss(pred, target)
        if self.holomorphic == "released":
            # released: ‖∂û/∂û‖² with autograd of a tensor w.r.t. itself = numel(û); a constant
            holo = (mse + float(pred.numel()) / self.grid).detach()
        else:
            k = torch.fft.fftfreq(self.grid, 1.0 / self.grid, device=pred.device)
            ph = torch.fft.fft2(pred)
            dx = torch.fft.ifft2(1j * k[:, None] * ph).real
            dy = torch.fft.ifft2(1j * k[None, :] * ph).real
            holo = ((dx[:, 0] - dy[:, 1]) ** 2 + (dy[:, 0] + dx[:, 1]) ** 2).mean()
        return mse + self.kl_weight * kl_standard_normal(mu, logvar) + self.holomorphic_weight * holo


# =========================================================================== AFD mode (inferred)

def _fno(dim: int, c_in: int, c_out: int, width: int, modes: int, n_layers: int) -> nn.Module:
    """A ``neuraloperator`` FNO (grid positional embedding, fft norm "forward": resolution-independent)."""
    from neuralop.models import FNO

    return FNO(n_modes=(modes,) * dim, in_channels=c_in, out_channels=c_out, hidden_channels=width,
               n_layers=n_layers)


class CircleEncoder(nn.Module):
    """FNO trunk on a periodic 1-D grid, then the first ``pool_modes`` Fourier coefficients of
    its features (normalised by N: independent of the grid), then an MLP to (μ, log σ²)."""

    def __init__(self, latent: int, width: int = 24, modes: int = 16, n_layers: int = 3, pool_modes: int = 16,
                 hidden: int = 128):
        super().__init__()
        self.pool_modes = pool_modes
        self.trunk = _fno(1, 1, width, width, modes, n_layers)
        self.head = nn.Sequential(nn.Linear(2 * width * pool_modes, hidden), nn.GELU(), nn.Linear(hidden, 2 * latent))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, 1, N) → μ, log σ² (B, latent)."""
        if x.shape[-1] < 2 * self.pool_modes:
            raise ValueError(f"grid N={x.shape[-1]} too coarse for pool_modes={self.pool_modes} (need N >= "
                             f"{2 * self.pool_modes})")
        h = torch.fft.rfft(self.trunk(x), dim=-1, norm="forward")[..., :self.pool_modes]
        mu, logvar = self.head(torch.view_as_real(h).flatten(1)).chunk(2, dim=1)
        return mu, logvar.clamp(-12, 6)


def poles_from_latent(w: torch.Tensor, margin: float) -> torch.Tensor:
    """Map unconstrained complex w to poles a = (1−δ)·tanh(|w|)·w/|w| with |a| < 1 − δ."""
    r = w.abs()
    return (1 - margin) * torch.tanh(r) * w / r.clamp_min(1e-12)


class TMDecoder(nn.Module):
    """û(θ) = c₀ + Re Σ_k c_k B_k(e^{iθ}) (Takenaka–Malmquist synthesis) from a latent of size 4n + 1.

    The first ``n_origin`` poles are fixed at a = 0 (the customary AFD start; B_k = z^{k−1}), the
    remaining n_free = n − n_origin/2 poles are adaptive (a budget of 4n reals: 2 per fixed term,
    4 per free term). latent = [c₀, c_origin (2·n_origin), ρ (n_free), φ (n_free), c_free (2·n_free)];
    free pole a_k = (1−δ)·σ(ρ_k + ρ⁰_k)·e^{i(φ_k + φ⁰_k)} stays strictly inside the disc, with
    learnable offsets initialised to ρ⁰ = 1.5 (|a| ≈ 0.8) and φ⁰_k = 2πk/n_free (2·n_free
    parameters — the only ones of the decoder).
    """

    def __init__(self, n_poles: int, margin: float = 0.02, n_origin: int = 0):
        super().__init__()
        if not 0 < margin < 1:
            raise ValueError(f"margin={margin}; need 0 < margin < 1 (poles stay in |a| < 1 − margin)")
        if n_origin < 0 or n_origin % 2 or n_origin // 2 >= n_poles:
            raise ValueError(f"n_origin={n_origin}; need an even number with n_origin/2 < n_poles={n_poles}")
        self.n, self.margin, self.n_origin = n_poles, margin, n_origin
        self.n_free = n_poles - n_origin // 2
        self.rho0 = nn.Parameter(torch.full((self.n_free,), 1.5))
        self.phi0 = nn.Parameter(2 * math.pi * torch.arange(self.n_free, dtype=torch.float32) / self.n_free)

    @property
    def latent_size(self) -> int:
        """4n + 1."""
        return 4 * self.n + 1

    def split(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """latent (B, 4n+1) → (c₀ (B,), all poles (B, n_origin + n_free) complex, coefficients, same shape)."""
        o, f = self.n_origin, self.n_free
        co = torch.complex(z[:, 1:o + 1], z[:, o + 1:2 * o + 1])
        q = z[:, 2 * o + 1:]
        r = (1 - self.margin) * torch.sigmoid(q[:, :f] + self.rho0)               # |a| < 1 − δ
        a = torch.polar(r, q[:, f:2 * f] + self.phi0)
        c = torch.complex(q[:, 2 * f:3 * f], q[:, 3 * f:])
        a = torch.cat([torch.zeros_like(co), a], dim=1)
        return z[:, 0], a, torch.cat([co, c], dim=1)

    def forward(self, z: torch.Tensor, n_points: int) -> torch.Tensor:
        """latent (B, 4n+1) → field (B, 1, N) on θ_m = 2πm/N."""
        c0, a, c = self.split(z)
        t = 2 * math.pi * torch.arange(n_points, dtype=torch.float32, device=z.device) / n_points
        zeta = torch.polar(torch.ones_like(t), t)
        basis = takenaka_malmquist(a, zeta, validate=False)                                # (B, n, N)
        return (c0[:, None] + (c[:, :, None] * basis).real.sum(1))[:, None]  # c₀ + Re Σ c_k B_k


class FourierDecoder1d(nn.Module):
    """Ablation: û(θ) = c₀ + Re Σ_{k=1}^{2n} c_k e^{ikθ} from the same latent size 4n + 1."""

    def __init__(self, n_poles: int):
        super().__init__()
        self.n = n_poles

    @property
    def latent_size(self) -> int:
        """4n + 1."""
        return 4 * self.n + 1

    def forward(self, z: torch.Tensor, n_points: int) -> torch.Tensor:
        """latent (B, 4n+1) → field (B, 1, N)."""
        m = 2 * self.n
        if n_points < 2 * m + 1:
            raise ValueError(f"grid N={n_points} cannot carry {m} Fourier modes (need N >= {2 * m + 1})")
        spec = torch.zeros(z.shape[0], n_points // 2 + 1, dtype=torch.cfloat, device=z.device)
        spec[:, 0] = z[:, 0]
        spec[:, 1:m + 1] = torch.complex(z[:, 1:m + 1], z[:, m + 1:]) / 2     # Re(c e^{ikθ}) = (c e^{ikθ} + c̄ e^{−ikθ})/2
        return torch.fft.irfft(spec, n=n_points, norm="forward")[:, None]


class SphereEncoder(nn.Module):
    """FNO trunk on the lat-lon grid, then spherical-harmonic coefficients (degree < ``pool_degree``,
    orthonormal, grid-independent) of its features via ``torch-harmonics``, then an MLP."""

    def __init__(self, latent: int, width: int = 16, modes: int = 12, n_layers: int = 3, pool_degree: int = 8,
                 hidden: int = 128, grid: str = "legendre-gauss"):
        super().__init__()
        self.pool_degree, self.grid = pool_degree, grid
        self.trunk = _fno(2, 1, width, width, modes, n_layers)
        n_coef = pool_degree * (pool_degree + 1) // 2
        self.head = nn.Sequential(nn.Linear(2 * width * n_coef, hidden), nn.GELU(), nn.Linear(hidden, 2 * latent))
        self._sht: dict = {}
        idx = torch.tensor([(l, m) for l in range(pool_degree) for m in range(l + 1)])
        self.register_buffer("_lm", idx, persistent=False)

    def _transform(self, nlat: int, nlon: int):
        import torch_harmonics as th

        key = (nlat, nlon)
        if key not in self._sht:
            self._sht[key] = th.RealSHT(nlat, nlon, lmax=self.pool_degree, mmax=self.pool_degree, grid=self.grid)
        return self._sht[key]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, 1, nlat, nlon) → μ, log σ² (B, latent)."""
        h = self._transform(x.shape[-2], x.shape[-1]).to(x.device)(self.trunk(x))           # (B, C, L, M)
        h = h[..., self._lm[:, 0], self._lm[:, 1]]                              # triangular l ≥ m
        mu, logvar = self.head(torch.view_as_real(h).flatten(1)).chunk(2, dim=1)
        return mu, logvar.clamp(-12, 6)


class HeatKernelDecoder(nn.Module):
    """û(x) = s(x) + Σ_k c_k K_{τ_k}(x, a_k)/√K_{τ_k}(a_k, a_k) on S² (heat-kernel atoms).

    s is a spherical-harmonic part of degree ≤ ``smooth_degree`` ((L_s+1)² latent coordinates;
    −1: none, then a constant c₀ is used) — the manifold analogue of fixing the first AFD poles at
    the origin. Each atom takes 5 latent coordinates (3 centre coords → normalised to S², width,
    coefficient); τ_k = τ_min·(1 + 10·softplus(·)) with τ_min = 3/(lmax(lmax+1)) so the kernel
    truncation at ``lmax`` resolves every atom (tail ≤ e^{−3}).
    """

    def __init__(self, n_atoms: int, lmax: int = 32, grid: str = "legendre-gauss", smooth_degree: int = -1):
        super().__init__()
        self.n, self.lmax, self.grid = n_atoms, lmax, grid
        self.tau_min = 3.0 / (lmax * (lmax + 1))
        self._pts: dict = {}
        self.smooth = SHDecoder(smooth_degree, grid) if smooth_degree >= 0 else None

    @property
    def latent_size(self) -> int:
        """5n + (L_s+1)² (or 5n + 1 without a smooth part)."""
        return 5 * self.n + (self.smooth.latent_size if self.smooth is not None else 1)

    def split(self, z: torch.Tensor):
        """latent → (smooth latent (B, ·), centres (B, n, 3), τ (B, n), coefficients (B, n))."""
        k = z.shape[1] - 5 * self.n
        p = z[:, k:].reshape(z.shape[0], self.n, 5)
        centres = F.normalize(p[..., :3] + 1e-6, dim=-1)
        tau = self.tau_min * (1 + 10 * F.softplus(p[..., 3]))
        return z[:, :k], centres, tau, p[..., 4]

    def forward(self, z: torch.Tensor, nlat: int, nlon: int) -> torch.Tensor:
        """latent → field (B, 1, nlat, nlon)."""
        key = (nlat, nlon)
        if key not in self._pts:
            self._pts[key] = sphere_points(nlat, nlon, self.grid).reshape(-1, 3).float()
        x = self._pts[key].to(z.device)
        zs, centres, tau, c = self.split(z)
        l = torch.arange(self.lmax + 1, dtype=z.dtype, device=z.device)
        w = (2 * l + 1) / (4 * math.pi) * torch.exp(-tau[..., None] * l * (l + 1))   # (B, n, L+1)
        t = (centres @ x.T).clamp(-1, 1)                                               # (B, n, P)
        k = legendre_series(t, w[:, :, None, :]) / w.sum(-1, keepdim=True).sqrt()      # K/√K(a,a)
        atoms = (c[:, :, None] * k).sum(1).view(z.shape[0], 1, nlat, nlon)
        base = self.smooth(zs, nlat, nlon) if self.smooth is not None else zs[:, :, None, None]
        return base + atoms


class SHDecoder(nn.Module):
    """Ablation: spherical-harmonic synthesis up to degree L with (L+1)² real latent coordinates."""

    def __init__(self, degree: int, grid: str = "legendre-gauss"):
        super().__init__()
        self.degree, self.grid = degree, grid
        self._isht: dict = {}
        lm = [(l, m) for l in range(degree + 1) for m in range(l + 1)]
        self.register_buffer("_lm", torch.tensor(lm), persistent=False)

    @property
    def latent_size(self) -> int:
        """(L+1)²."""
        return (self.degree + 1) ** 2

    def forward(self, z: torch.Tensor, nlat: int, nlon: int) -> torch.Tensor:
        """latent (B, (L+1)²) → field (B, 1, nlat, nlon)."""
        import torch_harmonics as th

        key = (nlat, nlon)
        if key not in self._isht:
            self._isht[key] = th.InverseRealSHT(nlat, nlon, lmax=self.degree + 1, mmax=self.degree + 1, grid=self.grid)
        n_lm = self._lm.shape[0]
        re = z[:, :n_lm]
        im = torch.zeros_like(re)
        im_mask = self._lm[:, 1] > 0
        im[:, im_mask] = z[:, n_lm:]
        coef = torch.zeros(z.shape[0], self.degree + 1, self.degree + 1, dtype=torch.cfloat, device=z.device)
        coef[:, self._lm[:, 0], self._lm[:, 1]] = torch.complex(re, im)
        return self._isht[key].to(z.device)(coef)[:, None]


class AFDOperator(nn.Module):
    """AFDONet as the abstract describes it (inferred design; see the module docstring).

    Args:
        domain: ``"circle"`` (1-D periodic grids, N points on [0, 2π)) or ``"sphere"``
            (lat-lon grids of ``grid`` type).
        decoder: ``"afd"`` (TM / heat-kernel atoms) or ``"fourier"`` (ablation: Fourier / SH).
        n_poles: poles (circle) or atoms (sphere); latent size 4n+1 (circle) or 5n+1 (sphere,
            fourier ablation uses the largest (L+1)² ≤ 5n+1).
        width, modes, n_layers: FNO trunk of the encoder.
        beta: KL weight; loss = relative L² + β·KL.
        margin: δ, poles stay in |a| < 1 − δ.
        check_periodic: refuse inputs that look non-periodic along the periodic axis
            (:func:`check_periodic`).

    Raises:
        ValueError: unknown domain/decoder, n_poles not an integer ≥ 1, β negative or not finite,
            margin outside (0, 1); at call time an input that is not a float tensor of the model's
            dtype with the right dims and one channel, an empty batch, NaN/inf, a grid too coarse
            for the encoder, or data that look non-periodic (:func:`check_periodic`).

    Forward returns (û, μ, log σ²). Discretisation-invariant: any N (circle) or any
    (nlat, nlon) (sphere) at call time.

    Source: abstract (encoder–decoder VAE guided by AFD, manifolds, sharp gradients); every
    concrete choice here is inferred.
    """

    def __init__(self, domain: str = "circle", decoder: str = "afd", n_poles: int = 8, width: int = 24,
                 modes: int = 16, n_layers: int = 3, beta: float = 1e-3, margin: float = 0.02, hidden: int = 128,
                 pool: int = 16, kernel_lmax: int = 32, grid: str = "legendre-gauss", n_origin: int = 0,
                 smooth_degree: int = -1, check_periodic: bool = True):
        super().__init__()
        self.check_periodic = check_periodic
        if domain not in ("circle", "sphere"):
            raise ValueError(f"domain={domain!r}; allowed: 'circle', 'sphere'")
        if decoder not in ("afd", "fourier"):
            raise ValueError(f"decoder={decoder!r}; allowed: 'afd', 'fourier'")
        if isinstance(n_poles, bool) or int(n_poles) != n_poles or n_poles < 1:
            raise ValueError(f"n_poles={n_poles!r}; need an integer >= 1")
        if not (isinstance(beta, (int, float)) and math.isfinite(beta) and beta >= 0):
            raise ValueError(f"beta={beta!r}; the KL weight must be finite and >= 0")
        if not 0 < margin < 1:
            raise ValueError(f"margin={margin}; need 0 < margin < 1 (poles stay in |a| < 1 − margin)")
        n_poles = int(n_poles)
        self.domain, self.decoder_kind, self.beta = domain, decoder, beta
        if domain == "circle":
            self.decoder = TMDecoder(n_poles, margin, n_origin) if decoder == "afd" else FourierDecoder1d(n_poles)
            self.encoder = CircleEncoder(self.decoder.latent_size, width, modes, n_layers, pool, hidden)
        else:
            if decoder == "afd":
                self.decoder = HeatKernelDecoder(n_poles, kernel_lmax, grid, smooth_degree)
            else:
                size = 5 * n_poles + ((smooth_degree + 1) ** 2 if smooth_degree >= 0 else 1)
                self.decoder = SHDecoder(int(math.isqrt(size)) - 1, grid)
            self.encoder = SphereEncoder(self.decoder.latent_size, width, modes, n_layers, pool, hidden, grid)

    def forward(self, x: torch.Tensor, sample: bool | None = None):
        """x (B, 1, N) or (B, 1, nlat, nlon) → (û same shape, μ, log σ²)."""
        self._validate(x)
        mu, logvar = self.encoder(x)
        sample = self.training if sample is None else sample
        z = mu + torch.randn_like(mu) * (0.5 * logvar).exp() if sample else mu
        return self.decoder(z, *x.shape[2:]), mu, logvar

    def _validate(self, x: torch.Tensor) -> None:
        """The input checks of :meth:`forward` (also used by :meth:`explain`)."""
        _check_field(x, 3 if self.domain == "circle" else 4, model=self)
        if self.domain == "circle" and x.shape[-1] < 2 * self.encoder.pool_modes:   # before check_periodic, which
            raise ValueError(f"circle grid N={x.shape[-1]} too coarse for the encoder's pool_modes="  # indexes x[..., 1]
                             f"{self.encoder.pool_modes} (need N >= {2 * self.encoder.pool_modes})")
        if self.domain == "sphere" and x.shape[-2] < self.encoder.pool_degree:
            raise ValueError(f"sphere grid nlat={x.shape[-2]} too coarse for the encoder's pool_degree="
                             f"{self.encoder.pool_degree} (need nlat >= {self.encoder.pool_degree}, nlon >= "
                             f"{2 * self.encoder.pool_degree})")
        if self.domain == "sphere" and x.shape[-1] < 2 * self.encoder.pool_degree:
            raise ValueError(f"sphere grid nlon={x.shape[-1]} too coarse for pool_degree={self.encoder.pool_degree} "
                             f"(need nlon >= {2 * self.encoder.pool_degree})")
        if x.shape[1] != 1:
            raise ValueError(f"AFDOperator takes one input channel, got {x.shape[1]}")
        if self.check_periodic:
            check_periodic(x, dim=-1)                               # circle, or longitude on the sphere

    def loss(self, pred, target, mu, logvar) -> torch.Tensor:
        """mean relative L² + β·KL."""
        return relative_l2(pred, target).mean() + self.beta * kl_standard_normal(mu, logvar)

    @torch.no_grad()
    def explain(self, x: torch.Tensor) -> dict:
        """Posterior-mean decoder parameters: where the sharp features sit.

        Circle: ``poles`` (B, n) complex and ``angles`` arg a_k (radians, the boundary point the
        pole is nearest to), ``coefficients``, ``term_energy`` |c_k|² (Hardy norm of c_k B_k).
        Sphere: ``centres`` (B, n, 3), ``tau`` (B, n), ``coefficients``. Only for decoder="afd".
        """
        if self.decoder_kind != "afd":
            raise ValueError("explain() needs decoder='afd' (the Fourier ablation has no poles)")
        self._validate(x)                                           # same checks as forward (was unchecked)
        mu, _ = self.encoder(x)
        if self.domain == "circle":
            c0, a, c = self.decoder.split(mu)
            return {"c0": c0, "poles": a, "angles": a.angle(), "coefficients": c, "term_energy": c.abs() ** 2}
        smooth, centres, tau, c = self.decoder.split(mu)
        return {"smooth": smooth, "centres": centres, "tau": tau, "coefficients": c}


def AFDONet(arch: str = "afd", **kwargs) -> nn.Module:
    """Build an AFDONet: ``arch="reference"`` → :class:`ReferenceAFDONet` (released code),
    ``arch="afd"`` → :class:`AFDOperator` (the abstract's design, inferred).

    Raises:
        ValueError: unknown ``arch``.
    """
    if arch == "reference":
        return ReferenceAFDONet(**kwargs)
    if arch == "afd":
        return AFDOperator(**kwargs)
    raise ValueError(f"arch={arch!r}; allowed: 'reference', 'afd'")


class FNOBaseline(nn.Module):
    """``neuraloperator`` FNO returning (û, None, None) so it trains with the same loop; loss relative L²."""

    def __init__(self, dim: int, channels: int = 1, width: int = 24, modes: int = 16, n_layers: int = 4):
        super().__init__()
        self.net = _fno(dim, channels, channels, width, modes, n_layers)
        self.dim = dim

    def forward(self, x: torch.Tensor, sample: bool | None = None):
        """x (B, C, *grid) → (û, None, None)."""
        _check_field(x, 2 + self.dim, model=self)
        return self.net(x), None, None

    def loss(self, pred, target, mu=None, logvar=None) -> torch.Tensor:
        """mean relative L²."""
        return relative_l2(pred, target).mean()


def matched_fno(target_params: int, dim: int, channels: int = 1, modes: int = 16, n_layers: int = 4,
                widths: range = range(4, 129)) -> tuple[FNOBaseline, int]:
    """The FNO whose parameter count is closest to ``target_params`` over hidden widths; returns (model, width).

    Args:
        target_params: the parameter count to match (an integer ≥ 1, e.g. ``count_parameters`` of
            the model compared with).
        dim: 1 or 2 spatial dimensions. widths: candidate hidden widths (non-empty, ascending).

    Raises:
        ValueError: target_params not an integer ≥ 1 (0 used to return the smallest FNO as if it
            matched), dim not 1 or 2, or empty widths.
    """
    if isinstance(target_params, bool) or not isinstance(target_params, numbers.Integral) or target_params < 1:
        raise ValueError(f"matched_fno(target_params={target_params!r}); allowed: an integer >= 1 (the parameter "
                         "count of the model to match)")
    if dim not in (1, 2):
        raise ValueError(f"matched_fno(dim={dim!r}); allowed: 1, 2")
    if len(widths) == 0:
        raise ValueError("matched_fno(widths=...) is empty; allowed: a non-empty range of hidden widths")
    best = None
    for w in widths:
        n = count_parameters(FNOBaseline(dim, channels, w, modes, n_layers))
        if best is None or abs(n - target_params) < abs(best[1] - target_params):
            best = (w, n)
        if n > target_params:
            break
    return FNOBaseline(dim, channels, best[0], modes, n_layers), best[0]
