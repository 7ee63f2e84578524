"""`ragdash sweep`: values read like YAML, readable run names, unknown keys refused with the
config's own error, one run per combination on a tiny dataset, a second sweep that does no work,
reused stage files, and the leaderboard printed at the end."""

from __future__ import annotations

import pytest

from ragdash.cli import main
from ragdash.config import ConfigError
from ragdash.run_spec import run_spec
from ragdash.rundir import Run
from ragdash.sweep import Vary, parse_vary, plan, run_name, same_runs, short_key


def test_values_are_read_like_yaml_scalars():
    assert parse_vary("retrievers.params.bm25.k=5,10") == Vary("retrievers.params.bm25.k",
                                                               (5, 10))
    assert parse_vary("chunker.method=semantic, recursive").values == ("semantic", "recursive")
    assert parse_vary("scoring.relevance_share=0.5,1").values == (0.5, 1)
    assert parse_vary("dataset.limit=null,20").values == (None, 20)
    assert parse_vary("budgets=[100,500],100:1000:100").values == ([100, 500], "100:1000:100")
    assert parse_vary('description="a, b",c').values == ("a, b", "c")


@pytest.mark.parametrize("text, message", [
    ("chunker.method", "expected KEY=VALUE1"), ("=a,b", "expected KEY=VALUE1"),
    ("chunker.method=", "expected KEY=VALUE1"), ("chunker..method=a", "not a dotted"),
    ("retrievers.params.bm25.k=5,5", "repeated"), ("budgets=[100,", "cannot read"),
])
def test_bad_vary_options_are_refused(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_vary(text)


def test_run_names_are_readable_and_filesystem_safe():
    assert short_key("chunker.method") == "chunker"
    assert short_key("retrievers.params.bm25.k") == "bm25.k"
    assert short_key("chunker.params.percentile") == "chunker.percentile"
    name = run_name({"chunker.method": "semantic", "retrievers.params.bm25.k": 5})
    assert name == "chunker-semantic_bm25.k-5"
    odd = run_name({"dataset.path": "../data/a b/q?.jsonl", "budgets": [100, 500],
                    "dataset.limit": None})
    assert "/" not in odd and " " not in odd and "?" not in odd and not odd.startswith(".")
    assert odd == "dataset.path-data-a-b-q-.jsonl_budgets-100-500_dataset.limit-none"


def test_an_unknown_key_is_refused_with_the_configs_suggestion(generic, tmp_path):
    ds, corpus = generic
    base = {"dataset": {"path": str(ds), "corpus": str(corpus), "format": "auto"}}
    with pytest.raises(ConfigError, match="did you mean 'chunker.method'"):
        plan(None, base, [parse_vary("chunker.metod=none,tokens")], tmp_path)
    with pytest.raises(ConfigError, match=r"bm25: unknown parameter\(s\) \['kk'\]"):
        plan(None, base, [parse_vary("retrievers.params.bm25.kk=1,2")], tmp_path)
    with pytest.raises(ConfigError, match="chunker.method: unknown method"):
        plan(None, base, [parse_vary("chunker.method=none,bogus")], tmp_path)
    with pytest.raises(ConfigError, match="set by another option"):  # varied and set at once
        plan(None, {**base, "chunker": {"method": "none"}},
             [parse_vary("chunker.method=none,tokens")], tmp_path)
    with pytest.raises(ConfigError, match="at least one --vary"):
        plan(None, base, [], tmp_path)


def test_a_value_that_changes_nothing_is_reported(generic, tmp_path):
    ds, corpus = generic
    base = {"dataset": {"path": str(ds), "corpus": str(corpus), "format": "auto"},
            "retrievers": {"use": "bm25"}}
    planned = plan(None, base, [parse_vary("retrievers.params.sim.k=3,4")], tmp_path)
    assert [p.run_dir.parent for p in planned] == [tmp_path, tmp_path]
    assert same_runs(planned) == [[p.name for p in planned]]  # sim is not used


SWEEP = ["sweep", "--budgets", "10:60:10", "--retrievers", "bm25",
         "--vary", "chunker.method=none,tokens", "--vary", "retrievers.params.bm25.k=1,3", "-q"]


def test_sweep_makes_every_combination_then_skips_them_all(generic, tmp_path, capsys):
    ds, corpus = generic
    root = tmp_path / "sweep1"
    args = [*SWEEP, "--dataset", str(ds), "--corpus", str(corpus), "--runs-root", str(root)]
    assert main(args) == 0
    out = capsys.readouterr().out
    names = ["chunker-none_bm25.k-1", "chunker-none_bm25.k-3", "chunker-tokens_bm25.k-1",
             "chunker-tokens_bm25.k-3"]
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith("_")) == sorted(names)
    assert "4 made, 0 up to date" in out
    assert (root / "_index_cache").is_dir()  # indexes shared under the sweep's root
    for name in names:
        run = Run(root / name)
        spec = run_spec(run)
        assert spec.chunker.method == name.split("_")[0].split("-")[1]
        assert spec.retrievers.resolved["bm25"]["k"] == int(name[-1])
        assert spec.budgets == list(range(10, 61, 10))  # the run options apply to all
        assert run.manifest["sweep"]["values"]["retrievers.params.bm25.k"] == int(name[-1])
        assert run.manifest["stages"]["score"]["status"] == "done"
    # the second combination took the first one's chunks (same chunker, same inputs)
    second = Run(root / names[1])
    assert second.stage("chunk")["reused_from"] == str(root / names[0])
    assert second.read("chunks").equals(Run(root / names[0]).read("chunks"))
    assert "chunk: same inputs as chunker-none_bm25.k-1, its files reused" in out
    # k = 3 retrieves more chunks than k = 1
    for chunker in ("none", "tokens"):
        r1 = Run(root / f"chunker-{chunker}_bm25.k-1").read("retrieved")
        r3 = Run(root / f"chunker-{chunker}_bm25.k-3").read("retrieved")
        assert r1.groupby("qid").size().max() == 1 and r3.groupby("qid").size().max() == 3
    # the leaderboard, best first
    assert "Leaderboard at N = 60" in out and "4 shared questions" in out
    assert "leads at N = 60" in out or "tie at N = 60" in out
    ranked = [line.split()[1] for line in out.splitlines() if line[:1].isdigit()]
    assert sorted(ranked) == sorted(names) and len(ranked) == 4

    # again: nothing to do, nothing touched, the same leaderboard
    before = {n: (root / n / "run.json").stat().st_mtime_ns for n in names}
    assert main(args) == 0
    again = capsys.readouterr().out
    assert again.count("up to date, skipped") == 4 and "0 made, 4 up to date" in again
    assert {n: (root / n / "run.json").stat().st_mtime_ns for n in names} == before
    assert again.split("Leaderboard")[1] == out.split("Leaderboard")[1]


def test_sweep_options_are_checked(generic, tmp_path, capsys):
    ds, corpus = generic
    root = tmp_path / "root"
    common = ["--dataset", str(ds), "--corpus", str(corpus), "--runs-root", str(root)]
    assert main(["sweep", *common, "--vary", "chunker.metod=none"]) == 2
    assert "did you mean 'chunker.method'" in capsys.readouterr().err
    assert main(["sweep", *common, "--run-dir", str(tmp_path / "x"),
                 "--vary", "chunker.method=none"]) == 2
    assert "--run-dir does not apply" in capsys.readouterr().err
    assert main(["sweep", *common, "--chunker", "none", "--vary", "chunker.method=tokens"]) == 2
    assert "set by another option" in capsys.readouterr().err
    assert not root.exists()  # nothing ran
    with pytest.raises(SystemExit):
        main(["sweep", *common])  # --vary is required
