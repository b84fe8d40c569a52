"""Write one page per registered environment id, and their index, in Gymnasium's manner.

Each page (``docs/envs/<id>.md``) has a picture of the id's starting position (``reset(seed=0)``
drawn by ``render_mode="rgb_array"``), a table of the id's spaces and how to make it, the
variant's parameters (:class:`spider_env.core.variants.Variant`), then the sections of the
``SpiderEnv`` class docstring in Gymnasium's order (Description, Action Space, Observation Space,
Starting State, Rewards, Episode End, Information, Arguments, Version History; the docstring's
other sections where it puts them), each followed by the numbers of that id, computed from the
env ``gymnasium.make(<id>)`` builds.

Run by the docs build (``docs/conf.py``); by hand: ``python docs/_scripts/envs.py OUT_DIR``.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from pathlib import Path
from typing import Any

#: Gymnasium's sections of an environment page, in its order.
SECTIONS = (
    "Description",
    "Action Space",
    "Observation Space",
    "Starting State",
    "Rewards",
    "Episode End",
    "Information",
    "Arguments",
    "Version History",
)

GUIDE = "../guide"


def docstring_sections(doc: str) -> list[tuple[str, str]]:
    """The ``## Heading`` sections of a Markdown docstring: ``[(heading, body), ...]`` in order;
    the text before the first heading is the section ``""``."""
    text = inspect.cleandoc(doc)
    out: list[tuple[str, str]] = []
    title, lines = "", []
    for line in text.splitlines():
        m = re.match(r"^##\s+(.+?)\s*$", line)
        if m:
            out.append((title, "\n".join(lines).strip()))
            title, lines = m.group(1), []
        else:
            lines.append(line)
    out.append((title, "\n".join(lines).strip()))
    return out


def myst(text: str) -> str:
    """A docstring's text as MyST: its reST roles (``:mod:`x```) as MyST roles, so that they link
    into the API reference; rST literals (double backquotes) as Markdown code."""
    text = re.sub(r":(mod|class|func|meth|data|attr|exc):`~?([^`]+)`", r"{py:\1}`\2`", text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value) if value else "(none)"
    return str(value)


def variant_table(variant: Any) -> str:
    """The variant's fields and derived sizes as a Markdown table."""
    rows = ["| parameter | value |", "|---|---|"]
    for f in dataclasses.fields(variant):
        if f.name == "description":
            continue
        rows.append(f"| `{f.name}` | {_fmt(getattr(variant, f.name))} |")
    derived = (
        ("cards", variant.n_cards),
        ("columns `C`", variant.n_columns),
        ("longest movable run `R`", variant.max_run),
        ("longest column `L`", variant.max_column_length),
        ("deal actions `D`", variant.n_deal_actions),
        ("discard actions", variant.n_discard_actions),
        ("actions", variant.n_actions),
    )
    rows += [f"| {name} | {value} |" for name, value in derived]
    return "\n".join(rows)


def _short(space: Any) -> str:
    """A space's repr, with a ``Box`` whose bounds are arrays shown by its bounds' range."""
    import numpy as np
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return "Dict(" + ", ".join(f"'{k}': {_short(v)}" for k, v in space.spaces.items()) + ")"
    if isinstance(space, spaces.Box) and not (
        np.all(space.low == space.low.flat[0]) and np.all(space.high == space.high.flat[0])
    ):
        low, high = space.low.min(), space.high.max()
        return f"Box({low:g}..{high:g}, {space.shape}, {space.dtype})"
    return repr(space)


def _space(space: Any) -> str:
    return f"`{_short(space)}`"


