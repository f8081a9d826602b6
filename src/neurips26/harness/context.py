"""The run context handed to a system's ``run(config, ctx)``.

It gives the seed and generators, progress bars, figure saving and the torch device, so that
``run`` stays a pure function of its config and seed and writes only through ``ctx``.
"""

from __future__ import annotations

import contextlib
import io
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .results import atomic_write_bytes

T = TypeVar("T")


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run a block with ``n`` torch intra-op threads, restoring the caller's setting afterwards.

    Small models on a shared 2-core machine run faster with one thread: more threads
    oversubscribe the cores (measured: lanczos-ddpm's digits part 795 s wall with 2 threads, 68 s
    with 1, at load 14).

    Raises:
        ValueError: ``n < 1``.
    """
    import torch

    if isinstance(n, bool) or int(n) < 1:
        raise ValueError(f"torch_threads(n={n!r}): n must be an integer >= 1")
    old = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)


@dataclass
class RunContext:
    """Seed, generators, output folder, progress and figures for one system run.

    Attributes:
        seed: the run's integer seed.
        out_dir: the run folder; figures go to ``out_dir/figures``.
        device: torch device string (``cpu`` or ``cuda``).
        progress: a ``rich.progress.Progress`` owned by the runner, or ``None`` (no bars).
    """

    seed: int
    out_dir: Path
    device: str = "cpu"
    progress: Any = None
    figures: list[str] = field(default_factory=list)
    captions: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.rng = np.random.default_rng(self.seed)
        random.seed(self.seed)
        np.random.seed(self.seed % 2**32)
        try:
            import torch

            torch.manual_seed(self.seed)
        except ImportError:  # torch is a core dependency; tolerate its absence in tools
            pass

    def torch_generator(self, offset: int = 0):
        """A fresh ``torch.Generator`` seeded with ``seed + offset`` (on CPU)."""
        import torch

        return torch.Generator().manual_seed(self.seed + offset)

    def child_rng(self, offset: int) -> np.random.Generator:
        """An independent numpy generator for a sub-experiment (seed + offset)."""
        return np.random.default_rng([self.seed, offset])

    def track(self, iterable: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
        """Iterate with a progress bar (removed when done). Works without a progress display."""
        if self.progress is None:
            yield from iterable
            return
        if total is None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        task = self.progress.add_task(f"  {description}", total=total)
        try:
            for item in iterable:
                yield item
                self.progress.advance(task)
        finally:
            self.progress.remove_task(task)

    def save_figure(self, name: str, fig: Any, caption: str = "") -> str:
        """Save a matplotlib figure as ``figures/<name>.png`` atomically and close it.

        ``caption`` is what the report prints under the figure: what to look at and what the
        paper predicts (one or two sentences). The first figure saved is the system's key
        figure, shown first in the report. Returns the path relative to the run folder.

        Raises:
            ValueError: if ``name`` is not a plain file stem (letters, digits, ``-_.``).
        """
        if not name or any(not (ch.isalnum() or ch in "-_.") for ch in name) or name.startswith("."):
            raise ValueError(f"figure name {name!r}: use letters, digits, '-', '_' or '.'")
        import matplotlib.pyplot as plt

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        rel = f"figures/{name}.png"
        atomic_write_bytes(self.out_dir / rel, buf.getvalue())
        if rel not in self.figures:
            self.figures.append(rel)
        if caption:
            self.captions[rel] = caption
        return rel
