"""Two tiny importable fake systems for the executor, seed and sweep tests.

Worker processes (the process pool, Ray) import a task's experiment module by name, so these
are real modules written to a folder on ``sys.path`` (the conftest's in-memory modules are not
importable elsewhere). Each run appends ``<system> <seed>`` to ``config.log`` so a test can
count which runs happened, in whichever process.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

ALPHA = '''
import os
import time

from pydantic import Field

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig, Resources


class Config(ExperimentConfig):
    spread: float = Field(1.0, gt=0, le=100, description="standard deviation of the draws")
    n: int = Field(400, ge=10, le=100_000)
    fail: bool = False
    die: bool = False
    sleep: float = Field(0.0, ge=0, le=30)
    gpus: float = Field(0.0, ge=0)
    credential: str = ""
    log: str = ""

    def resources(self):
        return Resources(num_cpus=1, num_gpus=self.gpus,
                         credentials=(self.credential,) if self.credential else (),
                         on_device="the fake work" if self.gpus else "")

    @classmethod
    def full(cls):
        return cls(n=1000)


def run(config, ctx):
    if config.log:
        with open(config.log, "a") as fh:
            fh.write(f"{__name__} {ctx.seed}\\n")
    if config.fail:
        raise RuntimeError("boom from the fake system")
    if config.die:
        os._exit(3)
    time.sleep(config.sleep)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = ctx.rng.normal(size=config.n) * config.spread
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.hist(x, bins=10)
    ctx.save_figure("hist", fig, caption="the draws")
    mean, sd = float(x.mean()), float(x.std())
    return Outcome(
        metrics={"mean": mean, "sd": sd, "tail": {"max": float(x.max())}, "draws": x[:3].tolist()},
        claims=[
            C.within("mean_near_zero", "the sample mean is near zero", measured=mean,
                     low=-0.2 * config.spread, high=0.2 * config.spread,
                     reason="four standard errors at n = 400", kind="check", source="inferred: test"),
            C.at_least("sd_above_one", "the sample sd exceeds the spread", measured=sd, bound=config.spread,
                       reason="a coin flip over seeds", kind="check", source="inferred: test"),
        ])
'''

BETA = '''
from pydantic import Field

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig


class Config(ExperimentConfig):
    k: int = Field(5, ge=1, le=1000)
    log: str = ""


def run(config, ctx):
    if config.log:
        with open(config.log, "a") as fh:
            fh.write(f"{__name__} {ctx.seed}\\n")
    draws = ctx.rng.integers(0, 10, size=config.k)
    total = int(draws.sum())
    return Outcome(metrics={"total": total},
                   claims=[C.at_most("total_bounded", "the total is at most 9 k", measured=total,
                                     bound=9 * config.k, reason="each draw is at most 9",
                                     kind="check", source="inferred: test")])
'''


def install(folder: Path) -> tuple[types.ModuleType, types.ModuleType]:
    """Write the two modules to ``folder``, put it on ``sys.path`` and import them."""
    import importlib

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "n26fake_alpha.py").write_text(ALPHA)
    (folder / "n26fake_beta.py").write_text(BETA)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    return importlib.import_module("n26fake_alpha"), importlib.import_module("n26fake_beta")
