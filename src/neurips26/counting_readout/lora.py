"""Probe-Informed LoRA on the unembedding, through ``peft``, and its baselines.

``lm_head`` becomes ``W_U + B A`` (peft ``LoraConfig(target_modules=[lm_head])``, scale
``lora_alpha / r = 1``). *Probe-Informed* (inferred form; the abstract does not say how the probe
informs the LoRA): ``A ∈ R^{r×d}`` is set to ``Q_Cᵀ`` — the orthonormal count-subspace
directions found by the probes in the readout space — and ``B ∈ R^{V×r}`` to zero, so training
starts from the unchanged model and ``B`` only has to learn how the count coordinates ``Q_Cᵀ h̃``
map to digit logits. By default only the digit rows of ``B`` are trainable (gradient mask), which
is what fits "~0.001 % of parameters" on 8B models (r·d + 9·r parameters).

Baselines of the same run: a *random-init* LoRA of the same rank (``A`` random orthonormal rows,
the same norm as the probe rows; peft's default Kaiming init differs only in row scale), and a
*head-only* fine-tune of the whole ``lm_head`` weight.

Loss: cross-entropy of the answer digit over the full vocabulary, plus ``kl_weight`` ×
KL(p_base ‖ p_tuned) on general text tokens (keeps general ability). Because only the head
changes, its input ``h̃`` is computed once and training runs on those cached features; this is
exact (the head's input does not depend on the head) and checked against full forward passes.

Source: abstract (Probe-Informed LoRA targeting W_U, few parameters, general capability kept);
inferred: everything about its form, the loss and the baselines.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import numpy as np

from .geometry import orthonormal_basis
from .unembedding import TiedEmbeddingError, check_digit_ids, find_unembedding, untie_unembedding

INITS = ("probe", "random")


def _head_name(model) -> str:
    u = find_unembedding(model)
    for name, mod in model.named_modules():
        if mod is u.module:
            return name
    raise ValueError(f"{type(model).__name__}: the unembedding is not a named submodule")


def attach_lora(model, rank: int, *, init: str = "probe", Q_count=None, digit_ids=None, digit_rows_only: bool = True,
                train_A: bool = True, seed: int = 0):
    """Wrap ``model`` (a deep copy is *not* made) with a peft LoRA on its unembedding: exactly the
    module that produces the output logits (matched by its full name, never by suffix).

    Args:
        rank: r.
        init: ``"probe"`` (A = Q_Cᵀ, needs ``Q_count`` [d, r]) or ``"random"`` (A random orthonormal).
        digit_ids: the digit token ids; required when ``digit_rows_only``.
        digit_rows_only: mask the gradient of B to the digit rows.
        train_A: also train A (else A stays at its initial directions).

    Returns:
        ``(peft_model, lora_module)`` — the wrapped model and the peft ``lora.Linear`` head.

    Raises:
        TiedEmbeddingError: tied head (untie it first with
            :func:`~.unembedding.untie_unembedding`; never edit the input embedding silently).
        ValueError: unknown ``init``; ``rank`` not in 1..d; ``Q_count`` missing or not [d, rank];
            missing, repeated or out-of-vocabulary ``digit_ids``.
    """
    import torch
    from peft import LoraConfig, get_peft_model

    if init not in INITS:
        raise ValueError(f"init={init!r}; allowed: {INITS}")
    u = find_unembedding(model)
    if u.tied:
        raise TiedEmbeddingError("lm_head is tied to the input embedding; call untie_unembedding(model) first "
                                 "(a LoRA on a tied head would also change the input embedding's role)")
    V, d = u.weight.shape
    if isinstance(rank, bool) or int(rank) != rank or not 1 <= rank <= d:
        raise ValueError(f"rank={rank!r}; allowed: an integer in 1..{d} (the head's input dimension d)")
    if digit_rows_only and digit_ids is None:
        raise ValueError("digit_rows_only=True needs digit_ids")
    if digit_ids is not None:
        digit_ids = check_digit_ids(digit_ids, V)
    if init == "probe":
        if Q_count is None:
            raise ValueError("init='probe' needs Q_count, the [d, r] count-subspace basis")
        Q = orthonormal_basis(Q_count, "Q_count")
        if Q.shape != (d, rank):
            raise ValueError(f"Q_count spans {Q.shape[1]} directions in R^{Q.shape[0]}; need rank={rank} in R^{d}")
    else:
        g = np.random.default_rng([seed, 7919])  # own stream: a plain default_rng(seed) draw of the same shape
        Q, _ = np.linalg.qr(g.standard_normal((d, rank)))  # elsewhere (e.g. synthetic data) would give A = Q_C
    name = _head_name(model)
    # exactly the module tied to the output: a list entry would match every module whose name ENDS in
    # it (peft's suffix rule), so a second "...lm_head" would get a LoRA with a random trainable B; a
    # string is matched by peft with re.fullmatch against the full module name
    cfg = LoraConfig(r=rank, lora_alpha=rank, lora_dropout=0.0, target_modules=re.escape(name),
                     init_lora_weights=False, bias="none")
    pm = get_peft_model(model, cfg)
    lm = dict(pm.named_modules())[f"base_model.model.{name}"]
    with torch.no_grad():
        lm.lora_A["default"].weight.copy_(torch.from_numpy(Q.T).to(lm.lora_A["default"].weight.dtype))  # A = Qᵀ
        lm.lora_B["default"].weight.zero_()                                                             # B = 0
    lm.lora_A["default"].weight.requires_grad_(train_A)
    if digit_rows_only:
        mask = torch.zeros(V, 1, dtype=lm.lora_B["default"].weight.dtype, device=lm.lora_B["default"].weight.device)
        mask[list(digit_ids)] = 1.0
        lm.lora_B["default"].weight.register_hook(lambda grad: grad * mask)
    return pm, lm


def trainable_lora_parameters(rank: int, d: int, V: int, *, digit_rows: int | None, train_A: bool = True) -> int:
    """Number of trained LoRA parameters: r·d (A, if trained) + r·(digit rows or V) (B)."""
    return (rank * d if train_A else 0) + rank * (digit_rows if digit_rows is not None else V)


@dataclass
class HeadTrainResult:
    """Outcome of training a head intervention on cached features.

    Attributes:
        steps_to_target: first evaluated step with validation accuracy ≥ target, or ``None``.
        curve: ``(step, validation accuracy)`` pairs.
        final_accuracy: validation accuracy after the last step.
        first_grad_norm: norm of the trainable parameters' gradient at step 1.
        param_change: ‖θ_final − θ_init‖ over trainable parameters.
        n_trainable: trainable parameter count (masked rows excluded).
        val_correct: per validation prompt, did the trained head answer the count after the last
            step (bool numpy [n_val]; its mean is ``final_accuracy``), for paired comparisons of
            two heads on the same prompts.
    """

    steps_to_target: int | None
    curve: list = field(default_factory=list)
    final_accuracy: float = 0.0
    first_grad_norm: float = 0.0
    param_change: float = 0.0
    n_trainable: int = 0
    val_correct: np.ndarray | None = None


def head_correct(head, H, counts, digit_ids, *, mode: str = "full_vocab"):
    """Per prompt, does ``head`` (a callable h̃ → logits) answer the count on cached readout states
    ``H`` [n, d]: bool tensor [n]. ``mode`` ``"full_vocab"`` (argmax over the whole vocabulary is the
    digit token) or ``"digit_restricted"`` (argmax over the nine digits)."""
    import torch

    if mode not in ("full_vocab", "digit_restricted"):
        raise ValueError(f"mode={mode!r}; allowed: full_vocab, digit_restricted")
    ids = torch.tensor(list(digit_ids), device=counts.device)
    with torch.no_grad():
        z = head(H)
        if mode == "digit_restricted":
            return z[:, ids].argmax(-1) + 1 == counts
        return z.argmax(-1) == ids[counts - 1]


def head_accuracy(head, H, counts, digit_ids, *, mode: str = "full_vocab") -> float:
    """Counting accuracy of ``head`` (a callable h̃ → logits) on cached readout states ``H`` [n, d]
    (the mean of :func:`head_correct`)."""
    return float(head_correct(head, H, counts, digit_ids, mode=mode).float().mean())


def head_text_loss(head, H_text, y_text) -> float:
    """Next-token cross-entropy (nats/token) of ``head`` on cached text states [m, d] → targets [m]."""
    import torch

    with torch.no_grad():
        return float(torch.nn.functional.cross_entropy(head(H_text), y_text))


def train_head(head, params, H_train, y_train, digit_ids, *, H_val, y_val, H_text=None, logp_text_base=None,
               steps: int = 300, lr: float = 0.05, batch_size: int = 64, kl_weight: float = 1.0,
               eval_every: int = 5, target: float = 0.9, mode: str = "full_vocab", seed: int = 0,
               trainable_count=None, full_curve: bool = True) -> HeadTrainResult:
    """Adam on ``params`` so that ``head(h̃)`` answers the count, with a KL anchor on text.

    Args:
        head: callable [n, d] → logits [n, V] (the peft lora.Linear, or a plain linear head).
        params: the trainable tensors.
        H_train, y_train: cached readout states [n, d] and counts [n] (1..9).
        H_val, y_val: validation states/counts for the steps-to-target curve.
        H_text, logp_text_base: cached text states [m, d] and the base model's log-probs [m, V]
            (KL(p_base ‖ p_tuned) anchor); omit both for no anchor.
        trainable_count: parameter count to report (default: numel of ``params``).
        full_curve: validate every ``eval_every`` steps to the end (False: every ``eval_every``
            steps until the target is reached, then only at log-spaced steps, each at least 1.15 ×
            the previous one, and at the last step; ``steps_to_target``, ``final_accuracy`` and the
            training are unchanged, the curve is as dense as before on a log step axis).

    Returns:
        :class:`HeadTrainResult`.
    """
    import torch

    g = torch.Generator().manual_seed(seed)
    ids = torch.tensor(list(digit_ids), device=y_train.device)
    opt = torch.optim.Adam(params, lr=lr)
    init = [p.detach().clone() for p in params]
    res = HeadTrainResult(None, n_trainable=int(trainable_count if trainable_count is not None
                                                else sum(p.numel() for p in params)))
    for step in range(1, steps + 1):
        bi = torch.randint(len(H_train), (batch_size,), generator=g)
        loss = torch.nn.functional.cross_entropy(head(H_train[bi]), ids[y_train[bi] - 1])
        if H_text is not None and kl_weight > 0:
            ti = torch.randint(len(H_text), (batch_size,), generator=g)
            logq = torch.log_softmax(head(H_text[ti]), -1)
            loss = loss + kl_weight * torch.nn.functional.kl_div(logq, logp_text_base[ti], log_target=True,
                                                                 reduction="batchmean")  # KL(p_base ‖ p_tuned)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if step == 1:
            res.first_grad_norm = float(torch.sqrt(sum((p.grad.float() ** 2).sum() for p in params
                                                       if p.grad is not None)))
        opt.step()
        if step == steps or step % eval_every == 0 and (full_curve or res.steps_to_target is None
                                                        or step >= 1.15 * res.curve[-1][0]):
            ok = head_correct(head, H_val, y_val, ids.tolist(), mode=mode)
            acc = float(ok.float().mean())
            res.curve.append((step, acc))
            res.val_correct = ok.cpu().numpy()
            if res.steps_to_target is None and acc >= target:
                res.steps_to_target = step
    res.final_accuracy = res.curve[-1][1]
    res.param_change = float(torch.sqrt(sum(((p.detach() - q) ** 2).sum() for p, q in zip(params, init))))
    return res


def head_only_copy(model):
    """A trainable copy of the whole unembedding as a callable ``h̃ → W h̃ + b`` and its parameters."""
    import torch

    u = find_unembedding(model)
    W = torch.nn.Parameter(u.weight.detach().clone().float())
    b = None if u.bias is None else u.bias.detach().clone().float()
    return (lambda H: H @ W.T + (0 if b is None else b)), [W]


def probe_informed_lora(model, Q_count, digit_ids, H_train, y_train, *, H_val, y_val, H_text=None, y_text=None,
                        init: str = "probe", digit_rows_only: bool = True, train_A: bool = True, copy_model: bool = True,
                        **train_kw):
    """Attach a LoRA (probe or random init) to a copy of ``model`` and train it on cached features.

    ``H_text``/``y_text`` (text states and next tokens) give the KL anchor. Returns
    ``(peft_model, HeadTrainResult)``; the peft model answers with the trained head.

    A head tied to the input embedding (SmolLM2, Gemma 3) is untied in the copy (its own copy of
    the weight; the input embedding and the caller's model unchanged). With ``copy_model=False``
    a tied head raises :class:`~.unembedding.TiedEmbeddingError` (the caller's model is never
    untied silently).
    """
    import torch

    m = copy.deepcopy(model) if copy_model else model
    if copy_model and find_unembedding(m).tied:
        untie_unembedding(m)        # the copy's head gets its own weight; the caller's model stays tied
    r = np.asarray(Q_count).shape[1]
    w = find_unembedding(m).weight                      # features go to the head's device and dtype
    H_train, H_val = H_train.to(w.device, w.dtype), H_val.to(w.device, w.dtype)
    y_train, y_val = y_train.to(w.device), y_val.to(w.device)
    H_text = None if H_text is None else H_text.to(w.device, w.dtype)
    pm, lm = attach_lora(m, r, init=init, Q_count=Q_count, digit_ids=digit_ids, digit_rows_only=digit_rows_only,
                         train_A=train_A, seed=train_kw.get("seed", 0))
    logp = None
    if H_text is not None:
        with torch.no_grad():
            logp = torch.log_softmax(lm.base_layer(H_text).float(), -1)
    params = [p for p in (lm.lora_A["default"].weight, lm.lora_B["default"].weight) if p.requires_grad]
    V, d = find_unembedding(model).weight.shape
    n = trainable_lora_parameters(r, d, V, digit_rows=len(list(digit_ids)) if digit_rows_only else None,
                                  train_A=train_A)
    res = train_head(lm, params, H_train, y_train, digit_ids, H_val=H_val, y_val=y_val, H_text=H_text,
                     logp_text_base=logp, trainable_count=n, **train_kw)
    return pm, res


def digit_lora_on_logits(model, Q_count, digit_ids, H_train, y_train, *, H_val, y_val, init: str = "probe",
                         train_A: bool = True, **train_kw) -> HeadTrainResult:
    """:func:`probe_informed_lora` with ``digit_rows_only=True`` and no text anchor, trained on the
    base logits of the cached states instead of a copy of the model: the same training, at a small
    fraction of the arithmetic and memory on a large vocabulary.

    Exact: B starts at 0 and its gradient is masked to the digit rows, so under Adam its other
    rows stay exactly 0; the tuned logits are the base logits ``W_U h̃ (+ b)`` plus
    ``(h̃ Aᵀ) B_digitsᵀ`` in the nine digit columns (peft's scaling is ``lora_alpha / r = 1``).
    The base logits of the training and validation states are computed once and carried next to
    the states (features ``[h̃, W_U h̃]``), so each step costs ``O(batch · (r·d + V))``. A, B, the
    seed streams, the batches and the validation schedule are those of :func:`train_head`, so
    steps-to-target and accuracies equal :func:`probe_informed_lora`'s up to float rounding
    (tested on the tiny model).

    Args:
        model: a causal LM whose head is found by :func:`~.unembedding.find_unembedding` (tied or
            not: nothing is edited).
        Q_count: [d, r] count-subspace basis (``init="probe"``: A = Q_Cᵀ).
        digit_ids: the nine digit token ids.
        H_train, y_train, H_val, y_val: readout states [n, d] and counts 1..9.
        init: ``"probe"`` or ``"random"`` (A random orthonormal, the same draw as :func:`attach_lora`).
        train_A: also train A.
        **train_kw: :func:`train_head` options (``steps``, ``lr``, ``eval_every``, ``target``,
            ``seed``, ``full_curve``, ``batch_size``); ``H_text``/``kl_weight`` are not supported.

    Returns:
        :class:`HeadTrainResult` (``n_trainable`` = r·d + 9·r).

    Raises:
        ValueError: unknown ``init``; a model with ``final_logit_softcapping`` (the delta would be
            added after the cap: use :func:`probe_informed_lora`); a text anchor in ``train_kw``;
            ``Q_count`` not [d, r]; bad ``digit_ids``.
    """
    import torch

    from .unembedding import logits_from_readout

    if init not in INITS:
        raise ValueError(f"init={init!r}; allowed: {INITS}")
    if getattr(model.config, "final_logit_softcapping", None):
        raise ValueError("the model caps its logits (final_logit_softcapping); the cached-logit repair would add the "
                         "LoRA after the cap: use probe_informed_lora")
    if train_kw.get("H_text") is not None or train_kw.get("kl_weight"):
        raise ValueError("digit_lora_on_logits trains without a text anchor; use probe_informed_lora for kl_weight > 0")
    train_kw.pop("H_text", None), train_kw.pop("kl_weight", None), train_kw.pop("logp_text_base", None)
    u = find_unembedding(model)
    V, d = u.weight.shape
    ids = check_digit_ids(digit_ids, V)
    Q = orthonormal_basis(Q_count, "Q_count")
    if Q.shape[0] != d:
        raise ValueError(f"Q_count spans directions in R^{Q.shape[0]}; the head's input is R^{d}")
    r = Q.shape[1]
    if init == "random":
        g = np.random.default_rng([train_kw.get("seed", 0), 7919])   # the draw attach_lora makes
        Q, _ = np.linalg.qr(g.standard_normal((d, r)))
    A = torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(Q.T)).float(), requires_grad=train_A)
    B = torch.nn.Parameter(torch.zeros(len(ids), r))
    cols = torch.tensor(ids)

    def head(X):
        H, Z = X[:, :d], X[:, d:]
        return Z.index_add(1, cols, (H @ A.T) @ B.T)

    with torch.no_grad():
        X_train = torch.cat([H_train.float(), logits_from_readout(model, H_train)], 1)
        X_val = torch.cat([H_val.float(), logits_from_readout(model, H_val)], 1)
    params = [A, B] if train_A else [B]
    return train_head(head, params, X_train, y_train, ids, H_val=X_val, y_val=y_val,
                      trainable_count=trainable_lora_parameters(r, d, V, digit_rows=len(ids), train_A=train_A),
                      **train_kw)
