"""The dual-metric diagnosis: linear probes and the signal-to-noise ratio of the count signal,
per layer, and the count subspace.

* **Probes** (per layer, held-out): multinomial logistic regression on the count (accuracy),
  ridge regression of the count (R²), and a control task with shuffled labels (Hewitt & Liang
  2019 selectivity = accuracy − control accuracy).
* **Count subspace** ``C`` (orthonormal ``Q_C ∈ R^{d×r}``, r ≤ K−1 for K counts): the span of the
  centred class means (between-class scatter, as in LDA), or of the centred multinomial-probe
  weight rows ("probe directions").
* **SNR** (inferred definition; the paper's formula was not readable):
  ``SNR = tr(S_B) / tr(S_W)`` of the projected states ``z = Q_Cᵀ h`` — between-count scatter
  ``S_B = Σ_c p_c (μ_c − μ)(μ_c − μ)ᵀ`` over within-count scatter ``S_W = Σ_c p_c Σ_c`` (a Fisher
  ratio), reported linear and in dB; the subspace is fitted on one split and the ratio measured on
  another, so noise fitted into C does not inflate it.

Source: abstract (SNR combined with linear probing, a linearly decodable count subspace);
inferred: the estimators above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SUBSPACE_METHODS = ("class_means", "probe")


def _check_xy(X, y, name: str = "X") -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or len(X) != len(y):
        raise ValueError(f"{name} must be [n, d] with labels [n]; got {X.shape} and {y.shape}")
    if not np.isfinite(X).all():
        raise ValueError(f"{name} contains non-finite values")
    return X, y


def _check_per_class(y: np.ndarray, rank: int) -> None:
    classes, n_c = np.unique(y, return_counts=True)
    if len(classes) < 2:
        raise ValueError(f"need >= 2 count classes, got {classes.tolist()}")
    need = 5 * max(1, rank)
    if n_c.min() < need:
        raise ValueError(f"class {classes[n_c.argmin()]} has {n_c.min()} examples; a rank-{rank} subspace/probe "
                         f"needs >= {need} (5·r) per class")


def fisher_snr(Z, y) -> float:
    """``tr(S_B) / tr(S_W)`` of features ``Z`` [n, r] with labels ``y`` [n] (linear, not dB).

    Zero within-class scatter gives 0.0 when there is no between-class scatter either (all
    states equal) and ``inf`` otherwise.

    Raises:
        ValueError: bad shapes or fewer than 2 classes.
    """
    Z, y = _check_xy(Z, y, "Z")
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(f"need >= 2 classes, got {classes.tolist()}")
    mu = Z.mean(0)
    sb = sw = 0.0
    for c in classes:
        Zc = Z[y == c]
        p = len(Zc) / len(Z)
        sb += p * float(np.sum((Zc.mean(0) - mu) ** 2))                # p_c ‖μ_c − μ‖²
        sw += p * float(np.sum(Zc.var(0)))                              # p_c tr Σ_c
    if sw <= 1e-300:  # identical states (e.g. the embedding of a fixed token): no signal, or a noiseless one
        return 0.0 if sb <= 1e-300 else math.inf
    return sb / sw


def to_db(snr: float) -> float:
    """10·log10(snr) (−inf for 0, +inf for inf).

    Raises:
        ValueError: ``snr`` negative or NaN (an SNR is a ratio of scatters, >= 0).
    """
    if not snr >= 0:
        raise ValueError(f"snr={snr}; allowed: snr >= 0 (a ratio of scatters), not NaN")
    return 10.0 * math.log10(snr) if snr > 0 else -math.inf


def count_subspace(H, y, rank: int | None = None, *, method: str = "class_means", C: float = 1.0) -> np.ndarray:
    """Orthonormal basis ``Q_C`` [d, r] of the count subspace of states ``H`` [n, d].

    Args:
        H: states (e.g. readout-space ``h̃`` at the answer position), float [n, d].
        y: counts [n].
        rank: r; default K−1 (K = number of counts), capped at K−1 and d.
        method: ``"class_means"`` (span of centred class means) or ``"probe"`` (span of the centred
            weight rows of a multinomial logistic probe with inverse regularisation ``C``, in the
            units of H).

    Raises:
        ValueError: unknown method, bad shapes, fewer than 5·r examples in a class.
    """
    if method not in SUBSPACE_METHODS:
        raise ValueError(f"method={method!r}; allowed: {SUBSPACE_METHODS}")
    H, y = _check_xy(H, y, "H")
    classes = np.unique(y)
    r = min(len(classes) - 1, H.shape[1]) if rank is None else int(rank)
    if not 1 <= r <= min(len(classes) - 1, H.shape[1]):
        raise ValueError(f"rank={rank}; allowed: 1..{min(len(classes) - 1, H.shape[1])} (K−1 counts, d)")
    _check_per_class(y, r)
    if method == "class_means":
        M = np.stack([H[y == c].mean(0) for c in classes])
    else:
        from sklearn.linear_model import LogisticRegression

        sd = H.std(0) + 1e-12
        clf = LogisticRegression(C=C, max_iter=2000).fit((H - H.mean(0)) / sd, y)
        M = clf.coef_ / sd                                                   # weights in the units of H
    M = M - M.mean(0)
    _, _, Vt = np.linalg.svd(M, full_matrices=False)
    return Vt[:r].T.copy()


@dataclass
class LayerProbe:
    """Held-out probe results at one layer.

    Attributes:
        layer: ℓ (0 = embedding).
        accuracy: logistic-probe accuracy on the test split.
        control_accuracy: same probe trained on shuffled labels.
        selectivity: accuracy − control_accuracy.
        r2: ridge R² of the count on the test split.
        snr: Fisher SNR (linear) in the train-fitted count subspace, on the test split.
        snr_db: the same in dB.
        n_correct, n_test: for a Clopper–Pearson interval of ``accuracy``.
        correct: per test prompt, did the probe answer the count (bool [n_test]).
        control_correct: the same for the shuffled-label control probe (bool [n_test]; ``None``
            without controls), for a paired interval of ``selectivity``
            (:func:`paired_accuracy_difference`).
    """

    layer: int
    accuracy: float
    control_accuracy: float
    selectivity: float
    r2: float
    snr: float
    snr_db: float
    n_correct: int
    n_test: int
    correct: np.ndarray | None = None
    control_correct: np.ndarray | None = None


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def paired_accuracy_difference(correct_a, correct_b, level: float = 0.95) -> tuple[float, tuple[float, float]]:
    """Accuracy of A minus accuracy of B on the SAME prompts, with Newcombe's paired interval.

    Newcombe (1998, Stat. Med. 17:2635, paired data, method 10): the Wilson score intervals of the two
    accuracies combined with the phi correlation of the 2×2 table of (A right, B right) over
    prompts, so that prompts both get right (or both miss) do not widen the interval, as they
    would for two independent samples. Deterministic, no resampling; stays inside [−1, 1] and is
    defined when a cell is empty (phi = 0 then).

    Args:
        correct_a, correct_b: per-prompt correctness, bool (or 0/1) [n], the same prompts in the
            same order.
        level: two-sided confidence level in (0, 1).

    Returns:
        ``(difference, (low, high))``, the difference in accuracy (fraction, A − B).

    Raises:
        ValueError: shapes differ, empty, values other than 0/1, or level outside (0, 1).
    """
    from scipy.stats import norm

    a = np.asarray(correct_a)
    b = np.asarray(correct_b)
    if a.ndim != 1 or a.shape != b.shape or len(a) == 0:
        raise ValueError(f"correct_a and correct_b must be equal-length 1-d arrays over the same prompts; got "
                         f"{a.shape} and {b.shape}")
    if not (np.isin(a, (0, 1)).all() and np.isin(b, (0, 1)).all()):
        raise ValueError("correct_a and correct_b must hold booleans (or 0/1) per prompt")
    if not 0 < level < 1:
        raise ValueError(f"level={level}; allowed: 0 < level < 1")
    a, b = a.astype(bool), b.astype(bool)
    n = len(a)
    n11, n10, n01, n00 = (int(np.sum(a & b)), int(np.sum(a & ~b)), int(np.sum(~a & b)), int(np.sum(~a & ~b)))
    z = float(norm.ppf(0.5 + level / 2))
    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    l1, u1 = _wilson(n11 + n10, n, z)
    l2, u2 = _wilson(n11 + n01, n, z)
    den = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    phi = (n11 * n00 - n10 * n01) / math.sqrt(den) if den > 0 else 0.0
    d = p1 - p2
    lo = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    hi = d + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return d, (max(-1.0, lo), min(1.0, hi))


def fit_probe(X_train, y_train, C: float = 1.0):
    """Standardised multinomial logistic probe (sklearn pipeline)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=2000)).fit(X_train, y_train)


