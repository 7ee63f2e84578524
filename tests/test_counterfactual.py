"""RGB's counterfactual robustness test (Chen et al., AAAI 2024): the en_fact reader, RGB's
context and scoring rules, the rates, and `ragdash counterfactual` end to end against the
scripted OpenAI-compatible server (cache, failed calls, dry run)."""

from __future__ import annotations

import gzip
import json
import random
import re

import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, Reply

from ragdash.cli import main
from ragdash.constants import PROJECT_ROOT
from ragdash.data.rgb import LICENCE, as_answer, load_fact
from ragdash.stress.counterfactual import PASSAGES, context, verdict
from ragdash.stress.counterfactual_summary import Rate, summarise

REAL = PROJECT_ROOT.parent / "shared" / "data" / "rgb" / "en_fact.json.gz"
KEY = "sk-test-never-written-0123456789"
DATE = [["July 21 2017", "Jul 21, 2017", "21 July 2017"]]


def record(qid, query, answer, wrong=None, **extra):
    passages = wrong if wrong is not None else [f"{query} is {extra.get('fake', 'Mars')}. {i}"
                                                for i in range(7)]
    return {"id": qid, "query": query, "answer": answer, "fakeanswer": extra.get("fake", "Mars"),
            "positive": [p.replace("Mars", "Earth") for p in passages],
            "positive_wrong": passages, "negative": ["noise"]}


RECORDS = [record(0, "Where do we live", "Earth"),
           record(1, "When was the film released", DATE, fake="June 2 2016"),
           record(2, "Who wrote both books", ["Ann", "Bob"])]


def write_gz(path, records, extra_lines=()):
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
        for line in extra_lines:
            f.write(line + "\n")
    return path


# --- the reader ---------------------------------------------------------------------------------


def test_reader_reads_answers_as_groups_and_locates_bad_records(tmp_path):
    bad = [json.dumps(record(3, "No wrong passages", "x", wrong=[])), "{not json",
           json.dumps(record(0, "A duplicate id", "y")), json.dumps(record(4, "", "z"))]
    records, issues = load_fact(write_gz(tmp_path / "f.json.gz", RECORDS, bad))
    assert [r.qid for r in records] == ["0", "1", "2"]
    assert records[0].answer == (("Earth",),)
    assert records[1].answer == (tuple(DATE[0]),)  # one group of alternative spellings
    assert records[2].answer == (("Ann",), ("Bob",))  # both must occur
    assert records[1].fake_answer == "June 2 2016" and len(records[0].positive_wrong) == 7
    assert [(i.record, i.field, i.severity) for i in issues] == [
        ("line 4", "positive_wrong", "error"), ("line 5", "(record)", "error"),
        ("line 6", "id", "error"), ("line 7", "query", "error")]
    assert load_fact(tmp_path / "f.json.gz", limit=2)[0][-1].qid == "1"
    with pytest.raises(Exception, match="empty answer"):
        as_answer([[]])


@pytest.mark.skipif(not REAL.exists(), reason="RGB's en_fact is not in ../shared/data/rgb")
def test_the_real_file_has_100_records_each_with_counterfactual_passages():
    records, issues = load_fact(REAL)
    assert len(records) == 100 and issues == []
    assert all(r.positive_wrong and len(r.positive_wrong) == len(r.positive) for r in records)
    # RGB draws indices over `positive` and takes `positive_wrong`: equal lengths, same draw
    assert sum(len(r.answer) > 1 or len(r.answer[0]) > 1 for r in records) > 0


# --- RGB's rules --------------------------------------------------------------------------------


def test_context_is_rgbs_seeded_sample_then_shuffle():
    rec = load_one(RECORDS[0])
    random.seed(2333)  # what RGB's evalue.py does, on the global generator
    picked = random.sample(range(len(rec.positive)), min(len(rec.positive), PASSAGES))
    docs = [rec.positive_wrong[i] for i in picked]
    random.shuffle(docs)
    assert context(rec) == docs and len(docs) == PASSAGES
    assert context(rec) == context(rec)  # the same every time
    short = load_one(record(9, "q", "a", wrong=["only one"]))
    assert context(short) == ["only one"]


def load_one(raw):
    from ragdash.data.rgb import parse_record

    return parse_record(json.loads(json.dumps(raw)))


