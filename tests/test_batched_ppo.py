"""The batched masked PPO trainer (``spider_env.agents.rl.ppo``, ``examples/batched_ppo.py``):
a tiny run takes no illegal action and keeps its losses finite, its checkpoints are models
``spider-env evaluate`` plays, and its own batched evaluation plays exactly as that player."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the trainer needs the 'train' extra")
pytest.importorskip("sb3_contrib", reason="the trainer needs the 'train' extra")

from spider_env.agents.rl import ppo  # noqa: E402
from spider_env.agents.rl.models import load_model  # noqa: E402
from spider_env.agents.rl.settings import SettingsError  # noqa: E402

from spider_env.apps.evaluation import evaluate  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

TINY = dict(
    num_envs=8, n_steps=8, timesteps=256, hidden=16, eval_every=128, eval_deals=4,
    eval_envs=4, max_episode_steps=20, minibatches=2, no_progress=True, torch_threads=1,
)  # fmt: skip


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("ppo")
    summary = ppo.train(ppo.BatchedPPOSettings(**TINY, out=str(out)))  # type: ignore[arg-type]
    return out, summary


def test_a_tiny_run_takes_no_illegal_action_and_its_losses_are_finite(
    tiny_run: tuple[Path, dict],
) -> None:
    out, summary = tiny_run
    assert summary["illegal_actions"] == 0
    assert summary["timesteps"] == 256  # 4 updates of 8 games x 8 steps
    assert all(np.isfinite(v) for v in summary["last_update"].values())
    assert summary["training_games"]["games"] > 0  # games ended by the 20-step limit
    assert json.loads((out / "summary.json").read_text())["timesteps"] == 256


def test_the_curve_has_a_row_per_evaluation_and_a_checkpoint_each(
    tiny_run: tuple[Path, dict],
) -> None:
    out, _ = tiny_run
    rows = (out / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("timesteps,win_rate,mean_completed_runs")
    assert [r.split(",")[0] for r in rows[1:]] == ["0", "128", "256"]
    assert sorted(p.name for p in (out / "checkpoints").glob("*.zip")) == [
        "model_0.zip", "model_128.zip", "model_256.zip",
    ]  # fmt: skip
    assert (out / "model.zip").is_file() and (out / "model.json").is_file()
    assert sorted(p.name for p in (out / "checkpoints").glob("*.safetensors")) == [
        "model_0.safetensors", "model_128.safetensors", "model_256.safetensors",
    ]  # fmt: skip


def test_the_summary_names_the_model_file_which_plays_as_the_saved_zip(
    tiny_run: tuple[Path, dict],
) -> None:
    from model_checks import assert_plays_as_native, sb3_choice

    out, summary = tiny_run
    assert summary["model"] == str(out / "model.safetensors")
    assert summary["checkpoint"] == str(out / "model.zip")
    saved = assert_plays_as_native(summary["model"], sb3_choice(load_model(out / "model.zip")))
    assert saved.training["trainer"] == "spider_env.agents.rl.ppo"
    assert saved.training["timesteps"] == summary["chosen_at"]
    assert saved.env.variant == "spider-1suit" and saved.env.max_episode_steps == 20
    assert saved.training["settings"]["out"] == out.name  # no absolute path in a shared file


def test_the_batched_evaluation_plays_as_spider_env_evaluate_plays_the_saved_model(
    tiny_run: tuple[Path, dict],
) -> None:
    out, _ = tiny_run
    model_path = out / "checkpoints" / "model_256.zip"
    model = load_model(model_path)
    s = ppo.BatchedPPOSettings(**TINY, out=str(out))  # type: ignore[arg-type]
    deals = range(1000, 1006)
    mine = ppo.play_deals(model.policy, s.game(), s, deals)
    theirs = evaluate(str(model_path), deals, suits=1, max_steps=20)
    assert [(r["deal"], r["won"], r["runs"], r["steps"]) for r in mine] == [
        (r.deal, r.won, r.completed_runs, r.steps) for r in theirs.records
    ]


def test_the_masked_distribution_gives_masked_rows_nothing_and_their_entropy_is_zero() -> None:
    logits = torch.tensor([[1.0, 2.0, ppo.MASKED_LOGIT, ppo.MASKED_LOGIT]])
    valid = torch.tensor([[True, True, False, False]])
    logp, entropy = ppo.masked_log_probs(logits, valid)
    p = logp.exp()
    assert p[0, 2] == 0 and p[0, 3] == 0
    two = torch.softmax(torch.tensor([1.0, 2.0]), 0)
    assert torch.allclose(entropy, -(two * two.log()).sum())
    one = ppo.masked_log_probs(
        torch.tensor([[0.5, ppo.MASKED_LOGIT]]), torch.tensor([[True, False]])
    )
    assert one[1].item() == 0.0 and torch.isfinite(one[0][0, 0])


def test_sample_rows_inverts_the_cdf_and_never_draws_a_row_without_a_legal_action() -> None:
    logits = torch.tensor([[0.0, float(np.log(3.0)), ppo.MASKED_LOGIT, ppo.MASKED_LOGIT]])
    valid = torch.tensor([[True, True, False, False]])
    logp = torch.log_softmax(logits, -1)
    u = (torch.arange(10_000, dtype=torch.float32) + 0.5) / 10_000  # an even grid of [0, 1)
    rows = ppo.sample_rows(logp.expand(len(u), -1), valid.expand(len(u), -1), u)
    assert set(rows.tolist()) == {0, 1}  # never a masked row
    assert abs((rows == 1).float().mean().item() - 0.75) < 1e-3  # P(row 1) = 3 / (1 + 3)
    assert rows[0] == 0 and rows[-1] == 1  # increasing in u: the CDF's inverse
    near_one = torch.tensor([1.0 - 2**-24])  # u * total can round up to total: still row 1
    assert ppo.sample_rows(logp, valid, near_one).item() == 1
    none = torch.tensor([[False, False, False, False]])  # a game dealt with no legal action
    flat = torch.log_softmax(torch.full((1, 4), ppo.MASKED_LOGIT), -1)
    assert ppo.sample_rows(flat, none, torch.tensor([0.9])).item() == 0
    assert ppo.sample_rows(flat, none, torch.tensor([0.9]), valid_first=False).item() == 0
    # legal actions anywhere (a mask over action ids): the same draws at the same u
    scattered = torch.tensor([[False, True, False, True]])
    logp2 = torch.log_softmax(
        torch.tensor([[ppo.MASKED_LOGIT, 0.0, ppo.MASKED_LOGIT, float(np.log(3.0))]]), -1
    )
    ids = ppo.sample_rows(logp2.expand(len(u), -1), scattered.expand(len(u), -1), u, False)
    assert torch.equal(ids, torch.where(rows == 1, 3, 1))
    assert ppo.sample_rows(logp2, scattered, near_one, valid_first=False).item() == 3


def test_two_threads_step_one_half_while_choosing_for_the_other_and_draw_alike(
    tmp_path: Path,
) -> None:
    """With two threads the games are two envs, one stepping while torch chooses the other's
    actions: the same games, the same draws (one uniform per game and step, drawn up front),
    so the same rollouts and losses as one thread, up to the float rounding of the threads."""
    runs = {
        threads: ppo.train(
            ppo.BatchedPPOSettings(
                **{**TINY, "torch_threads": threads}, out=str(tmp_path / str(threads))
            )  # type: ignore[arg-type]
        )
        for threads in (1, 2)
    }
    one, two = runs[1], runs[2]
    assert two["illegal_actions"] == 0 and two["timesteps"] == one["timesteps"] == 256
    assert two["training_games"] == one["training_games"]
    assert two["training_games"]["games"] == 8  # each game ended once, by the 20-step limit
    for key, value in one["last_update"].items():
        assert two["last_update"][key] == pytest.approx(value, rel=1e-3, abs=1e-7), key
    # the env's own steps are timed where they run: one call per step of each half
    side_one, side_two = one["rollout_sides"], two["rollout_sides"]
    assert side_one["calls"] == 4 * 8 and side_one["games_per_call"] == 8
    assert side_two["calls"] == 4 * 8 * 2 and side_two["games_per_call"] == 4
    for side in (side_one, side_two):
        assert side["env_cpu_s"] > 0 and side["env_wall_s"] > 0 and side["policy_wall_s"] > 0


def test_clipped_losses_start_at_the_plain_surrogate_and_stop_the_gradient_past_the_clip() -> None:
    """Unchanged policy: ratio 1, policy loss ``-mean(adv)``, value loss half the squared error;
    a row already more likely by more than the clip, with a positive advantage, gets no
    gradient, and neither does a value already moved past the clip towards its return."""
    import torch

    valid = torch.tensor([[True, True, False], [True, True, True]])
    logits = torch.tensor([[0.3, -0.2, ppo.MASKED_LOGIT], [0.0, 1.0, -1.0]])
    rows = torch.tensor([0, 1])
    old_logp = ppo.masked_log_probs(logits, valid)[0].gather(1, rows[:, None])[:, 0]
    adv, old_value, returns = torch.tensor([1.0, -2.0]), torch.tensor([0.5, 0.0]), torch.ones(2)
    t = ppo.clipped_losses(logits, valid, old_value, rows, old_logp, adv, old_value, returns, 0.2)
    assert torch.equal(t.log_ratio, torch.zeros(2)) and torch.equal(t.ratio, torch.ones(2))
    assert float(t.policy_loss) == pytest.approx(0.5)  # -mean(1, -2)
    assert float(t.value_loss) == pytest.approx(0.5 * (0.25 + 1.0) / 2)
    assert t.entropy > 0 and t.logp.shape == (2, 3)
    # game 0's row made far likelier (ratio past 1.2) with a positive advantage; game 1's value
    # moved 0.5 towards its return (past the clip of 0.2): both clipped, no gradient
    far = torch.tensor([[3.0, -3.0, ppo.MASKED_LOGIT], [0.0, 1.0, -1.0]], requires_grad=True)
    moved = torch.tensor([0.5, 0.5], requires_grad=True)
    t = ppo.clipped_losses(far, valid, moved, rows, old_logp, adv, old_value, returns, 0.2)
    assert float(t.ratio.detach()[0]) > 1.2
    (t.policy_loss + t.value_loss).backward()
    assert far.grad is not None and moved.grad is not None
    assert torch.all(far.grad[0] == 0) and torch.any(far.grad[1] != 0)
    assert float(moved.grad[1]) == 0.0 and float(moved.grad[0]) != 0.0  # game 0 not clipped


def test_gae_gives_cleanrl_s_loop_bit_for_bit_resets_and_cut_games_included() -> None:
    def cleanrl(rewards, values, dones, next_value, next_done, gamma, lam):  # type: ignore[no-untyped-def]
        advantages, gae = torch.zeros_like(rewards), torch.zeros_like(next_value)
        for t in reversed(range(len(rewards))):
            nonterminal = 1.0 - (next_done if t == len(rewards) - 1 else dones[t + 1])
            nv = next_value if t == len(rewards) - 1 else values[t + 1]
            delta = rewards[t] + gamma * nv * nonterminal - values[t]
            gae = delta + gamma * lam * nonterminal * gae
            advantages[t] = gae
        return advantages

    g = torch.Generator().manual_seed(0)
    for t, n in ((1, 3), (32, 256), (7, 5)):
        rewards = torch.randn(t, n, generator=g) * (torch.rand(t, n, generator=g) < 0.2)
        values = torch.randn(t, n, generator=g)
        dones = (torch.rand(t, n, generator=g) < 0.1).float()
        next_value, next_done = torch.randn(n, generator=g), (torch.rand(n, generator=g) < 0.1)
        args = (rewards, values, dones, next_value, next_done.float(), 0.995, 0.95)
        assert torch.equal(ppo.gae_advantages(*args), cleanrl(*args))
    # a game that starts anew at step 1 takes nothing from it at step 0
    one = ppo.gae_advantages(
        torch.tensor([[1.0], [5.0]]), torch.zeros(2, 1), torch.tensor([[0.0], [1.0]]),
        torch.zeros(1), torch.zeros(1), 0.9, 1.0,
    )  # fmt: skip
    assert one.tolist() == [[1.0], [5.0]]


def test_rows_used_counts_the_rows_with_an_id() -> None:
    ids = np.full((3, 6), -1.0, dtype=np.float32)
    ids[0, :2] = [4, 9]
    ids[2, :5] = [1, 2, 3, 4, 5]
    assert ppo.rows_used(ids) == 5
    assert ppo.rows_used(np.full((2, 6), -1.0)) == 1  # never an empty batch


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"num_envs": 0}, "num_envs"),
        ({"gamma": 1.5}, "gamma"),
        ({"learning_rate": float("nan")}, "learning_rate"),
        ({"device": "tpu"}, "device"),
        ({"minibatches": 10_000}, "minibatches"),
        ({"variant": "no-such-game"}, "variant"),
        ({"clip_coef": 0.0}, "clip_coef"),
        ({"num_envs": 2.5}, "num_envs"),  # an int setting takes no float
        ({"seed": -1}, "seed"),
        ({"no_progress": 1}, "no_progress"),  # nor a switch an int
    ],
)
def test_bad_settings_name_the_setting(changes: dict, field: str) -> None:
    with pytest.raises(SettingsError) as err:
        ppo.BatchedPPOSettings(**changes)  # type: ignore[arg-type]
    assert err.value.field == field


def test_the_script_refuses_a_flat_model_as_bc_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import batched_ppo
    finally:
        sys.path.remove(str(EXAMPLES))
    (tmp_path / "flat.zip").write_text("not a model")
    with pytest.raises(SystemExit) as exc:
        batched_ppo.main(["--bc", str(tmp_path / "flat.zip"), "--out", str(tmp_path / "o")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--bc" in err[0]
    assert not (tmp_path / "o").exists()


def test_the_packed_network_gives_the_padded_networks_scores_and_values() -> None:
    from gymnasium import spaces
    from spider_env.agents.rl.policy import ActionSetPolicy

    from spider_env.core.variants import classic
    from spider_env.observation.actions import action_feature_space

    v = classic(2)
    space = action_feature_space(v, 12)
    policy = ActionSetPolicy(space, spaces.Discrete(v.n_actions), lambda _: 1e-3, hidden=16)
    gen = torch.Generator().manual_seed(0)
    feats = torch.randn((5, 12, space["actions"].shape[1]), generator=gen)
    n = torch.tensor([[0], [1], [5], [12], [3]])  # a position without any row, and a full one
    ids = torch.where(torch.arange(12)[None] < n, torch.arange(12.0)[None], -1.0)
    obs = {"actions": feats, "action_ids": ids, "globals": torch.randn((5, 11), generator=gen)}
    ext = policy.features_extractor
    padded, packed = ext.slot_scores(obs), ext.slot_scores(obs, packed=True)
    valid = padded[1]
    assert torch.equal(valid, packed[1])
    torch.testing.assert_close(packed[0][valid], padded[0][valid])
    torch.testing.assert_close(packed[2], padded[2])


def test_a_minibatch_of_the_packed_rollout_gives_the_padded_rows_values_and_gradients() -> None:
    """``PackedRows.select`` gathers only the rows with an action, in the order the network
    packs them itself: the logits, values and every gradient equal the padded path's bit for
    bit (so the update learns exactly as before)."""
    from gymnasium import spaces
    from spider_env.agents.rl.policy import ActionSetPolicy

    from spider_env.core.variants import classic
    from spider_env.observation.actions import action_feature_space

    v = classic(1)
    space = action_feature_space(v, 12)
    policy = ActionSetPolicy(space, spaces.Discrete(v.n_actions), lambda _: 1e-3, hidden=16)
    rp = ppo.RowPolicy(policy)
    gen = torch.Generator().manual_seed(1)
    b, f = 40, space["actions"].shape[1]
    feats = torch.randn((b, 12, f), generator=gen)
    n = torch.randint(0, 11, (b, 1), generator=gen)
    n[:3] = torch.tensor([[0], [10], [1]])  # no row, the most rows, one row
    ids = torch.where(torch.arange(12)[None] < n, torch.arange(12.0)[None], -1.0)
    glob = torch.randn((b, 11), generator=gen)
    rollout = ppo.PackedRows(feats, ids, glob)
    i = torch.randperm(b, generator=gen)[:25]
    k = int(n[i].max()) + 2  # rows past the most any decision of them uses
    assert k <= 12

    def run(forward: object) -> list[torch.Tensor]:
        policy.zero_grad()
        logits, valid, value = forward()  # type: ignore[operator]
        logp, ent = ppo.masked_log_probs(logits, valid)
        (logp[:, 0].mean() + ent.mean() + value.pow(2).mean()).backward()
        grads = [p.grad.clone() for p in policy.parameters() if p.grad is not None]
        return [logits.detach(), valid, value.detach(), *grads]

    padded = run(lambda: rp.forward(feats[i, :k], ids[i, :k], glob[i]))
    packed = run(lambda: rp.forward_packed(rollout, i, k))
    assert len(padded) == len(packed) > 3
    assert all(torch.equal(x, y) for x, y in zip(padded, packed))


def test_a_minibatchs_halves_weighted_by_their_share_give_its_gradient_and_statistics() -> None:
    """The trainer computes a minibatch as two halves (at once, on two threads), each loss
    weighted by its share of the decisions: their gradients and statistics add up to those of
    the whole minibatch's loss, the KL from a cloned model's policy included."""
    from gymnasium import spaces
    from spider_env.agents.rl.policy import ActionSetPolicy

    from spider_env.core.variants import classic
    from spider_env.observation.actions import action_feature_space

    v = classic(1)
    space = action_feature_space(v, 12)
    torch.manual_seed(3)
    policy = ActionSetPolicy(space, spaces.Discrete(v.n_actions), lambda _: 1e-3, hidden=16)
    anchor = ppo._anchor(ActionSetPolicy(space, spaces.Discrete(v.n_actions), lambda _: 1e-3,
                                         hidden=16))  # fmt: skip
    rp = ppo.RowPolicy(policy)
    gen = torch.Generator().manual_seed(2)
    b, f = 48, space["actions"].shape[1]
    n = torch.randint(1, 11, (b, 1), generator=gen)
    ids = torch.where(torch.arange(12)[None] < n, torch.arange(12.0)[None], -1.0)
    rollout = ppo.PackedRows(
        torch.randn((b, 12, f), generator=gen), ids, torch.randn((b, 11), generator=gen)
    )
    played = (torch.rand(b, generator=gen) * n[:, 0]).long()
    old_logp = -torch.rand(b, generator=gen) * 2
    adv, old_value, returns = (torch.randn(b, generator=gen) for _ in range(3))
    s = ppo.BatchedPPOSettings(bc="x.zip", bc_coef=0.3)
    params = list(policy.parameters())
    i = torch.randperm(b, generator=gen)[:29]  # an odd size: halves of 14 and 15

    def part(j: torch.Tensor, of: int | None) -> tuple[list[torch.Tensor], torch.Tensor]:
        """Decisions ``j``'s gradients and statistics, as a part of a minibatch of ``of``."""
        loss, stats = ppo.minibatch_loss(rp, rollout, j, played[j], old_logp[j], adv[j],
                                         old_value[j], returns[j], s, of, anchor, 0.3)  # fmt: skip
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        return [g for g in grads if g is not None], stats

    whole_grads, whole_stats = part(i, None)
    (g1, s1), (g2, s2) = part(i[:14], 29), part(i[14:], 29)
    assert len(whole_grads) == len(g1) == len(g2) > 6
    for g, a, c in zip(whole_grads, g1, g2):
        torch.testing.assert_close(a + c, g, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(s1 + s2, whole_stats, rtol=1e-5, atol=1e-6)
    assert dict(zip(ppo.STAT_NAMES, whole_stats.tolist()))["bc_kl"] > 0
    # (the mean of the halves' own means is not the minibatch's: they differ in size)
    t1, t2 = part(i[:14], None)[1], part(i[14:], None)[1]
    assert not torch.allclose((t1 + t2) / 2, whole_stats, rtol=1e-5, atol=1e-6)


def test_the_max_pool_by_row_gives_scatter_reduces_values_and_gradients_with_ties() -> None:
    """The packed network's max pool (``action_set_net.MaxByRow``) against ``scatter_reduce``'s
    ``"amax"`` it replaces: the same maxima and the same gradients bit for bit, a gradient
    shared evenly among tied maxima (duplicated rows, ReLU zeros), decisions without rows."""
    from spider_env.agents.rl.action_set_net import MaxByRow

    gen = torch.Generator().manual_seed(2)
    for trial in range(60):
        b, m, width = 12, int(torch.randint(1, 80, (1,), generator=gen)), 6
        rows = torch.sort(torch.randint(0, b - 2, (m,), generator=gen)).values  # 2 without rows
        h = torch.relu(torch.randn(m, width, generator=gen)).round(decimals=1)
        if trial % 2:
            h[1:] = h[:-1].clone()  # identical rows: tied maxima
        w = torch.randn(b, width, generator=gen)
        h1, h2 = h.clone().requires_grad_(), h.clone().requires_grad_()
        index = rows.unsqueeze(-1).expand(-1, width)
        want = h1.new_full((b, width), -1e9).scatter_reduce(
            0, index, h1, reduce="amax", include_self=True
        )
        got = MaxByRow.apply(h2, rows, b)
        (want * w).sum().backward()
        (got * w).sum().backward()
        assert torch.equal(got, want)
        assert h1.grad is not None and torch.equal(h2.grad, h1.grad)


def _pooled(
    h: torch.Tensor, rows: torch.Tensor, b: int, weights: torch.Tensor, compiled: bool
) -> list[torch.Tensor]:
    """The sums and maxima of ``h``'s rows by decision and ``h``'s gradient from a loss over
    them and over a third use of the rows, compiled or through the torch ops. The third use is
    made first, as the network scores its rows before it pools them: autograd then adds the
    pools' gradients before the score's, in either path."""
    from spider_env.agents.rl.action_set_net import MaxByRow, PoolByRow

    x = h.clone().requires_grad_()
    y = x * 1.0
    w_sum, w_max, w_score = weights[:b], weights[b : 2 * b], weights[2 * b]
    score = (y @ w_score).pow(2).sum()  # used before the pools, as the network's score is
    if compiled:
        total, top = PoolByRow.apply(y, rows, b)
    else:
        total = y.new_zeros((b, h.shape[1])).index_add(0, rows, y)
        top = MaxByRow.apply(y, rows, b)
    (score + (total / 3 * w_sum).sum() + (top * w_max).sum()).backward()
    assert x.grad is not None
    return [total.detach(), top.detach(), x.grad]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_compiled_row_pools_give_index_adds_sums_and_max_by_rows_maxima_and_gradients(
    dtype: torch.dtype,
) -> None:
    """``PoolByRow`` (one compiled pass each way) against the torch path it stands for
    (``index_add`` and ``MaxByRow``): the same sums and maxima, and the same gradient of the
    rows bit for bit, also where a third use of the rows (the score's) adds its own, with tied
    maxima, ReLU zeros, decisions without rows and rows in any order (the network's order of
    uses: ``_pooled``)."""
    pytest.importorskip("numba")
    gen = torch.Generator().manual_seed(4)
    for trial in range(80):
        b, m, width = 12, int(torch.randint(1, 80, (1,), generator=gen)), 6
        rows = torch.randint(0, b - 2, (m,), generator=gen)  # 2 decisions without rows
        if trial % 3:
            rows = torch.sort(rows).values  # as the network packs them
        h = torch.relu(torch.randn(m, width, generator=gen, dtype=dtype)).round(decimals=1)
        if trial % 2:
            h[1:] = h[:-1].clone()  # identical rows: tied maxima
        weights = torch.randn(2 * b + 1, width, generator=gen, dtype=dtype)
        want = _pooled(h, rows, b, weights, compiled=False)
        got = _pooled(h, rows, b, weights, compiled=True)
        assert all(torch.equal(a, c) for a, c in zip(want, got))
        assert torch.equal(got[1][b - 2 :], torch.full((2, width), -1e9, dtype=dtype))


def test_the_compiled_row_pools_refuse_rows_out_of_range_or_of_the_wrong_shape() -> None:
    """The kernels index without bounds checks, so ``PoolByRow`` checks its rows first: a
    row outside ``0..b-1``, a row count other than ``h``'s or rows not int64 is one clear
    error, as torch's ``index_add`` would give."""
    pytest.importorskip("numba")
    from spider_env.agents.rl.action_set_net import PoolByRow

    h = torch.ones((3, 4))
    with pytest.raises(IndexError, match=r"rows must lie in 0\.\.1"):
        PoolByRow.apply(h, torch.tensor([0, 1, 2]), 2)
    with pytest.raises(IndexError, match="rows must lie"):
        PoolByRow.apply(h, torch.tensor([0, -1, 1]), 2)
    with pytest.raises(ValueError, match=r"h \(M, H\) and int64 rows \(M,\)"):
        PoolByRow.apply(h, torch.tensor([0, 1]), 2)
    with pytest.raises(ValueError, match="int64 rows"):
        PoolByRow.apply(h, torch.tensor([0, 1, 1], dtype=torch.int32), 2)
    total, top = PoolByRow.apply(h, torch.tensor([0, 1, 1]), 2)
    assert total.tolist() == [[1.0] * 4, [2.0] * 4] and top.tolist() == [[1.0] * 4] * 2


def test_the_network_pools_its_rows_compiled_and_without_numba_through_torch_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``pool_by_row`` takes the compiled pools on the CPU when numba is there and the torch
    ops otherwise (numba missing, or a tensor on another device): the packed network's scores,
    values and gradients are the same bit for bit either way."""
    pytest.importorskip("numba")
    from gymnasium import spaces
    from spider_env.agents.rl import action_set_net
    from spider_env.agents.rl.policy import ActionSetPolicy

    from spider_env.core.variants import classic
    from spider_env.observation.actions import action_feature_space

    v = classic(2)
    space = action_feature_space(v, 12)
    policy = ActionSetPolicy(space, spaces.Discrete(v.n_actions), lambda _: 1e-3, hidden=16)
    gen = torch.Generator().manual_seed(5)
    feats = torch.randn((30, 12, space["actions"].shape[1]), generator=gen)
    n = torch.randint(0, 13, (30, 1), generator=gen)
    n[0] = 0  # a decision without rows
    ids = torch.where(torch.arange(12)[None] < n, torch.arange(12.0)[None], -1.0)
    obs = {"actions": feats, "action_ids": ids, "globals": torch.randn((30, 11), generator=gen)}

    def run() -> tuple[list[torch.Tensor], str]:
        policy.zero_grad()
        scores, valid, latent = policy.features_extractor.slot_scores(obs, packed=True)
        (scores[valid].sum() + latent.pow(2).sum()).backward()
        grads = [p.grad.clone() for p in policy.parameters() if p.grad is not None]
        return [scores.detach(), latent.detach(), *grads], type(latent.grad_fn).__name__

    compiled = run()
    monkeypatch.setattr(action_set_net, "_compiled_pool", lambda: False)
    plain = run()
    assert len(compiled[0]) == len(plain[0]) > 2
    assert all(torch.equal(a, c) for a, c in zip(compiled[0], plain[0]))
    h = torch.ones((3, 4), requires_grad=True)
    monkeypatch.undo()
    total, top = action_set_net.pool_by_row(h * 1.0, torch.tensor([0, 0, 1]), 2)
    assert type(total.grad_fn).__name__ == "PoolByRowBackward"
    total, top = action_set_net.pool_by_row(h.to(torch.bfloat16), torch.tensor([0, 0, 1]), 2)
    assert type(top.grad_fn).__name__ == "MaxByRowBackward"


def test_the_trainer_keeps_freed_memory_for_reuse_and_leaves_a_users_malloc_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``keep_freed_memory``: within it, a large block freed and asked for again comes back
    without new page faults (glibc's malloc keeps it), and so it does after it (the thresholds
    are not fixed at glibc's starting values); a user's own malloc settings in the environment
    are left to stand, and the trainer says which it did."""
    import resource

    from spider_env.agents.rl import memory

    monkeypatch.setenv("MALLOC_TOP_PAD_", "0")
    with memory.keep_freed_memory() as said:
        assert said in ("as it was (MALLOC_TOP_PAD_ is set)", "as it was (not glibc)")
    monkeypatch.delenv("MALLOC_TOP_PAD_")
    for name in memory.USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    if memory._glibc() is None:
        pytest.skip("keep_freed_memory changes nothing where the C library is not glibc")
    size = 8 * 1024 * 1024 // 4  # 8 MB of float32: above glibc's mmap threshold by default

    def faults_of_a_block_again() -> int:
        first = np.ones(size, dtype=np.float32)  # pages of a new block: faults
        del first
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        again = np.ones(size, dtype=np.float32)  # the freed block again: no new pages
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
        del again
        return faults

    with memory.keep_freed_memory() as said:
        assert said == "freed memory kept for reuse (glibc mallopt)"
        within = faults_of_a_block_again()
    assert within < size * 4 // 4096 // 10, within  # under a tenth of its 2,048 pages
    # afterwards the thresholds stay where glibc's adaptive rule can raise them (not fixed at
    # 128 KiB, which would map every such block anew for the rest of the process)
    after = faults_of_a_block_again()
    assert after < size * 4 // 4096 // 10, after


def test_blocks_of_every_size_are_kept_for_reuse_while_asked_and_mapped_again_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``keep_freed_memory(every_size=True)`` (RLlib's trainer and runners): no block is
    mapped on its own while it runs (``M_MMAP_MAX`` 0), so that a block past glibc's largest
    mmap threshold (32 MiB: RLlib's padded observations) freed and asked for again comes back
    without new pages; afterwards glibc maps such blocks again (its own ``M_MMAP_MAX``)."""
    import resource

    from spider_env.agents.rl import memory

    for name in memory.USER_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    libc = memory._glibc()
    if libc is None:
        pytest.skip("keep_freed_memory changes nothing where the C library is not glibc")
    calls: list[tuple[int, int]] = []

    class Recorder:  # glibc's, calls recorded
        def mallopt(self, param: int, value: int) -> int:
            calls.append((param, value))
            return int(libc.mallopt(param, value))

        def malloc_trim(self, pad: int) -> int:
            return int(libc.malloc_trim(pad))

    monkeypatch.setattr(memory, "_glibc", Recorder)
    size = 64 * 1024 * 1024 // 4  # 64 MB of float32: past any mmap threshold

    def faults_of_a_block_again() -> int:
        first = np.ones(size, dtype=np.float32)
        del first
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        again = np.ones(size, dtype=np.float32)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
        del again
        return faults

    with memory.keep_freed_memory(every_size=True) as said:
        assert said == "freed memory kept for reuse, blocks of every size (glibc mallopt)"
        assert calls[-1] == (memory.M_MMAP_MAX, 0)
        within = faults_of_a_block_again()
    assert within < 50, within  # of its 16,384 pages (mapped anew: hundreds, even in huge pages)
    assert (memory.M_MMAP_MAX, memory.DEFAULT_MMAP_MAX) in calls[-4:]
    calls.clear()
    with memory.keep_freed_memory() as said:  # the batched PPO's: M_MMAP_MAX left alone
        assert said == "freed memory kept for reuse (glibc mallopt)"
    assert all(param != memory.M_MMAP_MAX for param, _ in calls)


class _Cycle:
    """An object in a reference cycle: only the garbage collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_setup_frozen_keeps_the_set_up_out_of_full_collections_and_leaves_a_users_freeze() -> None:
    """``setup_frozen`` (RLlib's trainer): the set-up's garbage is collected first; what is
    alive then is out of the collector's reach within the block (a cycle of it dropped there
    survives a full collection) and back in it after; a user's own frozen objects, or a
    collector that is off, are left as they are, and the trainer says which it did."""
    import gc
    import weakref

    from spider_env.agents.rl import memory

    assert gc.get_freeze_count() == 0
    garbage = _Cycle()
    freed = weakref.ref(garbage)
    kept = _Cycle()
    held = weakref.ref(kept)
    del garbage
    with memory.setup_frozen() as said:
        assert freed() is None  # collected before freezing
        assert re.fullmatch(r"the set-up's [\d,]+ objects frozen \(gc\.freeze\)", said), said
        assert gc.get_freeze_count() > 1000
        del kept
        gc.collect()
        assert held() is not None  # frozen: a full collection does not reach it
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert held() is None
    gc.freeze()
    try:
        mine = gc.get_freeze_count()
        with memory.setup_frozen() as said:
            assert said == f"as it was ({mine:,} objects frozen already)"
        assert gc.get_freeze_count() == mine
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with memory.setup_frozen() as said:
            assert said == "as it was (the garbage collector is off)"
            assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_the_embedding_relus_in_place_give_the_values_and_gradients_of_out_of_place_ones() -> None:
    """The action-set network's embedding rectifies in place (``nn.ReLU(inplace=True)``, no
    new tensor per row): its scores, value latent and every parameter's gradient equal those
    of the same network with out-of-place ReLUs, packed and padded, bit for bit."""
    from spider_env.agents.rl.action_set_net import ActionSetNet
    from torch import nn

    gen = torch.Generator().manual_seed(3)
    b, k, f, g = 9, 7, 5, 4
    feats = torch.randn(b, k, f, generator=gen)
    valid = torch.rand(b, k, generator=gen) < 0.6
    valid[2] = False  # a decision without rows
    glob = torch.randn(b, g, generator=gen)
    w = torch.randn(b, k, generator=gen)
    torch.manual_seed(0)
    inplace = ActionSetNet(f, g, 20, 8, 6)
    outplace = ActionSetNet(f, g, 20, 8, 6)
    outplace.load_state_dict(inplace.state_dict())
    outplace.embed[1], outplace.embed[3] = nn.ReLU(), nn.ReLU()
    assert inplace.embed[1].inplace and inplace.embed[3].inplace
    for packed in (True, False):
        got = []
        for net in (inplace, outplace):
            net.zero_grad()
            scores, _, latent = net.row_scores(feats, valid, glob, packed=packed)
            ((scores * w * valid).sum() + latent.square().sum()).backward()
            grads = [p.grad.clone() for p in net.parameters() if p.grad is not None]
            got.append((scores.detach(), latent.detach(), grads))
        (s1, l1, g1), (s2, l2, g2) = got
        assert torch.equal(s1, s2) and torch.equal(l1, l2)
        assert len(g1) == len(g2) == 8 and all(torch.equal(x, y) for x, y in zip(g1, g2))


SHIPPED = Path(__file__).resolve().parents[1] / "docs" / "models"


def test_the_shipped_1suit_model_is_the_batched_trainers_and_plays_through_evaluate() -> None:
    from spider_env.agents.model_file import SavedModel

    shipped = SHIPPED / "rl_1suit.safetensors"
    saved = SavedModel.read(shipped)
    assert saved.training["trainer"] == "spider_env.agents.rl.ppo"
    assert saved.env.obs_mode == "actions" and saved.deterministic
    res = evaluate(str(shipped), range(0, 3), suits=1)
    assert [r.won for r in res.records] == [True, True, True]  # as docs/rl/test_fast_1suit.json


def test_the_shipped_2suit_model_names_its_game_and_trainer() -> None:
    from spider_env.agents.model_file import SavedModel

    saved = SavedModel.read(SHIPPED / "rl_2suit.safetensors")
    assert saved.training["trainer"] == "spider_env.agents.rl.ppo"
    assert saved.env.variant == "spider-2suit" and saved.env.obs_mode == "actions"


def test_threads_left_to_choose_are_chosen_from_the_free_cores_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``torch_threads=0`` (the default): the trainer chooses, prints what it chose first and
    keeps it in the summary; a given count is used as given; a negative one is refused."""
    assert ppo.BatchedPPOSettings().torch_threads == 0
    before = torch.get_num_threads()
    try:
        settings = {**TINY, "torch_threads": 0, "no_progress": False, "timesteps": 64}
        summary = ppo.train(ppo.BatchedPPOSettings(**settings, out=str(tmp_path)))  # type: ignore[arg-type]
        first = capsys.readouterr().out.splitlines()[0]
        assert first == f"torch threads: {summary['torch_threads_chosen']}"
        assert summary["torch_threads"] == torch.get_num_threads() >= 1
        assert "cores usable" in summary["torch_threads_chosen"]
        summary = ppo.train(ppo.BatchedPPOSettings(**TINY, out=str(tmp_path / "given")))  # type: ignore[arg-type]
        assert (summary["torch_threads"], summary["torch_threads_chosen"]) == (1, "given")
    finally:
        torch.set_num_threads(before)
    with pytest.raises(SettingsError, match="torch_threads"):
        ppo.BatchedPPOSettings(torch_threads=-1)


def test_legal_exp_is_exp_at_the_legal_rows_and_leaves_the_masked_ones_to_the_mask() -> None:
    """``legal_exp`` never takes the exponential of a masked row's log-probability (near
    ``MASKED_LOGIT``, the vectorised ``exp``'s slow path); at the legal rows it is ``exp`` bit
    for bit, so the entropy, the samples and their gradients are those of ``logp.exp()``."""
    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(64, 12, generator=gen)
    valid = torch.rand(64, 12, generator=gen) < 0.5
    valid[:, 0] = True
    logits = logits.masked_fill(~valid, ppo.MASKED_LOGIT).requires_grad_(True)
    logp = torch.log_softmax(logits, -1)
    got = ppo.legal_exp(logp, valid)
    assert torch.equal(got[valid], logp.exp()[valid]) and torch.all(got[~valid] == 1)
    u = torch.rand(64, generator=gen)
    cdf = logp.detach().exp().cumsum(-1)
    plain = torch.searchsorted(cdf, (u * cdf[:, -1])[:, None], right=True)[:, 0]
    last = valid.sum(-1) - 1
    assert torch.equal(ppo.sample_rows(logp.detach(), valid, u), torch.minimum(plain, last))
    _, entropy = ppo.masked_log_probs(logits, valid)
    (g_new,) = torch.autograd.grad(entropy.sum(), logits)
    plogp = torch.where(valid, logp.exp() * logp, torch.zeros_like(logp))
    (g_old,) = torch.autograd.grad(-plogp.sum(), logits)
    assert torch.equal(entropy, -plogp.sum(-1)) and torch.equal(g_new, g_old)


def test_the_embedding_in_bfloat16_pads_its_rows_to_a_block_and_stays_near_float32() -> None:
    """With ``row_dtype = torch.bfloat16`` the packed rows' embedding multiplies in bfloat16
    (other numbers than float32's), its rows padded with zeros to a multiple of ``ROW_BLOCK``
    (oneDNN builds a kernel per shape), and gives float32 scores, values and gradients within
    bfloat16's rounding of float32's; ``None`` embeds exactly the rows, in float32."""
    from spider_env.agents.rl.action_set_net import ROW_BLOCK, ActionSetNet

    gen = torch.Generator().manual_seed(11)
    b, k, f, g = 40, 24, 6, 3
    feats = torch.randn(b, k, f, generator=gen)
    valid = torch.rand(b, k, generator=gen) < 0.5
    glob = torch.randn(b, g, generator=gen)
    w = torch.randn(b, k, generator=gen)
    rows = int(valid.sum())
    assert rows % ROW_BLOCK
    torch.manual_seed(0)
    net = ActionSetNet(f, g, 30, 32, 16)
    seen: list[tuple[int, torch.dtype]] = []
    net.embed[0].register_forward_hook(lambda m, a, out: seen.append((len(a[0]), out.dtype)))
    got = {}
    for dtype in (None, torch.bfloat16):
        net.row_dtype = dtype
        net.zero_grad()
        scores, _, latent = net.row_scores(feats, valid, glob, packed=True)
        assert scores.dtype == latent.dtype == torch.float32
        ((scores * w * valid).sum() + latent.square().sum()).backward()
        got[dtype] = (scores.detach(), latent.detach(), [p.grad.clone() for p in net.parameters()])
    assert seen == [(rows, torch.float32), (-(-rows // ROW_BLOCK) * ROW_BLOCK, torch.bfloat16)]
    (s32, l32, g32), (s16, l16, g16) = got[None], got[torch.bfloat16]
    assert not torch.equal(s32, s16)  # the products were bfloat16's
    assert torch.allclose(s16, s32, atol=0.02 * s32.abs().max().item())
    assert torch.allclose(l16, l32, atol=0.02 * l32.abs().max().item())
    assert len(g16) == 8 and all(
        torch.allclose(x, y, atol=0.08 * y.abs().max().item()) for x, y in zip(g16, g32)
    )


def test_precision_auto_is_bfloat16_only_on_a_cpu_that_multiplies_it_natively(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``precision="auto"`` (the default) is bfloat16 where the CPU multiplies it natively and
    float32 elsewhere (a GPU included); a precision given is used as given; another is refused."""
    assert ppo.BatchedPPOSettings().precision == "auto"
    monkeypatch.setattr(ppo, "native_bfloat16", lambda: True)
    assert ppo.update_precision("auto", "cpu") == (
        torch.bfloat16, "bfloat16 (auto: the CPU multiplies bfloat16 natively)"
    )  # fmt: skip
    assert ppo.update_precision("auto", "cuda")[0] is None
    assert ppo.update_precision("float32", "cpu") == (None, "float32 (given)")
    monkeypatch.setattr(ppo, "native_bfloat16", lambda: False)
    assert ppo.update_precision("auto", "cpu") == (
        None, "float32 (auto: no native bfloat16 on this device)"
    )  # fmt: skip
    assert ppo.update_precision("bfloat16", "cpu") == (torch.bfloat16, "bfloat16 (given)")
    with pytest.raises(SettingsError, match="precision"):
        ppo.BatchedPPOSettings(precision="float16")
    with pytest.raises(ValueError, match="precision must be one of auto, float32, bfloat16"):
        ppo.update_precision("float16", "cpu")


def test_only_the_update_embeds_in_bfloat16_the_rollout_and_evaluations_in_float32(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``precision="bfloat16"``: every embedding with gradients (the update's) is bfloat16's,
    every one without (the rollout's choices, the evaluations) float32's; the output and the
    summary say which precision was used."""
    from spider_env.agents.rl.action_set_net import ActionSetLayers

    calls: list[tuple[bool, object]] = []
    embed_rows = ActionSetLayers.embed_rows

    def spy(self: ActionSetLayers, x: torch.Tensor, glob_rows: torch.Tensor) -> torch.Tensor:
        calls.append((torch.is_grad_enabled(), self.row_dtype))
        return embed_rows(self, x, glob_rows)

    monkeypatch.setattr(ActionSetLayers, "embed_rows", spy)
    settings = {**TINY, "precision": "bfloat16", "no_progress": False}
    summary = ppo.train(ppo.BatchedPPOSettings(**settings, out=str(tmp_path)))  # type: ignore[arg-type]
    assert summary["update_precision"] == "bfloat16 (given)"
    assert "update precision: bfloat16 (given)" in capsys.readouterr().out.splitlines()
    assert all(np.isfinite(v) for v in summary["last_update"].values())
    assert {d for grad, d in calls if grad} == {torch.bfloat16}
    assert {d for grad, d in calls if not grad} == {None}


@pytest.mark.parametrize("hidden", [16, 64])
def test_the_compiled_choice_draws_torch_s_rows_with_its_log_probabilities_and_values(
    hidden: int,
) -> None:
    """The rollout's compiled choice (:class:`ppo.CompiledChoice`: ``spider_env.fast.row_policy``
    around torch's two products) against the torch pass it stands for (the policy's packed
    forward, ``log_softmax``, :func:`ppo.sample_rows`): on real observations of many positions,
    with a game left without a legal row and weights changed between calls, it draws the same
    rows from the same uniforms, at the same log-probabilities and values up to float32
    rounding."""
    pytest.importorskip("numba")
    s = ppo.BatchedPPOSettings(suits=2, hidden=hidden, out="unused")
    torch.manual_seed(3)
    policy = ppo._new_model(s.game(), s).policy
    rp = ppo.RowPolicy(policy)
    envs = ppo.make_envs(s.game(), s, 64, range(40, 104))
    obs, _ = envs.reset(seed=5)
    choice = ppo.compiled_choice(policy, "cpu", 64, s.action_rows, *(
        obs[key].shape[-1] for key in ("actions", "globals")
    ))  # fmt: skip
    assert isinstance(choice, ppo.CompiledChoice)
    gen = torch.Generator().manual_seed(8)
    for step in range(25):
        if step % 5 == 0:  # weights of a policy that has learned something: larger, and changing
            for p in policy.parameters():
                p.data.mul_(1.3).add_(0.05 * torch.randn(p.shape, generator=gen))
            choice.refresh()
        o = {k: v.copy() for k, v in obs.items()}
        if step == 3:
            o["action_ids"][7] = -1  # a game without a legal row
        k = ppo.rows_used(o["action_ids"])
        u = torch.rand(64, generator=gen)
        with torch.no_grad():
            logits, valid, value = rp.forward(
                torch.from_numpy(o["actions"][:, :k]),
                torch.from_numpy(o["action_ids"][:, :k]).float(),
                torch.from_numpy(o["globals"]),
            )
            logp = torch.log_softmax(logits, -1)
            row = ppo.sample_rows(logp, valid, u)
            want_logp = logp.gather(1, row[:, None])[:, 0]
        rows = np.empty(64, np.int64)
        got_logp, got_value = np.empty(64, np.float32), np.empty(64, np.float32)
        choice(o, u.numpy(), k, rows, got_logp, got_value)
        assert rows.tolist() == row.tolist()
        np.testing.assert_allclose(got_logp, want_logp.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got_value, value.numpy(), rtol=1e-5, atol=1e-5)
        obs = envs.step(o["action_ids"][np.arange(64), rows].clip(0).astype(np.int64))[0]
    # its kernels index without bounds checks: shapes other than its own are refused first
    rows, lp, val = np.empty(64, np.int64), np.empty(64, np.float32), np.empty(64, np.float32)
    u = np.zeros(64, np.float32)
    cases = [
        ({**obs, "actions": obs["actions"][:, :, :-1]}, u, rows),
        ({k: np.concatenate([v, v]) for k, v in obs.items()}, np.zeros(128, np.float32), rows),
        (obs, u, rows[:10]),
    ]
    for o, uu, rr in cases:
        with pytest.raises(ValueError, match="CompiledChoice of at most 64 games"):
            choice(o, uu, 1, rr, lp, val)


def test_a_tiny_run_trains_alike_through_the_compiled_choice_and_torch_s_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rollout's chooser changes no draw: a tiny run with :class:`ppo.CompiledChoice` and
    the same run through torch's pass (what a GPU or a machine without numba takes:
    ``compiled_choice`` gives ``None``) play the same games to the same outcomes, and end with
    weights equal up to float32 rounding."""
    pytest.importorskip("numba")
    from safetensors.numpy import load_file

    def run(name: str) -> tuple[dict, dict[str, np.ndarray]]:
        out = tmp_path / name
        summary = ppo.train(ppo.BatchedPPOSettings(**{**TINY, "eval_every": 10**6}, out=str(out)))
        return summary, load_file(str(out / "model.safetensors"))

    made: list[object] = []
    real = ppo.compiled_choice
    monkeypatch.setattr(ppo, "compiled_choice", lambda *a: made.append(real(*a)) or made[-1])
    compiled, w_compiled = run("compiled")
    assert isinstance(made[0], ppo.CompiledChoice)
    monkeypatch.setattr(ppo, "compiled_choice", lambda *a: None)
    plain, w_plain = run("torch")
    assert compiled["training_games"] == plain["training_games"]
    assert compiled["illegal_actions"] == plain["illegal_actions"] == 0
    assert sorted(w_compiled) == sorted(w_plain)
    for name in w_plain:
        np.testing.assert_allclose(w_compiled[name], w_plain[name], rtol=1e-4, atol=1e-5)
