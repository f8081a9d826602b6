"""SA-AFL — Semantic–Artifact Self-Adversarial Feature Learning for AI-generated-image detection,
and the GAMC (Generative Artifact Manifold Clustering) diagnostics (paper 7, NeurIPS 2026).

The paper itself could not be found; only its abstract was read. The abstract states that
detectors rely on spurious semantic cues or a single prominent artifact, so their features
collapse to low diversity; that generators occupy distinct distributions along
multi-dimensional artifacts (GAMC); and that SA-AFL progressively disentangles semantics from
artifacts and uses a self-adversarial mechanism to balance learning across artifact dimensions
(+6.84 ACC / +8.25 mAP over 23 generators). **Every loss here is an inferred reading** of that
text built from named earlier work (DoU, DANN, RSC; see :mod:`.losses`), each behind a switch in
:class:`LossSwitches`.

* :mod:`.encoder` — frozen ``transformers`` CLIP/ViT encoders (tiny from a config, or a local
  folder), per-layer class-token cues in depth order; :class:`RandomConvEncoder` random features.
* :mod:`.losses` — gradient reversal, DANN ramp, pairwise linear HSIC, orthogonality, balance,
  dominant-cue mask.
* :mod:`.heads` — :class:`CueDetector`, :class:`LossSwitches`, :func:`train_detector`.
* :mod:`.diagnostics` — Fisher ratios, effective rank, contribution entropy, probes,
  generator clustering, per-generator ACC/AP.
* :mod:`.data` — ``real/`` + ``fake/<generator>/`` folders, loading with bad-input policy,
  :func:`format_audit` (container, JPEG quality from quantisation tables, 8×8 blockiness).
* :mod:`.detector` — :class:`AIGIDetector` (fit on a folder, ``predict(paths)``, evaluate, save/load).
* :mod:`.world` — the synthetic GAMC world of the reproduction.

Score a folder from a shell: ``python -m neurips26.aigi_detection score FOLDER --encoder DIR --head head.pt``.
"""

from .data import (
                   AuditReport,
                   FolderDataset,
                   FormatShortcutWarning,
                   ImageModeWarning,
                   LoadedImages,
                   blockiness,
                   encode_files,
                   format_audit,
                   jpeg_quality_estimate,
                   load_image,
                   load_images,
                   scan_folder,
)
from .detector import AIGIDetector, EncodedFolder, Predictions, encode_training_folder, pseudo_content_labels
from .diagnostics import (
                   artifact_statistics,
                   contribution_entropy,
                   detection_metrics,
                   effective_rank,
                   fisher_ratios,
                   generator_clustering,
                   linear_probe_accuracy,
                   paired_bootstrap_map_difference,
                   per_generator_metrics,
)
from .encoder import FrozenEncoder, RandomConvEncoder, build_tiny_encoder, load_encoder
from .heads import CueDetector, LossSwitches, TrainedDetector, train_detector
from .losses import (
    contribution_balance,
    cue_removal_consistency,
    dann_ramp,
    dominant_mask,
    gaussian_kl,
    grad_reverse,
    orthogonality,
    pairwise_linear_hsic,
)

__all__ = [
    "AuditReport", "FolderDataset", "FormatShortcutWarning", "ImageModeWarning", "LoadedImages", "encode_files",
    "format_audit", "blockiness", "jpeg_quality_estimate",
    "load_image", "load_images", "scan_folder", "AIGIDetector", "EncodedFolder", "encode_training_folder", "Predictions", "pseudo_content_labels",
    "artifact_statistics", "contribution_entropy", "detection_metrics", "effective_rank", "fisher_ratios",
    "generator_clustering", "linear_probe_accuracy", "paired_bootstrap_map_difference",
    "per_generator_metrics", "FrozenEncoder", "RandomConvEncoder",
    "build_tiny_encoder", "load_encoder", "CueDetector", "LossSwitches", "TrainedDetector", "train_detector",
    "contribution_balance", "cue_removal_consistency", "gaussian_kl", "dann_ramp", "dominant_mask", "grad_reverse",
    "orthogonality", "pairwise_linear_hsic",
]
