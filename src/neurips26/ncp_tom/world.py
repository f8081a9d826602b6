"""The symbolic world and belief tracker (ExploreToM tradition, disembodied agent).

A *scene* has rooms, containers (each fixed in one room), objects and characters. An object is
either inside a container (hidden) or loose in a room (visible). Every character holds a
first-order belief about each object's location and a second-order belief about every other
character's first-order belief. Beliefs change only through *witnessing*:

* ``MOVE o TO d`` (the unseen agent moves object ``o`` to container or room ``d``). Let
  :math:`W_s` be the characters in the room the object leaves and :math:`W_d` those in the room
  it arrives in. If both rooms are the same, every :math:`w \\in W_s` sets
  :math:`B_w(o) \\leftarrow d` and, for every co-witness pair, :math:`B_a(B_b(o)) \\leftarrow d`.
  Across rooms, :math:`W_d` learns ``d`` (and co-witnesses in ``d``'s room model each other as
  knowing it) while :math:`W_s` only sees the object carried out: their belief becomes
  ``UNKNOWN`` (modelled mutually as well).
* ``SEND c TO r``: character ``c`` walks to room ``r`` and looks around. For every object loose in
  ``r``, :math:`B_c(o) \\leftarrow r`; an object ``c`` believed loose in ``r`` that is not there
  becomes ``UNKNOWN`` (a formerly seen object that is now hidden); hidden objects keep their old
  belief (object permanence: containers are closed). The characters already in ``r`` see ``c``
  arrive and apply the same rule to their model of ``c``; ``c`` applies it to its model of them.

Preconditions are checked before any update; a failed precondition leaves the world unchanged
and returns ``ok=False`` with an observation saying why. At the start every character has seen
where everything is (common knowledge), so first- and second-order beliefs equal the truth.

Source: ExploreToM's ``belief_tracker.py`` (visibility, witnesses, re-entry, permanence) (read in
the public ExploreToM repository); the disembodied mover and the cross-room ``UNKNOWN`` rule are
**inferred** (NCP-ExploreToM gives the agent "move objects, send characters" actions).
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field
from functools import cached_property

UNKNOWN = "?"
"""Belief value of a character who knows an object left but not where it went."""

_NAME = re.compile(r"^[A-Za-z][A-Za-z_-]*$")


def check_count(value, name: str, minimum: int) -> int:
    """``value`` as an int if it is an integer (not a bool) >= ``minimum``.

    Raises:
        ValueError: naming ``name``, the value and what is allowed (a string, float or negative
            number would otherwise fail deep inside with a TypeError or act as an empty range).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_type(value, cls: type, name: str, hint: str = "") -> None:
    """Raise TypeError naming ``name``, the type received and the type expected (plus ``hint``)."""
    if not isinstance(value, cls):
        article = "an" if cls.__name__[0] in "AEIOU" else "a"
        raise TypeError(f"{name} must be {article} {cls.__name__}, got {type(value).__name__} {value!r:.60}{hint}")
MAX_CHARACTERS = 4
"""Second-order state grows with characters²; scenes are capped at four characters."""


