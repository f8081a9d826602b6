"""Wrong types, negative counts and unknown names get clear errors naming the value and what is
allowed (issue 14, item 4). Before: a negative ``cap`` made ``random_plan`` return an empty plan,
string/float counts failed inside comparisons or slicing, text actions and wrong objects raised
AttributeError, and a goal about an unknown object raised KeyError."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.backends import ScriptedBackend
from neurips26.ncp_tom import (
    BeliefGoal,
    all_actions,
    apply_action,
    generate_instances,
    goal_holds,
    goals_hold,
    no_tom_plan,
    oracle_plan,
    parse_line,
    parse_plan,
    random_plan,
    replay,
    run_llm_episode,
    score_plan,
    shortest_plan,
    step_cap,
)


@pytest.fixture(scope="module")
def inst():
    return generate_instances(4, seed=7)[0][0]


def _unknown_goal(inst):
    return BeliefGoal(believers=(inst.scene.characters[0],), object="zzz", location=inst.scene.rooms[0],
                      true_belief=True)


CASES = [
    ("random_plan negative cap", lambda i: random_plan(i, np.random.default_rng(0), cap=-1), ValueError,
     r"cap must be an integer >= 1, got -1"),
    ("score_plan text cap", lambda i: score_plan(i, [], cap="3"), ValueError, r"cap must be an integer >= 1, got '3'"),
    ("score_plan float cap", lambda i: score_plan(i, [], cap=2.5), ValueError, r"got 2\.5"),
    ("score_plan text actions", lambda i: score_plan(i, ["MOVE x TO y"], cap=3), TypeError, r"list of Action.*parse_line"),
    ("step_cap text", lambda i: step_cap(i, "3"), ValueError, r"extra_steps must be an integer >= 0"),
    ("run_llm_episode negative cap", lambda i: run_llm_episode(i, ScriptedBackend(lambda m: "DONE"), "agentic", cap=-2),
     ValueError, r"cap must be an integer >= 1, got -2"),
    ("oracle_plan negative depth", lambda i: oracle_plan(i, max_depth=-1), ValueError, r"max_depth must be an integer >= 0"),
    ("shortest_plan float depth", lambda i: shortest_plan(i.scene, i.initial, i.goals, max_depth=2.5), ValueError,
     r"max_depth must be an integer >= 0, got 2\.5"),
    ("shortest_plan unknown object", lambda i: shortest_plan(i.scene, i.initial, (_unknown_goal(i),)), ValueError,
     r"unknown object 'zzz'"),
    ("shortest_plan goals text", lambda i: shortest_plan(i.scene, i.initial, "abc"), TypeError, r"tuple of BeliefGoal"),
    ("shortest_plan state dict", lambda i: shortest_plan(i.scene, {}, i.goals), TypeError, r"state must be a WorldState"),
    ("goal_holds unknown object", lambda i: goal_holds(i.scene, i.initial, _unknown_goal(i)), ValueError,
     r"unknown object 'zzz'"),
    ("goals_hold one goal", lambda i: goals_hold(i.scene, i.initial, i.goals[0]), TypeError, r"wrap it"),
    ("apply_action text", lambda i: apply_action(i.scene, i.initial, "MOVE watch TO hall"), TypeError,
     r"action must be an Action.*parse_line"),
    ("apply_action no state", lambda i: apply_action(i.scene, None, all_actions(i.scene)[0]), TypeError,
     r"state must be a WorldState, got NoneType"),
    ("replay text", lambda i: replay(i.scene, i.initial, "MOVE"), TypeError, r"list of Action"),
    ("all_actions unknown object", lambda i: all_actions(i.scene, ("zzz",)), ValueError, r"unknown objects \['zzz'\]"),
    ("no_tom_plan text", lambda i: no_tom_plan("inst"), TypeError, r"instance must be an Instance"),
    ("parse_line int", lambda i: parse_line(5, i.scene), TypeError, r"line must be a str, got int"),
    ("parse_plan int", lambda i: parse_plan(5, i.scene), TypeError, r"text must be a str, got int"),
    ("generate_instances text n", lambda i: generate_instances("3"), ValueError, r"n must be an integer >= 1, got '3'"),
]


@pytest.mark.parametrize("name, call, exc, match", CASES, ids=[c[0] for c in CASES])
def test_bad_input_gets_a_clear_error(inst, name, call, exc, match):
    with pytest.raises(exc, match=match):
        call(inst)


def test_valid_calls_still_work(inst):
    plan = oracle_plan(inst)
    assert score_plan(inst, plan, cap=step_cap(inst)).status == "success"
    assert goals_hold(inst.scene, replay(inst.scene, inst.initial, plan)[0], list(inst.goals))
    assert len(random_plan(inst, np.random.default_rng(0), cap=1)) <= 1
