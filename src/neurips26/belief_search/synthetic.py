"""Synthetic needle-in-a-video episodes, drawn with numpy and encoded as H.264 with PyAV.

A video has ``n_segments`` segments of ``frames_per_segment`` frames. Every segment has a
*scene* (a background tint: one of :data:`SCENES`, jittered) and grey shapes moving over it.
One segment, the **needle**, shows a checkered *flag* (colour cells alternating with white) in
the top-right box for a burst of frames; the question asks for the flag's colour
(options :data:`COLOURS`). **Distractor** segments show a low-contrast checker of another colour
in the same box, which a noisy reader can mistake for the flag. The question names the needle's
scene ("In the forest scene, what colour is the checkered flag?"), so a frozen text–frame
similarity gives an informative but ambiguous prior: several segments share that scene.

Pixel reading (used by the scripted sensor): :func:`flag_scores` measures checker contrast in
the box of each frame (cells alternating in both directions), :func:`read_colour` names the
box's non-white colour.

Source: inferred: a controllable needle-in-a-haystack video task in the spirit of
LV-Haystack (Ye et al., 2025), small enough for a CPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .video import encode_video

__all__ = ["SCENES", "COLOURS", "BOX", "SyntheticVideo", "draw_video", "make_video", "flag_scores",
           "read_colour", "scene_prior_scores"]

#: Scene name -> background RGB tint.
SCENES: dict[str, tuple[int, int, int]] = {"beach": (200, 180, 120), "forest": (40, 100, 50),
                                           "night": (30, 30, 80), "snow": (210, 215, 225)}
#: Answer option -> flag RGB colour.
COLOURS: dict[str, tuple[int, int, int]] = {"red": (220, 30, 30), "green": (30, 200, 40),
                                            "blue": (30, 60, 230), "yellow": (235, 220, 30)}
#: Flag box (y0, y1, x0, x1) in a 120 x 160 frame: 4 x 4 cells of 6 px.
BOX = (6, 30, 130, 154)
CELL = 6


@dataclass
class SyntheticVideo:
    """One synthetic episode.

    Attributes:
        path: the encoded MP4 (``None`` until written).
        n_segments, frames_per_segment: layout (segment i = frames ``[i·L, (i+1)·L)``).
        needle: index of the segment holding the flag (the evidence).
        answer: the flag colour (one of ``options``).
        options: answer options (``list(COLOURS)``).
        question: the question text (names the needle's scene).
        scene: scene name of every segment.
        distractors: indices of segments with a low-contrast decoy checker.
        needle_frames: frame indices where the flag is visible.
    """

    n_segments: int
    frames_per_segment: int
    needle: int
    answer: str
    options: list[str]
    question: str
    scene: list[str]
    distractors: list[int]
    needle_frames: list[int]
    path: Path | None = None
    meta: dict = field(default_factory=dict)

    @property
    def n_frames(self) -> int:
        """Total frames."""
        return self.n_segments * self.frames_per_segment


def _checker(colour: np.ndarray, other: np.ndarray) -> np.ndarray:
    """A 4 x 4-cell checker patch (24 x 24 x 3 float) alternating ``colour`` and ``other``."""
    yy, xx = np.mgrid[0:4 * CELL, 0:4 * CELL] // CELL
    mask = ((yy + xx) % 2 == 0)[..., None]
    return np.where(mask, colour, other)


def draw_video(n_segments: int, frames_per_segment: int, rng: np.random.Generator, *,
               n_distractors: int = 4, burst: int = 4, size: tuple[int, int] = (160, 120),
               decoy_contrast: float = 0.45) -> tuple[np.ndarray, SyntheticVideo]:
    """Draw the frames of one episode.

    Args:
        n_segments: segments (>= 2); frames_per_segment: frames each (>= burst + 1).
        n_distractors: decoy segments (< n_segments).
        burst: consecutive frames the flag/decoy is visible in its segment (never the segment's
            first frame, which is the preview).
        size: ``(width, height)``; only ``(160, 120)`` keeps :data:`BOX` inside the frame.
        decoy_contrast: decoy checker contrast relative to the flag's (0..1).

    Returns:
        ``(frames uint8 (T, H, W, 3), SyntheticVideo)`` with ``path=None``.

    Raises:
        ValueError: on sizes that do not fit.
    """
    if n_segments < 2 or frames_per_segment < burst + 1 or burst < 1:
        raise ValueError(f"need n_segments >= 2 and frames_per_segment >= burst + 1 >= 2, got "
                         f"{n_segments}, {frames_per_segment}, burst={burst}")
    if not 0 <= n_distractors < n_segments:
        raise ValueError(f"n_distractors={n_distractors}; allowed: 0..{n_segments - 1}")
    if tuple(size) != (160, 120):
        raise ValueError(f"size={size}; only (160, 120) is supported (the flag box is fixed)")
    W, H = size
    L = frames_per_segment
    T = n_segments * L
    names = list(SCENES)
    scene = [names[i] for i in rng.integers(0, len(names), n_segments)]
    needle = int(rng.integers(n_segments))
    others = [i for i in range(n_segments) if i != needle]
    # decoys prefer the needle's scene (hard distractors), the rest anywhere
    same = [i for i in others if scene[i] == scene[needle]]
    rng.shuffle(same)
    rest = [i for i in others if i not in same[: n_distractors // 2]]
    distractors = sorted(int(i) for i in same[: n_distractors // 2]
                         + list(rng.choice(rest, n_distractors - len(same[: n_distractors // 2]), replace=False)))
    answer = str(rng.choice(list(COLOURS)))
    tint = np.array([SCENES[s] for s in scene], float) + rng.normal(0, 25, (n_segments, 3))  # jittered scenes
    frames = np.empty((T, H, W, 3), np.float32)
    frames[:] = np.repeat(tint, L, axis=0)[:, None, None, :]
    frames += rng.normal(0, 6, (1, H, W, 3)).astype(np.float32)  # fixed texture
    # moving grey discs (random walks), drawn into every frame
    n_disc = 3
    pos = rng.uniform([10, 10], [H - 10, W - 10], (n_disc, 2))
    vel = rng.normal(0, 3, (n_disc, 2))
    r = 8
    dy, dx = np.mgrid[-r:r + 1, -r:r + 1]
    disc = dy ** 2 + dx ** 2 < r * r                                          # (17, 17) footprint
    for t in range(T):
        pos = np.clip(pos + vel, r, [H - r - 1, W - r - 1])
        vel += rng.normal(0, 0.7, vel.shape)
        for (cy, cx), g in zip(pos.astype(int), (90, 150, 200)):
            frames[t, cy - r:cy + r + 1, cx - r:cx + r + 1][disc] = g
    y0, y1, x0, x1 = BOX
    white = np.array([245.0, 245.0, 245.0])
    needle_frames: list[int] = []
    for seg in [needle] + distractors:
        start = seg * L + 1 + int(rng.integers(0, L - burst))  # after the preview frame
        if seg == needle:
            patch = _checker(np.array(COLOURS[answer], float), white)
            needle_frames = list(range(start, start + burst))
        else:
            col = np.array(COLOURS[str(rng.choice([c for c in COLOURS if c != answer]))], float)
            patch = _checker(col, col + decoy_contrast * (white - col))
        frames[start:start + burst, y0:y1, x0:x1] = patch
    frames = np.clip(frames, 0, 255).astype(np.uint8)
    q = f"In the {scene[needle]} scene, what colour is the checkered flag?"
    return frames, SyntheticVideo(n_segments, L, needle, answer, list(COLOURS), q, scene, distractors,
                                  needle_frames)


def make_video(directory: str | Path, name: str, n_segments: int, frames_per_segment: int,
               rng: np.random.Generator, **kw) -> SyntheticVideo:
    """Draw an episode (:func:`draw_video`) and encode it to ``directory/name.mp4`` (H.264)."""
    frames, vid = draw_video(n_segments, frames_per_segment, rng, **kw)
    vid.path = encode_video(Path(directory) / f"{name}.mp4", frames)
    return vid


def flag_scores(frames: np.ndarray) -> np.ndarray:
    """Checker contrast in the flag box of each frame, in [0, 1] (1: white/colour flag).

    Cell means of the 4 x 4 grid; a checker alternates in both directions, so the score is the
    smaller of the mean horizontal and vertical absolute cell differences, divided by the
    flag's own difference (about 200 grey levels), clipped to [0, 1]. A decoy scores about
    its contrast; plain background about 0.

    Args:
        frames: ``uint8 (k, H, W, 3)`` RGB.

    Returns:
        ``float64 (k,)``.
    """
    y0, y1, x0, x1 = BOX
    box = np.asarray(np.asarray(frames)[:, y0:y1, x0:x1], float).mean(axis=-1)           # (k, 24, 24) grey
    cells = box.reshape(len(box), 4, CELL, 4, CELL)[:, :, 1:-1, :, 1:-1].mean(axis=(2, 4))  # (k, 4, 4), inner px
    dx = np.abs(np.diff(cells, axis=2)).mean(axis=(1, 2))
    dy = np.abs(np.diff(cells, axis=1)).mean(axis=(1, 2))
    return np.clip(np.minimum(dx, dy) / 120.0, 0.0, 1.0)


def read_colour(frame: np.ndarray) -> str:
    """Name (a key of :data:`COLOURS`) of the darker checker cells in the flag box of one frame
    (``uint8 (H, W, 3)``): the nearest option colour to their mean RGB."""
    y0, y1, x0, x1 = BOX
    box = np.asarray(np.asarray(frame)[y0:y1, x0:x1], float)
    cells = box.reshape(4, CELL, 4, CELL, 3)[:, 1:-1, :, 1:-1].mean(axis=(1, 3))  # (4, 4, 3)
    lum = cells.mean(-1)
    dark = cells[lum <= np.median(lum)].mean(0)
    names = list(COLOURS)
    d = [np.sum((dark - np.array(COLOURS[c])) ** 2) for c in names]
    return names[int(np.argmin(d))]


def scene_prior_scores(previews: np.ndarray, question: str) -> np.ndarray:
    """Frozen text–frame similarity for the synthetic task: minus the distance (in units of 100
    grey levels) between each preview's mean colour outside the flag box and the tint of the
    scene the question names. Stands in for a CLIP/SigLIP similarity.

    Args:
        previews: ``uint8 (N, H, W, 3)``; question: text naming one of :data:`SCENES`.

    Returns:
        ``float64 (N,)``, higher = more similar.

    Raises:
        ValueError: if the question names no scene of :data:`SCENES`.
    """
    named = [s for s in SCENES if s in question.lower()]
    if len(named) != 1:
        raise ValueError(f"question {question!r} names {len(named)} scenes; the synthetic prior needs exactly "
                         f"one of {list(SCENES)}")
    mean = np.asarray(np.asarray(previews)[:, 40:, :100], float).mean(axis=(1, 2))  # away from the flag box
    return -np.linalg.norm(mean - np.array(SCENES[named[0]], float), axis=1) / 100.0
