"""Episode scoring and the three non-LLM agents: oracle, no-ToM and random.

* **oracle** — a shortest plan from :func:`~neurips26.ncp_tom.planner.shortest_plan` (upper bound).
* **no-ToM** — "put the object where the goal says": ``MOVE o TO L`` for each goal, ignoring who
  sees what. It can reach a TB goal only when the believers happen to witness the move, and it
  can never reach an FB goal (after the move the object *is* at ``L``).
* **random** — uniformly random grammatical actions, with ``DONE`` as one more choice, until
  ``DONE`` or the step cap.

Scoring replays the actions through the tracker and checks every goal in the final state
(:func:`score_plan`). A plan longer than the step cap fails (``over_cap``).

Source: inferred (the paper's baselines and step cap are unknown): an oracle upper bound, a
ToM-free agent and a random agent; step cap = oracle length + 3 leaves room for a few wasted moves.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from .goals import goals_hold
from .planner import shortest_plan
from .tasks import Instance, parse_action_string
from .world import Action, all_actions, apply_action, check_count, check_type


@dataclass
class EpisodeResult:
    """One agent's attempt at one instance (JSON-ready via :meth:`to_dict`).

    Attributes:
        instance_id, goal_type, context, min_plan_length: copied from the instance.
        agent: agent name (``oracle``, ``no_tom``, ``random``, ``llm:<model>`` …).
        setting: ``plan`` (baselines), ``one_shot`` or ``agentic``.
        status: ``success``, ``failure`` or ``error`` (backend failure: left out of rates).
        steps: actions attempted (including invalid ones).
        failed_preconditions: actions the tracker refused (world unchanged).
        unknown_entities: actions naming an entity the scene lacks (world unchanged).
        malformed: replies (or plan lines) still unparseable after the one re-ask.
        reasks: re-asks sent after a malformed reply.
        stopped_early: the agent said ``DONE`` before the cap.
        over_cap: a one-shot plan longer than the step cap (scored as failure).
        actions: the parsed actions as strings, in order.
        prompt_tokens, completion_tokens, latency_s, calls, cache_hits: backend usage (0 for
            baselines); ``cache_hits`` counts replies served from the reply cache.
        error: the backend error message when ``status == "error"``.
    """

    instance_id: str
    goal_type: str
    context: str
    min_plan_length: int | None
    agent: str
    setting: str
    status: str = "failure"
    steps: int = 0
    failed_preconditions: int = 0
    unknown_entities: int = 0
    malformed: int = 0
    reasks: int = 0
    stopped_early: bool = False
    over_cap: bool = False
    actions: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    calls: int = 0
    cache_hits: int = 0
    error: str = ""

    @property
    def success(self) -> bool:
        """True iff ``status == "success"``."""
        return self.status == "success"

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return asdict(self)


def new_episode(instance: Instance, agent: str, setting: str) -> EpisodeResult:
    """An empty :class:`EpisodeResult` for ``instance``."""
    return EpisodeResult(instance.id, instance.goal_type, instance.context, instance.min_plan_length, agent, setting)


def step_cap(instance: Instance, extra_steps: int = 3) -> int:
    """Most actions an agent may take: the oracle's length + ``extra_steps`` (inferred).

    Raises:
        ValueError: if the instance has no ``min_plan_length`` or ``extra_steps`` is not an
            integer >= 0. TypeError: ``instance`` is not an :class:`Instance`.
    """
    check_type(instance, Instance, "instance")
    extra_steps = check_count(extra_steps, "extra_steps", 0)
    if instance.min_plan_length is None:
        raise ValueError(f"instance {instance.id} has no min_plan_length; generate it with the oracle")
    return instance.min_plan_length + extra_steps


def score_plan(instance: Instance, actions: list[Action], *, cap: int, agent: str = "plan",
               setting: str = "plan", episode: EpisodeResult | None = None) -> EpisodeResult:
    """Replay ``actions`` through the tracker and score the final state.

    Invalid actions (unknown names, failed preconditions) leave the world unchanged and are
    counted. A plan longer than ``cap`` fails with ``over_cap=True``.

    Args:
        cap: the step cap (>= 1).
        episode: an episode to fill in (e.g. one carrying LLM usage); a new one by default.

    Raises:
        ValueError: if ``cap`` is not an integer >= 1.
        TypeError: ``instance`` not an :class:`Instance`, or ``actions`` not a list of
            :class:`Action` (text must be parsed first, e.g. with ``parse_line``).
    """
    check_type(instance, Instance, "instance")
    cap = check_count(cap, "cap", 1)
    if isinstance(actions, (str, Action)) or not all(isinstance(a, Action) for a in actions):
        raise TypeError(f"actions must be a list of Action, got {actions!r:.80}; parse text with parse_line")
    ep = episode or new_episode(instance, agent, setting)
    state = instance.initial
    for a in actions[:cap]:
        step = apply_action(instance.scene, state, a)
        state = step.state
        ep.steps += 1
        ep.actions.append(str(a))
        ep.failed_preconditions += step.error == "precondition"
        ep.unknown_entities += step.error == "unknown_entity"
    ep.over_cap = len(actions) > cap
    ok = goals_hold(instance.scene, state, instance.goals) and not ep.over_cap
    ep.status = "success" if ok else "failure"
    return ep


def oracle_plan(instance: Instance, max_depth: int = 8) -> list[Action]:
    """A shortest plan: the stored one if present, else a fresh search.

    Raises:
        ValueError: if ``max_depth`` is not an integer >= 0 or no plan exists within it.
        TypeError: ``instance`` is not an :class:`Instance`.
    """
    check_type(instance, Instance, "instance")
    max_depth = check_count(max_depth, "max_depth", 0)
    if instance.oracle_plan:
        return [parse_action_string(s) for s in instance.oracle_plan]
    res = shortest_plan(instance.scene, instance.initial, instance.goals, max_depth=max_depth)
    if res.plan is None:
        raise ValueError(f"instance {instance.id}: no plan within max_depth={max_depth}")
    return res.plan


def no_tom_plan(instance: Instance) -> list[Action]:
    """``MOVE o TO L`` for each goal (skipping objects already at ``L``): no model of witnesses.

    Raises:
        TypeError: ``instance`` is not an :class:`Instance`.
    """
    check_type(instance, Instance, "instance")
    plan, where = [], dict(zip(instance.scene.objects, instance.object_location))
    for g in instance.goals:
        if where[g.object] != g.location:
            plan.append(Action("move", g.object, g.location))
            where[g.object] = g.location
    return plan


def random_plan(instance: Instance, rng: np.random.Generator, cap: int) -> list[Action]:
    """Uniformly random actions from the full grammar (plus ``DONE``) until ``DONE`` or ``cap``.

    Raises:
        ValueError: ``cap`` not an integer >= 1. TypeError: ``instance`` not an :class:`Instance`.
    """
    check_type(instance, Instance, "instance")
    cap = check_count(cap, "cap", 1)
    choices = all_actions(instance.scene)
    plan = []
    while len(plan) < cap:
        k = int(rng.integers(len(choices) + 1))
        if k == len(choices):
            break
        plan.append(choices[k])
    return plan
