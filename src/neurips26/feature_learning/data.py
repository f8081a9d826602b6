"""Offline inputs: scikit-learn's bundled digits, its Swiss-roll generator, modular addition,
and user-provided arrays (``.npz``) for the full configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass
class Split:
    """Train/test arrays: X (n, d) float32, y (n,) int64 labels (or float targets)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def digits(seed: int = 0, test_fraction: float = 0.2) -> Split:
    """scikit-learn's 8×8 digits (1797 images, 10 classes; shipped with the package), pixels
    scaled to [0, 1], stratified split (1437 / 360 with the default fraction)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=test_fraction, random_state=seed, stratify=y)
    return Split(Xtr, ytr.astype(np.int64), Xte, yte.astype(np.int64))


def swiss_roll(n: int = 1000, seed: int = 0, noise: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """2-D Swiss roll: the (x, z) coordinates of ``sklearn.datasets.make_swiss_roll``, min–max
    scaled to [0, 1] per coordinate, and the roll parameter t (n,) as the regression target."""
    from sklearn.datasets import make_swiss_roll

    P, t = make_swiss_roll(n, noise=noise, random_state=seed)
    X = P[:, [0, 2]]
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    return X.astype(np.float32), t.astype(np.float32)


def modular_addition(prime: int, train_fraction: float = 0.7, seed: int = 0) -> Split:
    """All pairs (a, b) ∈ Z_p², input the two one-hots concatenated (2p), label (a + b) mod p,
    split at random into train/test (the classic grokking task; Power et al. 2022).

    Raises:
        ValueError: ``prime`` < 2 or ``train_fraction`` outside (0, 1).
    """
    if prime < 2 or not 0 < train_fraction < 1:
        raise ValueError(f"prime={prime} must be >= 2 and train_fraction={train_fraction} in (0, 1)")
    a, b = np.meshgrid(np.arange(prime), np.arange(prime), indexing="ij")
    a, b = a.ravel(), b.ravel()
    eye = np.eye(prime, dtype=np.float32)
    X = np.concatenate([eye[a], eye[b]], axis=1)
    y = ((a + b) % prime).astype(np.int64)
    perm = np.random.default_rng(seed).permutation(len(y))
    k = int(round(train_fraction * len(y)))
    tr, te = perm[:k], perm[k:]
    return Split(X[tr], y[tr], X[te], y[te])


def load_npz(path: str | Path) -> Split:
    """A user's data set as ``.npz`` with arrays ``X_train, y_train, X_test, y_test`` (images are
    flattened; labels must be integers 0..C−1). Used by the full configuration (MNIST, SVHN,
    CIFAR-10/100 exported by the user; nothing is downloaded).

    Raises:
        FileNotFoundError: missing file. ValueError: missing arrays or mismatched lengths.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such data file (expected an .npz with X_train, y_train, X_test, y_test)")
    with np.load(path) as z:
        missing = [k for k in ("X_train", "y_train", "X_test", "y_test") if k not in z]
        if missing:
            raise ValueError(f"{path}: missing arrays {missing}; need X_train, y_train, X_test, y_test")
        arr = {k: z[k] for k in ("X_train", "y_train", "X_test", "y_test")}
    for s in ("train", "test"):
        if len(arr[f"X_{s}"]) != len(arr[f"y_{s}"]):
            raise ValueError(f"{path}: X_{s} has {len(arr[f'X_{s}'])} rows but y_{s} has {len(arr[f'y_{s}'])}")
    X_train = arr["X_train"].reshape(len(arr["X_train"]), -1).astype(np.float32)
    X_test = arr["X_test"].reshape(len(arr["X_test"]), -1).astype(np.float32)
    scale = max(float(np.abs(X_train).max()), 1e-12)
    return Split(X_train / scale, arr["y_train"].astype(np.int64), X_test / scale, arr["y_test"].astype(np.int64))
