"""Synthetic density-sensitive point clouds (seeded) for the reproduction.

A *signal* of ``n_signal`` points — a noisy circle (a loop) or a filled disk (no loop) of the
same radius — is buried in ``n_noise`` uniform outliers on [−1.5, 1.5]². Without density the
two classes look alike (the outliers fill the loop); a co-density filtration recovers the loop.

Source: inferred (circle + uniform outliers; loop vs uniform disk in the same outliers),
following the upstream demo data (noisy sphere + uniform ball); sizes are ours.
"""

from __future__ import annotations

import numpy as np

from .validation import check_positive_int


def circle_with_outliers(n_signal: int, n_noise: int, rng: np.random.Generator, *, radius: float = 1.0,
                         jitter: float = 0.05, box: float = 1.5, loop: bool = True) -> np.ndarray:
    """Points: a noisy circle (``loop=True``) or a uniform disk (``loop=False``) plus outliers.

    Args:
        n_signal: points on the circle / in the disk (>= 1).
        n_noise: uniform outliers on [−box, box]² (>= 0).
        rng: numpy Generator.
        radius: circle/disk radius; jitter: Gaussian noise sd on the circle; box: half-width.
        loop: circle (True) or disk (False).

    Returns:
        (n_signal + n_noise, 2) float64 array, signal first.

    Raises:
        ValueError: if n_signal < 1 or n_noise < 0.
    """
    n_signal = check_positive_int(n_signal, "n_signal")
    n_noise = check_positive_int(n_noise, "n_noise", minimum=0)
    th = rng.uniform(0, 2 * np.pi, n_signal)
    if loop:
        rad = radius + jitter * rng.normal(size=n_signal)
    else:
        rad = radius * np.sqrt(rng.uniform(0, 1, n_signal))
    sig = np.c_[rad * np.cos(th), rad * np.sin(th)]
    return np.vstack([sig, rng.uniform(-box, box, (n_noise, 2))])


def loop_vs_disk_dataset(n_per_class: int, n_signal: int, n_noise: int, rng: np.random.Generator):
    """Labelled clouds: class 1 = circle of radius U(0.7, 1.0) in outliers, class 0 = disk of the
    same radius in the same number of outliers.

    Returns:
        (list of (n_signal + n_noise, 2) arrays, (2·n_per_class,) int labels), shuffled.
    """
    n_per_class = check_positive_int(n_per_class, "n_per_class")
    clouds, labels = [], []
    for label in (0, 1):
        for _ in range(n_per_class):
            clouds.append(circle_with_outliers(n_signal, n_noise, rng, radius=rng.uniform(0.7, 1.0),
                                               loop=bool(label)))
            labels.append(label)
    perm = rng.permutation(len(clouds))
    return [clouds[i] for i in perm], np.asarray(labels)[perm]
