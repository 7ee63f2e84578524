"""Issue 46, round five, bounds and LLM sections: every LLM section of the run specification is
checked against the dashboard's allowed roots, eRAG's and stress's included (item 4); every
count a config sets has a hard maximum, and a retriever asks its engine for no more results
than the corpus has chunks (7); `max_tokens` is bounded and the reply size cap is absolute
(9); `--llm-backend`, `--llm-model` and `--llm-url` reach the generator of an existing run,
or are refused naming the key to set (11); config values `1e300`, negative bootstrap counts
and budgets, and `max_chars: 0` (the minor items)."""

from __future__ import annotations

import json
import threading
import time
import tracemalloc
import typing
from pathlib import Path

import pandas as pd
import pytest
from pydantic import BaseModel

from ragdash.config import LLM_SECTIONS, SPEC_VERSION, ConfigError, RunSpec, load_spec
from ragdash.llm.settings import MAX_TOKENS, LLMSettings, LLMSpec
from ragdash.params import MAX_K
from ragdash.ui import paths

# --- item 4: every LLM section is checked against the allowed roots ----------------------------


def _llm_fields(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every dotted key of `model` (at any depth, through unions, lists and mappings of
    sections) whose field can hold an LLMSpec: found here independently of LLM_SECTIONS."""

    def models(annotation: object) -> set[type]:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return {annotation}
        return {m for a in typing.get_args(annotation) for m in models(a)}

    out: set[str] = set()
    for name, field in model.model_fields.items():
        key = f"{prefix}{field.alias or name}"
        if typing.get_origin(field.annotation) is dict or any(
                typing.get_origin(a) is dict for a in typing.get_args(field.annotation)):
            key += ".*"
        for inner in models(field.annotation):
            if inner is LLMSpec:
                out.add(key)
            else:
                out |= _llm_fields(inner, f"{key}.")
    return out


def test_llm_sections_are_every_llmspec_field_of_the_specification():
    assert set(LLM_SECTIONS) == _llm_fields(RunSpec)
    assert {"llm", "generation.llm", "judge.llm", "metrics.llm", "erag.llm",
            "stress.llm"} <= set(LLM_SECTIONS)


@pytest.fixture
def roots(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(runs))
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(runs / "none"))
    monkeypatch.delenv(paths.DATA_ROOTS_ENV, raising=False)
    return runs


def _nest(dotted: str, value: object) -> dict:
    out: object = value
    for part in reversed(dotted.split(".")):
        out = {part: out}
    return out  # type: ignore[return-value]


@pytest.mark.parametrize("section", [s for s in LLM_SECTIONS if "*" not in s])
def test_a_local_model_outside_the_roots_is_refused_in_every_llm_section(roots, section):
    refused = paths.refused_config(_nest(section, {"backend": "local",
                                                   "model": "/outside/file"}))
    assert len(refused) == 1 and refused[0].startswith(f"{section}.model: /outside/file is "
                                                       "outside the folders")


@pytest.mark.parametrize("stage", ["erag", "stress"])
def test_a_sweep_value_naming_a_model_outside_the_roots_is_refused(roots, stage):
    """The issue's value: `erag={enabled: true, llm: {backend: local, model: /outside/file}}`
    was planned and its stage opened the file."""
    from ragdash.ui import sweep_grid

    vary = f"{stage}={{enabled: true, llm: {{backend: local, model: /outside/file}}}}"
    with pytest.raises(paths.OutsideRoots, match=rf"^{stage}\.llm\.model: /outside/file is "
                                                 "outside the folders"):
        sweep_grid.plan({"dataset.limit": 3}, [vary], roots / "sweep")


# --- item 7 and the minor items: every count has a hard maximum --------------------------------


@pytest.mark.parametrize("override, message", [
    ({"retrievers.use": "sim", "retrievers.params.sim.k": 100_000_000},
     "retrievers.params.sim.k must be a whole number between 1 and 10000, not 100000000"),
    ({"retrievers.use": "bm25", "retrievers.params.bm25.k": 1_000_000_000},
     "retrievers.params.bm25.k must be a whole number between 1 and 10000, not 1000000000"),
    ({"retrievers.use": "mmr", "retrievers.params.mmr.fetch_k": 10_001},
     "retrievers.params.mmr.fetch_k must be a whole number between 1 and 10000, not 10001"),
    ({"retrievers.use": "mlq", "retrievers.params.mlq.per_query_k": 10**9},
     "retrievers.params.mlq.per_query_k must be a whole number between 1 and 10000"),
    ({"retrievers.use": "mlq", "retrievers.params.mlq.max_queries": 101},
     "retrievers.params.mlq.max_queries must be a whole number between 1 and 100, not 101"),
    ({"calibration.n_boot": -5}, "calibration.n_boot must be at least 1, not -5"),
    ({"calibration.n_boot": 10**6}, "calibration.n_boot must be at most 10000, not 1000000"),
    ({"calibration.budget": -3}, "calibration.budget must be at least 1, not -3"),
    ({"calibration.budget": 10**7}, "calibration.budget must be at most 1000000"),
    ({"calibration.seed": -1}, "calibration.seed must be at least 0, not -1"),
    ({"chunker.max_chars": 0}, "chunker.max_chars must be at least 1, not 0"),
    ({"chunker.max_chars": 10**9}, "chunker.max_chars must be at most 67108864"),
    ({"chunker.method": "semantic", "chunker.params.buffer_size": 10**6},
     "chunker.params: semantic.buffer_size must be a whole number between 0 and 100"),
    ({"chunker.method": "recursive", "chunker.params.chunk_size": 10**12},
     "chunker.params: recursive.chunk_size must be a whole number between 1 and 67108864"),
    ({"chunker.method": "tokens", "chunker.params.size": 10**12},
     "chunker.params: tokens.size must be a whole number between 1 and 67108864"),
    ({"dataset.limit": 10**12}, "dataset.limit must be at most 1000000, not 1000000000000"),
    ({"dataset.sample.every": 10**12}, "dataset.sample.every must be at most 1000000"),
    ({"generation.budget": 10**12}, "generation.budget must be at most 1000000"),
    ({"generation.limit": 10**12}, "generation.limit must be at most 1000000"),
    ({"metrics.limit": 10**12}, "metrics.limit must be at most 1000000"),
    ({"erag.k": 10**6}, "erag.k must be at most 10000, not 1000000"),
    ({"erag.max_k": 10**6}, "erag.max_k must be at most 10000, not 1000000"),
    ({"erag.limit": 10**12}, "erag.limit must be at most 1000000"),
    ({"stress.limit": 10**12}, "stress.limit must be at most 1000000"),
    ({"stress.seed": -1}, "stress.seed must be at least 0, not -1"),
    ({"executor.kind": "ray", "executor.workers": 10**9},
     "executor.workers must be at most 10000, not 1000000000"),
    ({"llm.max_tokens": 10**12}, "llm.max_tokens must be at most 32768, not 1000000000000"),
    ({"judge.llm.concurrency": 10**6}, "judge.llm.concurrency must be at most 256"),
    ({"llm.retries": 10**6}, "llm.retries must be at most 20, not 1000000"),
    ({"erag.llm.timeout_s": 1e300}, "erag.llm.timeout_s must be at most 86400"),
    ({"stress.llm.backoff_max_s": 1e12}, "stress.llm.backoff_max_s must be at most 3600"),
], ids=lambda v: list(v)[-1] if isinstance(v, dict) else "")
def test_every_count_a_config_sets_has_a_hard_maximum(override, message):
    with pytest.raises(ConfigError) as exc:
        load_spec(None, override)
    assert str(exc.value).startswith(message), str(exc.value)


def test_the_largest_counts_are_accepted():
    spec = load_spec(None, {"retrievers.use": "bm25,mmr,mlq", "retrievers.params.bm25.k": MAX_K,
                            "retrievers.params.mmr.k": MAX_K,
                            "retrievers.params.mmr.fetch_k": MAX_K,
                            "calibration.n_boot": 10_000, "llm.max_tokens": MAX_TOKENS,
                            "dataset.limit": 1_000_000})
    assert spec.retrievers.resolved["bm25"]["k"] == MAX_K
    assert spec.llm.max_tokens == MAX_TOKENS and spec.calibration.n_boot == 10_000


def test_numbers_in_exponent_form_are_numbers(tmp_path):
    """PyYAML reads `1e300` (no dot, no exponent sign) as text: `llm.timeout_s: 1e300` was
    refused as "not a number". It is read as a number, then checked against the bounds."""
    from ragdash.sweep import parse_vary

    cfg = tmp_path / "c.yaml"
    cfg.write_text("llm: {backend: openai, timeout_s: 1e2, temperature: 1e-1}\n"
                   "scoring: {relevance_share: 5E-1}\n")
    spec = load_spec(cfg)
    assert (spec.llm.timeout_s, spec.llm.temperature) == (100.0, 0.1)
    assert spec.scoring.relevance_share == 0.5
    with pytest.raises(ConfigError, match=r"^llm.timeout_s must be at most 86400, not "
                                          r"1e\+300$"):
        load_spec(None, ["llm.timeout_s=1e300"])
    assert parse_vary("llm.temperature=1e-1,2e-1").values == (0.1, 0.2)
    assert load_spec(None, ["dataset.sheet=e5"]).dataset.sheet == "e5"  # text stays text


def test_the_build_page_inputs_have_the_same_maxima():
    from fixtures.apptest import open_app

    at = open_app("build")
    at.multiselect(key="build_rets").set_value(["bm25", "sim", "mmr", "mlq"]).run()
    inputs = {n.key: n for n in at.number_input}
    for key in ("build_r_paper_bm25_k", "build_r_paper_sim_k", "build_r_paper_mmr_fetch_k",
                "build_r_paper_mlq_per_query_k"):
        assert inputs[key].max == MAX_K, key


# --- item 7: a retriever asks its engine for no more results than there are chunks -------------


def _chunks(n: int) -> pd.DataFrame:
    texts = [f"chunk {i} about rivers, valleys and the harbour of city {i}" for i in range(n)]
    return pd.DataFrame({"chunk_id": [f"d{i}#0" for i in range(n)],
                         "doc_id": [f"d{i}" for i in range(n)], "title": [""] * n,
                         "text": texts})


def test_bm25_asks_pisa_for_at_most_the_corpus_chunks(tmp_path):
    """bm25 k = 1e9 asked PISA for 11.2 GiB for 3 questions: it sized its result heap by k."""
    from ragdash.retrieval import build_retriever

    bm25 = build_retriever("bm25", _chunks(7), tmp_path, {"k": MAX_K})
    assert bm25._pipe.num_results == 7
    hits = bm25.search(["rivers of city 3", "harbour"])
    assert [len(h) for h in hits] == [7, 7]


def test_dense_retrievers_ask_faiss_for_at_most_the_corpus_chunks(tmp_path):
    """sim k = 1e8 aborted with std::bad_alloc: FAISS allocates k results per question."""
    from ragdash.retrieval import build_retriever

    chunks = _chunks(6)
    asked: list[dict] = []
    for name, params in (("sim", {"k": MAX_K}), ("mmr", {"k": MAX_K, "fetch_k": MAX_K})):
        retriever = build_retriever(name, chunks, tmp_path, params)
        store = retriever.store
        for method in ("similarity_search_with_score_by_vector",
                       "max_marginal_relevance_search_with_score_by_vector"):
            original = getattr(store, method)

            def spy(vector, *a, _original=original, **kw):
                asked.append({k: v for k, v in kw.items() if k in ("k", "fetch_k")})
                return _original(vector, *a, **kw)

            object.__setattr__(store, method, spy)
        hits = retriever.search(["rivers of city 3"])
        assert len(hits[0]) == 6
    assert {tuple(sorted(a.items())) for a in asked} == {(("k", 6),), (("fetch_k", 6), ("k", 6))}


# --- item 9: max_tokens is bounded, and so is the reply cap --------------------------------------


def test_max_tokens_is_bounded_in_the_settings():
    with pytest.raises(ValueError, match=r"^llm.max_tokens must be a whole number from 1 to "
                                         r"32768, not 1000000000000$"):
        LLMSettings(backend="openai", max_tokens=10**12)
    with pytest.raises(ValueError, match="llm.timeout_s must be a number of seconds above 0, "
                                         "at most 86400, not inf"):
        LLMSettings(backend="openai", timeout_s=float("inf"))
    assert LLMSettings(backend="openai", max_tokens=MAX_TOKENS).max_tokens == MAX_TOKENS


def test_the_reply_cap_is_absolute():
    from ragdash.llm.clients.bounds import MAX_REPLY_BYTES, reply_byte_limit

    assert MAX_REPLY_BYTES <= 8 * 2**20 + 64 * 1024
    assert reply_byte_limit(10**12) == reply_byte_limit(None) == MAX_REPLY_BYTES
    assert reply_byte_limit(MAX_TOKENS) < MAX_REPLY_BYTES


def test_a_call_past_the_checks_is_still_cut_at_the_absolute_cap():
    """max_tokens 1e12 against a fast server: the job reached 2.52 GB in 20 s. Settings changed
    after their checks (a dataclass is mutable) still read at most MAX_REPLY_BYTES."""
    from fakes.llm_server import FakeLLMServer, Reply, fast_settings

    from ragdash.llm.clients.bounds import MAX_REPLY_BYTES
    from ragdash.llm.generate import generate

    with FakeLLMServer(default=Reply(pad=50 * 2**20, declare_length=False)) as srv:
        settings = fast_settings(srv, "openai", retries=0, timeout_s=30.0)
        settings.max_tokens = 10**12
        out: dict = {}
        tracemalloc.start()
        try:
            worker = threading.Thread(target=lambda: out.update(frame=generate(
                [("q", "llm_only", None, "Capital of France?", None)], settings)), daemon=True)
            t0 = time.monotonic()
            worker.start()
            worker.join(120)
            took = time.monotonic() - t0
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        sent = srv.sent_bytes
    assert "frame" in out, f"still reading after {took:.0f} s"
    error = out["frame"]["error"][0]
    assert "too large" in error and "8.1 MiB" in error, error
    assert sent < MAX_REPLY_BYTES + 16 * 2**20  # the rest of the 50 MiB was never sent
    assert peak < 64 * 2**20, f"peak traced memory {peak / 2**20:.0f} MiB"


# --- item 11: --llm-* reach the generator of an existing run ------------------------------------


def _saved_run(path: Path, cfg: dict) -> Path:
    path.mkdir(parents=True)
    config = RunSpec.from_config(cfg).to_config()
    (path / "run.json").write_text(json.dumps({"config": config,
                                               "spec_version": SPEC_VERSION}))
    return path


def _spec(argv: list[str]) -> RunSpec:
    from ragdash.cli import build_parser
    from ragdash.cli.options import on_saved, overrides_from

    args = build_parser().parse_args(argv)
    return load_spec(args.config, on_saved(args, overrides_from(args)))


def test_llm_options_reach_the_generator_of_a_run_made_with_the_defaults(tmp_path):
    """A run made with the local defaults saves its generator (`generation.llm`: the local
    qwen-1.5b); `--llm-backend openai --llm-url U` left it local (37 s, 2.5 GB)."""
    from ragdash.stages.generate import generator_settings

    run = _saved_run(tmp_path / "r", {"generation": {"enabled": True}})
    assert RunSpec.from_config(json.loads((run / "run.json").read_text())["config"]) \
        .generation.llm.model == "qwen-1.5b"
    spec = _spec(["generate", "--run-dir", str(run), "--llm-backend", "openai",
                  "--llm-url", "http://127.0.0.1:9/v1"])
    gen = generator_settings(spec)
    assert (gen.backend, gen.base_url, gen.model) == ("openai", "http://127.0.0.1:9/v1", "gpt-4o")
    assert spec.judge.llm is None  # the default judge follows the run's llm too, as on a new run
    spec = _spec(["generate", "--run-dir", str(run), "--llm-model", "/m/other.gguf"])
    assert generator_settings(spec).model == "/m/other.gguf"
    # without the options, the run keeps its generator
    assert generator_settings(_spec(["generate", "--run-dir", str(run)])).model == "qwen-1.5b"


def test_llm_options_against_a_generator_set_on_its_own_are_refused(tmp_path):
    """A generator the config sets itself (`generation.llm`, here with its own max_tokens) is
    not rewritten by the run's options: the command says which key to set."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text("generation:\n  enabled: true\n  llm: {backend: local, model: qwen-1.5b, "
                   "max_tokens: 96}\n")
    with pytest.raises(ConfigError) as exc:
        _spec(["generate", "--config", str(cfg), "--llm-backend", "openai"])
    assert str(exc.value) == (
        f"--llm-backend openai sets the run's LLM (llm.*), but config file {cfg} gives the "
        "generator its own generation.llm (backend local, model qwen-1.5b), which these "
        "options do not change: set it with --set generation.llm.backend=openai, or --set "
        "generation.llm=null to answer with the run's llm")
    run = _saved_run(tmp_path / "r", {"generation": {"llm": {"backend": "ollama",
                                                              "model": "llama3"}}})
    with pytest.raises(ConfigError, match=r"--llm-url http://h:1 sets the run's LLM .* the "
                                          r"config saved in .* --set generation.llm.base_url="
                                          r"http://h:1,"):
        _spec(["generate", "--run-dir", str(run), "--llm-url", "http://h:1"])
    # set with the key it names, or an option that agrees with it: accepted
    spec = _spec(["generate", "--config", str(cfg), "--llm-backend", "openai",
                  "--set", "generation.llm.backend=openai", "--set", "generation.llm.model=m"])
    assert (spec.generation.llm.backend, spec.llm.backend) == ("openai", "openai")
    assert _spec(["generate", "--config", str(cfg), "--llm-backend", "local"]) \
        .generation.llm.max_tokens == 96
