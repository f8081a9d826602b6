"""Direct tests of single points of detection: the search depth boundary, order-2 goals, config bounds.

Bugs these tests are meant to catch (each tried on a broken copy): an off-by-one in the search
depth of ``shortest_plan`` (``range(max_depth - 1)``), and an order-2 goal that reads the
outer believer's own belief (or the true location) instead of the inner believer's actual
belief. The claims catch the first too (``instances_solvable_balanced`` fails: instances whose
shortest plan has the maximal length become unsolvable); an order-2 bug changes no claim at
quick scale, because the no-ToM and random agents' rates barely move.
"""

from __future__ import annotations

import pytest

from neurips26.harness import ConfigError
from neurips26.harness.config import apply_overrides
from neurips26.ncp_tom import Action, BeliefGoal, Scene, apply_action, goal_holds, initial_state
from neurips26.ncp_tom.experiment import Config
from neurips26.ncp_tom.planner import shortest_plan
from neurips26.ncp_tom.tasks import generate_instances


@pytest.fixture(scope="module")
def instances():
    return generate_instances(24, seed=3)[0]


def test_shortest_plan_is_found_at_exactly_its_length(instances):
    lengths = set()
    for inst in instances:
        L = inst.min_plan_length
        lengths.add(L)
        found = shortest_plan(inst.scene, inst.initial, inst.goals, max_depth=L)
        assert found.plan is not None and len(found.plan) == L, inst.id
        if L >= 1:
            assert shortest_plan(inst.scene, inst.initial, inst.goals, max_depth=L - 1).plan is None
    assert max(lengths) >= 3  # the depth boundary is exercised beyond one-step plans


SCENE = Scene(rooms=("kitchen", "hall"), containers=("basket", "box"), container_room=("kitchen", "kitchen"),
              objects=("marble",), characters=("Sally", "Anne"))


def _state_after_sally_leaves_and_marble_moves():
    st = initial_state(SCENE, {"marble": "basket"}, {"Sally": "kitchen", "Anne": "kitchen"})
    for a in (Action("send", "Sally", "hall"), Action("move", "marble", "box")):
        step = apply_action(SCENE, st, a)
        assert step.ok, step.observation
        st = step.state
    return st


@pytest.mark.parametrize("believers,location,true_belief,expected", [
    # Anne believes Sally believes "basket", and Sally does believe "basket": a true second-order belief,
    # although the marble is in the box (a bug reading the true location would call it false)
    (("Anne", "Sally"), "basket", True, True),
    (("Anne", "Sally"), "basket", False, False),
    # Sally believes Anne believes "basket" (she saw nothing), but Anne believes "box": false
    (("Sally", "Anne"), "basket", False, True),
    (("Sally", "Anne"), "basket", True, False),
    # Anne's own belief is "box", her model of Sally's is "basket": reading her own belief is wrong
    (("Anne", "Sally"), "box", True, False),
    (("Anne", "Sally"), "box", False, False),
])
def test_order_two_goals_compare_with_the_inner_believers_actual_belief(believers, location, true_belief, expected):
    st = _state_after_sally_leaves_and_marble_moves()
    assert goal_holds(SCENE, st, BeliefGoal(believers, "marble", location, true_belief)) is expected


@pytest.mark.parametrize("key,value", [("n_instances", 1_000_000_000), ("pipeline_instances", 10**9),
                                       ("n_boot", 10**9), ("llm_instances", 10**9), ("n_seeds", 1000)])
def test_config_sizes_are_bounded(key, value):
    with pytest.raises(ConfigError, match=key):
        apply_overrides(Config.quick(), {key: value}, "ncp_tom")


def test_empty_or_wrong_episode_lists_get_clear_errors():
    import numpy as np

    from neurips26.ncp_tom.scoring import summary, tb_fb_gap

    with pytest.raises(ValueError, match="no episodes"):
        summary([])
    with pytest.raises(ValueError, match="no episodes"):
        tb_fb_gap([], np.random.default_rng(0))
    with pytest.raises(TypeError, match="EpisodeResult"):
        summary([{"success": True}])


def test_beliefs_read_by_name():
    st = _state_after_sally_leaves_and_marble_moves()
    assert st.belief("Anne", "marble") == "box" and st.belief("Sally", "marble") == "basket"
    assert st.belief("Anne", "Sally", "marble") == "basket"     # Anne knows Sally did not see
    assert st.belief("Sally", "Anne", "marble") == "basket"     # Sally does not know anything changed
    with pytest.raises(ValueError, match="unknown character 'Bob'"):
        st.belief("Bob", "marble")
    with pytest.raises(ValueError, match="unknown object 'apple'"):
        st.belief("Anne", "apple")
    from neurips26.ncp_tom.world import state_from_dict

    again = state_from_dict(st.to_dict(), SCENE)
    assert again == st and hash(again) == hash(st) and again.belief("Anne", "Sally", "marble") == "basket"
    with pytest.raises(ValueError, match="no scene"):
        state_from_dict(st.to_dict()).belief("Anne", "marble")
