"""Task instances of the inverted ToM task and their seeded, balanced generator.

An :class:`Instance` is a scene, its initial world (common knowledge) and belief goals. The
generator draws scenes from themed *contexts* (household, office, …), balances instances
across goal types × contexts, and rejects instances that are unsolvable within the search depth,
already solved, contradictory, ambiguous (duplicate or clashing names) or duplicates of earlier
ones. Each instance's id is a hash of its content, so it is stable across runs, machines and
export/import; JSONL export/import round-trips exactly and re-checks every id.

Source: NCP-ExploreToM (600 instances; TB/FB goals; contexts) — sizes from the abstract; the themes, the
rejection rules and the scene sampler are **inferred**.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from .goals import GOAL_TYPES, BeliefGoal, contradictory, goals_hold
from .planner import shortest_plan
from .world import Action, Scene, WorldState, check_count, initial_state

CONTEXTS: dict[str, dict[str, tuple[str, ...]]] = {
    "household": {"rooms": ("kitchen", "hall", "bedroom", "garden"),
                  "containers": ("drawer", "cupboard", "basket", "box", "pantry", "wardrobe", "chest", "bucket"),
                  "objects": ("apple", "key", "scarf", "watch")},
    "office": {"rooms": ("lobby", "archive", "boardroom", "kitchenette"),
               "containers": ("cabinet", "desk", "locker", "tray", "safe", "shelf", "binder", "crate"),
               "objects": ("stapler", "badge", "folder", "charger")},
    "school": {"rooms": ("classroom", "library", "gym", "cafeteria"),
               "containers": ("backpack", "bin", "cubby", "satchel", "case", "closet", "trunk", "pouch"),
               "objects": ("eraser", "ruler", "notebook", "whistle")},
    "hospital": {"rooms": ("ward", "pharmacy", "reception", "lab"),
                 "containers": ("trolley", "fridge", "cart", "tub", "locker", "kit", "bag", "tin"),
                 "objects": ("syringe", "chart", "stethoscope", "thermometer")},
    "camping": {"rooms": ("tent", "cabin", "shed", "porch"),
                "containers": ("rucksack", "cooler", "sack", "barrel", "hamper", "bin", "pot", "crate"),
                "objects": ("torch", "compass", "map", "lighter")},
}
"""Themes: each gives room, container and object names (single words, distinct within a theme)."""

CHARACTER_NAMES = ("Anne", "Bob", "Carla", "David", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jamal")


@dataclass(frozen=True)
class Instance:
    """One task: a scene, its initial placement (common knowledge) and belief goals.

    Attributes:
        scene: the static world.
        object_location: initial object → location, in scene order.
        character_room: initial character → room, in scene order.
        goals: the belief goals (all must hold at the end).
        min_plan_length: the oracle's shortest plan length (``None`` if not searched).
        oracle_plan: one shortest plan as action strings (``()`` if not searched).
        id: content hash (computed; a given id must match, see :meth:`from_dict`).

    Raises:
        ValueError: on no goals, a goal or placement naming an unknown entity, a ``min_plan_length``
            that is not an int >= 0, or an ``oracle_plan`` that does not parse or whose length
            differs from ``min_plan_length``.
    """

    scene: Scene
    object_location: tuple[str, ...]
    character_room: tuple[str, ...]
    goals: tuple[BeliefGoal, ...]
    min_plan_length: int | None = None
    oracle_plan: tuple[str, ...] = ()
    id: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "object_location", tuple(self.object_location))
        object.__setattr__(self, "character_room", tuple(self.character_room))
        object.__setattr__(self, "goals", tuple(self.goals))
        object.__setattr__(self, "oracle_plan", tuple(self.oracle_plan))
        if not self.goals:
            raise ValueError("Instance.goals is empty; give at least one BeliefGoal")
        mpl = self.min_plan_length
        if mpl is not None and (isinstance(mpl, bool) or not isinstance(mpl, int) or mpl < 0):
            raise ValueError(f"Instance.min_plan_length must be an int >= 0 or None, got {mpl!r}")
        for a in self.oracle_plan:
            if not isinstance(a, str):
                raise ValueError(f"Instance.oracle_plan entries must be action strings, got {a!r}")
            parse_action_string(a)
        if self.oracle_plan and len(self.oracle_plan) != mpl:
            raise ValueError(f"Instance.oracle_plan has {len(self.oracle_plan)} actions but min_plan_length "
                             f"is {mpl!r}; they must agree")
        for g in self.goals:
            g.validate(self.scene)
        initial_state(self.scene, self.object_location, self.character_room)  # validates names
        object.__setattr__(self, "id", content_id(self))

    @cached_property
    def initial(self) -> WorldState:
        """The initial :class:`WorldState` (everyone knows where everything is)."""
        return initial_state(self.scene, self.object_location, self.character_room)

    @property
    def context(self) -> str:
        """The scene's theme."""
        return self.scene.context

    @property
    def goal_type(self) -> str:
        """The goal type of a single-goal instance (``TB1`` …); ``mixed`` if goals differ."""
        types = {g.goal_type for g in self.goals}
        return types.pop() if len(types) == 1 else "mixed"

    @property
    def true_belief(self) -> bool:
        """True iff every goal is a true-belief goal."""
        return all(g.true_belief for g in self.goals)

    def to_dict(self) -> dict:
        """JSON-ready dict (inverse: :meth:`from_dict`)."""
        return {"id": self.id, "scene": self.scene.to_dict(), "object_location": list(self.object_location),
                "character_room": list(self.character_room), "goals": [g.to_dict() for g in self.goals],
                "min_plan_length": self.min_plan_length, "oracle_plan": list(self.oracle_plan)}

    @classmethod
    def from_dict(cls, d: dict) -> "Instance":
        """Rebuild and validate an instance.

        Raises:
            ValueError: on a missing field, an invalid scene/goal, or an ``id`` that does not match
                the content (the record was edited).
        """
        try:
            inst = cls(Scene(**d["scene"]), d["object_location"], d["character_room"],
                       tuple(BeliefGoal(**g) for g in d["goals"]), d.get("min_plan_length"),
                       tuple(d.get("oracle_plan", ())))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"bad instance record: {exc!r}; expected keys id, scene, object_location, "
                             "character_room, goals[, min_plan_length, oracle_plan]") from None
        if "id" in d and d["id"] != inst.id:
            raise ValueError(f"instance id {d['id']!r} does not match its content (expected {inst.id!r})")
        return inst


