"""The oracle planner: shortest action sequences that reach every belief goal.

Breadth-first search over hashed :class:`~neurips26.ncp_tom.world.WorldState` values. BFS
expands states in order of plan length, so the first goal state found gives a shortest plan;
the hash set of visited states keeps each state expanded once. The search runs on each state
encoded as one flat tuple of location indices (a bijection with :class:`WorldState` for the
scene, with the tracker's move and send rules written out on that layout): the same states in the
same order as searching :class:`WorldState` values through ``apply_action``, about 5× cheaper.

Only moves of objects named in a goal are searched: in the tracker a move of object ``o``
changes only ``o``'s location and beliefs about ``o``, so moving any other object can never make
a goal true (the restriction is exact, not a heuristic). Sends are all searched.

Source: inferred (breadth-first search with hashed visited states); shortest-plan length is the
difficulty measure used to compare TB and FB goals at equal length.
"""

from __future__ import annotations

from dataclasses import dataclass

from .goals import BeliefGoal, _goals_hold, check_goals
from .world import UNKNOWN, Action, Scene, WorldState, _apply_action, all_actions, check_count


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
    flat = _encode(scene, start)
    if flat is None:  # a state whose shape or names do not fit the scene: the generic search
        return _search_states(scene, start, goals, actions, max_depth, max_states)
    return _search_flat(scene, flat, goals, actions, max_depth, max_states)


def _search_states(scene: Scene, start: WorldState, goals: tuple[BeliefGoal, ...], actions: list[Action],
                   max_depth: int, max_states: int) -> SearchResult:
    """The reference search on :class:`WorldState` values through the tracker's own
    ``_apply_action`` (what :func:`_search_flat` must reproduce exactly: same expansion order,
    same plan, same state count)."""
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


_UNK = -1  # UNKNOWN in the flat encoding


def _encode(scene: Scene, state: WorldState) -> tuple[int, ...] | None:
    """``state`` as one flat tuple of location indices (``scene.locations``; UNKNOWN = -1):
    object locations, character rooms, ``first_order`` row-major, ``second_order`` row-major.
    A bijection for states of this scene, so equal tuples are equal states. ``None`` if the
    state's shape or values do not fit the scene."""
    lidx = {n: i for i, n in enumerate(scene.locations)}
    lidx[UNKNOWN] = _UNK
    n_o, n_c = len(scene.objects), len(scene.characters)
    rows = [state.object_location, state.character_room, *state.first_order,
            *(r for m in state.second_order for r in m)]
    if (len(state.object_location) != n_o or len(state.character_room) != n_c
            or len(state.first_order) != n_c or len(state.second_order) != n_c
            or any(len(m) != n_c for m in state.second_order)
            or any(len(r) != n_o for r in rows[2:])
            or any(r not in scene.rooms for r in state.character_room)):
        return None
    try:
        return tuple(lidx[x] for r in rows for x in r)
    except (KeyError, TypeError):
        return None


def _search_flat(scene: Scene, start: tuple[int, ...], goals: tuple[BeliefGoal, ...], actions: list[Action],
                 max_depth: int, max_states: int) -> SearchResult:
    """:func:`_search_states` on flat int tuples (:func:`_encode`): the same breadth-first
    order over the same states, with the tracker's move and send rules written out on the flat
    layout (``world._move`` / ``world._send``)."""
    lidx = {n: i for i, n in enumerate(scene.locations)}
    room_of = [lidx[scene.room_of[n]] for n in scene.locations]
    n_o, n_c = len(scene.objects), len(scene.characters)
    F = n_o + n_c                      # first_order[a][o] at F + a*n_o + o
    S = F + n_c * n_o                  # second_order[a][b][o] at S + (a*n_c + b)*n_o + o
    chars = range(n_c)
    objs = range(n_o)
    oidx, cidx = scene.index["objects"], scene.index["characters"]
    acts = []
    for a in actions:
        if a.kind == "move":
            acts.append((True, oidx[a.subject], lidx[a.target], a))
        else:
            acts.append((False, cidx[a.subject], lidx[a.target], a))
    checks = []
    for g in goals:
        o, x = oidx[g.object], cidx[g.believers[0]]
        if g.order == 1:
            checks.append((F + x * n_o + o, o, lidx[g.location], g.true_belief))
        else:
            y = cidx[g.believers[1]]
            checks.append((S + (x * n_c + y) * n_o + o, F + y * n_o + o, lidx[g.location], g.true_belief))

    def holds(s: tuple[int, ...]) -> bool:
        for bi, fi, loc, tb in checks:
            if s[bi] != loc or (s[fi] == loc) != tb:
                return False
        return True

    move_writes: dict[tuple, tuple[tuple[int, int], ...]] = {}

    def writes_of_move(oi: int, dst: int, src: int, rooms: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
        """Flat (position, value) writes of ``world._move`` (witness groups of dst and src rooms)."""
        src_room, dst_room = room_of[src], room_of[dst]
        groups = [([c for c in chars if rooms[c] == dst_room], dst)]
        if src_room != dst_room:
            groups.append(([c for c in chars if rooms[c] == src_room], _UNK))
        w = [(oi, dst)]
        for members, value in groups:
            for a in members:
                w.append((F + a * n_o + oi, value))
                for b in members:
                    w.append((S + (a * n_c + b) * n_o + oi, value))
        return tuple(w)

    parent: dict[tuple[int, ...], tuple[tuple[int, ...], Action] | None] = {start: None}
    frontier = [start]
    for _ in range(max_depth):
        nxt = []
        for s in frontier:
            rooms = s[n_o:F]
            for is_move, i, t, act in acts:
                if is_move:
                    src = s[i]
                    if src == t:
                        continue
                    key = (i, t, src, rooms)
                    w = move_writes.get(key)
                    if w is None:
                        w = move_writes[key] = writes_of_move(i, t, src, rooms)
                    lst = list(s)
                    for p, v in w:
                        lst[p] = v
                else:
                    if rooms[i] == t:
                        continue
                    lst = list(s)
                    lst[n_o + i] = t
                    base = F + i * n_o       # first_order[c] <- see_room(first_order[c])
                    for o in objs:
                        if s[o] == t:
                            lst[base + o] = t
                        elif s[base + o] == t:
                            lst[base + o] = _UNK
                    d = S + (i * n_c + i) * n_o  # second_order[c][c] <- the new first_order[c]
                    lst[d:d + n_o] = lst[base:base + n_o]
                    for b in chars:          # co-present b: c models b looking, b models c looking
                        if b != i and rooms[b] == t:
                            for p in (S + (i * n_c + b) * n_o, S + (b * n_c + i) * n_o):
                                for o in objs:
                                    if s[o] == t:
                                        lst[p + o] = t
                                    elif s[p + o] == t:
                                        lst[p + o] = _UNK
                ns = tuple(lst)
                if ns in parent:
                    continue
                parent[ns] = (s, act)
                if holds(ns):
                    return SearchResult(_unwind(parent, ns), len(parent), False)
                if len(parent) >= max_states:
                    return SearchResult(None, len(parent), False)
                nxt.append(ns)
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
