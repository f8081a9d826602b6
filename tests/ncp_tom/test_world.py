"""The belief tracker: hand-worked ExploreToM-style stories and hypothesis properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips26.ncp_tom import UNKNOWN, Action, BeliefGoal, Scene, all_actions, apply_action, goal_holds, initial_state

SCENE = Scene(rooms=("kitchen", "hall"), containers=("basket", "box", "drawer"),
              container_room=("kitchen", "kitchen", "hall"), objects=("marble", "key"),
              characters=("Sally", "Anne", "Carl"))
S, A, CARL = 0, 1, 2
MARBLE = 0


def run(state, *texts):
    for t in texts:
        verb, subj, _, tgt = t.split()
        step = apply_action(SCENE, state, Action("move" if verb == "MOVE" else "send", subj, tgt))
        assert step.ok, step.observation
        state = step.state
    return state


def start():
    return initial_state(SCENE, {"marble": "basket", "key": "drawer"}, {"Sally": "kitchen", "Anne": "kitchen",
                                                                         "Carl": "hall"})


def test_sally_anne_false_belief_first_and_second_order():
    # both watch a move: each knows the other saw it (second order updated for co-witnesses)
    seen = run(start(), "MOVE marble TO box")
    assert seen.second_order[S][A][MARBLE] == seen.second_order[A][S][MARBLE] == "box"
    assert seen.second_order[CARL][S][MARBLE] == "basket"  # Carl, in the hall, saw nothing
    # Sally leaves; Anne moves the marble (our unseen agent does, with Anne watching)
    st_ = run(start(), "SEND Sally TO hall", "MOVE marble TO box")
    assert st_.first_order[A][MARBLE] == "box"
    assert st_.first_order[S][MARBLE] == "basket"  # the classic false belief
    assert st_.second_order[A][S][MARBLE] == "basket"  # Anne knows Sally did not see
    assert st_.second_order[S][A][MARBLE] == "basket"  # Sally does not know anything changed
    assert goal_holds(SCENE, st_, BeliefGoal(("Sally",), "marble", "basket", False))
    assert goal_holds(SCENE, st_, BeliefGoal(("Anne",), "marble", "box", True))
    assert goal_holds(SCENE, st_, BeliefGoal(("Anne", "Sally"), "marble", "basket", True))
    assert not goal_holds(SCENE, st_, BeliefGoal(("Sally", "Anne"), "marble", "basket", True))
    assert goal_holds(SCENE, st_, BeliefGoal(("Sally", "Anne"), "marble", "basket", False))  # 2nd-order FB
    # Sally comes back: the marble is in a closed box, so she keeps her belief (object permanence)
    st2 = run(st_, "SEND Sally TO kitchen")
    assert st2.first_order[S][MARBLE] == "basket"


def test_re_entry_reveals_visible_objects_only():
    st_ = run(start(), "SEND Sally TO hall", "MOVE marble TO kitchen")  # loose, in the open
    assert st_.first_order[S][MARBLE] == "basket"
    st2 = run(st_, "SEND Sally TO kitchen")
    assert st2.first_order[S][MARBLE] == "kitchen"  # she sees it lying there
    assert st2.second_order[A][S][MARBLE] == "kitchen"  # Anne saw her come in and look
    assert st2.second_order[S][A][MARBLE] == "kitchen"  # and Sally knows Anne sees it too
    # the key is in the hall's drawer: Carl (in the hall) sees nothing new when entering the kitchen
    st3 = run(st2, "SEND Carl TO kitchen")
    assert st3.first_order[CARL][MARBLE] == "kitchen" and st3.first_order[CARL][1] == "drawer"


def test_formerly_seen_object_now_hidden_becomes_unknown():
    st_ = run(start(), "MOVE marble TO kitchen", "SEND Sally TO hall", "MOVE marble TO box")
    assert st_.first_order[S][MARBLE] == "kitchen"
    st2 = run(st_, "SEND Sally TO kitchen")
    assert st2.first_order[S][MARBLE] == UNKNOWN  # it is gone from view; she cannot know where
    assert st2.second_order[A][S][MARBLE] == UNKNOWN


def test_cross_room_move_source_witnesses_lose_track():
    st_ = run(start(), "MOVE marble TO drawer")  # from the kitchen's basket to the hall's drawer
    assert st_.first_order[S][MARBLE] == UNKNOWN and st_.first_order[A][MARBLE] == UNKNOWN
    assert st_.first_order[CARL][MARBLE] == "drawer"
    assert st_.second_order[S][A][MARBLE] == UNKNOWN
    assert st_.second_order[CARL][S][MARBLE] == "basket"  # Carl could not see the kitchen


def test_failed_preconditions_leave_world_unchanged():
    s0 = start()
    for action, err in [(Action("move", "marble", "basket"), "precondition"),
                        (Action("send", "Sally", "kitchen"), "precondition"),
                        (Action("move", "pear", "box"), "unknown_entity"),
                        (Action("move", "marble", "attic"), "unknown_entity"),
                        (Action("send", "Zed", "hall"), "unknown_entity"),
                        (Action("send", "Sally", "box"), "unknown_entity"),
                        (Action("jump", "Sally", "hall"), "unknown_entity")]:
        step = apply_action(SCENE, s0, action)
        assert not step.ok and step.state is s0 and step.error == err and step.observation.startswith("Nothing")


def test_scene_and_state_validation():
    with pytest.raises(ValueError, match="ambiguous name 'hall'"):
        Scene(("hall",), ("hall",), ("hall",), ("key",), ("Anne",))
    with pytest.raises(ValueError, match="ambiguous name 'anne'"):
        Scene(("hall",), ("box",), ("hall",), ("key",), ("Anne", "anne"))
    with pytest.raises(ValueError, match="bad name"):
        Scene(("living room",), ("box",), ("living room",), ("key",), ("Anne",))
    with pytest.raises(ValueError, match="unknown room"):
        Scene(("hall",), ("box",), ("attic",), ("key",), ("Anne",))
    with pytest.raises(ValueError, match="at most 4"):
        Scene(("hall",), ("box",), ("hall",), ("key",), ("A", "B", "C", "D", "E"))
    with pytest.raises(ValueError, match="empty"):
        Scene(("hall",), (), (), ("key",), ("Anne",))
    with pytest.raises(ValueError, match="unknown location 'attic'"):
        initial_state(SCENE, ("attic", "box"), ("hall", "hall", "hall"))
    with pytest.raises(ValueError, match="missing"):
        initial_state(SCENE, {"marble": "box"}, ("hall", "hall", "hall"))
    with pytest.raises(ValueError, match="must differ"):
        BeliefGoal(("Anne", "Anne"), "marble", "box", True)


ACTIONS = all_actions(SCENE)


@st.composite
def story(draw):
    locs = tuple(draw(st.sampled_from(SCENE.locations)) for _ in SCENE.objects)
    rooms = tuple(draw(st.sampled_from(SCENE.rooms)) for _ in SCENE.characters)
    acts = draw(st.lists(st.sampled_from(ACTIONS), max_size=14))
    return initial_state(SCENE, locs, rooms), acts


@settings(max_examples=150, deadline=None)
@given(story())
def test_tracker_invariants(data):
    state, actions = data
    room_of = SCENE.room_of
    for act in actions:
        step = apply_action(SCENE, state, act)
        new = step.state
        if not step.ok:
            assert new is state
            continue
        n_c, n_o = len(SCENE.characters), len(SCENE.objects)
        if act.kind == "move":
            o = SCENE.objects.index(act.subject)
            src, dst = room_of[state.object_location[o]], room_of[act.target]
            for c in range(n_c):
                r = state.character_room[c]
                # beliefs about other objects never change; bystanders in other rooms learn nothing
                for oo in range(n_o):
                    if oo != o or r not in (src, dst):
                        assert new.first_order[c][oo] == state.first_order[c][oo]
                if r == dst:
                    assert new.first_order[c][o] == act.target
        else:
            c_sent = SCENE.characters.index(act.subject)
            for c in range(n_c):
                if c != c_sent:  # only the walker's own first-order beliefs can change
                    assert new.first_order[c] == state.first_order[c]
            for o in range(n_o):  # object permanence: hidden objects keep their belief …
                if state.object_location[o] not in SCENE.rooms and state.first_order[c_sent][o] != act.target:
                    assert new.first_order[c_sent][o] == state.first_order[c_sent][o]
        state = new
        # invariants of every reachable state
        for a in range(len(SCENE.characters)):
            assert state.second_order[a][a] == state.first_order[a]
            r = state.character_room[a]
            for o, loc in enumerate(state.object_location):
                # in the same room as a loose object ⇔ seeing it there
                assert (loc == r) == (state.first_order[a][o] == r)
                for b in range(len(SCENE.characters)):
                    if state.character_room[b] == r:  # co-present characters model each other's view
                        assert (loc == r) == (state.second_order[a][b][o] == r)
            for o in range(len(SCENE.objects)):
                assert state.first_order[a][o] in SCENE.room_of or state.first_order[a][o] == UNKNOWN


def test_planner_steps_without_narration_reach_the_same_states():
    # the oracle's search calls _apply_action(narrate=False) (no text); states, ok and error must be
    # exactly those of apply_action, along random walks over every action of generated instances
    import random

    from neurips26.ncp_tom.tasks import generate_instances
    from neurips26.ncp_tom.world import _apply_action

    rnd = random.Random(0)
    for inst in generate_instances(8, seed=3)[0]:
        state, actions = inst.initial, all_actions(inst.scene)
        for _ in range(12):
            for a in actions:
                full, bare = apply_action(inst.scene, state, a), _apply_action(inst.scene, state, a, narrate=False)
                assert (bare.state, bare.ok, bare.error) == (full.state, full.ok, full.error)
                assert bare.state.second_order == full.state.second_order and bare.observation == ""
            state = apply_action(inst.scene, state, rnd.choice(actions)).state
