"""The whole pipeline on any causal LM: diagnose where counting readout fails, then repair it.

:func:`diagnose_model` captures the residual stream at every layer for counting prompts, fits
per-layer probes and the Fisher SNR, the count subspace in the readout space, the principal
angles with the digit rows of W_U, a per-layer logit lens, the readout-vs-overwrite diagnosis and
the subspace-ablation causal check. :func:`repair_model` trains a Probe-Informed LoRA (or its
random-init baseline) on the head, on cached readout features.

Source: abstract (dual-metric diagnosis, Probe-Informed LoRA on W_U); inferred: the pipeline's
order and defaults.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from .bottleneck import Diagnosis, diagnose, subspace_ablation_accuracy
from .capture import capture_residuals, find_final_norm
from .geometry import orthonormal_basis, readout_alignment
from .models import TextBatch
from .probes import LayerProbe, count_subspace, probe_layers
from .tasks import FORMATS, DigitTokens, EncodedPrompts, digit_tokens, encode_prompts, generate_counting_prompts
from .unembedding import digit_rows, find_unembedding, logit_lens, logits_from_readout


@dataclass
class ModelDiagnosis:
    """Everything :func:`diagnose_model` measured.

    Attributes:
        digits: the digit tokens used.
        probes: per-layer held-out probe results at the answer position (ℓ = 0..L).
        entity_probes: the same at the entity-mean position.
        accuracy: the model's ``{"digit_restricted", "full_vocab"}`` accuracy on the test prompts.
        logit_lens_accuracy: digit-restricted accuracy of norm + W_U applied at each layer.
        Q_count: count-subspace basis [d, r] fitted in the readout space on the fit prompts.
        mean_readout: mean readout state [d] of the fit prompts.
        alignment: :func:`~.geometry.readout_alignment` of Q_count with the digit rows.
        diagnosis: readout bottleneck / late overwrite / reads out / not computed.
        ablation: digit-restricted accuracy with the count subspace, or a random one of the same
            rank, mean-ablated in the readout space (``{"base", "count_subspace", "random_subspace"}``).
        features: cached readout states and counts: ``fit_H``, ``fit_y``, ``test_H``, ``test_y`` (torch).
    """

    digits: DigitTokens
    probes: list[LayerProbe]
    entity_probes: list[LayerProbe]
    accuracy: dict
    logit_lens_accuracy: list
    Q_count: np.ndarray
    mean_readout: np.ndarray
    alignment: dict
    diagnosis: Diagnosis
    ablation: dict
    features: dict = field(default_factory=dict, repr=False)

    def summary(self) -> str:
        """A short text report (one line per layer, then geometry and the verdict)."""
        lines = ["layer  probe_acc  control  R2     SNR_dB  lens_acc"]
        for p, la in zip(self.probes, self.logit_lens_accuracy):
            lines.append(f"{p.layer:5d}  {p.accuracy:9.3f}  {p.control_accuracy:7.3f}  {p.r2:5.3f}  {p.snr_db:6.1f}  "
                         f"{la:8.3f}")
        a = self.alignment
        lines.append(f"model accuracy: digit-restricted {self.accuracy['digit_restricted']:.3f}, full-vocab "
                     f"{self.accuracy['full_vocab']:.3f}")
        lines.append(f"cos θ1(count subspace, digit rows) = {a['cos_theta1']:.3f} (contrast {a['cos_theta1_contrast']:.3f}); "
                     f"mean |cos| {a['mean_abs_cos']:.3f} vs random {a['random_abs_cos']:.3f}")
        lines.append(f"ablating the count subspace: {self.ablation['base']:.3f} → {self.ablation['count_subspace']:.3f} "
                     f"(random subspace: {self.ablation['random_subspace']:.3f})")
        lines.append(f"diagnosis: {self.diagnosis.kind}")
        return "\n".join(lines)


def readout_features(model, batch: EncodedPrompts, *, chunk: int = 256):
    """Readout-space states ``norm(h_L)`` at the answer positions, float tensor [n, d]."""
    return capture_residuals(model, batch, chunk=chunk).final_normed


def readout_accuracy(model, H, counts, digits: DigitTokens) -> dict:
    """:func:`~.models.counting_accuracy` from cached readout states ``H`` [n, d] (``norm(h_L)`` at the
    answer positions) and ``counts`` [n]: the head applied to ``H`` gives the model's answer logits,
    so no forward pass is needed. Same keys as :func:`~.models.counting_accuracy`."""
    import torch

    ids = torch.tensor(list(digits.ids))
    with torch.no_grad():
        lg = logits_from_readout(model, H)
    cd = (lg[:, ids].argmax(-1) + 1 == counts).numpy()
    cf = (lg.argmax(-1) == ids[counts - 1]).numpy()
    return {"digit_restricted": float(cd.mean()), "full_vocab": float(cf.mean()), "correct_digit": cd,
            "correct_full": cf}


def text_features(model, text: TextBatch, *, chunk: int = 128):
    """Readout states at every real position of ``text`` that has a next token, and that token:
    ``(H [m, d], y [m])`` (float32, int64). Exact inputs of the head for the text loss."""
    import torch

    norm = find_final_norm(model)
    store: list = []
    hook = norm.register_forward_hook(lambda m, i, o: store.append(o)) if norm is not None else None
    Hs, ys = [], []
    try:
        with torch.no_grad():
            for s in range(0, text.input_ids.shape[0], chunk):
                ids, am = text.input_ids[s:s + chunk], text.attention_mask[s:s + chunk]
                store.clear()
                dev = next(model.parameters()).device
                out = model(input_ids=ids.to(dev), attention_mask=am.to(dev), output_hidden_states=norm is None)
                h = (store[0] if norm is not None else out.hidden_states[-1]).float().cpu()
                keep = (am[:, 1:] == 1)
                Hs.append(h[:, :-1][keep].float())
                ys.append(ids[:, 1:][keep])
    finally:
        if hook is not None:
            hook.remove()
    return torch.cat(Hs), torch.cat(ys)


def diagnose_model(model, tokenizer, *, fit: EncodedPrompts | None = None, test: EncodedPrompts | None = None,
                   n_prompts: int = 900, formats: tuple[str, ...] = FORMATS, max_distractors: int = 5,
                   rank: int | None = None, subspace_method: str = "class_means", first_token: bool = False,
                   method: str = "hidden_states", high: float = 0.9, seed: int = 0, digits: DigitTokens | None = None,
                   chunk: int = 64, entity_probes: bool = True, controls: bool = True,
                   layers: "list[int] | int | None" = None, residuals=None) -> ModelDiagnosis:
    """Diagnose counting readout in ``model`` (any transformers causal LM).

    Args:
        fit, test: tokenised prompts (probe fitting / evaluation); generated (``n_prompts``, split
            2:1, counts balanced) when omitted. Prompts you pass must be encoded with
            ``lead_ids=digits.lead_ids`` (see :func:`~.tasks.encode_prompts`).
        rank: count-subspace rank (default 8 = K−1 for counts 1..9).
        first_token: score a multi-token digit's first token (see :func:`~.tasks.digit_tokens`).
        method: residual capture, ``"hidden_states"`` (default, the faster) or ``"hooks"``.
        high: accuracy regarded as "decodable"/"counts" in the diagnosis.
        entity_probes: also fit the per-layer probes on the entity-mean states (False: skipped,
            ``entity_probes`` of the result is empty; nothing else changes).
        controls: fit the shuffled-label control probes (False: their accuracy and the
            selectivity are NaN; see :func:`~.probes.probe_layers`).
        layers: the layers ℓ (0 = embedding .. L = last) probed and logit-lensed: ``None`` for all,
            an int ``k`` for k evenly spaced layers always including 0 and L, or a list (the last
            layer is always added). The per-layer scikit-learn probes dominate the cost on a real
            model (about 30 layers × d = 576 for a 135M model), so a real model's run probes a few.
            ``LayerProbe.layer`` keeps the true layer index.
        residuals: ``(fit, test)`` :class:`~.capture.Residuals` already captured for ``fit`` and
            ``test`` (e.g. read from a disk cache); ``None`` captures them. The model's accuracy is
            read from the test readout states through the head (the same logits as a forward pass,
            checked by ``final_norm_folded``), so no second forward pass is made.

    Raises:
        MultiTokenDigitError: digits are several tokens and ``first_token`` is off.
        ValueError: prompts longer than the model's context; too few prompts per count; no
            recognised unembedding; ``chunk < 1``; ``high`` outside (0, 1].
    """

    if isinstance(chunk, bool) or int(chunk) != chunk or chunk < 1:
        raise ValueError(f"chunk={chunk!r}; allowed: an integer >= 1 (prompts per forward pass)")
    if not 0 < high <= 1:
        raise ValueError(f"high={high}; allowed: 0 < high <= 1")
    find_unembedding(model)  # fail fast, naming the attributes looked for, before any forward pass
    digits = digits or digit_tokens(tokenizer, first_token=first_token)
    if fit is None or test is None:
        fit, test = prompt_split(model, tokenizer, digits, n_prompts=n_prompts, seed=seed, formats=formats,
                                 max_distractors=max_distractors)
    if residuals is None:
        rf = capture_residuals(model, fit, method=method, chunk=chunk)
        rt = capture_residuals(model, test, method=method, chunk=chunk)
    else:
        rf, rt = residuals
        if rf.final_normed.shape[0] != len(fit) or rt.final_normed.shape[0] != len(test):
            raise ValueError(f"residuals are for {rf.final_normed.shape[0]} + {rt.final_normed.shape[0]} prompts; "
                             f"fit and test have {len(fit)} + {len(test)}")
    yf, yt = fit.counts.numpy(), test.counts.numpy()
    ix = select_layers(rf.answer.shape[0] - 1, layers)

    def probe(Hf_, Ht_):
        out = probe_layers(Hf_[ix].numpy(), yf, Ht_[ix].numpy(), yt, rank=rank, seed=seed, controls=controls)
        return [dataclasses.replace(p, layer=ix[i]) for i, p in enumerate(out)]

    probes = probe(rf.answer, rt.answer)
    ent = probe(rf.entity_mean, rt.entity_mean) if entity_probes else []
    acc = readout_accuracy(model, rt.final_normed, test.counts, digits)
    ids = list(digits.ids)
    lens = [float((logit_lens(model, rt.answer[layer])[:, ids].argmax(-1).numpy() + 1 == yt).mean())
            for layer in ix]
    Hf = rf.final_normed.double().numpy()
    Q = count_subspace(Hf, yf, rank, method=subspace_method)
    align = readout_alignment(Q, digit_rows(model, ids))
    diag = diagnose([p.accuracy for p in probes], acc["digit_restricted"], high=high)
    mu = Hf.mean(0)
    Qr = orthonormal_basis(np.random.default_rng(seed + 1).standard_normal(Q.shape), "random")
    abl = {"base": float(acc["digit_restricted"]),
           "count_subspace": subspace_ablation_accuracy(model, rt.final_normed, yt, ids, Q, mu),
           "random_subspace": subspace_ablation_accuracy(model, rt.final_normed, yt, ids, Qr, mu)}
    feats = {"fit_H": rf.final_normed, "fit_y": fit.counts, "test_H": rt.final_normed, "test_y": test.counts,
             "fit_pre_norm": rf.answer[-1]}
    return ModelDiagnosis(digits, probes, ent, {k: acc[k] for k in ("digit_restricted", "full_vocab")}, lens, Q, mu,
                          align, diag, abl, feats)


def prompt_split(model, tokenizer, digits: DigitTokens, *, n_prompts: int, seed: int,
                 formats: tuple[str, ...] = FORMATS, max_distractors: int = 5) -> tuple[EncodedPrompts, EncodedPrompts]:
    """The prompts :func:`diagnose_model` generates when none are given: ``n_prompts`` counting
    prompts from ``numpy.random.default_rng(seed)``, split 2:1 into (fit, test), counts balanced,
    encoded with ``digits.lead_ids`` and checked against the model's context.

    Raises:
        ValueError: a prompt longer than the model's context.
    """
    rng = np.random.default_rng(seed)
    n_fit = (2 * n_prompts) // 3
    ctx = getattr(model.config, "max_position_embeddings", None)
    lead = digits.lead_ids           # read the digit after the space token where the tokenizer splits one off
    fit = encode_prompts(tokenizer, generate_counting_prompts(n_fit, rng, formats=formats,
                                                              max_distractors=max_distractors), max_length=ctx,
                         lead_ids=lead)
    test = encode_prompts(tokenizer, generate_counting_prompts(n_prompts - n_fit, rng, formats=formats,
                                                               max_distractors=max_distractors), max_length=ctx,
                          lead_ids=lead)
    return fit, test


def select_layers(last: int, layers: "list[int] | int | None") -> list[int]:
    """The layer indices to probe, sorted, always with ``last`` (the final layer L).

    Args:
        last: L, the index of the final layer (states are ℓ = 0..L).
        layers: ``None`` (all), an int ``k >= 2`` (k evenly spaced layers including 0 and L), or a
            list of indices in 0..L.

    Raises:
        ValueError: ``k < 2`` or an index outside 0..L.
    """
    if layers is None:
        return list(range(last + 1))
    if isinstance(layers, (int, np.integer)) and not isinstance(layers, bool):
        if layers < 2:
            raise ValueError(f"layers={layers}; allowed: an int >= 2 (evenly spaced layers with 0 and L), a list, "
                             "or None for all")
        return sorted({int(round(x)) for x in np.linspace(0, last, min(int(layers), last + 1))} | {last})
    bad = [v for v in layers if isinstance(v, bool) or int(v) != v or not 0 <= v <= last]
    if bad:
        raise ValueError(f"layers {bad}; allowed: indices 0..{last}")
    return sorted({int(v) for v in layers} | {last})


def repair_model(model, diag: ModelDiagnosis, *, train: EncodedPrompts | None = None, text: TextBatch | None = None,
                 init: str = "probe", steps: int = 300, lr: float = 0.05, kl_weight: float = 1.0,
                 digit_rows_only: bool = True, train_A: bool = True, target: float = 0.9, seed: int = 0,
                 copy_model: bool = True):
    """Train a Probe-Informed (``init="probe"``) or random-init LoRA on ``model``'s head.

    Trains on the readout features of ``train`` (default: the diagnosis's fit prompts), tracks
    full-vocabulary accuracy on the diagnosis's test prompts, and anchors general text with
    KL(p_base ‖ p_tuned) when ``text`` is given. ``copy_model=False`` wraps ``model`` itself (no
    second copy of a large model in memory). Returns ``(peft_model, HeadTrainResult)``.
    """
    from .lora import probe_informed_lora

    if train is None:
        H, y = diag.features["fit_H"], diag.features["fit_y"]
    else:
        H, y = readout_features(model, train), train.counts
    Ht = yt = None
    if text is not None:
        Ht, yt = text_features(model, text)
    return probe_informed_lora(model, diag.Q_count, diag.digits.ids, H.float(), y, H_val=diag.features["test_H"].float(),
                               y_val=diag.features["test_y"], H_text=Ht, y_text=yt, init=init,
                               digit_rows_only=digit_rows_only, train_A=train_A, steps=steps, lr=lr,
                               kl_weight=kl_weight, target=target, seed=seed, copy_model=copy_model)


def bootstrap_cos_theta1(H, y, rows, rank: int, *, n_boot: int = 200, level: float = 0.95, seed: int = 0,
                         method: str = "class_means") -> dict:
    """Sampling interval of cos θ₁ between the count subspace fitted on states ``H`` and the digit
    rows ``rows``: a bootstrap over the prompts the subspace is estimated from.

    Each of ``n_boot`` replicates resamples the prompts with replacement **within each count** (the
    fit prompts are count-balanced by construction, so every replicate keeps the per-count sizes
    :func:`~.probes.count_subspace` needs), refits the count subspace and takes cos θ₁ with the
    (fixed) digit rows. The interval is the basic bootstrap ``[2·θ̂ − q_hi, 2·θ̂ − q_lo]`` (q the
    replicates' (1∓level)/2 quantiles), clipped to [0, 1]: cos θ₁ is a largest singular value, so
    estimation noise biases it upward, and the basic interval removes that bias to first order where
    the percentile interval would double it.

    Args:
        H: fit states [n, d] (readout space), y: their counts [n] (ints), rows: digit rows of W_U
            [k, d] (:func:`~.unembedding.digit_rows`), rank: count-subspace rank r.
        n_boot: replicates (>= 20); seed: the run seed (``numpy.random.default_rng(seed)``).

    Returns:
        ``{"cos_theta1", "interval", "boot_mean", "boot_sd", "n_boot", "level", "interval_method"}``.

    Raises:
        ValueError: ``n_boot < 20``, ``level`` outside (0, 1), or what
            :func:`~.probes.count_subspace` / :func:`~.geometry.principal_cosines` raise.
    """
    from .geometry import principal_cosines

    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 20:
        raise ValueError(f"n_boot={n_boot!r}; allowed: an integer >= 20")
    if not 0 < level < 1:
        raise ValueError(f"level={level}; allowed: 0 < level < 1")
    H, y = np.asarray(H, np.float64), np.asarray(y)
    Wt = np.asarray(rows, np.float64).T

    def cos1(Hs, ys):
        return float(principal_cosines(count_subspace(Hs, ys, rank, method=method), Wt)[0])

    point = cos1(H, y)
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(y == c) for c in np.unique(y)]
    reps = np.array([cos1(H[ix], y[ix]) for ix in (np.concatenate([rng.choice(g, len(g)) for g in groups])
                                                   for _ in range(int(n_boot)))])
    q_lo, q_hi = np.quantile(reps, [(1 - level) / 2, (1 + level) / 2])
    iv = (float(np.clip(2 * point - q_hi, 0, 1)), float(np.clip(2 * point - q_lo, 0, 1)))
    return {"cos_theta1": point, "interval": iv, "boot_mean": float(reps.mean()), "boot_sd": float(reps.std(ddof=1)),
            "n_boot": int(n_boot), "level": level, "interval_method": "basic bootstrap within counts"}
