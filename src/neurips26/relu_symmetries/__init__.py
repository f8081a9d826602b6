"""Parameter symmetries, fibers, functional equivalence and conservation laws of three-layer ReLU
networks (paper 18, NeurIPS 2026: Gegenfurtner, Grillo, Montúfar, *The Symmetries of Three-Layer
ReLU Networks*).

Only the abstract and first page were readable. The abstract states: a characterisation of the
generic fibers of three-layer *bottleneck* architectures, a polynomial-time algorithm for
functional equivalence, discrete and continuous symmetries from layer composition that depend on
whether deeper layers hide or preserve geometry of earlier ones, and local conservation laws along
gradient flow induced by some symmetries but not others. Everything beyond that is **ours**:
the bottleneck cases (a hidden layer of width 1), the dimension counts and the decision procedure.

``f_θ(x) = W3 σ(W2 σ(W1 x + b1) + b2) + b3``; fiber ``F(θ) = {θ′ : f_θ′ = f_θ on the domain}``.

* :mod:`.network` — :class:`ReluNet3` (torch ``[out, in]`` convention), :class:`Box`, exact
  rational evaluation, ``to_sequential`` / ``from_sequential``.
* :mod:`.symmetries` — permutations, positive rescalings, dead-unit moves, and the bottleneck
  moves: hidden first-layer hyperplane, flip, affine redistribution (n1 = 1), deeper inhibition
  of a unit hidden by the bottleneck (n2 = 1).
* :mod:`.fibers` — analytic and exact Jacobians, ranks (SVD or exact over ℚ), fiber dimension.
* :mod:`.regions` — activation cells (common linear regions) by LPs.
* :mod:`.equivalence` — ``equivalent(θ, θ′, domain)`` → ``Equivalent(proof)``,
  ``NotEquivalent(witness)`` or ``Undecided(reason)``.
* :mod:`.conservation` — per-neuron and local GL laws; gradient-descent tracker.
* :mod:`.baselines` — naive canonical comparison and random evaluation.

Example::

    import numpy as np
    from neurips26.relu_symmetries import Box, random_network, random_orbit_element, equivalent
    rng = np.random.default_rng(0)
    net = random_network((3, 4, 3, 1), rng)
    moved = random_orbit_element(net, rng).net
    print(equivalent(net, moved, Box.cube(3, 3.0)))   # Equivalent(proof='orbit', evidence={...})
"""

from .baselines import naive_canonical_equal, points_for_confidence, random_evaluation_equal
from .conservation import (
                           GDTrack,
                           bias_trade_generator,
                           generator_curl,
                           local_gl_invariant,
                           mse_gradient,
                           per_neuron_invariants,
                           scaling_generator,
                           train_gd,
)
from .equivalence import (
                           Equivalent,
                           NotEquivalent,
                           OrbitMatch,
                           Undecided,
                           equivalent,
                           match_orbit,
                           reduce_network,
                           segment_breakpoints,
                           verify_witness,
)
from .fibers import (
                           FiberDimension,
                           exact_jacobian,
                           exact_rank,
                           fiber_dimension,
                           jacobian,
                           kink_margin,
                           numerical_rank,
                           sample_away_from_kinks,
                           stratum,
)
from .network import (
                           Box,
                           ReluNet3,
                           exact_forward,
                           exact_forward_fractions,
                           from_sequential,
                           random_network,
                           to_sequential,
)
from .regions import Cell, CellBudgetExceeded, activation_cells, affine_on_cell
from .symmetries import (
                           OrbitElement,
                           UnitStatus,
                           deepen_hidden_inhibition,
                           first_layer_slope_at_zero,
                           flip_unit,
                           move_dead_unit,
                           move_hidden_hyperplane,
                           permute_hidden,
                           random_orbit_element,
                           redistribute_affine,
                           rescale_hidden,
                           unit_bounds,
                           unit_status,
)

__all__ = [
    "ReluNet3", "Box", "random_network", "exact_forward", "exact_forward_fractions", "to_sequential", "from_sequential",
    "permute_hidden", "rescale_hidden", "random_orbit_element", "OrbitElement", "unit_bounds", "unit_status",
    "UnitStatus", "move_dead_unit", "move_hidden_hyperplane", "flip_unit", "redistribute_affine",
    "deepen_hidden_inhibition", "first_layer_slope_at_zero",
    "jacobian", "exact_jacobian", "kink_margin", "sample_away_from_kinks", "numerical_rank", "exact_rank",
    "FiberDimension", "fiber_dimension", "stratum",
    "Cell", "CellBudgetExceeded", "activation_cells", "affine_on_cell",
    "Equivalent", "NotEquivalent", "Undecided", "equivalent", "reduce_network", "match_orbit", "OrbitMatch",
    "segment_breakpoints", "verify_witness",
    "per_neuron_invariants", "local_gl_invariant", "mse_gradient", "GDTrack", "train_gd", "scaling_generator",
    "bias_trade_generator", "generator_curl",
    "naive_canonical_equal", "random_evaluation_equal", "points_for_confidence",
]
