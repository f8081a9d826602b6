"""Reproduction of paper 18 (symmetries of three-layer ReLU networks) at laptop scale.

Claim groups (one function each): (1) equivalence decisions on permutation/scaling orbits and on
perturbations; (2) bottleneck symmetries outside that orbit (discrete and continuous; hidden vs
visible geometry) and their decisions; (3) fiber dimensions at constructed parameters;
(4) conservation laws along gradient descent; (5) real input: networks trained on make_moons and
on digits (PCA), converted from torch; (6) decision time against width. The paper's algorithm
and theorems were not readable: the decision procedure and every dimension count are ours.
"""

from __future__ import annotations

import math
import time

import numpy as np
from pydantic import Field, field_validator

from neurips26.harness import ExperimentConfig, Outcome, Resources, RunContext
from neurips26.harness import claims as C

from .baselines import naive_canonical_equal, points_for_confidence, random_evaluation_equal
from .conservation import bias_trade_generator, generator_curl, scaling_generator, train_gd
from .constructions import case_a, case_b, constructions, generic_switching_network
from .equivalence import Equivalent, NotEquivalent, equivalent
from .fibers import fiber_dimension, jacobian, numerical_rank, sample_away_from_kinks, stratum
from .network import Box, ReluNet3, from_sequential, random_network, to_sequential
from .regions import activation_cells
from .symmetries import (
    deepen_hidden_inhibition,
    flip_unit,
    move_dead_unit,
    move_hidden_hyperplane,
    random_orbit_element,
    redistribute_affine,
    unit_status,
)

#: Run seeds never used while choosing a threshold or setting; ``reproduce`` re-runs only the claims
#: tuned after a look (the generic-fiber and switching-unit claims) on them. A run at seed s draws its
#: internal seeds s, s+1, s+2, so these are 100 apart: no internal seed is shared between runs.
CONFIRMATION_SEEDS = (101, 201, 301)

SOURCE_OURS = "inferred: our derivation for width-1 hidden layers (the paper's theorems were not readable)"
SOURCE_DECISION = "inferred: our decision procedure (the paper's algorithm was not readable)"


class Config(ExperimentConfig):
    """Sizes of the reproduction (quick: about a minute and a half of CPU on 2 cores)."""

    n_seeds: int = Field(3, ge=3, le=50, description="seeds for the randomised claims (seed, seed+1, …)")
    orbit_pairs: int = Field(10, ge=1, le=10_000, description="random orbit / perturbation pairs per seed")
    orbit_architecture: list[int] = Field(default_factory=lambda: [3, 4, 3, 1], description="(n0, n1, n2, n3)")
    check_points: int = Field(100_000, ge=1000, le=10_000_000, description="points for max|f − f′| checks")
    fiber_points: int = Field(400, ge=50, le=100_000, description="kink-free samples per Jacobian")
    generic_fiber_points: int = Field(2000, ge=50, le=100_000,
                                      description="kink-free samples per Jacobian at generic (3,4,3,1) draws")
    exact_fiber_points: int = Field(150, ge=20, le=2000, description="samples for exact (rational) ranks")
    gd_steps: int = Field(20_000, ge=100, le=10_000_000, description="gradient-descent steps at lr")
    gd_lr: float = Field(1e-3, gt=0, le=0.1, description="base learning rate")
    gd_points: int = Field(256, ge=16, le=1_000_000, description="training points for the conservation runs")
    moons_points: int = Field(300, ge=50, le=1_000_000, description="make_moons samples")
    moons_width: int = Field(8, ge=2, le=512, description="hidden widths of the moons network")
    digits_pca: int = Field(8, ge=2, le=64, description="PCA dimensions of the digits")
    digits_width: int = Field(16, ge=2, le=512, description="hidden widths of the digits network")
    train_steps: int = Field(400, ge=10, le=1_000_000, description="Adam steps for the real-data networks")
    scaling_widths: list[int] = Field(default_factory=lambda: [16, 32, 64, 128, 256],
                                      description="hidden widths for the decision-time measurement")
    confidence_fraction: float = Field(1e-3, gt=0, lt=1, description="volume fraction p a random test must hit")
    confidence_delta: float = Field(1e-6, gt=0, lt=1, description="miss probability of the random test")

    @field_validator("orbit_architecture")
    @classmethod
    def _arch(cls, v: list[int]) -> list[int]:
        if len(v) != 4 or min(v) < 1 or v[1] < 2 or v[2] < 2 or max(v) > 4096:
            raise ValueError("must be 4 widths (n0, n1, n2, n3), hidden widths in 2..4096 (generic orbit pairs)")
        return v

    @field_validator("scaling_widths")
    @classmethod
    def _widths(cls, v: list[int]) -> list[int]:
        if len(v) < 3 or any(b <= a for a, b in zip(v, v[1:])) or v[0] < 2 or v[-1] > 4096:
            raise ValueError("must be >= 3 strictly increasing widths in 2..4096 (a log-log slope is fitted)")
        return v

    def resources(self) -> Resources:
        """One CPU. ``hours`` is an estimate (inferred, not measured at full scale), extrapolated from
        the quick run (15 CPU-s on seed 0; by its profile: conservation GD ≈ 44 %, real-data training
        ≈ 25 %, figures ≈ 19 %, orbit checks ≈ 6 %, decision scaling ≈ 3 %) by work ratios: GD 10×
        seeds × 10× steps ≈ 670 s; real-data training 12.5× steps × 4× widths (up to ~16× per step)
        ≈ 200-800 s; orbit checks 10× seeds × 100× pairs ≈ 900 s; decision scaling to width 1024
        ≈ 100 s. Sum ≈ 0.6 h; declared 1 h for the uncertain per-step growth with width."""
        big = self.n_seeds > 10 or self.gd_steps > 100_000 or max(self.scaling_widths) > 256
        return Resources(num_cpus=1, hours=1.0 if big else 0.01,
                         on_cpu="exact region enumeration and symmetry decisions (numpy, exact arithmetic: CPU by nature)")

    @classmethod
    def full(cls) -> "Config":
        """Paper-like scale: 30 seeds × 1000 pairs, widths up to 10³, 10^6 check points, longer
        training (CPU hours; no GPU needed)."""
        return cls(n_seeds=30, orbit_pairs=1000, check_points=1_000_000, fiber_points=4000, generic_fiber_points=20000,
                   exact_fiber_points=600,
                   gd_steps=200_000, moons_points=5000, moons_width=32, digits_width=64, train_steps=5000,
                   scaling_widths=[16, 32, 64, 128, 256, 512, 1024])


