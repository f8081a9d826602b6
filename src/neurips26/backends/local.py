"""A backend for a local ``transformers`` causal language model loaded from a user's folder.

Nothing is downloaded: the folder must hold a saved model and tokenizer
(``save_pretrained``), and loading uses ``local_files_only=True``. The prompt is built with the
tokenizer's chat template when it has one, else as ``"<role>: <content>"`` lines followed by
``"assistant:"``. Temperature 0 decodes greedily; otherwise it samples with a
``torch.Generator`` seeded from ``params.seed`` (default 0), so replies are reproducible.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from .base import BackendError, ChatParams, ChatReply, Message, as_messages
from .cache import ReplyCache


def load_local_folder(path: str | Path, what: str, load):
    """Load a model saved with ``save_pretrained`` from a user's folder; nothing is downloaded.

    Args:
        path: the folder; it must hold a ``config.json``.
        what: what is loaded, for the error message (``"a causal LM"``).
        load: ``load(path) -> objects``, called with the folder as a :class:`~pathlib.Path`
            (transformers' ``from_pretrained(..., local_files_only=True)`` calls).

    Returns:
        ``(path, objects)``.

    Raises:
        ValueError: if ``path`` is not a folder with a ``config.json``.
        BackendError: if ``load`` fails for any reason (bad config, missing weights, a tokenizer
            needing an absent package, an unknown model_type), as one line naming the folder.
    """
    path = Path(path)
    if not (path / "config.json").is_file():
        raise ValueError(f"model_path {str(path)!r} has no config.json; give a folder written by "
                         "save_pretrained (nothing is downloaded)")
    try:
        return path, load(path)
    except Exception as exc:  # noqa: BLE001 — any failure to load a user's folder is one error
        detail = " ".join(str(exc).split())[:300]  # transformers' messages span lines; the CLI shows one
        raise BackendError(f"cannot load {what} from {str(path)!r}: {type(exc).__name__}: {detail}") from exc


class TransformersBackend:
    """Chat with a local causal LM.

    Args:
        path: folder with ``config.json``, the weights and the tokenizer files.
        device: torch device string (``cpu``, ``cuda``).
        cache: optional :class:`ReplyCache`.

    Raises:
        ValueError: if ``path`` is not a folder with a ``config.json``.
        BackendError: if transformers cannot load the model or tokenizer from it (one-line message).
    """

    def __init__(self, path: str | Path, *, device: str = "cpu", cache: ReplyCache | None = None) -> None:
        if (Path(path) / "config.json").is_file():  # a missing folder is load_local_folder's ValueError
            from transformers import AutoModelForCausalLM, AutoTokenizer
        path, (self.tokenizer, self.model) = load_local_folder(path, "a causal LM", lambda p: (
            AutoTokenizer.from_pretrained(p, local_files_only=True),
            AutoModelForCausalLM.from_pretrained(p, local_files_only=True).to(device).eval()))
        self.path, self.device, self.cache = path, device, cache
        self.name = f"transformers:{path.name}"

    def identity(self) -> dict:
        """Cache identity: the resolved folder."""
        return {"kind": "transformers", "path": str(self.path.resolve())}

    def prompt_text(self, messages: Sequence[Message]) -> str:
        """The prompt string fed to the model."""
        msgs = [m.to_dict() for m in as_messages(messages)]
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        return "\n".join(f"{m['role']}: {m['content']}" for m in msgs) + "\nassistant:"

    def chat(self, messages: Sequence[Message], params: ChatParams = ChatParams()) -> ChatReply:
        """Generate up to ``params.max_tokens`` new tokens.

        Raises:
            BackendError: if generation fails (e.g. the prompt exceeds the model's context).
        """
        import torch

        msgs = as_messages(messages)
        key = ReplyCache.key(self.identity(), msgs, params) if self.cache else ""
        if self.cache and (hit := self.cache.get(key)) is not None:
            return hit
        t0 = time.perf_counter()
        enc = self.tokenizer(self.prompt_text(msgs), return_tensors="pt").to(self.device)
        n_prompt = int(enc["input_ids"].shape[1])
        gen_kwargs = {"max_new_tokens": params.max_tokens, "do_sample": params.temperature > 0}
        if params.temperature > 0:
            gen_kwargs["temperature"] = params.temperature
            torch.manual_seed(params.seed or 0)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        try:
            with torch.no_grad():
                out = self.model.generate(**enc, pad_token_id=pad, **gen_kwargs)
        except (RuntimeError, ValueError, IndexError) as exc:
            raise BackendError(f"{self.name}: generation failed: {exc}") from exc
        new = out[0, n_prompt:]
        reply = ChatReply(text=self.tokenizer.decode(new, skip_special_tokens=True),
                          prompt_tokens=n_prompt, completion_tokens=int(new.shape[0]),
                          latency_s=time.perf_counter() - t0, model=self.name)
        if self.cache:
            self.cache.put(key, reply)
        return reply


_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                 "pytorch_model.bin.index.json")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")


def check_model_folder(path: str | Path, *, tokenizer: bool = True) -> Path:
    """Open and validate a local checkpoint folder in seconds, before any model is trained or loaded.

    Checks, in order: the folder exists; ``config.json`` parses as JSON and transformers reads it
    as a config of a known ``model_type``; a weights file is present (``model.safetensors``,
    ``model.safetensors.index.json``, ``pytorch_model.bin(.index.json)`` or ``*.safetensors``)
    and every ``*.safetensors`` header parses; with ``tokenizer`` (default), tokenizer files are
    present (``tokenizer.json``, ``tokenizer.model`` or ``vocab.json``) and a ``tokenizer.json``
    loads with the tokenizers library. Nothing is downloaded.

    Returns:
        the folder as a :class:`~pathlib.Path`.

    Raises:
        ValueError: one line naming the file and what is allowed, for the first problem found.
    """
    import json
    import struct

    p = Path(path).expanduser()
    save = "a folder written by save_pretrained (config.json, weights, tokenizer files); nothing is downloaded"
    if not p.is_dir():
        raise ValueError(f"model_path={str(path)!r} is not a folder; give {save}")
    cfg = p / "config.json"
    if not cfg.is_file():
        raise ValueError(f"{cfg} is missing; give {save}")
    try:
        raw = json.loads(cfg.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{cfg} is not valid JSON ({' '.join(str(exc).split())}); allowed: the config.json "
                         "written by save_pretrained") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("model_type"), str):
        raise ValueError(f"{cfg} has no \"model_type\" string; allowed: the config.json written by save_pretrained")
    from transformers import AutoConfig

    try:
        AutoConfig.from_pretrained(p, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 — any config transformers cannot read is one error
        raise ValueError(f"{cfg}: transformers cannot load this config ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]})") from None
    weights = [p / f for f in _WEIGHT_FILES if (p / f).is_file()] + sorted(p.glob("*.safetensors"))
    if not weights:
        raise ValueError(f"{p} holds no weights; allowed: {', '.join(_WEIGHT_FILES)} or *.safetensors shards")
    for w in sorted(set(weights)):
        if w.suffix != ".safetensors":
            continue
        try:
            with open(w, "rb") as fh:
                n = struct.unpack("<Q", fh.read(8))[0]
                if not 2 <= n <= 100_000_000:
                    raise ValueError(f"header length {n}")
                json.loads(fh.read(n))
        except (struct.error, ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"{w} is not a readable safetensors file ({' '.join(str(exc).split())[:120]}); "
                             "allowed: the weights written by save_pretrained") from None
    if not tokenizer:
        return p
    toks = [f for f in _TOKENIZER_FILES if (p / f).is_file()]
    if not toks:
        raise ValueError(f"{p} has no tokenizer files; allowed: {', '.join(_TOKENIZER_FILES)} (save the tokenizer "
                         "with tokenizer.save_pretrained into the same folder)")
    if "tokenizer.json" in toks:
        from tokenizers import Tokenizer

        try:
            Tokenizer.from_file(str(p / "tokenizer.json"))
        except Exception as exc:  # noqa: BLE001 — the tokenizers library raises a bare Exception
            raise ValueError(f"{p / 'tokenizer.json'} is not a valid tokenizers file ({' '.join(str(exc).split())[:120]}); "
                             "allowed: the tokenizer.json written by save_pretrained") from None
    return p
