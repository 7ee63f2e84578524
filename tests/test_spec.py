"""The typed run specification: one loader from a file and dotted overrides, frozen sections
that own their defaults and checks, errors naming the dotted key, and the generated reference."""

from __future__ import annotations

import pydantic
import pytest

from ragdash.cli import build_parser, overrides_from
from ragdash.config import (
    DEFAULTS,
    ConfigError,
    RunSpec,
    expand,
    load_config,
    load_spec,
    parse_set,
)
from ragdash.config_doc import render
from ragdash.constants import PROJECT_ROOT


def test_dotted_nested_and_text_overrides_give_the_same_spec():
    nested = load_spec(None, {"retrievers": {"use": ["bm25"], "params": {"bm25": {"k": 7}}},
                              "dataset": {"limit": 3}})
    dotted = load_spec(None, {"retrievers.use": ["bm25"], "retrievers.params.bm25.k": 7,
                              "dataset.limit": 3})
    texts = load_spec(None, ["retrievers.use=[bm25]", "retrievers.params.bm25.k=7",
                             "dataset.limit=3"])
    assert nested == dotted == texts
    assert dotted.retrievers.resolved["bm25"]["k"] == 7 and dotted.dataset.limit == 3


def test_overrides_apply_over_the_file_and_later_ones_win(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("name: mine\nretrievers: {use: [bm25, sim], preset: equal-k}\n")
    spec = load_spec(f, {"retrievers.use": "sim", "name": "a", **dict([parse_set("name=b")])})
    assert spec.name == "b" and spec.retrievers.use == ["sim"]
    assert spec.retrievers.preset == "equal-k" and spec.file == str(f)
    assert spec.to_config()["_file"] == str(f)


def test_the_spec_is_frozen_typed_and_round_trips():
    spec = load_spec(None, {"generation.budget": "500", "scoring.relevance_share": 1})
    assert spec.generation.budget == 500 and spec.scoring.relevance_share == 1.0
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        spec.name = "other"
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        spec.generation.budget = 3
    assert RunSpec.from_config(spec.to_config()) == spec
    assert load_config(None, {"generation.budget": 500}) == spec.to_config()
    assert "_file" not in spec.to_config()


def test_defaults_come_from_the_sections():
    assert DEFAULTS["retrievers"]["use"] == ["bm25", "sim", "mmr", "reo", "mlq"]
    assert DEFAULTS["scoring"]["mode"] == RunSpec().scoring.mode == "corrected"
    assert DEFAULTS["tokenizer"] == RunSpec().tokenizer
    assert DEFAULTS["scoring"]["method"] == RunSpec().scoring.method == "substring"
    assert set(DEFAULTS) == {f.alias or n for n, f in RunSpec.model_fields.items()} - {"_file"}


@pytest.mark.parametrize("overrides, message", [
    ({"generation.enabled": "maybe"}, r"^generation.enabled must be true or false, not"),
    ({"judge.seed": "x"}, r"^judge.seed must be a whole number, not 'x'"),
    ({"name": 5}, r"^name must be text, not 5"),
    ({"retrievers.params.bm25.k": 0}, r"bm25.k must be a whole number between 1 and 10000"),
    ({"chunker.params.percentile": 120}, r"semantic.percentile must be a number between 0 "
                                         r"and 100, not 120"),
    ({"chunker.method": "recursive", "chunker.params.chunk_overlap": -1},
     "recursive.chunk_overlap must be a whole number between 0 and 67108864"),
    ({"scoring.methd": "token"}, "did you mean 'scoring.method'"),
    ({"generation.sweep": {"retriever": "sim"}, "retrievers.use": "bm25"},
     "generation.sweep.retriever must be one of retrievers.use"),
    ({"llm.api_key": "sk-x"}, "API keys must come from the environment"),
])
def test_errors_name_the_dotted_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_spec(None, overrides)


@pytest.mark.parametrize("text, message", [
    ("retrievers.params.bm25.k", "expected KEY=VALUE"), ("a..b=1", "expected KEY=VALUE"),
    ("budgets=[1,", "cannot read the value"),
])
def test_bad_set_texts_are_refused(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_set(text)


def test_expand_nests_dotted_keys_in_order():
    assert expand({"a.b": 1, "a": {"c": 2}, "a.b.x": None}) == {"a": {"b": {"x": None}, "c": 2}}
    assert expand(None) == {}


def test_cli_options_become_dotted_overrides():
    args = build_parser().parse_args(
        ["judge", "--dataset", "d.jsonl", "--limit", "4", "--retrievers", "bm25",
         "--judge-model", "m", "--workers", "2", "--set", "retrievers.params.bm25.k=9",
         "--set", "scoring.also=[token]"])
    o = overrides_from(args)
    assert o == {"dataset.path": "d.jsonl", "dataset.limit": 4, "dataset.format": "auto",
                 "retrievers.use": "bm25", "judge.llm.model": "m", "executor.workers": 2,
                 "executor.kind": "ray", "generation.enabled": True, "judge.enabled": True,
                 "retrievers.params.bm25.k": 9, "scoring.also": ["token"]}


def test_the_configuration_reference_is_up_to_date():
    """docs/config.md is generated: `python -m ragdash.config_doc > docs/config.md`."""
    text = (PROJECT_ROOT / "docs" / "config.md").read_text()
    assert text == render(), "docs/config.md is stale: python -m ragdash.config_doc > " \
                             "docs/config.md"
    for key in ("`retrievers.params.bm25.k1`", "`chunker.params.percentile`",
                "`generation.budget`", "`dataset.limit`", "`scoring.relevance_share`"):
        assert key in text


def test_the_options_help_is_the_keys_documentation():
    """Issue 34 §1: an option's help is its key's documentation (docs/config.md's), so they
    cannot drift (`--format`'s help once left out xlsx); every option names its key."""
    from ragdash.budget import TOKENIZERS
    from ragdash.cli.options import CONTEXT, OPTIONS
    from ragdash.cli.parser import build_parser
    from ragdash.config import describe
    from ragdash.data import FORMATS

    run = build_parser()._subparsers._group_actions[0].choices["run"]
    helps = {a.dest: " ".join((a.help or "").split()) for a in run._actions}
    choices = {a.dest: a.choices for a in run._actions}
    for opt, key in OPTIONS.items():
        assert helps[opt].endswith(f"[{key}]"), opt
        text = describe(key)
        assert text is not None, opt  # every option's key is declared and documented
        assert helps[opt].startswith(CONTEXT.get(opt, text)) and text in helps[opt], opt
    assert choices["llm_backend"] == choices["judge_backend"] == ["local", "ollama", "openai"]
    assert choices["executor"] == ["local", "ray"]
    assert all(f in helps["format"] for f in FORMATS)
    assert all(t in helps["tokenizer"] for t in TOKENIZERS)
    config_md = (PROJECT_ROOT / "docs" / "config.md").read_text()
    assert "auto, hotpotqa, squad, crag, jsonl, csv, parquet or xlsx." in config_md
