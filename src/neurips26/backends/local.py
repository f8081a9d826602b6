"""A backend for a local ``transformers`` causal language model loaded from a user's folder.

Nothing is downloaded: the folder must hold a saved model and tokenizer
(``save_pretrained``), and loading uses ``local_files_only=True``. The prompt is built with the
tokenizer's chat template when it has one, else as ``"<role>: <content>"`` lines followed by
``"assistant:"``. Temperature 0 decodes greedily; otherwise it samples with a
``torch.Generator`` seeded from ``params.seed`` (default 0), so replies are reproducible.
"""

from __future__ import annotations

import os
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


_FINGERPRINTS: dict[tuple[str, int, int], str] = {}


def weights_fingerprint(path: str | Path) -> str:
    """SHA-256 over a checkpoint folder's weight files (names and bytes, sorted by name).

    Memoised in-process by (file, size, modification time), so a backend built twice on the same
    folder hashes once (≈ 0.5 CPU-s for 269 MB). A folder with no weight file gives ``""``.
    """
    import hashlib

    p = Path(path)
    files = sorted({f for f in p.glob("*.safetensors")} | {p / f for f in _WEIGHT_FILES if (p / f).is_file()}
                   | set(p.glob("pytorch_model*.bin")))
    h = hashlib.sha256()
    from .models import sha256_file

    for f in files:
        st = f.stat()
        k = (str(f.resolve()), st.st_size, st.st_mtime_ns)
        if k not in _FINGERPRINTS:
            _FINGERPRINTS[k] = sha256_file(f)
        h.update(f"{f.name}:{_FINGERPRINTS[k]};".encode())
    return h.hexdigest() if files else ""


def free_threads() -> int:
    """Torch threads for a model run: the cores not busy by the 1-minute load average, at least 1.

    On a shared machine this is 1 (two torch threads on a busy 2-core machine ran 6× slower than one).
    """
    n = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float(n)
    return max(1, min(n, int(n - load)))


