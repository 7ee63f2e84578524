"""`--also` and `--calibrate-on` reach the config, and the config checks them."""

import pytest

from ragdash.cli import build_parser, overrides_from
from ragdash.config import ConfigError, load_config


def _cfg(*argv: str) -> dict:
    args = build_parser().parse_args(["run", *argv])
    return load_config(None, overrides_from(args))


def test_also_and_calibrate_on_reach_the_config():
    cfg = _cfg("--scoring", "substring", "--also", "semantic", "--calibrate-on", "semantic")
    assert cfg["scoring"]["method"] == "substring"
    assert cfg["scoring"]["also"] == ["semantic"]
    assert cfg["calibration"]["scores"] == "semantic"


def test_calibrating_on_a_method_not_scored_is_refused():
    with pytest.raises(ConfigError, match="calibration.scores"):
        _cfg("--calibrate-on", "semantic")


def test_unknown_also_method_is_refused():
    with pytest.raises(ConfigError, match="semantc|unknown|one of"):
        _cfg("--also", "semantc")


def test_help_lists_every_matching_method():
    from ragdash.scoring import METHODS

    text = build_parser()._subparsers._group_actions[0].choices["run"].format_help()
    assert all(m in text for m in METHODS)
