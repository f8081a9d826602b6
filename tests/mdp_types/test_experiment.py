"""End-to-end run of the experiment at a tiny configuration: claims are well-formed."""

from neurips26.harness import RunContext
from neurips26.harness.claims import Claim, Verdict
from neurips26.mdp_types.experiment import Config, run


def test_tiny_run_returns_well_formed_claims(tmp_path):
    cfg = Config(enum_length=5, ldp_m=[20, 40], ldp_paths=200, coverage_m=[100], coverage_reps=50,
                 pess_m=[200, 400, 800], pess_reps=20, n_boot=20, coding_rates=6, frozenlake_steps=3000,
                 frozenlake_datasets=1)
    out = run(cfg, RunContext(seed=0, out_dir=tmp_path))
    ids = [c.id for c in out.claims]
    assert len(ids) == len(set(ids)) >= 11
    for c in out.claims:
        assert isinstance(c, Claim) and c.statement and c.tolerance and c.reason
        assert c.verdict in (Verdict.HOLDS, Verdict.DOES_NOT_HOLD)
    # the exact type bounds are theorems: they must hold even at this size
    by_id = {c.id: c for c in out.claims}
    assert by_id["type_upper_bound"].verdict is Verdict.HOLDS
    assert by_id["type_lower_bound"].verdict is Verdict.HOLDS
    assert (tmp_path / "figures" / "coding_exponent.png").exists()
    # review: the FrozenLake note reports the library's vacuous flag for the per-pair bound it uses, too
    fl = out.metrics["frozenlake"]
    assert len(fl["per_pair_vacuous"]) == len(fl["V_low"]) == 1
    assert str(fl["per_pair_vacuous"]) in by_id["frozenlake_pessimism_valid"].note
    # review: local slopes of the pessimism gap are reported (pre-asymptotic check)
    assert len(out.metrics["pess_gap_local_slopes"]) == 2
    assert "per-log differences" in by_id["frozenlake_pessimistic_policy"].note
    assert Config.full().include_taxi and Config.quick() == Config()
