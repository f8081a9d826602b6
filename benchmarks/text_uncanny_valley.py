"""Benchmark of the text-uncanny-valley harness (model time excluded).

1. Sweep throughput: (documents × rates) rendered, answered by a constant subject and scored
   with all three matchers, per second; with the per-line fragment memo against without it.
2. Tokenisation: ours (one document after the other, the default) against the library's
   thread-pool batch call (same vocabulary, same texts), in CPU time and wall time.

Run: ``.venv/bin/python benchmarks/text_uncanny_valley.py``. Prints ratios from the same run.
"""

from __future__ import annotations

import time

from _timing import record

from neurips26.text_uncanny_valley import fragment, load_tokenizer, needle_items, run_sweep
from neurips26.text_uncanny_valley.corpus import poem_lines
from neurips26.text_uncanny_valley.tasks import fragment_line

RATES = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0]


def _median_time(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def sweep_throughput(n_docs: int = 100) -> None:
    items = needle_items(n_docs, 0)

    def sweep():
        run_sweep(items, lambda rendered: "", RATES, seeds=[0, 1, 2])

    def cold():
        fragment_line.cache_clear()
        sweep()

    t_memo = _median_time(sweep)
    t_cold = _median_time(cold)
    n = n_docs * len(RATES) * 3
    print(f"sweep: {n / t_memo:,.0f} (document × rate × seed)/s with the line memo, {n / t_cold:,.0f}/s "
          f"without; memo speed-up {t_cold / t_memo:.1f}×")
    record("sweep with the per-line fragment memo vs without", t_memo, t_cold, clock="wall",
           note=f"{n_docs} documents × {len(RATES)} rates × 3 seeds, constant subject")


def tokenisation_speed() -> None:
    """Ours (``Tokenizer.encode_batch``: one document after the other) against the library's
    thread-pool batch call (``encode_threaded``), CPU time and wall time of the same texts."""
    text = "\n".join("\n".join(p) for p in poem_lines())
    docs = [fragment(text, p, 0).text for p in RATES] * 4
    chars = sum(map(len, docs))
    for name in ("o200k_base", "gpt2"):
        tok = load_tokenizer(name)
        assert tok.encode_batch(docs) == tok.encode_threaded(docs)  # same ids either way
        c_ours, w_ours = _cpu_and_wall(lambda: tok.encode_batch(docs))
        c_thr, w_thr = _cpu_and_wall(lambda: tok.encode_threaded(docs))
        print(f"tokenise {name}: ours (per document) {chars / c_ours / 1e6:.2f} M chars per CPU-s, library batch "
              f"(thread pool) {chars / c_thr / 1e6:.2f}; ours {c_thr / c_ours:.2f}× in CPU time, "
              f"{w_thr / w_ours:.2f}× in wall time")
        record(f"tokenise ({name}): per document (default) vs library thread-pool batch", c_ours, c_thr,
               note=f"same ids; wall-time ratio {w_thr / w_ours:.2f}")


def _cpu_and_wall(fn, repeats: int = 5) -> tuple[float, float]:
    """Best CPU seconds (all threads of the process) and best wall seconds over ``repeats`` calls."""
    cpu = wall = float("inf")
    for _ in range(repeats):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c), min(wall, time.perf_counter() - w)
    return cpu, wall


if __name__ == "__main__":
    sweep_throughput()
    tokenisation_speed()
