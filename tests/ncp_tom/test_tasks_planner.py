"""Instance generation (balance, determinism, rejection, JSONL) and the BFS oracle's optimality."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from neurips26.ncp_tom import (
    GOAL_TYPES,
    BeliefGoal,
    Instance,
    Scene,
    all_actions,
    generate_instances,
    goals_hold,
    load_jsonl,
    replay,
    save_jsonl,
    shortest_plan,
)
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
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
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


@pytest.mark.parametrize("n_types,n_ctx", [(4, 5), (2, 5), (4, 2), (3, 3), (1, 4)])
def test_cell_order_balances_every_prefix(n_types, n_ctx):
    """Review fix: cells used to be filled type-major, so 8 instances were TB1 5 / FB1 3 / TB2 0 / FB2 0
    while the balance claim (which only checked cells) still said 'holds'."""
    from neurips26.ncp_tom.tasks import cell_order

    types, ctxs = tuple(f"t{i}" for i in range(n_types)), tuple(f"c{i}" for i in range(n_ctx))
    order = cell_order(types, ctxs)
    assert sorted(order) == sorted(itertools.product(types, ctxs))  # every cell exactly once
    for n in range(1, 2 * len(order) + 1):
        seq = [order[k % len(order)] for k in range(n)]
        for keys, pick in ((types, lambda x: x[0]), (ctxs, lambda x: x[1]), (order, lambda x: x)):
            cnt = Counter(map(pick, seq))
            assert max(cnt[k] for k in keys) - min(cnt[k] for k in keys) <= 1, (n, keys)


def test_small_sets_are_balanced_on_goal_types_and_contexts():
    insts, _ = generate_instances(8, seed=3)
    assert Counter(i.goal_type for i in insts) == {t: 2 for t in GOAL_TYPES}
    assert max(Counter(i.context for i in insts).values()) == 2


def test_load_jsonl_rejects_malformed_records_with_line_numbers(instances, tmp_path):
    """Every malformed record is a ValueError naming the file and line, never a silent wrong task
    (e.g. true_belief "false" used to be read as a truthy string: a TB goal that can never hold)."""
    good = instances[0].to_dict()

    def edited(**changes):
        rec = json.loads(json.dumps(good))
        for path, value in changes.items():
            *head, last = path.split("__")
            d = rec
            for h in head:
                d = d[int(h)] if h.isdigit() else d[h]
            d[last] = value
        rec.pop("id")  # so the content check is not what catches it
        return json.dumps(rec)

    bad_lines = ["[1, 2]", "null", "42", '"text"', "{not json",
                 edited(goals__0__true_belief="false"), edited(goals__0__true_belief=1),
                 edited(goals__0__believers="Anne"), edited(goals__0__believers=[]),
                 edited(goals__0__object=7), edited(goals__0__location=["box"]),
                 edited(min_plan_length="3"), edited(min_plan_length=-1),
                 edited(oracle_plan=["walk around"]), edited(oracle_plan=[3]),
                 edited(oracle_plan=list(good["oracle_plan"]) + list(good["oracle_plan"])),
                 edited(scene="kitchen"), edited(scene__objects="apple"), edited(object_location="box"),
                 edited(character_room=[["x"]] * len(good["character_room"])), edited(goals={})]
    for k, line in enumerate(bad_lines):
        path = tmp_path / f"bad{k}.jsonl"
        path.write_text(json.dumps(good) + "\n" + line + "\n")
        with pytest.raises(ValueError, match=rf"bad{k}.jsonl:2: "):
            load_jsonl(path)


def test_step_cap_leaves_room_for_the_minimal_plan():
    """Catches an off-by-one step cap (a planted ``min_plan_length + extra_steps - 1`` passed every
    test): with extra_steps = 0 the cap equals the oracle's plan length, so the oracle's own plan
    still succeeds on every instance, and each extra step adds exactly one."""
    from neurips26.ncp_tom.baselines import oracle_plan, score_plan, step_cap
    from neurips26.ncp_tom.tasks import generate_instances

    instances, _ = generate_instances(12, seed=5)
    for inst in instances:
        assert step_cap(inst, 0) == inst.min_plan_length and step_cap(inst, 3) == inst.min_plan_length + 3
        ep = score_plan(inst, oracle_plan(inst), cap=step_cap(inst, 0), agent="oracle")
        assert ep.status == "success" and not ep.over_cap
