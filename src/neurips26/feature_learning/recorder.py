"""Per-layer recording of features H, feature gradients G_H and weight gradients G_W.

For a layer with weight W ∈ R^{q×p} and input features H ∈ R^{n×p} (rows = samples), the
pre-activations are Z = H Wᵀ (+ b). The recorder captures, without changing the model's values:

- ``H``: the layer's input (for ``nn.Conv2d``: the unfolded input patches, n = batch · positions,
  p = C_in · k_h · k_w, so that Z = H Wᵀ holds with W reshaped to (C_out, p));
- ``G_H = ∂L/∂H``: for ``nn.Linear`` measured by autograd on the layer's own input (the gradient
  through this layer only, even where the input feeds other layers); for ``nn.Conv2d`` the
  gradient with respect to the unfolded patches, G_H = G_Z W (chain rule through Z = H Wᵀ);
- ``G_Z = ∂L/∂Z``: the gradient of the layer's output;
- ``G_W = ∂L/∂W``: the weight's ``.grad`` after ``backward`` (reshaped to (q, p) for conv).

Supported layer types: ``nn.Linear`` and ``nn.Conv2d`` with ``groups=1`` and zero padding
(:data:`SUPPORTED_LAYERS`).

Source: the notation and the unfolding rule for convolutions follow the paper's abstract (the
Feature Learning Equation relates weight updates to feature evolution) and the authors' released
description (conv features unfolded); the implementation is ours.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn import functional as F

#: Layer types the recorder supports.
SUPPORTED_LAYERS: tuple[type[nn.Module], ...] = (nn.Linear, nn.Conv2d)


def _supported_names() -> str:
    return ", ".join(f"nn.{t.__name__}" for t in SUPPORTED_LAYERS)


def weight_matrix(module: nn.Module) -> torch.Tensor:
    """The weight of a supported layer as a (q, p) matrix (a view; conv kernels flattened).

    Raises:
        TypeError: if ``module`` is not a supported layer type.
    """
    if isinstance(module, nn.Linear):
        return module.weight
    if isinstance(module, nn.Conv2d):
        return module.weight.reshape(module.out_channels, -1)
    raise TypeError(f"{type(module).__name__} is not supported; supported layer types: {_supported_names()}")


def _check_conv(name: str, m: nn.Conv2d) -> None:
    if m.groups != 1:
        raise TypeError(f"layer {name!r}: nn.Conv2d with groups={m.groups} is not supported (groups=1 only)")
    if m.padding_mode != "zeros":
        raise TypeError(f"layer {name!r}: nn.Conv2d with padding_mode={m.padding_mode!r} is not supported "
                        "(padding_mode='zeros' only)")
    if isinstance(m.padding, str):
        raise TypeError(f"layer {name!r}: nn.Conv2d with padding={m.padding!r} is not supported; give "
                        "explicit integer padding")


@dataclass
class LayerRecord:
    """What one forward/backward pass recorded at one layer.

    Attributes:
        H: (n, p) input features (float, detached).
        G_H: (n, p) ∂L/∂H, or ``None`` before ``backward``.
        G_Z: (n, q) ∂L/∂Z, or ``None`` before ``backward``.
    """

    H: torch.Tensor
    G_H: torch.Tensor | None = None
    G_Z: torch.Tensor | None = None


@dataclass
class FeatureRecorder:
    """Hooks on the supported layers of ``model`` that record H, G_H, G_Z (and read G_W).

    Use as a context manager (hooks are removed on exit) or call :meth:`remove` yourself::

        import torch
        from torch.nn import functional as F
        from neurips26.feature_learning import FeatureRecorder, mlp
        torch.manual_seed(0)
        model = mlp(8, 16, 1, 3)                         # Linear layers "0" and "2"
        x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
        with FeatureRecorder(model) as rec:
            loss = F.cross_entropy(model(x), y)
            model.zero_grad(); loss.backward()
            H, G_H, G_W, W = rec.H("0"), rec.G_H("0"), rec.G_W("0"), rec.W("0")
        print(rec.names, H.shape, G_H.shape, G_W.shape, W.shape)   # (n, p), (n, q), (q, p), (q, p)

    Args:
        model: any ``nn.Module``.
        layers: names (as in ``model.named_modules()``) of the layers to record; ``None`` records
            every supported layer.
        gradients: also record G_H and G_Z (set ``False`` for forward-only measurements).

    Each forward pass overwrites the previous record of a layer; a layer called several times in
    one forward pass keeps its last call. G_W is the weight's accumulated ``.grad``: zero the
    gradients before ``backward`` if you want one step's G_W.

    Raises:
        TypeError: if a named layer is not a supported type (the message lists the supported
            ones), or a conv layer uses groups/padding modes outside the supported set.
        KeyError: if a named layer does not exist.
        ValueError: if no supported layer is found.
    """

    model: nn.Module
    layers: list[str] | None = None
    gradients: bool = True
    records: dict[str, LayerRecord] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        named = dict(self.model.named_modules())
        if self.layers is None:
            names = [n for n, m in named.items() if isinstance(m, SUPPORTED_LAYERS)]
        else:
            names = list(self.layers)
            for n in names:
                if n not in named:
                    raise KeyError(f"layer {n!r} not found in the model; layers: {[k for k in named if k]}")
                if not isinstance(named[n], SUPPORTED_LAYERS):
                    raise TypeError(f"layer {n!r} is {type(named[n]).__name__}, which is not supported; "
                                    f"supported layer types: {_supported_names()}")
        if not names:
            raise ValueError(f"no supported layer found in {type(self.model).__name__}; supported layer "
                             f"types: {_supported_names()}")
        self.modules: dict[str, nn.Module] = {n: named[n] for n in names}
        for n, m in self.modules.items():
            if isinstance(m, nn.Conv2d):
                _check_conv(n, m)
        self._handles = []
        for n, m in self.modules.items():
            self._handles.append(m.register_forward_pre_hook(self._pre_hook(n)))
            self._handles.append(m.register_forward_hook(self._post_hook(n)))

    # ------------------------------------------------------------------ hooks
    def _pre_hook(self, name: str):
        module = self.modules[name]

        def hook(mod, args):
            x = args[0]
            if isinstance(module, nn.Conv2d):
                patches = F.unfold(x.detach(), module.kernel_size, module.dilation, module.padding, module.stride)
                H = patches.transpose(1, 2).reshape(-1, patches.shape[1])  # (B·L, C·kh·kw)
                self.records[name] = LayerRecord(H=H)
                return None
            self.records[name] = LayerRecord(H=x.detach().reshape(-1, x.shape[-1]))
            if not (self.gradients and torch.is_grad_enabled()):
                return None
            # a fresh node used only by this layer: its gradient is ∂L/∂H through this layer alone
            x_own = x.view_as(x) if x.requires_grad else x.detach().requires_grad_(True)

            def store(g, _name=name):
                self.records[_name].G_H = g.detach().reshape(-1, g.shape[-1])

            x_own.register_hook(store)
            return (x_own,) + tuple(args[1:])

        return hook

    def _post_hook(self, name: str):
        module = self.modules[name]

        def hook(mod, args, out):
            if not (self.gradients and torch.is_grad_enabled() and out.requires_grad):
                return None

            def store(g, _name=name):
                rec = self.records[_name]
                if isinstance(module, nn.Conv2d):
                    G_Z = g.detach().flatten(2).transpose(1, 2).reshape(-1, g.shape[1])  # (B·L, C_out)
                    rec.G_Z = G_Z
                    rec.G_H = G_Z @ weight_matrix(module).detach()  # G_H = G_Z W  (∂Z/∂H, Z = H Wᵀ)
                else:
                    rec.G_Z = g.detach().reshape(-1, g.shape[-1])

            out.register_hook(store)
            return None

        return hook

    # ------------------------------------------------------------------ access
    def _record(self, name: str) -> LayerRecord:
        if name not in self.modules:
            raise KeyError(f"layer {name!r} is not recorded; recorded layers: {list(self.modules)}")
        if name not in self.records:
            raise RuntimeError(f"layer {name!r} has no record yet: run a forward pass first")
        return self.records[name]

    def H(self, name: str) -> torch.Tensor:
        """(n, p) input features of layer ``name`` from the last forward pass."""
        return self._record(name).H

    def _grad(self, name: str, attr: str) -> torch.Tensor:
        g = getattr(self._record(name), attr)
        if g is None:
            raise RuntimeError(f"layer {name!r}: no {attr} recorded; call backward() after the forward pass "
                               "(with gradients=True and autograd enabled)")
        if not torch.isfinite(g).all():
            bad = int((~torch.isfinite(g)).sum())
            raise FloatingPointError(f"layer {name!r}: {attr} has {bad} non-finite entries (NaN/inf "
                                     "gradients; check the loss and the learning rate)")
        return g

    def G_H(self, name: str) -> torch.Tensor:
        """(n, p) ∂L/∂H of layer ``name``.

        Raises:
            RuntimeError: before ``backward``. FloatingPointError: NaN/inf gradients.
        """
        return self._grad(name, "G_H")

    def G_Z(self, name: str) -> torch.Tensor:
        """(n, q) ∂L/∂Z of layer ``name`` (same errors as :meth:`G_H`)."""
        return self._grad(name, "G_Z")

    def W(self, name: str) -> torch.Tensor:
        """(q, p) weight of layer ``name`` (detached copy)."""
        return weight_matrix(self.modules[name]).detach().clone()

    def G_W(self, name: str) -> torch.Tensor:
        """(q, p) ∂L/∂W of layer ``name`` (the weight's ``.grad``, detached copy).

        Raises:
            RuntimeError: if the weight has no ``.grad``. FloatingPointError: NaN/inf gradients.
        """
        m = self.modules[name]
        if m.weight.grad is None:
            raise RuntimeError(f"layer {name!r}: weight has no .grad; call backward() first")
        g = m.weight.grad.detach().reshape(m.weight.shape[0], -1).clone()
        if not torch.isfinite(g).all():
            raise FloatingPointError(f"layer {name!r}: G_W has {int((~torch.isfinite(g)).sum())} non-finite "
                                     "entries (NaN/inf gradients)")
        return g

    @property
    def names(self) -> list[str]:
        """The recorded layer names, in model order."""
        return list(self.modules)

    def remove(self) -> None:
        """Remove every hook (the model is then exactly as before)."""
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def __enter__(self) -> "FeatureRecorder":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
