"""End-to-end run on a tiny configuration, the user-loop tracker, and config validation."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from neurips26.feature_learning import LinearityTracker, mlp
from neurips26.feature_learning.experiment import Config, run
from neurips26.harness import RunContext
from neurips26.harness.claims import Claim, Kind, Outcome, Verdict

TINY = dict(seeds=[0, 1], whiten_width=16, whiten_epochs=2, tl_width=16, tl_depth=2, tl_epochs=3, swiss_n=100,
            swiss_steps=5, grok_prime=7, grok_width=16, grok_epochs=10, grok_every=5, vae_hidden=16, vae_epochs=3)


def test_tiny_run_produces_well_formed_claims(tmp_path):
    out = run(Config(**TINY), RunContext(seed=0, out_dir=tmp_path))
    assert isinstance(out, Outcome)
    ids = [c.id for c in out.claims]
    assert len(ids) == len(set(ids)) >= 15
    for c in out.claims:
        assert isinstance(c, Claim) and c.kind is not None and c.source
        json.dumps(c.to_dict(), default=str)
    kinds = {c.kind for c in out.claims}
    assert kinds == {Kind.PAPER, Kind.RECONSTRUCTION, Kind.CHECK}
    by_id = {c.id: c for c in out.claims}
    # the exact identities hold at any size: a failure is a bug, not noise
    for must in ("fl_identity", "vc_gram_relation", "vc_first_order", "conv_unfolding", "whitening_keeps_gram",
                 "newton_schulz_matches_svd"):
        assert by_id[must].verdict is Verdict.HOLDS, must
    assert by_id["whitening_matches_sgd"].interval is not None  # random claims carry an interval over seeds
    # a claim that cannot fail is a check; every paper claim names its object and how it could fail
    assert by_id["fl_identity"].kind is Kind.CHECK
    for c in out.claims:
        if c.kind is Kind.PAPER:
            assert c.object in ("real", "theory", "toy") and (c.control or c.falsifiable_by
                                                             or c.verdict is Verdict.NOT_CHECKABLE), c.id
    # the Swiss-roll claim is judged on trained − frozen, both measured in this run on the same seeds
    sw, m = by_id["swiss_roll_linearises"], out.metrics["swiss_roll"]
    assert sw.control and len(m["gain_frozen"]) == len(m["gain_trained"]) == 2
    assert sw.measured == pytest.approx(np.mean(np.array(m["gain_trained"]) - np.array(m["gain_frozen"])))
    # the TL paper claims are judged on trained − shuffled labels, both measured in this run on the same seeds
    tl = out.metrics["tl_dynamics"]
    for cid, key in (("tl_rises", "rise_last_trained_minus_shuffled"),
                     ("tl_increases_with_depth", "depth_min_step_trained_minus_shuffled")):
        c = by_id[cid]
        assert "shuffled" in c.control and not c.falsifiable_by and len(tl[key]) == 2, cid
    assert by_id["tl_rises"].measured == pytest.approx(np.mean(tl["rise_last_trained_minus_shuffled"]))
    # depth: the binding one of (paired difference, trained smallest step + 0.02), strictly above 0
    dep = by_id["tl_increases_with_depth"]
    assert dep.measured == pytest.approx(min(np.mean(tl["depth_min_step_trained_minus_shuffled"]),
                                             np.mean(tl["depth_min_step"]) + 0.02))
    assert dep.interval[0] <= dep.measured <= dep.interval[1]
    assert tl["rise_last_trained_minus_shuffled"] == pytest.approx(
        np.array(tl["rise_last"]) - np.array(tl["rise_last_shuffled_labels"]))
    assert by_id["whitening_image_grids"].verdict is Verdict.NOT_CHECKABLE
    figures = {p.name for p in (tmp_path / "figures").iterdir()}
    assert {"tl_by_layer.png", "whitening_vs_sgd.png", "swiss_roll_virtual_features.png", "grokking.png",
            "vae_latent_linearity.png"} <= figures


def test_tracker_in_a_user_loop_sees_tl_rise_and_nc1_fall():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = torch.tensor(X[:600] / 16, dtype=torch.float32), torch.tensor(y[:600])
    torch.manual_seed(0)
    model = mlp(64, 32, 2, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    tracker = LinearityTracker(model)
    tracker.measure(X, labels=y, epoch=0)
    for epoch in range(1, 16):
        for i in range(0, 600, 50):
            opt.zero_grad()
            F.cross_entropy(model(X[i:i + 50]), y[i:i + 50]).backward()
            opt.step()
        tracker.measure(X, labels=y, epoch=epoch)
    _, tl = tracker.series("4", "tl")
    _, c = tracker.series("4", "nc1")
    # the last hidden layer of a digits classifier fitted to ~100% training accuracy: TL rises by a
    # clear margin (0.05 >> run-to-run noise of an in-sample R² on 600 rows) and NC1 falls
    assert tl[-1] > tl[0] + 0.05 and c[-1] < c[0]
    fig = tracker.plot()
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="exactly one"):
        tracker.measure(X, labels=y, targets=np.ones(600))
    with pytest.raises(KeyError, match="tracked"):
        tracker.series("9")


def test_full_config_validates_and_bad_values_are_rejected(tmp_path):
    full = Config.full()
    assert full.tl_width == 256 and len(full.seeds) == 5 and full.grok_prime == 61
    from neurips26.harness.config import ConfigError, apply_overrides

    for key, value, match in [("grok_prime", 45, "not prime"), ("seeds", [0], "2 to 20"),
                              ("whiten_lrs", [2.0], "learning rates"), ("data_dir", str(tmp_path / "x"), "folder"),
                              ("tl_width", 10**6, "4096")]:
        with pytest.raises(ConfigError, match=match):
            apply_overrides(Config.quick(), {key: value}, "feature_learning")


def test_full_config_uses_user_arrays_when_present(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    np.savez(tmp_path / "mnist.npz", X_train=X[:80], y_train=y[:80], X_test=X[80:], y_test=y[80:])
    from neurips26.feature_learning.experiment import _paper_scale

    cfg = Config(**{**TINY, "data_dir": str(tmp_path), "user_width": 8, "user_epochs": 2, "tl_epochs": 3})
    metrics: dict = {}
    claims = _paper_scale(cfg, RunContext(seed=0, out_dir=tmp_path), metrics)
    ids = {c.id for c in claims}
    assert {"whitening_matches_sgd_mnist", "tl_closes_gap_mnist"} <= ids and "whitening_image_grids" not in ids
    assert len(metrics["whitening_mnist"]["differences"]) == 2


def _bad_npz_files(tmp_path):
    """Bad user data files, each with the word its one-line error must contain."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    good = dict(X_train=X[:15], y_train=y[:15], X_test=X[15:], y_test=y[15:])
    cases = []
    d = tmp_path / "corrupt"; d.mkdir()
    (d / "mnist.npz").write_bytes(b"\x93NUMPY garbage that is not an archive" * 10)
    cases.append((d, "not a readable .npz"))
    d = tmp_path / "truncated"; d.mkdir()
    np.savez(d / "mnist.npz", **good)
    (d / "mnist.npz").write_bytes((d / "mnist.npz").read_bytes()[:200])
    cases.append((d, "not a readable .npz"))
    d = tmp_path / "pickled"; d.mkdir()
    np.savez(d / "mnist.npz", **{**good, "X_train": np.array([object()] * 15, dtype=object)})
    cases.append((d, "not a readable .npz"))
    d = tmp_path / "missing"; d.mkdir()
    np.savez(d / "mnist.npz", X_train=X, y_train=y)
    cases.append((d, "missing arrays"))
    d = tmp_path / "nan"; d.mkdir()
    Xn = X.copy(); Xn[3, 1] = np.nan
    np.savez(d / "mnist.npz", **{**good, "X_train": Xn[:15]})
    cases.append((d, "NaN"))
    d = tmp_path / "labels"; d.mkdir()
    np.savez(d / "mnist.npz", **{**good, "y_train": y[:15] - 0.5})
    cases.append((d, "integer class labels"))
    d = tmp_path / "rows"; d.mkdir()
    np.savez(d / "mnist.npz", **{**good, "y_train": y[:14]})
    cases.append((d, "rows"))
    d = tmp_path / "empty"; d.mkdir()
    cases.append((d, "holds none of"))
    return cases


