"""Project-wide test set-up: a headless matplotlib backend for every test."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")


import signal  # noqa: E402
import threading  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _default_sigint_handler():
    """Every test starts with Python's default Ctrl-C handler. A test suite started in the
    background of a non-interactive shell (`cmd &`, as a scheduler may do) inherits SIGINT ignored;
    the runner then rightly leaves Ctrl-C alone (a parent that ignores it is respected), and the
    Ctrl-C tests would fail for a reason outside the code under test."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
