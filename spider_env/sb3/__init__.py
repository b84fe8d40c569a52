"""The Stable-Baselines3 adapter: :class:`~spider_env.sb3.vec_env.SpiderSB3VecEnv`, a SB3
``VecEnv`` over :class:`~spider_env.vector.SpiderVectorEnv` (needs the ``train`` extra).

A folder of its own, above the env: nothing in the env, the compiled core or the players
imports it, so they never import Stable-Baselines3.
"""

from spider_env.sb3.vec_env import SpiderSB3VecEnv

__all__ = ["SpiderSB3VecEnv"]