# --------------------------------------------------------------------------- helpers

def _max_rel_diff(a: ReluNet3, b: ReluNet3, box: Box, n: int, rng) -> float:
    """``max |f_a − f_b| / (1 + |f_a|)`` at ``n`` uniform points of the box (in batches)."""
    worst, left = 0.0, n
    while left > 0:
        X = box.sample(min(left, 50_000), rng)
        fa = a(X)
        worst = max(worst, float(np.max(np.abs(fa - b(X)) / (1 + np.abs(fa)))))
        left -= len(X)
    return worst


def _perturb_visible(net: ReluNet3, rng, size: float = 1e-3) -> ReluNet3:
    """Add ``size`` to one first-layer weight of a unit that switches on the box."""
    W1 = net.W1.copy()
    W1[rng.integers(W1.shape[0]), rng.integers(W1.shape[1])] += size
    return net.replace(W1=W1)


def _torch_vs_exact(net: ReluNet3, other: ReluNet3, witness: NotEquivalent) -> float:
    """Largest difference between the exact values at a witness and an independent float64
    evaluation of both networks through ``torch.nn.Sequential``."""
    import torch

    with torch.no_grad():
        x = torch.as_tensor(witness.witness[None, :])
        ta, tb = to_sequential(net)(x).numpy()[0], to_sequential(other)(x).numpy()[0]
    return float(max(np.max(np.abs(ta - np.array([float(v) for v in witness.value]))),
                     np.max(np.abs(tb - np.array([float(v) for v in witness.other_value])))))


def _perturb_effective(net: ReluNet3, X: np.ndarray, size: float = 1e-3) -> ReluNet3:
    """Add ``size`` to the first-layer bias with the largest effect on f at the points ``X``
    (largest Jacobian column), so the change is visible on the data."""
    n0, n1 = net.architecture[:2]
    J = jacobian(net, X[:200])
    i = int(np.argmax(np.abs(J[:, n1 * n0:n1 * n0 + n1]).sum(0)))
    b1 = net.b1.copy()
    b1[i] += size
    return net.replace(b1=b1)


def _perturb_output_bias(net: ReluNet3, rng) -> ReluNet3:
    """Add 1e-3 to one output bias (visible on every domain; used for timing)."""
    b3 = net.b3.copy()
    b3[rng.integers(len(b3))] += 1e-3
    return net.replace(b3=b3)


# --------------------------------------------------------------------------- (1) orbits