@pytest.mark.parametrize("reply, answer, detected, found, corrected", [
    ("There are factual errors in the provided documents. The answer is Earth.", "Earth",
     True, True, True),
    ("There are factual errors in the provided documents. It is Mars.", "Earth",
     True, False, False),
    ("We live on EARTH.", "Earth", False, True, False),  # the answer matches in any case
    ("We live on Mars.", "Earth", False, False, False),
    ("Factual errors: the answer is Earth.", "Earth", False, True, False),  # RGB: case-sensitive
    ("There are factual errors. Released on 21 July 2017.", DATE, True, True, True),
    ("There are factual errors. Ann wrote it.", ["Ann", "Bob"], True, False, False),
    ("There are factual errors. Ann and Bob.", ["Ann", "Bob"], True, True, True),
    ("The earthquake", "Earth", False, True, False),  # plain substrings, as RGB matches
])
def test_rgbs_rules_on_hand_made_replies(reply, answer, detected, found, corrected):
    v = verdict(reply, as_answer(answer))
    assert (v.detected, v.answer_found, v.corrected) == (detected, found, corrected)


def test_a_detected_refusal_counts_as_corrected_as_in_rgb():
    v = verdict("There are factual errors in the provided documents. I can not answer the "
                "question because of the insufficient information in documents.",
                as_answer("Earth"))
    assert v.refused and v.detected and not v.answer_found and v.corrected


def test_rates_are_over_replies_and_correction_over_the_detected():
    table = pd.DataFrame({
        "model": "m", "reply": ["a", "b", "c", "d", None],
        "detected": [True, True, False, False, None], "corrected": [True, False, False, False,
                                                                   None],
        "refused": [False, False, False, False, None],
        "error": [None, None, None, None, "boom"]})
    for col in ("detected", "corrected", "refused"):
        table[col] = table[col].astype("boolean")
    s = summarise(table)
    assert (s.n, s.failed) == (4, 1)
    assert (s.detection.k, s.detection.n, s.detection.rate) == (2, 4, 0.5)
    assert (s.correction.k, s.correction.n, s.correction.rate) == (1, 2, 0.5)
    lo, hi = s.detection.ci
    assert 0 <= lo < 0.5 < hi <= 1
    assert Rate.of(0, 0).rate == 0 and Rate.of(0, 0).ci is None  # RGB's 0 when none detected
    assert any(LICENCE in line for line in s.lines())


# --- the command ----------------------------------------------------------------------------


def replies(body: dict) -> Reply:
    """Detects and corrects 'Where do we live', detects only the film, misses the books."""
    text = body["messages"][-1]["content"]
    if "Where do we live" in text:
        return Reply("There are factual errors in the provided documents. We live on Earth.")
    if "film" in text:
        return Reply("There are factual errors in the provided documents.")
    return Reply("Cleo wrote both books.")


@pytest.fixture
def fact_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)  # the runs root, and so the reply cache, under tmp_path
    return write_gz(tmp_path / "en_fact.json.gz", RECORDS)


def cli(url, fact_file, out, *extra):
    return main(["counterfactual", "--file", str(fact_file), "--out", str(out),
                 "--llm-backend", "openai", "--llm-model", "fake-model", "--llm-url", url, "-q",
                 *extra])


def test_command_end_to_end_then_a_rerun_asks_nothing(fact_file, tmp_path, capsys):
    with FakeLLMServer(default=replies) as srv:
        assert cli(srv.openai_url, fact_file, tmp_path / "out") == 0
        sent = srv.chat_requests()
        assert len(sent) == 3
        first = sent[0]["body"]["messages"]
        assert first[0]["role"] == "system" and "factual errors" in first[0]["content"]
        assert first[1]["content"].startswith("Document:\n") and "Question:\n" in \
            first[1]["content"]
        out = capsys.readouterr().out
        assert "error detection rate:  0.667" in out and "(2 of 3)" in out
        assert "error correction rate: 0.500" in out and LICENCE in out
        table = pd.read_parquet(tmp_path / "out" / "counterfactual.parquet")
        assert table["detected"].tolist() == [True, True, False]
        assert table["corrected"].tolist() == [True, False, False]
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert summary["n"] == 3 and summary["detection"]["k"] == 2
        assert summary["licence"] == LICENCE and summary["llm"]["model"] == "fake-model"
        assert KEY not in (tmp_path / "out" / "summary.json").read_text()
        assert cli(srv.openai_url, fact_file, tmp_path / "again") == 0
        assert len(srv.chat_requests()) == 3  # every reply came from the cache
    assert pd.read_parquet(tmp_path / "again" / "counterfactual.parquet")["reply"].equals(
        table["reply"])


