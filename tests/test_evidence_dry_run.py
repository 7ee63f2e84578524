"""`ragdash run --dry-run` on a dataset without relevant parts whose evidence finder asks the
LLM (`dataset.evidence.llm`): no call is sent, the finder's calls are priced (the same number a
run then sends), and the stages after ingest say why they are not priced yet. The dry run ran
ingest, and so sent the finder's calls, before. `ragdash evidence --llm --dry-run` likewise."""

from __future__ import annotations

import csv
import json
import re

from fakes.llm_server import FakeLLMServer, Reply

from ragdash.cli import main

MOON = "Armstrong was the first man to step onto the lunar surface, in July 1969."


def _files(tmp_path):
    qa = tmp_path / "qa.csv"
    with open(qa, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer"])
        w.writerow(["t0", "What did person 0 build?", "tower 0"])  # verbatim: no call
        w.writerow(["moon", "Who first walked on the moon?", "Neil Armstrong"])
        w.writerow(["year", "When did the first man walk on the moon?", "the summer of 1969"])
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("\n".join(json.dumps(d) for d in [
        {"doc_id": "d0", "title": "D0", "text": "Person 0 built tower 0 in 1900. It is tall."},
        {"doc_id": "apollo", "title": "Apollo", "text": MOON}]))
    return qa, corpus


def test_a_dry_run_prices_the_evidence_finders_calls_and_sends_none(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    qa, corpus = _files(tmp_path)
    with FakeLLMServer(default=lambda body: Reply(text=MOON)) as srv:
        args = ["run", "--dataset", str(qa), "--corpus", str(corpus), "--retrievers", "bm25",
                "--chunker", "none", "--tokenizer", "whitespace", "--budgets", "20:60:20",
                "--gen-budget", "60", "--llm-backend", "openai", "--llm-model", "fake-model",
                "--llm-url", srv.openai_url, "--set", "dataset.evidence.llm=true",
                "--set", "generation.enabled=true", "--set", "llm.backoff_base_s=0.01",
                "--set", f"runs_root={tmp_path / 'runs'}",
                "--run-dir", str(tmp_path / "runs" / "r")]
        assert main([*args, "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert srv.chat_requests() == []
        planned = re.search(r"evidence: fake-model: (\d+) calls", out)
        assert planned and int(planned.group(1)) == 2, out  # the two answers in other words
        assert "generation not priced: the questions are not loaded yet" in out, out
        assert main(["ingest", *args[1:]]) == 0  # ingest sends what was priced
        assert len(srv.chat_requests()) == 2
        capsys.readouterr()
        assert main([*args, "--dry-run"]) == 0  # ingest done: the rest is priced now
        out = capsys.readouterr().out
        assert len(srv.chat_requests()) == 2 and "evidence:" not in out, out
        assert re.search(r"generation: fake-model: \d+ calls", out), out


def test_ragdash_evidence_dry_run_prices_its_calls_and_writes_nothing(tmp_path, capsys,
                                                                      monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)  # the reply cache goes under ./runs
    qa, corpus = _files(tmp_path)
    out = tmp_path / "found.jsonl"
    with FakeLLMServer(default=lambda body: Reply(text=MOON)) as srv:
        args = ["evidence", "--dataset", str(qa), "--corpus", str(corpus), "-o", str(out),
                "--llm", "--llm-backend", "openai", "--llm-model", "fake-model", "--llm-url",
                srv.openai_url, "-q"]
        assert main([*args, "--dry-run"]) == 0
        said = capsys.readouterr().out
        assert srv.chat_requests() == [] and not out.exists()
        assert re.search(r"evidence: fake-model: 2 calls", said), said
        assert main(args) == 0  # the command sends what was priced
        assert len(srv.chat_requests()) == 2 and out.exists()
        capsys.readouterr()
        assert main([*args, "--dry-run"]) == 0  # now the reply cache answers both
        said = capsys.readouterr().out
        assert "evidence: fake-model: 0 calls" in said and "2 more calls answered" in said, said
    assert main(["evidence", "--dataset", str(qa), "--corpus", str(corpus), "-o", str(out),
                 "--dry-run"]) == 0
    assert "without --llm the finder calls no LLM" in capsys.readouterr().out


def test_the_data_page_estimate_is_the_calls_the_finder_sends(tmp_path, monkeypatch):
    """`view.data.evidence_estimate` (the Data page's "Estimate the LLM's calls"): the calls
    priced with none sent; once asked, the reply cache's answers are said apart."""
    from ragdash.data import load_dataset
    from ragdash.view.data import evidence_estimate

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    qa, corpus = _files(tmp_path)
    loaded = load_dataset(str(qa), "auto", corpus=str(corpus))
    with FakeLLMServer(default=lambda body: Reply(text=MOON)) as srv:
        llm = {"backend": "openai", "model": "fake-model", "base_url": srv.openai_url}
        said = evidence_estimate(loaded, llm, tmp_path / "runs")
        assert said.startswith("fake-model: 2 calls") and srv.chat_requests() == [], said
        monkeypatch.chdir(tmp_path)  # the command's reply cache: ./runs, the same root
        assert main(["evidence", "--dataset", str(qa), "--corpus", str(corpus), "-o",
                     str(tmp_path / "found.jsonl"), "--llm", "--llm-backend", "openai",
                     "--llm-model", "fake-model", "--llm-url", srv.openai_url, "-q"]) == 0
        assert len(srv.chat_requests()) == 2
        again = evidence_estimate(loaded, llm, tmp_path / "runs")
    assert again.startswith("fake-model: 0 calls") and "2 more calls answered" in again, again


def test_the_data_page_estimate_of_a_large_upload_runs_on_a_sample_and_says_so(tmp_path,
                                                                              monkeypatch):
    """The estimate runs the finder in the dashboard's server: a larger upload than
    `ESTIMATE_SAMPLE` questions is estimated on a seeded sample of them and scaled up (the
    finder itself runs as a job). Each question here makes one call: the scaled estimate is
    the whole's."""
    from ragdash.data import load_dataset
    from ragdash.evidence import finder
    from ragdash.view import data

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    qa, corpus = _files(tmp_path)
    with open(qa, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer"])
        for i in range(12):  # an answer in other words each: one call each
            w.writerow([f"y{i}", f"When did the first man walk on the moon ({i})?",
                        "the summer of 1969"])
    loaded = load_dataset(str(qa), "auto", corpus=str(corpus))
    seen: list[int] = []
    run_finder = finder.call_plan
    monkeypatch.setattr(finder, "call_plan", lambda examples, *a, **k: (
        seen.append(len(examples)), run_finder(examples, *a, **k))[1])
    with FakeLLMServer(default=lambda body: Reply(text=MOON)) as srv:
        llm = {"backend": "openai", "model": "fake-model", "base_url": srv.openai_url}
        whole = data.evidence_estimate(loaded, llm, tmp_path / "runs")
        sampled = data.evidence_estimate(loaded, llm, tmp_path / "runs", sample=4)
        assert srv.chat_requests() == []
    assert seen == [12, 4]  # the finder ran on 4 questions, not 12
    assert whole.startswith("fake-model: 12 calls"), whole
    assert sampled.startswith("about fake-model: 12 calls"), sampled
    assert "the finder run on 4 of the 12 questions, drawn at random, and scaled up" in sampled
    assert data.evidence_estimate(loaded, llm, tmp_path / "runs", sample=4) == sampled  # seeded
