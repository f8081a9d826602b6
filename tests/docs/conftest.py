"""Prints how many documentation code blocks ran and which were not runnable, and why."""

from ._examples import TALLY


def pytest_terminal_summary(terminalreporter):
    """One line per reason after the test session (only when the docs examples were collected)."""
    t = TALLY
    if not (t.run or t.not_runnable or t.slow_skipped):
        return
    n_not = sum(t.not_runnable.values())
    reasons = "; ".join(f"{n}× {r}" for r, n in sorted(t.not_runnable.items(), key=lambda kv: -kv[1]))
    terminalreporter.write_sep("-", "documentation examples")
    terminalreporter.write_line(f"docs examples: run {t.run} / not runnable {n_not} ({reasons or 'none'})"
                                f" / slow, skipped here {t.slow_skipped} / hidden set-up blocks {t.setup}")
    if t.cpu_s:
        top = ", ".join(f"{p} {s:.0f} s" for p, s in sorted(t.cpu_s.items(), key=lambda kv: -kv[1])[:5])
        terminalreporter.write_line(f"docs examples: {sum(t.cpu_s.values()):.0f} s CPU over {len(t.cpu_s)} pages "
                                    f"(most: {top})")