@dataclass(frozen=True)
class Scene:
    """The static part of a world: entity names and where containers stand.

    Attributes:
        rooms: room names (>= 1).
        containers: container names (>= 1).
        container_room: for each container, the name of its room (same length as ``containers``).
        objects: movable object names (>= 1).
        characters: character names (1 to :data:`MAX_CHARACTERS`).
        context: a theme label (``household``, ``office`` …) used to report robustness.

    All names are single words (letters, ``_``, ``-``) and unique case-insensitively across every
    kind, so that ``MOVE apple TO kitchen`` is never ambiguous.

    Raises:
        ValueError: on an empty kind, a bad or duplicate name, an unknown container room, or more
            than :data:`MAX_CHARACTERS` characters.
    """

    rooms: tuple[str, ...]
    containers: tuple[str, ...]
    container_room: tuple[str, ...]
    objects: tuple[str, ...]
    characters: tuple[str, ...]
    context: str = "generic"

    def __post_init__(self) -> None:
        for kind in ("rooms", "containers", "container_room", "objects", "characters"):
            value = getattr(self, kind)
            if isinstance(value, str) or not isinstance(value, (tuple, list)):
                raise ValueError(f"Scene.{kind} must be a tuple of names, got {value!r}")
            object.__setattr__(self, kind, tuple(value))
            if not value:
                raise ValueError(f"Scene.{kind} is empty; at least one is required")
        if len(self.container_room) != len(self.containers):
            raise ValueError(f"Scene.container_room has {len(self.container_room)} entries for "
                             f"{len(self.containers)} containers; give one room per container")
        if len(self.characters) > MAX_CHARACTERS:
            raise ValueError(f"Scene has {len(self.characters)} characters; at most {MAX_CHARACTERS} "
                             "are allowed (second-order state grows with characters²)")
        seen: dict[str, str] = {}
        for kind in ("rooms", "containers", "objects", "characters"):
            for name in getattr(self, kind):
                if not isinstance(name, str) or not _NAME.match(name):
                    raise ValueError(f"Scene.{kind}: bad name {name!r}; use one word of letters, '_' or '-'")
                if name.lower() in seen:
                    raise ValueError(f"ambiguous name {name!r}: used as {seen[name.lower()]} and as {kind}")
                seen[name.lower()] = kind
        for c, r in zip(self.containers, self.container_room):
            if r not in self.rooms:
                raise ValueError(f"container {c!r} stands in unknown room {r!r}; rooms are {self.rooms}")

    @cached_property
    def locations(self) -> tuple[str, ...]:
        """Every place an object can be: containers, then rooms (loose in the room)."""
        return self.containers + self.rooms

    @cached_property
    def room_of(self) -> dict[str, str]:
        """Location name → the room it is in (a room maps to itself)."""
        return {**dict(zip(self.containers, self.container_room)), **{r: r for r in self.rooms}}

    @cached_property
    def index(self) -> dict[str, dict[str, int]]:
        """Per kind (``objects``, ``characters``), name → position in the state tuples."""
        return {"objects": {o: i for i, o in enumerate(self.objects)},
                "characters": {c: i for i, c in enumerate(self.characters)}}

    @cached_property
    def canonical(self) -> dict[str, str]:
        """Lower-cased name → name as written, for case-insensitive parsing."""
        names = self.rooms + self.containers + self.objects + self.characters
        return {n.lower(): n for n in names}

    def to_dict(self) -> dict:
        """JSON-ready dict (inverse: ``Scene(**d)``)."""
        return {"rooms": list(self.rooms), "containers": list(self.containers),
                "container_room": list(self.container_room), "objects": list(self.objects),
                "characters": list(self.characters), "context": self.context}


@dataclass(frozen=True)
class WorldState:
    """The true world plus every character's beliefs; immutable and hashable (search states).

    Attributes:
        object_location: per object (scene order), its container or room.
        character_room: per character, its room.
        first_order: ``first_order[a][o]`` — where character ``a`` believes object ``o`` is
            (a location or :data:`UNKNOWN`).
        second_order: ``second_order[a][b][o]`` — where ``a`` believes ``b`` believes ``o`` is.
            The diagonal ``second_order[a][a]`` mirrors ``first_order[a]``.
        scene: the :class:`Scene` whose names index the tuples (set by :func:`initial_state` and
            :func:`apply_action`; not part of equality or the hash). Needed by :meth:`belief`.

    Read a belief by name with :meth:`belief`: ``state.belief("Anne", "apple")`` or
    ``state.belief("Anne", "Bob", "apple")`` (where Anne believes Bob believes the apple is).
    """

    object_location: tuple[str, ...]
    character_room: tuple[str, ...]
    first_order: tuple[tuple[str, ...], ...]
    second_order: tuple[tuple[tuple[str, ...], ...], ...]
    _hash: int = field(default=0, compare=False, repr=False)
    scene: "Scene | None" = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.object_location, self.character_room,
                                                 self.first_order, self.second_order)))

    def __hash__(self) -> int:
        return self._hash

    def belief(self, who: str, *about_and_object: str) -> str:
        """Where ``who`` believes an object is (order 1), or believes ``about`` believes it is (order 2).

        ``state.belief(who, obj)`` or ``state.belief(who, about, obj)``; returns a location name or
        :data:`UNKNOWN`.

        Raises:
            ValueError: the state carries no scene (e.g. built by :func:`state_from_dict` without
                one), an unknown character or object (the message lists the allowed names), or a
                wrong number of names.
        """
        if self.scene is None:
            raise ValueError("this state carries no scene; build it with initial_state/apply_action or "
                             "state_from_dict(d, scene)")
        if len(about_and_object) not in (1, 2):
            raise ValueError(f"belief() takes (who, object) or (who, about, object); got {len(about_and_object) + 1} "
                             "names")
        chars, objs = self.scene.characters, self.scene.objects
        for name in (who, *about_and_object[:-1]):
            if name not in chars:
                raise ValueError(f"unknown character {name!r}; characters are {list(chars)}")
        obj = about_and_object[-1]
        if obj not in objs:
            raise ValueError(f"unknown object {obj!r}; objects are {list(objs)}")
        a, o = chars.index(who), objs.index(obj)
        if len(about_and_object) == 1:
            return self.first_order[a][o]
        return self.second_order[a][chars.index(about_and_object[0])][o]

    def to_dict(self) -> dict:
        """JSON-ready dict (inverse: :func:`state_from_dict`)."""
        return {"object_location": list(self.object_location), "character_room": list(self.character_room),
                "first_order": [list(r) for r in self.first_order],
                "second_order": [[list(r) for r in m] for m in self.second_order]}


