"""The ``spider-env`` command: evaluate agents, show and replay episodes, play, demo.

    spider-env evaluate --agent random --agent greedy --suits 1 --deals 0:1000 --jobs 2
    spider-env show --deal 7 --agent greedy [--save ep.jsonl] [--gif ep.gif]
    spider-env replay ep.jsonl [--delay 0.2]
    spider-env play --suits 1 --deal 7
    spider-env demo
    spider-env variants
    spider-env solve --suits 1 --deal 7 | --deals 0:100 [--jobs 2 --csv out.csv]
    spider-env model show runs/ppo/model.safetensors | convert model.zip model.safetensors

Bad input (a wrong type or out-of-range value, an unknown agent or variant, a bad deal range,
a missing, unwritable or corrupt file, a ``ValueError`` / ``TypeError`` of the library) gets
one line on stderr naming the problem and exit status 2, never a traceback. Deals are
identified by the number given (``--deal``), never read back from the env's ``info``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from spider_env import __version__
from spider_env.agents import AGENT_NAMES
from spider_env.core.deals import DEAL_NUMBERS
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS, SpiderEnv

PROG = "spider-env"


class CliError(Exception):
    """A user error: printed as ``spider-env: error: ...``, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``spider-env show: error: ...``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


MAX_DELAY = 3600.0  # seconds between replayed frames
# A GIF's frames (show --gif): one step at the env's render_fps; the final position held longer.
GIF_FRAME_MS = round(1000 / SpiderEnv.metadata["render_fps"])
GIF_FINAL_MS = 3000


def _agent_choices() -> str:
    """The agents an ``--agent`` option takes, for help texts."""
    return (
        f"{', '.join(AGENT_NAMES)}, expert:samples=S,nodes=N, planner:budget=N (its dial), "
        "planner:evals=N,... or a trained model's PATH.safetensors (or an SB3 PATH.zip)"
    )


def _int_in(low: int, high: int | None = None, what: str = "") -> Callable[[str], int]:
    """An argparse type: an integer ``low <= n < high`` (``high=None``: no upper bound)."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if n < low:
            bound = "0 or more" if low == 0 else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {n}")
        if high is not None and n >= high:
            raise argparse.ArgumentTypeError(f"must be {what or f'below {high}'}, got {n}")
        return n

    return parse


_positive_int = _int_in(1)
_non_negative_int = _int_in(0)
_deal_number = _int_in(0, DEAL_NUMBERS, "a deal number 0 .. 2**64-1 (18446744073709551615)")


def _delay(text: str) -> float:
    """An argparse type: seconds between frames, a finite number 0 .. MAX_DELAY."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= x <= MAX_DELAY:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"must be 0 .. {MAX_DELAY:g} seconds, got {text}")
    return x


