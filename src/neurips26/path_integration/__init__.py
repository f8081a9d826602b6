"""Hierarchical RNN (HRNN) for simultaneous angular and positional path integration (paper 9,
NeurIPS 2026; title and authors not found — only the abstract was read).

The abstract: an HRNN that separately processes angular velocity and linear speed performs
angular and positional path integration, generalises to longer sequences, develops AV, HD, speed,
conjunctive and grid cells, recovers attractor dynamics and asymmetric connectivity, shows
hierarchical information flow under perturbation, and reproduces bidirectional theta sweeps when
theta-paced mutual inhibition acts between two learned AV subpopulations. Everything else is
**inferred** from the lineage it names (Sorscher et al. 2019, Banino et al. 2018, Cueva et al. 2020).

* :mod:`.trajectories` — :func:`simulate_trajectories` (lineage defaults), real rat paths shipped
  in ``ratinabox`` (:func:`load_rat_recording`, :func:`recording_to_trajectories`).
* :mod:`.cells` — :class:`HeadDirectionCells` (von Mises), :class:`PlaceCells` (DoG or Gaussian).
* :mod:`.hrnn` — :class:`HRNN` (angular → positional, switchable pathway, unit gains),
  :func:`train_hrnn`, :func:`evaluate`.
* :mod:`.baselines` — :func:`stay_at_start`, :func:`dead_reckoning`, :class:`SingleModuleRNN`.
* :mod:`.analysis` — rate maps, tuning with shuffles, cell types, gridness, ring topology,
  connectivity asymmetry.
* :mod:`.theta` — theta-paced mutual inhibition and sweep statistics.

Example::

    import numpy as np
    from neurips26.path_integration import HRNN, TrainingConfig, simulate_trajectories, train_hrnn, evaluate
    model = HRNN(64, 128)
    train_hrnn(model, TrainingConfig(steps=200), np.random.default_rng(0))
    err = evaluate(model, simulate_trajectories(100, 20, np.random.default_rng(1)))
    print(err.mean_heading_deg, err.mean_position_m)
"""

from .analysis import (
                       Activity,
                       CellTypes,
                       ConnectivityAsymmetry,
                       RingTopology,
                       TorusTopology,
                       classify_cells,
                       collect_activity,
                       connectivity_asymmetry,
                       gridness_null,
                       gridness_scores,
                       heading_tuning,
                       rate_maps,
                       rate_maps_loop,
                       ring_topology,
                       shuffled_statistics,
                       torus_topology,
)
from .baselines import SingleModuleRNN, dead_reckoning, stay_at_start
from .cells import HeadDirectionCells, PlaceCells, circular_mean
from .hrnn import (
                       HRNN,
                       HRNNOutput,
                       PathIntegrationError,
                       TrainingConfig,
                       TrainingLog,
                       evaluate,
                       soft_cross_entropy,
                       train_hrnn,
)
from .theta import SweepStatistics, mutual_inhibition_gain, sweep_statistics, theta_gate, theta_sweeps
from .trajectories import (
                       Arena,
                       RatRecording,
                       Trajectories,
                       heading_spike_rate,
                       load_rat_recording,
                       recording_to_trajectories,
                       resample_recording,
                       simulate_trajectories,
                       wrap_angle,
)

__all__ = [
    "Arena", "Trajectories", "simulate_trajectories", "RatRecording", "load_rat_recording", "resample_recording",
    "recording_to_trajectories", "heading_spike_rate", "wrap_angle",
    "HeadDirectionCells", "PlaceCells", "circular_mean",
    "HRNN", "HRNNOutput", "TrainingConfig", "TrainingLog", "train_hrnn", "evaluate", "PathIntegrationError",
    "soft_cross_entropy",
    "stay_at_start", "dead_reckoning", "SingleModuleRNN",
    "Activity", "collect_activity", "rate_maps", "rate_maps_loop", "heading_tuning", "shuffled_statistics", "CellTypes",
    "classify_cells", "gridness_scores", "gridness_null", "RingTopology", "ring_topology", "ConnectivityAsymmetry",
    "connectivity_asymmetry", "TorusTopology", "torus_topology",
    "theta_gate", "mutual_inhibition_gain", "SweepStatistics", "sweep_statistics", "theta_sweeps",
]
