"""Attribution against autograd and exact ablation; the planted weight; bad references; a
Hugging Face checkpoint folder; leakage."""

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from neurips26.weight_interp import (
    LeakageError,
    PlantedModel,
    SelectionSettings,
    SparseGPT,
    SparseGPTConfig,
    SymbolicExplainer,
    SymbolicScorer,
    WeightRef,
    ZeroWeightError,
    ablation_effects,
    attributions,
    capture,
    explain_weights,
    interpretable_fraction,
    load_hf_causal_lm,
    make_corpus,
    sample_nonzero_weights,
)
from neurips26.weight_interp.corpus import CharVocabulary


@pytest.fixture(scope="module")
def corpus():
    rng = np.random.default_rng(0)
    words = ["def", "return", "self", "x", "(", ")", ":", "\n", " ", "if", "None", "=", "1", ",", "f(x):", "g():"]
    text = "".join(rng.choice(words, 40_000))
    return make_corpus(text, 16, {"explain": 120, "score": 120, "train": -1}, seed=0)


def _planted(corpus):
    V = corpus.vocab
    e = lambda s: int(V.encode(s)[0])
    # c = 'Z' never occurs, so |∂L/∂logit_c| = p_c is the same at every firing position
    return PlantedModel(V.size, e(":"), e(")"), e("Z"))


def test_attribution_sums_to_weight_times_gradient():
    """Σ_t A_t = W_ij · ∂L/∂W_ij exactly (the chain rule), for every hooked matrix."""
    torch.manual_seed(0)
    m = SparseGPT(SparseGPTConfig(vocab_size=30, ctx=8, d_model=16, n_layer=1, n_head=1, d_mlp=32))
    w = np.random.default_rng(0).integers(0, 30, (6, 9))
    refs = sample_nonzero_weights(m, 14, np.random.default_rng(1))
    A = attributions(m, capture(m, w), refs)
    x = torch.as_tensor(w)
    logits = m(x[:, :-1])
    torch.nn.functional.cross_entropy(logits.reshape(-1, 30), x[:, 1:].reshape(-1), reduction="sum").backward()
    mods = m.matrices()
    for k, r in enumerate(refs):
        W = mods[r.module].weight
        expect = float((W[r.row, r.col] * W.grad[r.row, r.col]).detach())
        assert A[:, :, k].sum() == pytest.approx(expect, rel=1e-4, abs=1e-6), str(r)


def test_planted_weight_is_explained_and_shuffled_control_is_not(corpus):
    m = _planted(corpus)
    ex, sc = corpus.split("explain"), corpus.split("score")
    rep = explain_weights(m, [m.planted], ex, sc, SymbolicExplainer(), SymbolicScorer(), corpus.vocab)[0]
    # ≥ 0.95: the role is a one-token conjunction; random negatives rarely hold ':' (see claim reason)
    assert rep.status == "ok" and rep.score >= 0.95 and ":" in rep.explanation
    assert rep.faithfulness > 0.9
    ctl = explain_weights(m, [m.planted], ex, sc, SymbolicExplainer(), SymbolicScorer(), corpus.vocab,
                          shuffle_control=True)[0]
    assert ctl.score <= 0.65            # chance 0.5; s.d. about 0.06 with 2×40 items
    # the detector's weight on the previous token ')' matters at the same tokens
    det = explain_weights(m, [WeightRef("detector", 0, corpus.vocab.size + int(corpus.vocab.encode(")")[0]))],
                          ex, sc, SymbolicExplainer(), SymbolicScorer(), corpus.vocab)[0]
    assert det.score >= 0.95


def test_planted_attribution_matches_exact_ablation(corpus):
    m = _planted(corpus)
    w = corpus.split("score")[:20]
    A = attributions(m, capture(m, w, ["readout"]), [m.planted])[:, :, 0]
    dl = ablation_effects(m, w, m.planted)
    assert spearmanr(-A.ravel(), dl.ravel()).statistic > 0.99
    assert np.abs(dl[A == 0]).max() == 0.0                          # no effect where the unit is silent
    whole = ablation_effects(m, w, m.planted, per_position=False)
    assert np.allclose(whole, dl.sum(1), atol=1e-4)                 # no attention: effects add up
    cache = capture(m, w, ["readout"])
    dm = ablation_effects(m, w, m.planted, "mean", mean_x=cache.mean_x["readout"])
    assert np.isfinite(dm).all()


