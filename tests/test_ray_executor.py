"""The Ray executor: every stage's batches on a local Ray instance give the local executor's run
files; the local path never imports Ray; bad executor settings and failing batches are reported.

One Ray instance (2 CPUs) serves every test here (module fixture, shut down when they are done:
its idle workers and actors, kept to the session's end, used CPU the rest of the suite lacked)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from fakes.llm_server import FakeLLMServer, Reply
from fixtures.pipeline import llm_args, responder
from fixtures.requires import require

from ragdash.cli import build_parser, main, overrides_from
from ragdash.config import ConfigError, load_config
from ragdash.executors import LocalExecutor, check, make_executor
from ragdash.llm.types import LLMError
from ragdash.rundir import Run
from ragdash.stages.runner import run_stages, stage_keys

ROOT = Path(__file__).resolve().parents[1]


# --- without Ray ------------------------------------------------------------------------------


def test_the_local_path_imports_no_ray():
    code = ("import sys, pandas as pd; from ragdash.config import load_config; "
            "from ragdash.executors import make_executor; import ragdash.stages.runner; "
            "from ragdash.stages.score import score_batch; "
            "ex = make_executor(load_config()['executor']); "
            "f = pd.DataFrame({'qid': ['q'], 'retriever': ['bm25'], 'context': ['a b c'], "
            "'parts': [['b c']]}); "
            "out = ex.map_batches(f, score_batch, batch_size=1, kwargs=dict(budgets=[3], "
            "tokenizer='whitespace', method='substring', mode='corrected')); "
            "print(out['score'].tolist(), sorted(m for m in sys.modules if m.split('.')[0] "
            "== 'ray'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.split() == ["[1.0]", "[]"], out.stdout + out.stderr


def test_the_executor_enters_no_stage_key():
    local = load_config("configs/paper.yaml")
    ray = load_config("configs/paper.yaml", {"executor": {"kind": "ray", "workers": 2,
                                                          "address": "auto"}})
    assert local["executor"] == {"kind": "local", "address": None, "workers": None,
                                 "runtime_env": None, "actors": False}
    assert stage_keys(local) == stage_keys(ray)


@pytest.mark.parametrize(("section", "message"), [
    ({"kind": "spark"}, "executor.kind must be one of local, ray"),
    ({"kind": "ray", "workers": 0}, "executor.workers must be at least 1, not 0"),
    ({"kind": "ray", "workers": "2"}, "executor.workers must be a whole number, not '2'"),
    ({"kind": "ray", "address": ""}, "executor.address must be"),
    ({"kind": "ray", "address": "headnode"}, "executor.address must be"),
    ({"kind": "ray", "address": "ray://head:port"}, "executor.address must be"),
    ({"kind": "ray", "runtime_env": "pip"}, "executor.runtime_env must be a mapping"),
    ({"kind": "ray", "actors": "yes"}, "executor.actors must be true or false"),
    ({"kind": "local", "address": "auto"}, "apply to the ray executor only"),
    ({"kind": "ray", "adress": "auto"}, "did you mean 'executor.address'"),
])
def test_bad_executor_settings_are_refused_with_the_key(section, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, {"executor": section})


def test_cli_options_set_the_executor():
    parser = build_parser()

    def section(*argv):
        args = parser.parse_args(["run", *argv])
        return load_config(None, overrides_from(args))["executor"]

    assert section()["kind"] == "local"
    assert section("--executor", "ray")["kind"] == "ray"
    assert section("--ray-address", "ray://head:10001") == {
        "kind": "ray", "address": "ray://head:10001", "workers": None, "runtime_env": None,
        "actors": False}
    assert section("--workers", "3")["workers"] == 3
    with pytest.raises(ConfigError, match="ray executor only"):
        section("--executor", "local", "--workers", "2")


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1", "nohost.invalid:6379"])
def test_an_unreachable_cluster_fails_fast_with_the_address(address):
    """ray.init alone retries an unreachable head for minutes; the executor checks first."""
    import time

    ex = make_executor({"kind": "ray", "address": address})
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=rf"cannot reach the Ray cluster at '{address}'"):
        ex.map_batches(pd.DataFrame({"a": [1]}), lambda b: b, batch_size=1)
    assert time.monotonic() - start < 30


def test_without_ray_the_ray_executor_says_how_to_install_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(RuntimeError, match=r"pip install 'ragdash\[ray\]'"):
        make_executor({"kind": "ray"})


def test_local_executor_is_one_call_over_the_whole_frame():
    calls = []

    def fn(batch, tag, progress=None):
        calls.append(len(batch))
        return batch.assign(tag=tag)

    frame = pd.DataFrame({"x": range(7)})
    out = LocalExecutor().map_batches(frame, fn, batch_size=2, args=("t",))
    assert calls == [7] and out["tag"].eq("t").all()
    assert isinstance(make_executor(check(None)), LocalExecutor)


# --- on Ray -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_session():
    require("ray")
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
    # workers cannot import this test module: its batch functions travel by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield ray
    ray.shutdown()


@pytest.fixture(params=[False, True], ids=["tasks", "actors"])
def on_ray(ray_session, request):
    from ragdash.executors.ray_data import RayExecutor

    ex = RayExecutor(workers=2, actors=request.param)
    yield ex
    ex.close()
    assert ray_session.is_initialized()  # a session it did not start is left running


def repeat_rows(batch: pd.DataFrame, progress=None) -> pd.DataFrame:
    """x copies of each row x (none for 0), with a list column: outputs vary in length."""
    rows = [(x, [float(x)] * x) for x in batch["x"] for _ in range(x)]
    return pd.DataFrame(rows, columns=["x", "values"])


class Offset:
    def __init__(self, by: int):
        self.by = by

    def __call__(self, batch: pd.DataFrame, progress=None) -> pd.DataFrame:
        if (batch["x"] < 0).any():
            raise ValueError("negative x in the batch")
        return batch.assign(y=batch["x"] + self.by)


def test_batches_come_back_in_input_order_with_local_dtypes(on_ray):
    frame = pd.DataFrame({"x": [3, 0, 1, 0, 2, 4, 0, 1, 2]})
    seen = []
    out = on_ray.map_batches(frame, repeat_rows, batch_size=2,
                             progress=lambda m, d, t: seen.append((m, d, t)), label="rows")
    pd.testing.assert_frame_equal(out, repeat_rows(frame))  # lists stay lists, int64 stays
    assert seen[-1] == ("rows", 9, 9) and len(seen) == 5
    out = on_ray.map_batches(frame, Offset, batch_size=4, args=(10,))
    pd.testing.assert_frame_equal(out, Offset(10)(frame))
    empty = on_ray.map_batches(frame.iloc[:0], Offset, batch_size=4, args=(10,))
    assert list(empty.columns) == ["x", "y"] and empty.empty


def test_a_failing_batch_raises_its_own_error(ray_session):
    from ragdash.executors.ray_data import RayExecutor

    with pytest.raises(ValueError, match="negative x"):
        RayExecutor(workers=2).map_batches(pd.DataFrame({"x": [1, 2, -1, 3]}), Offset,
                                           batch_size=1, args=(1,))


def _tables(run: Run) -> dict[str, pd.DataFrame]:
    return {k: run.read(k) for k in ("chunks", "retrieved", "ir_scores", "ir_summary",
                                      "ir_metrics")}


@pytest.mark.slow
def test_the_paper_pipeline_on_ray_writes_the_local_files(ray_session, tmp_path):
    """configs/paper.yaml (semantic chunks, bm25 + sim) on 4 questions, each executor with its
    own runs root (cold index caches; the embedding cache is the session's): the same files."""
    runs = {}
    for kind in ("local", "ray"):
        cfg = load_config("configs/paper.yaml", {
            "dataset": {"limit": 4}, "retrievers": {"use": "bm25,sim"},
            "runs_root": str(tmp_path / f"root-{kind}"),
            "executor": {"kind": kind, **({"workers": 2} if kind == "ray" else {})}})
        runs[kind] = _tables(run_stages(cfg, tmp_path / kind))
    local, ray = runs["local"], runs["ray"]
    for key in ("chunks", "ir_scores", "ir_summary", "ir_metrics"):
        pd.testing.assert_frame_equal(ray[key], local[key], check_exact=True, obj=key)
    # the same chunks in the same ranks; a similarity embedded in another batch may differ in
    # its last bits (float sums in another order), never in the ranking here
    cols = ["qid", "retriever", "rank", "chunk_id"]
    pd.testing.assert_frame_equal(ray["retrieved"][cols], local["retrieved"][cols])
    pd.testing.assert_series_equal(ray["retrieved"]["score"], local["retrieved"]["score"],
                                   rtol=1e-5)
    assert len(local["ir_scores"]) == 4 * 2 * 10 and len(local["chunks"]) > 30


def _llm(command: str, generic, url: str, run_dir: Path, *extra: str) -> list[str]:
    """`ragdash <command>` on the tiny generic dataset, BM25 only, the LLM at `url`."""
    ds, corpus = generic
    args = [a if a != "bm25,sim" else "bm25" for a in llm_args(url, run_dir)]
    return [command, "--dataset", str(ds), "--corpus", str(corpus), *args, *extra]


@pytest.mark.slow
def test_llm_stages_on_ray_give_the_local_answers_and_judgments(generic, ray_session, tmp_path,
                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)  # runs root, and so the LLM cache, under tmp_path
    with FakeLLMServer(default=responder) as srv:
        assert main(_llm("judge", generic, srv.openai_url, tmp_path / "local")) == 0
        sent = len(srv.chat_requests())
        assert main(_llm("judge", generic, srv.openai_url, tmp_path / "ray",
                         "--executor", "ray", "--workers", "2")) == 0
        assert len(srv.chat_requests()) == sent  # every call came from the shared cache
    local, ray = Run(tmp_path / "local"), Run(tmp_path / "ray")
    for key in ("answers", "judgments"):
        pd.testing.assert_frame_equal(ray.read(key), local.read(key), obj=key)
    assert len(local.read("answers")) == 4 * 2 and sent >= 4 + 4


def test_llm_calls_on_workers_cache_record_errors_and_keep_the_key_home(ray_session, tmp_path):
    from ragdash.executors.ray_data import RayExecutor
    from ragdash.llm.cache import LLMCache
    from ragdash.llm.generate import _not_empty
    from ragdash.llm.runner import chat_call, dispatch_calls
    from ragdash.llm.settings import LLMSettings

    secret = "sk-given-in-memory-only-0123456789"
    ex = RayExecutor(workers=2)
    prompts = ["ok 1", "fail 2", "ok 3", "ok 4", "fail 5", "ok 6"]
    calls = [chat_call([{"role": "user", "content": p}], validate=_not_empty) for p in prompts]

    def reply(body):
        text = body["messages"][-1]["content"]
        return Reply(status=400) if text.startswith("fail") else Reply(text=f"re: {text}")

    with FakeLLMServer(default=reply) as srv, LLMCache(tmp_path / "llm.sqlite") as cache:
        settings = LLMSettings(backend="openai", model="fake-model", base_url=srv.openai_url,
                               retries=0, concurrency=2, api_key=secret)
        seen = []
        first = dispatch_calls(None, calls, settings, lambda d, t: seen.append((d, t)),
                               executor=ex, cache=cache)
        assert len(srv.chat_requests()) == 6 and seen[-1] == (6, 6)
        again = dispatch_calls(None, calls, settings, executor=ex, cache=cache)
        assert len(srv.chat_requests()) == 6 + 2  # successes cached by the workers
        assert all(secret not in str(r["authorization"]) for r in srv.requests)
    for outcomes in (first, again):  # in call order, failures kept as error records
        assert [o.result.text if o.result else None for o in outcomes] == [
            "re: ok 1", None, "re: ok 3", "re: ok 4", None, "re: ok 6"]
        assert [o.kind for o in outcomes if o.error] == ["bad_request", "bad_request"]
    assert [o.result.cached for o in again if o.result] == [True] * 4

    # no server: the calls stop with the connection error instead of recording each
    down = LLMSettings(backend="openai", model="m", base_url="http://127.0.0.1:9/v1",
                       retries=0)
    with pytest.raises(LLMError) as err:
        dispatch_calls(None, calls, down, executor=ex)
    assert err.value.kind == "connection" and "cannot connect" in str(err.value)