def _probability(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < x < 1:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be between 0 and 1 (exclusive), got {text}")
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


def _add_model_mode_args(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--deterministic",
        dest="deterministic",
        action="store_const",
        const=True,
        help="trained models play their most likely action",
    )
    g.add_argument(
        "--sample",
        dest="deterministic",
        action="store_const",
        const=False,
        help="trained models sample their actions from the policy (the default unless the "
        "model says otherwise)",
    )
    p.add_argument(
        "--allow-other-game",
        action="store_true",
        help="play trained models on this game even where they were trained on another (a "
        "one-line warning each; without it such a model is refused)",
    )


def _subparser(sub: Any, name: str, summary: str, description: str, **kw: Any) -> Any:
    return sub.add_parser(
        name,
        help=summary,
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kw,
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``spider-env`` argument parser (one-line errors, exit status 2)."""
    parser = _Parser(
        prog=PROG,
        description="Spider Solitaire environment: evaluate agents, watch, replay and play.",
        epilog="Run `spider-env COMMAND --help` for a command's options.",
    )
    parser.add_argument(
        "--version", action="version", version=f"{PROG} {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = _subparser(
        sub,
        "evaluate",
        "play agents on the same seeded deals and compare them",
        "Play each agent on exactly the same deals; print win rate (95% Wilson interval), mean\n"
        "completed runs, score, moves and steps/s; compare agents pairwise (exact McNemar test\n"
        "on the deals only one of them won). Without --suits or --variant, trained models\n"
        "play the game they were trained on, else classic 4-suit Spider.",
        epilog="example: spider-env evaluate --agent random --agent greedy --suits 1 "
        "--deals 0:1000 --jobs 2",
    )
    p.add_argument(
        "--agent",
        action="append",
        metavar="AGENT",
        help=f"{_agent_choices()} (repeat to compare; default random and greedy)",
    )
    _add_game_args(p)
    p.add_argument(
        "--deals",
        default="0:1000",
        help="deal numbers: 0:1000 (the default; stop excluded), 7, 1,5,9",
    )
    p.add_argument("--jobs", type=_positive_int, default=1, help="worker processes")
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play on Ray instead of --jobs (pip install 'spider-env[ray]'): 'local' starts a "
        "private Ray instance on this machine (all its cores) and stops it afterwards; 'auto', "
        "HOST:PORT or ray://HOST:PORT joins that running cluster (spider-env installed on its "
        "nodes; a cluster with token authentication also needs RAY_AUTH_MODE=token)",
    )
    p.add_argument(
        "--max-steps",
        type=_positive_int,
        default=DEFAULT_MAX_EPISODE_STEPS,
        help=f"step limit per deal (default {DEFAULT_MAX_EPISODE_STEPS})",
    )
    p.add_argument("--seed", type=_non_negative_int, default=0, help="base of the agents' seeds")
    p.add_argument(
        "--alpha", type=_probability, default=0.05, help="significance level (default 0.05)"
    )
    p.add_argument("--json", metavar="FILE", help="write summary and per-deal results as JSON")
    p.add_argument("--csv", metavar="FILE", help="write per-deal results as CSV")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_model_mode_args(p)

    p = _subparser(
        sub,
        "show",
        "play one deal with an agent and print the whole episode",
        "Play one deal with an agent and print every position of the game (or only the last\n"
        "with --final), then how it ended; --save writes the episode as JSON lines for\n"
        "`spider-env replay`, --gif as an animated GIF.",
        epilog="example: spider-env show --deal 7 --agent greedy --suits 1 --save ep.jsonl",
    )
    p.add_argument("--deal", type=_deal_number, default=0, help="deal number (default 0)")
    p.add_argument(
        "--agent",
        default="greedy",
        help=f"{_agent_choices()} (default greedy)",
    )
    _add_game_args(p)
    p.add_argument(
        "--max-steps",
        type=_positive_int,
        default=DEFAULT_MAX_EPISODE_STEPS,
        help=f"step limit (default {DEFAULT_MAX_EPISODE_STEPS})",
    )
    p.add_argument("--seed", type=_non_negative_int, default=0, help="the agent's seed base")
    p.add_argument("--final", action="store_true", help="print only the final position")
    p.add_argument("--save", metavar="FILE", help="record the episode (JSON lines)")
    p.add_argument(
        "--gif",
        metavar="FILE",
        help="write the episode as an animated GIF: one frame per step, "
        f"{GIF_FRAME_MS} ms each, the last held {GIF_FINAL_MS / 1000:g} s (needs Pillow: "
        "pip install 'spider-env[render]')",
    )
    _add_render_args(p)
    _add_model_mode_args(p)

    p = _subparser(
        sub,
        "replay",
        "replay a recorded episode (JSON lines) as text frames",
        "Replay an episode file written by `show --save` or `play --save` through the\n"
        "environment, one frame per action: press Enter for the next frame (q stops), or\n"
        "--delay SECONDS to play it back, or --final for the last position. A file that is\n"
        "not a valid episode (bad JSON, truncated, an illegal action, a move text that does\n"
        "not match its action, a reward or outcome that differs) is refused, naming the line\n"
        "or step.",
    )
    p.add_argument("file", help="an episode file written by `show --save` or `play --save`")
    p.add_argument(
        "--delay",
        type=_delay,
        help=f"seconds between frames, 0 .. {MAX_DELAY:g} (default: wait for Enter)",
    )
    p.add_argument("--final", action="store_true", help="print only the final position")
    _add_render_args(p)

    from spider_env.apps.play import HELP

    p = _subparser(
        sub,
        "play",
        "play Spider in the terminal",
        "Play a deal yourself. Columns are numbered from 0, as on screen (a free column may\n"
        "be typed F8 or 8). On a terminal the table is redrawn in place; with --save your game\n"
        "is written as an episode file for `spider-env replay`.\n\n"
        + HELP.format(pile=" (d P: deal stock pile P where you choose the pile)")
        + "\n\nA move without a count (3 7) moves as many cards as can go; onto an empty "
        "column\nthat is the whole movable run. Bad input gets a message and the game goes on.",
        epilog="example: spider-env play --suits 1 --deal 7",
    )
    _add_game_args(p, undo=False)
    p.add_argument("--deal", type=_deal_number, help="deal number (default: a random one)")
    p.add_argument("--save", metavar="FILE", help="record your game (JSON lines)")
    _add_render_args(p)

    from spider_env.search.budget import (
        DEFAULT_BEAM_NODES,
        DEFAULT_DFS_NODES,
        DEFAULT_NODES,
        METHODS,
    )

    p = _subparser(
        sub,
        "solve",
        "search for a winning line with every card known, replay it through the env",
        "Solve deals with perfect information (the face-down cards and the stock known to the\n"
        "solver): the verdict is won (with the line), lost (every reachable position searched)\n"
        "or unknown (the budget ran out, or moves were left out). A won line is replayed\n"
        "through the environment (every action legal in its mask, the game won at the end).\n"
        "--deals solves a batch and prints a summary (win share with a 95% Wilson interval).",
        epilog="example: spider-env solve --suits 1 --deal 7; "
        "spider-env solve --suits 2 --deals 0:100 --jobs 2 --csv solved.csv",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--deal", type=_deal_number, help="deal number (default 0)")
    g.add_argument("--deals", help="a batch of deal numbers: 0:1000 (stop excluded), 7, 1,5,9")
    g.add_argument(
        "--deal-file",
        metavar="FILE",
        help="a deal text (Play0:/Deal0: lines as deal_to_text writes them; its variant: line "
        "is used unless --variant/--suits is given, and must then agree)",
    )
    _add_game_args(p)
    p.add_argument(
        "--method",
        choices=METHODS,
        default="auto",
        help="beam (beam search, several widths), best-first (the first solver), dfs "
        "(depth-first over every position: proves losses on Scorpion), or auto: the "
        "variant's best, measured (default auto)",
    )
    p.add_argument(
        "--nodes",
        type=_positive_int,
        default=None,
        help=f"the budget per deal: positions generated by the beam (default "
        f"{DEFAULT_BEAM_NODES:,}) or dfs (default {DEFAULT_DFS_NODES:,}), or stored by "
        f"best-first (default {DEFAULT_NODES:,})",
    )
    p.add_argument(
        "--seconds", type=float, help="a wall-clock budget per deal as well (default: none)"
    )
    p.add_argument("--jobs", type=_positive_int, default=1, help="worker processes (--deals)")
    p.add_argument("--csv", metavar="FILE", help="write per-deal results as CSV (--deals)")
    p.add_argument(
        "--quiet", action="store_true", help="print only the verdict (or a one-line summary)"
    )

    _subparser(
        sub,
        "demo",
        "evaluate random and greedy on a few deals, show an episode",
        "Evaluate random and greedy on 1-suit deals 0..19 (a few seconds), print the table\n"
        "with the paired test, and the final position of greedy's game on deal 0.",
    )
    p = _subparser(
        sub,
        "model",
        "show a trained model, or convert one to the model file format",
        "A trained model file (.safetensors) holds weights and JSON only: nothing in it runs.\n"
        "  show PATH: its game, observation, network, how it chooses, its card.\n"
        "  convert SOURCE TARGET.safetensors: a Stable-Baselines3 .zip read as data (its\n"
        "    pickled entries never decoded; needs torch). --trust-pickle unpickles SOURCE\n"
        "    instead (a zip SB3 must load itself, an RLlib checkpoint folder): only for a\n"
        "    file whose maker you trust, as unpickling runs whatever code it holds.",
        epilog="example: spider-env model convert runs/ppo/model.zip runs/ppo/model.safetensors",
    )
    msub = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)
    ps = msub.add_parser("show", help="what a trained model is", description="What a model is.")
    ps.add_argument("path", help="a model file (.safetensors) or a Stable-Baselines3 .zip")
    _add_game_args(ps, undo=False)
    pc = msub.add_parser(
        "convert", help="write a model as a model file", description="Convert to .safetensors."
    )
    pc.add_argument("source", help="a Stable-Baselines3 .zip (or, trusted, an RLlib checkpoint)")
    pc.add_argument("target", help="the model file written (.safetensors)")
    pc.add_argument(
        "--trust-pickle",
        action="store_true",
        help="unpickle SOURCE (runs any code it holds: only a file you trust)",
    )
    _add_game_args(pc, undo=False)

    _subparser(
        sub,
        "variants",
        "list the variants and their Gymnasium ids",
        "List every variant: its name (for --variant and SpiderEnv(variant=...)), the\n"
        "Gymnasium id to pass to gymnasium.make, cards, columns and a description.",
    )
    return parser


# --- commands ---------------------------------------------------------------------------------
def _variant(args: argparse.Namespace) -> Any:
    from spider_env.core.variants import resolve_variant

    try:
        return resolve_variant(args.variant, args.suits, getattr(args, "undo", False))
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None


def _agent_error(spec: str, exc: Exception) -> CliError:
    if isinstance(exc, FileNotFoundError):
        return CliError(f"agent {spec!r}: {exc}")
    return CliError(str(exc))


def _check_writable(path: str) -> None:
    """Refuse, before any work, an output path that cannot be written."""
    from spider_env.apps.evaluation.flags import write_problem

    problem = write_problem(path)
    if problem:
        raise CliError(problem)


def _write(path: str, write: Callable[[str], None]) -> None:
    try:
        write(path)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None


def _model_game(args: argparse.Namespace, specs: list[str]) -> Any:
    """Without --suits/--variant: the game the models' sidecars name (all the same one), else
    the default game."""
    import os

    if args.variant is not None or args.suits is not None:
        return _variant(args)
    from spider_env.agents.model_file import SavedModel, is_model_file
    from spider_env.agents.model_format import ModelLoadError, sidecar_variant

    games = {}
    for spec in specs:
        if not os.path.isfile(spec):
            continue
        try:
            if is_model_file(spec):
                game = SavedModel.read(spec).env.game()
            elif spec.endswith(".zip"):
                game = sidecar_variant(spec)
            else:
                continue
        except ModelLoadError as exc:
            raise CliError(str(exc)) from None
        if game is not None:
            games[spec] = game
    names = {g.name for g in games.values()}
    if len(names) > 1:
        raise CliError(
            "the models were trained on different games ("
            + ", ".join(f"{k}: {g.name}" for k, g in games.items())
            + "): choose one with --suits or --variant"
        )
    if names:
        if getattr(args, "undo", False):
            from spider_env.core.variants import resolve_variant

            try:
                return resolve_variant(next(iter(names)), None, True)
            except (ValueError, TypeError) as exc:
                raise CliError(str(exc)) from None
        return next(iter(games.values()))
    return _variant(args)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from spider_env.apps.evaluation import AgentError, evaluate, parse_deals

    specs = args.agent or ["random", "greedy"]
    v = _model_game(args, specs)
    try:
        deals = parse_deals(args.deals)
    except (ValueError, TypeError) as exc:
        raise CliError(f"--deals: {exc}") from None
    if args.ray is not None and args.jobs > 1:
        raise CliError(f"--ray {args.ray} and --jobs {args.jobs}: give one of them, not both")
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
            deterministic=args.deterministic,
            ray=args.ray,
            allow_other_game=args.allow_other_game,
        )
    except (AgentError, ValueError, TypeError, ImportError, OSError) as exc:
        # unknown agents, missing or foreign model files, bad arguments, Ray missing or
        # unreachable (ConnectionError): one line
        raise CliError(str(exc)) from None
    print(result.table())
    where = f"{result.backend}, {result.jobs} CPU(s)" if args.ray else f"{result.jobs} job(s)"
    print(f"({result.wall_seconds:.1f} s wall time, {where})")
    if args.json:
        _write(args.json, result.to_json)
        print(f"per-deal results: {args.json}")
    if args.csv:
        _write(args.csv, result.write_csv)
        print(f"per-deal results: {args.csv}")
    return 0


RESULT_WORDS = {
    "won": "won",
    "lost": "lost (no legal action left)",
    "step limit": "stopped at the step limit",
    "quit": "quit",
}


def outcome_line(outcome: dict[str, Any], agent: str, variant: str, deal: Any) -> str:
    """``greedy on spider-1suit deal 7: won, 8 runs, score 1023, ...`` (how the game ended:
    won, lost, stopped at the step limit, or quit)."""
    from spider_env.apps.episodes import outcome_result

    result = outcome_result(outcome)
    ended = RESULT_WORDS.get(result, "ended") if result else "ended"
    return (
        f"{agent} on {variant} deal {deal}: {ended}, {outcome.get('completed_runs')} runs, "
        f"score {outcome.get('score')}, {outcome.get('moves')} moves, "
        f"{outcome.get('steps')} steps"
    )


def cmd_show(args: argparse.Namespace) -> int:
    from spider_env.apps.episodes import play_frames, record_episode, replay_frames
    from spider_env.apps.evaluation import AgentError

    v = _model_game(args, [args.agent])
    if args.save:
        _check_writable(args.save)
    if args.gif:
        from spider_env.render_image import require_pillow

        _check_writable(args.gif)
        try:
            require_pillow()
        except ImportError as exc:
            raise CliError(f"--gif: {exc}") from None
    try:
        ep = record_episode(
            args.agent,
            v,
            args.deal,
            seed=args.seed,
            max_steps=args.max_steps,
            deterministic=args.deterministic,
            allow_other_game=args.allow_other_game,
        )
    except (ValueError, TypeError, ImportError, OSError) as exc:
        raise _agent_error(args.agent, exc) from None
    except AgentError as exc:
        raise CliError(str(exc)) from None
    play_frames(
        replay_frames(ep, ascii=args.ascii, color=args.color),
        delay=None,
        out=sys.stdout,
        final_only=args.final,
    )
    print(outcome_line(ep.outcome, ep.agent, v.name, args.deal))
    if args.save:
        _write(args.save, ep.save)
        print(f"episode saved: {args.save}")
    if args.gif:
        from spider_env.apps.episodes import replay_images
        from spider_env.render_image import write_gif

        def gif(path: str) -> None:
            n = write_gif(replay_images(ep), path, frame_ms=GIF_FRAME_MS, final_ms=GIF_FINAL_MS)
            print(f"GIF saved: {path} ({n} frames)")

        _write(args.gif, gif)
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from spider_env.apps.episodes import Episode, EpisodeError, play_frames, replay_frames

    try:
        ep = Episode.load(args.file)
    except FileNotFoundError:
        raise CliError(f"episode file not found: {args.file}") from None
    except PermissionError:
        raise CliError(f"cannot read {args.file}: permission denied") from None
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror or exc}") from None
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
    print(outcome_line(ep.outcome, ep.agent or "player", ep.variant, deal))
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from spider_env.apps.play import TerminalGame

    v = _variant(args)
    if args.save:
        _check_writable(args.save)
    try:
        game = TerminalGame(v, deal=args.deal, ascii=args.ascii, color=args.color)
    except (ValueError, TypeError) as exc:
        raise CliError(str(exc)) from None
    game.run(sys.stdin, sys.stdout)
    if args.save:
        try:
            episode = game.episode()
        except ValueError as exc:
            raise CliError(f"cannot save the game: {exc}") from None
        _write(args.save, episode.save)
        print(f"game saved: {args.save}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from spider_env.apps.episodes import play_frames, record_episode, replay_frames
    from spider_env.apps.evaluation import evaluate
    from spider_env.core.variants import classic

    v = classic(1)
    print("spider-env demo: random and greedy on 1-suit Spider, deals 0:20, seed 0\n")
    # The first run compiles the core (numba, cached next to the sources): say so, and time it
    # apart from the games.
    print("preparing the compiled core (the first run compiles it: about 10 s) ...", end=" ")
    sys.stdout.flush()
    t0 = time.perf_counter()
    evaluate(["random", "greedy"], range(1), variant=v, max_steps=5)
    print(f"ready in {time.perf_counter() - t0:.1f} s\n")
    result = evaluate(["random", "greedy"], "0:20", variant=v, progress=True)
    print(result.table())
    print(f"({result.wall_seconds:.1f} s)\n")
    ep = record_episode("greedy", v, 0)
    print("greedy on deal 0, final position:")
    play_frames(replay_frames(ep), delay=None, out=sys.stdout, final_only=True)
    print(outcome_line(ep.outcome, "greedy", v.name, 0))
    print("\nMore: spider-env evaluate --help | show --deal 3 | play --suits 1 | replay FILE")
    return 0


def variant_env_ids() -> dict[str, str]:
    """Variant name -> the Gymnasium id(s) that make it (``Spider-v0`` takes ``suits=``)."""
    from spider_env.core.variants import classic
    from spider_env.registration import ENV_IDS

    ids: dict[str, list[str]] = {}
    for env_id, name in ENV_IDS.items():
        if name is None:  # classic Spider, chosen with suits=
            for suits in (1, 2, 4):
                ids.setdefault(classic(suits).name, []).append(f"{env_id} suits={suits}")
        else:
            ids.setdefault(name, []).append(env_id)
    return {name: ", ".join(found) for name, found in ids.items()}


def cmd_model(args: argparse.Namespace) -> int:
    from spider_env.apps import models

    v = None if args.variant is None and args.suits is None else _variant(args)
    try:
        if args.model_command == "show":
            models.show(args.path, v, sys.stdout)
        else:
            _check_writable(args.target)
            models.convert(args.source, args.target, v, args.trust_pickle, sys.stdout)
    except (ValueError, TypeError, ImportError, OSError) as exc:
        raise CliError(str(exc)) from None
    return 0


def cmd_variants(args: argparse.Namespace) -> int:
    from spider_env.core.variants import VARIANTS

    ids = variant_env_ids()
    rows = [
        (name, ids.get(name, "-"), f"{v.n_cards} cards", f"{v.n_columns} columns", v.description)
        for name, v in VARIANTS.items()
    ]
    heads = ("variant", "gymnasium.make id", "cards", "columns", "description")
    widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(4)]
    for row in [heads, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])
    print(
        "\nUse: gymnasium.make(ID) (Spider-v0 takes suits=1|2|4), SpiderEnv(variant=NAME), "
        "or --variant NAME."
    )
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    from spider_env.apps.solve import SolveError, run

    if args.csv:
        _check_writable(args.csv)
    try:
        return run(args)
    except SolveError as exc:
        raise CliError(str(exc)) from None


COMMANDS = {
    "evaluate": cmd_evaluate,
    "show": cmd_show,
    "replay": cmd_replay,
    "play": cmd_play,
    "demo": cmd_demo,
    "variants": cmd_variants,
    "solve": cmd_solve,
    "model": cmd_model,
}


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """The command's warnings: one line, ``spider-env: warning: ...``."""
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``spider-env`` command; returns the exit status (argument errors exit with
    status 2 from argparse)."""
    import warnings

    warnings.showwarning = _one_line_warning
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
    except MemoryError:
        print(f"{PROG}: error: out of memory (is a number or range too large?)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 0


def _quiet_stdout() -> None:
    """After a broken pipe (``spider-env variants | head``), send the rest of stdout nowhere so
    that Python's exit does not report the pipe again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (tests)
        pass


if __name__ == "__main__":
    sys.exit(main())
