"""Baselines run in the same experiment: discrete normalising flows from ``zuko`` trained by
reverse KL (the "normalising flows" end of the abstract's model family), to show that mode dropping
under reverse KL is not an artefact of our continuous-time field.

- MAF: masked autoregressive flow (Papamakarios et al. 2017), affine autoregressive transforms.
- NSF: neural spline flow (Durkan et al. 2019), monotonic rational-quadratic splines.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .flows import NonFiniteError, _target_log_prob

ZUKO_FLOWS = ("maf", "nsf")


def zuko_flow(kind: str, dim: int, transforms: int = 4, hidden: tuple[int, ...] = (32, 32)):
    """A ``zuko.flows`` MAF or NSF on R^dim (unconditional).

    Raises:
        ValueError: unknown kind (names the allowed ones) or bad sizes.
    """
    import zuko

    if kind not in ZUKO_FLOWS:
        raise ValueError(f"zuko_flow: kind={kind!r}; allowed: {list(ZUKO_FLOWS)}")
    if dim < 1 or transforms < 1 or not hidden:
        raise ValueError(f"zuko_flow: dim={dim}, transforms={transforms}, hidden={hidden}; all must be positive")
    cls = zuko.flows.MAF if kind == "maf" else zuko.flows.NSF
    return cls(dim, transforms=transforms, hidden_features=tuple(hidden))


def train_zuko_reverse_kl(flow, target: Any, steps: int, batch: int = 256, lr: float = 3e-3) -> list[float]:
    """Adam on the reverse KL mean(log q(x) − log p̃(x)), x ~ q by the reparametrised sampler.

    Uses torch's global generator (seed it with ``torch.manual_seed``).

    Raises:
        TypeError: the target has no log-density.
        NonFiniteError: NaN/inf loss, with the step.
    """
    log_p = _target_log_prob(target)
    opt = torch.optim.Adam(flow.parameters(), lr=lr)
    losses = []
    for step in range(int(steps)):
        x, log_q = flow().rsample_and_log_prob((int(batch),))
        loss = (log_q - log_p(x)).mean()
        value = float(loss.detach())
        if not math.isfinite(value):
            raise NonFiniteError(f"reverse-KL loss of the {type(flow).__name__} baseline is {value}", step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(value)
    return losses


def zuko_sample(flow, n: int) -> torch.Tensor:
    """``(n, d)`` samples of a trained zuko flow (no gradient)."""
    with torch.no_grad():
        return flow().sample((int(n),))
