"""Episodes as small JSON-lines files: record, save, load, replay.

Format (``spider-env episode`` version 1), one JSON object per line:

1. header: ``{"format": "spider-env episode", "version": 1, "variant": "spider-1suit",
   "options": "", "deal": 7, "agent": "greedy", "seed": 0, "reward_mode": "score"}``
   (``options``: the variant's ``key=value`` options, e.g. ``undo=true``; a custom deal has
   ``"deal": null`` and ``"deal_text": "..."`` instead);
2. one line per step: ``{"step": 0, "action": 1203, "move": "move 1 card 9 -> 2",
   "reward": -1.0}``;
3. last line: ``{"outcome": {"won": false, "completed_runs": 3, "score": 612, "moves": 388,
   "steps": 392, "reward": 112.0, "terminated": true, "truncated": false}}``.

:func:`replay_frames` re-plays an episode through the env (``SpiderEnv`` with
``render_mode="ansi"``) and yields one rendered frame per position, checking on the way that
every action is legal and every reward is the recorded one (:class:`EpisodeError` otherwise).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from spider_env.core.variants import Variant, get_variant, parse_options

FORMAT = "spider-env episode"
VERSION = 1


class EpisodeError(ValueError):
    """A corrupt or inconsistent episode file (the message names the line and the problem)."""


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
        from spider_env.core.actions import describe

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
        """Read an episode file (``FileNotFoundError``; :class:`EpisodeError` if corrupt)."""
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except UnicodeDecodeError:
            raise EpisodeError(f"{path}: not a text file (expected JSON lines)") from None
        except IsADirectoryError:
            raise EpisodeError(f"{path}: is a directory, not an episode file") from None
        return cls.from_text(text, path)

    @classmethod
    def from_text(cls, text: str, name: str = "<episode>") -> Episode:
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
        elif isinstance(deal, bool) or not isinstance(deal, int) or deal < 0:
            raise EpisodeError(f"{name}, line {n}: 'deal' must be a non-negative int")
        seed = head.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
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
                if not isinstance(obj["outcome"], dict):
                    raise EpisodeError(f"{name}, line {n}: 'outcome' must be an object")
                ep.outcome = obj["outcome"]
                outcome_seen = True
                continue
            step, a, r = obj.get("step"), obj.get("action"), obj.get("reward")
            if step != len(ep.actions):
                raise EpisodeError(
                    f"{name}, line {n}: expected step {len(ep.actions)}, got {step!r}"
                )
            if isinstance(a, bool) or not isinstance(a, int):
                raise EpisodeError(f"{name}, line {n}: 'action' must be an int, got {a!r}")
            if not 0 <= a < v.n_actions:
                raise EpisodeError(
                    f"{name}, line {n}: action {a} is out of range for {variant} "
                    f"(0..{v.n_actions - 1})"
                )
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r):
                raise EpisodeError(f"{name}, line {n}: 'reward' must be a number, got {r!r}")
            ep.actions.append(a)
            ep.rewards.append(float(r))
        if not outcome_seen:
            raise EpisodeError(f"{name}: no outcome line (the file is truncated)")
        return ep


def make_replay_env(ep: Episode, ascii: bool = False, color: bool = False) -> Any:
    from spider_env.env import SpiderEnv

    try:
        return SpiderEnv(
            variant=ep.get_variant(),
            reward_mode=ep.reward_mode,
            illegal_action="raise",
            render_mode="ansi",
            ascii=ascii,
            color=color,
        )
    except (ValueError, TypeError) as exc:
        raise EpisodeError(f"cannot rebuild the episode's env: {exc}") from None


def replay_frames(ep: Episode, ascii: bool = False, color: bool = False) -> Iterator[str]:
    """Frames of the episode (the start, then one per step), checked against the engine."""
    env = make_replay_env(ep, ascii, color)
    try:
        env.reset(options=ep.reset_options())
    except (ValueError, TypeError) as exc:
        raise EpisodeError(f"cannot set up the episode's deal: {exc}") from None
    yield str(env.render())
    total = 0.0
    terminated = False
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
        total += reward
        if abs(reward - r) > 1e-6:
            raise EpisodeError(
                f"step {i}: reward {reward} differs from the recorded {r} (corrupt file)"
            )
        yield str(env.render())
    won = env.state.won
    rec_won = ep.outcome.get("won")
    if rec_won is not None and bool(rec_won) != won:
        raise EpisodeError(f"outcome says won={rec_won}, the replay ends with won={won}")


def record_episode(
    agent: Any,
    variant: Variant | str,
    deal: int,
    *,
    seed: int = 0,
    max_steps: int | None = 1000,
    reward_mode: str = "score",
    agent_name: str | None = None,
) -> Episode:
    """Play ``agent`` on deal ``deal`` (like :func:`spider_env.evaluate.evaluate` does) and
    return the recorded episode."""
    from spider_env.apps.evaluation import make_env, play_episode

    v = get_variant(variant)
    env = make_env(v, max_steps, reward_mode=reward_mode)
    name = agent_name or str(getattr(agent, "name", type(agent).__name__))
    rec, actions, rewards = play_episode(env, agent, deal, seed, name)
    env.close()
    return Episode(
        variant=v.name,
        deal=deal,
        actions=actions,
        rewards=rewards,
        outcome={
            "won": rec.won,
            "completed_runs": rec.completed_runs,
            "score": rec.score,
            "moves": rec.moves,
            "steps": rec.steps,
            "reward": rec.reward,
            "terminated": not rec.truncated,
            "truncated": rec.truncated,
        },
        options=_options(v),
        agent=name,
        seed=seed,
        reward_mode=reward_mode,
    )


def _options(v: Variant) -> str:
    from spider_env.core.variants import VARIANTS

    if v.name not in VARIANTS:
        raise ValueError(f"variant {v.name!r} is not registered: its episodes cannot be saved")
    return v.options_text()


def play_frames(
    frames: Iterator[str],
    delay: float | None,
    out: Any,
    wait: Any = None,
    final_only: bool = False,
) -> int:
    """Print frames: all at once, ``delay`` seconds apart, or waiting for ``wait()`` (Enter)
    between frames. ``wait()`` returning False stops the replay. Returns frames shown."""
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
        if delay is not None and out.isatty():
            out.write("\x1b[H\x1b[2J")
        out.write(frame)
        out.write("\n")
        out.flush()
        shown += 1
    if final_only and last is not None:
        out.write(last)
        shown = 1
    return shown


__all__ = [
    "Episode",
    "EpisodeError",
    "play_frames",
    "record_episode",
    "replay_frames",
]
