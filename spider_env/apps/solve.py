"""The ``spider-env solve`` command: solve deals with every card known, replay the lines.

The search is :func:`spider_env.search.solver.solve` (perfect information: the face-down cards
and the stock are known to it). A won line is then played through the environment
(:class:`spider_env.SpiderEnv` of the same variant, reset to the same deal): every action must
be legal in the env's action mask and the game must be won after the last one.

One deal (``--deal N`` or ``--deal-file FILE``) prints the verdict, the line (numbered, in
words, with the action ids) and the replay; a batch (``--deals RANGE``) prints a summary table
(win share with a 95% Wilson interval, losses, unknowns, seconds, nodes) and optionally one CSV
row per deal. Worker processes (``jobs > 1``, ``spawn``) give the same verdicts and lines as
one process when only ``nodes`` bounds the search (a ``seconds`` budget depends on the clock).
"""

from __future__ import annotations

import csv
import multiprocessing
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from spider_env.core.actions import describe
from spider_env.core.variants import Variant
from spider_env.search.budget import MAX_NODES, check_budget, check_dfs_nodes

if TYPE_CHECKING:
    from spider_env.core.deals import Deal

MAX_DEAL_FILE = 1 << 20  # bytes: a deal text is about 500
MAX_CHUNK = 20  # deals per worker task


class SolveError(ValueError):
    """Bad input to the command (a budget, a deal text, a file): one line for the user."""


class ReplayError(RuntimeError):
    """A won line that the environment does not accept (would be a solver bug)."""


@dataclass(frozen=True)
class DealSolve:
    """The outcome for one deal: the solver's result and the env's replay of a won line.

    ``deal``: the deal number (``None`` for a deal text); ``replayed``: how many actions the
    env played to a win (``0`` unless won); ``replay_error``: why the env refused the line
    (``""`` if it did not).
    """

    deal: int | None
    verdict: str
    line: tuple[int, ...]
    nodes: int
    expansions: int
    seconds: float
    budget: str
    replayed: int = 0
    replay_error: str = ""

    @property
    def moves(self) -> int:
        return len(self.line)

    @property
    def won(self) -> bool:
        return self.verdict == "won"


def need_solver() -> None:
    """:class:`SolveError` (one line) if the solver cannot be loaded (it is numba code)."""
    try:
        import spider_env.search.solver  # noqa: F401
    except ImportError as exc:
        raise SolveError(
            f"spider-env solve needs the compiled core (numba): {exc}; `pip install numba`"
        ) from None


def check_budget_args(nodes: object, seconds: object) -> tuple[int, float | None]:
    """``(nodes, seconds)`` for the solver; :class:`SolveError` naming the option otherwise."""
    try:
        check_budget(nodes, None)
    except ValueError:
        raise SolveError(f"--nodes must be an integer 1 .. {MAX_NODES:,}, got {nodes}") from None
    try:
        return check_budget(nodes, seconds)
    except ValueError:
        raise SolveError(
            f"--seconds must be a positive, finite number of seconds, got {seconds}"
        ) from None


def method_and_budget(args: Any, variant: Variant) -> tuple[str, int, float | None]:
    """``--method`` resolved for ``variant`` and the budget: ``--nodes`` (default: the
    method's own, :func:`spider_env.search.solver.default_nodes`) and ``--seconds``."""
    from spider_env.search.solver import check_method, default_nodes

    method = check_method(getattr(args, "method", "auto"), variant)
    nodes = default_nodes(method) if args.nodes is None else args.nodes
    budget = check_budget_args(nodes, args.seconds)
    if method == "dfs":
        try:
            check_dfs_nodes(budget[0])
        except ValueError as exc:
            raise SolveError(f"--{exc}") from None
    return (method, *budget)