def test_bad_user_data_fails_before_any_training_in_one_line(tmp_path, monkeypatch):
    """Catches: a corrupt mnist.npz failing after the digits parts (33 s of training) with numpy's
    allow_pickle advice, instead of at once with one line naming the file (issue 33)."""
    import neurips26.feature_learning.experiment as E

    def no_training(*a, **k):
        raise AssertionError("training started before the data files were validated")

    monkeypatch.setattr(E, "_identities", no_training)
    for folder, match in _bad_npz_files(tmp_path):
        with pytest.raises(ValueError) as err:
            run(Config(**{**TINY, "data_dir": str(folder)}), RunContext(seed=0, out_dir=tmp_path / "out"))
        msg = str(err.value)
        assert match in msg and "\n" not in msg and "allow_pickle" not in msg, (folder.name, msg)
        if match != "holds none of":
            assert str(folder / "mnist.npz") in msg, msg


def test_confirmation_run_returns_only_tuned_claims_on_fresh_internal_seeds(tmp_path):
    """Catches: a confirmation run that re-judges tuned claims on the development seeds (the
    internal seeds come from config.seeds, not ctx.seed) or returns untuned claims."""
    from neurips26.feature_learning import experiment as E

    assert len(E.CONFIRMATION_SEEDS) >= 3 and 0 not in E.CONFIRMATION_SEEDS
    ctx = RunContext(seed=101, out_dir=tmp_path, confirmation=True)
    out = run(Config(**TINY), ctx)
    assert out.claims and all(c.tuned_after_look and not c.preregistered for c in out.claims)
    assert {c.id for c in out.claims} == {"tl_rises", "tl_closes_gap", "whitening_matches_sgd", "grokking_tl_rises",
                                          "grokking_tl_tracks_test_accuracy"}
    assert out.metrics["whitening_digits"]["sgd_final"] and "101000" in out.notes


