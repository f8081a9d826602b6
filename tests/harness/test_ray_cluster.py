"""A multi-node Ray cluster on this machine (Ray's own ``ray.cluster_utils.Cluster``): a head with no
CPUs and a worker node, both bound to 127.0.0.1. ``reproduce --executor ray --address`` places the
tasks on the worker node, which runs the driver's sources; results land in the driver's ``--out``
exactly as a local run writes them; a worker node lost mid-task leaves that task recorded as failed
with the reason, and a rerun completes only what is missing.

Slow (Ray start-up: about a minute on a loaded 2-core machine):
``.venv/bin/python -m pytest -m slow tests/harness/test_ray_cluster.py -p no:cacheprovider``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from neurips26.harness.runner import SystemSpec, reproduce  # noqa: E402

pytestmark = pytest.mark.slow

EXPERIMENT = '''
import os
import time

from pydantic import Field

from neurips26.harness import claims as C
from neurips26.harness.claims import Outcome
from neurips26.harness.config import ExperimentConfig, Resources


class Config(ExperimentConfig):
    n: int = Field(200, ge=10)
    hold_seed: int = -1
    hold: str = ""
    log: str = ""

    def resources(self):
        return Resources(num_cpus=1)


def run(config, ctx):
    import neurips26
    from neurips26.harness.runner import code_version

    if config.log:
        with open(config.log, "a") as fh:
            fh.write(f"{ctx.seed}\\n")
    t0 = time.time()
    while ctx.seed == config.hold_seed and os.path.exists(config.hold) and time.time() - t0 < 300:
        time.sleep(0.1)  # held while the file exists
    import matplotlib.pyplot as plt

    x = ctx.rng.normal(size=config.n)
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot(x)
    ctx.save_figure("draws", fig)
    where = {}
    try:
        import ray

        if ray.is_initialized():
            where["node"] = ray.get_runtime_context().get_node_id()
    except Exception:
        pass
    return Outcome(metrics={"mean": float(x.mean()), "sd": float(x.std())},
                   notes=str({"neurips26": os.path.dirname(neurips26.__file__),
                              "code_version": code_version("n26rayfake"), **where}),
                   claims=[C.within("mean_small", "the mean is small", measured=float(x.mean()), low=-1, high=1,
                                    reason="test", kind="check", source="inferred: test")])
'''


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    """An importable package ``n26rayfake`` (the driver ships it to the cluster with py_modules)."""
    root = tmp_path_factory.mktemp("rayfake")
    pkg = root / "n26rayfake"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "experiment.py").write_text(EXPERIMENT)
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield importlib.import_module("n26rayfake.experiment")
    finally:
        sys.path.remove(str(root))


@pytest.fixture(scope="module")
def cluster():
    """Head (0 CPUs: runs no task) + one worker node (2 CPUs), every node on 127.0.0.1.

    Ray resolves "127.0.0.1" in an address to the machine's outward IP unless its cluster mode is
    off (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``: node IPs are then the loopback address), so the
    driver (this process) and every Ray process started here stay on 127.0.0.1.
    """
    import ray._private.ray_constants as ray_constants
    from ray.cluster_utils import Cluster

    saved = {k: os.environ.get(k) for k in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_USAGE_STATS_ENABLED")}
    os.environ.update(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0")
    was, ray_constants.ENABLE_RAY_CLUSTER = ray_constants.ENABLE_RAY_CLUSTER, False
    local = {"node_ip_address": "127.0.0.1", "include_dashboard": False}
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, **local})
    try:
        assert c.address.startswith("127.0.0.1:")
        c.local = local
        c.worker = c.add_node(num_cpus=2, **local)
        yield c
    finally:
        c.shutdown()
        ray_constants.ENABLE_RAY_CLUSTER = was
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _notes(res) -> dict:
    import ast

    return ast.literal_eval(res.notes)


def _tree(out: Path) -> dict[str, bytes]:
    """Every file under ``out`` except the report, by relative path."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "report.html"}


