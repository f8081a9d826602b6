"""Paper 17 — The Text Uncanny Valley: word-boundary corruption and U-shaped detection.

Source: the abstract and first page (Tong, Xu, Shrivastava, Tan, Holtzman; arXiv:2605.07186).
Whitespace inserted *inside* words at rate p breaks them into fragments; LLMs' detection of
targeted information follows a U in p (the valley), explained by a transition from a word-level
to a character-level reading mode; tokenisation entropy peaks before the F1 minimum.

Parts:

* :mod:`.perturbation` — :func:`fragment` (random, every-k and per-type regularised),
  :func:`defragment` (exact, from the log), :func:`matched_k`.
* :mod:`.tasks` — omission (AbsenceBench-style), needle (NIAH-style), number-sequence and math
  items from bundled public-domain poems; :func:`render` to chat messages at a rate p.
* :mod:`.scoring` — micro-F1 with three matchers (exact, normalised, fragment-tolerant).
* :mod:`.tokenisation` — offline vocabularies (o200k/cl100k via ``bpe-openai``, GPT-2 via
  ``tokenizers``) and three definitions of tokenisation entropy; :func:`entropy_profile`.
* :mod:`.subjects` — chat models as subjects, a small in-process :class:`LineDetector`, a
  scripted mock with a known valley.
* :mod:`.sweep` — :func:`run_sweep` over rates × seeds × documents, :func:`bootstrap_curve`,
  the sample-split :func:`u_shape_test` and its :func:`shuffled_rate_control`.
"""

from .perturbation import Fragmented, defragment, fragment, matched_k, word_spans
from .scoring import MATCHERS, Score, math_correct, reported, score
from .subjects import LineDetector, chat_subject, mode_mixture_subject
from .sweep import SweepResult, UTest, bootstrap_curve, run_sweep, shuffled_rate_control, u_shape_test
from .tasks import (
                    DetectionItem,
                    MathItem,
                    Rendered,
                    math_items,
                    needle_items,
                    omission_items,
                    render,
                    render_math,
                    sequence_items,
)
from .tokenisation import BUILTIN, EntropyProfile, Tokenizer, entropy_profile, load_tokenizer

__all__ = ["Fragmented", "defragment", "fragment", "matched_k", "word_spans", "MATCHERS", "Score", "math_correct",
           "reported", "score", "LineDetector", "chat_subject", "mode_mixture_subject", "SweepResult", "UTest",
           "bootstrap_curve", "run_sweep", "shuffled_rate_control", "u_shape_test",
           "DetectionItem", "MathItem", "Rendered", "math_items",
           "needle_items", "omission_items", "render", "render_math", "sequence_items", "BUILTIN", "EntropyProfile",
           "Tokenizer", "entropy_profile", "load_tokenizer"]
