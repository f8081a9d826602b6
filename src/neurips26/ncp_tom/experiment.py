"""Reproduction of NCP-ExploreToM (paper 2): baselines on 600 instances, optional LLM agent.

Quick scale (CPU, seconds): generate the balanced 600-instance set, export/import it as JSONL,
replay the oracle's plans, run the no-ToM and random agents, run the scripted baselines through
the LLM chat loop (prompt → strict parse → tracker), and compare TB and FB success overall and
at equal minimal plan length. The paper's model and human results need frontier models and a
human cohort: they are reported as reference values (not checkable offline) unless an
OpenAI-compatible backend is configured::

    neurips26 reproduce ncp-tom --set backend=openai --set base_url=http://localhost:8000/v1 --set model=NAME

(the key comes from ``OPENAI_API_KEY``; it is never stored in the config or the results).
Backend failures are ``error`` episodes, left out of the rates and counted; after
``max_consecutive_errors`` of them in a row (a dead or garbled endpoint) the rest of that setting is
recorded as errors without further calls. A claim with nothing to compare (no FB episodes, e.g. at
``n_instances=1`` or when every LLM episode errored) is ``not checkable``, never a verdict on NaN.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field, ValidationInfo, field_validator

from neurips26.backends import ChatParams, UsageMeter, make_backend
from neurips26.backends.openai_compat import check_base_url
from neurips26.harness import ExperimentConfig, Outcome, RunContext
from neurips26.harness import claims as C

from .agent import SETTINGS, run_llm_episode, scripted_agent
from .baselines import EpisodeResult, new_episode, no_tom_plan, oracle_plan, random_plan, score_plan, step_cap
from .goals import GOAL_TYPES
from .scoring import summary, tb_fb_gap
from .tasks import CONTEXTS, generate_instances, load_jsonl, save_jsonl
from .world import all_actions, apply_action

PAPER_GPT5_AGENTIC = 0.80
MIN_GPT5_EPISODES = 100
"""Scored agentic episodes needed to check the ≈80% claim: at n = 100 the binomial standard error
at p = 0.8 is 0.04, so two of them stay inside the ±0.10 tolerance; fewer is mostly noise."""


class Config(ExperimentConfig):
    """NCP-ExploreToM reproduction settings."""

    n_instances: int = Field(600, ge=1, description="task instances (paper: 600)")
    max_plan_length: int = Field(6, ge=1, le=9, description="oracle search depth; deeper instances are rejected")
    extra_steps: int = Field(3, ge=0, le=20, description="step cap = minimal plan length + extra_steps (brief: 3)")
    second_order: bool = Field(True, description="include second-order goal types (TB2, FB2)")
    random_repeats: int = Field(5, ge=1, le=100, description="random-agent episodes per instance")
    pipeline_instances: int = Field(60, ge=0, description="instances on which scripted baselines also go "
                                                          "through the LLM chat loop (both settings)")
    n_boot: int = Field(2000, ge=100, description="bootstrap resamples for gap intervals")
    backend: Literal["none", "openai", "transformers"] = Field(
        "none", description="LLM backend: none (baselines only), openai (any compatible server), transformers")
    model: str = Field("", validate_default=True, description="model name for backend=openai")
    base_url: str = Field("", description="OpenAI-compatible base URL (default: OPENAI_BASE_URL or OpenAI)")
    model_path: str = Field("", validate_default=True, description="local model folder for backend=transformers")
    llm_instances: int = Field(600, ge=1, description="instances given to the LLM (the first k; balanced)")
    settings: list[Literal["one_shot", "agentic"]] = Field(["agentic", "one_shot"], min_length=1,
                                                            description="LLM settings to run")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="sampling temperature (brief: 0)")
    max_tokens: int = Field(256, ge=1, description="reply length limit in tokens")
    timeout_s: float = Field(60.0, gt=0, description="per-request timeout in seconds")
    max_retries: int = Field(4, ge=0, le=10, description="retries on timeouts, 429 and 5xx")
    cache_dir: str = Field("", description="reply cache folder ('' = <run folder>/reply_cache)")
    reasoning_model: bool = Field(False, description="OpenAI reasoning model (o-series, GPT-5): send "
                                                     "max_completion_tokens=max_tokens and no temperature")
    max_consecutive_errors: int = Field(5, ge=1, description="after this many backend-error episodes in a row "
                                                             "the rest of that setting is recorded as errors "
                                                             "without calling the backend (a dead endpoint)")

    # field validators (not a model validator) so the CLI's one-line error names the key
    @field_validator("model")
    @classmethod
    def _openai_needs_model(cls, v: str, info: ValidationInfo) -> str:
        if info.data.get("backend") == "openai" and not v:
            raise ValueError("backend=openai needs model (e.g. --set model=gpt-5)")
        return v

    @field_validator("model_path")
    @classmethod
    def _transformers_needs_path(cls, v: str, info: ValidationInfo) -> str:
        if info.data.get("backend") == "transformers" and not v:
            raise ValueError("backend=transformers needs model_path (a folder written by save_pretrained)")
        return v

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        return check_base_url(v) if v else v

    @field_validator("settings", mode="before")
    @classmethod
    def _settings_list(cls, v: object) -> object:
        """Accept ``--set settings=agentic`` or ``settings=agentic,one_shot`` as well as a JSON list."""
        return [x.strip() for x in v.split(",")] if isinstance(v, str) else v


    @classmethod
    def full(cls) -> "Config":
        """Paper scale: 600 instances, GPT-5 through the OpenAI API, agentic and one-shot."""
        return cls(backend="openai", model="gpt-5", reasoning_model=True, max_tokens=8192, llm_instances=600,
                   settings=["agentic", "one_shot"])


def _plot(per_agent: dict[str, list[EpisodeResult]], gaps: dict[str, dict], lengths_by_type: dict, ctx: RunContext,
          types: tuple[str, ...]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents = list(per_agent)
    fig, axes = plt.subplots(1, len(agents), figsize=(3.6 * len(agents), 3.3), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], agents):
        s = summary(per_agent[name])["by_type_length"]
        for t in types:
            pts = sorted((int(k.split("@")[1]), v["rate"], v["n"]) for k, v in s.items() if k.split("@")[0] == t)
            if pts:
                x, y, n = zip(*pts)
                ax.plot(x, y, marker="o", ls="-" if t.startswith("TB") else "--", label=t)
        ax.set_title(name)
        ax.set_xlabel("minimal plan length")
        ax.set_ylim(-0.05, 1.05)
    axes[0][0].set_ylabel("success rate")
    labelled = [ax for ax in axes[0] if ax.get_legend_handles_labels()[1]]  # an all-error agent plots nothing
    if labelled:
        labelled[-1].legend(fontsize=8)
    fig.suptitle("Success by goal type × minimal plan length")
    ctx.save_figure("success_by_type_and_length", fig)

    fig, ax = plt.subplots(figsize=(5.5, 3.3))
    names = list(gaps)
    xs = np.arange(len(names))
    for off, key, label in ((-0.18, "overall", "overall"), (0.18, "matched", "at equal plan length")):
        vals = [gaps[n][key] for n in names]
        err = np.array([[gaps[n][key] - gaps[n][key + "_ci"][0], gaps[n][key + "_ci"][1] - gaps[n][key]]
                        for n in names]).T
        ax.bar(xs + off, vals, width=0.36, yerr=err, capsize=3, label=label)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(xs, names)
    ax.set_ylabel("TB − FB success")
    ax.legend(fontsize=8)
    ax.set_title("True- vs false-belief gap (95% bootstrap CI)")
    ctx.save_figure("tb_fb_gap", fig)

    fig, ax = plt.subplots(figsize=(5.5, 3.3))
    width = 0.8 / len(types)
    all_l = sorted({ell for t in types for ell in lengths_by_type[t]})
    for k, t in enumerate(types):
        counts = [lengths_by_type[t].count(ell) for ell in all_l]
        ax.bar(np.array(all_l) + (k - (len(types) - 1) / 2) * width, counts, width=width, label=t)
    ax.set_xlabel("minimal plan length (oracle)")
    ax.set_ylabel("instances")
    ax.legend(fontsize=8)
    ax.set_title("FB goals need longer plans")
    ctx.save_figure("plan_length_by_goal_type", fig)


NO_TOM_STATEMENT = "A no-ToM agent (put the object where the goal says) succeeds on no false-belief goal."
NO_TOM_PAPER = "0 (an agent that ignores beliefs cannot induce a false one)"


def _gap_claim(id: str, statement: str, *, ci: list[float], measured: dict, tolerance: str, reason: str,
               paper_value: str, note: str = "", matched: bool = False) -> C.Claim:
    """A "TB − FB gap > 0" claim; ``not checkable`` (not a false "does not hold") when a side had no
    episodes, so the gap and its interval are NaN."""
    if not np.isfinite(ci[0]):
        return C.not_checkable(id, statement, paper_value=paper_value,
                               reason="nothing to compare at this scale: no scored TB or no scored FB episodes"
                                      + (" at a shared minimal plan length" if matched else "")
                                      + " (too few instances, or every episode was a backend error)",
                               full_scale="the quick configuration (600 instances) has both at every length 1-3",
                               note=note)
    return C.check(id, statement, paper_value=paper_value, measured=measured, holds=bool(ci[0] > 0),
                   tolerance=tolerance, reason=reason, note=note)


def run(config: Config, ctx: RunContext) -> Outcome:
    """Generate the instance set, run the agents, and check the issue's claims."""
    types = GOAL_TYPES if config.second_order else ("TB1", "FB1")
    t0 = time.perf_counter()
    generated, rejected = generate_instances(config.n_instances, seed=ctx.seed, goal_types=types,
                                             max_depth=config.max_plan_length)
    t_gen = time.perf_counter() - t0
    # export / import round trip: the claims below are measured on the re-imported set
    out_dir = Path(ctx.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    instances = load_jsonl(save_jsonl(generated, out_dir / "instances.jsonl"))
    roundtrip_ok = [i.to_dict() for i in instances] == [g.to_dict() for g in generated]

    per_agent: dict[str, list[EpisodeResult]] = {"oracle": [], "no_tom": [], "random": []}
    rng = ctx.child_rng(1)
    t1 = time.perf_counter()
    for inst in ctx.track(instances, "baselines"):
        cap = step_cap(inst, config.extra_steps)
        per_agent["oracle"].append(score_plan(inst, oracle_plan(inst), cap=cap, agent="oracle"))
        per_agent["no_tom"].append(score_plan(inst, no_tom_plan(inst), cap=cap, agent="no_tom"))
        for _ in range(config.random_repeats):
            per_agent["random"].append(score_plan(inst, random_plan(inst, rng, cap), cap=cap, agent="random"))
    t_base = time.perf_counter() - t1

    # the same baselines through the LLM chat loop (prompt, strict parse, tracker) must agree
    agree, n_pipe = 0, 0
    for inst in instances[:config.pipeline_instances]:
        cap = step_cap(inst, config.extra_steps)
        for name, plan in (("oracle", oracle_plan(inst)), ("no_tom", no_tom_plan(inst))):
            direct = score_plan(inst, plan, cap=cap).success
            for setting in SETTINGS:
                ep = run_llm_episode(inst, scripted_agent(plan, setting, name), setting, cap=cap)
                agree += ep.success == direct
                n_pipe += 1

    # optional LLM agent
    llm_name, usage = "", UsageMeter()
    if config.backend != "none":
        cache = config.cache_dir or str(Path(ctx.out_dir) / "reply_cache")
        backend = make_backend(config.backend, model=config.model, base_url=config.base_url,
                               model_path=config.model_path, cache_dir=cache, device=ctx.device,
                               timeout_s=config.timeout_s, max_retries=config.max_retries,
                               reasoning=config.reasoning_model)
        llm_name = backend.name
        params = ChatParams(temperature=config.temperature, max_tokens=config.max_tokens, seed=ctx.seed)
        for setting in config.settings:
            eps, streak, last_error = [], 0, ""
            for inst in ctx.track(instances[:config.llm_instances], f"LLM {setting}"):
                agent = f"{llm_name} ({setting})"
                if streak >= config.max_consecutive_errors:  # a dead endpoint: stop calling it
                    ep = new_episode(inst, agent, setting)
                    ep.status, ep.error = "error", (f"skipped: {streak} backend errors in a row "
                                                    f"(max_consecutive_errors); last: {last_error}")
                else:
                    ep = run_llm_episode(inst, backend, setting, cap=step_cap(inst, config.extra_steps),
                                         params=params, agent=agent)
                    streak = streak + 1 if ep.status == "error" else 0
                    last_error = ep.error
                eps.append(ep)
            per_agent[f"llm_{setting}"] = eps
        with open(out_dir / "llm_episodes.jsonl", "w") as fh:  # every LLM episode, for auditing
            for k in (k for k in per_agent if k.startswith("llm_")):
                fh.writelines(json.dumps(e.to_dict(), sort_keys=True) + "\n" for e in per_agent[k])
        for eps in (v for k, v in per_agent.items() if k.startswith("llm_")):
            usage.calls += sum(e.calls for e in eps)
            usage.cache_hits += sum(e.cache_hits for e in eps)
            usage.prompt_tokens += sum(e.prompt_tokens for e in eps)
            usage.completion_tokens += sum(e.completion_tokens for e in eps)
            usage.latency_s += sum(e.latency_s for e in eps)
            usage.errors += sum(e.status == "error" for e in eps)
        usage.by_model = {llm_name: usage.calls}

    summaries = {k: summary(v) for k, v in per_agent.items()}
    gaps = {k: tb_fb_gap(v, ctx.child_rng(2 + j), config.n_boot) for j, (k, v) in enumerate(per_agent.items())
            if k != "oracle"}
    lengths_by_type = {t: [i.min_plan_length for i in instances if i.goal_type == t] for t in types}
    counts = {t: len(lengths_by_type[t]) for t in types}
    contexts = sorted({i.context for i in instances} | set(CONTEXTS))
    cell_counts = {f"{t}/{c}": sum(1 for i in instances if i.goal_type == t and i.context == c)
                   for t in types for c in contexts}
    context_counts = {c: sum(1 for i in instances if i.context == c) for c in contexts}

    def spread(d: dict) -> int:
        return max(d.values()) - min(d.values())
    _plot(per_agent, gaps, lengths_by_type, ctx, types)

    n = len(instances)
    solvable = sum(i.min_plan_length is not None and i.min_plan_length >= 1 for i in instances)
    oracle_rate = summaries["oracle"]["success"]
    claims = [
        C.check("instances_solvable_balanced",
                f"The benchmark has {config.n_instances} task instances (paper: 600) balanced across goal types "
                "and contexts; every instance is solvable (oracle plan within the search depth).",
                paper_value="600 instances", measured={"n": n, "solvable": solvable, "per_goal_type": counts,
                                                        "per_context": context_counts,
                                                        "cell_min": min(cell_counts.values()),
                                                        "cell_max": max(cell_counts.values()),
                                                        "rejected_draws": rejected, "jsonl_roundtrip": roundtrip_ok},
                holds=bool(n == config.n_instances and solvable == n and roundtrip_ok
                           and spread(counts) <= 1 and spread(context_counts) <= 1 and spread(cell_counts) <= 1),
                tolerance="n as configured, all solvable; goal-type counts, context counts and goal-type × "
                          "context cells each differ by <= 1; JSONL round trip exact",
                reason="exact structural property of the generator (rejection sampling)",
                note="Scenes are generated procedurally (the paper's 600 instances are not public); "
                     "the generator rejects unsolvable, already-true, contradictory and duplicate draws."),
        C.close("oracle_replay",
                "Replaying the oracle's stored plans (after JSONL export/import) satisfies the tracker on every instance.",
                measured=oracle_rate, target=1.0, abs_tol=0.0, paper_value=None,
                reason="deterministic tracker: any failure is a bug, so no tolerance"),
        C.at_most("no_tom_fb_zero", NO_TOM_STATEMENT, measured=summaries["no_tom"]["fb"], bound=0.0,
                  paper_value=NO_TOM_PAPER,
                  reason="exact: after MOVE o TO L the object is at L, so 'believes o at L while it is not' "
                         "cannot hold; no sampling involved")
        if np.isfinite(summaries["no_tom"]["fb"]) else
        C.not_checkable("no_tom_fb_zero", NO_TOM_STATEMENT, paper_value=NO_TOM_PAPER,
                        reason="no false-belief instance at this n_instances",
                        full_scale="any n_instances >= 2 includes FB goals (the generator alternates TB and FB)"),
    ]
    for name in ("no_tom", "random"):
        g = gaps[name]
        claims.append(_gap_claim(
            f"tb_gt_fb_overall_{name}",
            f"The abstract's pattern 'every model and humans do better on true-belief than false-belief goals' "
            f"also appears without any theory of mind: here the ToM-free {name} agent, overall (this tests "
            f"the benchmark's structure, not the paper's models).",
            paper_value="TB > FB for every model and humans",
            measured={"tb": summaries[name]["tb"], "fb": summaries[name]["fb"], "gap": g["overall"],
                      "ci95": g["overall_ci"]},
            ci=g["overall_ci"],
            tolerance="95% bootstrap CI of TB − FB lies above 0",
            reason=f"{summaries[name]['n']} episodes on {n} instances; bootstrap over instances "
                   "(repeats of one instance averaged first)",
            note="This agent has no theory of mind, so any gap it shows comes from the task's structure "
                 "(FB goals need longer plans; the set of satisfying states differs), not from reasoning about "
                 "minds; compare the equal-length claim below."))
    g = gaps["random"]
    claims.append(_gap_claim(
        "tb_gt_fb_equal_length_random",
        "TB > FB persists when TB and FB goals are compared at equal minimal plan length (random agent).",
        paper_value="TB > FB (abstract; lengths not controlled there as far as we know)",
        measured={"matched_gap": g["matched"], "ci95": g["matched_ci"], "lengths": g["lengths"],
                  "per_length": g["per_length"]},
        ci=g["matched_ci"], matched=True,
        tolerance="95% bootstrap CI of the length-matched TB − FB gap lies above 0",
        reason=f"stratified bootstrap over instances within length × TB/FB cells ({summaries['random']['n']} "
               "random episodes)",
        note="A gap <= 0 here means that, at equal minimal plan length, FB goals are no harder than TB goals "
             "for an agent without ToM (a short FB goal is met by many action sequences: any move of the object "
             "the believer does not see), so a TB > FB gap in an agent's overall rate does not by itself show "
             "a ToM asymmetry; the paper's comparison should be read against plan length."))

    llm_keys = [k for k in per_agent if k.startswith("llm_")]
    full_scale = ("set backend=openai, base_url and model (key from OPENAI_API_KEY); the full configuration "
                  "runs GPT-5 on all 600 instances in the agentic and one-shot settings")
    is_gpt5 = config.backend == "openai" and config.model.lower().startswith("gpt-5")
    n_gpt5 = summaries["llm_agentic"]["n"] if "llm_agentic" in per_agent else 0
    if is_gpt5 and "llm_agentic" in per_agent and n_gpt5 >= MIN_GPT5_EPISODES:
        claims.append(C.close("gpt5_agentic_success",
                              "GPT-5 succeeds on about 80% of tasks in the agentic setting (abstract).",
                              measured=summaries["llm_agentic"]["success"], target=PAPER_GPT5_AGENTIC, abs_tol=0.10,
                              reason="the paper says 'approximately 80%'; our instances are regenerated, not the "
                                     "paper's, so ±0.10",
                              note=f"{summaries['llm_agentic']['errors']} backend errors left out of the rate."))
    else:
        claims.append(C.not_checkable("gpt5_agentic_success",
                                      "GPT-5 succeeds on about 80% of tasks in the agentic setting (abstract).",
                                      paper_value=PAPER_GPT5_AGENTIC,
                                      reason="no GPT-5 offline" if not llm_keys else
                                      f"only {n_gpt5} scored agentic episodes (< {MIN_GPT5_EPISODES}; backend "
                                      f"errors left out): too few to test ±0.10" if is_gpt5 else
                                      f"the configured model is {config.model or config.model_path!r} "
                                      f"({config.backend}), not GPT-5",
                                      full_scale=full_scale))
    claims.append(C.not_checkable("gpt5_only_model_above_humans",
                                  "GPT-5 is the only one of six frontier models to outperform the human participants, "
                                  "but is less robust than humans across contexts (abstract).",
                                  paper_value="GPT-5 > humans > other five models; humans more robust",
                                  reason="needs the six frontier models and the paper's human cohort",
                                  full_scale=full_scale + "; per-context spread is reported as context_spread"))
    if llm_keys:
        for k in llm_keys:
            gk = gaps[k]
            claims.append(_gap_claim(f"tb_gt_fb_{k}",
                                  f"Models do better on TB than FB goals (abstract) — {llm_name}, {k[4:]} setting.",
                                  paper_value="TB > FB for every model", measured={
                                      "tb": summaries[k]["tb"], "fb": summaries[k]["fb"], "gap": gk["overall"],
                                      "ci95": gk["overall_ci"], "matched_gap": gk["matched"],
                                      "matched_ci95": gk["matched_ci"]},
                                  ci=gk["overall_ci"], tolerance="95% bootstrap CI of TB − FB above 0",
                                  reason=f"{summaries[k]['n']} scored episodes (backend errors left out)"))
    else:
        claims.append(C.not_checkable("tb_gt_fb_models",
                                      "All six models, like humans, do better on TB than FB goals (abstract).",
                                      paper_value="TB > FB for every model and humans",
                                      reason="no frontier model offline", full_scale=full_scale))
    loop_statement = ("Our LLM-agent loop (prompt, strict parse, tracker scoring) scores scripted oracle and "
                      "no-ToM agents exactly as direct replay does, in both settings.")
    claims.append(C.not_checkable("chat_loop_agrees_with_tracker", loop_statement, paper_value=None,
                                  reason="pipeline_instances=0: no scripted episodes were run",
                                  full_scale="the quick configuration runs 60 instances through the loop")
                  if n_pipe == 0 else
                  C.check("chat_loop_agrees_with_tracker", loop_statement, paper_value=None,
                          measured={"agree": agree, "episodes": n_pipe}, holds=bool(agree == n_pipe),
                          tolerance="all episodes agree", reason="deterministic pipeline check, no tolerance"))

    # throughput of the tracker on the random agent's actions (a performance figure, not a claim)
    sample = instances[: min(50, n)]
    t2, applied = time.perf_counter(), 0
    for inst in sample:
        state = inst.initial
        for a in all_actions(inst.scene):
            state = apply_action(inst.scene, state, a).state
            applied += 1
    tracker_rate = applied / (time.perf_counter() - t2)

    metrics = {
        "n_instances": n, "goal_type_counts": counts, "cell_counts": cell_counts, "rejected_draws": rejected,
        "min_plan_length_mean": {t: float(np.mean(v)) if v else float("nan") for t, v in lengths_by_type.items()},
        "summaries": summaries, "gaps": gaps, "pipeline_agreement": [agree, n_pipe],
        "timing_s": {"generate_and_oracle": t_gen, "baselines": t_base}, "tracker_actions_per_s": tracker_rate,
        "llm": {"backend": config.backend, "name": llm_name, "usage": usage.to_dict()},
        "reference_paper": {"gpt5_agentic_success": PAPER_GPT5_AGENTIC},
    }
    notes = (
        "Inferred (the paper's code and data are not public): the disembodied mover, the witness rules for "
        "cross-room moves (the source room only sees the object carried out), the TB/FB predicates for second-"
        "order goals (the 'fact' is the inner character's actual belief), the scene sampler and the themes. "
        "Baselines: oracle = BFS shortest plan; no-ToM = MOVE the object to the goal location; random = uniform "
        f"actions with DONE as a choice, {config.random_repeats} episodes per instance. Step cap = minimal plan "
        f"length + {config.extra_steps}. Instances are written to instances.jsonl in the run folder."
        + (f" LLM usage: {json.dumps(usage.to_dict())}." if llm_keys else ""))
    return Outcome(metrics=metrics, claims=claims, notes=notes)
