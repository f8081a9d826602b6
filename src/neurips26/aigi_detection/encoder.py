"""Frozen image encoders from ``transformers`` (CLIP vision tower or ViT) and their per-layer
class-token cues.

The cue set follows DoU (He et al., CVPR 2026, "Diversity over Uniformity"; its public code was
read): the class token of every transformer block of a frozen CLIP ViT is one "cue"
``g_l in R^D``, ``l = 1..L``. Blocks are taken from ``output_hidden_states`` (a tuple in depth
order), so cue ``l`` is block ``l`` — numeric depth, never the string order of module names.

Two ways to get an encoder:

* :func:`build_tiny_encoder` — a randomly initialised tiny ViT/CLIP built from a config (tests
  and the synthetic reproduction; its random frozen weights act as fixed random features).
* :func:`load_encoder` — a user's local folder written by ``save_pretrained`` (e.g. CLIP
  ViT-L/14); nothing is ever downloaded, and a missing path is a ``FileNotFoundError`` naming it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)  # OpenAI CLIP preprocessing constants
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


@dataclass
class FrozenEncoder:
    """A frozen ``transformers`` vision model with its input normalisation.

    Attributes:
        model: ``ViTModel`` or ``CLIPVisionModel`` in eval mode, gradients off.
        image_size: the square input side in pixels the model expects.
        mean, std: per-channel normalisation applied to images in [0, 1].
        name: where it came from (a folder path or ``"tiny-vit(config)"``).
    """

    model: Any
    image_size: int
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    name: str = ""

    @property
    def num_layers(self) -> int:
        """Number of transformer blocks L (cues per image)."""
        return int(self.model.config.num_hidden_layers)

    @property
    def hidden_size(self) -> int:
        """Width D of each class-token cue."""
        return int(self.model.config.hidden_size)

    def layer_cls(self, images: np.ndarray, batch_size: int = 256, layers: Sequence[int] | None = None,
                  device: str = "cpu") -> np.ndarray:
        """Per-layer class-token cues of a batch of images.

        Args:
            images: ``float [N, H, W, 3]`` in [0, 1] with ``H == W == image_size``.
            batch_size: images per forward pass.
            layers: 1-based block indices to keep (e.g. the last k to shrink a cache); default all,
                in depth order.
            device: torch device string.

        Returns:
            ``float32 [N, len(layers), D]``: ``out[:, i]`` is the class token after block ``layers[i]``.

        Raises:
            ValueError: wrong image shape or size, values outside [0, 1], or a layer index
                outside ``1..L``.
        """
        import torch

        x = _check_images(images, self.image_size)
        L = self.num_layers
        sel = _layer_selection(layers, L)
        mean = torch.tensor(self.mean).view(1, 3, 1, 1)
        std = torch.tensor(self.std).view(1, 3, 1, 1)
        self.model.to(device)
        out = np.empty((len(x), len(sel), self.hidden_size), np.float32)
        with torch.inference_mode():
            for i in range(0, len(x), batch_size):
                px = torch.from_numpy(np.ascontiguousarray(x[i:i + batch_size], np.float32)).permute(0, 3, 1, 2)
                px = ((px - mean) / std).to(device)
                hs = self.model(pixel_values=px, output_hidden_states=True).hidden_states  # (emb, block1..L)
                out[i:i + batch_size] = torch.stack([hs[v][:, 0] for v in sel], 1).float().cpu().numpy()
        return out


def _check_images(images, size: int) -> np.ndarray:
    """``images`` as an array ``[N, size, size, 3]`` of finite real numbers in [0, 1], else ValueError."""
    x = np.asarray(images)
    if x.ndim != 4 or x.shape[-1] != 3 or x.shape[1:3] != (size, size):
        raise ValueError(f"images shape {x.shape}; allowed: [N, {size}, {size}, 3]")
    if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer) or x.dtype == bool):
        raise ValueError(f"images dtype {x.dtype}; allowed: real floats in [0, 1]")
    if x.size and (not np.isfinite(x).all() or x.min() < 0 or x.max() > 1):
        raise ValueError("images must be finite floats in [0, 1] (uint8 images: divide by 255)")
    return x


def _layer_selection(layers: Sequence[int] | None, L: int) -> list[int]:
    """1-based block indices: all ``1..L`` when ``layers`` is None; else integers in ``1..L``."""
    if layers is None:
        return list(range(1, L + 1))
    sel = list(layers)
    if not sel or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= L for v in sel):
        raise ValueError(f"layers={sel}; allowed: a non-empty list of integer block indices in 1..{L}")
    return [int(v) for v in sel]


def build_tiny_encoder(kind: str = "vit", image_size: int = 32, patch_size: int = 4, hidden_size: int = 64,
                       num_layers: int = 6, num_heads: int = 4, seed: int = 0) -> FrozenEncoder:
    """A tiny randomly initialised, frozen ViT or CLIP vision tower built from a config.

    Args:
        kind: ``"vit"`` (``ViTModel``) or ``"clip"`` (``CLIPVisionModel``).
        image_size, patch_size: input side and patch side in pixels (``image_size % patch_size == 0``).
        hidden_size, num_layers, num_heads: width D, blocks L, attention heads.
        seed: torch seed of the random initialisation.

    Raises:
        ValueError: unknown ``kind`` or inconsistent sizes.

    Source: inferred (a stand-in for CLIP ViT-L/14 that runs on a CPU; random frozen weights are
    fixed random features).
    """
    import torch
    from transformers import CLIPVisionConfig, CLIPVisionModel, ViTConfig, ViTModel

    if kind not in ("vit", "clip"):
        raise ValueError(f"kind={kind!r}; allowed: 'vit', 'clip'")
    if image_size % patch_size or hidden_size % num_heads or min(image_size, patch_size, num_layers) < 1:
        raise ValueError(f"image_size={image_size}, patch_size={patch_size}, hidden_size={hidden_size}, "
                         f"num_heads={num_heads}, num_layers={num_layers}: image_size must be a multiple of "
                         "patch_size and hidden_size a multiple of num_heads, all >= 1")
    common = dict(image_size=image_size, patch_size=patch_size, num_channels=3, hidden_size=hidden_size,
                  num_hidden_layers=num_layers, num_attention_heads=num_heads, intermediate_size=2 * hidden_size)
    state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        if kind == "vit":
            model = ViTModel(ViTConfig(**common), add_pooling_layer=False)
            mean = std = (0.5, 0.5, 0.5)
        else:
            model = CLIPVisionModel(CLIPVisionConfig(**common))
            mean, std = CLIP_MEAN, CLIP_STD
    finally:
        torch.random.set_rng_state(state)
    return FrozenEncoder(_freeze(model), image_size, mean, std, f"tiny-{kind}(config, seed={seed})")


def load_encoder(path: str | Path) -> FrozenEncoder:
    """Load a frozen encoder from a local folder written by ``save_pretrained``; never downloads.

    Accepts a CLIP model folder (``model_type`` ``clip`` — the vision tower is taken) or a
    vision-only folder (``clip_vision_model``, ``vit``). Normalisation: CLIP's constants for CLIP,
    the ViT config's 0.5/0.5 otherwise (a ``preprocessor_config.json`` with ``image_mean`` /
    ``image_std`` overrides both).

    Raises:
        FileNotFoundError: ``path`` does not exist or has no ``config.json`` (the message names it).
        ValueError: a ``model_type`` other than clip, clip_vision_model or vit, or a config.json
            that is not valid JSON (named).
    """
    import json

    from transformers import CLIPVisionModel, ViTModel

    p = Path(path).expanduser()
    if not p.is_dir() or not (p / "config.json").is_file():
        raise FileNotFoundError(f"encoder weights folder {str(p)!r} not found (or it has no config.json); give a "
                                "local folder written by save_pretrained, e.g. a CLIP ViT-L/14 checkpoint — "
                                "nothing is downloaded")
    try:
        cfg = json.loads((p / "config.json").read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"encoder config {str(p / 'config.json')!r} is not valid JSON ({exc})") from exc
    mtype = cfg.get("model_type")
    if mtype in ("clip", "clip_vision_model"):
        model = CLIPVisionModel.from_pretrained(p, local_files_only=True)
        mean, std = CLIP_MEAN, CLIP_STD
        size = model.config.image_size
    elif mtype == "vit":
        model = ViTModel.from_pretrained(p, local_files_only=True, add_pooling_layer=False)
        mean = std = (0.5, 0.5, 0.5)
        size = model.config.image_size
    else:
        raise ValueError(f"encoder at {str(p)!r} has model_type={mtype!r}; allowed: clip, clip_vision_model, vit")
    pre = p / "preprocessor_config.json"
    if pre.is_file():
        pc = json.loads(pre.read_text())
        mean = tuple(pc.get("image_mean", mean))
        std = tuple(pc.get("image_std", std))
    return FrozenEncoder(_freeze(model), int(size), mean, std, str(p))


def _freeze(model):
    model.eval()
    for prm in model.parameters():
        prm.requires_grad_(False)
    return model


class RandomConvEncoder:
    """Fixed random multi-scale features: a frozen random CNN whose per-layer pooled responses
    are the cues (the CPU stand-in for per-layer class tokens).

    Layer ``l`` = ``ReLU(conv3x3(x_{l-1}))`` with stride 1 for the first layer and 2 after, random
    He-initialised filters; its cue is the spatial mean of the rectified responses (a rectified
    energy, so second-order statistics such as high-frequency energy are visible). Shallow
    layers see pixel-scale artifacts, deep layers coarse structure.

    Same interface as :class:`FrozenEncoder` (``layer_cls``, ``num_layers``, ``hidden_size``,
    ``image_size``). Source: inferred (random-feature stand-in; per-layer pooled features mirror
    DoU's per-layer cues).
    """

    def __init__(self, image_size: int = 32, num_layers: int = 4, width: int = 32, seed: int = 0):
        import torch

        if num_layers < 1 or width < 1 or image_size < 2 ** num_layers:
            raise ValueError(f"image_size={image_size}, num_layers={num_layers}, width={width}; allowed: "
                             "num_layers >= 1, width >= 1, image_size >= 2**num_layers")
        g = torch.Generator().manual_seed(seed)
        self.weights = []
        cin = 3
        for _ in range(num_layers):
            self.weights.append(torch.randn(width, cin, 3, 3, generator=g) * math.sqrt(2.0 / (9 * cin)))
            cin = width
        self.biases = [0.1 * torch.randn(width, generator=g) for _ in range(num_layers)]
        self.image_size, self.width, self.name = image_size, width, f"random-cnn(seed={seed})"
        self.mean = self.std = (0.5, 0.5, 0.5)

    @property
    def num_layers(self) -> int:
        """Number of layers L (cues per image)."""
        return len(self.weights)

    @property
    def hidden_size(self) -> int:
        """Width D of each cue."""
        return self.width

    def layer_cls(self, images: np.ndarray, batch_size: int = 512, layers: Sequence[int] | None = None,
                  device: str = "cpu") -> np.ndarray:
        """Per-layer pooled cues ``float32 [N, len(layers), D]`` of images ``[N, H, W, 3]`` in [0, 1]
        (``H == W == image_size``). Raises ValueError like :meth:`FrozenEncoder.layer_cls`."""
        import torch
        import torch.nn.functional as F

        x = _check_images(images, self.image_size)
        L = self.num_layers
        sel = _layer_selection(layers, L)
        out = np.empty((len(x), len(sel), self.width), np.float32)
        with torch.inference_mode():
            for i in range(0, len(x), batch_size):
                h = (torch.from_numpy(np.ascontiguousarray(x[i:i + batch_size], np.float32)).permute(0, 3, 1, 2) - 0.5) / 0.5
                cues = []
                for l, (w, b) in enumerate(zip(self.weights, self.biases)):
                    h = F.relu(F.conv2d(h, w, b, stride=1 if l == 0 else 2, padding=1))
                    cues.append(h.mean((2, 3)))
                out[i:i + batch_size] = torch.stack([cues[v - 1] for v in sel], 1).numpy()
        return out
