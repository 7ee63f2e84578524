"""Live retrievers (`retrievers.custom`): the config's checks, the bounded HTTP client against a
server in a thread (slow drip, huge reply, wrong shape, a host not allowed), LangChain over a
real embedded vector database (Qdrant's local mode on disk, MiniLM vectors), LlamaIndex, the
cache and resume, the dashboard's refusal, and a whole `ragdash run` beside bm25."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml
from fixtures.corpus import DOCS, QUESTIONS
from fixtures.live_retrievers import (
    QDRANT_PATH_ENV,
    TEXTS,
    build_qdrant,
    http_retriever,
)

from ragdash.config import ConfigError, load_spec
from ragdash.retrieval import custom
from ragdash.retrieval.custom import CustomRetrieverSpec, LiveRetrieverError
from ragdash.retrieval.http import HOSTS_ENV

QIDS = [q for q, *_ in QUESTIONS]
ASKED = [t for _, t, *_ in QUESTIONS]
PASSAGES = [x for *_, x in DOCS]


def http_spec(url: str, **extra) -> CustomRetrieverSpec:
    return CustomRetrieverSpec(kind="http", url=url, k=2, **extra)


@pytest.mark.parametrize(("custom_", "message"), [
    ({"bm25": {"kind": "http", "url": "http://h/x"}}, "built-in retriever"),
    ({"SIM": {"kind": "http", "url": "http://h/x"}}, "built-in retriever"),
    ({"llm_only": {"kind": "http", "url": "http://h/x"}}, "LLM-only"),
    ({"<b>x</b>": {"kind": "http", "url": "http://h/x"}}, "only letters, digits"),
    ({"a.b": {"kind": "http", "url": "http://h/x"}}, "only letters, digits"),
    ({"web": {"kind": "http"}}, "retrievers.custom.web: kind http needs url"),
    ({"web": {"kind": "http", "url": "ftp://h/x"}}, "http:// or https://"),
    ({"web": {"kind": "http", "url": "http://user:pw@h/x"}}, "must not hold credentials"),
    ({"web": {"kind": "http", "url": "http://h/x", "api_key_env": "sk-abcdef"}},
     "must name an environment variable"),
    ({"web": {"kind": "http", "url": "http://h/x", "urll": 1}},
     "retrievers.custom.web.urll: unknown key; did you mean 'url'?"),
    ({"web": {"kind": "http", "url": "http://h/x", "k": 0}}, "retrievers.custom.web.k"),
    ({"lc": {"kind": "langchain"}}, "needs import_path as module:attribute"),
    ({"lc": {"kind": "langchain", "import_path": "os.system"}}, "module:attribute"),
    ({"lc": {"kind": "langchain", "import_path": "m:f", "timeout_s": 5}},
     "timeout_s only for kind http"),
    ({"lc": {"kind": "elastic", "import_path": "m:f"}}, "retrievers.custom.lc.kind"),
])
def test_the_config_refuses_bad_live_retrievers(custom_, message):
    with pytest.raises(ConfigError, match=None) as err:
        load_spec(None, {"retrievers.custom": custom_, "retrievers.use": ["bm25"]})
    assert message in str(err.value)


def test_a_live_retriever_is_named_in_use_and_keyed_by_what_shapes_its_replies():
    base = {"retrievers.use": ["bm25", "web"],
            "retrievers.custom.web": {"kind": "http", "url": "https://rag.example/search"}}
    spec = load_spec(None, base)
    assert spec.retrievers.use == ["bm25", "web"]
    assert spec.retrievers.resolved["web"] == {"kind": "http", "k": 10,
                                               "url": "https://rag.example/search"}
    slower = load_spec(None, {**base, "retrievers.custom.web.timeout_s": 99})
    assert slower.retrievers.resolved == spec.retrievers.resolved  # no new retrieval
    again = load_spec(None, {**base, "retrievers.custom.web.version": "index-2"})
    assert again.retrievers.resolved["web"]["version"] == "index-2"
    with pytest.raises(ConfigError, match=r"retrievers.use: unknown \[.nope.\]"):
        load_spec(None, {"retrievers.use": ["bm25", "nope"]})
    with pytest.raises(ConfigError, match="retrievers.params.web: a live retriever's"):
        load_spec(None, {**base, "retrievers.params.web.k": 3})
    # the saved config reads back the same (run.json holds plain dicts)
    assert load_spec(None, spec.to_config()).retrievers.custom == spec.retrievers.custom


def test_http_retriever_bounds_and_allowed_hosts(monkeypatch):
    """One server, its faults in turn: each a clear error, none past its bounds."""
    monkeypatch.delenv(HOSTS_ENV, raising=False)
    with http_retriever(PASSAGES) as web:
        with pytest.raises(ValueError, match="not on the allow-list"):  # nothing allowed
            custom.open_search(http_spec(web.url))
        env = {HOSTS_ENV: "127.0.0.1:1", "KEY": "secret-key-0123456789"}
        with pytest.raises(ValueError, match="127.0.0.1:.* is not on the allow-list"):
            custom.open_search(http_spec(web.url), env)  # another port
        assert web.requests == []
        env[HOSTS_ENV] = f"rag.example.com, {web.host}"
        with pytest.raises(ValueError, match="KEY2 .* is not set"):
            custom.open_search(http_spec(web.url, api_key_env="KEY2"), env)

        search = custom.open_search(http_spec(web.url, api_key_env="KEY"), env)
        found = search("Where was Alan Turing born?")
        assert [p.text for p in found] == [PASSAGES[0], PASSAGES[1]]
        assert (found[0].id, found[0].score) == ("p0", 1.0)
        seen = web.requests[-1]
        assert seen["body"] == {"question": "Where was Alan Turing born?", "k": 2}
        assert seen["headers"]["Authorization"] == "Bearer secret-key-0123456789"

        web.mode = "drip"  # headers, then a byte every 0.2 s
        slow = custom.open_search(http_spec(web.url, timeout_s=1, retries=0), env)
        start = time.monotonic()
        with pytest.raises(Exception, match=r"timed out \(no complete reply within "
                                            r"timeout_s = 1 s\)"):
            slow("q")
        assert time.monotonic() - start < 4

        small = custom.open_search(http_spec(web.url, max_reply_mb=0.5, retries=0), env)
        web.mode = "huge"  # 8 MiB declared: refused before its body is read
        with pytest.raises(Exception, match="reply too large .*declared"):
            small("q")
        web.mode = "huge-unsized"  # no length: refused once past the cap
        with pytest.raises(Exception, match="reply too large .*received"):
            small("q")

        web.mode = "shape"
        with pytest.raises(ValueError, match=r"not a list of passages .*keys results"):
            search("q")

        web.mode, web.failures, before = "flaky", 1, len(web.requests)  # 503, 200: retried
        assert len(custom.open_search(http_spec(web.url, retries=1), env)("Babbage?")) == 2
        assert len(web.requests) - before == 2


def test_a_failed_question_is_located_and_the_rest_resume(monkeypatch, tmp_path):
    """A reply of the wrong shape names its question; the questions answered are kept in the
    checkpoint and not asked again; the finished results are cached by content key."""
    with http_retriever(PASSAGES) as web:
        monkeypatch.setenv(HOSTS_ENV, web.host)
        spec = http_spec(web.url)
        web.mode = "fail-q2"

        def run() -> tuple:
            return custom.retrieve("web", spec, QIDS, ASKED, tmp_path / "cache",
                                   tmp_path / "parts")

        with pytest.raises(LiveRetrieverError) as err:
            run()
        text = str(err.value)
        assert "failed for 1 of 4 question:" in text
        assert "question q2 ('Whose daughter was Ada Lovelace?')" in text
        assert 'passage 1 of the reply has no "text" string' in text
        assert not list((tmp_path / "cache").glob("live-*"))  # nothing half-written
        web.mode, before = "ok", len(web.requests)
        retrieved, passages = run()
        assert len(web.requests) - before == 1  # only q2 asked again
        assert list(retrieved["qid"].unique()) == QIDS
        assert (retrieved.groupby("qid").size() == 2).all()
        assert set(retrieved["chunk_id"]) == set(passages["chunk_id"])
        assert set(passages["text"]) <= set(PASSAGES)
        assert (passages["doc_id"] == passages["chunk_id"]).all()
        before = len(web.requests)
        again, _ = run()
        assert len(web.requests) == before  # cached by content key
        assert again.equals(retrieved)


def test_langchain_retriever_over_an_embedded_qdrant_database(tmp_path, monkeypatch):
    """A LangChain retriever over a Qdrant database on disk (local mode: no server, no network),
    its vectors from the bundled MiniLM: found by import path, asked, its Documents' text, id
    and score taken."""
    assert build_qdrant(tmp_path / "qdrant", [(d, x) for d, _, x in DOCS]) == 4
    monkeypatch.setenv(QDRANT_PATH_ENV, str(tmp_path / "qdrant"))
    search = custom.open_search(CustomRetrieverSpec(
        kind="langchain", import_path="fixtures.live_retrievers:qdrant_retriever", k=2))
    found = search("Which term did Grace Hopper popularise?")
    assert len(found) == 2 and found[0].text == DOCS[3][2] and found[0].id == "hopper"
    assert found[0].score > found[1].score
    with pytest.raises(ValueError, match="neither a LangChain BaseRetriever nor a function"):
        custom.open_search(CustomRetrieverSpec(
            kind="langchain", import_path="fixtures.live_retrievers:not_a_retriever"))
    with pytest.raises(ValueError, match="cannot import no_such_module"):
        custom.open_search(CustomRetrieverSpec(kind="langchain",
                                               import_path="no_such_module:retriever"))


def test_llamaindex_retriever():
    search = custom.open_search(CustomRetrieverSpec(
        kind="llamaindex", import_path="fixtures.live_retrievers:llama_retriever", k=2))
    found = search("Whose daughter was Ada Lovelace?")
    assert [p.text for p in found] == [TEXTS[1], TEXTS[0]] and found[0].id == "t1"
    with pytest.raises(ValueError, match="neither a LlamaIndex BaseRetriever"):
        custom.open_search(CustomRetrieverSpec(
            kind="llamaindex", import_path="fixtures.live_retrievers:not_a_retriever"))


def test_the_dashboard_runs_only_the_servers_live_retrievers(tmp_path, monkeypatch):
    from ragdash.ui import paths
    from ragdash.view.build_form import BuildForm

    offered = {"kind": "langchain", "import_path": "my_rag:retriever", "description": "prod"}
    server_cfg = tmp_path / "server.yaml"
    server_cfg.write_text(yaml.safe_dump({"retrievers": {"custom": {"prod": offered}}}))
    typed = {"retrievers": {"custom": {"prod": {"kind": "langchain",
                                                 "import_path": "os:system"}}}}
    monkeypatch.delenv(custom.CONFIG_ENV, raising=False)
    assert custom.configured() == {}
    assert paths.refused_config(typed)[0].startswith("retrievers.custom.prod: a live retriever")
    monkeypatch.setenv(custom.CONFIG_ENV, str(server_cfg))
    live = custom.configured()
    assert live["prod"]["import_path"] == "my_rag:retriever" and live["prod"]["k"] == 10
    assert "prod" in custom.describe("prod", live["prod"])
    assert "my_rag" not in custom.describe("prod", live["prod"])  # no code path on the page
    assert paths.refused_config(typed)  # another import path under the offered name
    form = BuildForm("r", {"path": "data/x.jsonl"}, retrievers=["bm25", "prod"],
                     custom={"prod": live["prod"]})
    overrides = form.overrides(tmp_path)
    from ragdash.config import expand

    assert paths.refused_config(expand(overrides)) == []
    assert load_spec(None, overrides).retrievers.custom["prod"].import_path == \
        "my_rag:retriever"
    changed = {**overrides, "retrievers.custom.prod": {**live["prod"], "k": 50}}
    assert paths.refused_config(expand(changed))  # not as configured: refused
    from ragdash.ui import sweep_grid

    with pytest.raises(paths.OutsideRoots, match="retrievers.custom.prod: a live retriever"):
        sweep_grid.plan(overrides, ["retrievers.custom.prod.import_path=os:system,os:popen"],
                        tmp_path / "sweep")
    server_cfg.write_text(yaml.safe_dump({"retrievers": {"custom": {"bm25": offered}}}))
    with pytest.raises(ValueError, match="RAGDASH_CUSTOM_RETRIEVERS=.*built-in"):
        custom.configured()


@pytest.mark.slow  # MiniLM embeds 50 paragraphs for Qdrant (about a minute on a loaded 2-core CPU)
def test_a_dashboard_job_gets_the_key_of_a_configured_live_retriever_only(tmp_path):
    """A job started from the dashboard inherits few variables: the key variable of an http
    live retriever reaches it when the retriever is the server's own, as configured."""
    from ragdash.jobs import job_environment

    offered = custom.validate("prod", {"kind": "http", "url": "https://rag.example/s",
                                       "api_key_env": "PROD_KEY"}).model_dump()
    server_cfg = tmp_path / "server.yaml"
    server_cfg.write_text(yaml.safe_dump({"retrievers": {"custom": {"prod": offered}}}))
    env = {custom.CONFIG_ENV: str(server_cfg), "PROD_KEY": "prod-secret-0123456789",
           "OTHER_KEY": "other-secret-0123456789", "PATH": "/bin"}
    run_cfg = {"retrievers": {"use": ["prod"], "custom": {"prod": offered}}}
    assert job_environment([run_cfg], environ=env)["PROD_KEY"] == "prod-secret-0123456789"
    moved = {"retrievers": {"custom": {"prod": {**offered, "url": "https://evil.example/s",
                                                "api_key_env": "OTHER_KEY"}}}}
    job = job_environment([moved], environ=env)
    assert "PROD_KEY" not in job and "OTHER_KEY" not in job
    assert "PROD_KEY" not in job_environment([{}], environ=env)


