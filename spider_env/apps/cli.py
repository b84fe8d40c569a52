"""The ``spider-env`` command: evaluate agents, show and replay episodes, play, demo.

    spider-env evaluate --agent random --agent greedy --suits 1 --deals 0:1000 --jobs 2
    spider-env show --deal 7 --agent greedy [--save ep.jsonl]
    spider-env replay ep.jsonl [--delay 0.2]
    spider-env play --suits 1 --deal 7
    spider-env demo

Bad input (unknown agent or variant, bad deal range, missing or corrupt file) gets a one-line
message naming the problem and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

PROG = "spider-env"


class CliError(Exception):
    """A user error: printed as ``spider-env: error: ...``, exit status 2."""


def _int_at_least(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if n < low:
            bound = "0 or more" if low == 0 else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {n}")
        return n

    return parse


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)


def _non_negative_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not x >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return x


def _add_game_args(p: argparse.ArgumentParser, undo: bool = True) -> None:
    p.add_argument(
        "--suits", type=int, choices=(1, 2, 4), help="classic Spider with 1, 2 or 4 suits"
    )
    p.add_argument("--variant", help="a variant name (see `spider-env variants`)")
    if undo:
        p.add_argument("--undo", action="store_true", help="add the undo action to the variant")


def _add_render_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ascii", action="store_true", help="plain-ASCII cards (KS TH, ## backs)")
    p.add_argument("--color", action="store_true", help="red suits in colour (ANSI)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Spider Solitaire environment: evaluate, watch and play."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "evaluate",
        help="play agents on the same seeded deals and compare them",
        description="Play each agent on exactly the same deals; print win rate (95%% Wilson "
        "interval), mean completed runs, score, moves, steps/s; compare agents pairwise "
        "(exact McNemar test).",
    )
    p.add_argument(
        "--agent",
        action="append",
        metavar="AGENT",
        help="random, greedy, lookahead or PATH.zip (repeat to compare; default random and greedy)",
    )
    _add_game_args(p)
    p.add_argument(
        "--deals",
        default="0:1000",
        help="deal numbers: 0:1000 (the default; stop excluded), 7, 1,5,9",
    )
    p.add_argument("--jobs", type=_positive_int, default=1, help="worker processes")
    p.add_argument("--max-steps", type=_positive_int, default=1000, help="step limit per deal")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="base of the agents' seeds")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level")
    p.add_argument("--json", metavar="FILE", help="write summary and per-deal results as JSON")
    p.add_argument("--csv", metavar="FILE", help="write per-deal results as CSV")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = sub.add_parser("show", help="play one deal with an agent and print the whole episode")
    p.add_argument("--deal", type=_non_negative_int, default=0, help="deal number")
    p.add_argument("--agent", default="greedy", help="random, greedy, lookahead or PATH.zip")
    _add_game_args(p)
    p.add_argument("--max-steps", type=_positive_int, default=1000, help="step limit")
    p.add_argument("--seed", type=_non_negative_int, default=0, help="the agent's seed base")
    p.add_argument("--final", action="store_true", help="print only the final position")
    p.add_argument("--save", metavar="FILE", help="record the episode (JSON lines)")
    _add_render_args(p)

    p = sub.add_parser("replay", help="replay a recorded episode (JSON lines) as ANSI frames")
    p.add_argument("file", help="an episode file written by `show --save` or `play --save`")
    p.add_argument(
        "--delay", type=_non_negative_float, help="seconds between frames (default: press Enter)"
    )
    p.add_argument("--final", action="store_true", help="print only the final position")
    _add_render_args(p)

    p = sub.add_parser("play", help="play Spider in the terminal")
    _add_game_args(p, undo=False)
    p.add_argument("--deal", type=_non_negative_int, help="deal number (default: random)")
    p.add_argument("--save", metavar="FILE", help="record your game (JSON lines)")
    _add_render_args(p)

    sub.add_parser("demo", help="evaluate random and greedy on a few deals, show an episode")
    sub.add_parser("variants", help="list the variants")
    return parser


# --- commands ---------------------------------------------------------------------------------
def _variant(args: argparse.Namespace) -> Any:
    from spider_env.apps.evaluation import resolve_variant

    try:
        return resolve_variant(args.variant, args.suits, getattr(args, "undo", False))
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None


def _agent(spec: str, variant: Any) -> Any:
    from spider_env.agents import make_agent

    try:
        return make_agent(spec, variant)
    except FileNotFoundError as exc:
        raise CliError(f"agent {spec!r}: {exc}") from None
    except (ValueError, ImportError) as exc:
        raise CliError(str(exc)) from None


def cmd_evaluate(args: argparse.Namespace) -> int:
    from spider_env.apps.evaluation import AgentError, evaluate, parse_deals

    v = _variant(args)
    try:
        deals = parse_deals(args.deals)
    except ValueError as exc:
        raise CliError(f"--deals: {exc}") from None
    if not 0 < args.alpha < 1:
        raise CliError(f"--alpha must be between 0 and 1, got {args.alpha}")
    specs = args.agent or ["random", "greedy"]
    for spec in specs:
        _agent(spec, v)  # unknown names and missing files fail here, with a clear message
    for path in (args.json, args.csv):
        if path:
            _check_writable(path)
    try:
        result = evaluate(
            specs,
            deals,
            variant=v,
            jobs=args.jobs,
            max_steps=args.max_steps,
            seed=args.seed,
            alpha=args.alpha,
            progress=not args.no_progress,
        )
    except AgentError as exc:
        raise CliError(str(exc)) from None
    print(result.table())
    print(f"({result.wall_seconds:.1f} s wall time, {args.jobs} job(s))")
    if args.json:
        result.to_json(args.json)
        print(f"per-deal results: {args.json}")
    if args.csv:
        result.write_csv(args.csv)
        print(f"per-deal results: {args.csv}")
    return 0


def _check_writable(path: str) -> None:
    import os

    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise CliError(f"cannot write {path}: directory {d} does not exist")
    if os.path.isdir(path):
        raise CliError(f"cannot write {path}: it is a directory")


def cmd_show(args: argparse.Namespace) -> int:
    from spider_env.apps.episodes import play_frames, record_episode, replay_frames

    v = _variant(args)
    agent = _agent(args.agent, v)
    if args.save:
        _check_writable(args.save)
    ep = record_episode(
        agent, v, args.deal, seed=args.seed, max_steps=args.max_steps, agent_name=args.agent
    )
    play_frames(
        replay_frames(ep, ascii=args.ascii, color=args.color),
        delay=None,
        out=sys.stdout,
        final_only=args.final,
    )
    print(_outcome_line(ep.outcome, args.agent, v.name, args.deal))
    if args.save:
        ep.save(args.save)
        print(f"episode saved: {args.save}")
    return 0


def _outcome_line(outcome: dict[str, Any], agent: str, variant: str, deal: Any) -> str:
    result = "won" if outcome.get("won") else "lost"
    extra = " (step limit)" if outcome.get("truncated") else ""
    return (
        f"{agent} on {variant} deal {deal}: {result}{extra}, {outcome.get('completed_runs')} runs, "
        f"score {outcome.get('score')}, {outcome.get('moves')} moves, "
        f"{outcome.get('steps')} steps"
    )


def cmd_replay(args: argparse.Namespace) -> int:
    from spider_env.apps.episodes import Episode, EpisodeError, play_frames, replay_frames

    try:
        ep = Episode.load(args.file)
    except FileNotFoundError:
        raise CliError(f"episode file not found: {args.file}") from None
    except PermissionError:
        raise CliError(f"cannot read {args.file}: permission denied") from None
    except EpisodeError as exc:
        raise CliError(str(exc)) from None

    interactive = args.delay is None and not args.final and sys.stdin.isatty()

    def wait() -> bool:
        try:
            line = input("[Enter: next, q: quit] ")
        except EOFError:
            return True
        return line.strip().lower() not in ("q", "quit")

    try:
        play_frames(
            replay_frames(ep, ascii=args.ascii, color=args.color),
            delay=args.delay,
            out=sys.stdout,
            wait=wait if interactive else None,
            final_only=args.final,
        )
    except EpisodeError as exc:
        raise CliError(f"{args.file}: {exc}") from None
    deal = ep.deal if ep.deal is not None else "(custom)"
    print(_outcome_line(ep.outcome, ep.agent or "player", ep.variant, deal))
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from spider_env.apps.play import TerminalGame

    v = _variant(args)
    if args.save:
        _check_writable(args.save)
    game = TerminalGame(v, deal=args.deal, ascii=args.ascii, color=args.color)
    game.run(sys.stdin, sys.stdout)
    if args.save:
        game.episode().save(args.save)
        print(f"game saved: {args.save}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from spider_env.apps.episodes import play_frames, record_episode, replay_frames
    from spider_env.apps.evaluation import evaluate
    from spider_env.core.variants import classic

    v = classic(1)
    print("spider-env demo: random and greedy on 1-suit Spider, deals 0:20, seed 0\n")
    result = evaluate(["random", "greedy"], "0:20", variant=v, max_steps=1000, progress=True)
    print(result.table())
    print(f"({result.wall_seconds:.1f} s)\n")
    agent = _agent("greedy", v)
    ep = record_episode(agent, v, 0, agent_name="greedy")
    print("greedy on deal 0, final position:")
    play_frames(replay_frames(ep), delay=None, out=sys.stdout, final_only=True)
    print(_outcome_line(ep.outcome, "greedy", v.name, 0))
    print("\nMore: spider-env evaluate --help | show --deal 3 | play --suits 1 | replay FILE")
    return 0


def cmd_variants(args: argparse.Namespace) -> int:
    from spider_env.core.variants import VARIANTS

    for name, v in VARIANTS.items():
        print(f"{name:26s} {v.n_cards:3d} cards, {v.n_columns:2d} columns, {v.description}")
    return 0


COMMANDS = {
    "evaluate": cmd_evaluate,
    "show": cmd_show,
    "replay": cmd_replay,
    "play": cmd_play,
    "demo": cmd_demo,
    "variants": cmd_variants,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    try:
        return COMMANDS[args.command](args)
    except CliError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
