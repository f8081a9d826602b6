"""The LLM agent: prompts, strict action parsing, and the one-shot and agentic episode loops.

Two settings (inferred from the abstract's "agentic setting"; the paper's prompts are not public):

* ``one_shot`` — one reply holding the whole plan, one action per line (optionally ending in
  ``DONE``); the plan is replayed through the tracker.
* ``agentic`` — one action per turn; after each, the agent gets the narrated observation (who
  saw what, what happened or why nothing did) and the number of actions left; ``DONE`` stops.

Parsing is strict (:func:`parse_line`): ``MOVE <object> TO <place>``, ``SEND <character> TO
<room>`` or ``DONE`` — keywords in capitals, one word per name (names are matched
case-insensitively), nothing else on the line. A malformed reply gets **one** re-ask quoting the
error; if the second reply is malformed too, it counts as one invalid action (one-shot: each
malformed line counts as one) and the world is unchanged. Unknown entities and failed
preconditions are executed by the tracker, which leaves the world unchanged and says why; both
are counted. A :class:`~neurips26.backends.BackendError` (retries exhausted, timeouts, or a
backend whose ``chat`` returns something other than a ``ChatReply`` with text) ends the
episode with status ``error``, which is left out of success rates and counted separately.

Step cap: ``min_plan_length + extra_steps``. A one-shot plan longer than the cap fails; an
agentic episode stops at the cap and the state is scored as it is (as after an early ``DONE``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from neurips26.backends import BackendError, ChatBackend, ChatParams, ChatReply, Message, ScriptedBackend

from .baselines import EpisodeResult, new_episode, score_plan
from .goals import goals_hold
from .tasks import Instance
from .world import Action, Scene, WorldState, all_actions, apply_action, check_count, check_type

SETTINGS = ("one_shot", "agentic")
DONE = "DONE"

SYSTEM_PROMPT = """\
You act, unseen, in a small world of rooms, containers, objects and characters. Your job is to \
make characters hold particular beliefs by acting, not by talking to them.

Rules of the world:
- MOVE <object> TO <place>: you move the object into a container, or leave it lying in the open \
in a room (when <place> is a room). Characters in the room the object arrives in see exactly where \
it goes. If it comes from a different room, characters in that room only see it being carried out \
and no longer know where it is.
- SEND <character> TO <room>: the character walks to that room and looks around. They see every \
object lying in the open there, and notice if an object they expected to lie in the open there is \
gone. They cannot see inside containers, so they keep believing what they last saw. Characters \
already in the room see them arrive and know what they can see.
- Characters remember what they saw and know who else saw it. At the start everyone knows where \
everything is.
- An action that is impossible (unknown name, object already there, character already in that \
room) does nothing but still uses up one of your actions.

