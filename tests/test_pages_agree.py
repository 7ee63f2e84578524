"""Pages that never contradict themselves, on fixture runs that provoke the hard cases: an exact
tie between the retrievers (no "best", no "significant", no largest difference to open, on the
Overview, Compare retrievers and the report) and a fully labelled sample (the share correct is
the share itself, said the same on the Overview, the CLI and the report)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from fixtures.apptest import open_app
from fixtures.make_run import make_run

from ragdash import labels
from ragdash.cli import main
from ragdash.constants import PROJECT_ROOT
from ragdash.report import build_report


def _texts(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "success", "title",
                                  "header", "subheader") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


@pytest.fixture(scope="module")
def tie_run(tmp_path_factory):
    """Two retrievers with the very same Score_IR on every question and budget."""
    run = make_run(tmp_path_factory.mktemp("tie") / "tie", n_questions=30, seed=4,
                   retrievers=("bm25", "sim"))
    ir = pd.read_parquet(run / "ir_scores.parquet")
    twin = ir[ir["retriever"] == "bm25"].assign(retriever="sim")
    pd.concat([ir[ir["retriever"] == "bm25"], twin]).to_parquet(run / "ir_scores.parquet")
    return run


def shown(monkeypatch, run) -> None:
    """The dashboard opens on `run` (its demo) and may read its folder."""
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(run))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(run.parent))


def test_a_tie_is_a_tie_on_every_page(tie_run, monkeypatch):
    shown(monkeypatch, tie_run)
    at = open_app(run=str(tie_run))
    assert at.title[0].value == "Run tie"
    titles = [m.label for m in at.metric]
    assert "Largest area over all budgets" in titles
    assert not [t for t in titles if t.startswith("Best retriever")]
    card = next(m for m in at.metric if m.label == "Largest area over all budgets")
    assert "≈" in card.value and "tie" in card.delta
    cmp = open_app("compare", run=str(tie_run))
    said = _texts(cmp)
    assert "significantly" not in said
    assert "Every question ties" in said and "no test: all 30 questions tie" in said
    assert not [p for p in cmp.get("page_link") if "largest difference" in str(p.proto.label)]
    html = build_report(tie_run)
    assert "Best retriever" not in html and "best retriever" not in html
    assert "largest area over all budgets" in html


def test_a_fully_labelled_sample_gives_the_share_itself_everywhere(tmp_path, capsys,
                                                                  monkeypatch):
    src = PROJECT_ROOT / "data" / "demo_squad"
    if not (src / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    run = shutil.copytree(src, tmp_path / "demo")
    for name in ("labels.parquet", "label_sample.parquet"):
        (run / name).unlink()
    assert main(["label", "import", "--run-dir", str(run), "--from-reference", "contains",
                 "--n", "360"]) == 0
    capsys.readouterr()
    assert main(["label", "status", "--run-dir", str(run), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["pooled"]
    from ragdash.rundir import Run

    share = labels.current(Run(run))["share"]["pooled"]
    assert got["ci"] == [got["estimate"], got["estimate"]] == share["ci"]
    pct = f"{got['estimate'] * 100:.0f} %"
    shown(monkeypatch, run)
    at = open_app(run=str(run))
    said = _texts(at)
    assert f"**About {pct} of these 360 answers are correct**" in said
    assert "360 labels" in said  # this copy's labels, not the bundled demo's 150
    assert "The pooled interval is within ±5 points." in said
    assert "more) bring" not in said and "too few" not in said
    assert f"{pct} correct" in build_report(run)


def test_every_label_wrong_gives_a_real_interval_and_says_the_judge_is_lenient(tmp_path,
                                                                              monkeypatch):
    from ragdash.labels.store import label_row, labelable, save_labels
    from ragdash.rundir import Run

    src = PROJECT_ROOT / "data" / "demo_squad"
    if not (src / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    run = Run(shutil.copytree(src, tmp_path / "demo"))
    run.file("labels").unlink()  # the stand-in labels: the sample stays, labelled again below
    shas = labelable(run).set_index(["qid", "system"])["answer_sha"]
    save_labels(run, [label_row(q, s, "wrong", "ana", "", shas[(q, s)])
                      for q, s in zip(labels.read_sample(run)["qid"],
                                      labels.read_sample(run)["system"], strict=True)])
    labels.refresh(run)
    share = labels.current(run)["share"]
    lo, hi = share["pooled"]["ci"]
    assert share["pooled"]["estimate"] == 0 and lo == 0 and hi > 0.01  # never zero-width
    assert all(e["ci"][0] == 0 and e["ci"][1] > 0.05 for e in share["systems"].values())
    shown(monkeypatch, run.path)
    said = _texts(open_app(run=str(run.path)))
    assert "**About 0 % of these 360 answers are correct**" in said
    assert "outside the interval: the judge is too lenient here" in said
