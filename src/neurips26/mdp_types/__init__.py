"""The method of types for stationary Markov decision processes (paper 16, NeurIPS 2026).

The paper's text was not reachable; every formula here is reconstructed from Csiszár's method of
types and its Markov extensions (Csiszár 1998; Davisson, Longo & Sgarro 1981; Natarajan 1985)
and is *inferred*: only the paper's abstract was read. Finite ``S``, ``A``; stationary logging policy ``π``; kernel ``T``.

* **Pair chain** ``Z_t = (S_t, A_t)`` with kernel ``P((s,a),(s',a')) = T(s'|s,a) π(a'|s')``.
* **Pair type** ``Q_n(z,z') = (1/m) Σ_t 1{Z_t=z, Z_{t+1}=z'}``; **type bounds**
  ``min μ0 (m+1)^{−|Z|²} e^{−mD} ≤ P(Q_n = Q) ≤ e^{−m D(Q‖Q_1⊗P)}``, with the conditional KL
  ``D(Q‖Q_1⊗P) = Σ Q log[Q / (Q_1 P)]`` = dynamics part + policy part.
* **LDP of learned dynamics** ``J(T') = inf{D(Q‖Q_1⊗P) : Q balanced, Q(s'|s,a) = T'}`` and the
  variational rates of plug-in ``V̂``/``Q̂``: ``I_V(v) = inf{J(T') : V^{π_e}(T')(s_0) ≥ v}``.
* **KL sets** ``U_n = {T' : Σ Q̂_1 KL(T̂‖T') ≤ r_n}``, ``r_n = [log(1/δ) + |Z|² log(m+1)]/m``,
  coverage ``≥ 1 − δ``; **pessimistic V/Q** by the per-(s,a) dual
  ``min_{KL(q‖p)≤ε} p·v = max_μ μ + e^{−ε} Π (v_i − μ)^{q_i}`` or one joint convex program;
  the universal **test** of ``T = T0``.
* **Coding exponent** ``E(R) = min{D(Q‖Q_1⊗P) : Q balanced, H(Q_{2|1}|Q_1) ≥ R}``.

Example (FrozenLake 8x8: log 100,000 steps, bound the greedy policy's value from below)::

    from neurips26.mdp_types import (toy_text_mdp, log_episodes, transition_counts, pessimistic_values,
                                     optimal_values, greedy_policy)
    mdp = toy_text_mdp("FrozenLake-v1", map_name="8x8")  # exact tables shipped with gymnasium
    V_star, Q_star = optimal_values(mdp.T, mdp.r, 0.99)
    pi_eval = greedy_policy(Q_star)                      # the policy to evaluate, (S, A)
    behaviour = 0.5 * pi_eval + 0.5 / 4                  # logging policy: half greedy, half uniform
    data = log_episodes("FrozenLake-v1", behaviour, 100_000, seed=0, map_name="8x8")  # (s, a, s') rows
    N = transition_counts(data, 64, 4)
    low = pessimistic_values(N, mdp.r, pi_eval=pi_eval, gamma=0.99, delta=0.05, radius="per_pair", support=mdp.T > 0)
    print(low.V[0], "<=", V_star[0])   # a lower bound on V^pi(start), holding with probability >= 0.95
"""

from .coding import coding_error_exponent, coding_error_probability_exact
from .large_deviations import (
    TailRate,
    iid_kernel_tail_rate,
    kernel_rate,
    kernel_tail_rate,
    tail_probability_is,
    value_rate,
    value_tail_probability_is,
)
from .mdp import (
    TabularMDP,
    check_logging_chain,
    check_reward_table,
    greedy_policy,
    is_irreducible,
    log_episodes,
    optimal_values,
    pair_kernel,
    policy_evaluation,
    sample_pair_chain,
    stationary_distribution,
    toy_text_mdp,
    validate_distribution,
    validate_gamma,
    validate_kernel,
    validate_pair_kernel,
    validate_policy,
    validate_rewards,
)
from .pair_types import (
    TypeBounds,
    conditional_entropy,
    conditional_kl,
    counts_from_pair_counts,
    entropy_rate,
    exact_type_distribution,
    kl_decomposition,
    pair_counts,
    pair_index,
    plug_in_kernel,
    transition_counts,
    type_probability_bounds,
    validate_counts,
)
from .uncertainty import (
    KLTest,
    PessimisticResult,
    bootstrap_lower_bound,
    hoeffding_worst_case,
    kl_radius,
    kl_test,
    kl_worst_case,
    l1_worst_case,
    pessimistic_values,
    set_radii,
    set_statistic,
)

__all__ = [
    "TabularMDP", "check_logging_chain", "greedy_policy", "is_irreducible", "log_episodes", "optimal_values",
    "pair_kernel", "policy_evaluation", "sample_pair_chain", "stationary_distribution", "toy_text_mdp",
    "validate_gamma", "validate_kernel", "validate_policy", "validate_rewards", "check_reward_table",
    "validate_distribution", "validate_pair_kernel", "validate_counts",
    "TypeBounds", "conditional_entropy", "conditional_kl", "counts_from_pair_counts", "entropy_rate",
    "exact_type_distribution", "kl_decomposition", "pair_counts", "pair_index", "plug_in_kernel",
    "transition_counts", "type_probability_bounds",
    "TailRate", "iid_kernel_tail_rate", "kernel_rate", "kernel_tail_rate", "tail_probability_is", "value_rate",
    "value_tail_probability_is",
    "KLTest", "PessimisticResult", "bootstrap_lower_bound", "hoeffding_worst_case", "kl_radius", "kl_test",
    "kl_worst_case", "l1_worst_case", "pessimistic_values", "set_radii", "set_statistic",
    "coding_error_exponent", "coding_error_probability_exact",
]
