"""Full configurations say what they need, so `--scale full` lands on a GPU node or refuses early;
quick configurations need one CPU and no credential (they run in CI)."""

import importlib

import pytest

GPU = ["lanczos_ddpm", "lowrank_collapse", "feature_learning"]
ENDPOINT = ["ncp_tom", "text_uncanny_valley", "search_agent_attacks"]


@pytest.mark.parametrize("system", GPU + ENDPOINT)
def test_quick_needs_no_gpu_or_credential(system):
    r = importlib.import_module(f"neurips26.{system}.experiment").Config.quick().resources()
    assert r.num_gpus == 0 and r.credentials == ()


@pytest.mark.parametrize("system", GPU)
def test_full_declares_a_gpu(system):
    assert importlib.import_module(f"neurips26.{system}.experiment").Config.full().resources().num_gpus >= 1


@pytest.mark.parametrize("system", ENDPOINT)
def test_full_declares_the_api_key(system):
    r = importlib.import_module(f"neurips26.{system}.experiment").Config.full().resources()
    assert "OPENAI_API_KEY" in r.credentials