def test_every_random_part_follows_the_run_seed(tmp_path, monkeypatch):
    """Catches: development runs reading Config.seeds = [0, 1, 2] (and the digits split at seed 0)
    whatever the run seed, so that a "seed 7" result was seed 0 relabelled and two seeds gave
    identical runs with zero-width intervals."""
    import neurips26.feature_learning.experiment as E

    seen = {}

    def record(name):
        def part(config, ctx, metrics, figs=None):
            seen.setdefault(ctx.seed, {})[name] = (tuple(config.seeds), config.split_seed)
            return []
        return part

    for name in ("_identities", "_whitening_vs_sgd", "_linearity_dynamics", "_swiss_roll", "_grokking", "_vae",
                 "_paper_scale"):
        monkeypatch.setattr(E, name, record(name))
    monkeypatch.setattr(E, "_figures", lambda *a, **k: None)
    for seed in (0, 7, 23):
        run(Config(**TINY), RunContext(seed=seed, out_dir=tmp_path / str(seed)))
    assert seen[0]["_swiss_roll"] == ((0, 1), 0)                    # seed 0: the numbers of earlier runs
    assert seen[7]["_swiss_roll"] == ((7000, 7001), 7) and seen[23]["_vae"] == ((23000, 23001), 23)
    assert all(len(set(parts.values())) == 1 for parts in seen.values())   # every part alike


def test_shuffled_label_control_keeps_everything_but_the_labels():
    """Catches a shuffled-label control that is not paired or not a control: labels left unpermuted
    (the control then equals the trained run, and tl_rises / tl_increases_with_depth measure 0), TL
    measured against the permuted labels instead of the true ones, or a different initialisation
    (the two runs must start from the same network, so their TL at initialisation is identical)."""
    from neurips26.feature_learning.data import digits
    from neurips26.feature_learning.experiment import _tl_run

    cfg = Config(**{**TINY, "tl_epochs": 4})
    split = digits(seed=0)
    real, ctrl = _tl_run(split, cfg, 5), _tl_run(split, cfg, 5, shuffled=True)
    last = real.names[-1]
    (e_r, tl_r), (e_c, tl_c) = real.series(last, "tl"), ctrl.series(last, "tl")
    assert tl_r[0] == tl_c[0]                                   # same initialisation, same true-label TL
    assert list(e_c) == [0, 4] and len(e_r) > 2                 # the control is measured at the ends only
    # trained on the labels the last layer's true-label TL rises; on shuffled labels it cannot follow
    # the true labels: after 4 epochs the gap is far above run-to-run noise (> 0.02 at width 16)
    assert tl_r[-1] - tl_c[-1] > 0.02
    again = _tl_run(split, cfg, 5, shuffled=True)
    assert again.series(last, "tl")[1][-1] == tl_c[-1]          # the permutation follows the seed


def test_depth_claim_fails_for_an_identical_control_and_for_tl_falling_with_depth(monkeypatch, tmp_path):
    """Catches the inclusive bound of tl_increases_with_depth (a shuffled-label control identical to
    the trained run gives a paired difference of exactly 0, which held at bound 0) and a trained TL
    that falls with depth while passing because the control falls faster."""
    import neurips26.feature_learning.experiment as ex

    class Tracker:
        def __init__(self, ends):
            self.names = [f"layer{i}" for i in range(len(ends))]
            self.ends = ends

        def series(self, name, what):
            i = self.names.index(name)
            if what == "tl":
                return np.array([0, 1, 2, 3]), np.linspace(0.5, self.ends[i], 4)
            return np.array([0, 1, 2, 3]), np.array([0.0, 0.3, 0.6, 1.0])

    def verdict(trained, control):
        monkeypatch.setattr(ex, "_tl_run", lambda split, cfg, s, shuffled=False: Tracker(control if shuffled
                                                                                           else trained))
        cfg = Config(**{**TINY, "seeds": [0, 1, 2]})
        claims = ex._linearity_dynamics(cfg, RunContext(seed=0, out_dir=tmp_path), {}, {})
        return {c.id: c for c in claims}["tl_increases_with_depth"].verdict

    rising = [0.5, 0.7, 0.9]
    assert verdict(rising, [0.5, 0.5, 0.5]) is Verdict.HOLDS           # orders TL, the control does not
    assert verdict(rising, rising) is not Verdict.HOLDS                # identical control: difference 0
    assert verdict([0.9, 0.7, 0.5], [0.9, 0.5, 0.1]) is not Verdict.HOLDS  # falls with depth, control falls faster
