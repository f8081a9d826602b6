"""End-to-end run at a tiny configuration: every claim well-formed, with kind and source."""

import pytest

from neurips26.harness import RunContext
from neurips26.harness.claims import Claim, Kind, Verdict
from neurips26.harness.config import ConfigError, apply_overrides
from neurips26.relu_symmetries.experiment import Config, run


@pytest.mark.slow
def test_tiny_run_returns_well_formed_claims(tmp_path):
    cfg = Config(orbit_pairs=1, check_points=2000, generic_fiber_points=1000,
                 gd_steps=800, gd_points=64, moons_points=80, moons_width=4, digits_width=6, digits_pca=4,
                 train_steps=20, scaling_widths=[4, 8, 16])
    out = run(cfg, RunContext(seed=0, out_dir=tmp_path))
    ids = [c.id for c in out.claims]
    assert len(ids) == len(set(ids)) >= 18
    kinds = {c.kind for c in out.claims}
    # no paper claim: the two conservation claims were the only ones, and on a network built so that its
    # units never switch they cannot fail (checks of our derivation)
    assert kinds == {Kind.RECONSTRUCTION, Kind.CHECK}
    for c in out.claims:
        assert isinstance(c, Claim) and c.statement and c.tolerance and c.reason and c.source
    by = {c.id: c for c in out.claims}
    for cid in ("local_law_conserved", "switching_unit_not_conserved"):
        assert by[cid].kind is Kind.CHECK and by[cid].object == "theory" and "Reclassified" in by[cid].note
    assert by["bottleneck_fibers_described"].kind is Kind.RECONSTRUCTION
    # exact identities and integer counts hold even at this size (fiber samples kept at the quick
    # default: fewer samples can miss a linear region and lower the rank)
    for cid in ("fiber_a_visible", "fiber_a_hidden", "fiber_b_visible", "fiber_b_hidden",
                "discrete_and_continuous_symmetries", "bottleneck_moves_decided_equivalent", "hide_or_preserve",
                "orbit_decided_equivalent", "perturbation_decided_not_equivalent"):
        assert by[cid].verdict is Verdict.HOLDS, cid
    assert (tmp_path / "figures" / "bottleneck_fibers.png").exists()


def test_config_bounds_and_full():
    with pytest.raises(ConfigError, match="scaling_widths"):
        apply_overrides(Config.quick(), {"scaling_widths": [8, 4, 16]}, "relu_symmetries")
    with pytest.raises(ConfigError, match="n_seeds"):
        apply_overrides(Config.quick(), {"n_seeds": 2}, "relu_symmetries")
    with pytest.raises(ConfigError, match="orbit_architecture"):
        apply_overrides(Config.quick(), {"orbit_architecture": [3, 1, 3, 1]}, "relu_symmetries")
    full = Config.full()
    assert full.scaling_widths[-1] >= 1000 and full.n_seeds >= 3 and Config.quick() == Config()


def test_confirmation_run_judges_only_the_tuned_groups_and_claims_say_what_they_measure(tmp_path):
    """The confirmation seeds re-run only the claims tuned after a look. Catches a confirmation run that
    recomputes everything, or fewer than 3 confirmation seeds (or ones sharing internal seeds)."""
    from neurips26.relu_symmetries import experiment as ex

    # at least 3 confirmation seeds, and their internal seeds (s, s+1, s+2) never overlap the development
    # run's (0, 1, 2) nor each other's
    internal = [s + k for s in ex.CONFIRMATION_SEEDS for k in range(Config().n_seeds)]
    assert len(ex.CONFIRMATION_SEEDS) >= 3 and len(set(internal)) == len(internal) and not {0, 1, 2} & set(internal)
    cfg = Config(generic_fiber_points=1000, gd_steps=800, gd_points=64, fiber_points=200, exact_fiber_points=60)
    out = run(cfg, RunContext(seed=101, out_dir=tmp_path, confirmation=True))
    by = {c.id: c for c in out.claims}
    assert "equivalence_polynomial_time" not in by and "hide_or_preserve" not in by
    tuned = {c.id for c in out.claims if not c.preregistered}
    # only the tuned claims are computed (no constructed strata, no 4x-lr runs)
    assert tuned == {"fiber_generic_equals_hidden", "switching_unit_not_conserved"} == set(by)
    sw = by["switching_unit_not_conserved"]
    # judged on the interval of the seed mean of log10(|ΔQ02|/|ΔQ01|): at least two orders of magnitude
    assert sw.rule == {"op": "at_least", "bound": 2.0} and sw.interval is not None and sw.seeds.n == 3
