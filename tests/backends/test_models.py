

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
