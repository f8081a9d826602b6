"""A Gymnasium environment wrapping one NCP-ExploreToM instance.

* Action space: ``Discrete(K + 1)`` — the K grammatical actions of
  :func:`~neurips26.ncp_tom.world.all_actions` (moves, then sends) and ``K`` = ``DONE``.
  ``env.action_names[k]`` gives the text of action ``k``.
* Observation space: ``MultiDiscrete`` of the *physical* state an unseen actor can see —
  each object's location index (into ``scene.locations``) then each character's room index.
  Beliefs are hidden: inferring them is the task.
* Reward: 1.0 at the end of the episode (``DONE`` or the step cap) if every goal holds, else 0.
  Invalid actions leave the world unchanged; ``info`` counts them and carries the narration.
* Episode: terminates on ``DONE``; truncates at the step cap (``min_plan_length +
  extra_steps``), where the final state is scored as well.

Source: inferred (a Gymnasium environment wrapping one instance, for RL agents); the encoding is ours.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from .baselines import step_cap
from .goals import goals_hold
from .tasks import Instance
from .world import all_actions, apply_action


class NCPToMEnv(gym.Env):
    """Gymnasium env for one instance (see module docstring for spaces and reward).

    Args:
        instance: the task (must carry ``min_plan_length``, i.e. come from the generator).
        extra_steps: actions allowed beyond the oracle's length (>= 0).
        render_mode: ``None`` or ``"ansi"`` (text of the last observation).

    Raises:
        ValueError: on a bad ``render_mode`` or ``extra_steps``, or an instance without
            ``min_plan_length``.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, instance: Instance, extra_steps: int = 3, render_mode: str | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r} not supported; allowed: None, 'ansi'")
        self.instance, self.render_mode = instance, render_mode
        self.cap = step_cap(instance, extra_steps)
        sc = instance.scene
        self._actions = all_actions(sc)
        self.action_names = [str(a) for a in self._actions] + ["DONE"]
        self.action_space = gym.spaces.Discrete(len(self._actions) + 1)
        self.observation_space = gym.spaces.MultiDiscrete(
            [len(sc.locations)] * len(sc.objects) + [len(sc.rooms)] * len(sc.characters))
        self._loc = {n: i for i, n in enumerate(sc.locations)}
        self._room = {n: i for i, n in enumerate(sc.rooms)}
        self.state = instance.initial
        self.steps, self.invalid, self._text = 0, 0, ""

    def _obs(self) -> np.ndarray:
        s = self.state
        return np.array([self._loc[x] for x in s.object_location] + [self._room[r] for r in s.character_room],
                        dtype=np.int64)

    def _info(self, ok: bool = True, error: str = "") -> dict[str, Any]:
        return {"text": self._text, "ok": ok, "error": error, "steps": self.steps, "invalid": self.invalid,
                "goals_hold": goals_hold(self.instance.scene, self.state, self.instance.goals)}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Back to the instance's initial state (the env itself is deterministic)."""
        super().reset(seed=seed)
        self.state, self.steps, self.invalid = self.instance.initial, 0, 0
        self._text = "Start: everyone knows where everything is."
        return self._obs(), self._info()

    def step(self, action: int):
        """Apply action ``action`` (an index; ``K`` is DONE).

        Raises:
            ValueError: if ``action`` is not in the action space.
        """
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in Discrete({self.action_space.n})")
        k = int(action)
        ok, error = True, ""
        if k == len(self._actions):
            self._text = "DONE."
            terminated = True
        else:
            step = apply_action(self.instance.scene, self.state, self._actions[k])
            self.state, ok, error, self._text = step.state, step.ok, step.error, step.observation
            self.steps += 1
            self.invalid += not ok
            terminated = False
        truncated = not terminated and self.steps >= self.cap
        info = self._info(ok, error)
        reward = float(info["goals_hold"]) if (terminated or truncated) else 0.0
        return self._obs(), reward, terminated, truncated, info

    def render(self) -> str | None:
        """The last narration (``render_mode="ansi"``), else ``None``."""
        return self._text if self.render_mode == "ansi" else None
