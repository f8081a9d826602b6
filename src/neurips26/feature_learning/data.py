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
        FileNotFoundError: missing file. ValueError: not a readable .npz (corrupt, truncated, pickled
        objects), missing arrays, mismatched lengths, non-finite or non-numeric X, labels that are not
        integers ≥ 0 (see :func:`check_npz`).
    """
    arr = _read_npz(path)
    path = Path(path)
    X_train = arr["X_train"].reshape(len(arr["X_train"]), -1).astype(np.float32)
    X_test = arr["X_test"].reshape(len(arr["X_test"]), -1).astype(np.float32)
    scale = max(float(np.abs(X_train).max()), 1e-12)
    return Split(X_train / scale, arr["y_train"].astype(np.int64), X_test / scale, arr["y_test"].astype(np.int64))


NPZ_KEYS = ("X_train", "y_train", "X_test", "y_test")


def _read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """Open and validate a user ``.npz`` (see :func:`check_npz`); returns its four arrays."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such data file (expected an .npz with X_train, y_train, X_test, y_test)")
    allowed = "an uncompressed or compressed numpy .npz (np.savez) with numeric arrays X_train, y_train, X_test, y_test"
    try:
        z = np.load(path, allow_pickle=False)
    except Exception as e:  # BadZipFile, EOFError, OSError, bad .npy header: a corrupt or non-npz file
        raise ValueError(f"{path}: not a readable .npz ({type(e).__name__}); expected {allowed}") from None
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise ValueError(f"{path}: is a single .npy array, not an .npz archive; expected {allowed}")
    with z:
        missing = [k for k in NPZ_KEYS if k not in z.files]
        if missing:
            raise ValueError(f"{path}: missing arrays {missing} (has {sorted(z.files)[:8]}); expected {allowed}")
        try:
            arr = {k: z[k] for k in NPZ_KEYS}
        except Exception as e:  # truncated member, CRC error, pickled object array (allow_pickle=False)
            raise ValueError(f"{path}: not a readable .npz ({type(e).__name__} reading its arrays); expected "
                             f"{allowed}") from None
    for k, a in arr.items():
        if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
            raise ValueError(f"{path}: array {k} has dtype {a.dtype}; expected numeric arrays")
        if a.ndim < 1 or len(a) == 0:
            raise ValueError(f"{path}: array {k} is empty or 0-d (shape {a.shape}); expected at least one row")
    for s in ("train", "test"):
        if len(arr[f"X_{s}"]) != len(arr[f"y_{s}"]):
            raise ValueError(f"{path}: X_{s} has {len(arr[f'X_{s}'])} rows but y_{s} has {len(arr[f'y_{s}'])}")
        if arr[f"y_{s}"].ndim != 1:
            raise ValueError(f"{path}: y_{s} has shape {arr[f'y_{s}'].shape}; expected integer labels of shape (n,)")
        y = arr[f"y_{s}"]
        if not np.all(np.isfinite(y)) or np.any(y < 0) or np.any(y != np.round(y)):
            raise ValueError(f"{path}: y_{s} must hold integer class labels 0..C-1")
        if not np.all(np.isfinite(arr[f"X_{s}"])):
            raise ValueError(f"{path}: X_{s} has NaN or infinite entries")
    if arr["X_train"].shape[1:] != arr["X_test"].shape[1:]:
        raise ValueError(f"{path}: X_train rows {arr['X_train'].shape[1:]} and X_test rows {arr['X_test'].shape[1:]} "
                         "differ in shape")
    if float(np.abs(arr["X_train"]).max()) == 0.0:
        raise ValueError(f"{path}: X_train is all zeros")
    return arr


def check_npz(path: str | Path) -> None:
    """Open and validate a user data set before any training (the run's preflight).

    Checks: the file exists and is a numpy ``.npz`` archive (no pickled objects; a corrupt,
    truncated or non-zip file is refused), with numeric arrays X_train, y_train, X_test, y_test;
    equal row counts of X and y per split; finite X; integer labels ≥ 0 of shape (n,); the same
    row shape in both splits; X_train not all zero.

    Raises:
        FileNotFoundError: missing file. ValueError: anything else above, in one line naming the file.
    """
    _read_npz(path)