def test_a_run_scores_live_retrievers_beside_bm25(tmp_path, monkeypatch):
    """`ragdash run` with a config file naming a LangChain retriever over Qdrant and an HTTP
    retriever beside bm25, on 5 questions of the bundled HotpotQA sample: every system scored,
    the chunk-level metrics too, the Question browser shows the passages, the key is in no
    file, and a second run asks nothing."""
    from ragdash.cli import main
    from ragdash.config import SAMPLE_DATASET
    from ragdash.data import load_dataset
    from ragdash.rundir import Run
    from ragdash.view import RunView

    docs = [(d.doc_id, d.text) for d in load_dataset(SAMPLE_DATASET, limit=5).documents]
    build_qdrant(tmp_path / "qdrant", docs)
    monkeypatch.setenv(QDRANT_PATH_ENV, str(tmp_path / "qdrant"))
    run_dir = tmp_path / "runs" / "live"
    with http_retriever([t for _, t in docs]) as web:
        monkeypatch.setenv(HOSTS_ENV, web.host)
        monkeypatch.setenv("WEB_RETRIEVER_KEY", "live-secret-0123456789")
        cfg = tmp_path / "run.yaml"
        cfg.write_text(yaml.safe_dump({
            "dataset": {"limit": 5}, "chunker": {"method": "none"},
            "budgets": "100:500:200", "runs_root": str(tmp_path / "runs"),
            "tokenizer": "whitespace",  # nothing here is about tokens: no Llama-3 to load
            "retrievers": {"use": ["bm25", "qdrant", "web"], "custom": {
                "qdrant": {"kind": "langchain", "k": 4,
                           "import_path": "fixtures.live_retrievers:qdrant_retriever"},
                "web": {"kind": "http", "url": web.url, "k": 4,
                        "api_key_env": "WEB_RETRIEVER_KEY"}}}}))
        assert main(["run", "--config", str(cfg), "--run-dir", str(run_dir), "-q"]) == 0
        asked = len(web.requests)
        assert asked == 5
        assert main(["run", "--config", str(cfg), "--run-dir", str(run_dir), "-q"]) == 0
        assert len(web.requests) == asked  # the stage is up to date: nothing asked
    run = Run(run_dir)
    ir = run.read("ir_scores")
    qids = set(run.read("examples")["qid"].astype(str))
    for name in ("bm25", "qdrant", "web"):
        mine = ir[ir["retriever"] == name]
        assert set(mine["qid"]) == qids and set(mine["budget"]) == {100, 300, 500}
    means = ir[ir["budget"] == 500].groupby("retriever")["score"].mean()
    assert means["qdrant"] > 0.3 and means["web"] > 0.3, means
    metrics = run.read("ir_metrics").set_index("retriever")
    assert metrics.loc["qdrant", "RR"] > 0 and metrics.loc["web", "RR"] > 0
    passages = run.read("passages")
    assert set(passages["retriever"]) == {"qdrant", "web"}
    assert set(passages["text"]) <= {t for _, t in docs}
    shown = RunView(run).question_chunks(sorted(qids)[0])
    assert {"bm25", "qdrant", "web"} <= set(shown)
    assert len(shown["qdrant"]) == 4
    for f in Path(run_dir).rglob("*"):
        if f.is_file():
            assert b"live-secret-0123456789" not in f.read_bytes(), f
    assert json.loads((run_dir / "run.json").read_text())["config"]["retrievers"]["custom"][
        "web"]["api_key_env"] == "WEB_RETRIEVER_KEY"


