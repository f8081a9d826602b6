"""AFDONet (paper 3, NeurIPS 2026): adaptive Fourier decomposition (AFD) in a neural-operator VAE.

Only the abstract was readable: AFDONet is a neural operator in an encoder–decoder (VAE) frame
whose architecture is guided by adaptive Fourier decomposition, claimed superior on manifolds and
on data with sharp gradients, at competitive cost. The authors' released code was read (not
copied) and differs from the abstract, so both are here, labelled:

* :mod:`.hardy` — AFD on the disc: Szegő kernels, Takenaka–Malmquist basis, reduced remainders,
  maximal selection vectorised over a polar candidate grid (one batched FFT) then refined, energy
  identity, analytic extension of real signals.
* :mod:`.manifold` — pre-orthogonal AFD in a reproducing-kernel space with the heat kernel on S²
  (addition theorem) or on a triangle mesh (robust-laplacian + eigsh).
* :mod:`.solvers` — Burgers (ETDRK4), 2-D Navier–Stokes (vorticity), heat and Allen–Cahn on S²
  (torch-harmonics), with Cole–Hopf / Taylor–Green / heat-kernel / energy checks.
* :mod:`.models` — ``AFDONet(arch="reference")`` (released architecture and loss, quirks as options)
  and ``AFDONet(arch="afd")`` (the abstract's design, inferred), the Fourier-decoder ablation, FNO.
* :mod:`.training` — training / evaluation loops.

Example::

    import torch
    from neurips26.afdonet import boundary_points, adaptive_fourier_decomposition
    z = boundary_points(2048)
    f = 1 / (1 - 0.95 * z) + z ** 2
    res = adaptive_fourier_decomposition(f, 5)
    print(res.poles[:2], res.remainder_energy[-1])   # first pole ≈ 0.95, remainder energy ≈ 0
"""

from .hardy import (
                    AFDResult,
                    adaptive_fourier_decomposition,
                    analytic_signal,
                    boundary_points,
                    check_poles,
                    default_radii,
                    evaluate_inside,
                    evaluate_polar_grid,
                    hardy_inner,
                    maximal_selection,
                    maximal_selection_loop,
                    reduced_remainder,
                    szego_kernel,
                    takenaka_malmquist,
                    taylor_coefficients,
                    terms_to_reach,
                    truncated_fourier_error,
)
from .manifold import (
                    POAFDResult,
                    heat_kernel_from_eigenpairs,
                    icosphere,
                    legendre_series,
                    mesh_eigenpairs,
                    pre_orthogonal_afd,
                    sphere_grid,
                    sphere_heat_kernel,
                    sphere_points,
                    validate_mesh,
)
from .models import (
                    AFDONet,
                    AFDOperator,
                    FNOBaseline,
                    FourierDecoder1d,
                    HeatKernelDecoder,
                    ReferenceAFDONet,
                    SHDecoder,
                    TMDecoder,
                    check_periodic,
                    count_parameters,
                    kl_standard_normal,
                    matched_fno,
                    relative_l2,
)
from .solvers import (
                    SphereSpectral,
                    allen_cahn_sphere,
                    burgers_1d,
                    burgers_cole_hopf,
                    ginzburg_landau_energy,
                    kolmogorov_forcing,
                    navier_stokes_2d,
                    periodic_grf,
                    random_sphere_field,
                    random_vorticity,
                    sphere_heat,
                    velocity_from_vorticity,
)
from .training import FitReport, evaluate, fit, inference_seconds_per_sample

__all__ = [
    "AFDResult", "adaptive_fourier_decomposition", "analytic_signal", "boundary_points", "check_poles",
    "default_radii", "evaluate_inside", "evaluate_polar_grid", "hardy_inner", "maximal_selection",
    "maximal_selection_loop", "reduced_remainder", "szego_kernel", "takenaka_malmquist", "taylor_coefficients",
    "terms_to_reach", "truncated_fourier_error",
    "POAFDResult", "heat_kernel_from_eigenpairs", "icosphere", "legendre_series", "mesh_eigenpairs",
    "pre_orthogonal_afd", "sphere_grid", "sphere_heat_kernel", "sphere_points", "validate_mesh",
    "AFDONet", "AFDOperator", "FNOBaseline", "FourierDecoder1d", "HeatKernelDecoder", "ReferenceAFDONet",
    "SHDecoder", "TMDecoder", "check_periodic", "count_parameters", "kl_standard_normal", "matched_fno", "relative_l2",
    "SphereSpectral", "allen_cahn_sphere", "burgers_1d", "burgers_cole_hopf", "ginzburg_landau_energy",
    "kolmogorov_forcing", "navier_stokes_2d", "periodic_grf", "random_sphere_field", "random_vorticity",
    "sphere_heat", "velocity_from_vorticity",
    "FitReport", "evaluate", "fit", "inference_seconds_per_sample",
]
