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
from dataclasses import dataclass
from types import ModuleType


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
        """Whether ``neurips26.<system>.experiment`` exists (without importing it)."""
        try:
            return importlib.util.find_spec(f"neurips26.{self.system}.experiment") is not None
        except ModuleNotFoundError:
            return False


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
    """
    if not paper.implemented:
        raise LookupError(f"system {paper.cli_name!r} (paper {paper.number}) is not implemented yet")
    return importlib.import_module(f"neurips26.{paper.system}.experiment")
