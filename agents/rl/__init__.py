"""Training: the learning side of the players (torch, Stable-Baselines3, sb3-contrib; the
``train`` extra). Nothing in the env, the compiled core or the players imports it, except the
model player when it loads a model (:func:`spider_env.agents.model.load_sb3_agent` ->
:mod:`.models`). Importing this package imports none of torch or SB3; its modules do.

* :mod:`.settings`: settings dataclasses on the command line (one flag per field);
* :mod:`.envs`: the deal sets (test, validation, training) and the one training env factory;
* :mod:`.models`: loading a model with the right class, its scores for the player, saving it
  with its sidecar (the format: :mod:`spider_env.agents.model_format`);
* :mod:`.measure`: win rates and baselines through the evaluation the caller hands in, and
  SB3's batched evaluation of a saved model;
* :mod:`.sb3_train`: MaskablePPO / PPO over the ``flat`` observation (:class:`PPOSettings`);
* :mod:`.curricula`: suit curricula and their trainer (:class:`CurriculumSettings`);
* :mod:`.policy`: the RL recipe's ActionSetPolicy and behaviour cloning;
* :mod:`.imitation`: demonstrations and the cloning data set;
* :mod:`.recipe`: the RL recipe's stages (demonstrations, cloning, fine-tuning, all of them);
* :mod:`.plots`: learning curves.
"""
