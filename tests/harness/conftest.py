"""Fake systems for the spine's tests (a config with validated fields and a run function)."""

from __future__ import annotations

import types

import pytest
from pydantic import Field

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig


class FakeConfig(ExperimentConfig):
    eta: float = Field(0.1, gt=0, description="learning rate")
    steps: int = Field(3, ge=1)
    fail: bool = False

    @classmethod
    def full(cls):
        return cls(steps=100)


def fake_module(calls: list, interrupt: bool = False) -> types.ModuleType:
    mod = types.ModuleType("fake_experiment")
    mod.Config = FakeConfig

    def run(config, ctx):
        calls.append(config)
        if interrupt:
            raise KeyboardInterrupt
        if config.fail:
            raise RuntimeError("boom")
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        total = sum(1 for _ in ctx.track(range(config.steps), "steps"))
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, config.eta])
        ctx.save_figure("line", fig)
        return Outcome(metrics={"total": total, "draw": float(ctx.rng.normal())},
                       claims=[C.close("eta", "eta is small", measured=config.eta, target=0.1, abs_tol=0.05,
                                       reason="test", kind="check", source="inferred: test")])

    mod.run = run
    return mod



@pytest.fixture
def make_fake():
    """``make_fake(calls, interrupt=False)`` builds a fake experiment module; ``make_fake.Config``."""
    fake_module.Config = FakeConfig
    return fake_module