def read_deal_file(path: str, variant: Variant | None) -> tuple[Deal, str]:
    """The deal in the text file ``path`` and its text (:func:`deal_to_text`'s form).

    ``variant``: the variant the user named (the text must then be of that variant), or
    ``None`` to take the text's ``variant:`` line (classic 4-suit Spider if it has none).
    """
    from spider_env.core.deals import deal_from_text
    from spider_env.core.variants import classic

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(MAX_DEAL_FILE + 1)
    except FileNotFoundError:
        raise SolveError(f"deal file not found: {path}") from None
    except IsADirectoryError:
        raise SolveError(f"cannot read {path}: it is a directory") from None
    except PermissionError:
        raise SolveError(f"cannot read {path}: permission denied") from None
    except UnicodeDecodeError:
        raise SolveError(f"cannot read {path}: not a UTF-8 text file") from None
    except OSError as exc:
        raise SolveError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(text) > MAX_DEAL_FILE:
        raise SolveError(f"{path} is not a deal text: longer than {MAX_DEAL_FILE:,} characters")
    try:
        if variant is None:
            named = any(
                line.partition(":")[0].strip().lower() == "variant" for line in text.splitlines()
            )
            deal = deal_from_text(text, None if named else classic(4))
        else:
            deal = deal_from_text(text, variant)
    except (ValueError, TypeError) as exc:
        raise SolveError(f"{path}: {exc}") from None
    return deal, text


def replay_in_env(variant: Variant, line: Sequence[int], options: dict[str, Any]) -> int:
    """Play ``line`` in a :class:`SpiderEnv` of ``variant`` reset with ``options`` (``{"deal":
    n}`` or ``{"deal_text": text}``): the number of actions played to the win.
    :class:`ReplayError` if an action is not in the mask or the game is not won at the end."""
    from spider_env.env import SpiderEnv

    env = SpiderEnv(variant=variant)
    try:
        _obs, info = env.reset(options=options)
        terminated = False
        for i, a in enumerate(line, 1):
            if terminated:
                raise ReplayError(f"the game ended before action {i} of {len(line)}")
            if not info["action_mask"][a]:
                raise ReplayError(
                    f"action {i} ({describe(variant, a)}, id {a}) is not legal in the env"
                )
            _obs, _r, terminated, _t, info = env.step(int(a))
        if not info["is_success"]:
            raise ReplayError(
                f"the game is not won after the line ({info['completed_runs']} runs completed)"
            )
    finally:
        env.close()
    return len(line)


def solve_one(
    variant: Variant,
    deal: int | None,
    nodes: int,
    seconds: float | None,
    deal_text: str | None = None,
    method: str = "auto",
) -> DealSolve:
    """Solve deal number ``deal`` (or the deal text ``deal_text``) with ``method`` and replay
    a won line."""
    from spider_env.core.deals import deal_from_text, generate_deal
    from spider_env.core.state import State
    from spider_env.search.solver import solve

    if deal_text is not None:
        d = deal_from_text(deal_text, variant)
        options: dict[str, Any] = {"deal_text": deal_text}
    else:
        assert deal is not None
        d = generate_deal(variant, deal)
        options = {"deal": deal}
    r = solve(State.from_deal(d), nodes, seconds, method=method)
    replayed, error = 0, ""
    if r.won:
        try:
            replayed = replay_in_env(variant, r.line, options)
        except ReplayError as exc:
            error = str(exc)
    return DealSolve(
        deal, r.verdict, r.line, r.nodes, r.expansions, r.seconds, r.budget, replayed, error
    )


def _solve_chunk(
    variant: Variant, deals: list[int], nodes: int, seconds: float | None, method: str
) -> list[DealSolve]:
    return [solve_one(variant, d, nodes, seconds, method=method) for d in deals]


