"""Image inputs for the chat backends: messages with images, JPEG encoding, and a local VLM.

:class:`ImageMessage` is a :class:`~neurips26.backends.base.Message` that also carries images
(JPEG bytes). Its ``to_dict()`` is the OpenAI vision wire format, a content list of one
``{"type": "text"}`` part followed by ``{"type": "image_url", "image_url": {"url":
"data:image/jpeg;base64,..."}}`` parts, so every existing backend takes it unchanged:

* :class:`~neurips26.backends.OpenAIBackend` sends it to any OpenAI-compatible vision endpoint
  (with its retries and reply cache; the cache key covers the image bytes);
* :class:`~neurips26.backends.ScriptedBackend` hands it to its policy, which can read
  ``message.images`` (:func:`decode_jpeg`) — an offline "VLM" that reads pixels;
* :class:`~neurips26.backends.StubOpenAIServer` receives the parts; :func:`images_in_request`
  decodes them back to arrays on the server side.

:class:`TransformersVisionBackend` runs a local image-text-to-text model (``AutoProcessor`` +
``AutoModelForImageTextToText``) loaded from a user's folder, never downloading.

Source: inferred: the OpenAI chat-completions vision message format (``image_url`` parts with
base64 data URLs) as served by OpenAI, vLLM and SGLang; transformers' image-text-to-text API.
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .base import BackendError, ChatParams, ChatReply, Message, as_messages
from .cache import ReplyCache
from .local import load_local_folder

__all__ = ["ImageMessage", "encode_jpeg", "decode_jpeg", "image_message", "images_in_request",
           "TransformersVisionBackend"]

_DATA_URL = "data:image/jpeg;base64,"


def encode_jpeg(frame: np.ndarray, *, max_side: int = 448, quality: int = 90) -> bytes:
    """JPEG bytes of an RGB frame, downscaled (aspect kept) so its longer side is <= ``max_side``.

    Args:
        frame: ``uint8 (H, W, 3)`` RGB.

    Raises:
        ValueError: not a ``uint8 (H, W, 3)`` array, or ``max_side < 16``.
    """
    from PIL import Image

    a = np.asarray(frame)
    if a.dtype != np.uint8 or a.ndim != 3 or a.shape[-1] != 3:
        raise ValueError(f"frame must be uint8 (H, W, 3) RGB, got {a.dtype} {a.shape}")
    if max_side < 16:
        raise ValueError(f"max_side={max_side}; allowed: >= 16")
    img = Image.fromarray(a)
    if max(img.size) > max_side:
        s = max_side / max(img.size)
        img = img.resize((max(1, round(img.width * s)), max(1, round(img.height * s))), Image.BILINEAR)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def decode_jpeg(data: bytes) -> np.ndarray:
    """``uint8 (H, W, 3)`` RGB array from JPEG (or any PIL-readable) bytes.

    Raises:
        ValueError: bytes PIL cannot read.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"not a readable image ({len(data)} bytes): {exc}") from None


@dataclass(frozen=True)
class ImageMessage(Message):
    """A chat message with text and images.

    Attributes:
        role, content: as :class:`Message` (``content`` is the text part).
        images: JPEG bytes of each image, in order (see :func:`encode_jpeg`).

    Raises:
        ValueError: as :class:`Message`, or an image that is not ``bytes``.
    """

    images: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.images, tuple) or not all(isinstance(b, bytes) and b for b in self.images):
            raise ValueError("ImageMessage.images must be a tuple of non-empty JPEG bytes")

    def to_dict(self) -> dict:
        """OpenAI vision format: ``{"role", "content": [text part, image_url parts...]}``."""
        parts: list[dict] = [{"type": "text", "text": self.content}]
        parts += [{"type": "image_url", "image_url": {"url": _DATA_URL + base64.b64encode(b).decode("ascii")}}
                  for b in self.images]
        return {"role": self.role, "content": parts}


def image_message(text: str, frames: Sequence[np.ndarray] | np.ndarray, *, role: str = "user",
                  max_side: int = 448) -> ImageMessage:
    """An :class:`ImageMessage` with ``frames`` (``uint8 (H, W, 3)`` each) encoded as JPEG."""
    return ImageMessage(role, text, tuple(encode_jpeg(f, max_side=max_side) for f in frames))


