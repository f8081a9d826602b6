"""NCP-ExploreToM: inducing beliefs by acting, not talking (paper 2), as a library.

The task inverts ExploreToM: given a scene (rooms, containers, objects, characters) and belief
goals such as "Anne believes the apple is in the box, while it is actually elsewhere", an agent
must act — ``MOVE <object> TO <place>``, ``SEND <character> TO <room>`` — so that every goal
holds in the final state of a symbolic belief tracker.

Beliefs change only by witnessing (:mod:`~neurips26.ncp_tom.world`): a move is seen exactly by
the characters in the destination room (:math:`B_w(o) \\leftarrow d`) and as "carried out" by
those in the source room (:math:`B_w(o) \\leftarrow ?`); co-witnesses update their models of
each other (:math:`B_a(B_b(o)) \\leftarrow d`); entering a room reveals its loose objects and
containers keep their contents hidden (object permanence). Goals (:mod:`~neurips26.ncp_tom.goals`)
are true-belief (:math:`B_a(o)=L \\wedge \\mathrm{loc}(o)=L`) or false-belief
(:math:`B_a(o)=L \\wedge \\mathrm{loc}(o)\\ne L`), of first or second order.

Parts: ``world`` (scene, state, tracker), ``goals``, ``planner`` (BFS oracle), ``tasks``
(instances, balanced generator, JSONL), ``baselines`` (oracle / no-ToM / random, scoring),
``agent`` (LLM prompts, strict parsing, one-shot and agentic loops), ``scoring`` (rates, TB–FB
gap at equal plan length), ``env`` (Gymnasium), ``experiment`` (the reproduction).

Example::

    from neurips26.ncp_tom import generate_instances, run_llm_episode, step_cap
    from neurips26.backends import OpenAIBackend, StubOpenAIServer
    instances, _ = generate_instances(600, seed=0)
    # your endpoint: llm = OpenAIBackend("my-model", base_url="http://localhost:8000/v1")
    with StubOpenAIServer(reply="MOVE nothing TO nowhere") as server:   # here: a loopback stand-in
        llm = OpenAIBackend("stub", base_url=server.url)
        ep = run_llm_episode(instances[0], llm, "agentic", cap=step_cap(instances[0]))
    print(ep.status, ep.steps, ep.prompt_tokens)
"""

from .agent import SETTINGS, ParseError, parse_line, parse_plan, run_llm_episode, scripted_agent, task_prompt
from .baselines import EpisodeResult, no_tom_plan, oracle_plan, random_plan, score_plan, step_cap
from .env import NCPToMEnv
from .goals import GOAL_TYPES, BeliefGoal, goal_holds, goals_hold
from .planner import SearchResult, shortest_plan
from .scoring import summary, tb_fb_gap
from .tasks import CONTEXTS, Instance, generate_instances, load_jsonl, save_jsonl
from .world import UNKNOWN, Action, Scene, StepResult, WorldState, all_actions, apply_action, initial_state, replay

__all__ = [
    "Scene", "WorldState", "Action", "StepResult", "UNKNOWN", "initial_state", "apply_action", "all_actions",
    "replay", "BeliefGoal", "GOAL_TYPES", "goal_holds", "goals_hold", "shortest_plan", "SearchResult",
    "Instance", "CONTEXTS", "generate_instances", "save_jsonl", "load_jsonl", "EpisodeResult", "score_plan",
    "step_cap", "oracle_plan", "no_tom_plan", "random_plan", "SETTINGS", "ParseError", "parse_line",
    "parse_plan", "run_llm_episode", "scripted_agent", "task_prompt", "summary", "tb_fb_gap", "NCPToMEnv",
]
