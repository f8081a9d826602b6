"""Cross-check against the authors' package ``sublevel-flood`` (module ``slflood``), where installed.

It installs with ``pip install --no-deps sublevel-flood`` next to our pinned multipers/gudhi. On
identical points, function values and landmarks, its exact mode must give the same simplices and
the same k-critical grades as ours. Skipped, with the reason, when the package is absent.
"""

from __future__ import annotations

import numpy as np
import pytest

slflood = pytest.importorskip("slflood", reason="the authors' package sublevel-flood is not installed "
                              "(pip install --no-deps sublevel-flood)")
torch = pytest.importorskip("torch")

from neurips26.flood_bifiltration import codensity, sublevel_flood_bifiltration  # noqa: E402
from neurips26.flood_bifiltration.data import circle_with_outliers  # noqa: E402


@pytest.mark.parametrize("seed,ppe", [(0, 6), (1, 9)])
def test_same_simplices_and_grades_as_the_authors_exact_mode(seed, ppe):
    x = circle_with_outliers(300, 200, np.random.default_rng(seed))
    f = codensity(x, "kde", bandwidth=0.15)
    ours = sublevel_flood_bifiltration(x, f, 20, points_per_edge=ppe, exact=True)
    st = slflood.slflood_bifiltration(torch.tensor(x, dtype=torch.float64),
                                      torch.tensor(np.asarray(ours.landmark_indices), dtype=torch.long),
                                      torch.tensor(f, dtype=torch.float64), points_per_edge=ppe, exact=True)
    theirs = {tuple(sorted(int(v) for v in s)): np.asarray(g, dtype=np.float64).reshape(-1, 2)
              for s, g in st.get_simplices()}
    mine = {tuple(map(int, s)): g for simps, gs in zip(ours.simplices, ours.grades) for s, g in zip(simps, gs)}
    assert set(theirs) == set(mine)
    for s, g in mine.items():
        a = g[np.lexsort((g[:, 1], g[:, 0]))]
        b = theirs[s][np.lexsort((theirs[s][:, 1], theirs[s][:, 0]))]
        assert a.shape == b.shape, s
        # their grades pass through float32 (measured differences ≈ 1e-7 = float32 round-off on values
        # of order 1); 1e-6 leaves room for that and nothing more: a wrong grid or tie rule moves grades by 1e-2
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6, err_msg=str(s))
