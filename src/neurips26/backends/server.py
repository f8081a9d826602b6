"""A real OpenAI-compatible server on loopback: llama.cpp's, through ``llama-cpp-python[server]``.

``with LlamaServer("smollm2-135m") as server:`` starts ``python -m llama_cpp.server`` on
``127.0.0.1`` at a free port for the model's GGUF file (the quantised weights shipped in the
registry package — the same model :mod:`neurips26.backends.models` converts for transformers),
waits until ``GET /v1/models`` answers, and stops the process on exit (SIGTERM, then SIGKILL after
a grace period). ``server.url`` ends in ``/v1`` and ``server.model`` is the name to send (the
model id, served as the alias), so::

    OpenAIBackend(server.model, base_url=server.url, constraints="llama.cpp")

talks to it like to any OpenAI-compatible endpoint. Nothing here depends on the harness; runs and
tests with ``backend=openai`` start one around their work. The server's log goes to a file
(``server.log_path``), quoted in the error when it fails to start.

Requires the ``server`` extra (``pip install -c constraints.txt -e '.[server]'``: llama-cpp-python with its
FastAPI/uvicorn server; llama-cpp-python builds from source, ≈ 10 CPU-minutes on 2 cores once, then pip's
wheel cache serves it).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_available() -> bool:
    """True when ``llama_cpp.server`` and its web stack can be imported (checked without importing them)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette",
                                                                  "starlette_context", "pydantic_settings"))


class LlamaServer:
    """llama.cpp's OpenAI-compatible server as a context manager on 127.0.0.1.

    Args:
        model: a model id of :data:`neurips26.backends.models.MODELS` (its GGUF file is served)
            or the path of a ``.gguf`` file.
        alias: the model name clients send (default: the id, or the file's stem).
        n_ctx: context length in tokens.
        threads: CPU threads for generation and prompt processing (1 on a shared machine).
        startup_timeout_s: seconds to wait for the server to answer before giving up.
        seed: the server's sampling seed.

    Attributes:
        url: ``http://127.0.0.1:<port>/v1`` once started.
        model: the alias to send as ``model``.
        log_path: the server's log file.

    Raises:
        ValueError: an unknown model id / missing file, bad numbers, or the server extra missing
            (one line with the pip command).
        RuntimeError: the server exits or does not answer within ``startup_timeout_s`` (the last
            lines of its log are quoted).
    """

    def __init__(self, model: str | Path = "smollm2-135m", *, alias: str | None = None, n_ctx: int = 2048,
                 threads: int = 1, startup_timeout_s: float = 120.0, seed: int = 0) -> None:
        from .models import MODELS, gguf_path

        if str(model) in MODELS:
            self.gguf = gguf_path(str(model))
            default_alias = str(model)
        else:
            self.gguf = Path(model).expanduser()
            if not (self.gguf.is_file() and self.gguf.suffix == ".gguf"):
                raise ValueError(f"model {str(model)!r} is neither a known model id ({', '.join(sorted(MODELS))}) "
                                 "nor a .gguf file")
            default_alias = self.gguf.stem
        for name, v in (("n_ctx", n_ctx), ("threads", threads)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not startup_timeout_s > 0:
            raise ValueError(f"startup_timeout_s must be > 0, got {startup_timeout_s!r}")
        if not server_available():
            raise ValueError("llama.cpp's server is not installed: pip install -c constraints.txt -e '.[server]' "
                             "(llama-cpp-python[server]; builds from source once, ≈ 10 CPU-minutes on 2 cores)")
        self.model = alias or default_alias
        self.n_ctx, self.threads, self.seed = n_ctx, threads, seed
        self.startup_timeout_s = startup_timeout_s
        self.url = ""
        self.log_path: Path | None = None
        self._proc: subprocess.Popen | None = None
        self._log = None

    def _tail(self, n: int = 5) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines() if self.log_path else []
        except OSError:
            lines = []
        return " | ".join(line.strip() for line in lines[-n:])

    def start(self) -> "LlamaServer":
        """Start the server and wait until it answers (see the class docstring for errors)."""
        port = free_port()
        fd, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
        os.close(fd)
        self.log_path = Path(name)
        self._log = open(self.log_path, "w")  # noqa: SIM115 — closed in stop()
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.gguf), "--model_alias", self.model,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(self.n_ctx),
               "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads), "--seed", str(self.seed),
               "--verbose", "False"]
        env = {**os.environ, "OMP_NUM_THREADS": str(self.threads)}
        self._proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      env=env, start_new_session=True)
        self.url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self.stop()
                raise RuntimeError(f"llama.cpp server for {self.gguf.name} exited with code {code} while starting: "
                                   f"{self._tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as resp:
                    if resp.status == 200 and json.loads(resp.read()).get("data"):
                        return self
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"llama.cpp server for {self.gguf.name} did not answer on {self.url} within "
                           f"{self.startup_timeout_s:g} s: {self._tail()}")

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop the server: SIGTERM to its process group, SIGKILL after ``grace_s``; idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=grace_s)
        if self._log is not None:
            self._log.close()
            self._log = None

    @property
    def running(self) -> bool:
        """True while the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def __enter__(self) -> "LlamaServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


__all__ = ["LlamaServer", "free_port", "server_available"]
