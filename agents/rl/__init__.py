"""Training: the learning side of the players (torch, Stable-Baselines3, sb3-contrib; the
``train`` extra). Nothing in the env, the compiled core or the players imports it, except the
model player when it loads a model (:func:`spider_env.agents.model.load_sb3_agent` ->
:mod:`.models`). Importing this package imports none of torch or SB3; its modules do.

Three ways to train, each one module and one example script (docs/guide/training.md says which
to pick):

* :mod:`.ppo`: the batched masked PPO over ``SpiderVectorEnv`` (``examples/batched_ppo.py``),
  optionally from a model :mod:`.cloning` cloned from a teacher's games
  (``examples/clone_teacher.py``);
* :mod:`.sb3_train`: sb3-contrib's MaskablePPO (or plain PPO) over the ``flat`` observation
  (``examples/train_maskable_ppo.py``);
* :mod:`.rllib`, :mod:`.rllib_modules`, :mod:`.rllib_runner` and :mod:`.rllib_learner`:
  RLlib's PPO on a Ray cluster (the ``rllib`` extra, ``examples/rllib_ppo.py``).

What they share: :mod:`.settings` (settings dataclasses on the command line, one flag per
field), :mod:`.envs` (the deal sets and the one training env factory), :mod:`.action_set_net`
and :mod:`.policy` (the action-set network, its SB3 policy and behaviour cloning),
:mod:`.imitation` (demonstrations and the cloning data set), :mod:`.models` (making, loading
and saving models with their sidecar, the player's scores), :mod:`.measure` (win rates,
baselines, the batched evaluation of a saved model), :mod:`.plots` (learning curves),
:mod:`.threads` and :mod:`.memory` (the trainers' torch threads and malloc).
Experiments that are none of the three live in ``research/rl/``.
"""
