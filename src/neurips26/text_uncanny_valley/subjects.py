"""Subjects that answer detection prompts: chat models, a small local detector, a scripted mock.

A *subject* is a callable ``Rendered -> str`` (the response text); it raises
:class:`neurips26.backends.BackendError` when it cannot answer (counted, never scored).

* :func:`chat_subject`: any :mod:`neurips26.backends` chat backend — an OpenAI-compatible
  endpoint or a local transformers model loaded from a folder — at temperature 0.
* :class:`LineDetector`: a small needle detector trained in-process (inferred stand-in for an
  LLM, used as a ``reconstruction``): hashed bag of real BPE tokens and token bigrams of each
  line, logistic regression. Trained on clean text only (``word mode``) or on clean and fully
  fragmented text (``word + character modes``) — the abstract's mode-transition hypothesis says
  the valley sits between two modes that each work.
* :func:`mode_mixture_subject`: a scripted mock with a known valley; it only tests the harness
  (sweep, bootstrap, U-test) and is no evidence for the hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .tasks import Rendered, fragment_line
from .tokenisation import Tokenizer

Subject = Callable[[Rendered], str]


class ChatSubject:
    """A chat backend (``backend.chat(messages, params)``) as a subject, temperature 0.

    A reply that hit the token limit (``completion_tokens >= max_tokens``) is still a reply: it is
    scored on what it says and counted in :attr:`truncated` (never as a failed call). Backend
    failures raise ``BackendError`` (counted by the caller, never scored).

    Attributes:
        replies: replies received.
        truncated: replies cut off at ``max_tokens``.
    """

    def __init__(self, backend, *, max_tokens: int = 1024, seed: int | None = None) -> None:
        from neurips26.backends import ChatParams

        self.backend, self.max_tokens = backend, int(max_tokens)
        self.params = ChatParams(temperature=0.0, max_tokens=self.max_tokens, seed=seed)
        self.replies = self.truncated = 0

    def __call__(self, rendered: Rendered) -> str:
        """The reply text to ``rendered``'s messages."""
        from neurips26.backends import as_messages

        reply = self.backend.chat(as_messages(rendered.messages), self.params)
        self.replies += 1
        if reply.completion_tokens and reply.completion_tokens >= self.max_tokens:
            self.truncated += 1
        return reply.text


def chat_subject(backend, *, max_tokens: int = 1024, seed: int | None = None) -> ChatSubject:
    """Wrap a chat backend as a subject (:class:`ChatSubject`): temperature 0; a reply cut off at
    ``max_tokens`` is scored and counted in ``.truncated``, not treated as a failed call."""
    return ChatSubject(backend, max_tokens=max_tokens, seed=seed)


class SurprisalSubject:
    """A local model's log-probabilities as a needle detector (cheap: one forward pass per
    document, no generation).

    The model reads the rendered task prompt (chat template, the system and user messages as a
    chat model would get them); each recitation line's mean token surprisal (nats) is computed
    from that single pass, and the ``k`` most surprising lines (``k`` = the number of needles) are
    the answer, as shown. A needle is new text, every other recitation line was shown in the
    original poem just before, so a reader that can match lines across the two copies finds the
    needles; fragmentation changes how the lines tokenise. Needle items only.

    Attributes:
        lm: a :class:`~neurips26.backends.local_lm.LocalLM`.
        calls: documents read.
    """

    def __init__(self, lm) -> None:
        self.lm, self.calls = lm, 0

    def line_surprisal(self, rendered: Rendered) -> list[float]:
        """Mean surprisal (nats per token) of each recitation line of the last user message."""
        prompt = self.lm.chat_prompt(rendered.messages)
        shown = [rendered.shown[ln] for ln in rendered.item.recitation]
        start = prompt.rfind("\n".join(shown))
        if start < 0:
            raise ValueError("the recitation block is not in the prompt as rendered")
        spans, sur = self.lm.token_surprisal(prompt)
        self.calls += 1
        out, pos = [], start
        for line in shown:
            lo, hi = pos, pos + len(line)
            vals = [v for (a, b), v in zip(spans, sur) if a < hi and b > lo]
            out.append(float(np.mean(vals)) if vals else float("nan"))
            pos = hi + 1
        return out

    def __call__(self, rendered: Rendered) -> str:
        """The ``k`` most surprising recitation lines (as shown), one per line."""
        if rendered.item.task != "needle":
            raise ValueError(f"SurprisalSubject answers needle items only, got task {rendered.item.task!r}")
        sur = np.nan_to_num(np.asarray(self.line_surprisal(rendered)), nan=-np.inf)
        k = len(rendered.item.targets)
        top = sorted(np.argsort(-sur, kind="stable")[:k].tolist())
        return "\n".join(rendered.shown[rendered.item.recitation[i]] for i in top)


