"""search_video on a local file with a VLM sensor behind a chat backend; bad inputs fail early."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neurips26.backends import ScriptedBackend
from neurips26.backends.vision import decode_jpeg
from neurips26.belief_search import (
    PixelSensor,
    SensorModel,
    VideoError,
    VLMSensor,
    calibrate_on_probes,
    scene_prior_scores,
    search_video,
)

OPTS = ["red", "green", "blue", "yellow"]


def _pixel_vlm():
    pixel = PixelSensor(noise_sd=0.0, misread=0.0)

    def policy(messages):
        frames = np.stack([decode_jpeg(b) for b in messages[0].images])
        r = pixel.observe(frames, rng=np.random.default_rng(0))
        return json.dumps({"relevant": "yes" if r.relevant else "no", "confidence": round(r.confidence, 3),
                           "answer": None if r.answer is None else OPTS[r.answer]})

    return ScriptedBackend(policy, name="pixel-vlm")


def test_search_a_local_video_with_a_vlm_sensor(small_video):
    vid, _ = small_video
    backend = _pixel_vlm()
    out = search_video(vid.path, vid.question, OPTS, VLMSensor(backend), SensorModel.binary(0.75, 0.05),
                       n_segments=12, budget=12, frames_per_look=4, prior_scores=scene_prior_scores, seed=0)
    assert out.answer == vid.answer and out.result.posterior.argmax() == vid.needle
    assert out.result.n_looks <= 12 and backend.calls == out.result.n_looks
    assert out.frames_decoded <= 12 + 4 * out.result.n_looks


def test_calibrate_on_probes_with_the_vlm_sensor(small_video):
    vid, _ = small_video
    L = vid.frames_per_segment
    probes = [(vid.path, vid.needle * L, (vid.needle + 1) * L, True)] + \
             [(vid.path, s * L, (s + 1) * L, False) for s in range(vid.n_segments) if s != vid.needle]
    m = calibrate_on_probes(probes, lambda p: (vid.question, OPTS), VLMSensor(_pixel_vlm()), frames_per_look=4,
                            repeats=3)
    assert m.tpr > 0.5 > m.fpr


def test_bad_inputs_fail_before_any_model_call(tmp_path, small_video):
    vid, _ = small_video
    backend = _pixel_vlm()
    sensor, model = VLMSensor(backend), SensorModel.binary(0.8, 0.1)
    (tmp_path / "zero.mp4").write_bytes(b"")
    with pytest.raises(VideoError, match="empty"):
        search_video(tmp_path / "zero.mp4", "q?", OPTS, sensor, model)
    with pytest.raises(ValueError, match="at least two distinct"):
        search_video(vid.path, "q?", [], sensor, model)
    with pytest.raises(ValueError, match="at least two distinct"):
        search_video(vid.path, "q?", ["red", "Red"], sensor, model)
    with pytest.raises(ValueError, match="non-empty text"):
        search_video(vid.path, "  ", OPTS, sensor, model)
    with pytest.raises(ValueError, match="n_options=4 but 2"):
        search_video(vid.path, "q?", ["a", "b"], sensor, model)
    with pytest.raises(ValueError, match="one string"):  # "ab" used to become the options ["a", "b"]
        search_video(vid.path, "q?", "ab", sensor, SensorModel.binary(0.8, 0.1, n_options=2))
    (tmp_path / "notes.mp4").write_text("not a video\n" * 20)
    with pytest.raises(VideoError, match="unreadable"):
        search_video(tmp_path / "notes.mp4", "q?", OPTS, sensor, model)
    for n in (5, 13):  # a prior of the wrong length: 5 used to search 5 of 12 segments silently
        with pytest.raises(ValueError, match=r"one score per segment, \(12,\)"):
            search_video(vid.path, "q?", OPTS, sensor, model, n_segments=12, prior_scores=lambda p, q, n=n: np.zeros(n))
    with pytest.raises(ValueError, match="budget=nan"):
        search_video(vid.path, "q?", OPTS, sensor, model, budget=float("nan"))
    assert backend.calls == 0


def test_bad_probes_name_the_probe(small_video):
    vid, _ = small_video
    sensor = VLMSensor(_pixel_vlm())
    ask = lambda p: (vid.question, OPTS)  # noqa: E731
    for start, end in ((8, 8), (-4, 4), (90, 200)):  # (8, 8) used to fail deep inside numpy ("need at least one array")
        with pytest.raises(ValueError, match="need 0 <= start < end <= 96"):
            calibrate_on_probes([(vid.path, start, end, True), (vid.path, 0, 8, False)], ask, sensor)
    with pytest.raises(ValueError, match="repeats=0"):
        calibrate_on_probes([(vid.path, 0, 8, True)], ask, sensor, repeats=0)
    asked = []

    def mixed(p):
        asked.append(p)
        return vid.question, OPTS if len(asked) == 1 else OPTS[:2]

    with pytest.raises(ValueError, match="2 options, earlier probes 4"):
        calibrate_on_probes([(vid.path, 0, 8, True), (vid.path, 8, 16, False)], mixed, sensor)


def test_a_one_frame_video_is_looked_at_not_guessed(tmp_path):
    # review regression: one segment gives H(b0) = 0, which used to skip the search and answer by a coin flip
    from neurips26.belief_search import COLOURS, encode_video

    frames = np.full((1, 120, 160, 3), 90, np.uint8)
    frames[0, 6:30, 130:154] = 245
    cells = (np.mgrid[0:24, 0:24] // 6).sum(0) % 2 == 0
    frames[0, 6:30, 130:154][cells] = COLOURS["blue"]
    path = encode_video(tmp_path / "one.mp4", frames)
    backend = _pixel_vlm()
    out = search_video(path, "What colour is the flag?", OPTS, VLMSensor(backend), SensorModel.binary(0.8, 0.1))
    assert out.result.n_looks == 1 and backend.calls == 1 and out.answer == "blue"


def test_the_pixel_sensor_shares_the_sensor_interface(small_video):
    vid, _ = small_video
    out = search_video(vid.path, vid.question, OPTS, PixelSensor(noise_sd=0.05, seed=1), SensorModel.binary(0.75, 0.05),
                       n_segments=12, budget=12, frames_per_look=4, prior_scores=scene_prior_scores, seed=0)
    assert out.answer == vid.answer
    with pytest.raises(ValueError, match="pixel sensor reads"):
        PixelSensor().observe(np.zeros((1, 120, 160, 3), np.uint8), "q?", ["cat", "dog"])
