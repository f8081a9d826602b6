"""``backend=auto``: the quick default of the LLM systems resolves, before any work, to the installed
local model (its weights hash in the config, so in the run's hash) or to ``none`` with every model
claim not checkable, saying how to install the model.

The models cache is pointed at a temporary folder (``NEURIPS26_MODELS``): an empty one is "not
installed"; one holding a manifest and a weights file of the recorded size is "installed"
(:func:`neurips26.backends.models.installed_path` checks no more). No model is loaded.
"""

from __future__ import annotations

import importlib
import json

import pytest

from neurips26.backends.models import MANIFEST
from neurips26.harness.config import AUTO_MODEL, NO_LOCAL_MODEL, model_label, no_model_reason, resolve_auto_backend
from neurips26.harness.runner import SystemSpec, make_task, resolve_config

SYSTEMS = ("ncp_tom", "text_uncanny_valley", "search_agent_attacks", "weight_interp", "alignment_limits")
SHA = "ab" * 32


def _module(system: str):
    return importlib.import_module(f"neurips26.{system}.experiment")


def _install_fake(root, sha: str = SHA) -> None:
    """A manifest and a weights file as :func:`neurips26.backends.models.install` leaves them."""
    folder = root / AUTO_MODEL
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"x" * 10)
    (folder / MANIFEST).write_text(json.dumps({"id": AUTO_MODEL, "weights_file": "model.safetensors",
                                               "weights_bytes": 10, "weights_sha256": sha}))


@pytest.fixture
def not_installed(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURIPS26_MODELS", str(tmp_path / "empty"))
    return tmp_path


@pytest.fixture
def installed(tmp_path, monkeypatch):
    monkeypatch.setenv("NEURIPS26_MODELS", str(tmp_path / "models"))
    _install_fake(tmp_path / "models")
    return tmp_path


def _model_of(config) -> str | None:
    return config.model if "backend" not in type(config).model_fields or config.backend == "transformers" else None


@pytest.mark.parametrize("system", SYSTEMS)
def test_auto_resolves_to_the_installed_model(system, installed):
    """Catches a quick config that still runs no model although one is installed (the model claims
    silently not checkable in the main job), or a resolution that leaves the weights hash out of the
    config (then a rerun with other weights would reuse a stale result)."""
    c = resolve_config(_module(system), "quick", {}, system)
    assert _model_of(c) == AUTO_MODEL
    assert getattr(c, "backend", "transformers") == "transformers"
    assert c.model_sha256 == SHA and c.backend_auto is True
    assert resolve_auto_backend(c) is c  # idempotent: the systems resolve again inside run()
    assert SHA[:12] in model_label(c)


@pytest.mark.parametrize("system", SYSTEMS)
def test_auto_resolves_to_none_when_not_installed(system, not_installed):
    """Catches a quick run that fails (or tries to install) when the model is absent instead of running
    without it, and a resolution that forgets it was auto (then the claims could not say why)."""
    c = resolve_config(_module(system), "quick", {}, system)
    assert _model_of(c) is None
    assert c.model_sha256 == "" and c.backend_auto is True
    assert no_model_reason(c, "other") == NO_LOCAL_MODEL


@pytest.mark.parametrize("system", SYSTEMS)
def test_installing_the_model_changes_the_run_hash(system, tmp_path, monkeypatch):
    """Catches a run hash that ignores what auto resolved to: a rerun after installing the model would
    then reuse the finished model-less result instead of computing the model claims."""
    spec = SystemSpec(system, _module(system), {})
    monkeypatch.setenv("NEURIPS26_MODELS", str(tmp_path / "models"))
    before = make_task(spec, resolve_config(spec.module, "quick", {}, system), scale="quick", seed=0, commit="x")
    _install_fake(tmp_path / "models")
    after = make_task(spec, resolve_config(spec.module, "quick", {}, system), scale="quick", seed=0, commit="x")
    assert before.run_key != after.run_key
    (tmp_path / "models" / AUTO_MODEL / MANIFEST).write_text(json.dumps({
        "id": AUTO_MODEL, "weights_file": "model.safetensors", "weights_bytes": 10, "weights_sha256": "cd" * 32}))
    other = make_task(spec, resolve_config(spec.module, "quick", {}, system), scale="quick", seed=0, commit="x")
    assert other.run_key != after.run_key  # other weights, another run


def test_explicit_none_stays_none_and_says_so(installed):
    """Catches ``--set backend=none`` being overridden by the installed model, or its claims blaming a
    missing install."""
    m = _module("text_uncanny_valley")
    c = resolve_config(m, "quick", {"backend": "none"}, "text_uncanny_valley")
    assert c.backend == "none" and c.backend_auto is False and c.model_sha256 == ""
    assert no_model_reason(c, "configured none") == "configured none"


def test_explicit_model_id_gets_its_hash(installed):
    """Catches an explicitly configured local model (``backend=transformers model=smollm2-135m``)
    whose claims cannot name the weights they ran on."""
    c = resolve_config(_module("search_agent_attacks"), "quick", {"backend": "transformers", "model": AUTO_MODEL},
                       "search_agent_attacks")
    assert c.model_sha256 == SHA and c.backend_auto is False


def test_model_claims_not_checkable_with_the_install_reason(not_installed):
    """Catches a model claim that, with no model installed, is dropped, judged, or given a reason that
    does not say how to install the model (each system's no-model path, called directly)."""
    cfg = {s: resolve_config(_module(s), "quick", {}, s) for s in SYSTEMS}
    claims = []
    tuv = _module("text_uncanny_valley")
    claims += tuv._llm_valley(cfg["text_uncanny_valley"], None, {}, None)[0]
    saa = _module("search_agent_attacks")
    claims += saa._llm_agent(cfg["search_agent_attacks"], None, {}, {}, None)[0]
    wi = _module("weight_interp")
    claims += wi._llm_arm(cfg["weight_interp"], None, {}, None, {})
    al = _module("alignment_limits")
    claims += al._real_model_claims(cfg["alignment_limits"], None, {})
    ncp = _module("ncp_tom")
    ncp_claims = ncp._paper_claims_need_frontier_models(cfg["ncp_tom"], {}, {}, "", {})
    local = [c for c in ncp_claims if c.id.startswith("tb_gt_fb_llm_")]
    assert {c.id for c in local} == {f"tb_gt_fb_llm_{s}" for s in cfg["ncp_tom"].settings}
    claims += local
    assert len(claims) >= 10
    for c in claims:
        assert c.verdict.value == "not_checkable", c.id
        assert c.reason == NO_LOCAL_MODEL, (c.id, c.reason)
        assert getattr(c.object, "value", c.object) == "real", c.id
    # the frontier-model claims keep their own reason
    gpt5 = next(c for c in ncp_claims if c.id == "gpt5_agentic_success")
    assert "GPT-5" in gpt5.reason
