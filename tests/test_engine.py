"""The engine interface (``spider_env.engine``): ``PureEngine`` and ``CompiledEngine`` agree game
by game through it (masks, counters, observation buffers, rewards, step outputs, states, sampled
actions) when started and stepped alike; out-of-range actions, column overflow, pickling; and
the envs are shells over it: no backend branches, and the vector env never runs ``SpiderEnv``s."""

from __future__ import annotations

import ast
import copy
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_fast_differential import GROWING, MOVE_0_TO_5

import spider_env as se
import spider_env.engine as engine_module
from spider_env.core.rules import legal_actions
from spider_env.core.state import State
from spider_env.engine import (
    COUNTERS,
    PREFETCH_AHEAD,
    PREFETCH_FROM,
    CompiledEngine,
    Engine,
    PureEngine,
    choose_backend,
    compiled_feature_layout,
    make_engine,
)
from spider_env.env import SpiderEnv
from spider_env.fast.buffers import StepConfig
from spider_env.fast.observe import FL_F, FL_G, FL_SLOT_WIDTH, FL_SLOTS
from spider_env.observation import (
    ColumnOverflowError,
    ObservationBuffers,
    assemble_observation,
    card_slot_width,
    feature_width,
    globals_width,
)
from spider_env.rewards import get_reward_fn
from spider_env.vector import SpiderVectorEnv

ROOT = Path(__file__).resolve().parent.parent


def engines(n: int, variant: str = "spider-2suit", **kw: Any) -> tuple[Engine, Engine]:
    settings: dict[str, Any] = {
        "obs_mode": "dict",
        "feature_slots": 6,
        "reward_fn": get_reward_fn("score"),
        "illegal_reward": -1.0,
        "terminate_illegal": False,
    }
    settings.update(kw)
    v = se.get_variant(variant)
    return PureEngine(v, n, **settings), CompiledEngine(v, n, **settings)


BUFFERS = ("masks", "counters", "rewards", "terminated", "truncated", "ended", "illegal", "elapsed")


def assert_agree(p: Engine, c: Engine) -> None:
    """Everything the interface shows, game by game."""
    for name in BUFFERS:
        assert np.array_equal(getattr(p, name), getattr(c, name)), name
    for name in ("table", "completed", "pile_tops", "features"):
        assert np.array_equal(getattr(p.obs, name), getattr(c.obs, name)), name
    for i in range(p.n):
        assert p.state(i) == c.state(i), i
        assert np.flatnonzero(p.masks[i]).tolist() == legal_actions(p.state(i))
        assert p.counters[i].tolist() == [
            len(legal_actions(p.state(i))), p.state(i).deals_left, p.state(i).score,
            p.state(i).moves, p.state(i).completed_runs,
        ]  # fmt: skip


def actions(rng: np.random.Generator, masks: np.ndarray, illegal_rate: float) -> np.ndarray:
    out = np.empty(len(masks), dtype=np.int64)
    for i, m in enumerate(masks):
        legal = np.flatnonzero(m)
        pick_any = rng.random() < illegal_rate or not len(legal)
        out[i] = rng.integers(len(m)) if pick_any else rng.choice(legal)
    return out


CASES = [
    {"variant": "spider-2suit"},
    {"variant": "spider-4suit", "obs_mode": "features", "feature_slots": 0},
    {"variant": "spider-1suit", "obs_mode": "flat", "terminate_illegal": True},
    {"variant": "spider-tournament-2suit undo=false", "reward_fn": get_reward_fn("shaped")},
    {"variant": "scorpion", "obs_mode": "features", "reward_fn": get_reward_fn("runs")},
    {"variant": "spiderette-4suit", "reward_fn": get_reward_fn("win"), "illegal_reward": -0.5},
    {"variant": "simple-simon", "obs_mode": "flat", "feature_slots": 9},
]


@pytest.mark.parametrize("kw", CASES, ids=lambda kw: "-".join(map(str, kw.values())))
def test_engines_agree_game_by_game_through_step(kw: dict[str, Any]) -> None:
    p, c = engines(4, **kw)
    rows = np.arange(4)
    for e in (p, c):
        e.start_deals(rows, [3, 1, 3, 4050395131])
    assert_agree(p, c)
    rng = np.random.default_rng(0)
    draw = np.random.default_rng(1)
    ended = 0
    for _ in range(150):
        acts = actions(rng, p.masks, 0.1)
        resets = np.where(p.ended, draw.integers(0, 2**32, size=4), -1)
        got = [e.step(acts, resets, 25) for e in (p, c)]
        assert got[0] == got[1] == int(p.ended.sum())
        ended += got[0]
        assert_agree(p, c)
        seed = int(draw.integers(0, 2**63))
        assert np.array_equal(p.sample_legal(seed), c.sample_legal(seed))
    assert ended >= 4