def test_the_build_page_offers_the_servers_live_retrievers(tmp_path, monkeypatch):
    """The Build page lists the live retrievers of RAGDASH_CUSTOM_RETRIEVERS beside the built-in
    ones (kind, k and description shown, not the import path) and starts nothing else."""
    from fixtures.apptest import open_app

    server_cfg = tmp_path / "server.yaml"
    server_cfg.write_text(yaml.safe_dump({"retrievers": {"custom": {"prod": {
        "kind": "langchain", "import_path": "my_rag:retriever", "k": 3,
        "description": "our production index"}}}}))
    monkeypatch.setenv(custom.CONFIG_ENV, str(server_cfg))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "runs"))
    at = open_app("build")
    box = at.multiselect(key="build_rets")
    assert box.options == ["BM25", "SIM", "MMR", "REO", "MLQ", "prod"]  # shown labels
    box.set_value(["bm25", "prod"]).run()
    assert not at.exception, at.exception
    shown = " ".join(c.value for c in at.caption)
    assert "our production index" in shown and "my_rag" not in shown
    assert not [w.value for w in at.warning if "retriever" in w.value.lower()]
    assert not at.button(key="build_start").disabled
    server_cfg.write_text("retrievers: {custom: {'<b>': {kind: http, url: 'http://h'}}}")
    at = open_app("build")
    assert any("must start with a letter" in w.value for w in at.warning)
    assert at.multiselect(key="build_rets").options == ["BM25", "SIM", "MMR", "REO", "MLQ"]
