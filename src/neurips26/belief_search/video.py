"""Video decoding and segmentation with PyAV: probe, exact-frame seeking, segments, previews.

Seeking in a compressed stream lands on a *keyframe* at or before the requested time; the frame
asked for is reached by decoding forward from there (:func:`decode_frames`). Frames are indexed
by presentation time, ``index = round((pts − start_pts) · time_base · fps)``, so the seeking path
returns exactly the frames the sequential path returns (tested against :func:`decode_all`).

A video of ``n_frames`` frames is cut into ``N`` contiguous segments of (nearly) equal length
(:func:`segment_bounds`); each segment's first frame is its *preview* (what the question-driven
prior sees), and a look samples ``F`` frames of a segment (:func:`sample_segment_frames`).

Source: inferred: PyAV's documented ``container.seek(offset, stream=..., backward=True)`` lands
on a keyframe; uniform segments are the simplest choice where the paper's segmentation is unknown.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

__all__ = ["VideoError", "VideoInfo", "probe_video", "decode_all", "decode_frames", "segment_bounds",
           "sample_segment_frames", "VideoReader", "encode_video", "has_constant_frame_grid"]


class VideoError(ValueError):
    """A video cannot be used: missing, unreadable, no video stream, or zero frames."""


@dataclass(frozen=True)
class VideoInfo:
    """What :func:`probe_video` learns about a file.

    Attributes:
        path: the file.
        n_frames: decodable frames (from the container, or counted by demuxing when the
            container does not say).
        fps: average frame rate (frames per second, float > 0); only a summary: with a variable
            frame rate, ``i / fps`` is *not* frame ``i``'s time — use ``frame_times_s``.
        width, height: frame size in pixels.
        codec: the decoder name (``h264``, ``mpeg4``, ...).
        frame_times_s: presentation time of each frame in seconds from the first frame, in
            presentation order (frame ``i`` of a sequential decode is at ``frame_times_s[i]``);
            from the packets' timestamps (one demuxing pass, no decoding). Empty when the stream
            has no timestamps; then times fall back to ``i / fps``.
        end_s: end of the last frame in seconds from the first frame (its timestamp plus its
            packet duration, or the median frame interval when the packet carries none).
    """

    path: Path
    n_frames: int
    fps: float
    width: int
    height: int
    codec: str
    frame_times_s: tuple[float, ...] = ()
    end_s: float | None = None

    @property
    def duration_s(self) -> float:
        """Duration in seconds: from the first frame's timestamp to the end of the last frame
        (``end_s``); ``n_frames / fps`` only when the stream carries no timestamps."""
        return float(self.end_s) if self.end_s is not None else self.n_frames / self.fps

    def time_of(self, index) -> np.ndarray:
        """Presentation time(s) in seconds of frame index/indices ``index`` (``n_frames`` gives
        ``duration_s``, the end of the last frame): float64 array of ``index``'s shape.

        Raises:
            ValueError: an index outside ``[0, n_frames]``.
        """
        idx = np.asarray(index, dtype=np.int64)
        bad = idx[(idx < 0) | (idx > self.n_frames)]
        if bad.size:
            raise ValueError(f"frame index {int(bad.reshape(-1)[0])} outside [0, {self.n_frames}] of "
                             f"{str(self.path)!r}")
        if len(self.frame_times_s) != self.n_frames:
            return idx / self.fps
        times = np.append(np.asarray(self.frame_times_s, dtype=np.float64), self.duration_s)
        return times[idx]


def _open(path: str | Path):
    import av

    path = Path(path)
    if not path.is_file():
        raise VideoError(f"video {str(path)!r} does not exist or is not a file")
    if path.stat().st_size == 0:
        raise VideoError(f"video {str(path)!r} is empty (0 bytes)")
    try:
        container = av.open(str(path))
    except (av.error.FFmpegError, OSError, UnicodeDecodeError) as exc:
        raise VideoError(f"video {str(path)!r} is unreadable: {type(exc).__name__}: {exc}") from None
    if not container.streams.video:
        container.close()
        raise VideoError(f"{str(path)!r} has no video stream (streams: "
                         f"{[s.type for s in container.streams] or 'none'})")
    return container


def probe_video(path: str | Path) -> VideoInfo:
    """Read a video's frame count, rate, size, codec and the frames' presentation times.

    One demuxing pass over the packets (no decoding) reads every frame's timestamp, so times and
    the duration are right for variable-frame-rate files too (phone recordings); the frame count
    is the container's, or the packets counted when the container does not store one.

    Raises:
        VideoError: missing or empty file, unreadable container, no video stream, or no frames.
    """
    import av

    container = _open(path)
    try:
        v = container.streams.video[0]
        n = int(v.frames or 0)
        tb = v.time_base
        try:
            packets = [(p.pts, p.duration) for p in container.demux(v) if p.size > 0]
        except av.error.FFmpegError as exc:
            raise VideoError(f"video {str(path)!r} cannot be demuxed: {exc}") from None
        if n <= 0:
            n = len(packets)
        rate = v.average_rate or v.guessed_rate or v.base_rate
        fps = float(rate) if rate else 0.0
        if n <= 0:
            raise VideoError(f"video {str(path)!r} has a video stream with 0 frames")
        if not fps > 0:
            raise VideoError(f"video {str(path)!r} has no usable frame rate")
        times, end = _frame_times(packets, tb, n)
        return VideoInfo(Path(path), n, fps, int(v.codec_context.width), int(v.codec_context.height),
                         str(v.codec_context.name), times, end)
    finally:
        container.close()


def _frame_times(packets: list[tuple[int | None, int | None]], time_base, n: int) -> tuple[tuple[float, ...], float | None]:
    """Frame times (s, from the first frame, presentation order) and the end of the last frame
    from demuxed ``(pts, duration)`` pairs; ``((), None)`` when timestamps are missing or their
    count differs from ``n``."""
    if time_base is None or len(packets) != n or any(p is None for p, _ in packets):
        return (), None
    order = sorted(range(n), key=lambda i: packets[i][0])
    pts = np.array([packets[i][0] for i in order], dtype=np.int64)
    t = (pts - pts[0]) * float(time_base)
    last_dur = packets[order[-1]][1]
    if last_dur:
        step = last_dur * float(time_base)
    elif n > 1:
        step = float(np.median(np.diff(t)))
    else:
        return tuple(t.tolist()), None
    return tuple(t.tolist()), float(t[-1] + step)


def _index(frame, start_pts: int, time_base: Fraction, fps: float) -> int:
    """Frame index from its presentation time: ``round((pts − start)·time_base·fps)``."""
    return int(round(float((frame.pts - start_pts) * time_base) * fps))


def decode_all(path: str | Path, *, size: tuple[int, int] | None = None) -> np.ndarray:
    """Decode every frame in order (the sequential reference path).

    Args:
        size: optional ``(width, height)`` to rescale to.

    Returns:
        ``uint8`` array ``(n_frames, height, width, 3)``, RGB.

    Raises:
        VideoError: as :func:`probe_video`, or a decode error mid-stream.
    """
    import av

    container = _open(path)
    try:
        kw = {} if size is None else {"width": size[0], "height": size[1]}
        frames = [f.to_ndarray(format="rgb24", **kw) for f in container.decode(video=0)]
    except av.error.FFmpegError as exc:
        raise VideoError(f"video {str(path)!r}: decode failed: {exc}") from None
    finally:
        container.close()
    if not frames:
        raise VideoError(f"video {str(path)!r} decoded to 0 frames")
    return np.stack(frames)


def decode_frames(path: str | Path, indices: Sequence[int], *, info: VideoInfo | None = None,
                  reseek_gap: int = 24, size: tuple[int, int] | None = None,
                  stats: dict | None = None) -> np.ndarray:
    """Decode only the frames at ``indices`` by seeking to the keyframe before each and decoding
    forward to the exact frame.

    Sorted targets are visited once: after a seek, decoding continues forward while the next
    target is at most ``reseek_gap`` frames ahead; a farther target triggers a new seek. A
    demuxer that lands *after* the target (MPEG-TS seeks by bytes) is re-sought earlier, one
    second back and doubling, down to the start of the stream.

    Args:
        indices: frame indices in ``[0, n_frames)``, any order, repeats allowed.
        info: the :func:`probe_video` result (probed if ``None``).
        reseek_gap: frames ahead beyond which a new seek is cheaper than decoding on (>= 1).
        size: optional ``(width, height)`` to rescale to.
        stats: if given, receives ``{"seeks": int, "decoded": int}`` (frames decoded, wanted or not).

    Returns:
        ``uint8`` array ``(len(indices), height, width, 3)`` RGB, in the order of ``indices``.

    Raises:
        ValueError: an index outside ``[0, n_frames)``, or ``reseek_gap < 1``.
        VideoError: unreadable video, or a target the stream never reached.
    """
    import av

    info = info or probe_video(path)
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    if reseek_gap < 1:
        raise ValueError(f"reseek_gap={reseek_gap}; allowed: >= 1")
    if idx.size == 0:
        return np.zeros((0, info.height, info.width, 3), np.uint8)
    bad = idx[(idx < 0) | (idx >= info.n_frames)]
    if bad.size:
        raise ValueError(f"frame index {int(bad[0])} outside [0, {info.n_frames}) of {str(path)!r}")
    targets = sorted(set(idx.tolist()))
    got: dict[int, np.ndarray] = {}
    container = _open(path)
    seeks = decoded = 0
    kw = {} if size is None else {"width": size[0], "height": size[1]}
    try:
        v = container.streams.video[0]
        tb = v.time_base
        start = v.start_time or 0
        k = 0
        while k < len(targets):
            t = targets[k]
            back = 0
            while True:  # seek to a keyframe <= t; some demuxers (MPEG-TS) overshoot: then seek earlier
                pts = start + int(round((t - back) / info.fps / tb)) if t - back > 0 else min(0, start)
                container.seek(pts, stream=v, backward=True, any_frame=False)
                seeks += 1
                frames = container.decode(v)
                first = next((f for f in frames if f.pts is not None), None)
                decoded += first is not None
                if (first is not None and _index(first, start, tb, info.fps) <= t) or t - back <= 0:
                    break
                back = max(2 * back, int(math.ceil(info.fps)))  # overshot (or hit the end): back off, doubling
            progressed = False
            for frame in itertools.chain([first] if first is not None else [], frames):
                if frame is not first:
                    decoded += 1
                if frame.pts is None:
                    continue
                i = _index(frame, start, tb, info.fps)
                while k < len(targets) and targets[k] < i:
                    k += 1  # frame missing from the stream after this seek: give up on it below
                    progressed = True
                if k < len(targets) and targets[k] == i:
                    got[i] = frame.to_ndarray(format="rgb24", **kw)
                    k += 1
                    progressed = True
                if k >= len(targets) or (i >= t and targets[k] - i > reseek_gap):
                    break  # done, or (once this seek's target is reached) the next one is far: seek again
            if not progressed:
                break
    except av.error.FFmpegError as exc:
        raise VideoError(f"video {str(path)!r}: decode failed: {exc}") from None
    finally:
        container.close()
    missing = [t for t in targets if t not in got]
    if missing:
        raise VideoError(f"video {str(path)!r}: frames {missing[:5]} not reached by seeking (corrupt "
                         "or variable-frame-rate stream); use decode_all")
    if stats is not None:
        stats.update(seeks=seeks, decoded=decoded)
    return np.stack([got[int(i)] for i in idx])


def segment_bounds(n_frames: int, n_segments: int) -> np.ndarray:
    """Boundaries of ``n_segments`` contiguous, nearly equal segments of ``n_frames`` frames.

    Returns:
        ``int64`` array ``(n_segments + 1,)``; segment ``i`` is frames ``[b[i], b[i+1])``.

    Raises:
        ValueError: ``n_segments < 1`` or ``n_frames < n_segments`` (a segment would be empty).
    """
    if n_segments < 1:
        raise ValueError(f"n_segments={n_segments}; allowed: >= 1")
    if n_frames < n_segments:
        raise ValueError(f"n_frames={n_frames} < n_segments={n_segments}: segments would be empty; "
                         "use at most n_frames segments")
    return np.round(np.linspace(0, n_frames, n_segments + 1)).astype(np.int64)


def sample_segment_frames(bounds: np.ndarray, segment: int, k: int, rng: np.random.Generator,
                          exclude: Sequence[int] = ()) -> np.ndarray:
    """``k`` distinct frame indices drawn uniformly from segment ``segment``, avoiding ``exclude``
    (frames already seen) while unseen ones remain.

    Raises:
        ValueError: ``segment`` outside ``[0, len(bounds) − 1)`` or ``k < 1``.
    """
    n_seg = len(bounds) - 1
    if not 0 <= segment < n_seg:
        raise ValueError(f"segment={segment}; allowed: 0..{n_seg - 1}")
    if k < 1:
        raise ValueError(f"k={k}; allowed: >= 1")
    frames = np.arange(bounds[segment], bounds[segment + 1])
    ex = {int(f) for f in exclude}
    fresh = frames[[int(f) not in ex for f in frames]] if ex else frames  # == np.setdiff1d(frames, exclude)
    pool = fresh if fresh.size >= k else frames
    return np.sort(rng.choice(pool, size=min(k, pool.size), replace=False))


def has_constant_frame_grid(path: str | Path, info: VideoInfo | None = None) -> bool:
    """Whether the packets' presentation times fall on the constant-rate grid that
    :func:`decode_frames` indexes by: ``round((pts − start)·time_base·fps)`` over all packets is
    exactly ``0..n_frames−1``. One demuxing pass, no decoding.

    A variable-frame-rate file (typical of phone recordings) fails this: its pts-derived indices
    skip and repeat, so seeking by index would not return the frames a sequential decode numbers
    that way.

    Raises:
        VideoError: as :func:`probe_video`.
    """
    import av

    info = info or probe_video(path)
    container = _open(path)
    try:
        v = container.streams.video[0]
        tb, start = v.time_base, v.start_time or 0
        pts = [p.pts for p in container.demux(v) if p.size > 0 and p.pts is not None]
    except av.error.FFmpegError as exc:
        raise VideoError(f"video {str(path)!r} cannot be demuxed: {exc}") from None
    finally:
        container.close()
    idx = sorted(int(round(float((q - start) * tb) * info.fps)) for q in pts)
    return idx == list(range(info.n_frames))


class VideoReader:
    """Frames of one video, decoded on demand by exact seeking and cached by frame index.

    Frame ``i`` is the ``i``-th frame of a sequential decode. When the file is not on a constant
    frame grid (:func:`has_constant_frame_grid`, e.g. variable frame rate) seeking by index is
    not exact, so frames are read by a sequential pass instead (slower, same frames).

    Args:
        path: a local video file.
        n_segments: segments to cut it into (at most ``n_frames``).
        size: optional ``(width, height)`` to rescale frames to.

    Attributes:
        info: :class:`VideoInfo`; bounds: segment boundaries (:func:`segment_bounds`);
        decoded: frames decoded so far (cache misses).

    Raises:
        VideoError: as :func:`probe_video`; ValueError: as :func:`segment_bounds`, or a ``size``
            that is not two positive integers.
    """

    def __init__(self, path: str | Path, n_segments: int, *, size: tuple[int, int] | None = None) -> None:
        if size is not None and (len(size) != 2 or any(isinstance(v, bool) or not isinstance(v, (int, np.integer))
                                                      or v < 1 for v in size)):
            raise ValueError(f"size={size!r}; allowed: (width, height) positive integers, or None")
        self.info = probe_video(path)
        self.bounds = segment_bounds(self.info.n_frames, n_segments)
        self.size = size
        self.seekable = has_constant_frame_grid(path, self.info)
        self._cache: dict[int, np.ndarray] = {}
        self.decoded = 0

    @property
    def n_segments(self) -> int:
        """Number of segments."""
        return len(self.bounds) - 1

    def frames(self, indices: Sequence[int]) -> np.ndarray:
        """Frames at ``indices`` (``uint8 (k, H, W, 3)``), decoding only those not cached."""
        need = sorted({int(i) for i in indices} - set(self._cache))
        bad = [i for i in need if not 0 <= i < self.info.n_frames]
        if bad:
            raise ValueError(f"frame index {bad[0]} outside [0, {self.info.n_frames}) of {str(self.info.path)!r}")
        if need:
            got = (decode_frames(self.info.path, need, info=self.info, size=self.size) if self.seekable
                   else self._sequential(need))
            for i, f in zip(need, got):
                self._cache[i] = f
            self.decoded += len(need)
        return np.stack([self._cache[int(i)] for i in indices])

    def _sequential(self, need: list[int]) -> list[np.ndarray]:
        """Frames at sorted positions ``need`` by one decoding pass from the start (positions as in
        :func:`decode_all`), stopping after the last one."""
        import av

        want, out = set(need), {}
        kw = {} if self.size is None else {"width": self.size[0], "height": self.size[1]}
        container = _open(self.info.path)
        try:
            for pos, frame in enumerate(container.decode(video=0)):
                if pos in want:
                    out[pos] = frame.to_ndarray(format="rgb24", **kw)
                if pos >= need[-1]:
                    break
        except av.error.FFmpegError as exc:
            raise VideoError(f"video {str(self.info.path)!r}: decode failed: {exc}") from None
        finally:
            container.close()
        missing = [i for i in need if i not in out]
        if missing:
            raise VideoError(f"video {str(self.info.path)!r}: frames {missing[:5]} not decoded (the stream ended early)")
        return [out[i] for i in need]

    def preview(self) -> np.ndarray:
        """The first frame of every segment, ``uint8 (n_segments, H, W, 3)``."""
        return self.frames(self.bounds[:-1])


def encode_video(path: str | Path, frames: np.ndarray, fps: int = 8, *, codec: str = "libx264",
                 gop: int = 16, crf: int = 18) -> Path:
    """Encode ``uint8 (T, H, W, 3)`` RGB frames to an MP4 with PyAV (H.264 by default).

    ``gop`` is the keyframe interval, so seeking must decode forward up to ``gop − 1`` frames.
    The container follows the file extension (``.mp4``, ``.mkv``, ``.ts``, ...); ``codec`` is any
    encoder in PyAV's bundled FFmpeg (``libx264``, ``mpeg4``, ``libvpx-vp9``, ...).

    Raises:
        ValueError: frames not ``uint8 (T, H, W, 3)`` with even H and W, or ``T == 0``.
    """
    import av

    frames = np.asarray(frames)
    if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[-1] != 3 or frames.shape[0] == 0:
        raise ValueError(f"frames must be uint8 (T>0, H, W, 3), got {frames.dtype} {frames.shape}")
    if frames.shape[1] % 2 or frames.shape[2] % 2:
        raise ValueError(f"frame size {frames.shape[2]}x{frames.shape[1]} must be even for yuv420p")
    path = Path(path)
    with av.open(str(path), "w") as out:
        s = out.add_stream(codec, rate=fps)
        s.width, s.height, s.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        if codec == "libx264":
            s.options = {"g": str(gop), "keyint_min": str(gop), "crf": str(crf), "preset": "ultrafast",
                         "tune": "zerolatency"}
        else:
            s.options = {"g": str(gop)}
        for f in frames:
            for p in s.encode(av.VideoFrame.from_ndarray(f, format="rgb24")):
                out.mux(p)
        for p in s.encode():
            out.mux(p)
    return path
