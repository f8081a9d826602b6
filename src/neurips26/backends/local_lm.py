"""A local causal LM read through its log-probabilities: constrained choice among candidate
replies and per-token surprisal, cheap enough for one CPU thread.

Small instruction models (SmolLM2-135M-Instruct) follow none of the free-text reply formats of
the agent protocols here; reading the model's log-probabilities is a constrained decoder over a
finite grammar: every reply the grammar allows is scored as the assistant's reply to the same
chat prompt (one forward pass over the prompt, then one batched pass over all candidates with
the prompt's key/value cache), and the most probable one (mean log-probability per token, so
that short replies are not favoured) is the model's reply. Nothing is ever malformed, so the
malformed share of such an arm is 0 by construction (said so wherever it is reported).

Used by ncp-tom (agent actions), search-agent-attacks (action keyword) and text-uncanny-valley
(per-line surprisal). Model folders: a ``save_pretrained`` folder, or a short id resolved by
``neurips26.backends.models.resolve_model`` when that module exists (:func:`model_folder`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence


def model_folder(name_or_path: str) -> Path:
    """The model folder for ``name_or_path``: an existing folder as is, otherwise the short id
    resolved by ``neurips26.backends.models.resolve_model`` (``smollm2-135m``).

    Raises:
        ValueError: an empty name, or not a folder and no resolver knows the name (one line, the value).
    """
    if not str(name_or_path).strip():  # Path("") is the working directory: never load from there
        raise ValueError("no local model given: --set model=smollm2-135m (see `neurips26 models list`) "
                         "or --set model_path=FOLDER")
    p = Path(name_or_path).expanduser()
    if p.is_dir():
        return p
    try:
        from neurips26.backends.models import resolve_model  # type: ignore[import-not-found]
    except ImportError:
        raise ValueError(f"model {name_or_path!r} is not a folder and no model registry is installed; "
                         "give a folder written by save_pretrained") from None
    return Path(resolve_model(name_or_path))


@dataclass
class LMUsage:
    """What the model did: forward calls, tokens read (prompts, candidates) and CPU seconds."""

    calls: int = 0
    prompt_tokens: int = 0
    candidate_tokens: int = 0
    cpu_s: float = 0.0
    by_kind: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "candidate_tokens": self.candidate_tokens, "cpu_s": round(self.cpu_s, 2), "by_kind": self.by_kind}


class LocalLM:
    """A transformers causal LM (weights in their stored dtype) read through log-probabilities.

    Args:
        folder: a ``save_pretrained`` folder (or a short id, :func:`model_folder`).
        threads: torch threads while scoring (1: the shared machine's cores are busy).

    Raises:
        ValueError: the folder does not exist (one line).
    """

    def __init__(self, folder: str | Path, *, threads: int = 1) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.folder = model_folder(str(folder))
        self.threads = int(threads)
        self.tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True)
        self.model = AutoModelForCausalLM.from_pretrained(self.folder, local_files_only=True, dtype="auto").eval()
        self.name = self.folder.name
        self.usage = LMUsage()

    def chat_prompt(self, messages: Sequence[dict]) -> str:
        """The chat template applied to ``messages`` (``{"role", "content"}`` dicts), ending where
        the assistant's reply starts."""
        msgs = [dict(m) for m in messages]
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        return "\n".join(f"{m['role']}: {m['content']}" for m in msgs) + "\nassistant:"

    def _run(self, fn, kind: str):
        import torch

        old = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        t0 = time.process_time()
        try:
            with torch.no_grad():
                return fn(torch)
        finally:
            dt = time.process_time() - t0
            torch.set_num_threads(old)
            self.usage.calls += 1
            self.usage.cpu_s += dt
            self.usage.by_kind[kind] = self.usage.by_kind.get(kind, 0) + 1

    def choice_logprobs(self, prompt: str, candidates: Sequence[str]) -> list[float]:
        """Mean log-probability per token of each candidate continuation of ``prompt`` (a string
        already in the model's chat format, e.g. :meth:`chat_prompt` plus a reply prefix).

        Raises:
            ValueError: no candidates, or an empty candidate.
        """
        if not candidates or any(not c for c in candidates):
            raise ValueError("candidates must be a non-empty list of non-empty strings")

        def fn(torch):
            p_ids = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"]
            c_ids = [self.tokenizer(c, add_special_tokens=False)["input_ids"] for c in candidates]
            out = self.model(input_ids=p_ids, use_cache=True)
            last = torch.log_softmax(out.logits[0, -1].float(), -1)
            cache = out.past_key_values
            n, width = len(c_ids), max(len(c) for c in c_ids)
            cache.batch_repeat_interleave(n)
            pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
            ids = torch.full((n, width), pad, dtype=torch.long)
            mask = torch.zeros((n, p_ids.shape[1] + width), dtype=torch.long)
            mask[:, :p_ids.shape[1]] = 1
            for i, c in enumerate(c_ids):
                ids[i, :len(c)] = torch.tensor(c)
                mask[i, p_ids.shape[1]:p_ids.shape[1] + len(c)] = 1
            self.usage.prompt_tokens += int(p_ids.shape[1])
            self.usage.candidate_tokens += sum(len(c) for c in c_ids)
            logp = torch.log_softmax(self.model(input_ids=ids, attention_mask=mask, past_key_values=cache).logits.float(), -1)
            scores = []
            for i, c in enumerate(c_ids):
                total = float(last[c[0]])
                for j in range(1, len(c)):
                    total += float(logp[i, j - 1, c[j]])
                scores.append(total / len(c))
            return scores

        return self._run(fn, "choice")

    def choose(self, prompt: str, candidates: Sequence[str]) -> int:
        """Index of the most probable candidate (:meth:`choice_logprobs`; ties: the first)."""
        scores = self.choice_logprobs(prompt, candidates)
        return max(range(len(scores)), key=lambda i: (scores[i], -i))

    def token_surprisal(self, text: str) -> tuple[list[tuple[int, int]], list[float]]:
        """Character spans and surprisal (nats) of every token of ``text`` after the first.

        Returns:
            ``(spans, surprisal)``: ``spans[k] = (start, end)`` character offsets of token k+1 in
            ``text``; ``surprisal[k] = -log p(token k+1 | tokens <= k)``.
        """
        def fn(torch):
            enc = self.tokenizer(text, return_tensors="pt", add_special_tokens=False, return_offsets_mapping=True)
            ids = enc["input_ids"]
            self.usage.prompt_tokens += int(ids.shape[1])
            logp = torch.log_softmax(self.model(input_ids=ids).logits[0, :-1].float(), -1)
            s = (-logp.gather(1, ids[0, 1:, None])[:, 0]).tolist()
            spans = [tuple(int(v) for v in o) for o in enc["offset_mapping"][0, 1:].tolist()]
            return spans, s

        return self._run(fn, "surprisal")

    def complete(self, prompt: str, *, max_new_tokens: int = 16, stop: str = "\n") -> str:
        """Greedy continuation of ``prompt`` (a string in the model's chat format, e.g. a reply
        prefix forced by a grammar), cut at the first ``stop``; at most ``max_new_tokens`` tokens.

        Raises:
            ValueError: ``max_new_tokens`` < 1.
        """
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens={max_new_tokens}; allowed: >= 1")

        def fn(torch):
            enc = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
            pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
            out = self.model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=pad)
            new = out[0, enc["input_ids"].shape[1]:]
            self.usage.prompt_tokens += int(enc["input_ids"].shape[1])
            self.usage.candidate_tokens += int(new.shape[0])
            return self.tokenizer.decode(new, skip_special_tokens=True).split(stop)[0].strip()

        return self._run(fn, "complete")