class CallMeter:
    """Counts model calls of a long backend sweep and shows progress: calls done of the total,
    failed, rate (calls/s) and time left at that rate.

    With a progress display (``RunContext.progress``, a rich ``Progress``) the line is a progress
    bar whose description carries the counts; without one a line is printed to stderr at most every
    ``every_s`` seconds (and at the end).

    Args:
        total: calls planned (> 0).
        label: what is being called (``LLM sweep``).
        progress: a rich ``Progress`` or ``None``.
        every_s: seconds between printed lines without a progress display.
        stream: where lines go without a progress display (default ``sys.stderr``).

    Attributes:
        calls, failed: calls made and those that raised ``BackendError``.
    """

    def __init__(self, total: int, label: str = "backend calls", progress=None, every_s: float = 10.0,
                 stream=None) -> None:
        import sys
        import time

        if total < 1:
            raise ValueError(f"CallMeter: total={total}; allowed: >= 1")
        self.total, self.label, self.progress, self.every_s = int(total), label, progress, float(every_s)
        self.stream = stream if stream is not None else sys.stderr
        self.calls = self.failed = 0
        self._t0 = self._last = time.perf_counter()
        self._task = progress.add_task(self.status(), total=self.total) if progress is not None else None

    def status(self) -> str:
        """``label: 120/1200 calls, 3 failed, 2.1 calls/s, ~8.6 min left``."""
        import time

        dt = max(time.perf_counter() - self._t0, 1e-9)
        rate = self.calls / dt
        left = (self.total - self.calls) / rate if rate > 0 else float("inf")
        eta = "?" if not np.isfinite(left) else f"{left / 60:.1f} min" if left >= 60 else f"{left:.0f} s"
        return f"{self.label}: {self.calls}/{self.total} calls, {self.failed} failed, {rate:.2f} calls/s, ~{eta} left"

    def tick(self, failed: bool = False) -> None:
        """Count one call (``failed``: it raised)."""
        import time

        self.calls += 1
        self.failed += bool(failed)
        if self._task is not None:
            self.progress.update(self._task, advance=1, description=f"  {self.status()}")
        elif time.perf_counter() - self._last >= self.every_s or self.calls == self.total:
            self._last = time.perf_counter()
            print(self.status(), file=self.stream, flush=True)

    def close(self) -> None:
        """Remove the progress bar (if any)."""
        if self._task is not None:
            self.progress.remove_task(self._task)
            self._task = None

    def wrap(self, fn: Callable) -> Callable:
        """``fn`` (a subject or a chat call) with every call counted; ``BackendError`` counts a failure."""
        from neurips26.backends import BackendError

        def counted(*args, **kwargs):
            try:
                out = fn(*args, **kwargs)
            except BackendError:
                self.tick(failed=True)
                raise
            self.tick()
            return out

        return counted