Reply only with actions in exactly this grammar, one per line, no other text:
MOVE <object> TO <container or room>
SEND <character> TO <room>
DONE"""

_LINE = re.compile(r"^(?:(MOVE|SEND) +([A-Za-z][A-Za-z_-]*) +TO +([A-Za-z][A-Za-z_-]*)|(DONE))$")
#: Common deviations a tolerant parse removes before the strict grammar: list markers ("- ", "1.",
#: "*"), quotes, backticks, bold, an "Action:" label, trailing punctuation, "the" before a name.
_LEAD = re.compile(r"^\s*(?:[-*•>]+|\d+[.)]|action\s*\d*\s*:|step\s*\d+\s*:|answer\s*:)?\s*", re.IGNORECASE)


def _tolerant(line: str) -> str:
    """``line`` with the common deviations removed and keywords upper-cased (``move the key to
    the box.`` -> ``MOVE key TO box``)."""
    t = _LEAD.sub("", line.strip().strip("`*\"'")).strip().strip("`*\"'").rstrip(".!;,").strip()
    t = re.sub(r"\b(move|send|to|done)\b", lambda m: m.group(1).upper(), t, flags=re.IGNORECASE)
    t = re.sub(r"\b(?:the|a|an)\s+", "", t, flags=re.IGNORECASE)
    return " ".join(t.split())


class ParseError(ValueError):
    """A reply (or line) that does not follow the action grammar; the message says why."""


def describe_scene(instance: Instance) -> str:
    """The initial world in plain English (what the agent is told)."""
    sc = instance.scene
    lines = [f"Setting: {sc.context}. Rooms: {', '.join(sc.rooms)}."]
    for room in sc.rooms:
        boxes = [c for c, r in zip(sc.containers, sc.container_room) if r == room]
        lines.append(f"In the {room}: " + (f"containers {', '.join(boxes)}." if boxes else "no containers."))
    for o, loc in zip(sc.objects, instance.object_location):
        where = f"lying in the open in the {loc}" if loc in sc.rooms else \
            f"in the {loc} (in the {sc.room_of[loc]})"
        lines.append(f"The {o} is {where}.")
    for c, r in zip(sc.characters, instance.character_room):
        lines.append(f"{c} is in the {r}.")
    lines.append("Everyone knows where everything is.")
    return "\n".join(lines)


def task_prompt(instance: Instance, setting: str, cap: int) -> str:
    """The first user message: scene, goals, the step cap and what to reply."""
    goals = "\n".join(f"- {g.text()}" for g in instance.goals)
    how = ("Reply with your whole plan now: one action per line, then DONE." if setting == "one_shot"
           else "Reply with your first action only (one line). You will see what happens after each action. "
                "Reply DONE when the goal is reached.")
    return (f"{describe_scene(instance)}\n\nGoal (must all hold after your last action):\n{goals}\n\n"
            f"You may use at most {cap} actions. {how}")


def parse_line(line: str, scene: Scene, *, tolerant: bool = False) -> Action | str:
    """Parse one line of the grammar into an :class:`Action` or ``"DONE"``.

    ``tolerant=True`` first removes common deviations of small models (list markers, quotes,
    "Action:", trailing punctuation, lower-case keywords, "the" before names; :func:`_tolerant`).

    Names are mapped case-insensitively to the scene's spelling; a name the scene lacks is kept
    as written (the tracker then reports an unknown entity — parsing never guesses intent).

    Raises:
        ParseError: if the line is not exactly one action of the grammar.
        TypeError: ``line`` is not a str or ``scene`` not a :class:`Scene`.
    """
    check_type(line, str, "line")
    check_type(scene, Scene, "scene")
    m = _LINE.match(line.strip()) or (_LINE.match(_tolerant(line)) if tolerant else None)
    if not m:
        shown = line.strip()[:80]
        raise ParseError(f"{shown!r} is not 'MOVE <object> TO <place>', 'SEND <character> TO <room>' or 'DONE'")
    if m.group(4):
        return DONE
    kind = "move" if m.group(1) == "MOVE" else "send"
    canon = scene.canonical
    return Action(kind, canon.get(m.group(2).lower(), m.group(2)), canon.get(m.group(3).lower(), m.group(3)))


def parse_plan(text: str, scene: Scene, *, tolerant: bool = False) -> list[Action | str | ParseError]:
    """Parse a one-shot reply line by line (blank lines skipped); items after ``DONE`` are dropped.

    Returns:
        One entry per line: an :class:`Action`, ``"DONE"`` (last), or the :class:`ParseError`.

    Raises:
        ParseError: if the reply has no non-blank line or no line parses at all.
        TypeError: ``text`` is not a str or ``scene`` not a :class:`Scene`.
    """
    check_type(text, str, "text")
    check_type(scene, Scene, "scene")
    items: list[Action | str | ParseError] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = parse_line(line, scene, tolerant=tolerant)
        except ParseError as exc:
            if tolerant:  # tolerant: prose lines around the actions are skipped, not counted
                continue
            item = exc
        items.append(item)
        if item == DONE:
            break
    if not items:
        raise ParseError("the reply is empty; give one action per line")
    if all(isinstance(i, ParseError) for i in items):
        raise ParseError(f"no line follows the grammar (first: {items[0]})")
    return items


def _reask(error: ParseError) -> str:
    return (f"Your reply could not be parsed: {error}. Reply again using only the grammar "
            "(MOVE <object> TO <place> / SEND <character> TO <room> / DONE), no other text.")


def _call(backend: ChatBackend, msgs: list[Message], params: ChatParams, ep: EpisodeResult) -> ChatReply:
    reply = backend.chat(msgs, params)
    if not isinstance(reply, ChatReply) or not isinstance(reply.text, str):  # a broken custom backend
        raise BackendError(f"{getattr(backend, 'name', 'backend')}: chat() returned "
                           f"{type(getattr(reply, 'text', reply)).__name__}, expected a ChatReply with text")
    ep.calls += 1
    ep.cache_hits += reply.cached
    ep.prompt_tokens += reply.prompt_tokens
    ep.completion_tokens += reply.completion_tokens
    ep.latency_s += reply.latency_s
    return reply


def run_llm_episode(instance: Instance, backend: ChatBackend, setting: str, *, cap: int,
                    params: ChatParams = ChatParams(), agent: str | None = None,
                    tolerant: bool = False) -> EpisodeResult:
    """Run one episode of ``backend`` on ``instance`` and score it with the tracker.

    Args:
        setting: ``one_shot`` or ``agentic``.
        cap: the step cap (>= 1).
        params: sampling parameters (temperature 0 by default: deterministic replies).
        agent: the agent name recorded (default: ``backend.name``).
        tolerant: parse replies tolerantly (:func:`parse_line`; agentic: the first line that parses;
            one-shot: prose lines skipped) — for small models; malformed replies are still counted.

    Returns:
        An :class:`EpisodeResult`; ``status="error"`` (with the message) on a backend failure.

    Raises:
        ValueError: unknown ``setting`` or ``cap`` not an integer >= 1. TypeError: ``instance``
            is not an :class:`Instance`.
    """
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; allowed: {', '.join(SETTINGS)}")
    check_type(instance, Instance, "instance")
    cap = check_count(cap, "cap", 1)
    ep = new_episode(instance, agent or backend.name, setting)
    msgs = [Message("system", SYSTEM_PROMPT), Message("user", task_prompt(instance, setting, cap))]
    try:
        if setting == "one_shot":
            return _one_shot(instance, backend, msgs, params, ep, cap, tolerant)
        return _agentic(instance, backend, msgs, params, ep, cap, tolerant)
    except BackendError as exc:
        ep.status, ep.error = "error", str(exc)
        return ep


def _one_shot(instance: Instance, backend: ChatBackend, msgs: list[Message], params: ChatParams,
              ep: EpisodeResult, cap: int, tolerant: bool = False) -> EpisodeResult:
    reply = _call(backend, msgs, params, ep)
    try:
        items = parse_plan(reply.text, instance.scene, tolerant=tolerant)
    except ParseError as exc:
        ep.reasks += 1
        msgs = msgs + [Message("assistant", reply.text), Message("user", _reask(exc))]
        reply = _call(backend, msgs, params, ep)
        try:
            items = parse_plan(reply.text, instance.scene, tolerant=tolerant)
        except ParseError as exc2:
            items = [exc2]
    actions = [i for i in items if isinstance(i, Action)]
    bad = sum(isinstance(i, ParseError) for i in items)
    ep.malformed += bad
    ep.stopped_early = bool(items) and items[-1] == DONE
    ep.steps += bad  # malformed lines are invalid actions: a step each, world unchanged
    if len(actions) + bad > cap:  # exceeding the step cap fails the episode
        ep.over_cap, ep.status = True, "failure"
        ep.steps += len(actions)
        ep.actions = [str(a) for a in actions]
        return ep
    return score_plan(instance, actions, cap=max(1, cap - bad), episode=ep)


def _agentic(instance: Instance, backend: ChatBackend, msgs: list[Message], params: ChatParams,
             ep: EpisodeResult, cap: int, tolerant: bool = False) -> EpisodeResult:
    scene, state = instance.scene, instance.initial
    while ep.steps < cap:
        reply = _call(backend, msgs, params, ep)
        msgs = msgs + [Message("assistant", reply.text)]
        try:
            item = _parse_turn(reply.text, scene, tolerant)
        except ParseError as exc:
            ep.reasks += 1
            msgs = msgs + [Message("user", _reask(exc))]
            reply = _call(backend, msgs, params, ep)
            msgs = msgs + [Message("assistant", reply.text)]
            try:
                item = _parse_turn(reply.text, scene, tolerant)
            except ParseError:
                item = None
        if item == DONE:
            ep.stopped_early = True
            break
        ep.steps += 1
        if item is None:
            ep.malformed += 1
            observation = "Your reply was not a valid action, so nothing happened."
        else:
            step = apply_action(scene, state, item)
            state = step.state
            ep.actions.append(str(item))
            ep.failed_preconditions += step.error == "precondition"
            ep.unknown_entities += step.error == "unknown_entity"
            observation = step.observation
        left = cap - ep.steps
        msgs = msgs + [Message("user", f"{observation} You have {left} action{'s' * (left != 1)} left. "
                                        + ("Your next action (or DONE)?" if left else ""))]
    ep.status = "success" if goals_hold(scene, state, instance.goals) else "failure"
    return ep


def _parse_turn(text: str, scene: Scene, tolerant: bool = False) -> Action | str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if tolerant:  # the first line that parses (small models add prose or repeat the action)
        for ln in lines:
            try:
                return parse_line(ln, scene, tolerant=True)
            except ParseError:
                continue
    if len(lines) != 1:
        raise ParseError(f"expected exactly one line with one action, got {len(lines)} lines")
    return parse_line(lines[0], scene)


def scripted_agent(plan: Sequence[Action], setting: str, name: str = "scripted") -> ScriptedBackend:
    """A :class:`ScriptedBackend` that plays ``plan`` through the chat loop, then ``DONE``.

    In ``one_shot`` it answers the plan as lines; in ``agentic`` one action per call. Used to run
    the oracle / no-ToM / random baselines through exactly the pipeline an LLM goes through.

    Raises:
        ValueError: unknown ``setting``.
    """
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; allowed: {', '.join(SETTINGS)}")
    lines = [str(a) for a in plan] + [DONE]
    if setting == "one_shot":
        return ScriptedBackend(lambda _m: "\n".join(lines), name)
    queue = list(lines)
    return ScriptedBackend(lambda _m: queue.pop(0) if queue else DONE, name)


def final_state(instance: Instance, actions: Sequence[Action]) -> WorldState:
    """The state after replaying ``actions`` from the instance's initial state."""
    state = instance.initial
    for a in actions:
        state = apply_action(instance.scene, state, a).state
    return state