def id_notes(env_id: str, env: Any, variant: Any) -> dict[str, str]:
    """What each section says for this id: its numbers, computed from the made env."""
    import gymnasium as gym

    from spider_env.core.actions import deal_id, discard_id, move_id, undo_id

    v = variant
    c, r, d = v.n_columns, v.max_run, v.n_deal_actions
    action = [
        f"`{env_id}`: `C = {c}` columns, `R = {r}`, `D = {d}`: "
        f"{_space(env.action_space)} ({v.n_move_actions} moves"
        + (f", {d} deal action{'s' if d != 1 else ''}" if d else ", no stock")
        + (f", {v.n_discard_actions} discard actions" if v.n_discard_actions else "")
        + (", undo" if v.undo else "")
        + ")."
    ]
    examples = [f"moving 1 card from column 0 to column 1 is `{move_id(v, 0, 1, 1)}`"]
    if d:
        examples.append(f"the first deal is `{deal_id(v, 0)}`")
    if v.n_discard_actions:
        examples.append(f"discarding the run ending column 0 is `{discard_id(v, 0)}`")
    if v.undo:
        examples.append(f"undo is `{undo_id(v)}`")
    action.append("Here " + "; ".join(examples) + ".")
    obs = (
        f'`{env_id}` with the default `obs_mode="dict"`: {_space(env.observation_space)} '
        f"(`L = {v.max_column_length}`, `P = {len(v.stock)}` stock "
        f"pile{'s' if len(v.stock) != 1 else ''}, "
        f"`suit_sets = {v.suit_sets}`)."
    )
    for mode in ("flat", "features", "actions"):
        made = gym.make(env_id, obs_mode=mode)
        obs += f' With `obs_mode="{mode}"`: {_space(made.observation_space)}.'
        made.close()
    layout = ", ".join(str(n) for n in v.layout)
    down = ", ".join(str(n) for n in v.face_down)
    start = (
        f"`{env_id}`: {v.n_cards} cards; {c} columns dealt {layout} cards "
        f"({down} of them face down)"
        + (
            f", the last {v.free_columns} column{'s' if v.free_columns != 1 else ''} left free"
            if v.free_columns
            else ""
        )
        + "; "
        + (
            f"a stock of {sum(v.stock)} cards in {len(v.stock)} "
            f"pile{'s' if len(v.stock) != 1 else ''} ({_fmt(v.stock)})"
            if v.stock
            else "no stock"
        )
        + (", the player choosing the pile" if v.choose_pile else "")
        + (", the top card of each pile face up" if v.pile_top_visible else "")
        + ". The picture above is `reset(seed=0)`."
    )
    rewards = (
        f"`{env_id}` scores by the `{v.scoring}` rules and wins with {v.runs_to_win} completed "
        f"run{'s' if v.runs_to_win != 1 else ''}"
        + (" (each removed by a discard action)" if not v.auto_discard else "")
        + "."
    )
    steps = env.spec.max_episode_steps
    end = f"`{env_id}`: `max_episode_steps={steps}`."
    kwargs = {k: val for k, val in env.spec.kwargs.items() if k != "render_mode"}
    args = (
        f'`gymnasium.make("{env_id}")` passes '
        + (", ".join(f"`{k}={val!r}`" for k, val in kwargs.items()) or "no argument")
        + " to `SpiderEnv`; any argument above can be given to override it"
        + ("." if kwargs else " (`suits=1`, `2` or `4`: the default is 4).")
    )
    info = f'`{env_id}`: `info["variant"] == "{v.spec_text()}"`.'
    return {
        "Action Space": "\n\n".join(action),
        "Observation Space": obs,
        "Starting State": start,
        "Rewards": rewards,
        "Episode End": end,
        "Arguments": args,
        "Information": info,
    }


def picture(env_id: str, path: Path) -> tuple[int, int]:
    """Save the id's starting position (seed 0) as a PNG, without the empty table below the
    cards (the image is sized for the longest columns a game can have); its (width, height)."""
    import gymnasium as gym
    import numpy as np
    from PIL import Image

    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    env.close()
    felt = frame[-1, 0]
    drawn = np.flatnonzero((frame != felt).any(axis=(1, 2)))
    bottom = min(frame.shape[0], int(drawn[-1]) + 1 + 12) if drawn.size else frame.shape[0]
    image = Image.fromarray(np.ascontiguousarray(frame[:bottom]))
    data = _png_bytes(image)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    return image.width, image.height


