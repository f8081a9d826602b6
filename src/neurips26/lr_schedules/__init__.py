r"""Optimal learning-rate schedules for a power-law random-feature model (Bordelon & Mori,
arXiv:2602.04774, NeurIPS 2026).

The method in short. Features with eigenvalues λ_k = k^{-α} and target power λ_k w*_k² = k^{-αβ-1};
the student learns the top N. Minibatch SGD with schedule (η_t, m_t) has exact per-mode
second moments (Gaussian features)

    c_{t+1,k} = [(1 − η_t λ_k)² + η_t² λ_k²/m_t] c_{t,k} + (η_t²/m_t) λ_k (L_t + σ0²),
    L_t = Σ_k λ_k c_{t,k} + R_N,

and the optimal schedule η*_T = argmin_η L_T is found with L-BFGS-B using the exact adjoint
gradient (p_T = λ, p_t = A_tᵀ p_{t+1}, ∂L_T/∂η_t = p_{t+1}·∂_η(A_t c_t + b_t)) or, in continuous
time, with Pontryagin's principle (η* = m Σ p_kλ_kc_k / ((L + σ0²) Σ p_kλ_k), clipped to the
stability bound). Easy phase: η*_T(t) ≃ T^{-ξ}(1 − t/T)^δ; hard phase: a T-independent plateau
and a decay over a vanishing fraction of T.

Quick use::

    from neurips26.lr_schedules import PowerLawTask, optimal_schedule, tune_family, loss_curve
    spectrum = PowerLawTask(alpha=1.5, beta=0.25, N=500, M=5000, sigma0_sq=0.05).spectrum()
    opt = optimal_schedule(spectrum, T=2000)            # opt.eta: (2000,) schedule, opt.loss: L_T
    wsd = tune_family(spectrum, 2000, "wsd")             # tuned warmup-stable-decay baseline
    print(opt.loss, wsd)
"""

from .baselines import FAMILIES, TunedSchedule, family_schedule, tune_family
from .batch import BatchRamp, batch_ramp, samples_to_steps
from .dynamics import (
    MomentumGrad,
    check_schedule,
    final_loss_and_grad,
    loss_curve,
    loss_curve_torch,
    momentum_final_loss_and_grad,
    momentum_loss_curve,
    stability_bound,
)
from .momentum import MomentumSchedule, optimal_momentum_schedule
from .monte_carlo import MonteCarloResult, simulate_sgd
from .optimal import (
    Exponent,
    OptimalSchedule,
    PontryaginSchedule,
    ScheduleShape,
    fit_exponent,
    interpolation_matrix,
    knot_positions,
    optimal_schedule,
    phase_label,
    pontryagin_schedule,
    schedule_shape,
)
from .task import PowerLawTask, Spectrum

__all__ = [
    "PowerLawTask", "Spectrum", "stability_bound", "check_schedule", "loss_curve", "final_loss_and_grad",
    "loss_curve_torch", "momentum_loss_curve", "momentum_final_loss_and_grad", "MomentumGrad",
    "knot_positions", "interpolation_matrix", "OptimalSchedule", "optimal_schedule", "ScheduleShape",
    "schedule_shape", "Exponent", "fit_exponent", "phase_label", "PontryaginSchedule", "pontryagin_schedule",
    "FAMILIES", "TunedSchedule", "tune_family", "family_schedule", "BatchRamp", "batch_ramp", "samples_to_steps",
    "MomentumSchedule", "optimal_momentum_schedule", "MonteCarloResult", "simulate_sgd",
]

try:  # real-data loader (scikit-learn digits)
    from .real_data import PowerLawFit, RFData, digits_random_features, estimate_power_law, sgd_loss_curve
    __all__ += ["PowerLawFit", "RFData", "digits_random_features", "estimate_power_law", "sgd_loss_curve"]
except ImportError:  # pragma: no cover
    pass
try:  # torch scheduler adapter (needs torch)
    from .torch_adapter import ScheduleLR, fitted_schedule, horizon_sweep
    __all__ += ["ScheduleLR", "fitted_schedule", "horizon_sweep"]
except ImportError:  # pragma: no cover
    pass
