"""The one-line summary per run counts paper claims first and apart, never pooled."""

from neurips26.harness import claims as C
from neurips26.harness.results import Result
from neurips26.harness.runner import _counts_text


def test_summary_line_separates_kinds_paper_first():
    claims = [C.at_least("c", "s", measured=1, bound=0, reason="r", kind="check", source="inferred: x"),
              C.at_least("p", "s", measured=-1, bound=0, reason="r", kind="paper", source="abstract", object="toy", falsifiable_by="t"),
              C.at_least("q", "s", measured=1, bound=0, reason="r", kind="paper", source="abstract", object="toy", falsifiable_by="t")]
    res = Result("x", "ok", "quick", 0, {}, "k", "v", "t0", "t1", 1.0, claims=claims)
    assert _counts_text(res) == "paper: 1 hold, 1 do not hold; check: 1 hold"
