"""Probes of the batched PPO's update (the training record's "Where the batched trainer's time
goes"): the wall and CPU time of one pass over a rollout's minibatches, done three ways.

* ``eager``: the trainer's way until it computed halves: torch on two threads,
  ``loss.backward()`` per minibatch;
* ``compiled``: the same loss through ``torch.compile(dynamic=True)`` (the packed rows make
  every minibatch's shape different); its first pass, which compiles, is timed apart;
* ``one``: the trainer's loss, torch on one thread;
* ``halves``: torch on one thread, and two Python threads each taking half of the minibatch's
  decisions through the network (``torch.autograd.grad``), their gradients summed in a fixed
  order (the same gradient up to float rounding): the trainer's way now
  (``spider_env.agents.rl.ppo.minibatch_loss``).

``--precision bfloat16`` multiplies the row embedding in bfloat16 as the trainer's update does
(its ``--precision``), the rows padded to a multiple of ``--row-block`` (the network's
``ROW_BLOCK``, 256; 1 pads nothing). ``--gap [MODEL]`` prints how far the policy in bfloat16
is from the one in float32 on the rollout (log-probabilities, KL, values) instead of timing.

The rollout is one of random legal play of ``--n`` games over ``--steps`` steps, as the trainer
stores it (``PackedRows``); its advantages, returns and old log-probabilities are random draws
(they change what is learned, not what an update costs). The loss is the trainer's
(``clipped_losses``) without the cloning term. Not a test; run it as

    .venv/bin/python research/rl/update_probes.py [--suits 1] [--hidden 64] [--ways eager halves]
    .venv/bin/python research/rl/update_probes.py --profile
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from spider_env.agents.rl.envs import TRAIN_DEALS
from spider_env.agents.rl.settings import ArgumentParser

from spider_env.core.variants import classic

WAYS = ("eager", "compiled", "one", "halves")


def random_rollout(suits: int, n: int, steps: int) -> tuple[Any, list[Any], list[int]]:
    """``(PackedRows, rows played, most rows used at each step)`` of ``steps`` steps of random
    legal play of ``n`` training games, as the trainer stores its rollout."""
    import torch
    from spider_env.agents.rl.ppo import BatchedPPOSettings, PackedRows, make_envs

    s = BatchedPPOSettings(suits=suits, out="runs/probe")
    envs = make_envs(classic(suits), s, n, TRAIN_DEALS, autoreset_mode=AutoresetMode.SAME_STEP)
    o, _ = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    feats, ids, glob, rows, kmax = [], [], [], [], []
    for _ in range(steps):
        legal = np.maximum((o["action_ids"] >= 0).sum(1), 1)
        r = (rng.random(n) * legal).astype(np.int64)
        feats.append(o["actions"].copy())
        ids.append(o["action_ids"].copy())
        glob.append(o["globals"].copy())
        rows.append(r)
        kmax.append(int(legal.max()))
        o = envs.step(np.maximum(o["action_ids"][np.arange(n), r], 0).astype(np.int64))[0]
    envs.close()
    k_all, f_all = feats[0].shape[1], feats[0].shape[2]
    packed = PackedRows(
        torch.from_numpy(np.stack(feats)).reshape(-1, k_all, f_all),
        torch.from_numpy(np.stack(ids)).reshape(-1, k_all),
        torch.from_numpy(np.stack(glob)).reshape(-1, glob[0].shape[-1]),
    )
    return packed, rows, kmax


def precision_gap(model: str | None, suits: int, n: int, steps: int) -> dict[str, float]:
    """How far the policy the update differentiates in bfloat16 is from the one that chose the
    rollout's actions in float32: over every decision of a random rollout, the mean, 99th
    percentile and largest gap of a legal row's log-probability, the mean KL divergence per
    decision and the mean gap of the value, for the action-set model ``model`` (a batched PPO's
    ``model.zip``; ``None``: a fresh network of hidden 64)."""
    import torch
    from spider_env.agents.rl.models import action_set_model, load_action_set_model
    from spider_env.agents.rl.ppo import RowPolicy, masked_log_probs

    torch.manual_seed(0)
    if model:
        policy = load_action_set_model(model)[2].policy
    else:
        policy = action_set_model(classic(suits), hidden=64, seed=0).policy
    rp = RowPolicy(policy)
    packed = random_rollout(suits, n, steps)[0]
    i = torch.arange(n * steps)
    k = max(1, int(packed.count.max()))
    out = {}
    for dtype in (None, torch.bfloat16):
        with torch.no_grad(), rp.extractor.rows_in(dtype):
            logits, valid, value = rp.forward_packed(packed, i, k)
            out[dtype] = (masked_log_probs(logits, valid)[0], valid, value)
    (a, valid, va), (b, _, vb) = out[None], out[torch.bfloat16]
    gap = (b - a)[valid].abs()
    kl = torch.where(valid, a.exp() * (a - b), torch.zeros_like(a)).sum(-1)
    return {
        "logp_gap_mean": gap.mean().item(),
        "logp_gap_p99": gap.quantile(0.99).item(),
        "logp_gap_max": gap.max().item(),
        "kl_mean": kl.mean().item(),
        "value_gap_mean": (vb - va).abs().mean().item(),
        "value_mean": va.abs().mean().item(),
    }


def make_update(suits: int, hidden: int, n: int, steps: int, minibatches: int) -> Any:
    """A rollout of random legal play and ``one_pass(way)``: one pass over its minibatches
    (shuffled), with an optimizer step each, the way ``way`` says."""
    import torch
    from spider_env.agents.rl.models import action_set_model
    from spider_env.agents.rl.ppo import BatchedPPOSettings, RowPolicy, clipped_losses

    torch.manual_seed(0)
    variant = classic(suits)
    s = BatchedPPOSettings(suits=suits, hidden=hidden, out="runs/probe")
    policy = action_set_model(variant, hidden=hidden, seed=0).policy
    rp = RowPolicy(policy)
    params = list(policy.parameters())
    optimizer = torch.optim.Adam(params, lr=s.learning_rate, eps=1e-5)
    packed, rows, kmax = random_rollout(suits, n, steps)
    batch = n * steps
    b_rows = torch.from_numpy(np.concatenate(rows))
    b_k = torch.as_tensor(np.repeat(kmax, n))
    b_logp = torch.randn(batch) * 0.1 - 2.0
    b_adv, b_ret, b_val = torch.randn(batch), torch.randn(batch), torch.randn(batch)
    clip, mb = s.clip_coef, max(1, batch // minibatches)

    def loss_of(i: Any, k: int, adv: Any, total: int) -> Any:
        """The trainer's loss (``clipped_losses``) of decisions ``i`` (advantages ``adv``
        normalised over the minibatch), weighted by their share of the ``total`` decisions of
        the minibatch (so that the halves' losses add up to the minibatch's)."""
        logits, valid, value = rp.forward_packed(packed, i, k)
        t = clipped_losses(
            logits, valid, value, b_rows[i], b_logp[i], adv, b_val[i], b_ret[i], clip
        )
        loss = t.policy_loss - s.ent_coef * t.entropy + s.vf_coef * t.value_loss
        return loss * (len(i) / total)

    def grads(i: Any, k: int, adv: Any, total: int) -> Any:
        """The gradients of :func:`loss_of` (not accumulated into the parameters)."""
        return torch.autograd.grad(loss_of(i, k, adv, total), params)

    compiled = None
    helper = ThreadPoolExecutor(1)

    def one_pass(way: str) -> None:
        nonlocal compiled
        if way == "compiled" and compiled is None:
            compiled = torch.compile(loss_of, dynamic=True)
        torch.set_num_threads(1 if way in ("one", "halves") else 2)
        order = torch.randperm(batch)
        for lo in range(0, batch, mb):
            i = order[lo : lo + mb]
            k = int(b_k[i].max())
            adv = b_adv[i]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            if way == "halves":
                h = len(i) // 2
                other = helper.submit(grads, i[h:], k, adv[h:], len(i))
                mine = grads(i[:h], k, adv[:h], len(i))
                for p, a, b in zip(params, mine, other.result()):
                    p.grad = a + b
            else:
                optimizer.zero_grad()
                (compiled if way == "compiled" else loss_of)(i, k, adv, len(i)).backward()
            torch.nn.utils.clip_grad_norm_(params, s.max_grad_norm)
            optimizer.step()

    return one_pass


def timed(one_pass: Any, way: str) -> tuple[float, float]:
    """(wall ms, CPU ms) of one pass."""
    w0, c0 = time.perf_counter(), time.process_time()
    one_pass(way)
    return (time.perf_counter() - w0) * 1e3, (time.process_time() - c0) * 1e3


def compare(
    ways: list[str], suits: int = 1, hidden: int = 64, n: int = 256, steps: int = 32,
    minibatches: int = 4, rounds: int = 5,
) -> dict[str, list[tuple[float, float]]]:  # fmt: skip
    """Each way's (wall ms, CPU ms) per pass over ``rounds`` rounds, the ways in turn within a
    round, after one pass each (compiling, for ``compiled``), which is printed apart."""
    one_pass = make_update(suits, hidden, n, steps, minibatches)
    for way in ways:
        wall, cpu = timed(one_pass, way)
        print(f"{way}: first pass {wall:,.0f} ms wall, {cpu:,.0f} ms CPU")
    out: dict[str, list[tuple[float, float]]] = {way: [] for way in ways}
    for _ in range(rounds):
        for way in ways:
            out[way].append(timed(one_pass, way))
    batch = n * steps
    print(f"one pass over {minibatches} minibatches of {batch // minibatches:,} decisions "
          f"({suits} suit(s), hidden {hidden}), best and median of {rounds}:")  # fmt: skip
    for way, runs in out.items():
        wall, cpu = np.array(runs).T
        print(f"  {way:<9} wall {wall.min():6.1f} / {np.median(wall):6.1f} ms   "
              f"CPU {cpu.min():6.1f} / {np.median(cpu):6.1f} ms")  # fmt: skip
    return out


def profile(
    suits: int = 1, hidden: int = 64, n: int = 256, steps: int = 32, rows: int = 15
) -> None:
    """Print ``torch.profiler``'s table of the ``rows`` costliest operators (self CPU time) of
    five eager passes."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    one_pass = make_update(suits, hidden, n, steps, 4)
    one_pass("eager")
    with torch_profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(5):
            one_pass("eager")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows))


