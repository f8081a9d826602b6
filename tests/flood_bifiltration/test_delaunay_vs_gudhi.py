"""Cross-check of our Delaunay complex and minimum-enclosing-ball radii against gudhi's
Delaunay–Čech filtration (the same complex, filtered by each simplex's minimum enclosing ball)."""

from __future__ import annotations

import numpy as np
import pytest

gudhi = pytest.importorskip("gudhi")

from neurips26.flood_bifiltration.delaunay import delaunay_complex, minimum_enclosing_balls  # noqa: E402


@pytest.mark.parametrize("d,n,seed", [(2, 60, 0), (2, 200, 1), (3, 40, 2)])
def test_delaunay_complex_and_enclosing_radii_match_gudhi_delaunay_cech(d, n, seed):
    x = np.random.default_rng(seed).uniform(-1, 1, (n, d))   # generic position: a unique Delaunay complex
    ours = delaunay_complex(x)
    st = gudhi.DelaunayCechComplex(points=x).create_simplex_tree(output_squared_values=False)
    theirs = {tuple(sorted(s)): v for s, v in st.get_simplices()}
    mine = {}
    for simps in ours.simplices:
        _, radii = minimum_enclosing_balls(x, simps)
        mine.update({tuple(map(int, s)): float(r) for s, r in zip(simps, radii)})
    assert set(mine) == set(theirs)
    err = max(abs(mine[s] - theirs[s]) for s in mine)
    # gudhi uses exact/filtered CGAL predicates and a different MEB algorithm: agreement to double round-off
    assert err < 1e-12, err