def probe_layers(H_train, y_train, H_test, y_test, *, rank: int | None = None, C: float = 1.0,
                 seed: int = 0, controls: bool = True) -> list[LayerProbe]:
    """Probes and SNR at every layer.

    Args:
        H_train, H_test: states [L+1, n, d] (numpy or torch).
        y_train, y_test: counts.
        controls: also fit the shuffled-label control probe (False: skipped, ``control_accuracy``
            and ``selectivity`` are NaN; the other fields are unchanged).

    Raises:
        ValueError: shapes disagree, or too few examples per class for the rank.
    """
    from sklearn.linear_model import RidgeCV

    H_train, H_test = np.asarray(H_train, np.float64), np.asarray(H_test, np.float64)
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    if H_train.ndim != 3 or H_test.ndim != 3 or H_train.shape[0] != H_test.shape[0] or \
            H_train.shape[2] != H_test.shape[2]:
        raise ValueError(f"states must be [L+1, n, d] with equal L and d; got {H_train.shape}, {H_test.shape}")
    rng = np.random.default_rng(seed)
    y_shuf = rng.permutation(y_train)
    out = []
    for layer in range(H_train.shape[0]):
        Xtr, Xte = H_train[layer], H_test[layer]
        pred = fit_probe(Xtr, y_train, C).predict(Xte)
        ok_ctrl = fit_probe(Xtr, y_shuf, C).predict(Xte) == y_test if controls else None
        ctrl = float(np.mean(ok_ctrl)) if controls else math.nan
        acc = float(np.mean(pred == y_test))
        r2 = float(RidgeCV(alphas=np.logspace(-3, 3, 7)).fit(Xtr, y_train).score(Xte, y_test))
        Q = count_subspace(Xtr, y_train, rank)
        snr = fisher_snr(Xte @ Q, y_test)
        out.append(LayerProbe(layer, acc, ctrl, acc - ctrl, r2, snr, to_db(snr), int(np.sum(pred == y_test)),
                              len(y_test), pred == y_test, ok_ctrl))
    return out
