"""Does what a player sees of a position predict the game's outcome, and does the planner's
graded value read it as well as a value learned from the games?

    python research/planner/values.py --agent planner:evals=16 --deals 30000:31000 --jobs 2 \\
        --out values.npz
    python research/planner/values.py --load values.npz

Each deal is played as ``spider-env evaluate`` plays it (the same agent seed and step limit).
After every event (the game's start, a card turned up, a deal, a run completed: whenever the
count of face-down or stock cards changes) the position's features are recorded, read from
the player's view alone (:class:`~spider_env.observation.view.TableView`: counts and face-up
cards, never a face-down card), with the game's outcome as the label.

Then a logistic regression (Newton's method, an L2 term of 0.001) is fitted on the games whose
deal number is not a multiple of 5 and tested on the others: the held-out AUC (the chance that
a position of a won game scores above one of a lost game) of the learned value and of the
graded value's order, over all positions and among positions with the same stock (the
planner compares candidates of one decision, all with the same stock, so that is the AUC that
matters to it). Last, the weights fitted on every game, as a comma list.

The graded value is the planner's own, the score its beams give a position they do not
search (:meth:`PlanSearch.value <spider_env.search.plan.PlanSearch.value>`), of the position on
the view's one fixed layout of the unseen cards (:meth:`TableView.to_state
<spider_env.observation.view.TableView.to_state>` without an RNG: the unseen cards in sorted
order, a function of the view, never the true cards). The beam's rank reads a face-down card in
one place only, the base of a column (a King or a card that fits another column's top counts
one less disorder), so that fixed layout moves the value a little, as a sampled layout moves
the planner's.
"""

from __future__ import annotations

import multiprocessing as mp
import sys

import numpy as np
from spider_env.agents import make_agent
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.apps.evaluation.episode import agent_seed, make_env
from spider_env.apps.evaluation.flags import check_games, check_writable
from spider_env.core.cards import KING, N_RANKS
from spider_env.core.state import run_length
from spider_env.core.variants import Variant, get_variant
from spider_env.observation.view import TableView
from spider_env.search.plan import PlanSearch
from spider_env.search.solver import without_undo

#: The features of :func:`features`, in order (the first is a constant 1).
FEATURES = (
    "one",
    "face_down",
    "stock",
    "out_of_order",
    "empty_columns",
    "runs",
    "clear_columns",
    "one_down_columns",
    "down_squared",
    "ready",
    "king_bases",
    "longest",
    "down_x_unseen",
)


def breaks(up: tuple[int, ...]) -> int:
    """Places in the face-up cards ``up`` where a suited run breaks: the runs
    :func:`spider_env.core.state.run_length` reads from the top down, less one."""
    runs, end = 0, len(up)
    while end > 0:
        end -= run_length(up[:end], 0)
        runs += 1
    return max(runs - 1, 0)


def stock_cards(view: TableView) -> int:
    """The cards still in the stock (the piles not yet dealt)."""
    return sum(view.variant.stock[j] for j in view.remaining_piles())


def features(view: TableView) -> np.ndarray:
    """What a player sees of a position as numbers (:data:`FEATURES`), each scaled to about
    0..1: shares of the deck face down, in the stock and out of order; shares of the columns
    empty, with no / one face-down card, with a face-up King at the base; the share of runs
    completed; the sum of squared face-down counts / 100; cards in the columns' top runs; the
    longest column / 30; face-down share times unseen share."""
    v = view.variant
    n_cards, columns = v.n_cards, v.n_columns
    runs = sum(view.completed)
    stock = stock_cards(view)
    down = sum(view.down)
    broken = ready = 0
    for up in view.up:
        broken += breaks(up)
        ready += run_length(up, 0)
    lengths = [d + len(up) for d, up in zip(view.down, view.up)]
    kings = sum(
        d == 0 and bool(up) and up[0] % N_RANKS == KING for d, up in zip(view.down, view.up)
    )
    return np.array(
        [
            1.0,
            down / n_cards,
            stock / n_cards,
            broken / n_cards,
            sum(n == 0 for n in lengths) / columns,
            runs / (n_cards / N_RANKS),
            sum(d == 0 and n > 0 for d, n in zip(view.down, lengths)) / columns,
            sum(d == 1 for d in view.down) / columns,
            sum(d * d for d in view.down) / 100.0,
            ready / n_cards,
            kings / columns,
            max(lengths) / 30.0,
            (down / n_cards) * (down + stock) / n_cards,
        ]
    )


def graded_value(search: PlanSearch, view: TableView) -> float:
    """The planner's graded value of the position ``view`` shows (module docstring), with
    ``search`` a :class:`~spider_env.search.plan.PlanSearch` of the view's variant."""
    return search.value(search.game.from_state(without_undo(view.to_state())))


def value_search(v: Variant) -> PlanSearch:
    """The search whose :meth:`~spider_env.search.plan.PlanSearch.value` grades ``v``'s
    positions (its beam is never run: a small one)."""
    return PlanSearch(v, closure_nodes=1, width=1, nodes=1)


