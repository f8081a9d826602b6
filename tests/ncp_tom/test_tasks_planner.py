"""Instance generation (balance, determinism, rejection, JSONL) and the BFS oracle's optimality."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from neurips26.ncp_tom import (GOAL_TYPES, BeliefGoal, Instance, Scene, all_actions, generate_instances, goals_hold,
                               load_jsonl, replay, save_jsonl, shortest_plan)
from neurips26.ncp_tom.goals import contradictory


def test_generator_balanced_solvable_and_stable(instances):
    counts = Counter((i.goal_type, i.context) for i in instances)
    assert len(counts) == 4 * 5 and set(counts.values()) == {6}  # 120 / 20 cells
    assert all(i.min_plan_length >= 1 for i in instances)  # never already solved
    assert len({i.id for i in instances}) == len(instances)
    again, _ = generate_instances(12, seed=7)
    assert [i.id for i in again] == [i.id for i in instances[:12]]  # same seed → same ids, prefix-stable
    other, _ = generate_instances(12, seed=8)
    assert {i.id for i in other}.isdisjoint({i.id for i in again})


def test_first_order_only_and_bad_arguments():
    insts, rej = generate_instances(10, seed=1, goal_types=("TB1", "FB1"), contexts=("office",))
    assert Counter(i.goal_type for i in insts) == {"TB1": 5, "FB1": 5} and {i.context for i in insts} == {"office"}
    assert rej["unsolvable_or_trivial"] >= 0
    with pytest.raises(ValueError, match="unknown context 'moon'"):
        generate_instances(4, contexts=("moon",))
    with pytest.raises(ValueError, match="unknown goal type 'XB1'"):
        generate_instances(4, goal_types=("XB1",))
    with pytest.raises(ValueError, match="n must be >= 1"):
        generate_instances(0)
    with pytest.raises(RuntimeError, match="could not fill"):
        generate_instances(2, seed=0, goal_types=("FB2",), max_depth=1, max_tries=5)


def test_oracle_plans_replay_and_are_shortest(instances):
    for inst in instances[:60]:  # 15 per goal type
        res = shortest_plan(inst.scene, inst.initial, inst.goals, max_depth=6)
        assert res.plan is not None and len(res.plan) == inst.min_plan_length
        final, failed = replay(inst.scene, inst.initial, res.plan)
        assert failed == 0 and goals_hold(inst.scene, final, inst.goals)


def test_bfs_matches_brute_force_enumeration(instances):
    # brute force over ALL grammatical actions (not only the goal object's): no shorter plan exists
    small = []
    for length in (1, 2, 3):  # two instances of each minimal length, with small action sets
        small += [i for i in instances if i.min_plan_length == length and len(all_actions(i.scene)) <= 14][:2]
    assert len(small) == 6
    for inst in small:
        acts = all_actions(inst.scene)
        best = None
        for length in range(0, inst.min_plan_length + 1):
            if any(goals_hold(inst.scene, replay(inst.scene, inst.initial, list(seq))[0], inst.goals)
                   for seq in itertools.product(acts, repeat=length)):
                best = length
                break
        assert best == inst.min_plan_length


def test_unsolvable_goal_is_reported():
    sc = Scene(("hall",), ("box", "bag"), ("hall", "hall"), ("key",), ("Anne", "Bob"))
    inst = Instance(sc, ("box",), ("hall", "hall"), (BeliefGoal(("Anne",), "key", "bag", False),))
    # one room: Anne always sees every move, so she can never hold a false belief
    res = shortest_plan(sc, inst.initial, inst.goals, max_depth=4)
    assert res.plan is None and res.exhausted
    with pytest.raises(ValueError, match="max_depth"):
        shortest_plan(sc, inst.initial, inst.goals, max_depth=-1)
    with pytest.raises(ValueError, match="goals is empty"):
        shortest_plan(sc, inst.initial, (), max_depth=2)


def test_jsonl_roundtrip_and_tamper_detection(instances, tmp_path):
    path = save_jsonl(instances[:20], tmp_path / "set.jsonl")
    back = load_jsonl(path)
    assert [i.to_dict() for i in back] == [i.to_dict() for i in instances[:20]]
    lines = path.read_text().splitlines()
    rec = json.loads(lines[3])
    rec["goals"][0]["location"] = rec["scene"]["rooms"][0] if rec["goals"][0]["location"] != rec["scene"]["rooms"][0] \
        else rec["scene"]["rooms"][-1]
    lines[3] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"set.jsonl:4: instance id .* does not match"):
        load_jsonl(path)
    path.write_text(json.dumps(instances[0].to_dict()) + "\n" + json.dumps(instances[0].to_dict()) + "\n")
    with pytest.raises(ValueError, match="duplicate instance id"):
        load_jsonl(path)
    path.write_text('{"id": "x"}\n')
    with pytest.raises(ValueError, match="bad instance record"):
        load_jsonl(path)


def test_contradictory_goals_detected():
    g = BeliefGoal(("Anne",), "key", "box", True)
    assert contradictory((g, BeliefGoal(("Anne",), "key", "bag", True)))
    assert contradictory((g, BeliefGoal(("Anne",), "key", "box", False)))
    assert not contradictory((g, BeliefGoal(("Bob",), "key", "bag", True)))
    assert set(GOAL_TYPES) == {"TB1", "FB1", "TB2", "FB2"}


def test_multi_goal_instances_are_consistent():
    insts, _ = generate_instances(4, seed=3, n_goals=2, goal_types=("TB1", "FB1"), max_depth=5)
    for inst in insts:
        assert len(inst.goals) == 2 and not contradictory(inst.goals)
        res = shortest_plan(inst.scene, inst.initial, inst.goals, max_depth=6)
        assert len(res.plan) == inst.min_plan_length
