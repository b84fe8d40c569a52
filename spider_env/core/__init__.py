"""The rules of Spider Solitaire: pure Python, no gymnasium, no agents. The specification.

* :mod:`~spider_env.core.cards`: card ids, ranks, suits and their text.
* :mod:`~spider_env.core.variants`: :class:`Variant`, every game as data.
* :mod:`~spider_env.core.deals`: the deal generator (the only randomness) and deal text.
* :mod:`~spider_env.core.state`: the immutable :class:`State` and its text form.
* :mod:`~spider_env.core.actions`: the fixed action encoding.
* :mod:`~spider_env.core.rules`: ``legal_actions`` (the only legality) and ``apply``.
* :mod:`~spider_env.core.interop`: PySolFC and KPatience deals.

Nothing here imports from outside ``spider_env.core`` (``tests/test_layers.py`` checks it).
"""
