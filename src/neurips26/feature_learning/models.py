"""Small networks built from a config (nothing is downloaded): an MLP and an MLP VAE.

Defaults follow the authors' released description (MLP with GELU and biases; VAE with two hidden
layers); sizes are parameters.
"""

from __future__ import annotations

import torch
from torch import nn

_ACTIVATIONS = {"gelu": nn.GELU, "relu": nn.ReLU, "tanh": nn.Tanh}


def mlp(in_dim: int, width: int, depth: int, out_dim: int, *, activation: str = "gelu", bias: bool = True,
        first_bias: bool | None = None) -> nn.Sequential:
    """``depth`` hidden Linear+activation blocks of ``width``, then a Linear readout.

    Module names are ``"0", "1", …`` (``nn.Sequential``): the Linear layers sit at even indices
    0, 2, …, 2·depth. ``first_bias`` overrides ``bias`` for the first layer.

    Raises:
        ValueError: non-positive sizes or an unknown activation (allowed: gelu, relu, tanh).
    """
    if min(in_dim, width, out_dim) < 1 or depth < 0:
        raise ValueError(f"in_dim={in_dim}, width={width}, out_dim={out_dim} must be >= 1 and depth={depth} >= 0")
    if activation not in _ACTIVATIONS:
        raise ValueError(f"activation={activation!r}; allowed: {sorted(_ACTIVATIONS)}")
    layers: list[nn.Module] = []
    d = in_dim
    for i in range(depth):
        layers += [nn.Linear(d, width, bias=bias if (i or first_bias is None) else first_bias),
                   _ACTIVATIONS[activation]()]
        d = width
    layers.append(nn.Linear(d, out_dim, bias=bias if (depth or first_bias is None) else first_bias))
    return nn.Sequential(*layers)


class VAE(nn.Module):
    """MLP VAE: encoder ``in → hidden → hidden → (μ, log σ²)``, decoder ``latent → hidden → hidden → in``.

    ``forward(x)`` returns ``(reconstruction, mu, logvar)``; ``encode`` gives (μ, log σ²);
    ``decode(z)`` the reconstruction (linear output, fit with squared error).
    """

    def __init__(self, in_dim: int, hidden: int = 128, latent: int = 8):
        super().__init__()
        if min(in_dim, hidden, latent) < 1:
            raise ValueError(f"in_dim={in_dim}, hidden={hidden}, latent={latent} must be >= 1")
        self.encoder = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, in_dim))

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(μ, log σ²), each (n, latent)."""
        h = self.encoder(x)
        return self.mu(h), self.logvar(h)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """(n, in_dim) reconstruction of latents z (n, latent)."""
        return self.decoder(z)

    def forward(self, x: torch.Tensor, generator: torch.Generator | None = None):
        mu, logvar = self.encode(x)
        eps = torch.randn(mu.shape, generator=generator, dtype=mu.dtype)
        z = mu + torch.exp(0.5 * logvar) * eps                    # reparameterisation
        return self.decode(z), mu, logvar


def vae_loss(x: torch.Tensor, recon: torch.Tensor, mu: torch.Tensor, logvar: torch.Tensor, beta: float) -> torch.Tensor:
    """Mean over the batch of ‖x − x̂‖² + β · KL(N(μ, σ²) ‖ N(0, I)) (Higgins et al., β-VAE, ICLR 2017)."""
    rec = ((recon - x) ** 2).sum(1)
    kl = 0.5 * (mu**2 + logvar.exp() - 1 - logvar).sum(1)        # KL of a diagonal Gaussian to N(0, I)
    return (rec + beta * kl).mean()