def content_id(inst: Instance) -> str:
    """``ncp-`` + 10 hex digits of SHA-256 over the canonical JSON of scene, placement and goals."""
    blob = json.dumps({"scene": inst.scene.to_dict(), "o": list(inst.object_location),
                       "c": list(inst.character_room), "g": [g.to_dict() for g in inst.goals]},
                      sort_keys=True, separators=(",", ":"))
    return "ncp-" + hashlib.sha256(blob.encode()).hexdigest()[:10]


def parse_action_string(text: str) -> Action:
    """``"MOVE apple TO box"`` / ``"SEND Anne TO hall"`` → :class:`Action` (for stored plans).

    Raises:
        ValueError: if ``text`` is not of that form.
    """
    parts = text.split()
    if len(parts) != 4 or parts[0] not in ("MOVE", "SEND") or parts[2] != "TO":
        raise ValueError(f"bad action string {text!r}; expected 'MOVE <object> TO <place>' or "
                         "'SEND <character> TO <room>'")
    return Action("move" if parts[0] == "MOVE" else "send", parts[1], parts[3])


def sample_scene(rng: np.random.Generator, context: str, *, n_rooms: tuple[int, int] = (2, 3),
                 containers_per_room: tuple[int, int] = (1, 2), n_objects: tuple[int, int] = (1, 2),
                 n_characters: tuple[int, int] = (2, 3)) -> Scene:
    """Draw a scene of theme ``context``; each size is drawn uniformly from an inclusive range.

    Raises:
        ValueError: unknown context, or a range that is empty or exceeds the theme's name lists.
    """
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}; allowed: {', '.join(CONTEXTS)}")
    names = CONTEXTS[context]

    def draw(rng_: tuple[int, int], cap: int, what: str) -> int:
        lo, hi = rng_
        if not 1 <= lo <= hi <= cap:
            raise ValueError(f"{what} range {rng_} must satisfy 1 <= low <= high <= {cap}")
        return int(rng.integers(lo, hi + 1))

    k_rooms = draw(n_rooms, len(names["rooms"]), "n_rooms")
    rooms = tuple(rng.choice(names["rooms"], k_rooms, replace=False))
    per_room = [draw(containers_per_room, len(names["containers"]) // k_rooms, "containers_per_room")
                for _ in rooms]
    containers = tuple(rng.choice(names["containers"], sum(per_room), replace=False))
    container_room = tuple(str(r) for r, k in zip(rooms, per_room) for _ in range(k))
    objects = tuple(rng.choice(names["objects"], draw(n_objects, len(names["objects"]), "n_objects"),
                               replace=False))
    chars = tuple(rng.choice(CHARACTER_NAMES, draw(n_characters, 4, "n_characters"), replace=False))
    return Scene(tuple(map(str, rooms)), tuple(map(str, containers)), container_room,
                 tuple(map(str, objects)), tuple(map(str, chars)), context)


def sample_instance(rng: np.random.Generator, context: str, goal_type: str, *, max_depth: int = 6,
                    p_loose: float = 0.2, n_goals: int = 1, **scene_sizes) -> Instance | None:
    """Draw one candidate instance; ``None`` if it is rejected.

    Rejected: goals already true at the start, contradictory goals, or no plan within
    ``max_depth`` (unsolvable here). Objects start loose in a room with probability ``p_loose``,
    else in a random container; characters start in random rooms. With ``n_goals > 1`` the extra
    goals have random types (the instance is then ``mixed`` unless they agree).

    Raises:
        ValueError: unknown ``goal_type`` or ``n_goals < 1``.
    """
    if goal_type not in GOAL_TYPES:
        raise ValueError(f"unknown goal_type {goal_type!r}; allowed: {', '.join(GOAL_TYPES)}")
    if n_goals < 1:
        raise ValueError(f"n_goals must be >= 1, got {n_goals}")
    scene = sample_scene(rng, context, **scene_sizes)
    locs = tuple(str(rng.choice(scene.rooms)) if rng.random() < p_loose else str(rng.choice(scene.containers))
                 for _ in scene.objects)
    rooms = tuple(str(rng.choice(scene.rooms)) for _ in scene.characters)
    types = [goal_type] + [str(rng.choice(GOAL_TYPES)) for _ in range(n_goals - 1)]
    goals = []
    for t in types:
        order = int(t[2])
        believers = tuple(map(str, rng.choice(scene.characters, order, replace=False)))
        goals.append(BeliefGoal(believers, str(rng.choice(scene.objects)), str(rng.choice(scene.locations)),
                                t.startswith("TB")))
    goals_t = tuple(goals)
    if contradictory(goals_t):
        return None
    draft = Instance(scene, locs, rooms, goals_t)
    if goals_hold(scene, draft.initial, goals_t):
        return None
    res = shortest_plan(scene, draft.initial, goals_t, max_depth=max_depth)
    if res.plan is None:
        return None
    return Instance(scene, locs, rooms, goals_t, len(res.plan), tuple(str(a) for a in res.plan))


def cell_order(types: tuple[str, ...], contexts: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every (goal type, context) cell once, ordered so that every prefix is balanced.

    Item ``j`` is ``(types[j mod T], contexts[(j + floor(j / L)) mod C])`` with ``L = lcm(T, C)``:
    goal types cycle fastest and contexts cycle too, shifted by one after each block of ``L``, which
    reaches all ``T·C`` cells (within block ``q`` the pairs have ``c − t ≡ q (mod gcd(T, C))``).
    Any prefix then has goal-type counts, context counts and cell counts within one of each other.
    """
    n_t, n_c = len(types), len(contexts)
    block = n_t * n_c // math.gcd(n_t, n_c)
    return [(types[j % n_t], contexts[(j + j // block) % n_c]) for j in range(n_t * n_c)]


def generate_instances(n: int = 600, *, seed: int = 0, contexts: Iterable[str] | None = None,
                       goal_types: Iterable[str] = GOAL_TYPES, max_depth: int = 6, max_tries: int = 500,
                       **kwargs) -> tuple[list[Instance], dict[str, int]]:
    """A seeded instance set balanced across goal types × contexts.

    Cells (goal type, context) are filled round-robin in :func:`cell_order`, so for *every* ``n``
    the goal-type counts, the context counts and the cell sizes each differ by at most one.
    Duplicate instances (same id) are rejected.

    Args:
        n: number of instances (>= 1).
        seed: generator seed; the same seed and arguments give the same instances and ids.
        contexts: themes to use (default: all of :data:`CONTEXTS`).
        goal_types: subset of :data:`GOAL_TYPES`.
        max_depth: the oracle's search depth; deeper instances are rejected as unsolvable here.
        max_tries: candidate draws allowed per instance before giving up.
        **kwargs: passed to :func:`sample_instance` (``p_loose``, ``n_goals``, scene sizes).

    Returns:
        (instances, rejection counts by reason: ``unsolvable_or_trivial``, ``duplicate``).

    Raises:
        ValueError: ``n``/``max_depth``/``max_tries`` not integers (>= 1, >= 0, >= 1), unknown
            context or goal type.
        RuntimeError: if a cell cannot be filled in ``max_tries`` draws.
    """
    n = check_count(n, "n", 1)
    max_depth = check_count(max_depth, "max_depth", 0)
    max_tries = check_count(max_tries, "max_tries", 1)
    ctxs = tuple(contexts) if contexts is not None else tuple(CONTEXTS)
    types = tuple(goal_types)
    for c in ctxs:
        if c not in CONTEXTS:
            raise ValueError(f"unknown context {c!r}; allowed: {', '.join(CONTEXTS)}")
    for t in types:
        if t not in GOAL_TYPES:
            raise ValueError(f"unknown goal type {t!r}; allowed: {', '.join(GOAL_TYPES)}")
    if not ctxs or not types:
        raise ValueError("contexts and goal_types must be non-empty")
    rng = np.random.default_rng(seed)
    cells = cell_order(types, ctxs)
    out: list[Instance] = []
    ids: set[str] = set()
    rejected = {"unsolvable_or_trivial": 0, "duplicate": 0}
    for k in range(n):
        t, c = cells[k % len(cells)]
        for _ in range(max_tries):
            inst = sample_instance(rng, c, t, max_depth=max_depth, **kwargs)
            if inst is None:
                rejected["unsolvable_or_trivial"] += 1
            elif inst.id in ids:
                rejected["duplicate"] += 1
            else:
                out.append(inst)
                ids.add(inst.id)
                break
        else:
            raise RuntimeError(f"could not fill cell ({t}, {c}) in {max_tries} draws; raise max_depth or max_tries")
    return out, rejected


def save_jsonl(instances: Iterable[Instance], path: str | Path) -> Path:
    """Write one JSON object per line (sorted keys). Returns the path."""
    path = Path(path)
    path.write_text("".join(json.dumps(i.to_dict(), sort_keys=True) + "\n" for i in instances))
    return path


def load_jsonl(path: str | Path) -> list[Instance]:
    """Read instances written by :func:`save_jsonl`, validating each record and its id.

    Raises:
        ValueError: naming the line number of a bad record or a duplicate id.
    """
    out, ids = [], set()
    for k, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            inst = Instance.from_dict(json.loads(line))
        except (ValueError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}:{k}: {exc}") from None
        if inst.id in ids:
            raise ValueError(f"{path}:{k}: duplicate instance id {inst.id}")
        ids.add(inst.id)
        out.append(inst)
    return out
