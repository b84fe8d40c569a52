"""Play in the terminal: ``spider-env play --suits 1 --deal 7``.

Commands (columns are numbered as on screen, from 0; a free column may be typed ``F8`` or ``8``):

* ``3 7``: move the cards that can go from column 3 onto column 7 (onto an empty column: the
  whole movable run); ``3 7 4``: move exactly 4 cards;
* ``d``: deal (``d 2``: deal stock pile 2 where the player picks the pile);
* ``x 3``: discard the complete run at the end of column 3 (where discarding is optional);
* ``u``: undo (the engine's rule: only when the last action turned up no card);
* ``h``: a hint from the planner (the strongest player that answers within a second: a hint
  takes a fraction of a second; the greedy agent's, with a note, where numba is not
  installed); ``?``: help; ``q``: quit.

On a terminal the table is redrawn in place (cursor home, clear screen) after every command,
with the last message under it; into a pipe or file the output is plain text, one frame per
action. Messages write cards as the table does (``2♠``, or ``2S`` with ``--ascii``).

Everything goes through :class:`spider_env.env.SpiderEnv` with ``undo=True``, and every
legality question is answered by its mask (i.e. by :func:`spider_env.core.rules.legal_actions`);
bad input gets a message and the game goes on.
"""

from __future__ import annotations

from typing import Any, TextIO

import numpy as np

from spider_env.agents.greedy import GreedyAgent
from spider_env.agents.planner import BUDGET, FOUR_SUITS_BUDGET, TWO_SUITS_BUDGET, PlannerAgent
from spider_env.apps.episodes import CLEAR_SCREEN, Episode, episode_outcome, redraws_in_place
from spider_env.core.actions import DEAL, DISCARD, MOVE, UNDO, Action, describe, encode
from spider_env.core.rules import explain_illegal
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, Variant
from spider_env.env import SpiderEnv

HELP = """commands:
  S D      move from column S onto column D (as many cards as can go)
  S D K    move K cards from column S onto column D
  d        deal{pile}
  x C      discard the complete run at the end of column C (variants where it is optional)
  u        undo (only when the last action turned up no card)
  h        hint from the planner
  ?        this help
  q        quit"""


# The hint's budget: on every game the planner's base scores (those of its 1-suit default; the
# larger scores of two and four suits take longer a decision, so no cap either), the game's own
# `screen` and `late` (on one suit the planner's default), and at most HINT_EXACT positions for
# the search of a table with nothing unseen, so a hint takes well under a second (numba's cache
# warm; the first hint after an install also compiles the searches, about a minute).
HINT_EXACT = 200_000
HINT_BUDGET = {key: BUDGET[key][0] for key in (*FOUR_SUITS_BUDGET, *TWO_SUITS_BUDGET)} | {
    "exact": HINT_EXACT
}
NO_NUMBA_NOTE = "(from the greedy agent: the planner needs numba, which is not installed)"


