"""Search over the compiled core, through its search interface (:mod:`spider_env.fast.game`):
the perfect-information solver (:mod:`spider_env.search.solver`) and its budget
(:mod:`spider_env.search.budget`, importable without numba)."""
