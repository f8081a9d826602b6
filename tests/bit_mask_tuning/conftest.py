"""Shared fixtures: one tiny pre-trained Qwen2 model for the whole test package (a few seconds)."""

import copy

import pytest
import torch

from neurips26.bit_mask_tuning.task import build_model, pretrain


@pytest.fixture(scope="session")
def pretrained():
    """Qwen2 d=32, 2 blocks, ffn 128, pre-trained 150 steps on rules A and B (seed 0)."""
    torch.set_num_threads(1)
    model = build_model("qwen2", seed=0, hidden=32, layers=2, ffn=128)
    pretrain(model, 150, 128, 3e-3, seed=0)
    return model


@pytest.fixture
def base(pretrained):
    """A fresh copy of the pre-trained model (tests may modify it)."""
    return copy.deepcopy(pretrained)