def images_in_request(body: dict) -> list[np.ndarray]:
    """Decode every base64 JPEG ``image_url`` part of an OpenAI chat request body (server side,
    e.g. inside a :class:`~neurips26.backends.StubOpenAIServer` reply function).

    Raises:
        ValueError: an ``image_url`` that is not a base64 data URL.
    """
    out = []
    for m in body.get("messages", []):
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if isinstance(part, dict) and part.get("type") == "image_url":
                url = str(part.get("image_url", {}).get("url", ""))
                if not url.startswith("data:image/") or ";base64," not in url:
                    raise ValueError(f"image_url {url[:40]!r} is not a base64 data URL")
                out.append(decode_jpeg(base64.b64decode(url.split(";base64,", 1)[1])))
    return out


class TransformersVisionBackend:
    """Chat with a local image-text-to-text model (a VLM) loaded from a folder.

    Args:
        path: folder written by ``save_pretrained`` holding the model and its processor.
        device: torch device string.
        cache: optional :class:`ReplyCache` (the key covers the image bytes).

    Raises:
        ValueError: ``path`` has no ``config.json``.
        BackendError: transformers cannot load a processor and image-text-to-text model from it.

    Messages become the processor's chat format (``{"type": "image"}`` parts then the text);
    :class:`Message` items without images are text-only turns. Greedy decoding at temperature 0,
    otherwise sampling seeded from ``params.seed`` (default 0).
    """

    def __init__(self, path: str | Path, *, device: str = "cpu", cache: ReplyCache | None = None) -> None:
        def load(p: Path):
            from transformers import AutoModelForImageTextToText, AutoProcessor

            return (AutoProcessor.from_pretrained(p, local_files_only=True),
                    AutoModelForImageTextToText.from_pretrained(p, local_files_only=True).to(device).eval())

        path, (self.processor, self.model) = load_local_folder(path, "an image-text-to-text model", load)
        self.path, self.device, self.cache = path, device, cache
        self.name = f"transformers-vlm:{path.name}"

    def identity(self) -> dict:
        """Cache identity: the resolved folder."""
        return {"kind": "transformers-vlm", "path": str(self.path.resolve())}

    def chat(self, messages: Sequence[Message], params: ChatParams = ChatParams()) -> ChatReply:
        """Generate up to ``params.max_tokens`` tokens for text + images.

        Raises:
            BackendError: if preprocessing or generation fails.
        """
        import torch

        msgs = as_messages(messages)
        key = ReplyCache.key(self.identity(), msgs, params) if self.cache else ""
        if self.cache and (hit := self.cache.get(key)) is not None:
            return hit
        t0 = time.perf_counter()
        conv, images = [], []
        for m in msgs:
            imgs = [decode_jpeg(b) for b in getattr(m, "images", ())]
            images += imgs
            conv.append({"role": m.role, "content": [{"type": "image"} for _ in imgs]
                         + [{"type": "text", "text": m.content}]})
        try:
            text = self.processor.apply_chat_template(conv, add_generation_prompt=True, tokenize=False)
            enc = self.processor(text=text, images=images or None, return_tensors="pt").to(self.device)
            gen = {"max_new_tokens": params.max_tokens, "do_sample": params.temperature > 0}
            if params.temperature > 0:
                gen["temperature"] = params.temperature
                torch.manual_seed(params.seed or 0)
            with torch.no_grad():
                out = self.model.generate(**enc, **gen)
            n_prompt = int(enc["input_ids"].shape[1])
            reply_text = self.processor.batch_decode(out[:, n_prompt:], skip_special_tokens=True)[0]
        except Exception as exc:  # noqa: BLE001 — processor/model errors vary by architecture
            raise BackendError(f"{self.name}: generation failed: {type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:300]}") from exc
        reply = ChatReply(text=reply_text, prompt_tokens=n_prompt, completion_tokens=int(out.shape[1] - n_prompt),
                          latency_s=time.perf_counter() - t0, model=self.name)
        if self.cache:
            self.cache.put(key, reply)
        return reply
