r"""Information-theoretic limits of KL-regularised alignment (paper 5, arXiv:2605.07105).

The method in short. For a base policy :math:`\pi_0` and a reward :math:`r`:

1. **Optimal policy and closed-form limit** (:mod:`.frontier`). The maximiser of
   :math:`\mathbb{E}_\pi r - \beta\,\mathrm{KL}(\pi\|\pi_0)` is :math:`\pi_\beta \propto \pi_0 e^{r/\beta}`;
   its gain obeys :math:`\Delta(\beta) = \beta\,J(\pi_\beta,\pi_0)` (Jeffreys divergence
   :math:`J = \mathrm{KL}(\pi_\beta\|\pi_0) + \mathrm{KL}(\pi_0\|\pi_\beta)`), and the largest gain at a
   KL budget :math:`\varepsilon` is :math:`\Delta^*(\varepsilon) = \beta(\varepsilon)\,J(\pi_{\beta(\varepsilon)},\pi_0)`
   with :math:`\mathrm{KL}(\pi_{\beta(\varepsilon)}\|\pi_0) = \varepsilon` — not the :math:`\sqrt{2\mathrm{Var}(r)\,\varepsilon}`
   of prior analyses, which is only its small-budget limit.
2. **Estimator from base samples** (:mod:`.estimator`):
   :math:`\Delta(\beta) = \mathrm{Cov}_{\pi_0}(r, e^{r/\beta}) / \mathbb{E}_{\pi_0} e^{r/\beta}`, estimated by
   self-normalised weights :math:`w_i = e^{(r_i-r_{\max})/\beta}` with delta-method errors and the
   effective sample size :math:`(\sum w)^2/\sum w^2`, for many :math:`\beta` at once.
3. **Best-of-N** (:mod:`.best_of_n`): exact KL and gain on a finite support with tied rewards
   grouped, :math:`q_l = F_l^N - F_{l-1}^N`; the bound :math:`\log N - (N-1)/N`; a sampled version.
4. **Proxy rewards** (:mod:`.proxy`): the gap :math:`\mathbb{E}_{\pi_\beta} r - \mathbb{E}_{\hat\pi_\beta} r`
   for :math:`\hat r = r + e`; ensembles :math:`\bar r_M` and :math:`M_{\mathrm{eff}}` for correlated errors.
5. **Toy trainers** (:mod:`.trainers`): REINFORCE / PPO-clip / GRPO with a KL penalty over a
   categorical policy, to place trained policies against the frontier.

Example::

    import numpy as np
    from neurips26.alignment_limits import max_reward_gain, estimate_frontier, best_of_n

    pi0 = np.full(1000, 1e-3); r = np.random.default_rng(0).normal(size=1000)
    sol = max_reward_gain(pi0, r, epsilon=1.0)            # exact: beta(eps), gain, Jeffreys
    est = estimate_frontier(r[np.random.default_rng(1).integers(0, 1000, 10_000)], [1.0, 0.5])
    bon = best_of_n(pi0, r, [4, 16, 64])                   # exact KL and gain of best-of-N
    print(sol)
    print(est)
    print(bon)

References:
    Monteiro Paes, Mackraz, Theobald, Danieli (2026), "Theoretical Limits of Language Model
    Alignment", arXiv:2605.07105. Beirami et al. (2024), arXiv:2401.01879 (best-of-N).
"""

from .best_of_n import (
    BestOfN,
    SampledBestOfN,
    best_of_n,
    best_of_n_kl_bound,
    best_of_n_policy,
    sampled_best_of_n,
)
from .digits_task import DigitsTask, build_digits_task
from .estimator import DEFAULT_MIN_ESS, FrontierEstimate, estimate_frontier
from .frontier import (
    BudgetSolution,
    FrontierPoints,
    beta_for_budget,
    jeffreys_divergence,
    kl_divergence,
    max_attainable_gain,
    max_attainable_kl,
    max_reward_gain,
    sqrt_kl_approximation,
    tilted_frontier,
    tilted_policy,
)
from .proxy import ProxyGap, effective_ensemble_size, ensemble_reward, proxy_gap
from .trainers import METHODS, TrainingTrace, train_policy
from .validation import BudgetExceedsMaximumWarning, UnreliableEstimateWarning

__all__ = [
    "tilted_policy", "tilted_frontier", "FrontierPoints", "max_reward_gain", "BudgetSolution",
    "beta_for_budget", "max_attainable_kl", "max_attainable_gain", "kl_divergence",
    "jeffreys_divergence", "sqrt_kl_approximation",
    "estimate_frontier", "FrontierEstimate", "DEFAULT_MIN_ESS",
    "best_of_n", "BestOfN", "best_of_n_kl_bound", "best_of_n_policy", "sampled_best_of_n",
    "SampledBestOfN",
    "proxy_gap", "ProxyGap", "ensemble_reward", "effective_ensemble_size",
    "train_policy", "TrainingTrace", "METHODS",
    "build_digits_task", "DigitsTask",
    "UnreliableEstimateWarning", "BudgetExceedsMaximumWarning",
]
