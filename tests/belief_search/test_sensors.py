"""Sensors: the pixel reader and the VLM sensor's strict JSON rule (retries and counts)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from neurips26.backends import BackendError, OpenAIBackend, ScriptedBackend, StubOpenAIServer, replies
from neurips26.backends.vision import images_in_request
from neurips26.belief_search import PixelSensor, VLMSensor, flag_scores, parse_sensor_reply, read_colour

OPTS = ["red", "green", "blue", "yellow"]


def test_pixel_reader_sees_the_flag_and_its_colour(small_video):
    vid, frames = small_video
    s = flag_scores(frames)
    assert s[vid.needle_frames].min() > 0.8  # white/colour checker after H.264
    others = np.setdiff1d(np.arange(len(frames)), vid.needle_frames)
    assert s[others].max() < 0.7  # decoys are low-contrast checkers
    assert all(read_colour(frames[i]) == vid.answer for i in vid.needle_frames)
    clean = PixelSensor(noise_sd=0.0, misread=0.0)
    r = clean.observe(frames[vid.needle_frames[:2]], rng=np.random.default_rng(0))
    assert r.relevant and OPTS[r.answer] == vid.answer and r.confidence > 0.99


@pytest.mark.parametrize("text,expect", [
    ('{"relevant": "yes", "confidence": 0.8, "answer": "Blue"}', (True, 0.8, 2)),
    ('```json\n{"relevant": "no", "confidence": 0, "answer": null}\n```', (False, 0.0, None)),
    ('{"relevant": true, "confidence": 1, "answer": " red "}', (True, 1.0, 0)),
])
def test_parse_accepts_strict_json(text, expect):
    assert parse_sensor_reply(text, OPTS) == expect


@pytest.mark.parametrize("text,match", [
    ("Yes, the flag is red.", "not a JSON object"),
    ('["yes"]', "not a JSON object"),
    ('{"relevant": "maybe", "confidence": 0.5, "answer": null}', "relevant"),
    ('{"relevant": "yes", "confidence": 1.5, "answer": "red"}', "confidence"),
    ('{"relevant": "yes", "confidence": true, "answer": "red"}', "confidence"),
    ('{"relevant": "yes", "confidence": 0.5, "answer": "purple"}', "answer"),
    ('Here: {"relevant": "yes", "confidence": 0.5, "answer": "red"}', "not a JSON object"),
    ('{"relevant": "yes", "confidence": NaN, "answer": "red"}', "confidence"),
    ('{"relevant": "yes", "confidence": 0.9, "answer": "red", "relevant": "no"}', "duplicate key"),  # used to read "no"
])
def test_parse_rejects_malformed(text, match):
    with pytest.raises(ValueError, match=match):
        parse_sensor_reply(text, OPTS)


def test_an_option_named_none_is_an_answer_not_null():
    # review regression: "None" was read as null even when it is one of the options
    opts = ["None of these", "a dog", "None"]
    assert parse_sensor_reply('{"relevant": "yes", "confidence": 0.9, "answer": "none"}', opts) == (True, 0.9, 2)
    assert parse_sensor_reply('{"relevant": "yes", "confidence": 0.9, "answer": null}', opts) == (True, 0.9, None)
    assert parse_sensor_reply('{"relevant": "no", "confidence": 0.9, "answer": "null"}', OPTS) == (False, 0.9, None)


def test_malformed_replies_are_counted_and_retried_once(small_video):
    _, frames = small_video
    good = '{"relevant": "yes", "confidence": 0.9, "answer": "green"}'
    backend = ScriptedBackend(replies(["garbage", good, "garbage", "also garbage", BackendError("down")]))
    s = VLMSensor(backend, max_parse_retries=1)
    r1 = s.observe(frames[:2], "q?", OPTS)
    assert (r1.relevant, r1.answer, r1.malformed, r1.calls) == (True, 1, 1, 2)
    r2 = s.observe(frames[:2], "q?", OPTS)  # both attempts malformed: non-informative
    assert r2.relevant is None and r2.malformed == 2
    r3 = s.observe(frames[:2], "q?", OPTS)  # backend failure: non-informative, counted
    assert r3.relevant is None and r3.backend_errors == 1
    assert (s.malformed, s.backend_errors, s.calls) == (3, 1, 4)
    with pytest.raises(ValueError, match="at least two answer options"):
        s.observe(frames[:2], "q?", [])
    with pytest.raises(ValueError, match="at least two answer options"):  # one option used to be accepted
        s.observe(frames[:2], "q?", ["red"])
    with pytest.raises(ValueError, match="frames is empty"):  # used to send a prompt with no image
        s.observe(frames[:0], "q?", OPTS)
    assert s.calls == 4  # caller errors make no model call


def test_vlm_sensor_through_an_openai_compatible_server(small_video):
    vid, frames = small_video
    pixel = PixelSensor(noise_sd=0.0, misread=0.0)

    def reply(body):  # a "VLM" on the server that reads the JPEG frames it is sent
        ims = np.stack(images_in_request(body))
        r = pixel.observe(ims, rng=np.random.default_rng(0))
        return json.dumps({"relevant": "yes" if r.relevant else "no", "confidence": r.confidence,
                           "answer": None if r.answer is None else OPTS[r.answer]})

    with StubOpenAIServer(reply=reply, failures=["not json at all", 503]) as server:
        s = VLMSensor(OpenAIBackend("stub-vlm", base_url=server.url, max_retries=0), max_parse_retries=1)
        broken = s.observe(frames[:2], vid.question, OPTS)  # garbled HTTP body: a backend failure
        down = s.observe(frames[:2], vid.question, OPTS)    # HTTP 503 with no retries left
        hit = s.observe(frames[vid.needle_frames[:2]], vid.question, OPTS)
        miss = s.observe(frames[[0, 1]], vid.question, OPTS)
        body = server.requests[-1]
    assert broken.relevant is None and down.relevant is None and s.backend_errors == 2
    assert hit.relevant and OPTS[hit.answer] == vid.answer
    assert miss.relevant is False and s.malformed == 0 and s.calls == 2
    parts = body["messages"][0]["content"]
    assert parts[0]["type"] == "text" and vid.question in parts[0]["text"]
    assert [p["type"] for p in parts[1:]] == ["image_url", "image_url"]