def _decisions_on_orbits(config: Config, ctx: RunContext, metrics: dict) -> list:
    seeds = [ctx.seed + k for k in range(config.n_seeds)]
    arch = tuple(config.orbit_architecture)
    box = Box.cube(arch[0], 3.0)
    orbit_c, pert_c, fun_c, torch_c = [], [], [], []
    per_seed = []
    for s in ctx.track(seeds, "orbit and perturbation pairs"):
        rng = np.random.default_rng([s, 1])
        eq = ne = 0
        worst_fun, min_gap, torch_err = 0.0, np.inf, 0.0
        for _ in range(config.orbit_pairs):
            net = generic_switching_network(arch, box, rng)
            moved = random_orbit_element(net, rng).net
            worst_fun = max(worst_fun, _max_rel_diff(net, moved, box, config.check_points // config.orbit_pairs, rng))
            d = equivalent(net, moved, box, seed=s)
            eq += isinstance(d, Equivalent) and d.proof == "orbit"
            pert = _perturb_visible(net, rng)
            p = equivalent(net, pert, box, seed=s)
            if isinstance(p, NotEquivalent):
                ne += p.gap > 1e-6
                min_gap = min(min_gap, p.gap)
                torch_err = max(torch_err, _torch_vs_exact(net, pert, p))
        n = config.orbit_pairs
        per_seed.append({"seed": s, "orbit_equivalent": eq, "perturbation_not_equivalent": ne, "pairs": n,
                         "max_rel_diff_orbit": worst_fun, "min_witness_gap": min_gap})
        orbit_c.append(C.check("orbit_decided_equivalent", "Random permutation + positive scaling (scales in "
                               "[0.1, 10]) of a generic (3,4,3,1) network is decided equivalent, with the group "
                               "element as proof.", measured=eq / n, holds=eq == n, tolerance="all pairs",
                               reason="the orbit is exact in real arithmetic; a miss is a bug",
                               kind="check", source=SOURCE_DECISION))
        pert_c.append(C.check("perturbation_decided_not_equivalent", "Adding 1e-3 to one first-layer weight is "
                              "decided not equivalent, with a witness whose exact gap exceeds 1e-6.",
                              measured=ne / n, holds=ne == n, tolerance="all pairs, exact gap > 1e-6",
                              reason="a 1e-3 weight change moves f by ~1e-3 on a positive-volume set",
                              kind="check", source=SOURCE_DECISION))
        fun_c.append(C.at_most("orbit_preserves_function", "The orbit maps preserve f: max |f − f′| / (1 + |f|) "
                               "on uniform points of [−3, 3]^3.", measured=worst_fun, bound=1e-12, domain=(0, math.inf),
                               reason="only float rounding of scaled weights (~1e-16 relative) may differ",
                               kind="check", source="inferred: σ(λz) = λσ(z) for λ > 0"))
        torch_c.append(C.at_most("witness_matches_torch", "The exact value at each witness matches an independent "
                                 "float64 evaluation through torch.nn.Sequential (to_sequential).",
                                 measured=torch_err, bound=1e-9, domain=(0, math.inf),
                                 reason="float64 rounding through three layers is far below 1e-9",
                                 kind="check", source="inferred: conversion and exact evaluation agree"))
    metrics["orbit_pairs"] = per_seed
    return [C.over_seeds(orbit_c, seeds), C.over_seeds(pert_c, seeds), C.over_seeds(fun_c, seeds),
            C.over_seeds(torch_c, seeds)]


# --------------------------------------------------------------------------- (2) bottleneck moves

def _flip_construction() -> ReluNet3:
    """Case A with unit 1 (v < 0) flippable and unit 2 always active (v ≥ 0, c > 0)."""
    return ReluNet3([[1.0, 0.5, -0.5]], [0.5], [[1.0], [-1.0], [2.0]], [-1.0, 2.0, 1.0], [[1.0, 2.0, 1.5]], [0.25])


def _redistribute_construction() -> ReluNet3:
    """Case A with two always-active units (1 and 2) and one visible breakpoint (unit 0)."""
    return ReluNet3([[1.0, 0.5, -0.5]], [0.5], [[1.0], [0.5], [0.25]], [-1.0, 1.0, 2.0], [[1.0, 2.0, 1.5]], [0.25])


def _bottleneck_moves(config: Config, ctx: RunContext, metrics: dict, figs: dict) -> list:
    rng = ctx.child_rng(20)
    a_hid, a_vis, b_hid = case_a(False), case_a(True), case_b(True)
    moves = {}
    moves["hidden first-layer hyperplane (n1 = 1, continuous)"] = (a_hid.net, move_hidden_hyperplane(a_hid.net, 0.375),
                                                                   a_hid.box)
    fl = _flip_construction()
    moves["flip of a v < 0 unit (n1 = 1, discrete)"] = (fl, flip_unit(fl, 1, 2, Box.cube(3, 3.0)), Box.cube(3, 3.0))
    rd = _redistribute_construction()
    moves["affine redistribution (n1 = 1, continuous)"] = (rd, redistribute_affine(rd, 2, 1, 0.5, Box.cube(3, 3.0)),
                                                          Box.cube(3, 3.0))
    moves["deeper inhibition of a hidden unit (n2 = 1, continuous)"] = (
        b_hid.net, deepen_hidden_inhibition(b_hid.net, 2, 0.75, b_hid.box, verify_with=activation_cells), b_hid.box)
    rows = {}
    for name, (a, b, box) in moves.items():
        d = equivalent(a, b, box, seed=ctx.seed)
        rows[name] = {"max_rel_diff": _max_rel_diff(a, b, box, config.check_points, rng),
                      "naive_canonical_equal": naive_canonical_equal(a, b), "decision": type(d).__name__,
                      "proof": getattr(d, "proof", None)}
    metrics["bottleneck_moves"] = rows
    figs["hidden_move"] = moves["hidden first-layer hyperplane (n1 = 1, continuous)"]
    preserved = max(r["max_rel_diff"] for r in rows.values())
    outside = not any(r["naive_canonical_equal"] for r in rows.values())
    decided = all(r["decision"] == "Equivalent" for r in rows.values())
    discrete = bool(np.any(np.sign(moves["flip of a v < 0 unit (n1 = 1, discrete)"][1].W2) != np.sign(fl.W2)))
    try:
        move_hidden_hyperplane(a_vis.net, 0.375)
        refused = False
    except ValueError:
        refused = True
    return [
        C.check("discrete_and_continuous_symmetries", "Layer composition yields symmetries beyond permutation and "
                "scaling, both discrete (a flip changes the sign pattern) and continuous (hidden hyperplane, "
                "affine redistribution, deeper inhibition): each preserves f and lies outside the "
                "permutation/scaling orbit.",
                measured={"max_rel_diff": preserved, "all_outside_orbit": outside, "flip_changes_signs": discrete},
                holds=preserved <= 1e-12 and outside and discrete,
                tolerance="max |Δf|/(1+|f|) <= 1e-12 on uniform points, naive orbit comparer says different for all",
                reason="exact identities (σ(z) = z + σ(−z), units off in flat regions); 1e-12 for rounding",
                kind="reconstruction", source="abstract: layer composition 'yields symmetries beyond permutation "
                "and scaling, both discrete and continuous'; the four moves are our constructions",
                paper_value="discrete and continuous symmetries",
                note="the four moves are our constructions for width-1 hidden layers: this shows that such symmetries "
                     "exist at the parameters we built, not the paper's classification"),
        C.check("bottleneck_moves_decided_equivalent", "The decision procedure answers Equivalent for all four "
                "bottleneck moves, where comparing canonical forms of the orbit alone answers different "
                "(regression test of the naive comparer).",
                measured={k: f"{v['decision']} ({v['proof']}); naive equal: {v['naive_canonical_equal']}"
                          for k, v in rows.items()},
                holds=decided and outside, tolerance="4 of 4 Equivalent and 0 of 4 naive-equal",
                reason="the moves are exact symmetries outside the orbit", kind="reconstruction",
                source=SOURCE_DECISION),
        C.check("hide_or_preserve", "Our hidden-hyperplane move is applied only where the deeper layer hides the "
                "first-layer hyperplane: it is accepted (f unchanged, above) when ψ is flat on both sides (s₀ = 0) "
                "and refused with ValueError when the hyperplane is a visible kink (s₀ ≠ 0).",
                measured={"move_allowed_hidden": True, "move_refused_visible": refused},
                holds=refused, tolerance="move valid at s₀ = 0 (f unchanged, above) and refused at s₀ ≠ 0",
                reason="the move's precondition is exactly the flatness of ψ around s = 0",
                kind="check", source="abstract: the symmetries 'depend on whether deeper layers hide or preserve "
                "geometric structure'; this checks our own move's precondition on two constructed networks (our "
                "function raising ValueError), not that statement", paper_value="depend on whether deeper layers "
                "hide or preserve geometric structure"),
    ]


# --------------------------------------------------------------------------- (3) fibers

def _fiber_dimensions(config: Config, ctx: RunContext, metrics: dict, figs: dict, tuned_only: bool = False) -> list:
    """Fiber dimensions at the four constructed strata and at generic draws; ``tuned_only``
    (confirmation runs): only the generic draws, whose claim was tuned after a look."""
    claims, rows, spectra = [], {}, {}
    for k, con in enumerate([] if tuned_only else constructions()):
        rng = ctx.child_rng(30 + k)
        fl = fiber_dimension(con.net, con.box, rng, config.fiber_points)
        ex = fiber_dimension(con.net, con.box, rng, config.exact_fiber_points, exact=True)
        X = sample_away_from_kinks(con.net, con.box, config.fiber_points, rng)
        label = ["A, visible hyperplane", "A, hidden hyperplane", "B, all visible", "B, hidden unit"][k]
        spectra[label] = (numerical_rank(jacobian(con.net, X))[1], con.net.n_params - con.predicted_fiber)
        rows[con.name] = {"predicted": con.predicted_fiber, "float": fl.fiber, "exact": ex.fiber, "gap": fl.gap,
                          "stratum": con.stratum, "count": con.count}
        claims.append(C.check(f"fiber_{['a_visible', 'a_hidden', 'b_visible', 'b_hidden'][k]}",
                              f"Fiber dimension at the constructed {con.name} ({con.stratum}) is "
                              f"{con.predicted_fiber} = {con.count}.",
                              measured={"float_svd": fl.fiber, "exact_rational": ex.fiber},
                              holds=fl.fiber == ex.fiber == con.predicted_fiber,
                              tolerance="float and exact ranks both give the predicted value",
                              reason="integer-valued; samples ≥ 1e-6 from every kink",
                              paper_value=con.predicted_fiber, kind="reconstruction", source=SOURCE_OURS,
                              note=f"singular-value gap at the rank: {fl.gap:.2g}"))
    agree = [r["float"] == r["exact"] == r["predicted"] for r in rows.values()]
    claims.insert(0, None if tuned_only else C.check(
        "bottleneck_fibers_described", "Generic fibers of three-layer bottleneck architectures have an explicit "
        "description: at parameters constructed in four strata of the width-1 cases, the fiber dimension measured "
        "from the Jacobian equals the one the description gives.",
        measured={k: f"{r['float']} (exact {r['exact']}) vs {r['predicted']}" for k, r in rows.items()},
        holds=all(agree), tolerance="4 of 4 strata agree (float and exact ranks)",
        reason="integer-valued dimensions", kind="reconstruction",
        source="abstract: generic fibers of three-layer bottleneck architectures have an 'explicit semi-algebraic "
               "description'; the description checked here is our own for the width-1 cases",
        paper_value="explicit semi-algebraic description of generic fibers",
        note="checked against our own description of the width-1 cases at parameters we constructed in each stratum; "
        "the paper's description was not readable, so this is evidence for our reconstruction, not for the paper's"))
    seeds = [ctx.seed + k for k in range(config.n_seeds)]
    per = []
    arch = tuple(config.orbit_architecture)
    box = Box.cube(arch[0], 3.0)
    for s in seeds:
        rng = np.random.default_rng([s, 3])
        net = generic_switching_network(arch, box, rng)
        fd = fiber_dimension(net, box, rng, config.generic_fiber_points)
        per.append(C.within("fiber_generic_equals_hidden", f"At generic {tuple(arch)} parameters (every unit "
                            "switching, every weight acting somewhere on the box) the fiber dimension equals the "
                            "number of hidden units (only permutations and scalings): fiber − (n1 + n2)",
                            measured=float(fd.fiber - net.n_hidden), low=-0.5, high=0.5,
                            reason="integer-valued: any deviation of the mean by half a dimension is a real one",
                            paper_value=0, kind="reconstruction",
                            source="inferred: generic identifiability up to permutation and scaling (Grillo & "
                            "Montúfar 2026, first page)",
                            tuned_after_look="generic_fiber_points 400 -> 2000 after a first run gave fiber 8 or 9 at "
                                             "some seeds (a co-active pair region missed, rank too low)",
                            note=f"{config.generic_fiber_points} samples: each co-active pair region holds >= 1% of "
                            f"the box by construction, so it is hit ~20 times; stratum {fd.stratum}"))
    claims.append(C.over_seeds(per, seeds))
    metrics["fibers"] = rows
    figs["spectra"] = spectra
    return [c for c in claims if c is not None]


# --------------------------------------------------------------------------- (4) conservation

def conservation_setup(n_points: int, rng) -> tuple[ReluNet3, np.ndarray, np.ndarray]:
    """(2, 4, 1, 1) network: units 0, 1 on at every point of [−1, 1]², unit 2 switching, unit 3
    dead; targets ``sin(2 x1) + x2²/2``."""
    X = rng.uniform(-1, 1, (n_points, 2))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2
    net = ReluNet3([[0.5, 0.3], [-0.4, 0.6], [1.0, -0.8], [0.3, 0.2]], [1.5, 1.5, 0.1, -5.0],
                   [[0.7, -0.5, 0.9, 0.4]], [-0.2], [[1.2]], [0.0])
    return net, X, y


def _conservation(config: Config, ctx: RunContext, metrics: dict, figs: dict, tuned_only: bool = False) -> list:
    """Conservation laws along gradient descent on the hand-set (2, 4, 1, 1) network of
    :func:`conservation_setup`. Both laws are consequences of our derivation on a network built so that
    units 0, 1 never switch and unit 2 does, so they are ``check`` claims (they cannot fail unless the
    derivation or the code is wrong). ``tuned_only`` (confirmation runs): only the base-lr runs and the
    claim tuned after a look (switching_unit_not_conserved)."""
    seeds = [ctx.seed + k for k in range(config.n_seeds)]
    lr = config.gd_lr
    law, switch, frozen, order = [], [], [], []
    tracks = {}
    for s in ctx.track(seeds, "gradient descent"):
        net, X, y = conservation_setup(config.gd_points, np.random.default_rng([s, 4]))
        base = train_gd(net, X, y, lr, config.gd_steps, block=[0, 1, 2], record_every=max(1, config.gd_steps // 200))
        big = None if tuned_only else train_gd(net, X, y, 4 * lr, config.gd_steps // 4, block=[0, 1, 2],
                                               record_every=max(1, config.gd_steps // 800))
        d = base.drift()
        premise = base.always_on[0] and base.always_on[1]
        switching = not base.always_on[2]
        tracks[s] = base
        q01, q02 = d["gl"][0][1], d["gl"][0][2]
        law.append(C.at_most("local_law_conserved", "Our derivation of the abstract's local conservation laws: "
                             "on a hand-set network whose units 0 and 1 are on at every training point, the "
                             "off-diagonal GL quantity Q01 = ⟨(w0, b0), (w1, b1)⟩ − ⟨v0, v1⟩ stays constant along "
                             "gradient descent: |ΔQ01| over the run", measured=q01 if premise else float("nan"),
                             bound=1e-3, domain=(0, math.inf), object="theory",
                             reason=f"gradient descent conserves it to O(lr); lr = {lr:g} over {config.gd_steps} steps",
                             note="no value (does not hold) on a seed where units 0 and 1 were not on at every step. "
                             "Reclassified from paper to check: the network is built so that the units never switch, "
                             "where the block acts linearly and the law is the balancedness of a linear block — a "
                             "consequence of the chain rule that cannot fail unless the code is wrong",
                             kind="check", source="abstract: 'some of these symmetries induce local conservation "
                             "laws along gradient flow'; the law and the network are our derivation",
                             paper_value="conserved (local)"))
        switch.append(C.at_least(
            "switching_unit_not_conserved", "Our derivation of the abstract's 'others do not': on the same hand-set "
            "network the quantity Q02 with a unit that switches on the data drifts: log10 of its drift |ΔQ02| over "
            "the conserved drift |ΔQ01| of the same run",
            measured=math.log10(q02 / max(q01, 1e-300)) if switching else float("nan"), bound=2.0,
            reason="the GL action is not a symmetry once a unit switches: its drift must be at least two orders of "
                   "magnitude above the O(lr) drift of the conserved quantity", kind="check",
            source="abstract: 'while others do not'; the quantity and the network are our derivation",
            paper_value="not conserved", object="theory",
            tuned_after_look="the measure was |ΔQ02| >= 0.1; after its seed interval straddled 0.1 it became the drift "
                             "ratio to the conserved Q01 (the original reason already said 'two orders above the "
                             "conserved drift')",
            note=f"|ΔQ02| = {q02:.3g}, |ΔQ01| = {q01:.3g}; no value on a seed where unit 2 did not switch. "
                 "Reclassified from paper to check: any drift of a generic quantity above the Euler round-off of "
                 "the conserved one passes, so the measurement says our switching unit breaks the law, not more"))
        if tuned_only:
            continue
        db = big.drift()
        ratio = db["per_neuron"] / max(d["per_neuron"], 1e-300)
        order.append(C.within("per_neuron_drift_order_lr", "The per-neuron scaling law ‖w_in‖² + b² − ‖w_out‖² is "
                              "conserved to O(lr): its drift is ≤ 1e-3 at lr, and 4× lr over the same time multiplies "
                              "the drift by 2–8 (measured: that factor)",
                              measured=ratio if d["per_neuron"] <= 1e-3 else float("nan"), low=2.0, high=8.0,
                              domain=(0, math.inf),
                              reason="first-order error of explicit Euler on a fixed time horizon is linear in lr; "
                              "[2, 8] brackets 4 by a factor 2 for higher-order terms",
                              note=f"drift at lr: {d['per_neuron']:.3g} (no value when above 1e-3)",
                              kind="reconstruction", source="inferred: standard law (Kunin et al. 2021) under "
                              "explicit Euler discretisation"))
        frozen.append(C.check("dead_unit_frozen", "A unit dead on every training point keeps bit-identical "
                              "parameters (zero gradient; not a symmetry-induced law).",
                              measured=base.frozen_max_change, holds=base.frozen_max_change == 0.0,
                              tolerance="max change == 0 exactly", reason="its gradient is exactly 0",
                              kind="check", source="inferred: ReLU'(z) = 0 for z < 0"))
    if tuned_only:
        metrics["conservation"] = {"drift": {s: t.drift() for s, t in tracks.items()}}
        return [C.over_seeds(switch, seeds)]
    b = case_b(True).net
    curl_trade = generator_curl(lambda n: bias_trade_generator(n, 0), b)
    curl_scale = generator_curl(lambda n: scaling_generator(n, 1, 1), b)
    metrics["conservation"] = {"curl_bias_trade": curl_trade, "curl_scaling": curl_scale,
                               "drift": {s: t.drift() for s, t in tracks.items()}}
    figs["conservation"] = tracks[seeds[0]]
    return [C.over_seeds(law, seeds), C.over_seeds(switch, seeds), C.over_seeds(order, seeds),
            C.check("bias_trade_no_law", "The bias trade of a width-1 second layer (c ↦ c + ε, b_i ↦ b_i − ε/v_i) "
                    "is a symmetry whose generator is not a gradient field (non-zero curl), so it induces no "
                    "conserved quantity of the form ξ = ∇Q; the scaling generator is curl-free.",
                    measured={"curl_bias_trade": curl_trade, "curl_scaling": curl_scale},
                    holds=curl_trade > 0.1 and curl_scale <= 1e-6,
                    tolerance="curl(trade) > 0.1 and curl(scaling) <= 1e-6",
                    reason="analytic curl of the trade is 1/v_i² · |∂v_i| terms ≈ 1 here; central differences "
                    "are exact for the linear scaling field up to 1e-9", kind="reconstruction",
                    source="inferred: our explanation of the abstract's 'others do not' (Poincaré lemma)"),
            C.over_seeds(frozen, seeds)]


# --------------------------------------------------------------------------- (5) real input

def _train_torch(X, y, widths, steps, seed, classification):
    import torch
    from torch import nn

    torch.manual_seed(seed)
    n0, n1, n2, n3 = widths
    seq = nn.Sequential(nn.Linear(n0, n1), nn.ReLU(), nn.Linear(n1, n2), nn.ReLU(), nn.Linear(n2, n3)).double()
    opt = torch.optim.Adam(seq.parameters(), lr=1e-2)
    Xt = torch.as_tensor(X)
    yt = torch.as_tensor(y)
    loss_fn = nn.CrossEntropyLoss() if classification else nn.MSELoss()
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(seq(Xt), yt)
        loss.backward()
        opt.step()
    return seq, float(loss.detach())


def _real_input(config: Config, ctx: RunContext, metrics: dict) -> list:
    from sklearn.datasets import load_digits, make_moons
    from sklearn.decomposition import PCA

    rng = ctx.child_rng(50)
    out = {}
    Xm, ym = make_moons(config.moons_points, noise=0.1, random_state=ctx.seed)
    w = config.moons_width
    seq, loss = _train_torch(Xm, ym.astype(float)[:, None], (2, w, w, 1), config.train_steps, ctx.seed, False)
    moons = from_sequential(seq)
    Xd, yd = load_digits(return_X_y=True)
    Z = PCA(config.digits_pca, random_state=0).fit_transform(Xd / 16.0)
    wd = config.digits_width
    seqd, lossd = _train_torch(Z, yd, (config.digits_pca, wd, wd, 10), config.train_steps, ctx.seed, True)
    digits = from_sequential(seqd)
    acc = float((digits(Z).argmax(1) == yd).mean())
    results = {}
    for name, net, X in (("moons", moons, Xm), ("digits_pca", digits, Z)):
        box = Box.around(X, 0.1)
        st = stratum(net, X)
        us = unit_status(net, box)
        moved = net
        for i, state in enumerate(us.layer1):  # dead units move freely, then a random orbit element
            if state == "dead":
                moved = move_dead_unit(moved, 1, i, box, rng)
        moved = random_orbit_element(moved, rng).net
        d_box = equivalent(net, moved, box, seed=ctx.seed)
        d_pts = equivalent(net, moved, X, seed=ctx.seed)
        p_box = equivalent(net, _perturb_effective(net, X), box, seed=ctx.seed)
        fd = fiber_dimension(net, box, rng, config.fiber_points) if net.n_params <= 2000 else None
        results[name] = {"box": type(d_box).__name__ + f" ({getattr(d_box, 'proof', '')})",
                         "points": type(d_pts).__name__ + f" ({getattr(d_pts, 'proof', '')})",
                         "perturbed": type(p_box).__name__, "witness_gap": getattr(p_box, "gap", None),
                         "fiber": None if fd is None else fd.fiber, "n_hidden": net.n_hidden, "stratum": st,
                         "units_dead_on_box": us.layer1.count("dead") + us.layer2.count("dead")}
    out.update(results)
    out["moons_train_mse"] = loss
    out["digits_train_accuracy"] = acc
    out["digits_train_cross_entropy"] = lossd
    metrics["real_input"] = out
    ok = all(r["box"].startswith("Equivalent") and r["points"].startswith("Equivalent")
             and r["perturbed"] == "NotEquivalent" for r in results.values())
    fib = {k: (r["fiber"], r["n_hidden"]) for k, r in results.items()}
    return [
        C.check("trained_networks_decided", f"On networks trained with torch on make_moons {moons.architecture} "
                f"and on digits PCA-{config.digits_pca} {digits.architecture}, converted with from_sequential: dead "
                "units moved and a random orbit element applied is decided equivalent on the data's box and on "
                "the data points; 1e-3 added to the first-layer bias with the largest effect on the data is "
                "decided not equivalent with an exact witness.",
                measured={k: {kk: r[kk] for kk in ("box", "points", "perturbed")} for k, r in results.items()},
                holds=ok, tolerance="all six decisions as stated", reason="exact symmetries vs a real change",
                kind="reconstruction", source=SOURCE_DECISION),
        C.check("trained_fiber_at_least_hidden", "At the trained networks the measured fiber dimension is at least "
                "the number of hidden units (the scaling group's dimension); excess dimensions come from units "
                "dead or never co-active on the box (stratum in the metrics).",
                measured={k: {"fiber": f, "n_hidden": h} for k, (f, h) in fib.items()},
                holds=all(f is not None and f >= h for f, h in fib.values()),
                tolerance="fiber >= n1 + n2", reason="the positive-scaling orbit always lies in the fiber",
                kind="check", source="inferred: the group acts on every fiber"),
    ]


# --------------------------------------------------------------------------- (6) time vs width

def _best_time(fn, repeats: int = 3):
    """Minimum CPU time over ``repeats`` calls (the machine is shared) and the last result."""
    best, out = np.inf, None
    for _ in range(repeats):
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def _decision_scaling(config: Config, ctx: RunContext, metrics: dict, figs: dict) -> list:
    rng = ctx.child_rng(60)
    n_rand = points_for_confidence(config.confidence_fraction, config.confidence_delta)
    rows = {"width": [], "decide_equivalent_s": [], "decide_perturbed_s": [], "random_eval_s": [], "correct": []}
    for n in ctx.track(config.scaling_widths, "decision time vs width"):
        net = random_network((3, n, n, 1), rng)
        box = Box.cube(3, 3.0)
        moved = random_orbit_element(net, rng).net
        pert = _perturb_output_bias(net, rng)
        (t_eq, d), (t_pert, p) = (_best_time(lambda: equivalent(net, other, box, seed=ctx.seed))
                                  for other in (moved, pert))
        t_rand, _ = _best_time(lambda: random_evaluation_equal(net, moved, box, n_rand, rng))
        rows["width"].append(n)
        rows["decide_equivalent_s"].append(t_eq)
        rows["decide_perturbed_s"].append(t_pert)
        rows["random_eval_s"].append(t_rand)
        rows["correct"].append(isinstance(d, Equivalent) and isinstance(p, NotEquivalent))
    w = np.log(rows["width"])
    slopes = [float(np.polyfit(w, np.log(np.maximum(rows[k], 1e-6)), 1)[0])
              for k in ("decide_equivalent_s", "decide_perturbed_s")]
    slope = max(slopes)
    ratio = rows["random_eval_s"][-1] / max(rows["decide_equivalent_s"][-1], 1e-9)
    rows.update(loglog_slope=slope, loglog_slopes_equivalent_perturbed=slopes, random_points=n_rand, random_over_decision_at_max_width=ratio)
    metrics["decision_scaling"] = rows
    figs["scaling"] = rows
    return [
        C.at_most("equivalence_polynomial_time", "Our procedure decides functional equivalence in polynomial time: "
                  "CPU time of the decision on orbit pairs and on perturbed pairs grows polynomially with the hidden width "
                  "(larger of the two log-log slopes), with every decision correct.", measured=slope if all(rows["correct"]) else float("nan"), bound=3.0,
                  reason="the orbit path sorts n units and touches the n² second-layer weights, the witness check "
                  "evaluates n² exact products (slope ≈ 2); 3 leaves room for timer noise on a shared machine",
                  kind="reconstruction", source="abstract: functional equivalence 'can be decided in polynomial time'; "
                  "the timed procedure is ours (the paper's algorithm was not readable), so this shows our procedure "
                  "is polynomial on random networks, not the paper's bound", paper_value="polynomial time",
                  note=f"widths {config.scaling_widths}; our procedure, not the paper's algorithm. Random "
                  f"evaluation with {n_rand} points (miss probability {config.confidence_delta:g} for a "
                  f"difference on a {config.confidence_fraction:g} volume fraction) takes {ratio:.2g}× the "
                  "decision's time at the largest width and certifies nothing."),
    ]


# --------------------------------------------------------------------------- figures

def _figures(ctx: RunContext, figs: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a, b, box = figs["hidden_move"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    x0 = box.center - np.sign(a.W1[0]) * box.half_width
    x1 = box.center + np.sign(a.W1[0]) * box.half_width
    tau = np.linspace(0, 1, 801)
    Xs = x0 + tau[:, None] * (x1 - x0)
    ax = axes[0]
    ax.plot(tau, a(Xs)[:, 0], color="tab:blue", lw=3, label="θ (hidden first-layer hyperplane)")
    ax.plot(tau, b(Xs)[:, 0], color="tab:orange", lw=1.2, ls="--", label="θ′: b + δ, c_j − v_j δ")
    for net, col in ((a, "tab:blue"), (b, "tab:orange")):
        t0 = -(net.W1[0] @ x0 + net.b1[0]) / (net.W1[0] @ (x1 - x0))
        ax.axvline(t0, color=col, ls=":", lw=1.2)
    ax.set_xlabel("position τ along the box diagonal (normal direction of the hyperplanes)")
    ax.set_ylabel("f")
    ax.set_title("Same function, moved first-layer hyperplane (dotted)")
    ax.legend(fontsize=8, loc="upper left")
    ax = axes[1]
    colors = ["tab:blue", "tab:cyan", "tab:red", "tab:pink"]
    for (name, (s, pred_rank)), col in zip(figs["spectra"].items(), colors):
        ax.semilogy(np.arange(1, len(s) + 1), np.maximum(s / s[0], 1e-18), "o-", ms=3, color=col,
                    label=f"{name}: rank {pred_rank} predicted")
        ax.axvline(pred_rank + 0.5, color=col, ls=":", lw=0.8)
    ax.set_xlabel("singular value index")
    ax.set_ylabel("σ_k / σ_1 of the Jacobian")
    ax.set_title("Jacobian spectra: the drop sits at the predicted rank")
    ax.legend(fontsize=7, loc="lower left")
    ctx.save_figure("bottleneck_fibers", fig, caption="Left: the width-1 first layer's hyperplane moves (dotted) "
                    "while f is unchanged — geometry hidden by the deeper layer. Right: singular values of the "
                    "parameter Jacobian at the four constructed bottleneck parameters; the drop to rounding level "
                    "sits at P − (predicted fiber dimension), our derivation.")

    tr = figs["conservation"]
    fig, ax = plt.subplots(figsize=(8, 4), constrained_layout=True)
    g = np.asarray(tr.gl)
    pn = np.asarray(tr.per_neuron)
    st = np.asarray(tr.steps)
    ax.semilogy(st[1:], np.max(np.abs(pn - pn[0]), axis=1)[1:] + 1e-18, color="tab:green", label="per-neuron laws (max)")
    ax.semilogy(st[1:], np.abs(g[:, 0, 1] - g[0, 0, 1])[1:] + 1e-18, color="tab:blue", label="Q01 (both units always on)")
    ax.semilogy(st[1:], np.abs(g[:, 0, 2] - g[0, 0, 2])[1:] + 1e-18, color="tab:red", label="Q02 (unit 2 switches)")
    ax.set_xlabel("gradient-descent step")
    ax.set_ylabel("|Q(t) − Q(0)|")
    ax.set_title("Conservation along gradient descent (lr = 1e-3)")
    ax.legend(fontsize=8)
    ctx.save_figure("conservation_drift", fig, caption="Drift of conserved quantities: the per-neuron and local "
                    "GL laws stay at O(lr) while the quantity involving a switching unit drifts by orders of "
                    "magnitude more (abstract: some symmetries induce local laws, others do not).")

    rows = figs["scaling"]
    fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
    ax.loglog(rows["width"], rows["decide_equivalent_s"], "o-", color="tab:purple", label="decision, orbit pair")
    ax.loglog(rows["width"], rows["decide_perturbed_s"], "s-", color="tab:olive", label="decision, perturbed pair")
    ax.loglog(rows["width"], rows["random_eval_s"], "^-", color="tab:gray",
              label=f"random evaluation, {rows['random_points']} points")
    ax.set_xlabel("hidden width n (architecture (3, n, n, 1))")
    ax.set_ylabel("CPU seconds")
    ax.set_title(f"Equivalence decision time (log-log slope {rows['loglog_slope']:.2f})")
    ax.legend(fontsize=8)
    ctx.save_figure("decision_time", fig, caption="CPU time of the decision against width, with dense random "
                    "evaluation at the point count for the same confidence; the abstract states polynomial time.")


def run(config: Config, ctx: RunContext) -> Outcome:
    """Run all claim groups (see the module docstring)."""
    metrics: dict = {}
    figs: dict = {}
    claims = []
    if ctx.confirmation:   # confirmation seeds: only the claims tuned after a look
        claims += _fiber_dimensions(config, ctx, metrics, figs, tuned_only=True)
        claims += _conservation(config, ctx, metrics, figs, tuned_only=True)
        return Outcome(metrics=metrics, claims=claims, notes="Confirmation run of the claims tuned after a look.")
    claims += _decisions_on_orbits(config, ctx, metrics)
    claims += _bottleneck_moves(config, ctx, metrics, figs)
    claims += _fiber_dimensions(config, ctx, metrics, figs)
    claims += _conservation(config, ctx, metrics, figs)
    claims += _real_input(config, ctx, metrics)
    claims += _decision_scaling(config, ctx, metrics, figs)
    _figures(ctx, figs)
    notes = ("Only the abstract and first page were readable. The decision procedure (refute on probes with exact "
             "witnesses; reduce dead units; orbit canonicalisation; exact comparison along one segment when the "
             "first layer is one-dimensional; activation cells by LPs otherwise) and every dimension count for "
             "width-1 hidden layers are ours. Fiber dimensions are of the restriction to the stated box.")
    return Outcome(metrics=metrics, claims=claims, notes=notes)