def _png_bytes(image: Any) -> bytes:
    import io

    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def page(env_id: str, variant_name: str | None) -> tuple[str, dict[str, Any]]:
    """The Markdown page of ``env_id`` and a summary row for the index."""
    import gymnasium as gym

    from spider_env.env import SpiderEnv

    env = gym.make(env_id)
    variant = env.unwrapped.variant
    notes = id_notes(env_id, env, variant)
    sections = dict(docstring_sections(SpiderEnv.__doc__ or ""))
    missing = [s for s in SECTIONS if s not in sections]
    if missing:
        raise ValueError(f"SpiderEnv's docstring has no section {missing}")
    lines = [
        f"# {env_id}",
        "",
        f"![{env_id}: the starting position of reset(seed=0)]({env_id}.png)",
        "",
        "| | |",
        "|---|---|",
        f"| Action Space | {_space(env.action_space)} |",
        f"| Observation Space | {_space(env.observation_space)} |",
        f"| Variant | `{variant.name}` |",
        f"| Episode limit | {env.spec.max_episode_steps} steps |",
        f'| import | `gymnasium.make("{env_id}")` (after `import spider_env`) |',
        "",
        variant.description or "",
        "",
        "```python",
        "import gymnasium as gym",
        "",
        f"import spider_env  # registers {env_id}",
        "",
        f'env = gym.make("{env_id}")',
        "obs, info = env.reset(seed=0)",
        'obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))',
        "```",
        "",
        "## The variant",
        "",
        f'The game\'s rules as data (`spider_env.get_variant("{variant.name}")`, see the'
        f" [variants guide]({GUIDE}/variants.md)):",
        "",
        variant_table(variant),
        "",
    ]
    lines += [
        "## The specification",
        "",
        "The sections below are the specification of every id (the docstring of"
        " {py:class}`spider_env.env.SpiderEnv`), in Gymnasium's order; a note under a section"
        f" gives the numbers of `{env_id}`.",
        "",
    ]
    for title, body in docstring_sections(SpiderEnv.__doc__ or ""):
        if not title:
            continue
        lines += [f"## {title}", "", myst(body), ""]
        if title in notes:
            # a colon fence: a directive with an argument in backquotes reads as an unclosed
            # code block to plain Markdown readers (and to tests/test_readme.py)
            lines += [f":::{{admonition}} For {env_id}", ":class: note", "", notes[title]]
            lines += [":::", ""]
    env.close()
    row = {
        "id": env_id,
        "variant": variant.name,
        "actions": env.action_space.n,
        "columns": variant.n_columns,
        "cards": variant.n_cards,
        "suits": variant.suits,
        "description": variant.description,
    }
    return "\n".join(lines).rstrip() + "\n", row


def index(rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Environments",
        "",
        "Every id registered by `import spider_env`, one page each: the picture of its starting"
        " position (`reset(seed=0)`), its spaces, the variant's parameters, and the"
        " environment's specification with the numbers of that id. All ids share one class,"
        " `spider_env.env.SpiderEnv`; they differ in the variant they play"
        f" ([variants guide]({GUIDE}/variants.md)).",
        "",
        "| id | variant | suits | cards | columns | actions |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| [{r['id']}]({r['id']}.md) | `{r['variant']}` | {r['suits']} | {r['cards']} |"
            f" {r['columns']} | {r['actions']} |"
        )
    lines += ["", "```{toctree}", ":hidden:", "", *[r["id"] for r in rows], "```", ""]
    return "\n".join(lines)


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate(out: Path) -> list[str]:
    """Write the pages, pictures and index into ``out``; the ids written."""
    import spider_env  # noqa: F401 (registers the ids)
    from spider_env.registration import ENV_IDS

    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for env_id, variant_name in ENV_IDS.items():
        text, row = page(env_id, variant_name)
        _write(out / f"{env_id}.md", text)
        picture(env_id, out / f"{env_id}.png")
        rows.append(row)
    _write(out / "index.md", index(rows))
    return list(ENV_IDS)


if __name__ == "__main__":
    generate(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/envs"))