def solve_many(
    variant: Variant,
    deals: Sequence[int],
    nodes: int,
    seconds: float | None = None,
    jobs: int = 1,
    progress: bool = False,
    method: str = "auto",
) -> list[DealSolve]:
    """Solve every deal of ``deals`` (in that order), in ``jobs`` processes (capped to the
    deals and the cores); the same results as ``jobs=1`` when only ``nodes`` bounds them."""
    from spider_env.apps.evaluation.progress import Progress
    from spider_env.apps.evaluation.workers import usable_jobs

    jobs = usable_jobs(jobs, len(deals))
    bar = Progress(len(deals), progress, f"solve {variant.name}")
    out: list[DealSolve] = []
    try:
        if jobs == 1:
            for d in deals:
                out.append(solve_one(variant, d, nodes, seconds, method=method))
                bar.update(1)
            return out
        size = max(1, min(MAX_CHUNK, len(deals) // (jobs * 4) or 1))
        chunks = [list(deals[k : k + size]) for k in range(0, len(deals), size)]
        ctx = multiprocessing.get_context("spawn")
        try:
            with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
                futures = [
                    pool.submit(_solve_chunk, variant, c, nodes, seconds, method) for c in chunks
                ]
                for fut in futures:  # in order: the results are the deals' order
                    part = fut.result()
                    out.extend(part)
                    bar.update(len(part))
        except BrokenProcessPool:
            raise SolveError(
                f"a worker process of --jobs {jobs} ended without finishing its work (its own "
                "error, if any, is printed above; out of memory?): try --jobs 1"
            ) from None
        return out
    finally:
        bar.close()


# --- text ---------------------------------------------------------------------------------------
BUDGET_WORDS = {
    "nodes": "the node budget ran out",
    "seconds": "the time budget ran out",
    "pruned": "no win found, but moves or deals were left out (so no loss is proven)",
    "depth": "no win found within the beam's depth limit",
}


def budget_text(nodes: int, seconds: float | None, method: str = "") -> str:
    """``"1,000,000 nodes"`` or ``"1,000,000 nodes or 5 s"``, after the method if given
    (``"beam: 20,000,000 nodes"``)."""
    text = f"{nodes:,} nodes" + ("" if seconds is None else f" or {seconds:g} s")
    return f"{method}: {text}" if method else text


def verdict_line(r: DealSolve, game: str) -> str:
    """``spider-1suit deal 0: won in 123 moves (101,505 nodes, 0.10 s)``."""
    stats = f"{r.nodes:,} nodes, {r.expansions:,} expansions, {r.seconds:.2f} s"
    if r.verdict == "won":
        return f"{game}: won in {r.moves} moves ({stats})"
    if r.verdict == "lost":
        return f"{game}: lost: every reachable position was searched, none wins ({stats})"
    why = BUDGET_WORDS.get(r.budget, r.budget or "no win found")
    return f"{game}: unknown: {why} ({stats})"


def line_text(variant: Variant, line: Sequence[int]) -> str:
    """The line, one numbered action a line: ``  1. move 1 card 3 -> 7  (id 459)``."""
    width = len(str(len(line)))
    words = [describe(variant, a) for a in line]
    pad = max((len(w) for w in words), default=0)
    return "\n".join(
        f"  {i:>{width}}. {w:<{pad}}  (id {a})" for i, (w, a) in enumerate(zip(words, line), 1)
    )


def summary_table(
    results: Sequence[DealSolve],
    variant: Variant,
    deals: str,
    nodes: int,
    seconds: float | None,
    method: str = "",
) -> str:
    """The batch summary: deals, won (share, 95% Wilson interval), lost, unknown (and why),
    mean and max seconds per deal, nodes used, the budget."""
    from spider_env.apps.evaluation.stats import wilson_interval

    n = len(results)
    won = sum(r.verdict == "won" for r in results)
    lost = sum(r.verdict == "lost" for r in results)
    unknown = n - won - lost
    lo, hi = wilson_interval(won, n)
    secs = [r.seconds for r in results]
    why: dict[str, int] = {}
    for r in results:
        if r.verdict == "unknown":
            why[r.budget] = why.get(r.budget, 0) + 1
    reasons = ", ".join(f"{k or '?'} {v}" for k, v in sorted(why.items()))
    used = sum(r.nodes for r in results)
    rows = [
        ("variant", variant.spec_text()),
        ("deals", f"{n} ({deals})"),
        ("won", f"{won} ({won / n:.1%}; 95% CI {lo:.1%} .. {hi:.1%})" if n else "0"),
        ("lost", str(lost)),
        ("unknown", f"{unknown}" + (f" ({reasons})" if reasons else "")),
        (
            "seconds per deal",
            f"mean {sum(secs) / n:.3f}, max {max(secs):.3f}" if n else "-",
        ),
        ("nodes used", f"{used:,} (mean {used / n:,.0f} per deal)" if n else "0"),
        ("budget per deal", budget_text(nodes, seconds, method)),
    ]
    failed = sum(bool(r.replay_error) for r in results)
    if won:
        rows.append(("replayed through the env", f"{won - failed} of {won} won lines"))
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


def quiet_summary(results: Sequence[DealSolve], variant: Variant, deals: str) -> str:
    """The batch in one line."""
    from spider_env.apps.evaluation.stats import wilson_interval

    n = len(results)
    won = sum(r.verdict == "won" for r in results)
    lost = sum(r.verdict == "lost" for r in results)
    lo, hi = wilson_interval(won, n)
    return (
        f"{variant.spec_text()} deals {deals}: won {won}/{n} ({won / n:.1%}; 95% CI {lo:.1%} .. "
        f"{hi:.1%}), lost {lost}, unknown {n - won - lost}"
    )


CSV_FIELDS = ("deal", "verdict", "moves", "nodes", "seconds", "budget")


def write_csv(path: str, results: Sequence[DealSolve]) -> None:
    """One row per deal: deal, verdict, moves (of a won line), nodes, seconds, budget (what
    stopped an unknown search)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in results:
            w.writerow([r.deal, r.verdict, r.moves, r.nodes, f"{r.seconds:.6f}", r.budget])


# --- the command ----------------------------------------------------------------------------------
def _game_variant(args: Any) -> Variant | None:
    """The variant named by ``--variant`` / ``--suits`` / ``--undo``; ``None`` if none is."""
    from spider_env.core.variants import resolve_variant

    if args.variant is None and args.suits is None:
        return None
    try:
        return resolve_variant(args.variant, args.suits, args.undo)
    except (ValueError, TypeError) as exc:
        raise SolveError(str(exc)) from None


def run(args: Any, out: TextIO | None = None) -> int:
    """``spider-env solve`` with parsed arguments: exit status 0 for any verdict, 1 if the env
    refuses a won line; :class:`SolveError` for bad input."""
    from spider_env.apps.evaluation.deals import describe_deals, parse_deals
    from spider_env.core.variants import resolve_variant

    out = out or sys.stdout
    need_solver()
    named = _game_variant(args)
    if args.deals is not None:
        try:
            deals = parse_deals(args.deals)
        except (ValueError, TypeError) as exc:
            raise SolveError(f"--deals: {exc}") from None
        v = named or resolve_variant(None, None, args.undo)
        method, nodes, seconds = method_and_budget(args, v)
        progress = sys.stderr.isatty() and not args.quiet
        results = solve_many(v, deals, nodes, seconds, args.jobs, progress, method)
        shown = describe_deals(deals)
        if args.quiet:
            print(quiet_summary(results, v, shown), file=out)
        else:
            print(summary_table(results, v, shown, nodes, seconds, method), file=out)
        if args.csv:
            try:
                write_csv(args.csv, results)
            except OSError as exc:
                raise SolveError(f"cannot write {args.csv}: {exc.strerror or exc}") from None
            if not args.quiet:
                print(f"per-deal results: {args.csv}", file=out)
        bad = [r for r in results if r.replay_error]
        for r in bad:
            print(f"deal {r.deal}: the env refused the won line: {r.replay_error}", file=sys.stderr)
        return 1 if bad else 0

    if args.csv:
        raise SolveError("--csv writes a batch's per-deal rows: use it with --deals")
    if args.deal_file is not None:
        deal, text = read_deal_file(args.deal_file, named)
        v = deal.variant
        if args.undo and not v.undo:
            v = v.with_options(undo=True)
        game = f"{v.spec_text()} deal from {args.deal_file}"
        method, nodes, seconds = method_and_budget(args, v)
        r = solve_one(v, None, nodes, seconds, deal_text=text, method=method)
    else:
        v = named or resolve_variant(None, None, args.undo)
        number = 0 if args.deal is None else args.deal
        game = f"{v.spec_text()} deal {number}"
        method, nodes, seconds = method_and_budget(args, v)
        r = solve_one(v, number, nodes, seconds, method=method)
    print(verdict_line(r, game), file=out)
    if r.replay_error:
        print(
            f"spider-env: the env refused the won line: {r.replay_error}",
            file=sys.stderr,
        )
        return 1
    if args.quiet:
        return 0
    if r.won:
        print("line:", file=out)
        print(line_text(v, r.line), file=out)
        print(f"replayed through the env: won in {r.replayed} moves", file=out)
    return 0


__all__ = [
    "CSV_FIELDS",
    "DealSolve",
    "ReplayError",
    "SolveError",
    "check_budget_args",
    "line_text",
    "read_deal_file",
    "replay_in_env",
    "run",
    "solve_many",
    "solve_one",
    "summary_table",
    "verdict_line",
    "write_csv",
]