def test_bad_weight_references(corpus):
    m = _planted(corpus)
    w = corpus.split("score")[:4]
    cache = capture(m, w)
    with pytest.raises(ZeroWeightError, match="zero"):
        attributions(m, cache, [WeightRef("readout", 5, 0)])
    with pytest.raises(IndexError, match="out of range"):
        attributions(m, cache, [WeightRef("readout", 10_000, 0)])
    with pytest.raises(KeyError, match="allowed"):
        capture(m, w, ["nope"])
    with pytest.raises(ValueError, match="ablation"):
        attributions(m, cache, [m.planted], "random")
    with pytest.raises(ValueError, match="mean_x"):
        ablation_effects(m, w, m.planted, "mean")
    with pytest.raises(ValueError, match="nonzeros"):
        sample_nonzero_weights(m, 10, np.random.default_rng(0))


def test_leakage_is_an_error_and_dead_weights_are_not_interpretable(corpus):
    m = _planted(corpus)
    ex = corpus.split("explain")
    with pytest.raises(LeakageError):
        explain_weights(m, [m.planted], ex, ex[:5], SymbolicExplainer(), SymbolicScorer(), corpus.vocab)
    with torch.no_grad():
        m.detector.weight[0, int(corpus.vocab.encode(":")[0])] = 0.0     # the unit can never fire now
    rep = explain_weights(m, [m.planted], ex, corpus.split("score"), SymbolicExplainer(), SymbolicScorer(),
                          corpus.vocab)
    assert rep[0].status == "dead" and not rep[0].interpretable
    assert interpretable_fraction(rep).fraction == 0.0
    with pytest.raises(ValueError, match="tau"):
        SelectionSettings(tau=0.3)


def test_hugging_face_folder_gpt2_conv1d(tmp_path, corpus):
    """A user's local HF checkpoint: GPT-2 Conv1D weights ([in, out]) are addressed [out, in]."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=CharVocabulary().size, n_positions=32, n_embd=16, n_layer=1, n_head=2)
    GPT2LMHeadModel(cfg).save_pretrained(tmp_path / "hf")
    model = load_hf_causal_lm(tmp_path / "hf")
    ref = WeightRef("transformer.h.0.mlp.c_fc", 3, 5)                    # Conv1D weight[5, 3]
    w = corpus.split("score")[:6]
    A = attributions(model, capture(model, w, [ref.module]), [ref])
    x = torch.as_tensor(w)
    loss = torch.nn.functional.cross_entropy(model(input_ids=x[:, :-1]).logits.reshape(-1, cfg.vocab_size),
                                             x[:, 1:].reshape(-1), reduction="sum")
    loss.backward()
    Wt = model.transformer.h[0].mlp.c_fc.weight
    assert A.sum() == pytest.approx(float((Wt[5, 3] * Wt.grad[5, 3]).detach()), rel=1e-4)
    rep = explain_weights(model, [ref], corpus.split("explain")[:60], w, SymbolicExplainer(), SymbolicScorer(),
                          corpus.vocab, SelectionSettings(n_examples=10, min_positives=2))[0]
    assert rep.status in ("ok", "rare") and rep.weight == str(ref)
    with pytest.raises(FileNotFoundError):
        load_hf_causal_lm(tmp_path / "missing")


def test_bpe_tokenizer_vocabulary_with_a_gpt2_folder_and_vocab_mismatch(tmp_path):
    """A user's BPE model: the corpus is tokenised with its own tokenizer (trained here in-process)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel

    from neurips26.weight_interp import TokenizerVocabulary, stdlib_source_text

    text, _ = stdlib_source_text(60_000)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator([text], trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    vocab = TokenizerVocabulary(tok)
    c = make_corpus(text, 16, {"explain": 40, "score": 40, "train": -1}, seed=0, vocab=vocab)
    assert vocab.decode(vocab.encode("def f(x):")) == "def f(x):"
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=vocab.size, n_positions=16, n_embd=16, n_layer=1, n_head=2)
                    ).save_pretrained(tmp_path / "hf")
    model = load_hf_causal_lm(tmp_path / "hf")
    refs = sample_nonzero_weights(model, 3, np.random.default_rng(0), modules=["transformer.h.0.attn.c_attn"])
    reps = explain_weights(model, refs, c.split("explain"), c.split("score"), SymbolicExplainer(), SymbolicScorer(),
                           vocab, SelectionSettings(n_examples=10, min_positives=2))
    assert len(reps) == 3 and all(r.status in ("ok", "rare", "dead") for r in reps)
    small = GPT2LMHeadModel(GPT2Config(vocab_size=50, n_positions=16, n_embd=16, n_layer=1, n_head=2))
    with pytest.raises(ValueError, match="vocab_size 50"):
        explain_weights(small, [WeightRef("transformer.h.0.attn.c_attn", 0, 0)], c.split("explain"),
                        c.split("score"), SymbolicExplainer(), SymbolicScorer(), vocab)