def test_cluster_results_sources_and_node_loss(fake, cluster, tmp_path, monkeypatch):
    """Catches: tasks that do not reach the worker node, workers running other sources than the
    driver's, results written elsewhere or differently than a local run, a lost node leaving no
    record (or a silent hang), and a rerun that repeats finished tasks."""
    log = tmp_path / "calls.log"
    spec = lambda **kw: [SystemSpec("n26rayfake", fake, {"log": str(log), **kw})]  # noqa: E731

    # 1. three seeds on the cluster, and the same locally
    remote, interrupted = reproduce(spec(), seeds=[0, 1, 2], out=tmp_path / "ray", device="cpu",
                                    executor="ray", address=cluster.address)
    assert not interrupted and [r.status for r in remote] == ["ok"] * 3, [r.error for r in remote]
    local, _ = reproduce(spec(), seeds=[0, 1, 2], out=tmp_path / "local", device="cpu", executor="local")
    worker_id = cluster.worker.node_id
    for r, l in zip(remote, local):
        seen = _notes(r)
        assert seen.get("node") == worker_id  # placed on the worker node (the head has no CPU)
        # the worker imported the shipped copy of the driver's sources, and they hash the same
        assert not Path(seen["neurips26"]).resolve().is_relative_to(Path(__file__).resolve().parents[2])
        assert seen["code_version"] == r.code_version.split(" ")[0] == l.code_version.split(" ")[0]
        assert (r.run_key, r.metrics, r.figures, r.status) == (l.run_key, l.metrics, l.figures, l.status)
    a, b = _tree(tmp_path / "ray"), _tree(tmp_path / "local")
    assert sorted(a) == sorted(b)  # same folders, files and names
    for rel in a:
        if rel.endswith("result.json"):
            ra, rb = json.loads(a[rel]), json.loads(b[rel])
            # the source hash must agree; the git commit beside it may move (other commits land between runs)
            assert ra.pop("code_version").split(" ")[0] == rb.pop("code_version").split(" ")[0]
            for volatile in ("started_at", "finished_at", "wall_time_s", "cpu_time_s", "peak_rss_mb",
                             "environment", "notes"):
                ra.pop(volatile), rb.pop(volatile)
            assert ra == rb, rel
        elif rel.endswith("seeds-summary.json"):
            ra, rb = json.loads(a[rel]), json.loads(b[rel])
            ra.pop("written_at"), rb.pop("written_at")
            assert ra == rb, rel
        elif rel.endswith(".png"):
            assert a[rel][:8] == b"\x89PNG\r\n\x1a\n"
        else:
            assert a[rel] == b[rel], rel

    # 2. the worker node dies while seed 4 runs (seed 3 finishes first: 2 CPUs, seed 4 is held).
    # The code version is frozen from here on: on a shared checkout another edit of harness/
    # between these runs would (rightly) make the rerun redo seed 3 as well.
    from neurips26.harness import task as task_module

    frozen = task_module.code_version("n26rayfake")
    monkeypatch.setattr(task_module, "code_version", lambda system: frozen)
    log.write_text("")
    hold = tmp_path / "hold"
    hold.write_text("")
    out = tmp_path / "loss"
    box: dict = {}

    def run() -> None:
        box["results"], box["interrupted"] = reproduce(spec(hold_seed=4, hold=str(hold)), seeds=[3, 4], out=out,
                                                        device="cpu", executor="ray", address=cluster.address)

    th = threading.Thread(target=run)
    th.start()
    t0 = time.perf_counter()
    while "4" not in log.read_text().split() and time.perf_counter() - t0 < 120:
        time.sleep(0.2)
    assert "4" in log.read_text().split(), "seed 4 never started on the cluster"
    while not list(out.glob("n26rayfake/*seed3*/result.json")) and time.perf_counter() - t0 < 120:
        time.sleep(0.2)
    cluster.remove_node(cluster.worker, allow_graceful=False)
    th.join(timeout=120)
    assert not th.is_alive(), "the driver hangs after losing the node"
    by_seed = {r.seed: r for r in box["results"]}
    assert by_seed[3].status == "ok"
    assert by_seed[4].status == "failed" and "Ray task failed" in by_seed[4].error
    assert any(w in by_seed[4].error for w in ("died", "Died", "crash", "unexpectedly", "Node", "node"))
    saved = json.loads(next(out.glob("n26rayfake/*seed4*/result.json")).read_text())
    assert saved["status"] == "failed" and saved["error"] == by_seed[4].error

    # 3. a new worker node; the rerun runs seed 4 only
    cluster.worker = cluster.add_node(num_cpus=2, **cluster.local)
    log.write_text("")
    hold.unlink()  # same config (same run folders); seed 4 is no longer held
    again, _ = reproduce(spec(hold_seed=4, hold=str(hold)), seeds=[3, 4], out=out, device="cpu", executor="ray",
                         address=cluster.address)
    assert log.read_text().split() == ["4"]
    assert [r.status for r in again] == ["ok", "ok"]
