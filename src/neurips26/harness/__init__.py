"""The spine of neurips26: catalogue/registry, claims, results, run context, runner, report.

A system imports from here only: ``ExperimentConfig``, ``RunContext``, ``Outcome`` and the claim
helpers in ``neurips26.harness.claims``.
"""

from .catalogue import PAPERS, Paper, get_paper, implemented_papers, load_experiment
from .claims import Claim, Kind, Outcome, SeedRecord, Verdict
from .config import ConfigError, ExperimentConfig, Resources
from .context import RunContext
from .results import Result, atomic_write_text, latest_results, load_result

__all__ = [
    "PAPERS", "Paper", "get_paper", "implemented_papers", "load_experiment",
    "Claim", "Kind", "Outcome", "SeedRecord", "Verdict", "ConfigError", "ExperimentConfig", "Resources", "RunContext",
    "Result", "atomic_write_text", "latest_results", "load_result",
]