def _features(tokenizer: Tokenizer, lines: Sequence[str], n_buckets: int, cache: dict | None = None):
    """Hashed token-unigram and token-bigram counts of each line: scipy CSR (len(lines), n_buckets).

    ``cache`` (line → token ids) avoids re-encoding lines seen before (sweeps repeat lines)."""
    from scipy import sparse

    cache = {} if cache is None else cache
    todo = sorted({ln for ln in lines if ln not in cache})
    if todo:
        for ln, ids in zip(todo, tokenizer.encode_batch([" " + ln for ln in todo])):
            cache[ln] = np.asarray(ids, dtype=np.int64)
    rows, cols = [], []
    for i, ln in enumerate(lines):
        ids = cache[ln]
        uni = ids * 1_000_003 % n_buckets
        bi = (ids[:-1] * 2_654_435_761 + ids[1:] * 40_503) % n_buckets
        feats = np.concatenate([uni, bi])
        rows.append(np.full(feats.size, i))
        cols.append(feats)
    r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    return sparse.csr_matrix((np.ones(r.size), (r, c)), shape=(len(lines), n_buckets))


@dataclass
class LineDetector:
    """Logistic regression on hashed BPE tokens and bigrams; flags needle lines.

    Attributes:
        tokenizer: the vocabulary (``tokenisation.load_tokenizer``).
        train_rates: insertion rates the training lines are fragmented at (``(0.0,)`` = word
            mode only; ``(0.0, 1.0)`` = word and character modes).
        n_buckets: hashed feature dimension.
        seed: training seed.
    """

    tokenizer: Tokenizer
    train_rates: tuple[float, ...] = (0.0, 1.0)
    n_buckets: int = 2 ** 15
    seed: int = 0

    def fit(self, positives: Sequence[str], negatives: Sequence[str]) -> "LineDetector":
        """Train on clean positive (needle) and negative (poem) lines, each fragmented at every
        training rate with a few seeds.

        Raises:
            ValueError: an empty class.
        """
        from sklearn.linear_model import LogisticRegression

        if not positives or not negatives:
            raise ValueError("fit() needs at least one positive and one negative line")
        lines, labels = [], []
        for p in self.train_rates:
            for s in range(3 if 0.0 < p < 1.0 else 1):
                for y, group in ((1, positives), (0, negatives)):
                    lines += [fragment_line(ln, p, self.seed * 7919 + s) for ln in group]
                    labels += [y] * len(group)
        X = _features(self.tokenizer, lines, self.n_buckets)
        self.model_ = LogisticRegression(C=1.0, solver="liblinear", class_weight="balanced").fit(X, labels)
        return self

    def predict_proba(self, lines: Sequence[str]) -> np.ndarray:
        """P(needle) for each line as shown (fragmented or not); float array (len(lines),)."""
        if not hasattr(self, "model_"):
            raise RuntimeError("LineDetector is not fitted; call fit() first")
        if not lines:
            return np.zeros(0)
        if not hasattr(self, "cache_"):
            self.cache_: dict = {}
        return self.model_.predict_proba(_features(self.tokenizer, list(lines), self.n_buckets, self.cache_))[:, 1]

    def __call__(self, rendered: Rendered) -> str:
        """Answer a needle item: the recitation lines (as shown) it flags, one per line."""
        if rendered.item.task != "needle":
            raise ValueError(f"LineDetector answers needle items only, got task {rendered.item.task!r}")
        shown = [rendered.shown[ln] for ln in rendered.item.recitation]
        flags = self.predict_proba(shown) > 0.5
        return "\n".join(s for s, f in zip(shown, flags) if f)


def mode_mixture_subject(p_valley: float = 0.4, width: float = 0.15, depth: float = 0.7,
                         seed: int = 0) -> Subject:
    """A scripted subject with a known valley: each target is reported (echoed as shown) with
    probability 1 - depth·exp(-(p - p_valley)² / (2 width²)). Tests the harness only."""
    if not (0.0 <= depth <= 1.0 and width > 0 and 0.0 <= p_valley <= 1.0):
        raise ValueError(f"mode_mixture_subject: need 0 <= depth <= 1, width > 0, 0 <= p_valley <= 1; "
                         f"got depth={depth}, width={width}, p_valley={p_valley}")
    rng = np.random.default_rng(seed)

    def answer(rendered: Rendered) -> str:
        q = 1.0 - depth * np.exp(-((rendered.p - p_valley) ** 2) / (2 * width ** 2))
        return "\n".join(rendered.shown.get(t, t) for t in rendered.item.targets if rng.random() < q)

    return answer
