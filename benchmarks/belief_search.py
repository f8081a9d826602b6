"""Benchmark of belief_search: decoding by seeking vs sequentially, and the controller's overhead
per step against one VLM call.

1. Frames decoded per second for a sparse set of wanted frames (2 per segment, as a search
   samples them) from a 1,024-frame H.264 video: exact seeking (:func:`decode_frames`) against
   a sequential decode of everything (:func:`decode_all`), same frames, same run.
2. One controller step (EIG over N segments + log-space update) against one VLM sensor call
   through the chat backend to a loopback stub server (JPEG encoding, HTTP, JSON parsing; a real
   VLM adds its own seconds), as a ratio.

Times are CPU seconds of this process (the smallest of repeated calls for decoding; the stub
server runs in a thread of this process, so its work is counted in the call); each comparison is
recorded through ``record()``. Run: ``.venv/bin/python benchmarks/belief_search.py``.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np
from _timing import best_cpu, record

from neurips26.backends import OpenAIBackend, StubOpenAIServer
from neurips26.belief_search import (
    Belief,
    SensorModel,
    VLMSensor,
    decode_all,
    decode_frames,
    draw_video,
    encode_video,
    expected_information_gain,
    probe_video,
    sample_segment_frames,
    segment_bounds,
)


def decoding(directory: Path) -> None:
    frames, _ = draw_video(64, 16, np.random.default_rng(0), n_distractors=4)
    path = encode_video(directory / "bench.mp4", frames, gop=32)
    info = probe_video(path)
    bounds = segment_bounds(info.n_frames, 64)
    rng = np.random.default_rng(1)
    for n_seg in (8, 32):
        segs = rng.choice(64, n_seg, replace=False)
        want = np.concatenate([sample_segment_frames(bounds, int(s), 2, rng) for s in segs])
        stats: dict = {}
        t_seek = best_cpu(lambda: decode_frames(path, want, info=info, stats=stats))[0]
        t_seq = best_cpu(lambda: decode_all(path)[want])[0]
        print(f"decode {len(want)} wanted frames of {info.n_frames} (keyframe every 32): seeking {t_seek * 1e3:.1f} ms "
              f"({len(want) / t_seek:,.0f} wanted frames/s, {stats['seeks']} seeks, {stats['decoded']} decoded), "
              f"sequential {t_seq * 1e3:.1f} ms ({info.n_frames / t_seq:,.0f} frames/s, {len(want) / t_seq:,.0f} "
              f"wanted/s); seeking {t_seq / t_seek:.1f}× faster (CPU)")
        record(f"decode {len(want)} wanted frames of {info.n_frames} (H.264, keyframe every 32): seeking vs "
               "sequential decode of all", t_seek, t_seq, note=f"{stats['seeks']} seeks, {stats['decoded']} frames "
                                                                "decoded; same frames")


def controller_vs_vlm_call() -> None:
    model = SensorModel((0.15, 0.05, 0.3, 0.5), (0.9, 0.05, 0.04, 0.01), (0.9,))
    frames = np.random.default_rng(0).integers(0, 255, (2, 120, 160, 3), dtype=np.uint8)
    reply = json.dumps({"relevant": "no", "confidence": 0.1, "answer": None})
    with StubOpenAIServer(reply=reply) as server:
        sensor = VLMSensor(OpenAIBackend("stub", base_url=server.url, max_retries=0))
        sensor.observe(frames, "q?", ["a", "b"])  # warm the connection
        n_calls = 30
        t = time.process_time()
        for _ in range(n_calls):
            sensor.observe(frames, "q?", ["a", "b"])
        t_call = (time.process_time() - t) / n_calls
    for n in (32, 256, 4096):
        b = Belief(np.full(n, 1.0 / n))
        rng = np.random.default_rng(0)
        steps = 300
        t = time.process_time()
        for _ in range(steps):
            i = int(np.argmax(expected_information_gain(b.probs, model)))
            b.update(i, int(rng.integers(4)), model)
        t_step = (time.process_time() - t) / steps
        print(f"controller step at N={n}: {t_step * 1e6:.0f} µs; one VLM call to a loopback stub (2 frames, JPEG + HTTP + "
              f"JSON): {t_call * 1e3:.1f} ms CPU; step / call = {t_step / t_call:.4f}")
        record(f"controller step (EIG over N = {n} segments + update) vs one VLM sensor call to a loopback stub",
               t_step, t_call, note="call: 2 frames, JPEG + HTTP + JSON, no model; ratio = controller steps per call")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as d:
        decoding(Path(d))
    controller_vs_vlm_call()
