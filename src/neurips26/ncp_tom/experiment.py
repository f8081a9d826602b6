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
from neurips26.harness import ExperimentConfig, Outcome, Resources, RunContext
from neurips26.harness import claims as C
from neurips26.harness.config import model_label, resolve_auto_backend

from .agent import SETTINGS, run_choice_episode, run_llm_episode, scripted_agent
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

    n_instances: int = Field(600, ge=1, le=20_000, description="task instances per seed (paper: 600)")
    n_seeds: int = Field(3, ge=1, le=20, description="independently generated instance sets the random claims "
                                                    "are judged over")
    max_plan_length: int = Field(6, ge=1, le=9, description="oracle search depth; deeper instances are rejected")
    extra_steps: int = Field(3, ge=0, le=20, description="step cap = minimal plan length + extra_steps")
    second_order: bool = Field(True, description="include second-order goal types (TB2, FB2)")
    random_repeats: int = Field(5, ge=1, le=100, description="random-agent episodes per instance")
    pipeline_instances: int = Field(60, ge=0, le=20_000, description="instances on which scripted baselines also go "
                                                          "through the LLM chat loop (both settings)")
    n_boot: int = Field(2000, ge=100, le=100_000, description="bootstrap resamples for gap intervals")
    backend: Literal["auto", "none", "openai", "transformers"] = Field(
        "none", description="LLM backend: auto (the installed smollm2-135m via transformers, else none; the quick "
                            "default), none (baselines only), openai (any compatible server), transformers")
    model: str = Field("", validate_default=True, description="model name for backend=openai")
    base_url: str = Field("", description="OpenAI-compatible base URL (default: OPENAI_BASE_URL or OpenAI)")
    model_path: str = Field("", validate_default=True, description="local model folder (or a model id such as "
                            "smollm2-135m) for backend=transformers; empty: model")
    llm_instances: int = Field(600, ge=1, le=20_000, description="instances given to the LLM (the first k; balanced)")
    settings: list[Literal["one_shot", "agentic"]] = Field(["agentic", "one_shot"], min_length=1,
                                                            description="LLM settings to run")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="sampling temperature (0: deterministic replies)")
    max_tokens: int = Field(256, ge=1, le=200_000, description="reply length limit in tokens")
    timeout_s: float = Field(60.0, gt=0, le=3600, description="per-request timeout in seconds")
    max_retries: int = Field(4, ge=0, le=10, description="retries on timeouts, 429 and 5xx")
    cache_dir: str = Field("", description="reply cache folder ('' = <run folder>/reply_cache)")
    reasoning_model: bool = Field(False, description="OpenAI reasoning model (o-series, GPT-5): send "
                                                     "max_completion_tokens=max_tokens and no temperature")
    decoding: Literal["auto", "free", "constrained"] = Field(
        "auto", description="LLM replies: free text parsed tolerantly (openai default), or constrained: the most "
                            "probable grammatical action by the local model's log-probabilities (transformers "
                            "default; no malformed reply)")
    local_instances: int = Field(10, ge=1, le=20_000, description="instances given to a local model with constrained "
                                                                   "decoding (CPU-bound: ~7 CPU-s per episode for "
                                                                   "SmolLM2-135M on one thread)")
    model_sha256: str = Field("", description="set before any work: SHA-256 of the local model's weights "
                              "(from its install manifest); part of the config hash")
    backend_auto: bool = Field(False, description="set before any work: backend was auto (resolved)")
    max_consecutive_errors: int = Field(5, ge=1, le=10_000, description="after this many backend-error episodes in a row "
                                                             "the rest of that setting is recorded as errors "
                                                             "without calling the backend (a dead endpoint)")

    @property
    def local_model(self) -> str:
        """For ``backend=transformers``: the folder or model id to load (``model_path``, else
        ``model``); ``""`` for other backends (as :class:`~neurips26.harness.config.ChatBackendConfig`)."""
        return (self.model_path or self.model) if self.backend == "transformers" else ""

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
        if info.data.get("backend") == "transformers" and not v and not info.data.get("model"):
            raise ValueError("backend=transformers needs model (a model id such as smollm2-135m) or model_path "
                             "(a folder written by save_pretrained)")
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


    def resources(self) -> Resources:
        """An OpenAI-compatible endpoint without a base URL of its own needs ``OPENAI_API_KEY``;
        the offline configuration needs one CPU.

        ``hours`` is an estimate (inferred, not measured with a model): the offline part scaled from
        the quick run (31 CPU-s on seed 0 for 3 × 600 instances, mostly the oracle's search) by the
        number of instances generated, plus the LLM episodes, run one call at a time: a one-shot
        episode is one call, an agentic one about 5 (the mean oracle plan is ≈ 2.7 actions, the cap
        adds ``extra_steps``, plus DONE), at an assumed ~20 s per call for a reasoning model
        (thousands of reasoning tokens) or ~3 s otherwise. ``full()`` (GPT-5, both settings, 600
        instances): ≈ 3,600 calls, ≈ 20 h, almost all of it waiting on the endpoint."""
        needs_key = self.backend == "openai" and not self.base_url
        offline = 31.0 * self.n_instances * self.n_seeds / (600 * 3)
        calls = 0 if self.backend == "none" else self.llm_instances * sum(
            5 if s == "agentic" else 1 for s in self.settings)
        sec = offline + calls * (20.0 if self.reasoning_model else 3.0)
        if self.backend == "transformers" and self.decoding != "free":  # measured: ~7.5 CPU-s per episode
            sec = offline + 10.0 + 7.5 * min(self.llm_instances, self.local_instances) * len(self.settings)
        return Resources(num_cpus=1, hours=max(0.01, round(sec / 3600, 2)),
                         credentials=("OPENAI_API_KEY",) if needs_key else (),
                         on_cpu="the planner and environments (CPU); the model answers on its endpoint or the local backend")

    @classmethod
    def quick(cls) -> "Config":
        """The laptop configuration: ``backend=auto`` (the installed local model with constrained
        decoding on ``local_instances`` instances per setting, else the offline baselines only)."""
        return cls(backend="auto")

    @classmethod
    def full(cls) -> "Config":
        """Paper scale: 600 instances, GPT-5 through the OpenAI API, agentic and one-shot."""
        return cls(backend="openai", model="gpt-5", reasoning_model=True, max_tokens=8192, llm_instances=600,
                   settings=["agentic", "one_shot"])


