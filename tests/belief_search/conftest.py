"""Shared fixtures: one small synthetic H.264 video written once per test session."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.belief_search import decode_all, make_video


@pytest.fixture(scope="session")
def small_video(tmp_path_factory):
    """A 12-segment × 8-frame synthetic episode (96 frames, keyframe every 16) and its decoded frames."""
    pytest.importorskip("av")  # the [video] extra (PyAV)
    d = tmp_path_factory.mktemp("bs_video")
    vid = make_video(d, "small", 12, 8, np.random.default_rng(5), n_distractors=3)
    return vid, decode_all(vid.path)
