"""Search over the compiled core, through its search interface (:mod:`spider_env.fast.game`):
the perfect-information solvers (:mod:`spider_env.search.solver`'s ``solve``, over the beam of
:mod:`spider_env.search.beam`, the depth-first search of :mod:`spider_env.search.dfs` and
best-first search), their budget (:mod:`spider_env.search.budget`, importable without numba),
and the planner's searches (:mod:`spider_env.search.plan`)."""
