"""What users run: evaluation on seeded deals, episode files, terminal play, the CLI.

The only layer that imports :mod:`spider_env.agents` (``tests/test_layers.py`` checks it).
"""
