"""The question-driven prior from a frozen text–image model (CLIP, SigLIP) loaded from a folder.

``ClipPrior(path)(previews, question)`` returns the cosine similarity between the question's text
embedding and each preview frame's image embedding; :func:`~.belief.prior_from_scores` turns it
into ``b₀ ∝ exp(β·sim)`` mixed with uniform. The model is frozen (``eval``, no gradients) and is
never the policy being trained, so a policy cannot sharpen its own prior to pass the entropy
gate without searching. Nothing is downloaded: the folder must hold a model and processor
written by ``save_pretrained``. Without a model, use a uniform prior (``prior_scores=None`` in
:func:`~.search.search_video`).

Source: inferred (the abstract says the question sets the prior; CLIP-style text–frame
similarity as the frozen scorer follows T*, Ye et al. 2025, and common keyframe-selection practice).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["ClipPrior"]


def _features(out):
    """A features tensor from ``get_*_features`` (a tensor in transformers 4, an output with
    ``pooler_output`` in 5)."""
    return out if hasattr(out, "norm") else out.pooler_output


class ClipPrior:
    """Text–frame cosine similarity from a local dual-encoder (``AutoModel`` + ``AutoProcessor``).

    Args:
        path: folder with ``config.json``, weights and processor files.
        device: torch device string.
        batch_size: preview frames embedded per forward pass (>= 1).

    Raises:
        ValueError: ``path`` has no ``config.json`` or ``batch_size < 1``.
        RuntimeError: the folder's model has no ``get_text_features``/``get_image_features``.
    """

    def __init__(self, path: str | Path, *, device: str = "cpu", batch_size: int = 32) -> None:
        from transformers import AutoModel, AutoProcessor

        path = Path(path)
        if not (path / "config.json").is_file():
            raise ValueError(f"model path {str(path)!r} has no config.json; give a folder written by save_pretrained")
        if batch_size < 1:
            raise ValueError(f"batch_size={batch_size}; allowed: >= 1")
        self.model = AutoModel.from_pretrained(path, local_files_only=True).to(device).eval()
        self.processor = AutoProcessor.from_pretrained(path, local_files_only=True)
        if not (hasattr(self.model, "get_text_features") and hasattr(self.model, "get_image_features")):
            raise RuntimeError(f"{type(self.model).__name__} from {str(path)!r} is not a text–image dual encoder "
                               "(no get_text_features/get_image_features)")
        self.device, self.batch_size = device, batch_size

    def __call__(self, previews: np.ndarray, question: str) -> np.ndarray:
        """Cosine similarities ``float64 (N,)`` of ``question`` to ``uint8 (N, H, W, 3)`` previews.

        Raises:
            ValueError: empty question or previews not ``uint8 (N, H, W, 3)``.
        """
        import torch
        from PIL import Image

        previews = np.asarray(previews)
        if previews.dtype != np.uint8 or previews.ndim != 4 or previews.shape[-1] != 3 or len(previews) == 0:
            raise ValueError(f"previews must be uint8 (N>0, H, W, 3), got {previews.dtype} {previews.shape}")
        if not question.strip():
            raise ValueError("question is empty")
        with torch.no_grad():
            t = self.processor(text=[question], return_tensors="pt", padding=True)
            t = {k: v.to(self.device) for k, v in t.items()}
            text = _features(self.model.get_text_features(**t))
            text = text / text.norm(dim=-1, keepdim=True)                              # (1, D), unit norm
            sims = []
            for i in range(0, len(previews), self.batch_size):
                imgs = [Image.fromarray(f) for f in previews[i:i + self.batch_size]]
                pv = self.processor(images=imgs, return_tensors="pt")["pixel_values"].to(self.device)
                img = _features(self.model.get_image_features(pixel_values=pv))
                img = img / img.norm(dim=-1, keepdim=True)                              # (b, D)
                sims.append((img @ text.T)[:, 0])                                       # cos(q, preview_i)
        return torch.cat(sims).double().cpu().numpy()
