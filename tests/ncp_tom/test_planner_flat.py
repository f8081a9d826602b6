"""The oracle's flat-tuple search equals the reference search on WorldState values.

``planner._search_flat`` re-implements the tracker's move and send rules on flat int tuples for
speed; ``planner._search_states`` runs the same breadth-first search through ``world._apply_action``.
"""

from __future__ import annotations

import numpy as np

from neurips26.ncp_tom import all_actions, generate_instances
from neurips26.ncp_tom.planner import _encode, _search_flat, _search_states, shortest_plan
from neurips26.ncp_tom.tasks import CONTEXTS, sample_scene
from neurips26.ncp_tom.world import UNKNOWN, WorldState, _apply_action, initial_state


def _both(scene, start, goals, max_depth, max_states=2_000_000):
    objs = tuple(o for o in scene.objects if any(g.object == o for g in goals))
    acts = all_actions(scene, objs)
    ref = _search_states(scene, start, goals, acts, max_depth, max_states)
    fast = _search_flat(scene, _encode(scene, start), goals, acts, max_depth, max_states)
    return ref, fast


def _same(ref, fast):
    assert (None if ref.plan is None else [str(a) for a in ref.plan]) == \
        (None if fast.plan is None else [str(a) for a in fast.plan])
    assert (ref.states, ref.exhausted) == (fast.states, fast.exhausted)


def test_flat_search_equals_reference_search():
    """Catches a flat-layout slip in the move/send rules (a wrong witness group, the second-order
    diagonal not mirroring first_order, see-room reading an already-updated row, a wrong UNKNOWN):
    any of them changes some successor state, hence the visited set, the expansion order, the
    plan found, the state count or whether the depth was exhausted. Compared on generated
    instances (one and two goals, 1-2 objects, 2-3 characters), at every depth limit up to the
    plan's length (depth limits 1-3 elsewhere), with small ``max_states`` caps, and from random
    mid-episode starts whose beliefs include UNKNOWN."""
    rng = np.random.default_rng(3)
    insts, _ = generate_instances(40, seed=11)
    insts2, _ = generate_instances(12, seed=12, n_goals=2, n_objects=(2, 2), n_characters=(3, 3),
                                  max_depth=4)
    checked = none_found = unknown_starts = 0
    for k, inst in enumerate(insts + insts2):
        start = inst.initial
        if k % 2:  # a random mid-episode start (moves of every object, sends)
            acts = all_actions(inst.scene)
            for _ in range(int(rng.integers(1, 6))):
                start = _apply_action(inst.scene, start, acts[int(rng.integers(len(acts)))]).state
            unknown_starts += any(UNKNOWN in row for row in start.first_order)
        if k % 2 == 0 and k % 3 == 0:  # the generator's case: up to the depth the plan is found at
            depths = range(0, inst.min_plan_length + 1)
        else:
            depths = (int(rng.integers(1, 4)),)
        for d in depths:
            ref, fast = _both(inst.scene, start, inst.goals, d)
            _same(ref, fast)
            none_found += ref.plan is None
            checked += 1
        ref, fast = _both(inst.scene, start, inst.goals, 6, max_states=int(rng.integers(2, 200)))
        _same(ref, fast)
    assert checked - none_found > 20 and none_found > 20  # both outcomes exercised (26 and 44 here)
    assert unknown_starts >= 3  # (10 here)


def test_shortest_plan_falls_back_on_a_state_that_does_not_fit_the_scene():
    """Catches the flat search being fed a state it cannot encode (a foreign scene's shape):
    shortest_plan must then use the reference search instead of crashing or mis-encoding."""
    rng = np.random.default_rng(0)
    scene = sample_scene(rng, "office", n_characters=(2, 2), n_objects=(1, 1))
    st = initial_state(scene, (scene.containers[0],), (scene.rooms[0], scene.rooms[-1]))
    odd = WorldState(st.object_location, st.character_room, st.first_order + st.first_order[:1],
                     st.second_order, scene=scene)
    assert _encode(scene, st) is not None and _encode(scene, odd) is None
    assert set(CONTEXTS) >= {"office"}
    inst, _ = generate_instances(1, seed=5)
    res = shortest_plan(inst[0].scene, inst[0].initial, inst[0].goals)
    assert len(res.plan) == inst[0].min_plan_length
