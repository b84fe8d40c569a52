"""Search over the compiled core: the perfect-information solver
(:mod:`spider_env.search.solver`)."""
