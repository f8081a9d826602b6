"""Toy trainers: they improve the reward, stay below the frontier, REINFORCE approaches pi_beta."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neurips26.alignment_limits import max_reward_gain, tilted_frontier, train_policy


def _policy(k=20, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 1.0, k)
    p = np.exp(logits - logits.max())
    return p / p.sum(), rng.normal(size=k)


@pytest.mark.parametrize("method", ["reinforce", "ppo", "grpo"])
def test_trainers_improve_and_stay_below_frontier(method):
    pi0, r = _policy()
    tr = train_policy(pi0, r, 0.5, method=method, steps=300, batch_size=32, lr=0.05, record_every=100,
                      generator=torch.Generator().manual_seed(1))
    assert tr.step.tolist() == [0, 100, 200, 300]
    assert tr.kl[0] == 0 and tr.gain[0] == pytest.approx(0, abs=1e-12)
    assert tr.gain[-1] > 0.3                       # learned something (exact optimum ~1.1 here)
    for kl, gain in zip(tr.kl[1:], tr.gain[1:]):
        assert gain <= max_reward_gain(pi0, r, kl).gain + 1e-9   # the limit is a maximum


def test_reinforce_converges_to_the_tilted_policy():
    pi0, r = _policy(8, 2)
    tr = train_policy(pi0, r, 1.0, method="reinforce", steps=1500, batch_size=64, lr=0.02,
                      record_every=1500, generator=torch.Generator().manual_seed(3))
    exact = tilted_frontier(pi0, r, 1.0)
    # stationary point of E r - beta KL is pi_beta; 5% covers SGD noise at lr 0.02, batch 64
    assert tr.gain[-1] == pytest.approx(exact.gain[0], rel=0.05)
    assert tr.kl[-1] == pytest.approx(exact.kl[0], rel=0.15)


@pytest.mark.parametrize("kwargs, match", [
    (dict(method="dpo"), "method must be one of"),
    (dict(pi0=[0.5, 0.5, 0.0]), "pi0 > 0"),
    (dict(method="grpo", batch_size=10, group_size=4), "multiple of group_size"),
    (dict(steps=0), "steps must be an integer >= 1"),
    (dict(beta=0.0), "beta must be finite and > 0"),
    (dict(lr=-1.0), "lr must be"),
])
def test_bad_inputs(kwargs, match):
    args = dict(pi0=[0.2, 0.3, 0.5], r=[0.0, 1.0, 2.0], beta=1.0) | kwargs
    pi0, r, beta = args.pop("pi0"), args.pop("r"), args.pop("beta")
    with pytest.raises(ValueError, match=match):
        train_policy(pi0, r, beta, steps=args.pop("steps", 5), **args)


# --- review fixes ------------------------------------------------------------------------------

def test_several_betas_are_refused_not_silently_truncated():
    pi0, r = np.full(4, 0.25), np.arange(4.0)
    with pytest.raises(ValueError, match="single KL penalty factor"):
        train_policy(pi0, r, [1.0, 2.0], steps=2)
    assert train_policy(pi0, r, [1.0], steps=2).kl.shape == (2,)      # a length-1 array is fine


@pytest.mark.parametrize("kw, match", [
    (dict(lr="x"), "lr must be a finite number > 0"),
    (dict(clip_eps=None), "clip_eps must be a finite number > 0"),
    (dict(generator=3), "generator must be a CPU torch.Generator"),
])
def test_bad_settings_are_value_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        train_policy(np.full(4, 0.25), np.arange(4.0), 1.0, steps=2, **kw)
