"""Baselines, the LLM agent loop (strict parsing, re-ask, invalid/unknown/precondition counts,
backend errors, step cap, early stop) and the Gymnasium env."""

from __future__ import annotations

import numpy as np
import pytest

from neurips26.backends import BackendError, ScriptedBackend, replies
from neurips26.ncp_tom import (
    Action,
    BeliefGoal,
    Instance,
    NCPToMEnv,
    ParseError,
    Scene,
    no_tom_plan,
    oracle_plan,
    parse_line,
    parse_plan,
    random_plan,
    run_llm_episode,
    score_plan,
    scripted_agent,
    step_cap,
    task_prompt,
)

SCENE = Scene(("kitchen", "hall"), ("basket", "box", "drawer"), ("kitchen", "kitchen", "hall"), ("marble",),
              ("Sally", "Anne"))
# Sally must come to believe the marble is in the box while it is not: a hand-made 3-step FB1 task
# (move it to the box with Sally watching, send her out, move it again).
FB = Instance(SCENE, ("basket",), ("kitchen", "kitchen"), (BeliefGoal(("Sally",), "marble", "box", False),),
              min_plan_length=3, oracle_plan=("MOVE marble TO box", "SEND Sally TO hall", "MOVE marble TO basket"))


def test_baselines_on_generated_set(instances):
    for inst in instances:
        cap = step_cap(inst)
        assert score_plan(inst, oracle_plan(inst), cap=cap).success
        ep = score_plan(inst, no_tom_plan(inst), cap=cap)
        if not inst.true_belief:
            assert not ep.success  # a ToM-free agent never induces a false belief
    # the no-ToM agent does solve some TB goals (when the believer happens to watch)
    assert any(score_plan(i, no_tom_plan(i), cap=step_cap(i)).success for i in instances if i.true_belief)
    rng = np.random.default_rng(0)
    plans = [random_plan(instances[0], rng, 5) for _ in range(200)]
    assert max(map(len, plans)) <= 5 and min(map(len, plans)) == 0  # DONE can come first


def test_score_plan_counts_and_cap():
    ep = score_plan(FB, [Action("move", "marble", "basket"), Action("move", "pear", "box")] + oracle_plan(FB), cap=6)
    assert ep.success and ep.failed_preconditions == 1 and ep.unknown_entities == 1 and ep.steps == 5
    over = score_plan(FB, oracle_plan(FB) + [Action("send", "Anne", "hall")] * 4, cap=6)
    assert not over.success and over.over_cap
    with pytest.raises(ValueError, match="cap must be an integer >= 1"):
        score_plan(FB, [], cap=0)
    with pytest.raises(ValueError, match="extra_steps"):
        step_cap(FB, -1)


def test_parse_line_is_strict():
    assert parse_line("MOVE marble TO box", SCENE) == Action("move", "marble", "box")
    assert parse_line("  SEND sally TO HALL ", SCENE) == Action("send", "Sally", "hall")  # names: any case
    assert parse_line("DONE", SCENE) == "DONE"
    assert parse_line("MOVE pear TO box", SCENE) == Action("move", "pear", "box")  # unknown kept, not guessed
    for bad in ["move marble to box", "MOVE the marble TO the box", "MOVE marble TO box.", "Sure! MOVE marble TO box",
                "I can't help with deceiving people.", "", "SEND Sally", "DONE now"]:
        with pytest.raises(ParseError):
            parse_line(bad, SCENE)
    items = parse_plan("MOVE marble TO box\n\nhello\nDONE\nMOVE marble TO hall", SCENE)
    assert items[0] == Action("move", "marble", "box") and isinstance(items[1], ParseError) and items[2] == "DONE"
    assert len(items) == 3  # nothing after DONE
    with pytest.raises(ParseError):
        parse_plan("no actions here\nat all", SCENE)


@pytest.mark.parametrize("setting", ["one_shot", "agentic"])
def test_scripted_oracle_and_no_tom_through_chat_loop(setting):
    ep = run_llm_episode(FB, scripted_agent(oracle_plan(FB), setting), setting, cap=6)
    assert ep.success and ep.steps == 3 and ep.stopped_early and ep.calls == (1 if setting == "one_shot" else 4)
    assert ep.prompt_tokens > 0 and ep.completion_tokens > 0
    ep = run_llm_episode(FB, scripted_agent(no_tom_plan(FB), setting), setting, cap=6)
    assert not ep.success and ep.actions == ["MOVE marble TO box"]