def state_from_dict(d: dict, scene: "Scene | None" = None) -> WorldState:
    """Inverse of :meth:`WorldState.to_dict`; pass ``scene`` to read beliefs by name."""
    return WorldState(tuple(d["object_location"]), tuple(d["character_room"]),
                      tuple(tuple(r) for r in d["first_order"]),
                      tuple(tuple(tuple(r) for r in m) for m in d["second_order"]), scene=scene)


@dataclass(frozen=True)
class Action:
    """One agent action. ``kind`` is ``"move"`` (``subject`` = object, ``target`` = container or
    room) or ``"send"`` (``subject`` = character, ``target`` = room)."""

    kind: str
    subject: str
    target: str

    def __str__(self) -> str:
        return f"{'MOVE' if self.kind == 'move' else 'SEND'} {self.subject} TO {self.target}"


@dataclass(frozen=True)
class StepResult:
    """What :func:`apply_action` returns.

    Attributes:
        state: the new state (the same object when ``ok`` is False: world unchanged).
        ok: whether the preconditions held.
        observation: narration of what happened (or why nothing did), for agentic prompts.
        error: ``""``, ``"unknown_entity"`` or ``"precondition"`` (why ``ok`` is False).
    """

    state: WorldState
    ok: bool
    observation: str
    error: str = ""


def initial_state(scene: Scene, object_location: dict[str, str] | tuple[str, ...],
                  character_room: dict[str, str] | tuple[str, ...]) -> WorldState:
    """A state where every character has seen where everything is (common knowledge).

    Args:
        object_location: object → container or room (a dict, or a tuple in scene order).
        character_room: character → room (a dict, or a tuple in scene order).

    Raises:
        ValueError: a missing/extra entity or an unknown location/room (the message names it).
    """
    objs = _as_tuple(object_location, scene.objects, "object_location")
    rooms = _as_tuple(character_room, scene.characters, "character_room")
    for o, loc in zip(scene.objects, objs):
        if loc not in scene.room_of:
            raise ValueError(f"object {o!r} at unknown location {loc!r}; locations are {scene.locations}")
    for c, r in zip(scene.characters, rooms):
        if r not in scene.rooms:
            raise ValueError(f"character {c!r} in unknown room {r!r}; rooms are {scene.rooms}")
    n = len(scene.characters)
    return WorldState(objs, rooms, tuple(objs for _ in range(n)),
                      tuple(tuple(objs for _ in range(n)) for _ in range(n)), scene=scene)


