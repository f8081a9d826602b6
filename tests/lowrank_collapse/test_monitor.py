"""RankMonitor inside a user's own training loop (the README example)."""

from __future__ import annotations

import math

import pytest
import torch

from neurips26.lowrank_collapse import (
    MLPVectorField,
    NonFiniteError,
    RankMonitor,
    eight_gaussians,
    flow_matching_loss,
    mode_coverage,
    sample_flow,
)


def test_readme_loop_records_every_layer_and_draws_a_figure():
    torch.manual_seed(0)
    field, target = MLPVectorField(2, width=32), eight_gaussians()
    opt, monitor = torch.optim.Adam(field.parameters(), 3e-3), RankMonitor(field, every=20)
    for step in range(60):
        opt.zero_grad()
        loss = flow_matching_loss(field, target.sample(128))
        loss.backward()
        monitor(step, loss)
        opt.step()
    x = sample_flow(field, torch.randn(500, 2)).detach()
    assert 0 <= mode_coverage(x, target.means, target.std).n_covered <= 8
    assert [r["step"] for r in monitor.records] == [0, 20, 40]
    assert monitor.names == ["net.0", "net.2", "net.4"] and monitor.calls == 60 and monitor.seconds > 0
    steps, pr = monitor.history("net.2", "update", "participation_ratio")
    assert steps == [0, 20, 40] and pr[0] == 0.0 and 1 <= pr[-1] <= 32   # ΔW_0 = 0, then ≥ 1
    _, ranks = monitor.history("net.0", "gradient", "rank")
    assert all(r <= 3 for r in ranks)                                      # (32 × 3) layer
    fig = monitor.figure("test")
    assert len(fig.axes) == 3


def test_randomized_monitor_keeps_top_k():
    field = MLPVectorField(2, width=64)
    monitor = RankMonitor(field, every=1, layers=[field.linear_layers[1]], method="randomized", k=5)
    field(0.5, torch.randn(16, 2)).pow(2).sum().backward()
    monitor(0)
    g = monitor.records[0]["layers"]["net.2"]["gradient"]
    assert len(g["top"]) == 5 and g["method"] == "randomized"
    # the sketch (5 + 10 values) certifies this gradient's rank: it equals the exact SVD's
    from neurips26.lowrank_collapse import numerical_rank
    assert g["rank"] == numerical_rank(field.linear_layers[1].weight.grad) <= 15


def test_bad_inputs_name_what_is_allowed():
    field = MLPVectorField(2, width=8)
    with pytest.raises(TypeError, match=r"Tanh is not supported; supported: torch.nn.Linear, torch.nn.Conv1d"):
        RankMonitor(field, layers=[field.net[1]])
    with pytest.raises(ValueError, match="has no supported layer"):
        RankMonitor(torch.nn.Sequential(torch.nn.Tanh()))
    monitor = RankMonitor(field, every=5)
    with pytest.raises(NonFiniteError, match="step 7: loss is inf") as err:
        monitor(7, math.inf)
    assert err.value.step == 7
    with pytest.raises(KeyError, match="allowed: \\['net.0'"):
        monitor.history("nope")


def test_auto_method_is_exact_on_narrow_layers_and_randomized_on_wide_ones():
    """Catches: the randomised SVD used on narrow layers, where it was 0.27× the exact SVD's speed
    at width 64 (issue 37) and gives no exact rank."""
    from neurips26.lowrank_collapse.diagnostics import choose_svd_method

    field = MLPVectorField(2, width=64)
    monitor = RankMonitor(field, every=1)                     # default method="auto"
    field(0.5, torch.randn(16, 2)).pow(2).sum().backward()
    monitor(0)
    assert all(e["gradient"]["method"] == "exact" and e["gradient"]["rank"] is not None
               for e in monitor.records[0]["layers"].values())
    assert choose_svd_method((252, 1024)) == "exact"           # 6·(32 + 10) = 252 for the default k = 32
    assert choose_svd_method((253, 253)) == "randomized"
    assert choose_svd_method((253, 253), k=64) == "exact"
    assert choose_svd_method((2048, 8, 3, 3)) == "exact"      # conv (out, in·k·k) = (2048, 72)
    with pytest.raises(ValueError, match="allowed: 'auto', 'exact', 'randomized'"):
        RankMonitor(field, method="svd")


def test_auto_method_keeps_the_rank_of_a_wide_low_rank_layer():
    """Catches: the automatic switch to the randomised SVD on a 256-wide layer reporting
    ``rank: None`` for a rank-2 matrix (σ₃/σ₁ ≈ 1e-8 already in its top values) while
    ``method="exact"`` gives 2; the automatic method must never lose the rank."""
    g = torch.Generator().manual_seed(0)
    layer = torch.nn.Linear(256, 256, bias=False)
    model = torch.nn.Sequential(layer)
    for rank in (2, 40):          # within the sketch (k + oversample = 42 values) and near its edge
        layer.weight.grad = torch.randn(256, rank, generator=g) @ torch.randn(rank, 256, generator=g)
        got = {}
        for method in ("auto", "exact"):
            monitor = RankMonitor(model, every=1, method=method)
            monitor(0)
            got[method] = monitor.records[0]["layers"]["0"]["gradient"]
        assert got["exact"]["rank"] == rank and got["auto"]["rank"] == rank
    # a wide full-rank matrix: the sketch cannot certify the rank, so auto falls back to the exact SVD
    layer.weight.grad = torch.randn(256, 256, generator=g)
    monitor = RankMonitor(model, every=1)
    monitor(0)
    assert monitor.records[0]["layers"]["0"]["gradient"]["rank"] == 256
