"""Shared tiny fixtures: a word-level tokenizer, prompts, and untrained tiny Llama/Qwen2 models."""

import numpy as np
import pytest

from neurips26.counting_readout.models import build_tiny_model, make_counting_data
from neurips26.harness.context import torch_threads


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):
        yield


@pytest.fixture(autouse=True)
def _no_installed_model(monkeypatch):
    """Tests never load the installed SmolLM2 by default (model=auto): as if it were not installed.
    The tests of the default itself patch it back."""
    from neurips26.counting_readout import experiment as E

    monkeypatch.setattr(E, "default_local_model", lambda: None)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    """The real-model residual cache of each test in its own folder (never the user's ~/.cache)."""
    monkeypatch.setenv("NEURIPS26_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="session")
def small_data():
    return make_counting_data(np.random.default_rng(0), n_train=300, n_probe=270, n_test=135, n_text=60)


@pytest.fixture(scope="session", params=["llama", "qwen2"])
def tiny(request, small_data):
    return build_tiny_model(small_data.tokenizer, arch=request.param, hidden_size=32, layers=2, heads=4,
                            intermediate_size=64, seed=0).eval()