def run_choice_episode(instance: Instance, lm, setting: str, *, cap: int, agent: str | None = None) -> EpisodeResult:
    """One episode of a local model read through its log-probabilities (constrained decoding).

    Same prompts as :func:`run_llm_episode`; at each step the reply is the most probable of every
    action the grammar allows in this scene plus ``DONE`` (``lm.choose``,
    :class:`~neurips26.backends.local_lm.LocalLM`), so no reply is malformed. ``agentic``: one
    action per turn with the tracker's observation in between; ``one_shot``: the plan is chosen
    line by line inside one assistant reply, with no observation, until ``DONE`` or the cap.
    ``DONE`` is not offered as the first reply: no instance's goal holds at the start (the
    generator rejects such draws), and a small model's short ``DONE`` otherwise wins every time.

    Raises:
        ValueError: unknown ``setting`` or ``cap`` not an integer >= 1.
    """
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; allowed: {', '.join(SETTINGS)}")
    check_type(instance, Instance, "instance")
    cap = check_count(cap, "cap", 1)
    ep = new_episode(instance, agent or lm.name, setting)
    scene = instance.scene
    cands = [str(a) for a in all_actions(scene)] + [DONE]
    actions = [a for a in all_actions(scene)]
    msgs = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": task_prompt(instance, setting, cap)}]
    before = lm.usage.prompt_tokens + lm.usage.candidate_tokens
    if setting == "one_shot":
        chosen: list[Action] = []
        while len(chosen) < cap:
            prefix = "".join(f"{a}\n" for a in chosen)
            k = lm.choose(lm.chat_prompt(msgs) + prefix, cands if chosen else cands[:-1])
            ep.calls += 1
            if cands[k] == DONE:
                ep.stopped_early = True
                break
            chosen.append(actions[k])
        ep.prompt_tokens += lm.usage.prompt_tokens + lm.usage.candidate_tokens - before
        return score_plan(instance, chosen, cap=cap, episode=ep)
    state = instance.initial
    while ep.steps < cap:
        k = lm.choose(lm.chat_prompt(msgs), cands if ep.steps else cands[:-1])
        ep.calls += 1
        msgs.append({"role": "assistant", "content": cands[k]})
        if cands[k] == DONE:
            ep.stopped_early = True
            break
        ep.steps += 1
        step = apply_action(scene, state, actions[k])
        state = step.state
        ep.actions.append(cands[k])
        ep.failed_preconditions += step.error == "precondition"
        ep.unknown_entities += step.error == "unknown_entity"
        left = cap - ep.steps
        msgs.append({"role": "user", "content": f"{step.observation} You have {left} action{'s' * (left != 1)} left. "
                                                + ("Your next action (or DONE)?" if left else "")})
    ep.prompt_tokens += lm.usage.prompt_tokens + lm.usage.candidate_tokens - before
    ep.status = "success" if goals_hold(scene, state, instance.goals) else "failure"
    return ep
