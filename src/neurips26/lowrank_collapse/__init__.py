"""Low-rank gradient biases and mode collapse in continuous-time generative models (paper 10).

The paper was not found; its abstract says that bounds on the rank of the weight gradients explain
how collapse occurs, and that in variational inference and in flow matching optimisation induces
low-rank biases that favour parsimonious representations but may collapse the learned
distribution — a trade-off between feature learning, memorisation and collapse. The method below is
a reconstruction (inferred) from earlier work: Baker et al. 2024 (gradient rank of a layer is at
most the number of outer products summed), Hazelden et al. 2025 (KPFlow: low-rank parameter
operator in trained dynamical systems), Soletskyi et al. 2024 (mode collapse under reverse KL).

Model: dx/dt = v_θ(x, t), x(0) = z ~ N(0, I), sample x(1).

- VI (reverse KL): L = E_z[log q_θ(x(1)) − log p̃(x(1))], d log q/dt = −tr ∂_x v (exact trace).
- Flow matching: L = E‖v_θ(x_t, t) − (x_1 − x_0)‖², x_t = (1 − t) x_0 + t x_1.
- Rank bound: for a layer y = W h evaluated N = batch × time-step times,
  ∇_W L = Σ_n δ_n h_nᵀ ⇒ rank ≤ min(out, in, N) (≤ N·(d + 1) through an exact trace).
- Linear field v = A x, target N(0, Σ), Σ⁻¹ − I of rank k: from A_0 = 0, rank A_t ≤ k for all t.

Public API:
    MLPVectorField, LinearVectorField (vector_field);
    sample_flow, flow_log_density, divergence, divergence_hutchinson, reverse_kl_loss, flow_matching_loss,
    train, NonFiniteError, TooManyEvaluationsError (flows);
    singular_values, numerical_rank, participation_ratio, entropy_effective_rank, rank_summary,
    gradient_rank_bound, capture_layer_signals, principal_angle_cosines, top_right_singular_vectors,
    subspace_energy_fraction, gaussian_reference_participation_ratio (diagnostics);
    mode_coverage, memorisation_fraction, memorisation_report (collapse_metrics);
    RankMonitor (monitor); linear_field_kl, train_linear_vi, lowrank_precision_target (linear_vi);
    GaussianMixture, eight_gaussians, subspace_mixture, moons, digits (targets);
    zuko_flow, train_zuko_reverse_kl, zuko_sample (baselines).

Example::

    import torch
    from neurips26.lowrank_collapse import (MLPVectorField, RankMonitor, eight_gaussians, flow_matching_loss,
                                            mode_coverage, sample_flow)
    field, target = MLPVectorField(2, width=64), eight_gaussians()
    opt, monitor = torch.optim.Adam(field.parameters(), 3e-3), RankMonitor(field, every=50)
    for step in range(1000):
        opt.zero_grad(); loss = flow_matching_loss(field, target.sample(256)); loss.backward()
        monitor(step, loss); opt.step()
    x = sample_flow(field, torch.randn(2000, 2)).detach()
    print(mode_coverage(x, target.means, target.std).n_covered)   # 8 = no mode dropped
    fig = monitor.figure()                                    # effective ranks per layer over steps
"""

from .baselines import train_zuko_reverse_kl, zuko_flow, zuko_sample
from .collapse_metrics import (
                          MemorisationReport,
                          ModeCoverage,
                          memorisation_fraction,
                          memorisation_report,
                          mode_coverage,
)
from .diagnostics import (
                          SUPPORTED_LAYERS,
                          LayerSignals,
                          RankBound,
                          RankSummary,
                          capture_layer_signals,
                          entropy_effective_rank,
                          gaussian_reference_participation_ratio,
                          gradient_rank_bound,
                          numerical_rank,
                          participation_ratio,
                          principal_angle_cosines,
                          rank_summary,
                          rank_tolerance,
                          singular_values,
                          subspace_energy_fraction,
                          top_right_singular_vectors,
)
from .flows import (
                          NonFiniteError,
                          TooManyEvaluationsError,
                          divergence,
                          divergence_hutchinson,
                          flow_log_density,
                          flow_matching_loss,
                          reverse_kl_loss,
                          sample_flow,
                          standard_normal_log_prob,
                          train,
)
from .linear_vi import LinearVIRun, linear_field_kl, lowrank_precision_target, train_linear_vi
from .monitor import RankMonitor
from .targets import GaussianMixture, SubspaceData, digits, eight_gaussians, moons, subspace_mixture
from .vector_field import LinearVectorField, MLPVectorField

__all__ = [
    "MLPVectorField", "LinearVectorField",
    "sample_flow", "flow_log_density", "divergence", "divergence_hutchinson", "reverse_kl_loss", "flow_matching_loss", "train",
    "standard_normal_log_prob", "NonFiniteError", "TooManyEvaluationsError",
    "singular_values", "numerical_rank", "rank_tolerance", "participation_ratio", "entropy_effective_rank",
    "rank_summary", "RankSummary", "gradient_rank_bound", "RankBound", "capture_layer_signals", "LayerSignals",
    "principal_angle_cosines", "top_right_singular_vectors", "subspace_energy_fraction",
    "gaussian_reference_participation_ratio", "SUPPORTED_LAYERS",
    "mode_coverage", "ModeCoverage", "memorisation_fraction", "memorisation_report", "MemorisationReport",
    "RankMonitor", "linear_field_kl", "train_linear_vi", "lowrank_precision_target", "LinearVIRun",
    "GaussianMixture", "eight_gaussians", "subspace_mixture", "SubspaceData", "moons", "digits",
    "zuko_flow", "train_zuko_reverse_kl", "zuko_sample",
]
