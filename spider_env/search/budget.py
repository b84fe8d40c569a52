"""The solver's budget: the default and the largest number of positions, and the check of a
budget. No numba here, so the command line can show and check a budget before the solver loads.
"""

from __future__ import annotations

from spider_env.core.checks import check_int, check_number

#: Positions a search stores when no budget is given (:func:`spider_env.search.solver.solve`,
#: :class:`~spider_env.search.solver.Solver`, ``spider-env solve``).
DEFAULT_NODES = 1_000_000
#: Positions the beam search generates when no budget is given, all its tries together
#: (:class:`~spider_env.search.beam.BeamSolver`).
DEFAULT_BEAM_NODES = 20_000_000
#: Positions the depth-first search generates when no budget is given
#: (:class:`~spider_env.search.dfs.DepthFirstSolver`; it keeps each one, with its table).
DEFAULT_DFS_NODES = 3_000_000
#: The largest depth-first budget: it keeps every position it generates (a few GB at most).
MAX_DFS_NODES = 20_000_000
#: The solvers ``solve(method=...)`` and ``spider-env solve --method`` know.
METHODS = ("auto", "beam", "best-first", "dfs")
#: The widest beam (positions kept per depth and count of deals left).
MAX_WIDTH = 100_000
MAX_NODES = 50_000_000  # 50M positions: several GB of memory for 4-suit Spider


def check_dfs_nodes(nodes: int) -> int:
    """``nodes`` for the depth-first search, which keeps every position it generates: at most
    :data:`MAX_DFS_NODES`, else a ``ValueError`` naming the limit."""
    if nodes > MAX_DFS_NODES:
        raise ValueError(
            f"nodes must be at most {MAX_DFS_NODES:,} for the depth-first search (it keeps "
            f"every position), got {nodes:,}"
        )
    return nodes


def check_budget(nodes: object, seconds: object) -> tuple[int, float | None]:
    """``(nodes, seconds)`` checked (``nodes`` an int in 1 .. :data:`MAX_NODES`, ``seconds``
    ``None`` or a positive finite number): ``TypeError`` / ``ValueError`` naming the bad one."""
    n = check_int("nodes", nodes, 1, MAX_NODES)
    if seconds is None:
        return n, None
    return n, check_number("seconds", seconds, 0, None, low_open=True)
