"""The guarded environment (issue 15, item 4): torchvision's only wheel for torch 2.13.0 is a CUDA
build whose import breaks transformers' GPT-2/Llama/CLIP and diffusers' UNet on CPU torch, so
constraints.txt pins it to a version that cannot exist and the environment must not contain it."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def _constraints() -> dict[str, Requirement]:
    reqs = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            reqs[req.name.lower()] = req
    return reqs


def test_the_environment_has_no_torchvision():
    assert importlib.util.find_spec("torchvision") is None, (
        "torchvision is installed: its CUDA-only wheel for torch 2.13.0 breaks transformers/diffusers imports on "
        "CPU torch; uninstall it and install with -c constraints.txt, which refuses it")


def test_constraints_refuse_torchvision_with_a_reason_and_keep_torch():
    reqs = _constraints()
    assert str(reqs["torch"].specifier) == "==2.13.0"
    guard = reqs["torchvision"].specifier
    # no real torchvision release satisfies the pin (a local-version label that names the reason)
    for version in ("0.0.1", "0.20.0", "0.28.0", "0.29.1", "1.0.0", "99.0"):
        assert not guard.contains(version, prereleases=True), version
    text = (ROOT / "constraints.txt").read_text()
    comment = text[:text.index("torchvision==")].rsplit("\n\n", 1)[-1]
    assert re.search(r"CUDA", comment) and "transformers" in comment, "the guard line needs its reason beside it"