def build_parser() -> ArgumentParser:
    """The probe's flags."""
    p = ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--suits", type=int, default=1, choices=(1, 2, 4))
    p.add_argument("--hidden", type=int, default=64, help="width of the policy's layers")
    p.add_argument("--n", type=int, default=256, help="games of the rollout")
    p.add_argument("--steps", type=int, default=32, help="steps of the rollout")
    p.add_argument("--rounds", type=int, default=5, help="passes of each way, timed")
    p.add_argument("--ways", nargs="+", default=list(WAYS), choices=WAYS)
    p.add_argument(
        "--precision", default="float32", choices=("float32", "bfloat16"),
        help="the row embedding's number format (the trainer's --precision)",
    )  # fmt: skip
    p.add_argument(
        "--row-block", type=int, default=None,
        help="pad the rows to a multiple of this for bfloat16 (default: the network's ROW_BLOCK)",
    )  # fmt: skip
    p.add_argument(
        "--profile", action="store_true", help="print torch.profiler's table of the eager way"
    )
    p.add_argument(
        "--gap", nargs="?", const="", default=None, metavar="MODEL",
        help="print how far bfloat16's log-probabilities and values are from float32's on the "
        "rollout, for a batched PPO's model.zip (none given: a fresh network)",
    )  # fmt: skip
    return p


