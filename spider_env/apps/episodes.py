"""Episodes as small JSON-lines files: record, save, load, replay.

Format (``spider-env episode`` version 1), one JSON object per line:

1. header: ``{"format": "spider-env episode", "version": 1, "variant": "spider-1suit",
   "options": "", "deal": 7, "agent": "greedy", "seed": 0, "reward_mode": "score"}``
   (``options``: the variant's ``key=value`` options, e.g. ``undo=true``; a custom deal has
   ``"deal": null`` and ``"deal_text": "..."`` instead);
2. one line per step: ``{"step": 0, "action": 1203, "move": "move 1 card 9 -> 2",
   "reward": -1.0}``;
3. last line: ``{"outcome": {"result": "lost", "won": false, "completed_runs": 3, "score": 612,
   "moves": 388, "steps": 392, "reward": 112.0, "terminated": true, "truncated": false}}``;
   ``result`` says how the game ended (:data:`RESULTS`): ``"won"``, ``"lost"`` (no legal action
   left), ``"step limit"`` (stopped by the step limit) or ``"quit"`` (the player stopped).

The deal is recorded from what the env was reset with (the ``deal`` number given to
:func:`record_episode` or :class:`~spider_env.apps.play.TerminalGame`), never read back from
``info``. Loading checks every field; a step's ``move`` text must be the words of its
``action`` (a file whose texts disagree with its ids is refused, naming the line and step).
:func:`replay_frames` re-plays an episode through the env (``SpiderEnv`` with
``render_mode="ansi"``) and yields one rendered frame per position, checking on the way that
every action is legal, every reward is the recorded one and the game ends as the outcome says
(:class:`EpisodeError` otherwise); :func:`replay_images` does the same with
``render_mode="rgb_array"`` (images, e.g. for
:func:`spider_env.render_image.write_gif`).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spider_env.apps.evaluation import make_env, play_episode
from spider_env.apps.evaluation.players import agent_names, build_agent, check_deterministic
from spider_env.core.actions import describe
from spider_env.core.checks import check_int, is_int, is_number
from spider_env.core.deals import DEAL_NUMBERS
from spider_env.core.variants import VARIANTS, Variant, get_variant, parse_options
from spider_env.env import DEFAULT_MAX_EPISODE_STEPS, SpiderEnv

# Cursor home + clear screen: frames are redrawn in place on a terminal.
CLEAR_SCREEN = "\x1b[H\x1b[2J"
FORMAT = "spider-env episode"
VERSION = 1
# How an episode ended, as ``outcome["result"]``.
RESULTS = ("won", "lost", "step limit", "quit")


class EpisodeError(ValueError):
    """A corrupt or inconsistent episode file (the message names the line and the problem)."""


def episode_outcome(
    *,
    won: bool,
    completed_runs: int,
    score: int,
    moves: int,
    steps: int,
    reward: float,
    terminated: bool,
    truncated: bool,
) -> dict[str, Any]:
    """The ``outcome`` of an episode, with its ``result``: ``"won"``; ``"lost"`` (ended with no
    legal action left); ``"step limit"`` (truncated); ``"quit"`` (neither: the player stopped)."""
    if won:
        result = "won"
    elif terminated:
        result = "lost"
    elif truncated:
        result = "step limit"
    else:
        result = "quit"
    return {
        "result": result,
        "won": bool(won),
        "completed_runs": int(completed_runs),
        "score": int(score),
        "moves": int(moves),
        "steps": int(steps),
        "reward": round(float(reward), 6),
        "terminated": bool(terminated),
        "truncated": bool(truncated and not terminated),
    }


def outcome_result(outcome: dict[str, Any]) -> str | None:
    """How the episode ended (one of :data:`RESULTS`): its ``result``, or for files written
    before ``result`` existed, what ``won`` / ``terminated`` / ``truncated`` say; ``None`` if
    the outcome says nothing."""
    result = outcome.get("result")
    if isinstance(result, str):
        return result
    if "won" not in outcome:
        return None
    if outcome.get("won"):
        return "won"
    if outcome.get("terminated"):
        return "lost"
    if outcome.get("truncated"):
        return "step limit"
    return "quit"


@dataclass
class Episode:
    variant: str
    deal: int | None
    actions: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    outcome: dict[str, Any] = field(default_factory=dict)
    options: str = ""
    deal_text: str | None = None
    agent: str = ""
    seed: int | None = None
    reward_mode: str = "score"

    def get_variant(self) -> Variant:
        v = get_variant(self.variant)
        return parse_options(v, self.options) if self.options else v

    def reset_options(self) -> dict[str, Any]:
        if self.deal is not None:
            return {"deal": self.deal}
        return {"deal_text": self.deal_text}

    # --- file form -------------------------------------------------------------------------
    def to_lines(self, describe_moves: bool = True) -> list[str]:
        v = self.get_variant()
        head: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "variant": self.variant,
            "options": self.options,
            "deal": self.deal,
        }
        if self.deal is None:
            head["deal_text"] = self.deal_text
        head.update(agent=self.agent, seed=self.seed, reward_mode=self.reward_mode)
        lines = [json.dumps(head)]
        for i, (a, r) in enumerate(zip(self.actions, self.rewards)):
            step: dict[str, Any] = {"step": i, "action": a}
            if describe_moves:
                step["move"] = describe(v, a)
            step["reward"] = r
            lines.append(json.dumps(step))
        lines.append(json.dumps({"outcome": self.outcome}))
        return lines

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(self.to_lines()) + "\n")

    @classmethod
    def load(cls, path: str) -> Episode:
        """Read an episode file (UTF-8, a byte-order mark allowed); ``FileNotFoundError`` if it
        is missing, :class:`EpisodeError` if it is not an episode."""
        try:
            with open(path, encoding="utf-8-sig") as fh:
                text = fh.read()
        except UnicodeDecodeError:
            raise EpisodeError(f"{path}: not a text file (expected JSON lines)") from None
        except IsADirectoryError:
            raise EpisodeError(f"{path}: is a directory, not an episode file") from None
        return cls.from_text(text, path)

    @classmethod
    def from_text(cls, text: str, name: str = "<episode>") -> Episode:
        """Parse an episode's text; :class:`EpisodeError` naming the line if anything is wrong."""
        lines = [(i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip()]
        if not lines:
            raise EpisodeError(f"{name}: empty file, not a spider-env episode")

        def load_line(n: int, ln: str) -> dict[str, Any]:
            try:
                obj = json.loads(ln)
            except json.JSONDecodeError as exc:
                raise EpisodeError(f"{name}, line {n}: not valid JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise EpisodeError(f"{name}, line {n}: expected a JSON object")
            return obj

        n, first = lines[0]
        head = load_line(n, first)
        if head.get("format") != FORMAT:
            raise EpisodeError(f"{name}, line {n}: not a spider-env episode (no format header)")
        if head.get("version") != VERSION:
            raise EpisodeError(f"{name}, line {n}: unsupported version {head.get('version')!r}")
        variant = head.get("variant")
        if not isinstance(variant, str):
            raise EpisodeError(f"{name}, line {n}: 'variant' must be a variant name")
        options = head.get("options", "") or ""
        if not isinstance(options, str):
            raise EpisodeError(f"{name}, line {n}: 'options' must be text like 'undo=true'")
        try:
            v = get_variant(variant)
            if options:
                v = parse_options(v, options)
        except (ValueError, TypeError) as exc:
            raise EpisodeError(f"{name}, line {n}: {exc}") from None
        deal = head.get("deal")
        deal_text = head.get("deal_text")
        if deal is None:
            if not isinstance(deal_text, str):
                raise EpisodeError(f"{name}, line {n}: needs an int 'deal' or a 'deal_text'")
        elif not is_int(deal) or not 0 <= deal < DEAL_NUMBERS:
            raise EpisodeError(
                f"{name}, line {n}: 'deal' must be an int in 0 .. 2**64-1, got {deal!r}"
            )
        seed = head.get("seed")
        if seed is not None and not is_int(seed):
            raise EpisodeError(f"{name}, line {n}: 'seed' must be an int or null")
        reward_mode = head.get("reward_mode", "score")
        if not isinstance(reward_mode, str):
            raise EpisodeError(f"{name}, line {n}: 'reward_mode' must be a name")
        ep = cls(
            variant=variant,
            deal=deal,
            options=options,
            deal_text=deal_text,
            agent=str(head.get("agent", "")),
            seed=seed,
            reward_mode=reward_mode,
        )
        outcome_seen = False
        for n, ln in lines[1:]:
            obj = load_line(n, ln)
            if outcome_seen:
                raise EpisodeError(f"{name}, line {n}: text after the outcome line")
            if "outcome" in obj:
                ep.outcome = _check_outcome(obj["outcome"], f"{name}, line {n}")
                outcome_seen = True
                continue
            step, a, r = obj.get("step"), obj.get("action"), obj.get("reward")
            if step != len(ep.actions):
                raise EpisodeError(
                    f"{name}, line {n}: expected step {len(ep.actions)}, got {step!r}"
                )
            if not is_int(a):
                raise EpisodeError(f"{name}, line {n}: 'action' must be an int, got {a!r}")
            if not 0 <= a < v.n_actions:
                raise EpisodeError(
                    f"{name}, line {n}: action {a} is out of range for {variant} "
                    f"(0..{v.n_actions - 1})"
                )
            if not is_number(r) or not math.isfinite(r):
                raise EpisodeError(f"{name}, line {n}: 'reward' must be a number, got {r!r}")
            if "move" in obj:
                words = describe(v, a)
                if obj["move"] != words:
                    raise EpisodeError(
                        f"{name}, line {n}: step {step}: the move text {obj['move']!r} does not "
                        f"match action {a}, which is {words!r} (the file was edited or is corrupt)"
                    )
            ep.actions.append(a)
            ep.rewards.append(float(r))
        if not outcome_seen:
            raise EpisodeError(f"{name}: no outcome line (the file is truncated)")
        return ep


def _check_outcome(outcome: Any, where: str) -> dict[str, Any]:
    """The outcome object of a file, its known fields checked (:class:`EpisodeError`)."""
    if not isinstance(outcome, dict):
        raise EpisodeError(f"{where}: 'outcome' must be an object")
    result = outcome.get("result")
    if result is not None and result not in RESULTS:
        raise EpisodeError(
            f"{where}: outcome 'result' must be one of {', '.join(map(repr, RESULTS))}, "
            f"got {result!r}"
        )
    for key in ("won", "terminated", "truncated"):
        if key in outcome and not isinstance(outcome[key], bool):
            raise EpisodeError(
                f"{where}: outcome {key!r} must be true or false, got {outcome[key]!r}"
            )
    return outcome


def make_replay_env(
    ep: Episode, ascii: bool = False, color: bool = False, render_mode: str = "ansi"
) -> Any:
    """The env an episode is replayed in (:class:`EpisodeError` if it cannot be built)."""
    try:
        return SpiderEnv(
            variant=ep.get_variant(),
            reward_mode=ep.reward_mode,
            illegal_action="raise",
            render_mode=render_mode,
            ascii=ascii,
            color=color,
        )
    except (ValueError, TypeError) as exc:
        raise EpisodeError(f"cannot rebuild the episode's env: {exc}") from None


def replay_frames(ep: Episode, ascii: bool = False, color: bool = False) -> Iterator[str]:
    """Frames of the episode (the start, then one per step), checked against the engine."""
    for frame in _replay(ep, make_replay_env(ep, ascii, color)):
        yield str(frame)


def replay_images(ep: Episode) -> Iterator[np.ndarray]:
    """The episode's frames as images (``render_mode="rgb_array"``; Pillow, the ``render``
    extra), checked as :func:`replay_frames` checks them."""
    yield from _replay(ep, make_replay_env(ep, render_mode="rgb_array"))


def _replay(ep: Episode, env: SpiderEnv) -> Iterator[Any]:
    """``env.render()`` at the start and after every step of ``ep``, replayed in ``env``
    (:class:`EpisodeError` where the replay disagrees with the file)."""
    try:
        env.reset(options=ep.reset_options())
    except (ValueError, TypeError) as exc:
        raise EpisodeError(f"cannot set up the episode's deal: {exc}") from None
    yield env.render()
    terminated = not env.action_masks().any()
    for i, (a, r) in enumerate(zip(ep.actions, ep.rewards)):
        if terminated:
            raise EpisodeError(f"step {i}: the game had already ended, the file goes on")
        legal = 0 <= a < env.n_actions and bool(env.action_masks()[a])
        if not legal:
            raise EpisodeError(
                f"step {i}: action {a} is not legal here (the file is corrupt or was recorded "
                "with other rules)"
            )
        _, reward, terminated, _, _ = env.step(a)
        if abs(reward - r) > 1e-6:
            raise EpisodeError(
                f"step {i}: reward {reward} differs from the recorded {r} (corrupt file)"
            )
        yield env.render()
    won = env.state.won
    rec_won = ep.outcome.get("won")
    if rec_won is not None and bool(rec_won) != won:
        raise EpisodeError(f"outcome says won={rec_won}, the replay ends with won={won}")
    result = outcome_result(ep.outcome)
    if result is None:
        return
    ended = "won" if won else "lost" if terminated else None
    if (result in ("won", "lost")) != (ended is not None) or (ended and result != ended):
        what = f"the game is {ended}" if ended else "the game is not over"
        raise EpisodeError(f"outcome says {result!r}, but after step {len(ep.actions) - 1} {what}")


def record_episode(
    agent: Any,
    variant: Variant | str,
    deal: int,
    *,
    seed: int = 0,
    max_steps: int | None = DEFAULT_MAX_EPISODE_STEPS,
    reward_mode: str = "score",
    agent_name: str | None = None,
    deterministic: bool | None = None,
    allow_other_game: bool = False,
) -> Episode:
    """Play ``agent`` on deal number ``deal`` as :func:`spider_env.apps.evaluation.evaluate`
    does and return the recorded episode.

    ``agent`` is what ``evaluate`` takes: a name (``"greedy"``), a model path (``"m.zip"``)
    or an agent object; ``deterministic`` chooses how a trained model picks its actions and
    ``allow_other_game`` lets it play another game than its own (see
    :func:`spider_env.apps.evaluation.players.build_agent`). The episode records ``deal``
    itself (not the env's ``info``).
    """
    v = get_variant(variant)
    deal = check_int("deal", deal, 0, DEAL_NUMBERS - 1)
    options = _options(v)
    check_deterministic([agent], deterministic)
    player = build_agent(agent, v, deterministic, allow_other_game)
    name = agent_name or agent_names([agent], [player])[0]
    env = make_env(v, max_steps, reward_mode=reward_mode)
    try:
        rec, actions, rewards = play_episode(env, player, deal, seed, name)
    finally:
        env.close()
    return Episode(
        variant=v.name,
        deal=deal,
        actions=actions,
        rewards=rewards,
        outcome=episode_outcome(
            won=rec.won,
            completed_runs=rec.completed_runs,
            score=rec.score,
            moves=rec.moves,
            steps=rec.steps,
            reward=rec.reward,
            terminated=not rec.truncated,
            truncated=rec.truncated,
        ),
        options=options,
        agent=name,
        seed=seed,
        reward_mode=reward_mode,
    )


def _options(v: Variant) -> str:
    if v.name not in VARIANTS:
        raise ValueError(f"variant {v.name!r} is not registered: its episodes cannot be saved")
    return v.options_text()


def redraws_in_place(out: Any) -> bool:
    """Whether frames are redrawn in place on ``out`` (:data:`CLEAR_SCREEN` before each):
    only on a terminal (a TTY whose ``TERM`` is not ``dumb``); pipes, files and tests get
    plain output, one frame after another."""
    isatty = getattr(out, "isatty", None)
    if not callable(isatty) or not isatty():
        return False
    return os.environ.get("TERM", "") != "dumb"


def play_frames(
    frames: Iterator[str],
    delay: float | None,
    out: Any,
    wait: Any = None,
    final_only: bool = False,
) -> int:
    """Print frames: all at once, ``delay`` seconds apart, or waiting for ``wait()`` (Enter)
    between frames. ``wait()`` returning False stops the replay. When played back (``delay``
    or ``wait``) on a terminal, each frame replaces the last (:func:`redraws_in_place`).
    Returns the number of frames shown."""
    redraw = (delay is not None or wait is not None) and not final_only and redraws_in_place(out)
    shown = 0
    last = None
    for k, frame in enumerate(frames):
        if final_only:
            last = frame
            continue
        if k and wait is not None and delay is None and wait() is False:
            break
        if delay is not None and k:
            time.sleep(delay)
        if redraw:
            out.write(CLEAR_SCREEN)
        out.write(frame)
        out.write("\n")
        out.flush()
        shown += 1
    if final_only and last is not None:
        out.write(last)
        shown = 1
    return shown


__all__ = [
    "CLEAR_SCREEN",
    "RESULTS",
    "Episode",
    "EpisodeError",
    "episode_outcome",
    "make_replay_env",
    "outcome_result",
    "play_frames",
    "record_episode",
    "redraws_in_place",
    "replay_frames",
    "replay_images",
]
