"""What a player sees, as NumPy arrays, and the Gymnasium spaces that hold them.

The observation contract (what each array means) is the "Observation Space" section of
:class:`spider_env.env.SpiderEnv`. One module per part:

* :mod:`~spider_env.observation.spaces`: the tableau codes, the feature layout's sizes and every
  ``obs_mode``'s space (the one home of those numbers);
* :mod:`~spider_env.observation.assemble`: :class:`ObservationBuffers` (the arrays encoders write)
  and :func:`assemble_observation`, the one place an observation is made of them;
* :mod:`~spider_env.observation.encoders`: :class:`TableEncoder` (``obs_mode="dict"``) and
  :class:`FeatureEncoder` (``"features"`` / ``"flat"``), the pure encoders: the specification
  the compiled core's observations are held to;
* :mod:`~spider_env.observation.actions`: the per-action features (``obs_mode="actions"``),
  :class:`~spider_env.observation.actions.ActionFeatureEncoder`, the specification of the
  compiled core's mirror;
* :mod:`~spider_env.observation.view`: :class:`TableView`, a ``dict`` observation read back
  into what a player knows (the players' and the per-action features' input).
"""

from spider_env.observation.assemble import ObservationBuffers, assemble_observation
from spider_env.observation.encoders import ColumnOverflowError, FeatureEncoder, TableEncoder
from spider_env.observation.spaces import (
    ACTION_FEATURES,
    CARD_OFFSET,
    DEFAULT_ACTION_ROWS,
    DEFAULT_FEATURE_SLOTS,
    FACE_DOWN,
    GLOBAL_FEATURES,
    MAX_FEATURE_SLOTS,
    NO_CARD,
    OBS_MODES,
    action_feature_space,
    card_slot_width,
    check_action_rows,
    feature_width,
    flat_width,
    globals_width,
    observation_space,
    slots_for_feature_width,
    slots_for_flat_width,
)
from spider_env.observation.view import TableView

__all__ = [
    "ACTION_FEATURES",
    "CARD_OFFSET",
    "DEFAULT_ACTION_ROWS",
    "DEFAULT_FEATURE_SLOTS",
    "FACE_DOWN",
    "GLOBAL_FEATURES",
    "MAX_FEATURE_SLOTS",
    "NO_CARD",
    "OBS_MODES",
    "ColumnOverflowError",
    "FeatureEncoder",
    "ObservationBuffers",
    "TableEncoder",
    "TableView",
    "action_feature_space",
    "assemble_observation",
    "card_slot_width",
    "check_action_rows",
    "feature_width",
    "flat_width",
    "globals_width",
    "observation_space",
    "slots_for_feature_width",
    "slots_for_flat_width",
]