def _as_tuple(value: dict | tuple | list, names: tuple[str, ...], what: str) -> tuple[str, ...]:
    if isinstance(value, dict):
        missing = [n for n in names if n not in value]
        extra = [k for k in value if k not in names]
        if missing or extra:
            raise ValueError(f"{what}: missing {missing}, unknown {extra}; expected exactly {list(names)}")
        return tuple(value[n] for n in names)
    if len(value) != len(names):
        raise ValueError(f"{what}: {len(value)} entries for {len(names)} entities {list(names)}")
    return tuple(value)


def _set(row: tuple[str, ...], i: int, v: str) -> tuple[str, ...]:
    return row if row[i] == v else row[:i] + (v,) + row[i + 1:]


def _see_room(scene: Scene, beliefs: tuple[str, ...], room: str, locs: tuple[str, ...]) -> tuple[str, ...]:
    """Re-entry rule: loose objects in ``room`` are seen there; a belief "loose in ``room``" that
    is now false becomes UNKNOWN; hidden objects keep their belief (object permanence)."""
    out = beliefs
    for i, loc in enumerate(locs):
        if loc == room:
            out = _set(out, i, room)
        elif out[i] == room:
            out = _set(out, i, UNKNOWN)
    return out


def apply_action(scene: Scene, state: WorldState, action: Action) -> StepResult:
    """Apply one action: check preconditions, then update the world and the witnesses' beliefs.

    Source: module docstring (ExploreToM witness rules; disembodied mover inferred).

    Args:
        action: an :class:`Action`; unknown names or a no-op (object already there, character
            already in the room) fail their precondition.

    Returns:
        :class:`StepResult`; on failure ``state`` is returned unchanged and ``ok`` is False.

    Raises:
        TypeError: ``scene``, ``state`` or ``action`` of the wrong type (a text action says to
            parse it first with ``parse_line``).
    """
    check_type(scene, Scene, "scene")
    check_type(state, WorldState, "state")
    check_type(action, Action, "action", "; parse text with ncp_tom.parse_line(text, scene)")
    return _apply_action(scene, state, action)


def _apply_action(scene: Scene, state: WorldState, action: Action, narrate: bool = True) -> StepResult:
    """:func:`apply_action` without the type checks (the planner's inner loop; ``narrate=False``
    skips the narration text, which the search never reads: same states, empty text)."""
    if action.kind == "move":
        oi = scene.index["objects"].get(action.subject)
        if oi is None:
            return StepResult(state, False, f"Nothing happened: there is no object called {action.subject!r} "
                              f"(objects: {', '.join(scene.objects)}).", "unknown_entity")
        if action.target not in scene.room_of:
            return StepResult(state, False, f"Nothing happened: there is no container or room called "
                              f"{action.target!r} (places: {', '.join(scene.locations)}).", "unknown_entity")
        src = state.object_location[oi]
        if src == action.target:
            if not narrate:
                return StepResult(state, False, "", "precondition")
            return StepResult(state, False, f"Nothing happened: the {action.subject} is already in the "
                              f"{action.target}.", "precondition")
        return _move(scene, state, oi, src, action.target, narrate)
    if action.kind == "send":
        ci = scene.index["characters"].get(action.subject)
        if ci is None:
            return StepResult(state, False, f"Nothing happened: there is no character called "
                              f"{action.subject!r} (characters: {', '.join(scene.characters)}).", "unknown_entity")
        if action.target not in scene.rooms:
            return StepResult(state, False, f"Nothing happened: there is no room called {action.target!r} "
                              f"(rooms: {', '.join(scene.rooms)}).", "unknown_entity")
        if state.character_room[ci] == action.target:
            if not narrate:
                return StepResult(state, False, "", "precondition")
            return StepResult(state, False, f"Nothing happened: {action.subject} is already in the "
                              f"{action.target}.", "precondition")
        return _send(scene, state, ci, action.target, narrate)
    return StepResult(state, False, f"Nothing happened: unknown action kind {action.kind!r} (allowed: move, send).",
                      "unknown_entity")


