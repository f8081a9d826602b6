"""Benchmark of NCP-ExploreToM: tracker throughput and oracle search time, as ratios against
baselines run in the same process.

* Tracker: ``apply_action`` on random actions (actions/s) vs. ``copy.deepcopy`` of a dict-of-
  dicts state per action — the least a naive mutable tracker pays before doing any update.
* Oracle: time to find shortest plans for the 600 generated instances with the library's BFS
  (hashed states, goal-object moves only) vs. (a) the same BFS over all actions and (b) an
  iterative-deepening tree search without a visited set (on the instances of length <= 3).

Times are CPU seconds (``time.process_time``: not inflated by other processes on a shared
machine); each comparison is recorded through ``record()``.

Run: ``.venv/bin/python benchmarks/ncp_tom.py`` (about a minute on one core).
"""

from __future__ import annotations

import copy
import time

import numpy as np
from _timing import record

from neurips26.ncp_tom import all_actions, apply_action, generate_instances, goals_hold, shortest_plan
from neurips26.ncp_tom.goals import BeliefGoal
from neurips26.ncp_tom.world import Scene, WorldState


def tracker_rate(instances, n_actions: int = 100_000) -> float:
    rng = np.random.default_rng(0)
    per = n_actions // len(instances)
    t0, done = time.process_time(), 0
    for inst in instances:
        acts = all_actions(inst.scene)
        state = inst.initial
        for k in rng.integers(0, len(acts), per):
            state = apply_action(inst.scene, state, acts[k]).state
            done += 1
    return done / (time.process_time() - t0)


def deepcopy_rate(instances, n_actions: int = 20_000) -> float:
    per = n_actions // len(instances)
    t0, done = time.process_time(), 0
    for inst in instances:
        s = inst.initial
        d = {"loc": dict(zip(inst.scene.objects, s.object_location)),
             "first": {c: dict(zip(inst.scene.objects, r)) for c, r in zip(inst.scene.characters, s.first_order)},
             "second": {a: {b: dict(zip(inst.scene.objects, r)) for b, r in zip(inst.scene.characters, m)}
                        for a, m in zip(inst.scene.characters, s.second_order)}}
        for _ in range(per):
            d = copy.deepcopy(d)
            done += 1
    return done / (time.process_time() - t0)


def bfs_all_actions(scene: Scene, start: WorldState, goals: tuple[BeliefGoal, ...], max_depth: int) -> int | None:
    """Baseline: hashed BFS over every action (no goal-object restriction)."""
    acts = all_actions(scene)
    seen, frontier = {start}, [start]
    for depth in range(1, max_depth + 1):
        nxt = []
        for s in frontier:
            for a in acts:
                st = apply_action(scene, s, a)
                if st.ok and st.state not in seen:
                    if goals_hold(scene, st.state, goals):
                        return depth
                    seen.add(st.state)
                    nxt.append(st.state)
        frontier = nxt
    return None


def iddfs(scene: Scene, start: WorldState, goals: tuple[BeliefGoal, ...], max_depth: int) -> int | None:
    """Baseline: iterative deepening tree search, no visited set, every action."""
    acts = all_actions(scene)

    def dfs(s, depth):
        if goals_hold(scene, s, goals):
            return True
        if depth == 0:
            return False
        return any(dfs(st.state, depth - 1) for a in acts if (st := apply_action(scene, s, a)).ok)

    for d in range(max_depth + 1):
        if dfs(start, d):
            return d
    return None


def main() -> None:
    t0 = time.process_time()
    instances, rejected = generate_instances(600, seed=0)
    t_gen = time.process_time() - t0
    print(f"generate 600 instances (incl. oracle search and {sum(rejected.values())} rejected draws): {t_gen:.2f} s")

    sample = instances[:100]
    rt, rb = tracker_rate(sample), deepcopy_rate(sample)
    print(f"tracker: {rt:,.0f} actions/CPU-s; deepcopy-per-action baseline: {rb:,.0f} /CPU-s; ratio {rt / rb:.2f}x")
    record("world tracker, per action: apply_action vs copy.deepcopy of a dict-of-dicts state", 1e6 / rt, 1e6 / rb,
           unit="µs", note="the deepcopy is the least a naive mutable tracker pays before any update")

    t0 = time.process_time()
    lengths = [len(shortest_plan(i.scene, i.initial, i.goals, max_depth=6).plan) for i in instances]
    t_bfs = time.process_time() - t0
    print(f"oracle BFS (hashed, goal-object moves): 600 instances in {t_bfs:.2f} s "
          f"({1e3 * t_bfs / 600:.2f} ms/instance)")

    sub = instances[:60]
    t0 = time.process_time()
    assert [shortest_plan(i.scene, i.initial, i.goals, max_depth=6).plan.__len__() for i in sub] == lengths[:60]
    t_lib = time.process_time() - t0
    t0 = time.process_time()
    assert [bfs_all_actions(i.scene, i.initial, i.goals, 6) for i in sub] == lengths[:60]
    t_all = time.process_time() - t0
    print(f"  vs hashed BFS over all actions (60 instances): {t_all:.2f} s; speed-up {t_all / t_lib:.2f}x "
          "(includes the flat-state encoding: the baseline steps WorldState objects)")
    record("oracle shortest plans, 60 instances: library BFS vs hashed BFS over all actions", t_lib, t_all,
           note="includes the flat-state encoding: the baseline steps WorldState objects")
    # the same search (goal-object moves, same expansion order) on WorldState objects: what the flat
    # int-tuple states alone buy
    from neurips26.ncp_tom.planner import _search_states
    t0 = time.process_time()
    for i, n in zip(sub, lengths[:60]):
        objs = tuple(o for o in i.scene.objects if any(g.object == o for g in i.goals))
        res = _search_states(i.scene, i.initial, i.goals, all_actions(i.scene, objs), 6, 2_000_000)
        assert len(res.plan) == n
    t_ws = time.process_time() - t0
    print(f"  vs the same search on WorldState states (60 instances): {t_ws:.2f} s; flat states {t_ws / t_lib:.2f}x")
    record("oracle shortest plans, 60 instances: flat int-tuple states vs the same search on WorldState objects",
           t_lib, t_ws, note="goal-object moves, same expansion order")

    short = [(i, n) for i, n in zip(instances, lengths) if n <= 3][:60]
    t0 = time.process_time()
    for i, n in short:
        assert len(shortest_plan(i.scene, i.initial, i.goals, max_depth=6).plan) == n
    t_lib = time.process_time() - t0
    t0 = time.process_time()
    for i, n in short:
        assert iddfs(i.scene, i.initial, i.goals, 3) == n
    t_id = time.process_time() - t0
    print(f"  vs tree search without hashing ({len(short)} instances of length <= 3): {t_id:.2f} s; "
          f"speed-up {t_id / t_lib:.1f}x")
    record(f"oracle shortest plans, {len(short)} instances of length ≤ 3: library BFS vs iterative deepening without "
           "a visited set", t_lib, t_id)


if __name__ == "__main__":
    main()