def _plot(per_agent: dict[str, list[EpisodeResult]], gaps: dict[str, dict], lengths_by_type: dict, ctx: RunContext,
          types: tuple[str, ...]) -> None:
    """Three figures, the TB − FB gap (key figure) first; each agent keeps its colour."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.8), constrained_layout=True)
    names = list(gaps)
    xs = np.arange(len(names))
    for off, key, label, colour in ((-0.18, "overall", "overall", "C0"), (0.18, "matched", "at equal plan length", "C1")):
        vals = [gaps[n][key] for n in names]
        err = np.array([[gaps[n][key] - gaps[n][key + "_ci"][0], gaps[n][key + "_ci"][1] - gaps[n][key]]
                        for n in names]).T
        ax.bar(xs + off, vals, width=0.36, yerr=err, capsize=3, label=label, color=colour)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(xs, names)
    ax.set_ylabel("TB − FB success")
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title("True- vs false-belief gap (95% bootstrap CI), first seed")
    ctx.save_figure("tb_fb_gap", fig, caption=(
        "Success on true-belief minus false-belief goals for agents without theory of mind, overall (blue) and "
        "at equal minimal plan length (orange). The abstract reports TB > FB for every model and humans; here "
        "overall gaps appear without any ToM: the no-ToM agent never reaches an FB goal by construction, and "
        "the random agent's small gap reverses once plan length is matched."))

    agents = list(per_agent)
    fig, axes = plt.subplots(1, len(agents), figsize=(3.2 * len(agents) + 1, 3.6), sharey=True, squeeze=False,
                             constrained_layout=True)
    for ax, name in zip(axes[0], agents):
        s = summary(per_agent[name])["by_type_length"]
        for k, t in enumerate(types):
            pts = sorted((int(key.split("@")[1]), v["rate"], v["n"]) for key, v in s.items() if key.split("@")[0] == t)
            if pts:
                x, y, n = zip(*pts)
                ax.plot(x, y, marker="o", ls="-" if t.startswith("TB") else "--", color=f"C{k + 2}", label=t)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("minimal plan length")
        ax.set_ylim(-0.05, 1.05)
    axes[0][0].set_ylabel("success rate")
    labelled = [ax for ax in axes[0] if ax.get_legend_handles_labels()[1]]  # an all-error agent plots nothing
    if labelled:
        labelled[-1].legend(fontsize=7, loc="upper right")
    fig.suptitle("Success by goal type × minimal plan length", fontsize=10)
    ctx.save_figure("success_by_type_and_length", fig, caption=(
        "Success rate per goal type (solid: true belief, dashed: false belief) against the oracle's minimal plan "
        "length, one panel per agent. Compare TB and FB at the same length: the overall gap mixes lengths."))

    fig, ax = plt.subplots(figsize=(6, 3.6), constrained_layout=True)
    width = 0.8 / len(types)
    all_l = sorted({ell for t in types for ell in lengths_by_type[t]})
    for k, t in enumerate(types):
        counts = [lengths_by_type[t].count(ell) for ell in all_l]
        ax.bar(np.array(all_l) + (k - (len(types) - 1) / 2) * width, counts, width=width, label=t, color=f"C{k + 2}")
    ax.set_xlabel("minimal plan length (oracle)")
    ax.set_ylabel("instances")
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title("FB goals need longer plans")
    ctx.save_figure("plan_length_by_goal_type", fig, caption=(
        "Distribution of the oracle's minimal plan length per goal type on the first seed's instances: false-"
        "belief goals need longer plans, which alone makes them harder for any agent."))


NO_TOM_STATEMENT = "A no-ToM agent (put the object where the goal says) succeeds on no false-belief goal."
PAPER_SOURCE = "abstract"
BENCH_SOURCE = ("inferred: our generated benchmark; every world rule (witnesses, the disembodied mover, the "
                "TB/FB predicates) is reconstructed, the paper's rules and instances are not public")
LLM_FULL_SCALE = ("set backend=openai, base_url and model (key from OPENAI_API_KEY); the full configuration "
                  "runs GPT-5 on all 600 instances in the agentic and one-shot settings")


#: A TB > FB gap must be strictly positive: the bound sits just above 0 so that an interval
#: [0, x] (in particular [0, 0] from an agent with no success at all) never holds.
GAP_BOUND = 1e-9

MIN_MATCHED_CELL = 5
"""Instances needed in every length × TB/FB cell of the matched strata before the stratified
bootstrap interval is judged. Below it the percentile bootstrap is far too narrow: a cell of one
instance is never varied, and two TB successes against two FB failures at one length give the
zero-width interval [1, 1] (Fisher's exact test on those counts: p = 0.33); at 5 against 5 an
all-or-nothing split is already significant (p = 0.008). Set from that arithmetic, not from a
result: the quick run's random-agent cells hold 16 or more instances."""

LLM_GAP_CONTROL = ("the model's own false-belief (FB) goals at the same minimal plan lengths, same run and "
                   "instance set: the TB - FB success difference within each length stratum (weighted by its "
                   "episodes), so the control keeps the plan-length mix and removes only the true-belief "
                   "advantage; the overall gap, which mixes lengths (FB goals need longer plans), is in the note")


def _success_counts(episodes: list, lengths: list[int] | None = None) -> dict:
    """Successes and scored episodes on TB and FB goals (backend errors left out); with
    ``lengths``, only episodes whose minimal plan length is one of them (the matched strata)."""
    eps = [e for e in episodes if e.status != "error" and (lengths is None or e.min_plan_length in lengths)]
    tb = [e for e in eps if e.goal_type.startswith("TB")]
    fb = [e for e in eps if e.goal_type.startswith("FB")]
    return {"tb_success": sum(e.success for e in tb), "tb_n": len(tb),
            "fb_success": sum(e.success for e in fb), "fb_n": len(fb)}


def _gap_claim(id: str, statement: str, *, ci: list[float], gap: float, measured_note: str, reason: str,
               kind: str, source: str, paper_value: str, note: str = "", matched: bool = False,
               counts: dict | None = None, object: str = "toy", falsifiable_by: str = "",
               control: str = "", min_cell: int | None = None,
               full_scale: str = "the quick configuration (600 instances) has both at every length 1-3") -> C.Claim:
    """A "TB − FB gap > 0" claim judged from its 95% bootstrap interval: holds only when the
    whole interval lies strictly above 0 (:data:`GAP_BOUND`), does not hold when it lies wholly
    at or below 0 (so an FB control identical to TB, gap [0, 0], does not hold), inconclusive
    when it straddles 0. ``not checkable`` (not a false "does not hold") when a side had no
    episodes, so the gap and its interval are NaN, and when the agent succeeded on no episode at
    all (``counts``, for a matched gap counted within the matched strata): TB = FB = 0 is no
    evidence about a gap. With ``matched`` and ``min_cell`` (the smallest length × TB/FB cell,
    ``matched_min_cell`` of :func:`~neurips26.ncp_tom.scoring.tb_fb_gap`) below
    :data:`MIN_MATCHED_CELL`, the stratified interval is degenerate and the claim is
    ``inconclusive`` with the gap, the interval and the cell size as its measurement."""
    nc = dict(paper_value=paper_value, kind=kind, source=source, note=(measured_note + " " + note).strip(),
              object=object)
    if control:
        nc["control"] = control
    if falsifiable_by:
        nc["falsifiable_by"] = falsifiable_by
    if not np.isfinite(ci[0]):
        return C.not_checkable(id, statement,
                               reason="nothing to compare at this scale: no scored TB or no scored FB episodes"
                                      + (" at a shared minimal plan length" if matched else "")
                                      + " (too few instances, or every episode was a backend error)",
                               full_scale=full_scale, **nc)
    if counts is not None and counts["tb_success"] + counts["fb_success"] == 0:
        return C.not_checkable(id, statement,
                               reason=f"the agent succeeded on no episode (TB 0/{counts['tb_n']}, FB "
                                      f"0/{counts['fb_n']}): a gap of 0 - 0 is no evidence about TB vs FB",
                               full_scale="a model that reaches some goals (the full configuration runs GPT-5)",
                               **nc)
    extra = (f" Counts{' in the matched strata' if matched else ''}: TB {counts['tb_success']}/{counts['tb_n']}, "
             f"FB {counts['fb_success']}/{counts['fb_n']}." if counts is not None else "")
    if matched and min_cell is not None and min_cell < MIN_MATCHED_CELL:
        return C.check(id, statement, measured={"gap": gap, "interval": [ci[0], ci[1]], "smallest_cell": min_cell},
                       holds=None, paper_value=paper_value, kind=kind, source=source, object=object,
                       control=control, falsifiable_by=falsifiable_by,
                       tolerance="95% stratified bootstrap interval of the length-matched gap strictly above 0, "
                                 f"judged only when every length × TB/FB cell holds >= {MIN_MATCHED_CELL} instances",
                       reason=f"the smallest length × TB/FB cell holds {min_cell} instance(s) (< {MIN_MATCHED_CELL}): "
                              "the stratified bootstrap barely varies such a cell, so its interval "
                              f"[{ci[0]:.3f}, {ci[1]:.3f}] is degenerate (too narrow) and is not judged; "
                              "inconclusive",
                       note=(measured_note + extra + " " + note).strip())
    return C.at_least(id, statement, measured=gap, bound=GAP_BOUND, interval=(ci[0], ci[1]), paper_value=paper_value,
                      domain=(-1, 1), kind=kind, source=source, reason=reason, object=object,
                      falsifiable_by=falsifiable_by, control=control,
                      note=(measured_note + extra + " " + note).strip())


def _run_baselines(instances: list, config: Config, rng: np.random.Generator, ctx: RunContext,
                   label: str) -> dict[str, list[EpisodeResult]]:
    """Oracle, no-ToM and random episodes on every instance (random: ``random_repeats`` each)."""
    per_agent: dict[str, list[EpisodeResult]] = {"oracle": [], "no_tom": [], "random": []}
    for inst in ctx.track(instances, label):
        cap = step_cap(inst, config.extra_steps)
        per_agent["oracle"].append(score_plan(inst, oracle_plan(inst), cap=cap, agent="oracle"))
        per_agent["no_tom"].append(score_plan(inst, no_tom_plan(inst), cap=cap, agent="no_tom"))
        for _ in range(config.random_repeats):
            per_agent["random"].append(score_plan(inst, random_plan(inst, rng, cap), cap=cap, agent="random"))
    return per_agent


def _make_backend(config: Config, cache_dir: str | Path | None = None, device: str = "cpu"):
    """The configured chat backend (``None`` for ``backend=none``)."""
    if config.backend == "none" or _constrained(config):
        return None
    return make_backend(config.backend, model=config.model, base_url=config.base_url,
                        model_path=config.model_path, cache_dir=cache_dir, device=device,
                        timeout_s=config.timeout_s, max_retries=config.max_retries,
                        reasoning=config.reasoning_model)


def _constrained(config: Config) -> bool:
    """Whether the LLM arm reads a local model's log-probabilities (constrained decoding)."""
    return config.backend == "transformers" and config.decoding != "free"


def _run_constrained(config: Config, ctx: RunContext, instances: list, per_agent: dict,
                     out_dir: Path) -> tuple[str, UsageMeter, dict]:
    """The local model as the agent with constrained decoding (:func:`run_choice_episode`) on the
    first ``min(llm_instances, local_instances)`` instances; one torch thread."""
    from neurips26.backends.local_lm import LocalLM

    t0 = time.process_time()
    lm = LocalLM(config.local_model, threads=1)
    load_s = time.process_time() - t0
    name = f"{model_label(config)} (log-prob choice)"
    n = min(config.llm_instances, config.local_instances)
    for setting in config.settings:
        per_agent[f"llm_{setting}"] = [
            run_choice_episode(inst, lm, setting, cap=step_cap(inst, config.extra_steps), agent=f"{name} ({setting})")
            for inst in ctx.track(instances[:n], f"local model, {setting}")]
    with open(out_dir / "llm_episodes.jsonl", "w") as fh:
        for k in (k for k in per_agent if k.startswith("llm_")):
            fh.writelines(json.dumps(e.to_dict(), sort_keys=True) + "\n" for e in per_agent[k])
    usage = UsageMeter(calls=lm.usage.calls, prompt_tokens=lm.usage.prompt_tokens,
                       completion_tokens=lm.usage.candidate_tokens)
    usage.by_model = {name: lm.usage.calls}
    cost = {"model": str(lm.folder), "instances": n, "load_cpu_s": round(load_s, 2), **lm.usage.to_dict(),
            "decoding": "constrained: most probable grammatical action (mean log-probability per token); "
                        "malformed share 0 by construction"}
    return name, usage, cost


def _vs_no_tom(per_agent: dict, llm_name: str) -> list:
    """The model's agentic success against the no-ToM baseline on the same instances (paired)."""
    claims = []
    for k in (k for k in per_agent if k.startswith("llm_")):
        eps = {e.instance_id: e for e in per_agent[k] if e.status != "error"}
        base = {e.instance_id: e for e in per_agent["no_tom"]}
        ids = [i for i in eps if i in base]
        statement = (f"The model ({llm_name}, {k[4:]} setting) succeeds more often than the no-ToM baseline (put "
                     "the object where the goal says) on the same instances.")
        src = "inferred: the abstract compares models with humans; a ToM-free baseline is the floor any ToM must beat"
        if len(ids) < 2:
            claims.append(C.not_checkable(f"{k}_beats_no_tom", statement, paper_value=None, kind="reconstruction",
                                          object="real", source=src, reason=f"{len(ids)} scored episodes",
                                          full_scale="more instances"))
            continue
        d = np.array([float(eps[i].success) - float(base[i].success) for i in ids])
        mean, iv = C.mean_interval(d, domain=(-1, 1))
        claims.append(C.at_least(
            f"{k}_beats_no_tom", statement, measured=mean, bound=GAP_BOUND, interval=iv, domain=(-1, 1),
            kind="reconstruction", object="real", source=src,
            control="the no-ToM baseline on the same instances (paired difference of success)",
            reason=f"paired difference over {len(ids)} instances, 95% t-interval, strictly above 0",
            note=f"model success {np.mean([eps[i].success for i in ids]):.2f}, no-ToM "
                 f"{np.mean([base[i].success for i in ids]):.2f}, oracle 1.00 on these instances."))
    return claims


def preflight(config: Config) -> None:
    """Before any work: one short call to the configured backend (``none``: nothing to check).

    Raises:
        BackendError: the endpoint or model does not answer (one line: kind, URL, model, what failed).
    """
    from neurips26.backends import preflight as ping

    backend = _make_backend(resolve_auto_backend(config))
    if backend is not None:
        ping(backend, timeout_s=min(10.0, config.timeout_s))


def run(config: Config, ctx: RunContext) -> Outcome:
    """Table of contents: check the backend, build the benchmark over seeds, then one function per
    claim group."""
    from neurips26.backends import preflight as ping

    config = resolve_auto_backend(config)  # backend=auto: the installed local model, else none (the CLI did it already)
    cache = config.cache_dir or str(Path(ctx.out_dir) / "reply_cache")
    if _constrained(config):
        from neurips26.backends.local_lm import model_folder

        model_folder(config.local_model)  # a missing model stops here, before any work
    backend = _make_backend(config, cache, ctx.device)
    if backend is not None:
        ping(backend, timeout_s=min(10.0, config.timeout_s))  # a dead endpoint stops here, before any work
    types = GOAL_TYPES if config.second_order else ("TB1", "FB1")
    seeds = [ctx.seed + k for k in range(config.n_seeds)]
    t0 = time.perf_counter()
    sets = []
    for s in ctx.track(seeds, "generate instance sets (one per seed)"):
        generated, rejected = generate_instances(config.n_instances, seed=s, goal_types=types,
                                                 max_depth=config.max_plan_length)
        sets.append((generated, rejected))
    t_gen = time.perf_counter() - t0
    out_dir = Path(ctx.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # export / import round trip: the first seed's claims are measured on the re-imported set
    instances = load_jsonl(save_jsonl(sets[0][0], out_dir / "instances.jsonl"))
    roundtrip_ok = [i.to_dict() for i in instances] == [g.to_dict() for g in sets[0][0]]
    t1 = time.perf_counter()
    runs = [_run_baselines(instances if k == 0 else sets[k][0], config, np.random.default_rng([s, 1]), ctx,
                           f"baselines, seed {s}") for k, s in enumerate(seeds)]
    t_base = time.perf_counter() - t1
    per_agent = runs[0]
    metrics: dict = {"seeds": seeds, "timing_s": {"generate_and_oracle": t_gen, "baselines": t_base}}

    claims = _benchmark_is_well_formed(config, instances, sets[0][1], roundtrip_ok, per_agent, types, metrics)
    claims += _no_tom_cannot_induce_false_beliefs(runs, seeds)
    gaps_by_seed = [{k: tb_fb_gap(v, np.random.default_rng([s, 2 + j]), config.n_boot)
                     for j, (k, v) in enumerate(r.items()) if k != "oracle"} for s, r in zip(seeds, runs)]
    claims += _tb_fb_gap_without_theory_of_mind(runs, gaps_by_seed, seeds)
    claims += _chat_loop_agrees_with_tracker(config, instances)
    llm_cost: dict = {}
    if _constrained(config):
        llm_name, usage, llm_cost = _run_constrained(config, ctx, instances, per_agent, out_dir)
    else:
        llm_name, usage = _run_llm_agent(config, ctx, instances, per_agent, out_dir, backend)
    gaps = dict(gaps_by_seed[0])
    gaps.update({k: tb_fb_gap(v, ctx.child_rng(10 + j), config.n_boot)
                 for j, (k, v) in enumerate(per_agent.items()) if k.startswith("llm_")})
    summaries = {k: summary(v) for k, v in per_agent.items()}
    use = None
    if _constrained(config):
        use = C.BackendUse(calls=usage.calls, failed=0, what=f"local model {config.local_model} (log-probabilities)",
                           prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                           model=model_label(config))
    elif backend is not None:
        from neurips26.backends.preflight import describe

        # a failed call ends its episode: error episodes (skipped ones included) are the failed calls
        use = C.BackendUse(calls=usage.calls + usage.errors, failed=usage.errors, what=describe(backend),
                           prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                           model=model_label(config))
    claims += _unless_calls_ok(_paper_claims_need_frontier_models(config, summaries, gaps, llm_name, per_agent), use)
    if llm_name:
        claims += _vs_no_tom(per_agent, llm_name)
    elif config.backend_auto:
        from neurips26.harness.config import NO_LOCAL_MODEL

        claims += [C.not_checkable(f"llm_{st}_beats_no_tom", f"The model ({st} setting) succeeds more often than the "
                                   "no-ToM baseline (put the object where the goal says) on the same instances.",
                                   paper_value=None, kind="reconstruction", object="real", reason=NO_LOCAL_MODEL,
                                   source="inferred: the abstract compares models with humans; a ToM-free baseline "
                                          "is the floor any ToM must beat", full_scale="a local model installed")
                   for st in config.settings]

    lengths_by_type = {t: [i.min_plan_length for i in instances if i.goal_type == t] for t in types}
    _plot(per_agent, gaps, lengths_by_type, ctx, types)
    metrics.update({
        "n_instances": len(instances), "rejected_draws": sets[0][1],
        "min_plan_length_mean": {t: float(np.mean(v)) if v else float("nan") for t, v in lengths_by_type.items()},
        "summaries": summaries, "gaps": gaps, "gaps_by_seed": gaps_by_seed,
        "summaries_by_seed": [{k: summary(v) for k, v in r.items()} for r in runs],
        "tracker_actions_per_s": _tracker_throughput(instances),
        "llm": {"backend": config.backend, "name": llm_name, "usage": usage.to_dict(), "cost": llm_cost,
                "malformed_share": {k: (sum(e.malformed > 0 for e in v) / len(v) if v else None)
                                    for k, v in per_agent.items() if k.startswith("llm_")}},
        "reference_paper": {"gpt5_agentic_success": PAPER_GPT5_AGENTIC},
    })
    notes = (
        "Inferred (the paper's code and data are not public; only its abstract was read): the disembodied "
        "mover, the witness rules for cross-room moves (the source room only sees the object carried out), the "
        "TB/FB predicates for second-order goals (the 'fact' is the inner character's actual belief), the scene "
        "sampler and the themes. So every claim measured offline is about our benchmark (kind check or "
        "reconstruction), none is the paper's. Baselines: oracle = BFS shortest plan; no-ToM = MOVE the object "
        f"to the goal location; random = uniform actions with DONE as a choice, {config.random_repeats} episodes "
        f"per instance. Step cap = minimal plan length + {config.extra_steps}. Random claims are judged over "
        f"{len(seeds)} independently generated instance sets (seeds {seeds}, chosen before looking). The first "
        "seed's instances are written to instances.jsonl in the run folder."
        + (f" LLM usage: {json.dumps(usage.to_dict())}." if llm_name else ""))
    return Outcome(metrics=metrics, claims=claims, notes=notes, backend=use)


def _benchmark_is_well_formed(config: Config, instances: list, rejected: dict, roundtrip_ok: bool,
                              per_agent: dict, types: tuple, metrics: dict) -> list:
    """Balanced, solvable instances that survive a JSONL round trip, and oracle plans that replay."""
    counts = {t: sum(1 for i in instances if i.goal_type == t) for t in types}
    contexts = sorted({i.context for i in instances} | set(CONTEXTS))
    cell_counts = {f"{t}/{c}": sum(1 for i in instances if i.goal_type == t and i.context == c)
                   for t in types for c in contexts}
    context_counts = {c: sum(1 for i in instances if i.context == c) for c in contexts}
    metrics.update(goal_type_counts=counts, cell_counts=cell_counts)

    def spread(d: dict) -> int:
        return max(d.values()) - min(d.values())

    n = len(instances)
    solvable = sum(i.min_plan_length is not None and i.min_plan_length >= 1 for i in instances)
    return [
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
                reason="exact structural property of the generator (rejection sampling)", kind="check", object="toy",
                source="inferred: the paper's 600 instances are not public, so scenes are generated procedurally",
                note="the generator rejects unsolvable, already-true, contradictory and duplicate draws."),
        C.close("oracle_replay",
                "Replaying the oracle's stored plans (after JSONL export/import) satisfies the tracker on every "
                "instance.", measured=summary(per_agent["oracle"])["success"], target=1.0, abs_tol=0.0,
                paper_value=None, kind="check", object="toy",
                source="inferred: the oracle is a breadth-first search over our tracker",
                domain=(0, 1),
                reason="deterministic tracker: any failure is a bug, so no tolerance",
                note="planner and scorer share the goal predicate, so a wrong order-2 predicate (reading the true "
                     "location instead of the inner believer's belief) leaves this and every other claim unchanged "
                     "at quick scale (the ToM-free agents' rates barely move); a direct test catches it."),
    ]


def _no_tom_cannot_induce_false_beliefs(runs: list, seeds: list[int]) -> list:
    """The no-ToM agent's FB success is exactly 0 on every seed's instance set."""
    per_seed = []
    for r in runs:
        fb = summary(r["no_tom"])["fb"]
        per_seed.append(C.at_most("no_tom_fb_zero", NO_TOM_STATEMENT, measured=fb, bound=0.0, kind="check", domain=(0, 1),
                                  object="toy",
                                  source="inferred: after MOVE o TO L the object is at L, so a false belief about "
                                         "o cannot be induced by that move alone",
                                  paper_value="0 (an agent that ignores beliefs cannot induce a false one)",
                                  reason="exact, no sampling involved")
                        if np.isfinite(fb) else
                        C.not_checkable("no_tom_fb_zero", NO_TOM_STATEMENT, paper_value="0", kind="check", object="toy",
                                        source="inferred: a property of the tracker",
                                        reason="no false-belief instance at this n_instances",
                                        full_scale="any n_instances >= 2 includes FB goals (the generator "
                                                   "alternates TB and FB)"))
    return [C.over_seeds(per_seed, seeds)]


def _tb_fb_gap_without_theory_of_mind(runs: list, gaps_by_seed: list[dict], seeds: list[int]) -> list:
    """TB − FB gaps of the ToM-free agents, overall and at equal minimal plan length, over seeds."""
    claims = []
    for name in ("no_tom", "random"):
        per_seed = []
        for r, g in zip(runs, gaps_by_seed):
            s = summary(r[name])
            per_seed.append(_gap_claim(
                f"tb_gt_fb_overall_{name}",
                f"On our benchmark the ToM-free {name} agent does better on true-belief than on false-belief goals "
                "overall: the abstract's TB > FB pattern appears without any theory of mind.",
                paper_value="TB > FB for every model and humans (abstract)", ci=g[name]["overall_ci"],
                gap=g[name]["overall"], source=BENCH_SOURCE,
                # the no-ToM agent never reaches an FB goal by construction: a check of our benchmark, not evidence
                kind="check" if name == "no_tom" else "reconstruction",
                measured_note=f"TB {s['tb']:.3f}, FB {s['fb']:.3f}.", counts=_success_counts(r[name]),
                reason=f"95% bootstrap interval over instances ({s['n']} episodes; repeats of one instance "
                       "averaged first) must lie above 0",
                note="This agent has no theory of mind, so its gap comes from the task's structure (FB goals need "
                     "longer plans), not from reasoning about minds; compare the equal-length claim."))
        claims.append(C.over_seeds(per_seed, seeds))
    per_seed = []
    for _r, g in zip(runs, gaps_by_seed):
        per_seed.append(_gap_claim(
            "tb_gt_fb_equal_length_random",
            "On our benchmark TB > FB persists for the random agent when TB and FB goals are compared at equal "
            "minimal plan length.", paper_value="TB > FB (abstract; lengths not controlled there as far as we know)",
            ci=g["random"]["matched_ci"], gap=g["random"]["matched"], matched=True, kind="reconstruction",
            counts=_success_counts(_r["random"], g["random"]["lengths"]), min_cell=g["random"]["matched_min_cell"],
            source=BENCH_SOURCE, measured_note=f"per-length rates {g['random']['per_length']}.",
            reason="stratified bootstrap over instances within length × TB/FB cells; the 95% interval must lie "
                   "above 0",
            note="A gap <= 0 means that, at equal minimal plan length, FB goals are no harder than TB goals for "
                 "an agent without ToM (a short FB goal is met by many action sequences: any move of the object "
                 "the believer does not see), so an agent's overall TB > FB gap does not by itself show a ToM "
                 "asymmetry; the paper's comparison should be read against plan length."))
    claims.append(C.over_seeds(per_seed, seeds))
    return claims


def _chat_loop_agrees_with_tracker(config: Config, instances: list) -> list:
    """Scripted oracle and no-ToM agents through the LLM chat loop score as direct replay does."""
    agree, n_pipe = 0, 0
    for inst in instances[:config.pipeline_instances]:
        cap = step_cap(inst, config.extra_steps)
        for name, plan in (("oracle", oracle_plan(inst)), ("no_tom", no_tom_plan(inst))):
            direct = score_plan(inst, plan, cap=cap).success
            for setting in SETTINGS:
                ep = run_llm_episode(inst, scripted_agent(plan, setting, name), setting, cap=cap)
                agree += ep.success == direct
                n_pipe += 1
    statement = ("Our LLM-agent loop (prompt, strict parse, tracker scoring) scores scripted oracle and "
                 "no-ToM agents exactly as direct replay does, in both settings.")
    source = "inferred: the agent loop is ours (the paper's prompts and parser are not public)"
    if n_pipe == 0:
        return [C.not_checkable("chat_loop_agrees_with_tracker", statement, paper_value=None, kind="check", object="toy",
                                source=source, reason="pipeline_instances=0: no scripted episodes were run",
                                full_scale="the quick configuration runs 60 instances through the loop")]
    return [C.check("chat_loop_agrees_with_tracker", statement, paper_value=None, kind="check", object="toy",
                    source=source,
                    measured={"agree": agree, "episodes": n_pipe}, holds=bool(agree == n_pipe),
                    tolerance="all episodes agree", reason="deterministic pipeline check, no tolerance")]


def _run_llm_agent(config: Config, ctx: RunContext, instances: list, per_agent: dict,
                   out_dir: Path, backend) -> tuple[str, UsageMeter]:
    """The optional LLM agent (``backend`` not ``None``): episodes into ``per_agent["llm_<setting>"]``."""
    llm_name, usage = "", UsageMeter()
    if backend is None:
        return llm_name, usage
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
                                     params=params, agent=agent, tolerant=True)
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
    return llm_name, usage