def test_a_failed_call_is_recorded_not_raised(fact_file, tmp_path, capsys):
    def failing(body):
        if "film" in body["messages"][-1]["content"]:
            return Reply(status=400, error="scripted bad request")
        return replies(body)

    with FakeLLMServer(default=failing) as srv:
        assert cli(srv.openai_url, fact_file, tmp_path / "out") == 0
    captured = capsys.readouterr()
    table = pd.read_parquet(tmp_path / "out" / "counterfactual.parquet")
    assert table["error"].notna().tolist() == [False, True, False]
    assert pd.isna(table.loc[1, "detected"]) and pd.isna(table.loc[1, "reply"])
    assert "(1 of 2)" in captured.out and "1 failed calls left out" in captured.out
    assert "run again to retry" in captured.err


def test_dry_run_makes_no_call_and_counts_what_a_run_sends(fact_file, tmp_path, capsys):
    with FakeLLMServer(default=replies) as srv:
        assert cli(srv.openai_url, fact_file, tmp_path / "out", "--dry-run") == 0
        assert srv.chat_requests() == []
        priced = re.search(r"counterfactual: fake-model: (\d+) calls", capsys.readouterr().out)
        assert priced and not (tmp_path / "out").exists()
        assert cli(srv.openai_url, fact_file, tmp_path / "out", "--limit", "2") == 0
        assert len(srv.chat_requests()) == 2
        assert cli(srv.openai_url, fact_file, tmp_path / "out") == 0
        assert len(srv.chat_requests()) == int(priced.group(1)) == 3
        capsys.readouterr()
        assert cli(srv.openai_url, fact_file, tmp_path / "out", "--dry-run") == 0
        out = capsys.readouterr().out
        assert "fake-model: 0 calls" in out and "3 more calls answered by the reply cache" in out
        assert len(srv.chat_requests()) == 3


def judged(body: dict) -> Reply:
    """The generator's replies, and RGB's LLM check: it also credits 'Cleo wrote both books.'"""
    text = body["messages"][-1]["content"]
    if "Begin to generate" in text:
        reply = text.split("Answer: ")[-1]
        seen = "factual errors" in reply or "Cleo" in reply
        return Reply("Yes, the model has identified the factual errors." if seen
                     else "NO, the model fail to identify the factual errors.")
    return replies(body)


def test_judge_checker_asks_rgbs_check_and_its_dry_run_counts_the_checks(fact_file, tmp_path,
                                                                          capsys):
    with FakeLLMServer(default=judged) as srv:
        assert cli(srv.openai_url, fact_file, tmp_path / "out", "--checker", "judge",
                   "--dry-run") == 0
        out = capsys.readouterr().out
        assert srv.chat_requests() == []
        assert "counterfactual: fake-model: 3 calls" in out and "check: fake-model: 3 calls" in out
        assert cli(srv.openai_url, fact_file, tmp_path / "out", "--checker", "judge") == 0
        sent = srv.chat_requests()
        assert len(sent) == 6
        checks = [r["body"]["messages"] for r in sent if "Begin to generate" in
                  r["body"]["messages"][-1]["content"]]
        assert len(checks) == 3  # one user message each, the reply last (RGB's layout)
        assert any(c[0]["content"].endswith("Answer: Cleo wrote both books.\n    ")
                   for c in checks)
        out = capsys.readouterr().out
        assert "detection by an LLM check" in out and "(3 of 3)" in out
        table = pd.read_parquet(tmp_path / "out" / "counterfactual.parquet")
        assert table["detected"].tolist() == [True, True, True]
        assert table["corrected"].tolist() == [True, False, False]
        assert table["check"].str.startswith(("Yes", "NO")).all()
        assert cli(srv.openai_url, fact_file, tmp_path / "out", "--checker", "judge",
                   "--dry-run") == 0
        out = capsys.readouterr().out
        assert "counterfactual: fake-model: 0 calls" in out and "check: fake-model: 0 calls" in out
        assert len(srv.chat_requests()) == 6


def test_the_options_are_made_from_the_settings_declaration(tmp_path, capsys):
    """Issue 48 §3: --limit, --passages and --checker come from `CounterfactualSettings` (type,
    choices, help, default), and a value it refuses is named by its key before any file is
    read."""
    from typing import get_args

    from ragdash.cli.parser import build_parser
    from ragdash.stress.settings import Checker, CounterfactualSettings

    sub = build_parser()._subparsers._group_actions[0].choices["counterfactual"]
    options = {a.dest: a for a in sub._actions}
    assert options["checker"].choices == list(get_args(Checker))
    assert options["passages"].type is int and options["passages"].default is None
    assert f"(default {CounterfactualSettings().passages})" in options["passages"].help
    assert main(["counterfactual", "--file", str(tmp_path / "none.json"), "--out",
                 str(tmp_path / "o"), "--passages", "0"]) == 2
    assert "counterfactual.passages must be at least 1, not 0" in capsys.readouterr().err
