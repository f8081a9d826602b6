"""End-to-end run of the experiment on a reduced configuration: every claim has a kind and a verdict."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("av")  # the [video] extra (PyAV)

from neurips26.belief_search.experiment import Config, run  # noqa: E402
from neurips26.harness import RunContext  # noqa: E402
from neurips26.harness.claims import Claim, Outcome, Verdict, forbidden_citation  # noqa: E402


def test_reduced_run_produces_well_formed_claims(tmp_path):
    cfg = Config(seeds=[0, 1, 2], n_segments=12, videos_per_seed=2, episodes_per_video=6, calibration_videos=2,
                 calibration_repeats=8, n_distractors=3, budgets=[3, 6], toy_steps=200, vlm_looks=8)
    out = run(cfg, RunContext(seed=0, out_dir=tmp_path))
    assert isinstance(out, Outcome)
    ids = [c.id for c in out.claims]
    assert len(ids) == len(set(ids)) >= 17
    for c in out.claims:
        assert isinstance(c, Claim) and isinstance(c.verdict, Verdict) and c.kind is not None and c.source
        assert c.statement and c.reason and c.tolerance
        assert not any(forbidden_citation(t) for t in (c.statement, c.source, c.tolerance, c.reason, c.note))
        json.dumps(c.to_dict(), default=str)
    by_id = {c.id: c for c in out.claims}
    # exact invariants hold at any size (a failure is a bug, not noise)
    for must in ("belief_normalised", "eig_nonnegative_and_exact", "perfect_sensor_finds_needle",
                 "seek_equals_sequential", "gate_values", "yes_no_reward_not_farmable", "vlm_path_strict_json"):
        assert by_id[must].verdict is Verdict.HOLDS, (must, by_id[must].measured)
    assert by_id["long_video_gain"].verdict is Verdict.NOT_CHECKABLE and by_id["long_video_gain"].kind.value == "paper"
    assert by_id["beats_uniform"].interval is not None and by_id["beats_uniform"].seeds is None
    assert by_id["gated_keeps_searching"].seeds.n == 3
    assert {"accuracy_vs_frames.png", "reward_gate_toy.png"} <= {p.name for p in (tmp_path / "figures").iterdir()}
    assert set(out.metrics["accuracy"]) == {"belief", "uniform", "prior_topk", "navigator"}


def test_configs_validate():
    full = Config.full()
    assert full.backend == "openai" and full.model and full.resources().hours >= 1
    assert Config.quick().resources().credentials == ()


@pytest.mark.parametrize("key,value,match", [
    ("seeds", [0, 1], ">= 3 distinct seeds"),
    ("budgets", [8, 4], "increasing"),
    ("confidence_edges", [0.5, 1.2], "bin edges inside"),
    ("n_distractors", 40, "n_distractors=40"),
    ("frames_per_look", 8, "frames_per_look=8"),
    ("backend", "openai", "needs model"),
    ("vlm_episodes", 5, "needs a VLM backend"),  # used to be ignored silently without a backend
])
def test_bad_overrides_are_one_line_config_errors(key, value, match):
    from neurips26.harness.config import ConfigError, apply_overrides

    with pytest.raises(ConfigError, match=match) as err:
        apply_overrides(Config.quick(), {key: value}, "belief_search")
    assert "\n" not in str(err.value)


def test_real_vlm_path_against_an_openai_compatible_stub(tmp_path):
    """The full config's real-VLM claim, run against a loopback server whose "VLM" reads the JPEG frames."""
    from neurips26.backends import StubOpenAIServer
    from neurips26.backends.vision import images_in_request
    from neurips26.belief_search import PixelSensor

    pixel = PixelSensor(noise_sd=0.0, misread=0.0)

    def reply(body):
        ims = images_in_request(body)
        if not ims:  # the preflight call is text only
            return "ok"
        r = pixel.observe(np.stack(ims), rng=np.random.default_rng(0))
        return json.dumps({"relevant": "yes" if r.relevant else "no", "confidence": r.confidence,
                           "answer": None if r.answer is None else pixel.options[r.answer]})

    with StubOpenAIServer(reply=reply) as server:
        cfg = Config(seeds=[0, 1, 2], n_segments=12, videos_per_seed=1, episodes_per_video=2, calibration_videos=1,
                     calibration_repeats=4, n_distractors=3, budgets=[3, 6], toy_steps=50, vlm_looks=4,
                     backend="openai", model="stub-vlm", base_url=server.url, vlm_episodes=6)
        out = run(cfg, RunContext(seed=0, out_dir=tmp_path))
    c = {c.id: c for c in out.claims}["real_vlm_beats_uniform"]
    assert c.verdict in (Verdict.HOLDS, Verdict.INCONCLUSIVE, Verdict.DOES_NOT_HOLD) and c.kind.value == "reconstruction"
    m = out.metrics["real_vlm"]
    assert m["calls"] > 12 and m["malformed"] == 0 and m["backend_errors"] == 0 and m["tpr"] > m["fpr"]
    # the stub answers every navigator prompt with sensor JSON: malformed moves, each falling back to the storyboard
    assert set(m["accuracy"]) == {"belief", "uniform", "vlm_navigator"} and m["navigator"]["fallbacks"] > 0
    # review: the searches are spread over videos and the interval is over videos (was: 6 searches of one video)
    assert m["videos"] == 6 and len(m["margin_per_video"]) == 6