def test_agentic_reask_then_invalid_and_counts():
    backend = ScriptedBackend(replies([
        "Let me think... MOVE marble TO box",  # malformed → one re-ask
        "MOVE marble TO box",  # recovered
        "I won't do that.", "Still no.",  # malformed twice → one invalid action
        "SEND Zed TO hall",  # unknown entity
        "SEND Sally TO kitchen",  # failed precondition (already there)
        "SEND Sally TO hall", "MOVE marble TO basket",
    ]))
    ep = run_llm_episode(FB, backend, "agentic", cap=6)
    assert ep.reasks == 2 and ep.malformed == 1 and ep.unknown_entities == 1 and ep.failed_preconditions == 1
    assert ep.steps == 6 and ep.success and not ep.stopped_early  # stopped by the cap, scored as is
    assert ep.actions == ["MOVE marble TO box", "SEND Zed TO hall", "SEND Sally TO kitchen", "SEND Sally TO hall",
                          "MOVE marble TO basket"]


def test_agentic_observations_are_narrated():
    seen = []

    def policy(msgs):
        seen.append(msgs[-1].content)
        return ["MOVE marble TO box", "SEND Sally TO hall", "DONE"][len(seen) - 1]

    ep = run_llm_episode(FB, ScriptedBackend(policy), "agentic", cap=6)
    assert not ep.success and ep.stopped_early  # early DONE: scored as it is (Sally's belief is true)
    assert "Seen by: Sally, Anne" in seen[1] and "5 actions left" in seen[1]
    assert "Sally went from the kitchen to the hall" in seen[2]


def test_one_shot_reask_malformed_lines_and_over_cap():
    ep = run_llm_episode(FB, ScriptedBackend(replies(["Here is my plan:", "MOVE marble TO box\nSEND Sally TO hall\n"
                                                      "oops\nMOVE marble TO basket\nDONE"])), "one_shot", cap=6)
    assert ep.reasks == 1 and ep.malformed == 1 and ep.steps == 4 and ep.success
    ep = run_llm_episode(FB, ScriptedBackend(replies(["nope", "still nope"])), "one_shot", cap=6)
    assert ep.status == "failure" and ep.malformed == 1 and ep.steps == 1
    long = "\n".join(["SEND Anne TO hall", "SEND Anne TO kitchen"] * 4)
    ep = run_llm_episode(FB, ScriptedBackend(replies([long])), "one_shot", cap=6)
    assert ep.over_cap and ep.status == "failure"


def test_backend_failure_is_an_error_outcome():
    ep = run_llm_episode(FB, ScriptedBackend(replies(["MOVE marble TO box", BackendError("timeout x5")])),
                         "agentic", cap=6)
    assert ep.status == "error" and "timeout" in ep.error and not ep.success
    with pytest.raises(ValueError, match="unknown setting"):
        run_llm_episode(FB, ScriptedBackend(replies([])), "chatty", cap=3)


def test_task_prompt_mentions_everything():
    text = task_prompt(FB, "agentic", 6)
    for word in ("kitchen", "hall", "basket", "box", "drawer", "marble", "Sally", "Anne", "at most 6 actions",
                 "while the marble is actually somewhere else"):
        assert word in text


def test_gymnasium_env_passes_checker_and_scores():
    from gymnasium.utils.env_checker import check_env

    env = NCPToMEnv(FB, render_mode="ansi")
    check_env(env, skip_render_check=True)
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs) and not info["goals_hold"]
    for name in FB.oracle_plan:
        obs, reward, term, trunc, info = env.step(env.action_names.index(name))
        assert reward == 0.0 and not term
    obs, reward, term, trunc, info = env.step(env.action_space.n - 1)  # DONE
    assert term and reward == 1.0 and info["goals_hold"] and env.render() == "DONE."
    env.reset()
    bad = env.action_names.index("MOVE marble TO basket")  # already there: invalid, world unchanged
    obs2, *_, info = env.step(bad)
    assert not info["ok"] and info["invalid"] == 1 and np.array_equal(obs2, env.reset()[0])
    env.reset()
    for _ in range(6):
        *_, term, trunc, info = env.step(env.action_names.index("SEND Anne TO hall"))
    assert trunc and not term  # the step cap (3 + 3) truncates
    with pytest.raises(ValueError, match="not in Discrete"):
        env.step(99)
    with pytest.raises(ValueError, match="render_mode"):
        NCPToMEnv(FB, render_mode="human")


class _GarbageBackend:
    """A custom backend that breaks the interface: returns a dict, or a reply whose text is None."""

    name = "garbage"

    def __init__(self, value):
        self.value = value

    def chat(self, messages, params=None):
        return self.value


@pytest.mark.parametrize("value", [{"text": "DONE"}, None, "DONE"])
@pytest.mark.parametrize("setting", ["one_shot", "agentic"])
def test_backend_returning_garbage_is_an_error_outcome(value, setting):
    from neurips26.backends import ChatReply

    for backend in (_GarbageBackend(value), _GarbageBackend(ChatReply(text=None))):  # type: ignore[arg-type]
        ep = run_llm_episode(FB, backend, setting, cap=6)
        assert ep.status == "error" and "expected a ChatReply" in ep.error and ep.steps == 0
