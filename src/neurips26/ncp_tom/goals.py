"""Belief-state goals: what the agent must make a character believe.

A goal of order 1 reads "``a`` believes ``o`` is in ``L``"; of order 2, "``a`` believes ``b``
believes ``o`` is in ``L``". Each goal is a **true-belief** (TB) goal — the believed fact holds at
the end — or a **false-belief** (FB) goal — it does not:

.. math::

    \\text{order 1:}\\quad B_a(o) = L \\;\\wedge\\; [\\,\\mathrm{loc}(o) = L\\,] = \\mathrm{tb}

    \\text{order 2:}\\quad B_a(B_b(o)) = L \\;\\wedge\\; [\\,B_b(o) = L\\,] = \\mathrm{tb}

so for order 2 the "fact" is ``b``'s actual belief. Success means every goal of an instance holds
in the final state (scored by the tracker, never by the agent).

Source: NCP-ExploreToM abstract (TB vs FB goals); the exact predicates are **inferred**.
"""

from __future__ import annotations

from dataclasses import dataclass

from .world import Scene, WorldState, check_type

GOAL_TYPES = ("TB1", "FB1", "TB2", "FB2")
"""Goal type labels: true/false belief × first/second order."""


@dataclass(frozen=True)
class BeliefGoal:
    """One belief-state goal.

    Attributes:
        believers: ``(a,)`` for order 1, ``(a, b)`` for order 2 (``a`` believes ``b`` believes …).
        object: the object the belief is about.
        location: the believed location ``L`` (a container or a room).
        true_belief: True for a TB goal, False for an FB goal (a real bool).

    Raises:
        ValueError: on a bad believer list, a non-string name, or a non-bool ``true_belief``.
    """

    believers: tuple[str, ...]
    object: str
    location: str
    true_belief: bool

    def __post_init__(self) -> None:
        if isinstance(self.believers, str) or not isinstance(self.believers, (tuple, list)):
            raise ValueError(f"BeliefGoal.believers must be a list of 1 or 2 names, got {self.believers!r}")
        object.__setattr__(self, "believers", tuple(self.believers))
        if not isinstance(self.true_belief, bool):  # "false" (a string) would silently read as TB
            raise ValueError(f"BeliefGoal.true_belief must be true or false, got {self.true_belief!r}")
        for what, name in [("believer", b) for b in self.believers] + [("object", self.object),
                                                                        ("location", self.location)]:
            if not isinstance(name, str):
                raise ValueError(f"BeliefGoal {what} must be a name (str), got {name!r}")
        if len(self.believers) not in (1, 2):
            raise ValueError(f"BeliefGoal.believers must name 1 or 2 characters, got {self.believers!r}")
        if len(self.believers) == 2 and self.believers[0] == self.believers[1]:
            raise ValueError(f"second-order goal about oneself {self.believers!r}; the two believers must differ")

    @property
    def order(self) -> int:
        """1 or 2."""
        return len(self.believers)

    @property
    def goal_type(self) -> str:
        """``TB1``, ``FB1``, ``TB2`` or ``FB2``."""
        return f"{'TB' if self.true_belief else 'FB'}{self.order}"

    def validate(self, scene: Scene) -> None:
        """Raise ``ValueError`` naming any entity the scene lacks."""
        for c in self.believers:
            if c not in scene.index["characters"]:
                raise ValueError(f"goal names unknown character {c!r}; characters are {scene.characters}")
        if self.object not in scene.index["objects"]:
            raise ValueError(f"goal names unknown object {self.object!r}; objects are {scene.objects}")
        if self.location not in scene.room_of:
            raise ValueError(f"goal names unknown location {self.location!r}; locations are {scene.locations}")

    def text(self) -> str:
        """The goal in plain English, as shown to agents."""
        where = f"the {self.location}"
        if self.order == 1:
            a = self.believers[0]
            tail = (f"and the {self.object} really is there" if self.true_belief
                    else f"while the {self.object} is actually somewhere else")
            return f"{a} believes the {self.object} is in {where}, {tail}."
        a, b = self.believers
        tail = (f"and {b} really does believe that" if self.true_belief
                else f"while {b} actually does not believe that")
        return f"{a} believes that {b} believes the {self.object} is in {where}, {tail}."

    def to_dict(self) -> dict:
        """JSON-ready dict (inverse: ``BeliefGoal(**d)``)."""
        return {"believers": list(self.believers), "object": self.object, "location": self.location,
                "true_belief": self.true_belief}


def goal_holds(scene: Scene, state: WorldState, goal: BeliefGoal) -> bool:
    """Whether ``goal`` holds in ``state`` (module docstring equations).

    Raises:
        TypeError: arguments of the wrong type. ValueError: a goal naming a character, object or
            location the scene lacks.
    """
    check_goals(scene, state, (goal,))
    return _goal_holds(scene, state, goal)


def check_goals(scene: Scene, state: WorldState, goals) -> tuple[BeliefGoal, ...]:
    """Validate ``scene``, ``state`` and a tuple/list of goals against the scene; returns the goals.

    Raises:
        TypeError: wrong types (a single goal where a tuple is expected says so).
        ValueError: a goal naming an unknown character, object or location.
    """
    check_type(scene, Scene, "scene")
    check_type(state, WorldState, "state")
    if isinstance(goals, BeliefGoal):
        raise TypeError("goals must be a tuple of BeliefGoal; got one BeliefGoal (wrap it: (goal,))")
    if not isinstance(goals, (tuple, list)):
        raise TypeError(f"goals must be a tuple of BeliefGoal, got {type(goals).__name__} {goals!r:.60}")
    for g in goals:
        check_type(g, BeliefGoal, "each goal")
        g.validate(scene)
    return tuple(goals)


def _goal_holds(scene: Scene, state: WorldState, goal: BeliefGoal) -> bool:
    ci = scene.index["characters"]
    o = scene.index["objects"][goal.object]
    a = ci[goal.believers[0]]
    if goal.order == 1:
        believed, fact = state.first_order[a][o], state.object_location[o]
    else:
        b = ci[goal.believers[1]]
        believed, fact = state.second_order[a][b][o], state.first_order[b][o]
    return believed == goal.location and (fact == goal.location) == goal.true_belief


def goals_hold(scene: Scene, state: WorldState, goals: tuple[BeliefGoal, ...]) -> bool:
    """Whether every goal holds (an instance's success criterion).

    Raises:
        TypeError / ValueError: as :func:`check_goals`.
    """
    check_goals(scene, state, goals)
    return _goals_hold(scene, state, goals)


def _goals_hold(scene: Scene, state: WorldState, goals: tuple[BeliefGoal, ...]) -> bool:
    """:func:`goals_hold` without validation (the planner's inner loop)."""
    return all(_goal_holds(scene, state, g) for g in goals)


def contradictory(goals: tuple[BeliefGoal, ...]) -> bool:
    """True if two goals give the same believer chain two beliefs about the same object, or two
    goals about one believed fact disagree on its truth (rejected at generation)."""
    seen: dict[tuple, tuple[str, bool]] = {}
    for g in goals:
        key = (g.believers, g.object)
        if key in seen and seen[key] != (g.location, g.true_belief):
            return True
        seen[key] = (g.location, g.true_belief)
    return False