def test_unreachable_vlm_endpoint_fails_before_any_work(tmp_path, monkeypatch):
    """Catches a dead endpoint found after the offline part (issue 32 item 3): the module preflight
    and run() raise the shared preflight's one-line BackendError naming the URL within seconds,
    before any video is made — also with vlm_episodes=0 (a backend that is set is checked)."""
    import socket
    import time

    from neurips26.backends import BackendError
    from neurips26.belief_search import experiment

    with socket.socket() as s:  # a free loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    made = []
    monkeypatch.setattr(experiment, "_run_seed", lambda *a, **k: made.append(1))
    for episodes in (5, 0):
        cfg = Config(backend="openai", model="m", base_url=url, vlm_episodes=episodes)
        for call in (lambda: experiment.preflight(cfg), lambda: run(cfg, RunContext(seed=0, out_dir=tmp_path))):
            t = time.perf_counter()
            with pytest.raises(BackendError, match="did not answer a preflight call") as err:
                call()
            assert time.perf_counter() - t < 15  # one call, no retries, a 10 s timeout; refused at once here
            assert url in str(err.value) and "\n" not in str(err.value)
    assert not made


def test_confirmation_run_judges_only_the_tuned_claims_on_fresh_seeds(tmp_path):
    """Catches a confirmation run that re-uses the development seeds (config.seeds) or re-runs claims
    that were fixed before any run: it must draw fresh seeds and return only the tuned claims."""
    from neurips26.belief_search import experiment

    assert experiment.CONFIRMATION_SEEDS and not set(experiment.CONFIRMATION_SEEDS) & set(Config().seeds)
    cfg = Config(seeds=[0, 1, 2], n_segments=12, videos_per_seed=1, episodes_per_video=2, calibration_videos=1,
                 calibration_repeats=4, n_distractors=3, budgets=[3, 6], toy_steps=50, vlm_looks=4)
    ctx = RunContext(seed=101, out_dir=tmp_path, confirmation=True)
    assert experiment._seeds_of_run(cfg, ctx) == [20100, 20101, 20102]
    out = run(cfg, ctx)
    ids = {c.id for c in out.claims}
    assert ids == {"beats_uniform", "beats_prior_topk", "beats_navigator", "confidence_map_farmable"}
    assert all(not c.preregistered and c.tuned_after_look for c in out.claims)


def test_development_seeds_follow_the_run_seed_and_confirmation_has_three_seeds(tmp_path):
    """A development run read config.seeds whatever the run seed, so `--seeds 7,23` judged the
    same videos twice as if they were replications. Catches a run seed that changes nothing, and fewer
    than three confirmation seeds."""
    from neurips26.belief_search import experiment

    cfg = Config()
    assert experiment._seeds_of_run(cfg, RunContext(seed=0, out_dir=tmp_path)) == list(cfg.seeds)
    s7 = experiment._seeds_of_run(cfg, RunContext(seed=7, out_dir=tmp_path))
    s23 = experiment._seeds_of_run(cfg, RunContext(seed=23, out_dir=tmp_path))
    assert len(s7) == len(cfg.seeds) and not set(s7) & set(s23) and not set(s7) & set(cfg.seeds)
    assert len(set(experiment.CONFIRMATION_SEEDS)) >= 3
    conf = [experiment._seeds_of_run(cfg, RunContext(seed=c, out_dir=tmp_path, confirmation=True))
            for c in experiment.CONFIRMATION_SEEDS]
    assert len({s for c in conf for s in c}) == sum(map(len, conf))      # no shared videos