def near_misses(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """Per game a legal id, or one next to a legal id (often illegal: the edges of the list
    of legal ids the step searches), or any id."""
    out = actions(rng, masks, 0.1)
    for i, m in enumerate(masks):
        legal = np.flatnonzero(m)
        if len(legal) and rng.random() < 0.3:
            out[i] = min(max(int(rng.choice(legal)) + int(rng.choice([-1, 1])), 0), len(m) - 1)
    return out


@pytest.mark.parametrize("kw", CASES[:3], ids=lambda kw: "-".join(map(str, kw.values())))
def test_a_batch_stepped_without_keeping_its_masks_gives_them_exact_fresh_and_when_read(
    kw: dict[str, Any],
) -> None:
    """``step(..., keep_masks=False)`` (the vector env with ``copy=True``): the step tells
    legal from illegal by the legal ids (actions next to legal ones included), the masks
    ``fresh_masks()`` builds from the ids are the pure engine's, and the buffer the steps left
    behind is rebuilt exact when read; steps that keep the masks and single-game plays go on
    from it."""
    p, c = engines(4, **kw)
    rows = np.arange(4)
    for e in (p, c):
        e.start_deals(rows, [3, 1, 3, 4050395131])
    rng, draw = np.random.default_rng(6), np.random.default_rng(7)
    left_behind = refused = 0
    for t in range(200):
        acts = near_misses(rng, p.masks)
        resets = np.where(p.ended, draw.integers(0, 2**32, size=4), -1)
        keep = t % 9 == 4
        assert p.step(acts, resets, 25) == c.step(acts, resets, 25, keep_masks=keep)
        assert np.array_equal(c.illegal, p.illegal)
        refused += int(p.illegal.sum())
        fresh = c.fresh_masks()
        assert np.array_equal(fresh, p.masks)
        left_behind += not keep and not np.array_equal(c._masks, fresh)
        fresh[:] = ~fresh  # the caller's array: the engine's masks do not follow it
        if t % 6 == 5:
            assert_agree(p, c)  # reads c.masks: rebuilt
        if t % 10 == 9:
            for i in range(4):
                legal = np.flatnonzero(p.masks[i])
                if len(legal) and not p.ended[i]:
                    a = int(rng.choice(legal))
                    assert p.play(i, a) == c.play(i, a)
            assert_agree(p, c)
    assert left_behind >= 100  # the steps did leave the buffer behind
    assert refused >= 20  # and refused actions


@pytest.mark.parametrize("kw", CASES[:4], ids=lambda kw: "-".join(map(str, kw.values())))
def test_engines_agree_through_play_and_given_states(kw: dict[str, Any]) -> None:
    p, c = engines(2, **kw)
    source = SpiderEnv(variant=kw["variant"], backend="pure")
    source.reset(seed=5)
    for _ in range(20):
        source.step(int(np.flatnonzero(source.action_masks())[0]))
    states = [source.state, se.new_game(source.variant, 8)]
    for e in (p, c):
        e.start_states(np.arange(2), states)
    assert_agree(p, c)
    assert c.state(0) is states[0]  # the State given is the one asked for
    rng = np.random.default_rng(2)
    for t in range(120):
        i = t % 2
        legal = np.flatnonzero(p.masks[i])
        if not len(legal):
            for e in (p, c):
                e.start_deals(np.array([i]), [t])
            continue
        a = int(rng.choice(legal))
        assert p.play(i, a) == c.play(i, a)
        assert_agree(p, c)


@pytest.mark.parametrize("kind", ["pure", "compiled"])
def test_step_refuses_an_action_out_of_range_before_changing_anything(kind: str) -> None:
    p, c = engines(3)
    e = p if kind == "pure" else c
    e.start_deals(np.arange(3), [0, 1, 2])
    before = [e.state(i) for i in range(3)]
    acts = e.sample_legal(7)
    acts[1] = e.n_actions
    assert e.step(acts, np.full(3, -1), -1) == -2
    assert [e.state(i) for i in range(3)] == before and not e.elapsed.any()
    acts[1] = -1
    assert e.step(acts, np.array([-1, 5, -1]), -1) == 0  # a game being started: ignored
    assert e.state(1) == se.new_game("spider-2suit", 5) and e.elapsed.tolist() == [1, 0, 1]


@pytest.mark.parametrize("kind", ["pure", "compiled"])
def test_a_column_outgrowing_the_table_names_its_game(kind: str) -> None:
    state = State.from_text(GROWING.format(six5="6H", six3="6S"))
    p, c = engines(2, "simple-simon")
    e = p if kind == "pure" else c
    e.start_states(np.arange(2), [state, state])
    with pytest.raises(ColumnOverflowError, match="column 5 holds 24 cards") as err:
        e.play(1, MOVE_0_TO_5)
    assert err.value.game == 1
    e.start_states(np.arange(2), [state, state])
    legal = int(np.flatnonzero(e.masks[0])[0])
    other = legal if legal != MOVE_0_TO_5 else 0
    with pytest.raises(ColumnOverflowError) as err:
        e.step(np.array([other, MOVE_0_TO_5]), np.full(2, -1), -1)
    assert err.value.game == 1 and e.elapsed.tolist() == [1, 1]  # every game stepped


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
@pytest.mark.parametrize("obs_mode", ["dict", "features"])
def test_an_engine_copied_mid_game_goes_on_identically(how: str, obs_mode: str) -> None:
    for e in engines(3, obs_mode=obs_mode):
        e.start_deals(np.arange(3), [4, 5, 6])
        rng = np.random.default_rng(3)
        for _ in range(30):
            e.step(actions(rng, e.masks, 0.1), np.full(3, -1), -1)
        twin = pickle.loads(pickle.dumps(e)) if how == "pickle" else copy.deepcopy(e)
        for _ in range(40):
            acts = actions(rng, e.masks, 0.1)
            assert e.step(acts, np.full(3, -1), -1) == twin.step(acts, np.full(3, -1), -1)
            a = e.sample_legal(1)[0]
            if a >= 0:
                assert e.play(0, int(a)) == twin.play(0, int(a))
            assert_agree(e, twin)


def test_the_compiled_feature_layout_holds_the_observation_sizes() -> None:
    for name in ("spider-2suit", "spider-tournament-2suit", "simple-simon"):
        v = se.get_variant(name)
        lay = compiled_feature_layout(v, 3)
        assert lay[FL_F] == feature_width(v, 3) and lay[FL_G] == globals_width(v)
        assert lay[FL_SLOT_WIDTH] == card_slot_width(v) and lay[FL_SLOTS] == 3


def test_make_engine_gives_the_engine_choose_backend_names() -> None:
    v = se.get_variant("spider-1suit")
    settings: dict[str, Any] = {
        "obs_mode": "dict", "feature_slots": 6, "reward_fn": get_reward_fn("score"),
        "illegal_reward": -1.0, "terminate_illegal": False,
    }  # fmt: skip
    assert type(make_engine("pure", v, 2, **settings)) is PureEngine
    auto = choose_backend("auto", v, settings["reward_fn"])
    assert type(make_engine(auto, v, 2, **settings)) is CompiledEngine
    assert COUNTERS == ("legal_action_count", "deals_left", "score", "moves", "completed_runs")


# --- the observation is assembled in one place ----------------------------------------------------
def test_a_batch_row_assembles_to_the_single_env_observation() -> None:
    for mode in ("dict", "features", "flat"):
        envs = SpiderVectorEnv(2, suits=2, obs_mode=mode, mask_in_obs=mode != "flat")
        single = SpiderEnv(suits=2, obs_mode=mode, mask_in_obs=mode != "flat")
        batch, _ = envs.reset(options={"deal": [4, 9]})
        one, _ = single.reset(options={"deal": 9})
        row = {k: v[1] for k, v in batch.items()} if isinstance(batch, dict) else batch[1]
        if isinstance(one, dict):
            assert row.keys() == one.keys()
            assert all(np.array_equal(row[k], one[k]) for k in one)
        else:
            assert np.array_equal(row, one)


def test_assemble_observation_refuses_what_a_mode_cannot_hold() -> None:
    v = se.get_variant("spider-1suit")
    with pytest.raises(ValueError, match="action mask"):
        assemble_observation(ObservationBuffers(v, "flat"), action_mask=np.ones(3, bool))
    with pytest.raises(ValueError, match="deals_left"):
        assemble_observation(ObservationBuffers(v, "dict"))
    with pytest.raises(ValueError, match="obs_mode"):
        ObservationBuffers(v, "pixels")


# --- the envs are shells over one engine ----------------------------------------------------------
def _backend_comparisons(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            if "backend" in names:
                found.append(f"{path.name}:{node.lineno}")
    return found


def test_the_envs_have_no_backend_branches() -> None:
    assert _backend_comparisons(ROOT / "spider_env" / "env.py") == []
    assert _backend_comparisons(ROOT / "spider_env" / "vector.py") == []


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_the_vector_env_never_runs_a_single_env(backend: str, monkeypatch: Any) -> None:
    built = []
    init = SpiderEnv.__init__

    def counting_init(self: SpiderEnv, *args: Any, **kwargs: Any) -> None:
        built.append(kwargs)
        init(self, *args, **kwargs)

    monkeypatch.setattr(SpiderEnv, "__init__", counting_init)
    envs = SpiderVectorEnv(
        3, suits=1, backend=backend, max_episode_steps=4, render_mode="ansi",
        autoreset_mode="SameStep", illegal_action="raise",
    )  # fmt: skip
    assert len(built) == 1  # the one env of the argument checks
    for name in ("reset", "step", "render", "_refuse", "last_action_text", "legal_actions"):
        monkeypatch.setattr(SpiderEnv, name, None)  # a call would be a TypeError
    monkeypatch.setattr(SpiderEnv, "state", property(lambda self: 1 / 0))
    envs.reset(seed=0, options={"deal": [1, 2, 3]})
    for _ in range(8):  # the step limit ends every game at steps 4 and 8: same-step resets
        *_, info = envs.step(envs.sample_legal_actions())
    assert info["_final_obs"].all() and len(envs.render()) == 3
    assert len(envs.call("legal_actions")) == 3 and envs.call("describe_action", 0)
    assert len(built) == 1


@pytest.mark.parametrize("backend", ["compiled", "pure"])
def test_vector_render_shows_each_game_as_its_single_env_does(backend: str) -> None:
    envs = SpiderVectorEnv(2, suits=1, backend=backend, render_mode="ansi")
    singles = [SpiderEnv(suits=1, backend=backend, render_mode="ansi") for _ in range(2)]
    envs.reset(options={"deal": [1, 2]})
    for env, d in zip(singles, (1, 2)):
        env.reset(options={"deal": d})
    rng = np.random.default_rng(4)
    for _ in range(6):
        acts = actions(rng, envs.action_masks(), 0.3)
        envs.step(acts)
        for env, a in zip(singles, acts.tolist()):
            env.step(a)
        assert envs.render() == tuple(env.render() for env in singles)


@pytest.mark.parametrize("variant", ["spider-4suit", "scorpion"])
def test_a_batch_stepped_with_cache_hints_agrees_with_the_pure_engine(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache hints of a large batch (``fast.step._prefetch_game``) change no result: here
    given to a batch of 20 games (8 ahead: the last games' hints point past the batch)."""
    monkeypatch.setattr(engine_module, "PREFETCH_FROM", 1)
    p, c = engines(20, variant)
    assert StepConfig(*c._config_fields).prefetch == PREFETCH_AHEAD
    rows = np.arange(20)
    for e in (p, c):
        e.start_deals(rows, rows + 100)
    rng, draw = np.random.default_rng(3), np.random.default_rng(4)
    for _ in range(60):
        acts = actions(rng, p.masks, 0.05)
        resets = np.where(p.ended, draw.integers(0, 2**32, size=20), -1)
        assert p.step(acts, resets, 40) == c.step(acts, resets, 40)
        assert_agree(p, c)


def test_only_batches_of_prefetch_from_games_are_given_cache_hints() -> None:
    settings = {"obs_mode": "dict", "feature_slots": 6, "reward_fn": get_reward_fn("score"),
                "illegal_reward": -1.0, "terminate_illegal": False}  # fmt: skip
    v = se.get_variant("spider-1suit")
    for n, ahead in ((PREFETCH_FROM - 1, 0), (PREFETCH_FROM, PREFETCH_AHEAD)):
        config = StepConfig(*CompiledEngine(v, n, **settings)._config_fields)
        assert config.prefetch == ahead


def test_a_batch_of_prefetch_from_games_steps_as_it_would_without_the_hints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At the size that turns the hints on, every buffer after every step equals that of the
    same batch stepped without them (random legal play, autoresets, the step limit)."""
    n = PREFETCH_FROM
    _, hinted = engines(n, "spider-4suit")
    monkeypatch.setattr(engine_module, "PREFETCH_FROM", n + 1)
    _, plain = engines(n, "spider-4suit")
    assert [StepConfig(*e._config_fields).prefetch for e in (hinted, plain)] == [PREFETCH_AHEAD, 0]
    rows = np.arange(n)
    for e in (hinted, plain):
        e.start_deals(rows, rows)
    draw = np.random.default_rng(5)
    for step in range(120):
        acts = np.maximum(hinted.sample_legal(step), 0)
        resets = np.where(hinted.ended, draw.integers(0, 2**32, size=n), -1)
        assert hinted.step(acts, resets, 50) == plain.step(acts, resets, 50)
        for name in (*BUFFERS, "_states", "_legal"):
            assert np.array_equal(getattr(hinted, name), getattr(plain, name)), (step, name)
        assert np.array_equal(hinted.obs.table, plain.obs.table), step