def play(task: tuple[str, str, int, int, int | None]) -> tuple[int, bool, np.ndarray]:
    """One deal: (deal, won, rows of features and the graded value) of its events."""
    spec, variant, deal, seed, max_steps = task
    v = get_variant(variant)
    env = make_env(v, max_steps)
    agent = make_agent(spec, v, seed=agent_seed(seed, deal))
    agent.reset(seed=agent_seed(seed, deal))
    search = value_search(v)
    obs, info = env.reset(options={"deal": deal})
    rows: list[np.ndarray] = []
    last: tuple[int, int] | None = None
    done = not info["action_mask"].any()
    while True:
        view = TableView.from_obs(v, obs)
        f = features(view)
        key = (sum(view.down), round(f[2] * v.n_cards))
        if key != last:
            rows.append(np.append(f, graded_value(search, view)))
            last = key
        if done:
            break
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info["action_mask"], info))
        done = terminated or truncated
    env.close()
    return deal, bool(info["is_success"]), np.array(rows)


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, steps: int = 50) -> np.ndarray:
    """Logistic regression weights by Newton's method (an L2 term ``l2``)."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) + l2 * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        w -= np.linalg.solve(hess, grad)
    return w


def auc(score: np.ndarray, won: np.ndarray) -> float:
    """The chance that a won game's position scores above a lost game's (ties count half)."""
    pos, neg = score[won == 1], score[won == 0]
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="stable")
    ranks = np.empty(order.size)
    ranks[order] = np.arange(order.size)
    allv = np.concatenate([pos, neg])
    for value in np.unique(allv):  # average ranks of ties
        same = allv == value
        ranks[same] = ranks[same].mean()
    return float((ranks[: pos.size].mean() - (pos.size - 1) / 2) / neg.size)


def report(deal: np.ndarray, won: np.ndarray, x: np.ndarray, graded: np.ndarray) -> str:
    """The text report of the module docstring."""
    test = deal % 5 == 0
    lines = [
        f"{x.shape[0]} positions of {np.unique(deal).size} games "
        f"({int(sum(won[deal == d][0] for d in np.unique(deal)))} won); "
        f"held out: {int(test.sum())} positions of the deals that are multiples of 5"
    ]
    if not test.any() or test.all() or len(set(won[~test])) < 2:
        return "\n".join([*lines, "too few games to fit (both outcomes needed in training)"])
    w = fit(x[~test], won[~test])
    learned = x @ w
    lines.append(
        f"all positions: AUC learned {auc(learned[test], won[test]):.3f}, "
        f"graded {auc(graded[test], won[test]):.3f}"
    )
    stock = np.rint(x[:, FEATURES.index("stock")] * 1000).astype(int)
    for s in sorted(set(stock[test].tolist()), reverse=True):
        m = test & (stock == s)
        if m.sum() >= 50 and 0 < won[m].mean() < 1:
            lines.append(
                f"  stock share {s / 1000:.3f} ({int(m.sum())} positions): AUC learned "
                f"{auc(learned[m], won[m]):.3f}, graded {auc(graded[m], won[m]):.3f}"
            )
    lines.append("weights (every game): " + ",".join(f"{v:.4f}" for v in fit(x, won)))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="values.py", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--agent", default="planner", help="the player whose games are recorded")
    p.add_argument("--variant", default="spider-1suit")
    p.add_argument("--deals", default="30000:30100", help="deal range, e.g. 30000:31000")
    p.add_argument("--seed", type=int, default=0, help="as spider-env evaluate --seed")
    p.add_argument("--max-steps", type=int, default=None, help="the registered limit if unset")
    p.add_argument("--jobs", type=int, default=1, help="processes (1 or 2)")
    p.add_argument("--out", help="write the positions here (.npz)")
    p.add_argument("--load", help="fit positions written by --out instead of playing")
    args = p.parse_args(argv)
    if args.load:
        try:
            with np.load(args.load) as z:
                deal, won, x, graded = z["deal"], z["won"], z["x"], z["graded"]
        except (OSError, ValueError, KeyError) as exc:
            p.error(f"--load: cannot read {args.load}: {exc}")
        if x.ndim != 2 or x.shape[1] != len(FEATURES) or not len(deal) == len(won) == len(x):
            p.error(f"--load: {args.load} does not hold this script's features")
        print(report(deal, won, x, graded))
        return 0
    try:
        v, deals = check_games(args.variant, args.deals, args.seed, args.max_steps, args.jobs)
        check_writable("--out", args.out)
    except ValueError as exc:
        p.error(str(exc))
    try:
        make_agent(args.agent, v, seed=0)
    except (ValueError, TypeError) as exc:
        p.error(f"--agent: {exc}")
    tasks = [(args.agent, v.name, d, args.seed, args.max_steps) for d in deals]
    if args.jobs == 1:
        games = [play(t) for t in tasks]
    else:
        with mp.get_context("spawn").Pool(args.jobs) as pool:
            games = pool.map(play, tasks, chunksize=1)
    deal = np.concatenate([np.full(len(r), d) for d, _, r in games])
    won = np.concatenate([np.full(len(r), float(w)) for _, w, r in games])
    rows = np.concatenate([r for _, _, r in games])
    x, graded = rows[:, :-1], rows[:, -1]
    if args.out:
        np.savez(args.out, deal=deal, won=won, x=x, graded=graded)
    print(report(deal, won, x, graded))
    return 0


if __name__ == "__main__":
    sys.exit(main())
