"""A hand-built one-layer model with a planted weight whose role is known exactly.

    z_t = [onehot(x_t); onehot(x_{t−1})]                    # current and previous token, 2V inputs
    h_t = ReLU(D z_t − 1)                                   # detector: h_{t,0} = 1 iff x_t = a and x_{t−1} = b
    logits_t = R h_t + u                                    # readout R [V, 1]; u = log unigram frequencies

The planted weight is ``readout[c, 0]``: it adds ``R_c0`` to the logit of token ``c`` exactly when
the current token is ``a`` preceded by ``b``, so the correct account is "the previous and current
tokens are 'ba'". A pipeline that cannot recover it is broken; a shuffled control must fail.

Source: inferred: a test model for the pipeline (the paper's models are not available offline).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from .attribution import WeightRef

__all__ = ["PlantedModel"]


class PlantedModel(nn.Module):
    """``forward(idx [B, T]) -> logits [B, T, V]`` (see module docstring).

    Args:
        vocab_size: V.
        a, b: token ids of the conjunction "current is a, previous is b".
        c: the token whose logit the planted weight raises.
        strength: the planted weight ``R_c0``.
        unigram: float ``[V]`` token frequencies for the base logits (default uniform).

    Attributes:
        planted: the :class:`~.attribution.WeightRef` ``readout[c, 0]``.

    Raises:
        ValueError: an id outside ``0..V-1``.
    """

    def __init__(self, vocab_size: int, a: int, b: int, c: int, strength: float = 2.0,
                 unigram: np.ndarray | None = None) -> None:
        super().__init__()
        for name, v in (("a", a), ("b", b), ("c", c)):
            if not 0 <= v < vocab_size:
                raise ValueError(f"{name}={v}; allowed 0..{vocab_size - 1}")
        V = vocab_size
        self.V = V
        self.detector = nn.Linear(2 * V, 1, bias=False)
        self.readout = nn.Linear(1, V, bias=False)
        with torch.no_grad():
            self.detector.weight.zero_()
            self.detector.weight[0, a] = 1.0          # current token is a
            self.detector.weight[0, V + b] = 1.0      # previous token is b
            self.readout.weight.zero_()
            self.readout.weight[c, 0] = strength      # the planted weight
        u = np.full(V, 1.0 / V) if unigram is None else np.asarray(unigram, dtype=np.float64) + 1e-3
        self.register_buffer("base", torch.log(torch.as_tensor(u / u.sum(), dtype=torch.float32)))
        self.planted = WeightRef("readout", c, 0)

    def matrices(self) -> dict[str, nn.Linear]:
        """``detector`` and ``readout``."""
        return {"detector": self.detector, "readout": self.readout}

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        V = self.V
        cur = nn.functional.one_hot(idx, V).float()
        prev = torch.cat([torch.zeros_like(cur[:, :1]), cur[:, :-1]], dim=1)
        h = torch.relu(self.detector(torch.cat([cur, prev], dim=-1)) - 1.0)   # 1 iff x_t = a and x_{t-1} = b
        return self.readout(h) + self.base
