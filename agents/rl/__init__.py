"""Training: the learning side of the players (torch, Stable-Baselines3, sb3-contrib; the
``train`` extra). Nothing in the env, the compiled core or the players imports it, except the
model player when it loads a model."""
