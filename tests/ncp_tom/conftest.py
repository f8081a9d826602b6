"""A small generated instance set shared by the ncp_tom tests (generated once per session)."""

from __future__ import annotations

import pytest

from neurips26.ncp_tom import generate_instances


@pytest.fixture(scope="session")
def instances():
    """120 instances (30 per goal type × 5 contexts round-robin), seed 7."""
    insts, _ = generate_instances(120, seed=7)
    return insts
