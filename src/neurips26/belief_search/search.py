"""Search a local video file: decode, segment, prior, calibrated sensor, controller, answer.

``search_video(path, question, options, sensor, sensor_model)`` is the one-call entry point for
a user's own video and model::

    from neurips26.backends import make_backend
    from neurips26.belief_search import SensorModel, VLMSensor, search_video
    sensor = VLMSensor(make_backend("openai", model="Qwen2.5-VL-7B-Instruct", base_url="http://localhost:8000/v1"))
    out = search_video("clip.mp4", "What colour is the flag?", ["red", "green", "blue", "yellow"],
                       sensor, SensorModel.binary(tpr=0.8, fpr=0.1))
    out.result.answer, out.result.looks, out.frames_decoded

``calibrate_on_probes`` fits the :class:`~.belief.SensorModel` of a sensor on labelled segments
(segments known to hold, or not hold, the evidence) before searching.

Source: inferred (the abstract's pipeline — question prior, VLM observations, one belief — on a
local file).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .belief import SensorModel, calibrate_sensor, outcome_index, prior_from_scores
from .controller import SearchResult, belief_search
from .video import VideoReader, probe_video, sample_segment_frames

__all__ = ["VideoSearch", "search_video", "calibrate_on_probes"]

#: ``prior_scores(previews uint8 (N, H, W, 3), question) -> float (N,)``, e.g. a CLIP similarity.
PriorScores = Callable[[np.ndarray, str], np.ndarray]


@dataclass
class VideoSearch:
    """Result of :func:`search_video`.

    Attributes:
        result: the controller's :class:`~.controller.SearchResult` (belief trace, looks, answer).
        answer: the chosen option text.
        segments: ``int64 (N + 1,)`` frame boundaries of the segments.
        fps: the video's average frame rate (a summary; with a variable frame rate ``segments[i]/fps``
            is not segment ``i``'s start time — use ``segment_times_s``).
        frames_decoded: frames decoded (previews and looks; cached frames counted once).
        segment_times_s: ``float64 (N + 1,)`` seconds from the first frame: segment ``i`` spans
            ``segment_times_s[i]`` to ``segment_times_s[i + 1]`` (from the frames' timestamps, so
            right for variable-frame-rate files; the last entry is the video's duration).
    """

    result: SearchResult
    answer: str
    segments: np.ndarray
    fps: float
    frames_decoded: int
    segment_times_s: np.ndarray | None = None


def _check_options(options: Sequence[str]) -> list[str]:
    if isinstance(options, str):
        raise ValueError(f"options={options!r} is one string; give a list of answer options")
    opts = [str(o) for o in options] if options is not None else []
    if len(opts) < 2 or len(set(o.strip().lower() for o in opts)) != len(opts) or any(not o.strip() for o in opts):
        raise ValueError(f"options={options!r}: a question needs at least two distinct, non-empty answer options")
    return opts


def search_video(path: str | Path, question: str, options: Sequence[str], sensor, sensor_model: SensorModel, *,
                 n_segments: int = 32, budget: int = 8, frames_per_look: int = 4, tau: float = 0.9,
                 prior_scores: PriorScores | None = None, beta: float = 1.5, prior_mix: float = 0.1,
                 seed: int = 0, size: tuple[int, int] | None = None) -> VideoSearch:
    """Answer ``question`` about a local video by Bayesian search over its segments.

    Args:
        path: a video file PyAV can read.
        question: non-empty text; options: the answer options (>= 2, distinct).
        sensor: has ``observe(frames uint8 (k, H, W, 3), question, options) -> SensorReply``
            (e.g. :class:`~.sensors.VLMSensor`).
        sensor_model: calibrated likelihoods of that sensor (:func:`calibrate_on_probes`);
            ``n_options`` must equal ``len(options)``.
        n_segments: segments (reduced to the frame count for very short videos).
        budget: most looks; frames_per_look: frames per look (>= 1).
        prior_scores: frozen text–frame similarity over the previews (e.g. :class:`~.prior.ClipPrior`);
            ``None`` = uniform prior.
        seed: frame sampling and tie-breaking seed.

    Raises:
        VideoError: unreadable/empty video or no video stream (before any model call).
        ValueError: empty question, bad options, mismatched ``sensor_model.n_options``, bad sizes,
            or ``prior_scores`` not returning one finite score per segment.

    With nothing found (no "relevant" look reporting an option) the answer is a tie-broken guess:
    ``result.answer_probs`` is then uniform over the options — check it before trusting ``answer``.
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question={question!r}: must be non-empty text")
    opts = _check_options(options)
    if sensor_model.n_options != len(opts):
        raise ValueError(f"sensor_model.n_options={sensor_model.n_options} but {len(opts)} options were given")
    if frames_per_look < 1:
        raise ValueError(f"frames_per_look={frames_per_look}; allowed: >= 1")
    if n_segments < 1:
        raise ValueError(f"n_segments={n_segments}; allowed: >= 1")
    n = min(n_segments, probe_video(path).n_frames)  # raises VideoError before any model call
    reader = VideoReader(path, n, size=size)
    rng = np.random.default_rng(seed)
    if prior_scores is None:
        prior = np.full(reader.n_segments, 1.0 / reader.n_segments)
    else:
        scores = np.asarray(prior_scores(reader.preview(), question), float)
        if scores.shape != (reader.n_segments,):
            raise ValueError(f"prior_scores returned shape {scores.shape}; need one score per segment, "
                             f"({reader.n_segments},)")
        prior = prior_from_scores(scores, beta, prior_mix)

    def look(segment: int, seen: Sequence[int]):
        idx = sample_segment_frames(reader.bounds, segment, frames_per_look, rng, seen)
        return idx, sensor.observe(reader.frames(idx), question, opts)

    result = belief_search(prior, sensor_model, look, budget=budget, tau=tau, rng=rng)
    return VideoSearch(result, opts[result.answer], reader.bounds, reader.info.fps, reader.decoded,
                       reader.info.time_of(reader.bounds))


def calibrate_on_probes(probes: Sequence[tuple[str | Path, int, int, bool]], question_for: Callable[[str | Path], tuple[str, list[str]]],
                        sensor, *, frames_per_look: int = 4, repeats: int = 1, confidence_edges: tuple[float, ...] = (),
                        seed: int = 0) -> SensorModel:
    """Fit a sensor's :class:`SensorModel` on labelled probe segments.

    Args:
        probes: ``(video path, first frame, end frame (exclusive), holds_evidence)`` tuples.
        question_for: ``path -> (question, options)`` for each probe video.
        sensor: as in :func:`search_video`.
        repeats: looks per probe (new frames each time).
        confidence_edges: confidence bins of the fitted model (``()`` = yes/no only).

    Raises:
        VideoError: a probe video that cannot be read.
        ValueError: ``repeats < 1``, a probe range not within ``0 <= start < end <= n_frames``,
            probes whose questions have different numbers of options, or as
            :func:`~.belief.calibrate_sensor` (e.g. no positive probes).

    The answer accuracy of the fitted model stays at 0.9 (the probes carry no answer labels).
    """
    if repeats < 1:
        raise ValueError(f"repeats={repeats}; allowed: >= 1")
    rng = np.random.default_rng(seed)
    outcomes, labels = [], []
    n_opts = None
    readers: dict[str, VideoReader] = {}  # one probe/demux pass and one frame cache per video
    for path, start, end, holds in probes:
        q, opts = question_for(path)
        k = len(_check_options(opts))
        if n_opts is not None and k != n_opts:
            raise ValueError(f"probe {str(path)!r} has {k} options, earlier probes {n_opts}; one sensor model "
                             "needs one option count")
        n_opts = k
        reader = readers.get(str(path)) or readers.setdefault(str(path), VideoReader(path, 1))
        if not 0 <= int(start) < int(end) <= reader.info.n_frames:
            raise ValueError(f"probe ({str(path)!r}, {start}, {end}): need 0 <= start < end <= "
                             f"{reader.info.n_frames} (the video's frame count)")
        bounds = np.array([int(start), int(end)])
        for _ in range(repeats):
            idx = sample_segment_frames(bounds, 0, frames_per_look, rng)
            r = sensor.observe(reader.frames(idx), q, opts)
            o = outcome_index(r.relevant, r.confidence, tuple(confidence_edges))
            outcomes.append(-1 if o is None else o)
            labels.append(bool(holds))
    return calibrate_sensor(np.array(outcomes), np.array(labels), None, confidence_edges=tuple(confidence_edges),
                            n_options=n_opts or 4)
