"""The table as an image (``render_mode="rgb_array"``), video recording and GIFs.

The images of a few fixed positions are pinned by checksums in ``tests/golden/render/*.image.txt``
(``tests/golden/regenerate.py``, checked by ``tests/test_golden.py``).
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import spider_env  # noqa: F401  (registers Spider-v0)
from spider_env.core.cards import is_red
from spider_env.core.state import State
from spider_env.core.variants import VARIANTS, classic, get_variant
from spider_env.env import SpiderEnv, UnsupportedRenderMode
from spider_env.render_image import (
    FELT,
    PALETTE,
    RED,
    SCALE,
    image_shape,
    render_image,
    require_pillow,
    write_gif,
)
from spider_env.vector import SpiderVectorEnv

ROOT = Path(__file__).resolve().parent.parent
INSTALL = "pip install 'spider-env[render]'"


def _play(env: SpiderEnv, deal: int, steps: int, seed: int = 0) -> None:
    """Reset ``env`` to ``deal`` and play up to ``steps`` random legal actions (deals last)."""
    env.reset(options={"deal": deal})
    rng = random.Random(seed)
    for _ in range(steps):
        legal = env.legal_actions()
        if not legal:
            return
        moves = [a for a in legal if env.decode_action(a).kind != "deal"]
        env.step(rng.choice(moves or legal))


def _shuffle_hidden(state: State, seed: int) -> State:
    """``state`` with the cards a player cannot see (face-down cards, stock cards below a
    visible pile top) dealt out again in another order."""
    top = 1 if state.variant.pile_top_visible else 0
    hidden = [card for col, d in zip(state.cols, state.down) for card in col[:d]]
    hidden += [card for pile in state.stock for card in pile[top:]]
    rng = random.Random(seed)
    order = hidden[:]
    while order == hidden:
        rng.shuffle(order)
    cards = iter(order)
    cols = tuple(
        tuple(next(cards) for _ in col[:d]) + col[d:] for col, d in zip(state.cols, state.down)
    )
    stock = tuple(pile[:top] + tuple(next(cards) for _ in pile[top:]) for pile in state.stock)
    return state.replace(cols=cols, stock=stock)


def _colours(image: np.ndarray) -> set[int]:
    """The palette indices of the colours in ``image``."""
    found = {tuple(rgb) for rgb in np.unique(image.reshape(-1, 3), axis=0)}
    return {i for i, rgb in enumerate(map(tuple, PALETTE)) if rgb in found}


# --- the image --------------------------------------------------------------------------------


def test_image_size_is_fixed_per_variant() -> None:
    for name in VARIANTS:
        v = get_variant(name)
        shape = image_shape(v)
        assert shape[0] % 16 == 0 and shape[1] % 16 == 0 and shape[2] == 3  # video-friendly
        env = SpiderEnv(variant=v, render_mode="rgb_array")
        env.reset(options={"deal": 0})
        first = env.render()
        _play(env, 0, 40)
        for image in (first, env.render()):
            assert isinstance(image, np.ndarray)
            assert image.shape == shape and image.dtype == np.uint8, name
    widths = {n: image_shape(get_variant(n))[1] for n in ("spider-4suit", "scorpion")}
    assert widths["spider-4suit"] > widths["scorpion"]  # 10 columns against 7


def test_hidden_cards_are_never_drawn() -> None:
    for name, deal in (("spider-4suit", 5), ("spider-2suit", 3), ("spider-tournament-2suit", 1)):
        env = SpiderEnv(variant=name)
        _play(env, deal, 25)
        state = env.state
        assert any(state.down) and state.stock_cards
        other = _shuffle_hidden(state, seed=deal)
        assert other.to_text() != state.to_text()
        assert np.array_equal(render_image(other), render_image(state)), name
        # the check can fail: a face-down card turned face up is drawn
        c = next(c for c, d in enumerate(state.down) if d)
        shown = state.replace(down=tuple(d - (i == c) for i, d in enumerate(state.down)))
        assert not np.array_equal(render_image(shown), render_image(state))


def test_visible_pile_tops_are_drawn() -> None:
    env = SpiderEnv(variant="spider-tournament-2suit")
    env.reset(options={"deal": 1})
    state = env.state
    pile = state.stock[0]
    swapped = state.replace(stock=((pile[1], pile[0], *pile[2:]), *state.stock[1:]))
    assert pile[0] != pile[1]
    assert not np.array_equal(render_image(swapped), render_image(state))


def test_same_position_same_pixels() -> None:
    env = SpiderEnv(suits=2)
    _play(env, 3, 30)
    state = env.state
    image = render_image(state, last_action="move 1 card 0 -> 1")
    again = State.from_text(state.to_text())  # an equal state, another object
    assert np.array_equal(render_image(again, last_action="move 1 card 0 -> 1"), image)
    assert not np.array_equal(render_image(state), image)  # the last action is drawn
    assert _colours(image) <= set(range(len(PALETTE)))  # palette colours only: no blending


def test_red_suits_are_drawn_red() -> None:
    one = SpiderEnv(suits=1, render_mode="rgb_array")
    one.reset(options={"deal": 0})
    assert RED not in _colours(one.render())  # spades only
    four = SpiderEnv(suits=4, render_mode="rgb_array")
    four.reset(options={"deal": 0})
    assert any(is_red(col[-1]) for col in four.state.cols)
    assert RED in _colours(four.render())


def test_a_column_longer_than_the_table_still_fits() -> None:
    ranks = "KQJT98765432A"
    run = [r + "S" for r in ranks]
    col0 = ["|KS", "|QS", "|JS", "|TS", "|9S", *run[:-1], "AS", *run[:-1]]  # 30 cards
    rest = [r + "S" for r in ranks for _ in range(7)]
    for card in col0:
        rest.remove(card.strip("|"))
    lines = [
        "spider-env state 1",
        "variant: spider-1suit",
        "counters: moves=120 deals=5 undos=0 reveals=10 free_used=false",
        "completed: S=1 H=0 D=0 C=0",
        "col0: " + " ".join(col0),
        "col1: " + " ".join(rest),
        *[f"col{c}: -" for c in range(2, 10)],
        *[f"pile{j}: -" for j in range(5)],
    ]
    state = State.from_text("\n".join(lines) + "\n")
    assert max(len(col) for col in state.cols) >= 30
    image = render_image(state)
    assert image.shape == image_shape(state.variant)
    bottom = image[-4 * SCALE :]  # the bottom margin is bare table
    assert (bottom == PALETTE[FELT]).all()


# --- through the envs --------------------------------------------------------------------------


def test_env_offers_rgb_array() -> None:
    assert "rgb_array" in SpiderEnv.metadata["render_modes"]
    assert SpiderEnv.metadata["render_fps"] == SpiderVectorEnv.metadata["render_fps"] > 0
    env = gym.make("Spider-v0", suits=2, render_mode="rgb_array")
    env.reset(options={"deal": 3})
    before = env.render()
    env.step(env.unwrapped.legal_actions()[0])
    after = env.render()
    assert isinstance(after, np.ndarray) and after.shape == before.shape
    assert not np.array_equal(before, after)
    with pytest.raises(UnsupportedRenderMode, match="'rgb_array'"):
        SpiderEnv(render_mode="rgb")


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_vector_env_renders_a_tuple_of_images(backend: str) -> None:
    envs = SpiderVectorEnv(2, suits=1, render_mode="rgb_array", backend=backend)
    envs.reset(options={"deal": [1, 2]})
    singles = [SpiderEnv(suits=1, render_mode="rgb_array") for _ in range(2)]
    for env, deal in zip(singles, (1, 2)):
        env.reset(options={"deal": deal})
    actions = np.array([env.legal_actions()[0] for env in singles])
    envs.step(actions)
    for env, a in zip(singles, actions):
        env.step(int(a))
    frames = envs.render()
    assert isinstance(frames, tuple) and len(frames) == 2
    for frame, env in zip(frames, singles):
        assert np.array_equal(frame, env.render())


def test_record_video_writes_an_mp4_of_the_episode(tmp_path: Path) -> None:
    import imageio_ffmpeg
    from gymnasium.wrappers import RecordVideo

    steps = 8
    env = gym.make("Spider-v0", suits=1, render_mode="rgb_array", max_episode_steps=steps)
    env = RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda episode: True)
    _, info = env.reset(options={"deal": 7})
    done = False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[0])
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    env.close()
    [video] = (tmp_path / "videos").glob("*.mp4")
    frames, _ = imageio_ffmpeg.count_frames_and_secs(str(video))
    assert frames == steps + 1  # the start and one per step
    reader = imageio_ffmpeg.read_frames(str(video))
    meta = next(reader)
    reader.close()
    h, w, _ = image_shape(classic(1))
    assert tuple(meta["size"]) == (w, h)
    assert meta["fps"] == SpiderEnv.metadata["render_fps"]


def test_make_vec_env_makes_rgb_array_envs_without_a_warning() -> None:
    from stable_baselines3.common.env_util import make_vec_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        venv = make_vec_env("Spider-v0", n_envs=2, seed=0, env_kwargs={"suits": 1})
    assert venv.get_attr("render_mode") == ["rgb_array", "rgb_array"]
    venv.reset()
    shape = image_shape(classic(1))
    assert [image.shape for image in venv.get_images()] == [shape, shape]
    venv.close()


def test_pillow_is_imported_only_when_an_image_is_drawn() -> None:
    code = (
        "import sys\n"
        "from spider_env import SpiderEnv, SpiderVectorEnv\n"
        "env = SpiderEnv(render_mode='rgb_array')\n"
        "SpiderVectorEnv(2, render_mode='rgb_array')\n"
        "env.reset(seed=0)\n"
        "assert 'PIL' not in sys.modules, 'imported before drawing'\n"
        "env.render()\n"
        "assert 'PIL' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


# --- without Pillow ----------------------------------------------------------------------------


@pytest.fixture
def no_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pillow cannot be imported (as if the render extra were not installed)."""
    for name in [m for m in sys.modules if m == "PIL" or m.startswith("PIL.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "PIL", None)


@pytest.mark.usefixtures("no_pillow")
def test_rgb_array_without_pillow_names_the_extra() -> None:
    with pytest.raises(ImportError, match=re.escape(INSTALL)):
        require_pillow()
    for make in (
        lambda: SpiderEnv(render_mode="rgb_array"),
        lambda: gym.make("Spider-v0", render_mode="rgb_array"),
        lambda: SpiderVectorEnv(2, render_mode="rgb_array"),
    ):
        with pytest.raises(ValueError) as exc:
            make()
        assert INSTALL in str(exc.value)
    env = SpiderEnv(render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)  # the text modes need nothing
    with pytest.raises(ImportError, match="spider-env"):
        render_image(env.state)


@pytest.mark.usefixtures("no_pillow")
def test_make_vec_env_without_pillow_falls_back_to_no_render_mode() -> None:
    # UnsupportedRenderMode is a TypeError: make_vec_env then makes the env without one
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("Spider-v0", n_envs=1, env_kwargs={"suits": 1})
    assert venv.get_attr("render_mode") == [None]
    venv.close()


@pytest.mark.usefixtures("no_pillow")
def test_show_gif_without_pillow_is_one_line_with_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from spider_env.apps.cli import main

    path = tmp_path / "ep.gif"
    code = main(["show", "--suits", "1", "--max-steps", "5", "--final", "--gif", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith("spider-env: error: --gif: ") and INSTALL in err[0]
    assert not path.exists()


# --- GIF ---------------------------------------------------------------------------------------


def _frames(n: int) -> list[np.ndarray]:
    env = SpiderEnv(suits=2, render_mode="rgb_array")
    env.reset(options={"deal": 3})
    frames: list[Any] = [env.render()]
    for _ in range(n - 1):
        env.step(env.legal_actions()[0])
        frames.append(env.render())
    return frames


def test_write_gif_round_trips_frames_and_holds_the_last(tmp_path: Path) -> None:
    from PIL import Image, ImageSequence

    f0, f1, f2, f3 = _frames(4)
    path = tmp_path / "ep.gif"
    # a frame equal to the one before lengthens it instead of adding one
    assert write_gif(iter([f0, f1, f2, f2, f3]), str(path), frame_ms=100, final_ms=1000) == 5
    with Image.open(path) as gif:
        assert gif.info["loop"] == 0
        read = [
            (np.asarray(f.convert("RGB")), f.info["duration"])
            for f in ImageSequence.all_frames(gif)
        ]
    assert [ms for _, ms in read] == [100, 100, 200, 1000]
    for (image, _), frame in zip(read, (f0, f1, f2, f3)):
        assert np.array_equal(image, frame)


def test_write_gif_refuses_what_is_not_a_render(tmp_path: Path) -> None:
    path = str(tmp_path / "x.gif")
    [frame] = _frames(1)
    with pytest.raises(ValueError, match="no frames"):
        write_gif([], path, frame_ms=100, final_ms=100)
    with pytest.raises(ValueError, match="one size"):
        write_gif([frame, frame[:-16]], path, frame_ms=100, final_ms=100)
    with pytest.raises(ValueError, match="palette"):
        write_gif([frame + 1], path, frame_ms=100, final_ms=100)
    with pytest.raises(ValueError, match=r"\(H, W, 3\) uint8"):
        write_gif([frame.astype(np.float32)], path, frame_ms=100, final_ms=100)
