"""GAMC diagnostics and detection metrics.

The abstract's Generative Artifact Manifold Clustering (GAMC) hypothesis: artifacts are
multi-dimensional and different generators occupy distinct distributions along these
dimensions; collapsed detectors have low feature diversity. The measurements here make that
checkable: per-generator Fisher ratios, generator clustering, effective rank, a content
(shortcut) probe, contribution entropy and a cue-removal test. Metrics use scikit-learn.
"""

from __future__ import annotations

import numpy as np


def fisher_ratios(features: np.ndarray, groups: list[str] | np.ndarray, reference: str = "real") -> tuple[list[str], np.ndarray]:
    """Per-group Fisher ratio of every feature dimension against the reference group.

    ``F_g,j = (μ_g,j − μ_ref,j)² / (σ²_g,j + σ²_ref,j + 1e-12)``, with σ² the *population*
    variance of each group (``np.var``, ddof = 0: divided by the group size n, not n − 1; with
    n − 1 every ratio would be smaller by about the factor (n − 1)/n, which matters only for
    groups of a few images). The 1e-12 keeps a constant feature finite.

    Args:
        features: ``float [N, P]``. groups: N group names (e.g. generator, ``"real"``).
        reference: the group compared against.

    Returns:
        ``(names, ratios)``: the non-reference groups (sorted) and ``float64 [G, P]``.

    Raises:
        ValueError: shapes disagree, or the reference group or any other group has < 2 members.

    Source: Fisher's discriminant ratio (Fisher 1936); per generator as the GAMC heat map (inferred).
    """
    X = np.asarray(features, np.float64)
    g = np.asarray(groups)
    if X.ndim != 2 or len(X) != len(g):
        raise ValueError(f"features shape {X.shape} with {len(g)} group labels; allowed: [N, P] and N labels")
    names = sorted(set(g.tolist()) - {reference})
    if (g == reference).sum() < 2 or not names:
        raise ValueError(f"need >= 2 members of reference {reference!r} and at least one other group")
    r = X[g == reference]
    out = np.empty((len(names), X.shape[1]))
    for i, n in enumerate(names):
        xs = X[g == n]
        if len(xs) < 2:
            raise ValueError(f"group {n!r} has {len(xs)} member(s); allowed: >= 2")
        out[i] = (xs.mean(0) - r.mean(0)) ** 2 / (xs.var(0) + r.var(0) + 1e-12)
    return names, out


def effective_rank(X: np.ndarray) -> float:
    """Effective rank ``exp(H(σ / Σσ))`` of the centred matrix ``X [N, P]`` (σ: singular values).

    1 for rank-one data, up to ``min(N, P)``. Source: Roy & Vetterli 2007; DoU uses it to show
    collapsed detectors at rank 1–2.

    Raises:
        ValueError: ``X`` not 2-D with at least 2 rows, or not finite.
    """
    X = np.asarray(X, np.float64)
    if X.ndim != 2 or len(X) < 2 or not np.isfinite(X).all():
        raise ValueError(f"X shape {X.shape}; allowed: a finite [N >= 2, P] matrix")
    s = np.linalg.svd(X - X.mean(0), compute_uv=False)
    if s.sum() <= 0:
        return 1.0
    p = s / s.sum()
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def contribution_entropy(contrib: np.ndarray) -> float:
    """Normalised entropy ``H(ĉ) / log K`` of the cue shares ``ĉ_k = mean|c_k| / Σ mean|c|``
    for contributions ``[N, K]``: 1 = every cue used equally, 0 = a single cue (inferred measure
    of "balance across artifact dimensions").

    Raises:
        ValueError: fewer than 2 cues, non-finite values, or all contributions 0.
    """
    x = np.asarray(contrib, np.float64)
    if x.ndim != 2 or len(x) < 1 or not np.isfinite(x).all():
        raise ValueError(f"contributions shape {x.shape}; allowed: a finite [N >= 1, K] array")
    c = np.abs(x).mean(0)
    if c.size < 2:
        raise ValueError(f"need >= 2 cues, got {c.size}")
    if c.sum() <= 0:  # no cue contributes: the shares are undefined (not a "collapsed" 0)
        raise ValueError("every contribution is 0; the cue shares are undefined")
    p = c / c.sum()
    p = p[p > 0]
    return float(-(p * np.log(p)).sum() / np.log(c.size))


