"""Sublevel Flood bifiltration (paper 6): scalable 2-parameter persistent homology of point clouds.

Method (Clémot, Digne, Tierny, NeurIPS 2026, arXiv 2610.05441):

1. Landmarks L ⊂ X by farthest-point sampling; the Delaunay complex Del(L).
2. A function f : X → R (by default a co-density, e.g. −KDE normalised to [0, 1]).
3. SLF_{r,t} = { σ ∈ Del(L) : conv σ ⊆ ∪_{x ∈ X, f(x) ≤ t} B_r(x) } = Flood_r(X_{f ≤ t}, L):
   each simplex gets the k-critical grades of its staircase
   ρ_σ(t) = max_{y ∈ S_σ} min_{x ∈ X, f(x) ≤ t} ‖y − x‖ (S_σ a barycentric grid on σ).
4. Downstream: multipers signed measures (Hilbert decomposition), convolved with a Gaussian
   into vectors for a classifier.

Public API:
    farthest_point_sampling, delaunay_complex, sublevel_flood_bifiltration, SublevelFlood,
    slice_values, slice_simplex_tree, flood_filtration, to_simplextree_multi,
    flood_complex_values, codensity, hilbert_signed_measure, convolved_signed_measure,
    delay_embedding, DelayEmbedding, SublevelFloodFeatures; baselines
    delaunay_lowerstar_bifiltration, rips_codensity_bifiltration.

Example (a noisy circle of 400 points in the plane)::

    import numpy as np
    from neurips26.flood_bifiltration import codensity, sublevel_flood_bifiltration, to_simplextree_multi
    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 2 * np.pi, 400)
    X = np.c_[np.cos(theta), np.sin(theta)] + 0.05 * rng.normal(size=(400, 2))   # (N, d) points
    f = codensity(X, "kde", bandwidth=0.1)                   # (N,) in [0, 1]
    slf = sublevel_flood_bifiltration(X, f, n_landmarks=64)  # masked mode; exact=True for exact grades
    print([len(s) for s in slf.simplices])                  # simplices of Del(L) by dimension
    st = to_simplextree_multi(slf)                           # k-critical multipers.SimplexTreeMulti
    print(st.num_simplices, st.num_parameters)               # the same simplices, 2 parameters
"""

from .baselines import delaunay_lowerstar_bifiltration, rips_codensity_bifiltration
from .bifiltration import (
    SublevelFlood,
    flood_complex_values,
    flood_filtration,
    slice_simplex_tree,
    slice_values,
    sublevel_flood_bifiltration,
    to_simplextree_multi,
)
from .data import circle_with_outliers, loop_vs_disk_dataset
from .delaunay import DelaunayComplex, barycentric_grid, delaunay_complex, minimum_enclosing_balls
from .features import (
    DelayEmbedding,
    SublevelFloodFeatures,
    codensity,
    convolved_signed_measure,
    delay_embedding,
    hilbert_signed_measure,
)
from .landmarks import farthest_point_sampling

__all__ = [
    "SublevelFlood", "sublevel_flood_bifiltration", "slice_values", "slice_simplex_tree",
    "flood_filtration", "to_simplextree_multi", "flood_complex_values",
    "DelaunayComplex", "delaunay_complex", "barycentric_grid", "minimum_enclosing_balls",
    "farthest_point_sampling", "codensity", "hilbert_signed_measure", "convolved_signed_measure",
    "delay_embedding", "DelayEmbedding", "SublevelFloodFeatures",
    "delaunay_lowerstar_bifiltration", "rips_codensity_bifiltration",
    "circle_with_outliers", "loop_vs_disk_dataset",
]