def _cache_name() -> str:
    """The generate() keyword and output field of the attention cache: ``cache`` since transformers
    renamed it (``past_key_values`` then only warns), ``past_key_values`` before."""
    from transformers.generation.utils import GenerateDecoderOnlyOutput

    return "cache" if "cache" in getattr(GenerateDecoderOnlyOutput, "__dataclass_fields__", {}) else "past_key_values"


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class TransformersBackend:
    """Chat with a local causal LM, reusing the key-value cache across turns of a conversation.

    The backend keeps the attention cache of its last ``prefix_slots`` generations (prompt and
    reply tokens). A new prompt that starts with the tokens of one of them (the next turn of a
    conversation, or another prompt with the same system message) is read only from where they
    differ: :attr:`ChatReply.cached_prompt_tokens` counts the tokens not read again. Greedy replies
    are the same as without reuse up to floating-point rounding of the attention sums.

    Args:
        path: a model id of :data:`neurips26.backends.models.MODELS` (installed on first use) or a
            folder with ``config.json``, the weights and the tokenizer files.
        device: torch device string (``cpu``, ``cuda``).
        cache: optional :class:`ReplyCache`.
        threads: torch threads while generating (``None``: :func:`free_threads`, 1 on a busy machine).
        prefix_slots: conversations whose attention cache is kept (0: no reuse).
        dtype: ``None`` (as saved) or a torch dtype name (``"float32"``, ``"bfloat16"``).

    Raises:
        ValueError: if ``path`` is neither a known model id nor a folder with a ``config.json``;
            bad ``threads``/``prefix_slots``.
        BackendError: if transformers cannot load the model or tokenizer from it (one-line message).
    """

    def __init__(self, path: str | Path, *, device: str = "cpu", cache: ReplyCache | None = None,
                 threads: int | None = None, prefix_slots: int = 4, dtype: str | None = None) -> None:
        from .models import MODELS, resolve_model

        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be an integer >= 1 or None, got {threads!r}")
        if isinstance(prefix_slots, bool) or not isinstance(prefix_slots, int) or prefix_slots < 0:
            raise ValueError(f"prefix_slots must be an integer >= 0, got {prefix_slots!r}")
        self.model_id = str(path) if str(path) in MODELS else ""
        if self.model_id:
            path = resolve_model(path)
        kw = {"local_files_only": True}
        if (Path(path) / "config.json").is_file():  # a missing folder is load_local_folder's ValueError
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            if dtype is not None:
                if not isinstance(getattr(torch, str(dtype), None), torch.dtype):
                    raise ValueError(f"dtype {dtype!r} is not a torch dtype name (e.g. float32, bfloat16)")
                kw["dtype"] = getattr(torch, dtype)
        path, (self.tokenizer, self.model) = load_local_folder(path, "a causal LM", lambda p: (
            AutoTokenizer.from_pretrained(p, local_files_only=True),
            AutoModelForCausalLM.from_pretrained(p, **kw).to(device).eval()))
        self.path, self.device, self.cache = path, device, cache
        self.threads = threads
        self.prefix_slots = prefix_slots
        self._slots: list[tuple[list[int], object]] = []
        self.name = f"transformers:{self.model_id or path.name}"
        self._fingerprint = weights_fingerprint(path)

    def identity(self) -> dict:
        """Cache identity: the model id (if any), the resolved folder and the SHA-256 of its weights,
        so two checkpoints in folders of the same name, or a folder retrained in place, never share
        replies."""
        return {"kind": "transformers", "model": self.model_id, "path": str(self.path.resolve()),
                "weights": self._fingerprint}

    def prompt_text(self, messages: Sequence[Message]) -> str:
        """The prompt string fed to the model."""
        msgs = [m.to_dict() for m in as_messages(messages)]
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        return "\n".join(f"{m['role']}: {m['content']}" for m in msgs) + "\nassistant:"

    def _prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        return self.tokenizer(self.prompt_text(messages))["input_ids"]

    def _gen_kwargs(self, params: ChatParams, prompt_len: int) -> dict:
        import torch

        from .constrain import RegexLogitsProcessor, params_regex

        tok = self.tokenizer
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        kw = {"max_new_tokens": params.max_tokens, "do_sample": params.temperature > 0, "pad_token_id": pad}
        if params.temperature > 0:
            kw["temperature"] = params.temperature
            torch.manual_seed(params.seed or 0)
        else:  # greedy: silence sampling defaults a generation_config.json may carry
            kw.update(temperature=None, top_p=None, top_k=None)
        if params.repetition_penalty != 1.0:
            kw["repetition_penalty"] = params.repetition_penalty
        if params.stop:
            kw.update(stop_strings=list(params.stop), tokenizer=tok)
        pattern = params_regex(params)
        if pattern is not None:
            from transformers import LogitsProcessorList

            eos = self.model.generation_config.eos_token_id
            eos = eos[0] if isinstance(eos, list) else eos
            eos = tok.eos_token_id if eos is None else eos
            kw["logits_processor"] = LogitsProcessorList([RegexLogitsProcessor(pattern, tok, prompt_len, eos)])
        return kw

    def _finish(self, new_ids, params: ChatParams) -> str:
        text = self.tokenizer.decode(new_ids, skip_special_tokens=True)
        cut = [i for s in params.stop if (i := text.find(s)) >= 0]
        return text[:min(cut)] if cut else text

    def _take_prefix(self, ids: list[int]):
        """Pop the stored cache sharing the longest prefix with ``ids``, cropped to it (keeps ≥ 1 new token)."""
        best, best_n = -1, 0
        for i, (toks, _c) in enumerate(self._slots):
            n = _common_prefix(toks, ids)
            if n > best_n:
                best, best_n = i, n
        n = min(best_n, len(ids) - 1)
        if best < 0 or n < 1:
            return None, 0
        _toks, past = self._slots.pop(best)
        if past.get_seq_length() > n:
            past.crop(n - past.get_seq_length())  # a negative count removes that many tokens from the end
        return past, n

    def _store_prefix(self, toks: list[int], past) -> None:
        """Keep ``past`` (covering ``toks``) when every layer is a plain full-attention cache layer
        (sliding-window or linear-attention layers cannot be rolled back, so they are not reused)."""
        from transformers.cache_utils import DynamicLayer

        layers = getattr(past, "layers", None)
        if self.prefix_slots and layers and all(type(layer) is DynamicLayer for layer in layers):
            self._slots.insert(0, (toks, past))
            del self._slots[self.prefix_slots:]

    def chat(self, messages: Sequence[Message], params: ChatParams = ChatParams()) -> ChatReply:
        """Generate up to ``params.max_tokens`` new tokens (stop strings, repetition penalty and a
        choices/regex/JSON-schema constraint as ``params`` asks).

        Raises:
            BackendError: if generation fails (e.g. the prompt exceeds the model's context).
            ValueError: a constraint outside the supported subset (one line).
        """
        import torch

        from neurips26.harness.context import torch_threads

        msgs = as_messages(messages)
        key = ReplyCache.key(self.identity(), msgs, params) if self.cache else ""
        if self.cache and (hit := self.cache.get(key)) is not None:
            return hit
        t0 = time.perf_counter()
        ids = self._prompt_ids(msgs)
        n_prompt = len(ids)
        kw = self._gen_kwargs(params, n_prompt)
        past, reused = self._take_prefix(ids) if self.prefix_slots else (None, 0)
        if past is not None:
            kw[_cache_name()] = past
        input_ids = torch.tensor([ids], device=self.device)
        try:
            with torch.no_grad(), torch_threads(self.threads or free_threads()):
                out = self.model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                          return_dict_in_generate=True, use_cache=True, **kw)
        except (RuntimeError, ValueError, IndexError) as exc:
            raise BackendError(f"{self.name}: generation failed: {' '.join(str(exc).split())[:300]}") from exc
        seq = out.sequences[0]
        cache_obj = getattr(out, _cache_name(), None)
        if cache_obj is not None and hasattr(cache_obj, "get_seq_length"):
            self._store_prefix(seq[:cache_obj.get_seq_length()].tolist(), cache_obj)
        new = seq[n_prompt:]
        reply = ChatReply(text=self._finish(new, params), prompt_tokens=n_prompt,
                          completion_tokens=int(new.shape[0]), latency_s=time.perf_counter() - t0,
                          model=self.name, cached_prompt_tokens=reused)
        if self.cache:
            self.cache.put(key, reply)
        return reply

    def chat_batch(self, conversations: Sequence[Sequence[Message]],
                   params: ChatParams = ChatParams()) -> list[ChatReply]:
        """Replies to independent conversations, generated together in one left-padded batch.

        Cached replies are taken from the reply cache; the rest are generated at once (no prefix
        reuse). Greedy replies equal :meth:`chat`'s up to floating-point rounding (padding is masked).
        Each reply's ``latency_s`` is the batch's wall time divided by its size.

        Raises:
            BackendError: if generation fails.
        """
        import torch

        from neurips26.harness.context import torch_threads

        convs = [as_messages(c) for c in conversations]
        keys = [ReplyCache.key(self.identity(), c, params) if self.cache else "" for c in convs]
        replies: list[ChatReply | None] = [self.cache.get(k) if self.cache else None for k in keys]
        todo = [i for i, r in enumerate(replies) if r is None]
        if todo:
            t0 = time.perf_counter()
            rows = [self._prompt_ids(convs[i]) for i in todo]
            width = max(map(len, rows))
            pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
            input_ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows], device=self.device)
            mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows], device=self.device)
            kw = self._gen_kwargs(params, width)
            try:
                with torch.no_grad(), torch_threads(self.threads or free_threads()):
                    out = self.model.generate(input_ids=input_ids, attention_mask=mask, **kw)
            except (RuntimeError, ValueError, IndexError) as exc:
                raise BackendError(f"{self.name}: generation failed: {' '.join(str(exc).split())[:300]}") from exc
            dt = (time.perf_counter() - t0) / len(todo)
            eos = {self.tokenizer.eos_token_id, pad}
            for j, i in enumerate(todo):
                new = out[j, width:].tolist()
                n = len(new)
                while n and new[n - 1] in eos:  # padding after this row finished
                    n -= 1
                n = min(n + 1, len(new)) if n < len(new) else n  # count the end token itself, as chat() does
                reply = ChatReply(text=self._finish(new[:n], params), prompt_tokens=len(rows[j]),
                                  completion_tokens=n, latency_s=dt, model=self.name)
                if self.cache:
                    self.cache.put(keys[i], reply)
                replies[i] = reply
        return replies  # type: ignore[return-value]


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