def linear_probe_accuracy(features: np.ndarray, target: np.ndarray, folds: int = 3, seed: int = 0) -> float:
    """Cross-validated accuracy of a standardised logistic regression predicting ``target``
    from ``features [N, P]`` — the content (shortcut) probe and the generator-ID probe.

    Raises:
        ValueError: fewer than ``folds`` members in some class.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    t = np.asarray(target)
    _, counts = np.unique(t, return_counts=True)
    if counts.min() < folds:
        raise ValueError(f"a class has {counts.min()} members; allowed: >= folds = {folds}")
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    return float(cross_val_score(clf, np.asarray(features), t, cv=cv).mean())


def generator_clustering(features: np.ndarray, generators: list[str] | np.ndarray, seed: int = 0,
                         n_components: int = 10) -> dict:
    """How well fake features cluster by generator: silhouette of the true generator labels and
    the adjusted Rand index of k-means (k = number of generators), on standardised features
    reduced by PCA to ``n_components``.

    Returns:
        ``{"silhouette": float in [-1, 1], "kmeans_ari": float}``.

    Raises:
        ValueError: fewer than 2 generators.
    """
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA
    from sklearn.metrics import adjusted_rand_score, silhouette_score
    from sklearn.preprocessing import StandardScaler

    g = np.asarray(generators)
    k = len(set(g.tolist()))
    if k < 2:
        raise ValueError(f"need >= 2 generators, got {k}")
    Z = StandardScaler().fit_transform(np.asarray(features, np.float64))
    Z = PCA(min(n_components, Z.shape[1], len(Z)), random_state=seed).fit_transform(Z)
    km = KMeans(k, n_init=5, random_state=seed).fit_predict(Z)
    return {"silhouette": float(silhouette_score(Z, g)), "kmeans_ari": float(adjusted_rand_score(g, km))}


def artifact_statistics(images: np.ndarray) -> np.ndarray:
    """Five hand-made image statistics, one per artifact dimension of the synthetic world
    (``float64 [N, 5]``): spectral energy at the Nyquist corner, high-frequency energy share,
    spectral energy at N/4, mean chroma magnitude, energy of the per-channel-independent residual.

    Used to show GAMC in image space (each generator raises a different dimension). Source:
    inferred (standard forensic statistics; Durall et al. 2020 and Frank et al. 2020 look at the
    spectrum).
    """
    x = np.asarray(images, np.float64)
    lum = x.mean(-1)
    P = np.abs(np.fft.fft2(lum - lum.mean((1, 2), keepdims=True))) ** 2
    n = lum.shape[1]
    fy = np.abs(np.fft.fftfreq(n))[:, None]
    fx = np.abs(np.fft.fftfreq(lum.shape[2]))[None, :]
    tot = P.sum((1, 2)) + 1e-12
    nyq = P[:, n // 2, n // 2] / tot
    hf = P[:, (np.maximum(fy, fx) >= 0.3)].sum(1) / tot
    q = n // 4
    grid = (P[:, q, q] + P[:, -q, q] + P[:, q, -q] + P[:, -q, -q]) / tot
    chroma = np.abs(x - x.mean(-1, keepdims=True)).mean((1, 2, 3))
    d = x - x.mean(-1, keepdims=True)
    resid = (d[:, 1:, :, :] - d[:, :-1, :, :]).var((1, 2, 3))
    return np.stack([np.log(nyq + 1e-12), hf, np.log(grid + 1e-12), chroma, np.log(resid + 1e-12)], 1)


def detection_metrics(y_true: np.ndarray, score: np.ndarray, threshold: float = 0.5) -> dict:
    """ACC at ``threshold`` (on probabilities), AP and AUROC via scikit-learn.

    Returns:
        ``{"acc", "ap", "auroc", "real_acc", "fake_acc"}`` (floats in [0, 1]).

    Raises:
        ValueError: lengths differ, scores not finite, one class missing, or ``threshold``
            outside [0, 1].
    """
    from sklearn.metrics import accuracy_score, average_precision_score, roc_auc_score

    y = np.asarray(y_true)
    s = np.asarray(score, np.float64)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold={threshold}; allowed: 0..1 (a probability of 'generated')")
    if len(y) != len(s) or not np.isfinite(s).all():
        raise ValueError(f"{len(y)} labels and {len(s)} scores (all must be finite); allowed: equal lengths")
    if set(np.unique(y).tolist()) != {0, 1}:
        raise ValueError("need both real (0) and generated (1) images to compute AP/AUROC")
    pred = (s >= threshold).astype(int)
    return {"acc": float(accuracy_score(y, pred)), "ap": float(average_precision_score(y, s)),
            "auroc": float(roc_auc_score(y, s)), "real_acc": float((pred[y == 0] == 0).mean()),
            "fake_acc": float((pred[y == 1] == 1).mean())}


def per_generator_metrics(score: np.ndarray, generators: list[str] | np.ndarray, real: str = "real",
                          threshold: float = 0.5) -> dict[str, dict]:
    """Field-standard per-generator evaluation: each generator's fakes against all reals,
    ACC at ``threshold`` and AP (plus AUROC); ``"mean"`` averages them (mACC, mAP).

    Raises:
        ValueError: no reals or no generator, or scores and labels of different lengths.
    """
    g = np.asarray(generators)
    s = np.asarray(score, np.float64)
    if s.ndim != 1 or g.shape != s.shape:
        raise ValueError(f"{s.shape} scores and {g.shape} generator labels; allowed: one label per score")
    r = g == real
    names = sorted(set(g.tolist()) - {real})
    if not r.any() or not names:
        raise ValueError(f"need real images (group {real!r}) and at least one generator")
    out = {}
    for n in names:
        m = r | (g == n)
        out[n] = detection_metrics((g[m] != real).astype(int), s[m], threshold)
    out["mean"] = {k: float(np.mean([out[n][k] for n in names])) for k in out[names[0]]}
    return out


def paired_bootstrap_map_difference(score_a: np.ndarray, score_b: np.ndarray, groups: list[str] | np.ndarray,
                                    real: str = "real", n_boot: int = 200, level: float = 0.95,
                                    seed: int = 0) -> tuple[float, tuple[float, float]]:
    """mAP(b) − mAP(a) of two detectors scored on the same images, with a percentile interval from a
    paired bootstrap that resamples images with replacement within each group (reals and every
    generator), so both detectors see the same resample.

    The interval covers test-image sampling only, not the randomness of training (one run each).

    Args:
        score_a, score_b: ``float [N]`` P(generated) of the two detectors. groups: N group names.
        n_boot: resamples (>= 20). level: interval level in (0, 1).

    Returns:
        ``(difference on the full set, (low, high))``.

    Raises:
        ValueError: as :func:`per_generator_metrics`, different lengths, ``n_boot < 20`` or
            ``level`` outside (0, 1).

    Source: inferred (the standard nonparametric bootstrap, Efron 1979, applied per generator).
    """
    a, b, g = np.asarray(score_a, np.float64), np.asarray(score_b, np.float64), np.asarray(groups)
    if a.shape != b.shape:
        raise ValueError(f"score_a {a.shape} and score_b {b.shape}; allowed: the same images")
    if n_boot < 20 or not 0 < level < 1:
        raise ValueError(f"n_boot={n_boot}, level={level}; allowed: n_boot >= 20, 0 < level < 1")
    diff = per_generator_metrics(b, g, real)["mean"]["ap"] - per_generator_metrics(a, g, real)["mean"]["ap"]
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(g == n) for n in sorted(set(g.tolist()))]
    boots = []
    for _ in range(n_boot):
        idx = np.concatenate([rng.choice(m, len(m)) for m in members])
        boots.append(per_generator_metrics(b[idx], g[idx], real)["mean"]["ap"]
                     - per_generator_metrics(a[idx], g[idx], real)["mean"]["ap"])
    lo, hi = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return float(diff), (float(lo), float(hi))
