"""End-to-end use on image files: a frozen encoder + a trained head, ``fit`` on a
``real/`` + ``fake/<generator>/`` folder, ``predict(paths)``, per-generator evaluation, save/load.

Example (a local CLIP folder written by ``save_pretrained``; nothing is downloaded)::

    from neurips26.aigi_detection import AIGIDetector, LossSwitches, load_encoder
    det = AIGIDetector.fit("data/train", load_encoder("/models/clip-vit-large-patch14"), LossSwitches())
    det.save("head.pt")
    pred = det.predict(["a.png", "b.jpg"])           # pred.scores: P(generated); pred.skipped
    det.evaluate("data/test")["mean"]                # mACC / mAP over generator folders
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .data import encode_files, format_audit, scan_folder
from .diagnostics import per_generator_metrics
from .heads import LossSwitches, TrainedDetector, train_detector


def pseudo_content_labels(cues: np.ndarray, k: int = 3, seed: int = 0) -> np.ndarray:
    """Content (semantic) pseudo-labels when none are given: k-means on the deepest cue.

    Args:
        cues: ``[N, K, D]``. k: number of clusters (>= 2).

    Returns:
        ``int64 [N]`` in ``0..k-1``.

    Raises:
        ValueError: ``k < 2`` or fewer than ``k`` images.

    Source: inferred (no content labels in a user's folder; the deepest cue is the most semantic).
    """
    from sklearn.cluster import KMeans
    from sklearn.preprocessing import StandardScaler

    if k < 2 or len(cues) < k:
        raise ValueError(f"k={k} with {len(cues)} images; allowed: 2 <= k <= number of images")
    z = StandardScaler().fit_transform(np.asarray(cues)[:, -1])
    return KMeans(k, n_init=5, random_state=seed).fit_predict(z).astype(np.int64)


@dataclass
class Predictions:
    """Scores of ``predict``.

    Attributes:
        paths: the input paths, in order. scores: ``float64 [N]`` P(generated), NaN where skipped.
        is_generated: ``bool [N]`` (scores >= threshold; False where skipped).
        skipped: ``{path: reason}`` for unreadable or truncated files.
    """

    paths: list[str]
    scores: np.ndarray
    is_generated: np.ndarray
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass
class EncodedFolder:
    """A training folder's cues, encoded once so that several heads can be fitted on them.

    Attributes:
        cues: ``float [N, K, D]`` per-layer cues of the readable images.
        y: ``int64 [N]``, 1 for generated (``fake/<generator>/``), 0 for ``real/``.
        index: positions of the readable images in ``scan_folder(root).paths_and_groups()`` order.
        layers, policy: the cue selection and size policy used (a head fitted on them uses the same).
    """

    cues: np.ndarray
    y: np.ndarray
    index: np.ndarray
    layers: list[int] | None
    policy: str


def encode_training_folder(root: str | Path, encoder, layers: Sequence[int] | None = None,
                           policy: str = "center_crop", audit: bool = True, device: str = "cpu") -> EncodedFolder:
    """Encode the ``real/`` + ``fake/<generator>/`` folder ``root`` once (see :meth:`AIGIDetector.fit`).

    ``audit`` runs :func:`~.data.format_audit` first (warnings name any real/fake format difference).

    Raises:
        FileNotFoundError / ValueError: from :func:`~.data.scan_folder` and :func:`~.data.encode_files`.
    """
    ds = scan_folder(root)
    paths, groups = ds.paths_and_groups()
    if audit:
        format_audit(ds.real, [p for ps in ds.fake.values() for p in ps])
    cues, loaded = encode_files(paths, lambda im: encoder.layer_cls(im, layers=layers, device=device),
                                encoder.image_size, policy)
    y = np.array([groups[i] != "real" for i in loaded.index], np.int64)
    return EncodedFolder(cues, y, np.asarray(loaded.index), list(layers) if layers else None, policy)


@dataclass
class AIGIDetector:
    """A frozen encoder, its cue selection and a trained :class:`TrainedDetector`.

    Attributes:
        encoder: :class:`~.encoder.FrozenEncoder` or :class:`~.encoder.RandomConvEncoder`.
        detector: the trained head. layers: 1-based blocks used as cues (None: all).
        policy: image size policy (``center_crop`` or ``resize``). threshold: on P(generated).
        device: torch device of the encoder's forward passes (``"cuda"`` on a GPU; the head runs on CPU).
    """

    encoder: object
    detector: TrainedDetector
    layers: list[int] | None = None
    policy: str = "center_crop"
    threshold: float = 0.5
    device: str = "cpu"

    @classmethod
    def fit(cls, root: str | Path, encoder, switches: LossSwitches | None = None, content: np.ndarray | None = None,
            layers: Sequence[int] | None = None, policy: str = "center_crop", audit: bool = True, seed: int = 0,
            device: str = "cpu", encoded: EncodedFolder | None = None, **train_kw) -> "AIGIDetector":
        """Train a head on the ``real/`` + ``fake/<generator>/`` folder ``root``.

        ``switches`` default to SA-AFL (:class:`LossSwitches`). ``content``: one int >= 0 per image
        in ``scan_folder(root).paths_and_groups()`` order (reals, then generators by name); without
        it the semantic terms use :func:`pseudo_content_labels` (stated in a warning; in the
        synthetic world these pseudo-labels did not remove the content shortcut). ``audit`` runs
        :func:`~.data.format_audit` first (warnings name any real/fake format difference).
        ``encoded``: the folder already encoded by :func:`encode_training_folder` (``root``,
        ``layers``, ``policy`` and ``audit`` are then not used), to fit several heads on one encoding.

        Raises:
            FileNotFoundError / ValueError: from :func:`~.data.scan_folder` and :func:`~.data.load_images`.
        """
        switches = switches or LossSwitches()
        if encoded is None:
            encoded = encode_training_folder(root, encoder, layers, policy, audit, device)
        cues, y = encoded.cues, encoded.y
        if switches.needs_content and content is None:
            warnings.warn("no content labels given: SA-AFL's semantic terms use k-means pseudo-labels (k=3) of the "
                          "deepest cue", UserWarning, stacklevel=2)
            content = pseudo_content_labels(cues, seed=seed)
        elif content is not None:
            content = np.asarray(content)[encoded.index]
        det = train_detector(cues, y, switches, content=content, seed=seed, **train_kw)
        return cls(encoder, det, encoded.layers, encoded.policy, device=device)

    def predict(self, paths: Sequence[str | Path], max_bad_fraction: float = 1.0) -> Predictions:
        """Score image files. Unreadable files get NaN and are listed in ``skipped``; with
        ``max_bad_fraction < 1`` too many bad files raise ``ValueError`` (see :func:`~.data.load_images`).

        Raises:
            ValueError: ``paths`` empty, or no readable file.
        """
        paths = [str(p) for p in paths]
        if not paths:
            raise ValueError("predict() got no paths")
        cues, loaded = encode_files(paths,
                                    lambda im: self.encoder.layer_cls(im, layers=self.layers, device=self.device),
                                    self.encoder.image_size, self.policy, max_bad_fraction)
        scores = np.full(len(paths), np.nan)
        scores[loaded.index] = self.detector.scores(cues)
        return Predictions(paths, scores, np.nan_to_num(scores, nan=-1.0) >= self.threshold, dict(loaded.skipped))

    def evaluate(self, root: str | Path) -> dict[str, dict]:
        """Per-generator ACC / AP / AUROC on a ``real/`` + ``fake/<generator>/`` folder (``"mean"`` = mACC, mAP)."""
        ds = scan_folder(root)
        paths, groups = ds.paths_and_groups()
        pred = self.predict(paths)
        ok = ~np.isnan(pred.scores)
        return per_generator_metrics(pred.scores[ok], np.asarray(groups)[ok], threshold=self.threshold)

    def save(self, path: str | Path) -> None:
        """Save the head (not the encoder) with ``torch.save``; reload with :meth:`load`.

        Raises:
            FileNotFoundError: the folder of ``path`` does not exist (named).
        """
        import torch

        path = Path(path).expanduser()
        if not path.parent.is_dir():
            raise FileNotFoundError(f"folder {str(path.parent)!r} for the head file does not exist")
        torch.save({"detector": self.detector.state(), "layers": self.layers, "policy": self.policy,
                    "threshold": self.threshold, "encoder": getattr(self.encoder, "name", "")}, Path(path))

    @classmethod
    def load(cls, path: str | Path, encoder, device: str = "cpu") -> "AIGIDetector":
        """Load a head saved by :meth:`save` onto ``encoder``.

        Raises:
            FileNotFoundError: ``path`` missing (named). ValueError: the file is not a saved head, or
                the head's cue shape does not match the encoder's.
        """
        import torch

        p = Path(path).expanduser()
        if not p.is_file():
            raise FileNotFoundError(f"detector head file {str(p)!r} not found")
        try:
            st = torch.load(p, map_location="cpu", weights_only=True)
            det = TrainedDetector.from_state(st["detector"])
        except Exception as exc:  # not a torch file, or a torch file of something else
            raise ValueError(f"{str(p)!r} is not a detector head saved by AIGIDetector.save "
                             f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from exc
        K, D = det.mean.shape
        nk = len(st["layers"]) if st["layers"] else encoder.num_layers
        if (nk, encoder.hidden_size) != (K, D):
            raise ValueError(f"head {str(p)!r} expects {K} cues of width {D}; encoder {getattr(encoder, 'name', '')!r} "
                             f"gives {nk} of width {encoder.hidden_size}")
        return cls(encoder, det, st["layers"], st["policy"], st["threshold"], device)
