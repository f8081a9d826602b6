"""BeliefSearch (paper 14, NeurIPS 2026 submission; paper text not found, only the abstract was
read): a VLM as a noisy sensor, an external Bayesian controller over video segments.

One belief over segments: the question sets the prior, each sensor observation updates it (in
log space), and the same belief decides whether to search, which segment to look at next
(expected information gain) and when to stop; the answer is posterior-weighted. Training credits
each turn with the entropy it removes and gates the final reward by the total entropy drop.
Everything past the abstract is our design (labelled "inferred" in the docstrings).

* :mod:`.video` — PyAV decoding with exact-frame seeking, segments, previews, H.264 encoding.
* :mod:`.synthetic` — needle-in-a-video episodes with decoys; pixel readers; a frozen scene prior.
* :mod:`.belief` — :class:`SensorModel` (yes/no × confidence bins, calibrated on probes),
  :class:`Belief`, :func:`prior_from_scores`, :func:`expected_information_gain`.
* :mod:`.sensors` — :class:`PixelSensor` (scripted, offline) and :class:`VLMSensor` (any chat
  backend; images as JPEG parts; strict JSON with a counted retry rule).
* :mod:`.controller` — :func:`belief_search`; baselines :func:`uniform_plan`,
  :func:`prior_topk_plan` (via :func:`fixed_plan_search`) and :func:`navigator_search`.
* :mod:`.prior` — :class:`ClipPrior`, a frozen CLIP/SigLIP text–frame similarity from a local folder.
* :mod:`.navigator` — :class:`VLMNavigator`, a chat model choosing segments (the baseline pattern).
* :mod:`.reward` — the entropy-gated reward, per-turn credit, and the toy policy gradient.
* :mod:`.search` — :func:`search_video` on a user's local file; :func:`calibrate_on_probes`.

Example (offline, the synthetic task)::

    import numpy as np
    from neurips26.belief_search import (PixelSensor, SensorModel, belief_search, decode_all, make_video,
                                         prior_from_scores, sample_segment_frames, scene_prior_scores, segment_bounds)
    rng = np.random.default_rng(0)
    vid = make_video("/tmp", "demo", 32, 8, rng)
    frames = decode_all(vid.path)
    bounds = segment_bounds(len(frames), 32)
    prior = prior_from_scores(scene_prior_scores(frames[bounds[:-1]], vid.question))
    sensor = PixelSensor()
    look = lambda seg, seen: (f := sample_segment_frames(bounds, seg, 2, rng, seen), sensor.observe(frames[f], rng=rng))
    out = belief_search(prior, SensorModel.binary(0.8, 0.05), look, budget=8, rng=rng)
    print(vid.options[out.answer] == vid.answer, out.n_looks)   # right answer?, looks spent (<= budget)
"""

from .belief import (
                     LIKELIHOOD_FLOOR,
                     Belief,
                     SensorModel,
                     binary_entropy,
                     calibrate_sensor,
                     entropy,
                     expected_information_gain,
                     outcome_index,
                     prior_from_scores,
)
from .controller import (
                     Look,
                     SearchResult,
                     aggregate_answer,
                     belief_search,
                     fixed_plan_search,
                     navigator_search,
                     prior_topk_plan,
                     uniform_plan,
)
from .navigator import NAVIGATOR_PROMPT, VLMNavigator, parse_move
from .prior import ClipPrior
from .reward import ToyResult, entropy_gate, final_reward, per_turn_credit, toy_policy_gradient
from .search import VideoSearch, calibrate_on_probes, search_video
from .sensors import SENSOR_PROMPT, PixelSensor, SensorReply, VLMSensor, parse_sensor_reply
from .synthetic import (
                     COLOURS,
                     SCENES,
                     SyntheticVideo,
                     draw_video,
                     flag_scores,
                     make_video,
                     read_colour,
                     scene_prior_scores,
)
from .video import (
                     VideoError,
                     VideoInfo,
                     VideoReader,
                     decode_all,
                     decode_frames,
                     encode_video,
                     has_constant_frame_grid,
                     probe_video,
                     sample_segment_frames,
                     segment_bounds,
)

__all__ = [
    "LIKELIHOOD_FLOOR", "Belief", "SensorModel", "binary_entropy", "calibrate_sensor", "entropy",
    "expected_information_gain", "outcome_index", "prior_from_scores",
    "Look", "SearchResult", "aggregate_answer", "belief_search", "fixed_plan_search", "navigator_search",
    "prior_topk_plan", "uniform_plan",
    "NAVIGATOR_PROMPT", "VLMNavigator", "parse_move", "ClipPrior",
    "ToyResult", "entropy_gate", "final_reward", "per_turn_credit", "toy_policy_gradient",
    "VideoSearch", "calibrate_on_probes", "search_video",
    "SENSOR_PROMPT", "PixelSensor", "SensorReply", "VLMSensor", "parse_sensor_reply",
    "COLOURS", "SCENES", "SyntheticVideo", "draw_video", "flag_scores", "make_video", "read_colour", "scene_prior_scores",
    "VideoError", "VideoInfo", "VideoReader", "decode_all", "decode_frames", "encode_video", "has_constant_frame_grid",
    "probe_video", "sample_segment_frames", "segment_bounds",
]