def _unless_calls_ok(claims: list, use: C.BackendUse | None) -> list:
    """Claims measured on LLM episodes (``gpt5_agentic_success``, ``tb_gt_fb_llm_*``) become not
    checkable with "k of n backend calls failed" as the reason when any call failed — also one that
    was already not checkable for a consequence of the failures (too few scored episodes)."""
    if use is None or use.failed == 0:
        return claims
    why = f"{use.failed} of {use.calls} backend calls failed ({use.what})"
    out = []
    for c in claims:
        if c.id == "gpt5_agentic_success" or c.id.startswith("tb_gt_fb_llm_"):
            c = C.not_checkable(c.id, c.statement, paper_value=c.paper_value, kind=c.kind, source=c.source,
                                object=c.object, control=c.control, falsifiable_by=c.falsifiable_by,
                                reason=why, full_scale="rerun with a working endpoint; the measurement would "
                                                       "have rested on failed calls")
        out.append(c)
    return out


def _paper_claims_need_frontier_models(config: Config, summaries: dict, gaps: dict, llm_name: str,
                                       per_agent: dict) -> list:
    """The abstract's model and human results: judged only with a configured LLM backend."""
    claims = []
    llm_keys = [k for k in summaries if k.startswith("llm_")]
    is_gpt5 = config.backend == "openai" and config.model.lower().startswith("gpt-5")
    n_gpt5 = summaries["llm_agentic"]["n"] if "llm_agentic" in summaries else 0
    statement = "GPT-5 succeeds on about 80% of tasks in the agentic setting."
    if is_gpt5 and "llm_agentic" in summaries and n_gpt5 >= MIN_GPT5_EPISODES:
        k = int(round(summaries["llm_agentic"]["success"] * n_gpt5))
        claims.append(C.close("gpt5_agentic_success", statement, measured=k / n_gpt5, target=PAPER_GPT5_AGENTIC,
                              domain=(0, 1),
                              abs_tol=0.10, interval=C.proportion_interval(k, n_gpt5)[1], kind="paper", object="real",
                              falsifiable_by="a success rate whose Clopper-Pearson interval lies outside 0.70-0.90",
                              source=PAPER_SOURCE,
                              reason="the abstract says 'approximately 80%' and our instances are regenerated, not "
                                     "the paper's, so ±0.10; judged on the Clopper–Pearson 95% interval",
                              note=f"{summaries['llm_agentic']['errors']} backend errors left out of the rate."))
    else:
        claims.append(C.not_checkable(
            "gpt5_agentic_success", statement, paper_value=PAPER_GPT5_AGENTIC, kind="paper", source=PAPER_SOURCE,
            object="real",
            reason="no GPT-5 offline" if not llm_keys else
            f"only {n_gpt5} scored agentic episodes (< {MIN_GPT5_EPISODES}; backend errors left out): too few to "
            "test ±0.10" if is_gpt5 else
            f"the configured model is {config.model or config.model_path!r} ({config.backend}), not GPT-5",
            full_scale=LLM_FULL_SCALE))
    claims.append(C.not_checkable(
        "gpt5_only_model_above_humans", "GPT-5 is the only one of six frontier models to outperform the human "
        "participants, but is less robust than humans across contexts.", kind="paper", source=PAPER_SOURCE,
        paper_value="GPT-5 > humans > other five models; humans more robust", object="real",
        reason="needs the six frontier models and the paper's human cohort",
        full_scale=LLM_FULL_SCALE + "; per-context spread is reported as context_spread"))
    if not llm_keys and config.backend_auto:  # backend=auto found no local model: the same claims, said why
        from neurips26.harness.config import NO_LOCAL_MODEL

        claims += [C.not_checkable(f"tb_gt_fb_llm_{st}", f"Models do better on TB than FB goals — the local model, "
                                   f"{st} setting.", paper_value="TB > FB for every model", kind="paper",
                                   source=PAPER_SOURCE, object="real", reason=NO_LOCAL_MODEL, full_scale=LLM_FULL_SCALE,
                                   control=LLM_GAP_CONTROL)
                   for st in config.settings]
    elif not llm_keys:
        claims.append(C.not_checkable("tb_gt_fb_models", "All six models, like humans, do better on TB than FB "
                                      "goals.", paper_value="TB > FB for every model and humans", kind="paper",
                                      source=PAPER_SOURCE, object="real",
                                      reason="the six frontier models are not available offline",
                                      full_scale=LLM_FULL_SCALE, control=LLM_GAP_CONTROL))
    for k in llm_keys:
        gk, s = gaps[k], summaries[k]
        oci = gk["overall_ci"]
        claims.append(_gap_claim(
            f"tb_gt_fb_{k}", f"Models do better on TB than FB goals — {llm_name}, {k[4:]} setting.",
            paper_value="TB > FB for every model", ci=gk["matched_ci"], gap=gk["matched"], matched=True,
            min_cell=gk["matched_min_cell"], kind="paper", source=PAPER_SOURCE,
            full_scale="GPT-5 on all 600 instances, where TB and FB goals share every "
                       "minimal plan length 1-3 (16 or more instances per cell in the quick run's sets; the "
                       f"quick local arm's first {min(config.llm_instances, config.local_instances)} instances may share "
                       "none)",
            measured_note=f"Length-matched TB - FB gap at minimal plan lengths {gk['lengths']} (the verdict); "
                          f"per length {gk['per_length']}. Overall (lengths mixed, not judged): TB {s['tb']:.3f}, "
                          f"FB {s['fb']:.3f}, gap {gk['overall']:.3f} [{oci[0]:.3f}, {oci[1]:.3f}].",
            counts=_success_counts(per_agent[k], gk["lengths"]), object="real", control=LLM_GAP_CONTROL,
            reason=f"95% stratified bootstrap interval of the length-matched gap (instances resampled within each "
                   f"length × TB/FB cell; {s['n']} scored episodes, backend errors left out) must lie strictly "
                   f"above 0; not judged when a cell holds < {MIN_MATCHED_CELL} instances",
            note="FB goals need longer plans, so the overall gap is confounded by plan length; only TB and FB "
                 "goals of equal minimal plan length are compared."))
    return claims


def _tracker_throughput(instances: list) -> float:
    """Tracker actions per second on every action of up to 50 instances (a performance figure)."""
    sample = instances[: min(50, len(instances))]
    t2, applied = time.perf_counter(), 0
    for inst in sample:
        state = inst.initial
        for a in all_actions(inst.scene):
            state = apply_action(inst.scene, state, a).state
            applied += 1
    return applied / max(time.perf_counter() - t2, 1e-9)