class TerminalGame:
    """One game at the terminal; :meth:`run` reads commands from a stream until the end."""

    def __init__(
        self,
        variant: Variant,
        deal: int | None = None,
        ascii: bool = False,
        color: bool = False,
        seed: int | None = None,
    ) -> None:
        self.env = SpiderEnv(
            variant=variant,
            undo=True,
            illegal_action="raise",
            render_mode="ansi",
            ascii=ascii,
            color=color,
        )
        self.variant: Variant = self.env.variant
        self.base_variant = variant
        self.ascii = ascii
        if deal is None:
            deal = int(np.random.default_rng(seed).integers(0, 2**31))
        self.deal = deal
        self.obs, self.info = self.env.reset(options={"deal": deal})
        self.actions: list[int] = []
        self.rewards: list[float] = []
        self.terminated = not self.info["action_mask"].any()
        self.truncated = False
        self.quit = False
        self._hinter: Any = None
        self._hint_note = ""
        self._hint: tuple[int, str] | None = None  # (steps taken, the hint) of the last hint
        self._hint_action = -1

    @property
    def done(self) -> bool:
        """The game is over: won, no legal action left, or stopped by a step limit."""
        return self.terminated or self.truncated

    def _why(self, state: State, a: int) -> str:
        """Why action ``a`` is illegal, with cards written as on the table."""
        return explain_illegal(state, a, ascii=self.ascii)

    # --- input ----------------------------------------------------------------------------
    def column(self, token: str) -> int:
        v = self.variant
        t = token.strip().upper()
        if t.startswith("F") and t[1:].isdigit():
            t = t[1:]
        if not t.isdigit():
            raise ValueError(f"{token!r} is not a column number (columns are 0..{v.n_columns - 1})")
        c = int(t)
        if c >= v.n_columns:
            raise ValueError(f"column {c} does not exist (columns are 0..{v.n_columns - 1})")
        return c

    def parse(self, line: str) -> int | str | None:
        """An action id, ``"quit"``/``"hint"``/``"help"``, or ``None`` for an empty line.

        Raises ``ValueError`` with a message for the player for bad or illegal input.
        """
        v = self.variant
        words = line.strip().lower().split()
        if not words:
            return None
        cmd = words[0]
        if cmd in ("q", "quit", "exit"):
            return "quit"
        if cmd in ("h", "hint"):
            return "hint"
        if cmd in ("?", "help"):
            return "help"
        mask = self.env.action_masks()
        if cmd in ("u", "undo"):
            if len(words) > 1:
                raise ValueError("'u' takes no arguments")
            a = encode(v, Action(UNDO))
            if not mask[a]:
                raise ValueError(f"cannot undo: {self._why(self.env.state, a)}")
            return a
        if cmd in ("d", "deal"):
            if v.n_deal_actions == 0:
                raise ValueError(f"{v.name} has no stock to deal from")
            if len(words) > 2:
                raise ValueError("'d' takes at most one number (the stock pile)")
            pile = 0
            if len(words) == 2:
                if not v.choose_pile:
                    raise ValueError("piles are dealt in order here: type just 'd'")
                if not words[1].isdigit() or int(words[1]) >= v.n_deal_actions:
                    raise ValueError(f"stock piles are 0..{v.n_deal_actions - 1}")
                pile = int(words[1])
            elif v.choose_pile:
                legal = [
                    j for j in range(v.n_deal_actions) if mask[encode(v, Action(DEAL, pile=j))]
                ]
                if not legal:
                    a = encode(v, Action(DEAL, pile=0))
                    raise ValueError(f"cannot deal: {self._why(self.env.state, a)}")
                pile = legal[0]
            a = encode(v, Action(DEAL, pile=pile))
            if not mask[a]:
                raise ValueError(f"cannot deal: {self._why(self.env.state, a)}")
            return a
        if cmd in ("x", "discard"):
            if v.auto_discard:
                raise ValueError("complete runs are removed at once in this game")
            if len(words) != 2:
                raise ValueError("type 'x C' with the column C of the complete run")
            a = encode(v, Action(DISCARD, src=self.column(words[1])))
            if not mask[a]:
                raise ValueError(f"cannot discard: {self._why(self.env.state, a)}")
            return a
        if len(words) not in (2, 3):
            raise ValueError(f"did not understand {line.strip()!r}; type ? for help")
        src, dst = self.column(words[0]), self.column(words[1])
        if src == dst:
            raise ValueError("source and target are the same column")
        if len(words) == 3:
            if not words[2].isdigit() or int(words[2]) < 1:
                raise ValueError(f"{words[2]!r} is not a number of cards (1 or more)")
            k = int(words[2])
            if k > v.max_run:
                raise ValueError(f"at most {v.max_run} cards move at once in {v.name}")
            a = encode(v, Action(MOVE, src, k, dst))
            if not mask[a]:
                raise ValueError(f"cannot {describe(v, a)}: {self._why(self.env.state, a)}")
            return a
        # No count: the legal move from src to dst with the most cards.
        for k in range(v.max_run, 0, -1):
            a = encode(v, Action(MOVE, src, k, dst))
            if mask[a]:
                return a
        state = self.env.state
        if not state.cols[src]:
            raise ValueError(f"column {src} is empty")
        runs = (
            state.run_lengths[src]
            if v.move == "suited-run"
            else len(state.cols[src]) - state.down[src]
        )
        a = encode(v, Action(MOVE, src, max(1, min(runs, v.max_run)), dst))
        raise ValueError(f"no move from column {src} to {dst}: {self._why(state, a)}")

    # --- actions ----------------------------------------------------------------------------
    def hint(self) -> str:
        """The planner's move for the table (its plan is kept while the player follows it, and
        made again otherwise); the greedy agent's, with a note, if numba is not installed.
        Asked again before a move, the same hint."""
        steps = len(self.actions)
        if self._hint is not None and self._hint[0] == steps:
            return self._hint[1]
        mask = self.env.action_masks()
        followed = (
            self._hint is not None
            and self._hint[0] == steps - 1
            and self.actions[-1] == self._hint_action
        )
        if isinstance(self._hinter, PlannerAgent) and not followed:
            self._hinter.replan()
        if self._hinter is None:
            try:
                self._hinter = PlannerAgent(self.variant, seed=0, **HINT_BUDGET)
                a = self._hinter.act(self.obs, mask, self.info)
            except ImportError:
                self._hinter = GreedyAgent(self.variant, seed=0)
                self._hint_note = " " + NO_NUMBA_NOTE
                a = self._hinter.act(self.obs, mask, self.info)
        else:
            a = self._hinter.act(self.obs, mask, self.info)
        text = describe(self.variant, a) + self._hint_note
        self._hint = (steps, text)
        self._hint_action = a
        return text

    def step(self, a: int) -> str:
        obs, r, terminated, truncated, info = self.env.step(a)
        self.obs, self.info = obs, info
        self.actions.append(a)
        self.rewards.append(float(r))
        self.terminated, self.truncated = bool(terminated), bool(truncated)
        return describe(self.variant, a)

    def frame(self) -> str:
        return str(self.env.render())

    def run(self, inp: TextIO, out: TextIO) -> None:
        """Read commands from ``inp`` until the game ends, ``q`` or the end of input; write the
        table and messages to ``out`` (redrawn in place when :func:`redraws_in_place`)."""
        v = self.variant
        pile = " (d P: deal stock pile P)" if v.choose_pile else ""
        title = f"{v.name}, deal {self.deal}. Type ? for help.\n"
        redraw = redraws_in_place(out)
        if redraw:
            out.write(CLEAR_SCREEN)
        out.write(title + self.frame())
        while not self.done:
            out.write("> ")
            out.flush()
            line = inp.readline()
            if not line:  # end of input
                out.write("\n(end of input)\n")
                self.quit = True
                break
            note, moved = "", False
            try:
                cmd = self.parse(line)
            except ValueError as exc:
                cmd, note = None, f"! {exc}\n"
            if cmd == "quit":
                self.quit = True
                break
            if cmd == "help":
                note = HELP.format(pile=pile) + "\n"
            elif cmd == "hint":
                note = f"hint: {self.hint()}\n"
            elif isinstance(cmd, int):
                self.step(cmd)
                moved = True
            if redraw:
                out.write(CLEAR_SCREEN + title + self.frame() + note)
            else:
                out.write(note + (self.frame() if moved else ""))
        st = self.env.state
        if st.won:
            out.write(f"You won! Score {st.score} in {st.moves} moves.\n")
        elif self.terminated:
            out.write(f"No legal move left: game over. Score {st.score}.\n")
        elif self.truncated:
            out.write(f"Stopped at the step limit. Score {st.score}.\n")
        else:
            out.write(f"Bye. Score {st.score}, {sum(st.completed)} run(s) completed.\n")

    def episode(self) -> Episode:
        """The game so far as an :class:`~spider_env.apps.episodes.Episode` (undo included)."""
        v = self.variant
        if v.name not in VARIANTS:
            raise ValueError(f"variant {v.name!r} is not registered")
        st = self.env.state
        return Episode(
            variant=v.name,
            deal=self.deal,
            actions=list(self.actions),
            rewards=list(self.rewards),
            outcome=episode_outcome(
                won=st.won,
                completed_runs=sum(st.completed),
                score=st.score,
                moves=st.moves,
                steps=len(self.actions),
                reward=sum(self.rewards),
                terminated=self.terminated,
                truncated=self.truncated,
            ),
            options=v.options_text(),
            agent="player",
            seed=None,
            reward_mode=str(self.env.reward_mode),
        )


__all__ = ["HELP", "TerminalGame"]
