"""Feature Learning Equation, Virtual Covariance and Target Linearity (paper 11).

Method in brief (Cha, Beaglehole, Radhakrishnan, Lee, NeurIPS 2026, arXiv 2605.06258). For a layer
with input features H (n×p, rows = samples), weight W (q×p), G_H = ∂L/∂H and G_W = ∂L/∂W:

1. Feature Learning Equation: Wᵀ G_W = G_Hᵀ H — the weight Gram WᵀW is what the features see.
2. Virtual Covariance: with H̃ = H − η G_H, VC = H̃ᵀH̃ − HᵀH equals the Gram change Δ(WᵀW) of
   one gradient step to first order; exactly Δ(WᵀW) − VC = η²(G_WᵀG_W − G_HᵀG_H).
3. Target Linearity: TL = 1 − ‖Y_c − P_H Y_c‖²/‖Y_c‖² (in-sample R² of least squares onto the
   centred targets), and its Gram surrogate (1/C) tr(Y_cᵀ H WᵀW Hᵀ Y_c).
4. Gram whitening: an optimizer wrapper keeping each step's Gram change and removing its rotation.
5. NC1 (neural collapse) beside TL, and a tracker for a user's own training loop.

Public API:
    FeatureRecorder, SUPPORTED_LAYERS, weight_matrix;
    feature_learning_equation, feature_learning_residual, virtual_features, virtual_covariance,
    gram_change, second_order_gap, gram_vc_residual, first_order_mismatch;
    target_linearity, target_linearity_details, TargetLinearity, gram_surrogate, one_hot_targets;
    polar_factor_newton_schulz, polar_factor_svd, whiten_update, GramWhitening, gram_relative_change;
    nc1; LinearityTracker; mlp, VAE, vae_loss.

Example (the Feature Learning Equation holds layer by layer, to rounding)::

    import torch
    from torch.nn import functional as F
    from neurips26.feature_learning import FeatureRecorder, feature_learning_residual, mlp
    torch.manual_seed(0)
    model = mlp(8, 16, 2, 3)                             # or any nn.Module with Linear/Conv2d layers
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    with FeatureRecorder(model) as rec:
        model.zero_grad(); F.cross_entropy(model(x), y).backward()
        for name in rec.names:                           # "0", "2", "4": residuals ~1e-7 (float32)
            print(name, feature_learning_residual(rec.W(name), rec.G_W(name), rec.H(name), rec.G_H(name)))
"""

from .equation import (
                       feature_learning_equation,
                       feature_learning_residual,
                       first_order_mismatch,
                       gram_change,
                       gram_vc_residual,
                       second_order_gap,
                       virtual_covariance,
                       virtual_features,
)
from .models import VAE, mlp, vae_loss
from .neural_collapse import nc1
from .recorder import SUPPORTED_LAYERS, FeatureRecorder, LayerRecord, weight_matrix
from .target_linearity import (
                       RidgeTargetLinearityWarning,
                       TargetLinearity,
                       TrivialTargetLinearityWarning,
                       gram_surrogate,
                       one_hot_targets,
                       target_linearity,
                       target_linearity_details,
)
from .tracker import LinearityTracker
from .whitening import GramWhitening, gram_relative_change, polar_factor_newton_schulz, polar_factor_svd, whiten_update

__all__ = [
    "FeatureRecorder", "LayerRecord", "SUPPORTED_LAYERS", "weight_matrix",
    "feature_learning_equation", "feature_learning_residual", "virtual_features", "virtual_covariance",
    "gram_change", "second_order_gap", "gram_vc_residual", "first_order_mismatch",
    "target_linearity", "target_linearity_details", "TargetLinearity", "gram_surrogate", "one_hot_targets",
    "TrivialTargetLinearityWarning", "RidgeTargetLinearityWarning",
    "polar_factor_newton_schulz", "polar_factor_svd", "whiten_update", "GramWhitening", "gram_relative_change",
    "nc1", "LinearityTracker", "mlp", "VAE", "vae_loss",
]
