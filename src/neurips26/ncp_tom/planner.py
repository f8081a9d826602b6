"""The oracle planner: shortest action sequences that reach every belief goal.

Breadth-first search over hashed :class:`~neurips26.ncp_tom.world.WorldState` values. BFS
expands states in order of plan length, so the first goal state found gives a shortest plan;
the hash set of visited states keeps each state expanded once.

Only moves of objects named in a goal are searched: in the tracker a move of object ``o``
changes only ``o``'s location and beliefs about ``o``, so moving any other object can never make
a goal true (the restriction is exact, not a heuristic). Sends are all searched.

Source: inferred (breadth-first search with hashed visited states); shortest-plan length is the
difficulty measure used to compare TB and FB goals at equal length.
"""

from __future__ import annotations

from dataclasses import dataclass

from .goals import BeliefGoal, _goals_hold, check_goals
from .world import Action, Scene, WorldState, _apply_action, all_actions, check_count


@dataclass
class SearchResult:
    """Outcome of :func:`shortest_plan`.

    Attributes:
        plan: a shortest plan (list of actions; ``[]`` if the goals already hold), or ``None``
            when no plan of length <= ``max_depth`` exists (or ``max_states`` was reached).
        states: number of distinct states generated (the search cost).
        exhausted: True when the search space up to ``max_depth`` was fully explored.
    """

    plan: list[Action] | None
    states: int
    exhausted: bool


def shortest_plan(scene: Scene, start: WorldState, goals: tuple[BeliefGoal, ...], *, max_depth: int = 6,
                  max_states: int = 2_000_000) -> SearchResult:
    """Breadth-first search for a shortest plan reaching ``goals`` from ``start``.

    Args:
        max_depth: longest plan considered (>= 0).
        max_states: stop (returning ``plan=None, exhausted=False``) after this many states.

    Raises:
        ValueError: ``max_depth`` not an integer >= 0, ``max_states`` not an integer >= 1, empty
            ``goals``, or a goal naming something the scene lacks.
        TypeError: ``scene``/``start``/``goals`` of the wrong type.
    """
    max_depth = check_count(max_depth, "max_depth", 0)
    max_states = check_count(max_states, "max_states", 1)
    goals = check_goals(scene, start, goals)
    if not goals:
        raise ValueError("goals is empty; give at least one BeliefGoal")
    if _goals_hold(scene, start, goals):
        return SearchResult([], 1, True)
    goal_objects = tuple(o for o in scene.objects if any(g.object == o for g in goals))
    actions = all_actions(scene, goal_objects)
    parent: dict[WorldState, tuple[WorldState, Action] | None] = {start: None}
    frontier = [start]
    for _ in range(max_depth):
        nxt = []
        for s in frontier:
            for a in actions:
                step = _apply_action(scene, s, a, narrate=False)
                if not step.ok or step.state in parent:
                    continue
                parent[step.state] = (s, a)
                if _goals_hold(scene, step.state, goals):
                    return SearchResult(_unwind(parent, step.state), len(parent), False)
                if len(parent) >= max_states:
                    return SearchResult(None, len(parent), False)
                nxt.append(step.state)
        if not nxt:
            return SearchResult(None, len(parent), True)
        frontier = nxt
    return SearchResult(None, len(parent), True)


def _unwind(parent: dict, state: WorldState) -> list[Action]:
    plan = []
    while parent[state] is not None:
        state, a = parent[state]
        plan.append(a)
    return plan[::-1]
