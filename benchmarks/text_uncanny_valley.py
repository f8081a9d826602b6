"""Benchmark of the text-uncanny-valley harness (model time excluded).

1. Sweep throughput: (documents × rates) rendered, answered by a constant subject and scored
   with all three matchers, per second; with the per-line fragment memo against without it.
2. Tokenisation: the fragmented documents of one profile encoded in one batched call against one
   call per document (same vocabulary, same texts).

Run: ``.venv/bin/python benchmarks/text_uncanny_valley.py``. Prints ratios from the same run.
"""

from __future__ import annotations

import time

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


def tokenisation_speed() -> None:
    text = "\n".join("\n".join(p) for p in poem_lines())
    docs = [fragment(text, p, 0).text for p in RATES] * 4
    for name in ("o200k_base", "gpt2"):
        tok = load_tokenizer(name)
        t_batch = _median_time(lambda: tok.encode_batch(docs))
        t_single = _median_time(lambda: [tok.encode_batch([d]) for d in docs])
        chars = sum(map(len, docs))
        print(f"tokenise {name}: batched {chars / t_batch / 1e6:.2f} M chars/s, per document "
              f"{chars / t_single / 1e6:.2f} M chars/s; batched speed-up {t_single / t_batch:.1f}×")


if __name__ == "__main__":
    sweep_throughput()
    tokenisation_speed()
