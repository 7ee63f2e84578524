"""Issue 31, items 6 and 8: a labels import is bounded (rows, labellers, the run's store) before
anything is written, `label status` refuses an over-large store instead of running out of
memory, and `label export` neutralises formulas in every text cell (qid and system too, and
after every ; and line break) while import gives back exactly the exported qid and system.
Every run written is a copy of the SQuAD demo in tmp_path."""

from __future__ import annotations

import csv
import io
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ragdash import labels
from ragdash.cli import main
from ragdash.constants import PROJECT_ROOT
from ragdash.labels import exchange, store
from ragdash.rundir import Run

DEMO = PROJECT_ROOT / "data" / "demo_squad"
TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\0", "\uff1d", "\uff0b", "\uff0d", "\uff20")
HYPERLINK = '=HYPERLINK("http://evil.example/q","qid")'


@pytest.fixture
def run(tmp_path) -> Run:
    if not (DEMO / "answers.parquet").exists():
        pytest.skip("the SQuAD demo run is absent")
    copy = Run(shutil.copytree(DEMO, tmp_path / "demo"))
    for name in ("labels", "label_sample"):  # start unlabelled
        copy.file(name).unlink(missing_ok=True)
    return copy


def _answers(run: Run) -> list[tuple[str, str]]:
    a = labels.labelable(run)
    return list(zip(a["qid"], a["system"], strict=True))


def _write_csv(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["qid", "system", "label", "labeller"])
        w.writerows(rows)
    return path


def _import(run: Run, path: Path, *extra: str) -> int:
    return main(["label", "import", "--run-dir", str(run.path), str(path), *extra])


# --- item 6: bounded imports and a bounded store ----------------------------------------------