def _move(scene: Scene, state: WorldState, oi: int, src: str, dst: str, narrate: bool = True) -> StepResult:
    room_of = scene.room_of
    src_room, dst_room = room_of[src], room_of[dst]
    rooms = state.character_room
    first = list(state.first_order)
    second = list(state.second_order)   # rows copied only where a witness's row changes
    groups = [([i for i, r in enumerate(rooms) if r == dst_room], dst)]
    if src_room != dst_room:
        groups.append(([i for i, r in enumerate(rooms) if r == src_room], UNKNOWN))
    for members, value in groups:  # B_w(o) <- value; B_a(B_b(o)) <- value for co-witnesses a, b
        for a in members:           # (the two groups are in different rooms: disjoint)
            first[a] = _set(first[a], oi, value)
            row = list(second[a])
            for b in members:
                row[b] = _set(row[b], oi, value)
            second[a] = tuple(row)
    new = WorldState(_set(state.object_location, oi, dst), rooms, tuple(first), tuple(second), scene=scene)
    if not narrate:
        return StepResult(new, True, "")
    obj = scene.objects[oi]
    seen_in = [scene.characters[i] for i in groups[0][0]]
    text = f"The {obj} was moved from the {src} to the {dst}."
    text += f" Seen by: {', '.join(seen_in)}." if seen_in else " Nobody in the " + dst_room + " saw it."
    if len(groups) > 1 and groups[1][0]:
        text += (f" {', '.join(scene.characters[i] for i in groups[1][0])} saw it carried out of the "
                 f"{src_room} but not where it went.")
    return StepResult(new, True, text)


def _send(scene: Scene, state: WorldState, ci: int, room: str, narrate: bool = True) -> StepResult:
    locs = state.object_location
    rooms = _set(state.character_room, ci, room)
    first = list(state.first_order)
    second = list(state.second_order)   # rows copied only where they change
    first[ci] = _see_room(scene, first[ci], room, locs)
    row_c = list(second[ci])
    row_c[ci] = first[ci]
    present = [i for i, r in enumerate(rooms) if r == room and i != ci]
    for b in present:
        row_c[b] = _see_room(scene, row_c[b], room, locs)  # c models what b sees
        row_b = list(second[b])
        row_b[ci] = _see_room(scene, row_b[ci], room, locs)  # b saw c arrive and look
        second[b] = tuple(row_b)
    second[ci] = tuple(row_c)
    new = WorldState(locs, rooms, tuple(first), tuple(second), scene=scene)
    if not narrate:
        return StepResult(new, True, "")
    name = scene.characters[ci]
    loose = [scene.objects[i] for i, loc in enumerate(locs) if loc == room]
    text = f"{name} went from the {state.character_room[ci]} to the {room}."
    if present:
        text += f" Already there: {', '.join(scene.characters[i] for i in present)}."
    if loose:
        text += f" Lying in the open there: {', '.join(loose)}."
    return StepResult(new, True, text)


def all_actions(scene: Scene, objects: tuple[str, ...] | None = None) -> list[Action]:
    """Every grammatical action in a fixed order: moves (object × location), then sends
    (character × room). Some fail their precondition in a given state (no-ops).

    Args:
        objects: restrict moves to these objects (the oracle searches only goal objects).

    Raises:
        TypeError: ``scene`` is not a :class:`Scene`. ValueError: ``objects`` names an object the
            scene lacks.
    """
    check_type(scene, Scene, "scene")
    objs = scene.objects if objects is None else tuple(objects)
    unknown = [o for o in objs if o not in scene.objects]
    if unknown:
        raise ValueError(f"unknown objects {unknown}; objects are {list(scene.objects)}")
    return ([Action("move", o, loc) for o in objs for loc in scene.locations]
            + [Action("send", c, r) for c in scene.characters for r in scene.rooms])


def replay(scene: Scene, state: WorldState, actions: list[Action]) -> tuple[WorldState, int]:
    """Apply ``actions`` in order; returns the final state and the number that failed.

    Raises:
        TypeError: wrong ``scene``/``state`` type, or ``actions`` not a list of :class:`Action`.
    """
    check_type(scene, Scene, "scene")
    check_type(state, WorldState, "state")
    if isinstance(actions, (str, Action)) or not all(isinstance(a, Action) for a in actions):
        raise TypeError(f"actions must be a list of Action, got {actions!r:.80}; parse text with parse_line")
    failed = 0
    for a in actions:
        step = _apply_action(scene, state, a)
        state = step.state
        failed += not step.ok
    return state, failed
