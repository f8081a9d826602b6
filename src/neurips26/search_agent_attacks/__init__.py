"""Paper 12 — CREO: adversarial self-evolution of attacks on LLM search agents.

Source: the abstract (the paper's text was not found; everything past it is our design and is
labelled so). Attack strategies evolve against a search agent inside a controlled sandbox by
Contrastive Rollout Evolutionary Optimization, while a defender adapts between generations
(a bi-level loop); fine-grained metrics locate where an attack succeeds or dies.

Parts:

* :mod:`.sandbox` — fictional knowledge graph, corpus (or a user's JSONL/text corpus), BM25
  retrieval with ``bm25s``, attacker-document injection (through the index or at a rank),
  :class:`no_network` guard.
* :mod:`.attacks` — structured attack genomes, static templates, the document renderer, an
  LLM attacker (refusals counted).
* :mod:`.agents` — the scripted agent (documented trust rule) and a ReAct LLM agent; the
  :class:`Rollout` metrics (exposure, read, adoption, corruption, searches).
* :mod:`.defenders` — mitigations and the adaptive update.
* :mod:`.evolution` — static templates, random-mutation GA, CREO, and the bi-level loop.
"""

from .agents import LLMAgent, Rollout, ScriptedAgent, attack_succeeded, exact_match, f1_score, normalize_answer
from .attacks import GENES, STATIC_TEMPLATES, Genome, llm_render, random_genome, render_documents, target_for
from .defenders import MITIGATIONS, Defender, adapt, defender_from_names
from .evolution import (
                        METHODS,
                        CoevolutionRound,
                        Evaluator,
                        EvolutionResult,
                        asr,
                        attack_counts,
                        coevolve,
                        creo_mutation,
                        evolve,
                        pass_at_k,
                        pass_at_k_per_question,
)
from .sandbox import Doc, KnowledgeGraph, Question, Sandbox, load_corpus, no_network

__all__ = ["LLMAgent", "Rollout", "ScriptedAgent", "attack_succeeded", "exact_match", "f1_score", "normalize_answer",
           "attack_counts", "pass_at_k", "pass_at_k_per_question", "GENES", "STATIC_TEMPLATES", "Genome", "llm_render",
           "random_genome", "render_documents", "target_for", "MITIGATIONS", "Defender", "adapt",
           "defender_from_names", "METHODS", "CoevolutionRound", "EvolutionResult", "Evaluator", "asr", "coevolve",
           "creo_mutation", "evolve", "Doc", "KnowledgeGraph", "Question", "Sandbox", "load_corpus", "no_network"]