def test_the_limits_are_the_documented_ones(capsys):
    assert exchange.MAX_IMPORT_BYTES == 50_000_000
    assert exchange.MAX_IMPORT_ROWS == 100_000 and exchange.MAX_IMPORT_LABELLERS == 10
    assert store.MAX_LABELS == 200_000 and store.MAX_LABELLERS == 50
    with pytest.raises(SystemExit):
        main(["label", "import", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for limit in ("50 MB", "100,000 rows", "10 rows per answer of the run", "10 labellers",
                  "200,000 labels from 50 labellers"):
        assert limit in text, limit


def test_an_import_with_more_rows_than_the_run_allows_writes_nothing(run, tmp_path, capsys):
    keys = _answers(run)  # 360 answers: at most 10 rows per answer, 3,600
    limit = 10 * len(keys)
    # the issue's file in small: distinct labellers, every row valid on its own
    rows = [(*keys[i % len(keys)], "correct", f"l{i // len(keys)}") for i in range(limit + 1)]
    path = _write_csv(tmp_path / "many.csv", rows)
    assert _import(run, path) == 2
    err = capsys.readouterr().err
    assert f"over {limit:,} rows, the limit for this run's labels files" in err
    assert "nothing imported" in err and "split it into smaller files" in err
    assert not run.has("labels")
    # one row fewer (ten labellers, each labelling every answer) is within the limits
    assert _import(run, _write_csv(path, rows[:limit])) == 0
    assert len(labels.read_labels(run)) == limit


def test_the_absolute_row_cap_holds_whatever_the_run_size(run, tmp_path, monkeypatch):
    monkeypatch.setattr(exchange, "MAX_IMPORT_ROWS", 25)
    keys = _answers(run)
    path = _write_csv(tmp_path / "l.csv", [(*k, "wrong", "ana") for k in keys[:26]])
    with pytest.raises(labels.LabelFileError, match="over 25 rows") as info:
        labels.import_csv(run, path)
    assert [(i.record, i.field) for i in info.value.issues] == [("file", "rows")]
    assert not run.has("labels")
    _write_csv(path, [(*k, "wrong", "ana") for k in keys[:25]])
    assert labels.import_csv(run, path).added == 25


def test_too_many_labellers_in_one_file_are_refused_before_any_row_is_saved(run, tmp_path,
                                                                           capsys):
    keys = _answers(run)
    path = _write_csv(tmp_path / "team.csv",
                      [(*keys[i], "correct", f"labeller {i}") for i in range(11)])
    assert _import(run, path) == 2
    err = capsys.readouterr().err
    assert "11 labellers, over the limit of 10 per import" in err
    assert "field 'labeller'" in err and not run.has("labels")
    # ten labellers, and --labeller naming the rows without one, are within it
    rows = [(*keys[i], "correct", f"labeller {i}" if i < 9 else "") for i in range(12)]
    assert _import(run, _write_csv(path, rows), "--labeller", "ana") == 0
    assert labels.read_labels(run)["labeller"].nunique() == 10


def test_the_run_keeps_at_most_max_labels_and_max_labellers(run, tmp_path, monkeypatch,
                                                            capsys):
    monkeypatch.setattr(store, "MAX_LABELS", 20)
    monkeypatch.setattr(store, "MAX_LABELLERS", 3)
    keys = _answers(run)
    first = _write_csv(tmp_path / "a.csv", [(*k, "correct", "ana") for k in keys[:15]])
    assert _import(run, first) == 0
    more = _write_csv(tmp_path / "b.csv", [(*k, "wrong", "bo") for k in keys[:10]])
    assert _import(run, more) == 2
    assert "10 labels more would make 25, over the limit of 20" in capsys.readouterr().err
    assert len(labels.read_labels(run)) == 15
    assert _import(run, _write_csv(more, [(*keys[0], "wrong", "bo")])) == 0
    labels.add_label(run, *keys[1], "wrong", "cy")
    with pytest.raises(ValueError, match="4 labellers, over the limit of 3"):
        labels.add_label(run, *keys[2], "wrong", "di")
    assert set(labels.read_labels(run)["labeller"]) == {"ana", "bo", "cy"}


def _store(run: Run, n: int, labellers: int) -> None:
    keys = _answers(run)
    rows = [store.label_row(*keys[i % len(keys)], "correct", f"l{i % labellers}", "", "x")
            for i in range(n)]
    run.write("labels", pd.DataFrame(rows, columns=list(store.COLUMNS)))


def test_status_of_a_store_over_the_label_limit_says_so_without_reading_it(
        run, monkeypatch, capsys):
    monkeypatch.setattr(store, "MAX_LABELS", 100)
    _store(run, 101, 1)
    read = Run.read

    def spy(self: Run, key: str) -> pd.DataFrame:
        assert key != "labels", "labels.parquet was read"
        return read(self, key)

    monkeypatch.setattr(Run, "read", spy)
    assert main(["label", "status", "--run-dir", str(run.path)]) == 2
    err = capsys.readouterr().err
    assert "holds 101 labels, over the limit of 100 a run keeps; nothing was read" in err
    assert "Move the file aside" in err
    with pytest.raises(store.LabelStoreTooLarge):
        labels.read_labels(run)


def test_status_of_a_store_naming_too_many_labellers_says_so(run, capsys):
    _store(run, 51, 51)  # the real limit: 50
    assert main(["label", "status", "--run-dir", str(run.path)]) == 2
    assert "its labels name 51 labellers, over the limit of 50" in capsys.readouterr().err


# --- item 8: formula injection in `label export` -----------------------------------------------

TRICKY = [HYPERLINK, ";=1+1", "'=not a formula", "''=x", "'plain", "plain", "", ";", "'",
          "a;b", "line 1\n- item", "\r=1", "a\r\n=1", "\uff1dSUM(A1)", "x;'+1", "-", "@sys",
          "\t=1", "\0x", "'''"]


@pytest.mark.parametrize("text", TRICKY)
def test_cell_neutralises_every_cell_start_and_uncell_undoes_exactly_that(text):
    out = exchange.cell(text)
    assert exchange.uncell(out) == text
    for part in re.split(r"(?<=[;\r\n])", out):
        assert not part.startswith(TRIGGERS), (text, out)
    if "'" not in text:  # text export left alone reads back unchanged
        assert exchange.uncell(text) == text


def test_cell_round_trips_random_text():
    rng = np.random.default_rng(0)
    alphabet = list("'=+-@;\t\r\n\0ab \uff1d\uff0b\uff0d\uff20")
    for _ in range(3000):
        text = "".join(rng.choice(alphabet, size=int(rng.integers(0, 9))))
        out = exchange.cell(text)
        assert exchange.uncell(out) == text, repr(text)
        assert not any(p.startswith(TRIGGERS) for p in re.split(r"(?<=[;\r\n])", out))


QIDS = [HYPERLINK, "'=not a formula", "'plain"]


def _hostile(run: Run) -> None:
    """Three questions renamed to QIDS (the first asks ';=1+1'); system mlq renamed '@sys'."""
    ex = run.read("examples").astype({"qid": str})
    old = ex["qid"].iloc[:3].tolist()
    rename = dict(zip(old, QIDS, strict=True))
    ex["qid"] = ex["qid"].replace(rename)
    ex.loc[ex["qid"] == HYPERLINK, "question"] = ";=1+1"
    run.write("examples", ex)
    a = run.read("answers").astype({"qid": str})
    run.write("answers", a.assign(qid=a["qid"].replace(rename),
                                  system=a["system"].replace({"mlq": "@sys"})))


def _export(run: Run, out: Path) -> str:
    n = len(labels.labelable(run))
    assert main(["label", "export", "--run-dir", str(run.path), "--n", str(n), "-o",
                 str(out)]) == 0
    return out.read_text(encoding="utf-8-sig")


def test_export_neutralises_qid_system_and_text_for_comma_and_semicolon_readers(run,
                                                                               tmp_path):
    _hostile(run)
    text = _export(run, tmp_path / "s.csv")
    for delimiter in (",", ";"):  # ; : a spreadsheet splitting the file on ;
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
            for value in row:
                assert not value.startswith(TRIGGERS), (delimiter, value)
    table = list(csv.reader(io.StringIO(text, newline="")))
    quoted = io.StringIO(newline="")
    csv.writer(quoted, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(table)
    assert quoted.getvalue() == text  # every cell quoted, the header's too
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert "'" + HYPERLINK in [r["qid"] for r in rows]
    assert "'@sys" in {r["system"] for r in rows}
    assert {r["question"] for r in rows if r["qid"] == "'" + HYPERLINK} == {";'=1+1"}
    assert '";\'=1+1"' in text


def test_export_import_round_trip_gives_back_the_exact_qid_and_system(run, tmp_path, capsys):
    _hostile(run)
    out = tmp_path / "s.csv"
    _export(run, out)
    sheet = pd.read_csv(out, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    keep = sheet["qid"].str.contains("HYPERLINK|formula|plain", regex=True)
    assert set(sheet.loc[keep, "qid"]) == {"'" + HYPERLINK, "''=not a formula", "'plain"}
    assert set(sheet.loc[keep, "system"]) >= {"'@sys", "bm25"} and keep.sum() == 3 * 6
    sheet = sheet[keep].assign(label="correct")
    sheet.to_csv(out, index=False)  # as a spreadsheet saves it (quotes only where needed)
    assert _import(run, out, "--labeller", "ana") == 0
    assert "Imported 18 new labels" in capsys.readouterr().out
    got = labels.read_labels(run)
    assert set(got["qid"]) == set(QIDS)
    assert "@sys" in set(got["system"]) and not any(s.startswith("'") for s in got["system"])
    assert labels.current_labels(run)[1] == 0  # none stale: every label names its answer