def main(argv: list[str] | None = None) -> dict[str, list[tuple[float, float]]]:
    p = build_parser()
    a = p.parse_args(argv)
    for flag in ("hidden", "n", "steps", "rounds"):
        if getattr(a, flag) < 1:
            p.error(f"--{flag} must be at least 1, got {getattr(a, flag)}")
    if a.n * a.steps < 8:
        p.error(f"--n times --steps must be at least 8 (4 minibatches of 2), got {a.n * a.steps}")
    if a.row_block is not None and a.row_block < 1:
        p.error(f"--row-block must be at least 1, got {a.row_block}")
    import torch
    from spider_env.agents.rl import action_set_net

    layers, block = action_set_net.ActionSetLayers, action_set_net.ROW_BLOCK
    layers.row_dtype = torch.bfloat16 if a.precision == "bfloat16" else None
    action_set_net.ROW_BLOCK = block if a.row_block is None else a.row_block
    if a.gap is not None:
        if a.gap and not Path(a.gap).is_file():
            p.error(f"--gap: no such model file: {a.gap}")
        try:
            gaps = precision_gap(a.gap or None, a.suits, a.n, a.steps)
        except ValueError as err:  # not an action-set model
            p.error(f"--gap: {err}")
        print(", ".join(f"{k} {v:.3g}" for k, v in gaps.items()))
        return {}
    try:
        if a.profile:
            profile(a.suits, a.hidden, a.n, a.steps)
            return {}
        return compare(list(dict.fromkeys(a.ways)), a.suits, a.hidden, a.n, a.steps, 4, a.rounds)
    finally:
        layers.row_dtype, action_set_net.ROW_BLOCK = None, block


if __name__ == "__main__":
    main()
