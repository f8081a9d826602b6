"""Dry-run stages of the full configuration (``neurips26 reproduce --scale full --dry-run``).

Generates the fictional knowledge graph, its questions and the sandbox's documents at full size
(the graph generator hung at 2000 companies once: the dry run stops such a stage at its CPU
limit and names it). See :mod:`neurips26.harness.dryrun` for the protocol.
"""

from __future__ import annotations

from neurips26.harness.dryrun import Stage, unchecked


def stages(config) -> list[Stage]:
    """The checks of ``config`` (a :class:`~neurips26.search_agent_attacks.experiment.Config`)."""
    from .experiment import _questions

    def world() -> dict:
        sandbox, train, held, adapt = _questions(config, 0)
        if (len(train), len(held)) != (config.n_train, config.n_eval):
            raise ValueError(f"{len(train)} training and {len(held)} held-out questions; expected "
                             f"{config.n_train} and {config.n_eval}")
        return {"note": f"{config.n_companies} companies, {sandbox.n_docs} documents, "
                        f"{len(train) + len(held) + len(adapt)} questions"}

    return [Stage("knowledge graph, questions, sandbox (full size)", world),
            unchecked("LLM agent", f"{config.llm_questions} questions to the {config.backend} endpoint "
                                   f"({config.model or 'no model'}): needs the endpoint"),
            unchecked("evolution", f"{config.generations} generations x {config.population} genomes x "
                                   f"{config.rollouts_per_genome} rollouts: minutes per seed, not run")]
