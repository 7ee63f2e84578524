"""Live retrievers: the user's own retrieval system, called for every question of a run and
compared beside the built-in ones (`retrievers.custom.NAME` in the config; docs/own-data.md
"Live retrievers").

Kinds:
- `http`: POST `{"question": ..., "k": ...}` to `url`, reply `[{"text", "id"?, "score"?}, ...]`
  in rank order (`ragdash.retrieval.http`: deadline, size cap, retries, allowed hosts only);
- `langchain`: `import_path` `module:attr` names a LangChain `BaseRetriever` or a function
  returning one; `.invoke(question)`, each Document's `page_content` (its `id` or
  `metadata["id"]`, and `metadata["score"]` where present);
- `llamaindex`: the same for a LlamaIndex `BaseRetriever`; `.retrieve(question)`, each node's
  content, id and score.

The first k passages of each reply are the retriever's chunks for that question, in rank order
(`ragdash.retrieval.passages`), so Score_IR and every page treat it as they treat `bm25`.

Import paths are code the server runs: they come only from a config file or the command line,
never from a dashboard field. The dashboard offers the live retrievers of the config file named
by `RAGDASH_CUSTOM_RETRIEVERS` (`configured`) and refuses any other (`refused`).

Results are cached by content key (the retriever's settings that shape its replies and the
questions: `cached_build` under the index cache), and a run stopped half-way resumes: every
answered question is appended to a checkpoint in the run's `.parts/` as it arrives.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import json
import math
import numbers
import os
import re
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, model_validator

KINDS = ("http", "langchain", "llamaindex")
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,39}")
"""A live retriever's name: a letter, then letters, digits, '_' or '-' (40 at most): it names
files, series and table columns, so no markup, spaces or separators."""
IMPORT_PATH = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
CONFIG_ENV = "RAGDASH_CUSTOM_RETRIEVERS"
"""A config file on the server whose `retrievers.custom` section the dashboard offers."""
HTTP_ONLY = ("url", "api_key_env", "timeout_s", "max_reply_mb", "retries")
MAX_ERRORS_SHOWN = 5
Number = StrictInt | StrictFloat


class CustomRetrieverSpec(BaseModel):
    """A live retriever (`retrievers.custom.<name>`): the user's own system, asked for every
    question, its passages compared as the built-in retrievers' chunks are."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    kind: Literal["http", "langchain", "llamaindex"]
    """http (POST {question, k} to url), langchain or llamaindex (a retriever in Python named
    by import_path)."""
    k: Annotated[StrictInt, Field(ge=1, le=1000)] = 10
    """Passages kept per question: the first k of each reply, in its order."""
    url: str | None = None
    """http: the endpoint (http:// or https://); its host must be on the allow-list in
    RAGDASH_RETRIEVER_HOSTS."""
    api_key_env: str | None = None
    """http: the environment variable holding the key sent as `Authorization: Bearer` (its
    name only: a key is never written in a config)."""
    import_path: str | None = None
    """langchain, llamaindex: `module:attribute`, a retriever or a function returning one
    (from a config file or the command line only, never from a dashboard field)."""
    timeout_s: Annotated[Number, Field(gt=0, le=3600)] = 30.0
    """http: the most seconds one call takes, the whole reply included."""
    retries: Annotated[StrictInt, Field(ge=0, le=10)] = 2
    """http: further tries after a timeout, a refused connection, 429 or 5xx (backoff 0.5 s
    doubling, at most 8 s)."""
    max_reply_mb: Annotated[Number, Field(gt=0, le=256)] = 4.0
    """http: the largest reply read, in MiB (a larger one is refused as it arrives)."""
    concurrency: Annotated[StrictInt, Field(ge=1, le=64)] | None = None
    """Questions asked at once (default: 4 for http, 1 for a Python retriever)."""
    version: str = ""
    """A label of your system's state (its index, its code): part of the cache key, so a new
    label asks again where the same settings would reuse the cached passages."""
    description: str = ""
    """One line shown on the Build page."""

    @model_validator(mode="after")
    def _check(self) -> CustomRetrieverSpec:
        from ragdash.retrieval.http import parse_url

        if self.kind == "http":
            if not self.url:
                raise ValueError("kind http needs url (the endpoint POSTed {question, k})")
            try:
                parse_url(self.url)
            except ValueError as exc:
                raise ValueError(f"url {exc}") from None
            if self.import_path:
                raise ValueError("import_path is for kinds langchain and llamaindex, not http")
            if self.api_key_env is not None and not ENV_NAME.fullmatch(self.api_key_env):
                raise ValueError("api_key_env must name an environment variable (letters, "
                                 "digits, '_'): the key itself is never written in a config")
        else:
            if not self.import_path or not IMPORT_PATH.fullmatch(self.import_path):
                raise ValueError(f"kind {self.kind} needs import_path as module:attribute "
                                 f"(e.g. my_rag.search:retriever), not {self.import_path!r}")
            stray = [f for f in HTTP_ONLY  # set to other than its default (a dump has all)
                     if getattr(self, f) != type(self).model_fields[f].default]
            if stray:
                raise ValueError(f"{', '.join(stray)} only for kind http")
        return self

    @property
    def workers(self) -> int:
        return self.concurrency or (4 if self.kind == "http" else 1)

    def key_fields(self) -> dict[str, Any]:
        """What shapes its replies (the stage key and the cache key hash these): kind, k, the
        endpoint or import path, version. Timeouts, retries and concurrency change nothing."""
        target = {"url": self.url} if self.kind == "http" else {"import_path": self.import_path}
        return {"kind": self.kind, "k": self.k, **target,
                **({"version": self.version} if self.version else {})}


def check_name(name: object, builtin: Iterable[str]) -> str:
    """`name` when it may name a live retriever; ValueError saying why not."""
    from ragdash.constants import LLM_ONLY

    if not isinstance(name, str) or not NAME.fullmatch(name):
        shown = repr(name)[:60]
        raise ValueError(f"name {shown} must start with a letter and hold only letters, digits, "
                         "'_' and '-' (40 at most)")
    taken = {b.lower() for b in builtin} | {LLM_ONLY}
    if name.lower() in taken:
        raise ValueError(f"name {name!r} is a built-in retriever's (or the LLM-only system's): "
                         "give your retriever another name")
    return name


def validate(name: str, value: Any) -> CustomRetrieverSpec:
    """`value` as a live retriever's settings; ValueError naming `retrievers.custom.<name>`
    and the key at fault."""
    from pydantic import ValidationError

    if isinstance(value, CustomRetrieverSpec):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"retrievers.custom.{name} must be a mapping (kind: ..., ...), not "
                         f"{value!r}"[:300])
    try:
        return CustomRetrieverSpec.model_validate(dict(value))
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in (f"retrievers.custom.{name}", *err["loc"]))
        cause = (err.get("ctx") or {}).get("error")
        if err["type"] == "extra_forbidden":
            close = difflib.get_close_matches(str(err["loc"][-1]),
                                              list(CustomRetrieverSpec.model_fields), n=1)
            raise ValueError(f"{where}: unknown key" + (
                f"; did you mean '{close[0]}'?" if close else
                f"; known: {', '.join(CustomRetrieverSpec.model_fields)}")) from None
        text = str(cause) if cause is not None else \
            f"{err['msg'][:1].lower()}{err['msg'][1:]}, not {err.get('input')!r}"
        raise ValueError(f"{where}: {text}"[:400]) from None


# --- the dashboard's live retrievers: the server's config file only -----------------------------


def configured(environ: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """The live retrievers the dashboard offers: the `retrievers.custom` section of the config
    file `RAGDASH_CUSTOM_RETRIEVERS` names (none when unset), each validated, as plain dicts;
    ValueError naming the file and the problem."""
    import yaml

    from ragdash.retrieval import RETRIEVERS

    path = (os.environ if environ is None else environ).get(CONFIG_ENV, "").strip()
    if not path:
        return {}
    try:
        data = yaml.safe_load(Path(path).expanduser().read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{CONFIG_ENV}={path}: cannot read it ({exc})"[:400]) from None
    custom = (data.get("retrievers") or {}).get("custom") if isinstance(data, dict) else None
    if not isinstance(custom, Mapping):
        raise ValueError(f"{CONFIG_ENV}={path}: no retrievers.custom section")
    out = {}
    for name, value in custom.items():
        try:
            check_name(name, RETRIEVERS)
            out[name] = validate(name, value).model_dump()
        except ValueError as exc:
            raise ValueError(f"{CONFIG_ENV}={path}: {exc}") from None
    return out


def describe(name: str, spec: Mapping[str, Any]) -> str:
    """One line about a configured live retriever for the Build page (its kind, k and
    description; not its endpoint or import path)."""
    about = str(spec.get("description") or "").strip()
    return (f"{name.upper()}: your live retriever ({spec.get('kind')}, k = {spec.get('k')}), "
            f"from the server's config, asked for every question" + (f": {about}" if about
                                                                     else ""))


def refused(cfg: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> list[str]:
    """Why the live retrievers of `cfg` (a run config from the dashboard, nested) may not run
    there: one message per `retrievers.custom` entry that is not exactly one the server's
    config file offers (`configured`), since it would run code or call a service a dashboard
    user chose."""
    retrievers = cfg.get("retrievers") if isinstance(cfg, Mapping) else None
    custom = retrievers.get("custom") if isinstance(retrievers, Mapping) else None
    if not custom:
        return []
    why = (f"a live retriever runs code or calls a service, so the dashboard runs only those "
           f"of the server's config file ({CONFIG_ENV}), as configured there")
    if not isinstance(custom, Mapping):
        return [f"retrievers.custom: {why}"]
    try:
        offered = configured(environ)
    except ValueError:
        offered = {}
    out = []
    for name, value in custom.items():
        try:
            same = name in offered and validate(str(name), value).model_dump() == offered[name]
        except ValueError:
            same = False
        if not same:
            out.append(f"retrievers.custom.{str(name)[:40]}: {why}")
    return out


def key_variables(configs: Iterable[Any], environ: Mapping[str, str] | None = None) -> set[str]:
    """The key variables a dashboard job over `configs` (run configs) passes on to its live
    retrievers: the `api_key_env` of each `retrievers.custom` entry that is exactly one the
    server's config file offers (`configured`), when set; no other live retriever runs there."""
    env = os.environ if environ is None else environ
    try:
        offered = configured(env)
    except ValueError:
        return set()
    out = set()
    for cfg in configs:
        retrievers = cfg.get("retrievers") if isinstance(cfg, Mapping) else None
        live = retrievers.get("custom") if isinstance(retrievers, Mapping) else None
        for name, spec in (live.items() if isinstance(live, Mapping) else ()):
            var = offered.get(name, {}).get("api_key_env")
            if var and env.get(var) and not refused({"retrievers": {"custom": {name: spec}}},
                                                    env):
                out.add(var)
    return out


# --- asking a live retriever ----------------------------------------------------------------------


class Passage(NamedTuple):
    """One passage of a reply: its text, the system's id for it, its score (None if not given)."""

    text: str
    id: str | None
    score: float | None


class LiveRetrieverError(RuntimeError):
    """A live retriever failed: for some questions (each named), or before any call."""


Search = Callable[[str], list[Passage]]
"""One question's passages, in rank order (at most k)."""


def _number(value: Any) -> float | None:
    """A score: any finite real number (numpy's included), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(float(value)):
        raise ValueError(f"score {value!r} is not a finite number")
    return float(value)


def _ident(value: Any) -> str | None:
    """An id: text, a whole number or a UUID (a vector database's point id), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | numbers.Integral | uuid.UUID):
        raise ValueError(f"id {value!r} is not a string or a whole number")
    return str(value)[:200]


def passages_of_reply(reply: Any, k: int) -> list[Passage]:
    """The first k passages of an http reply (`[{"text", "id"?, "score"?}, ...]`); ValueError
    saying how it differs from that shape."""
    if not isinstance(reply, list):
        got = f"an object with keys {', '.join(map(str, list(reply)[:5]))}" \
            if isinstance(reply, dict) else type(reply).__name__
        raise ValueError(f"the reply is not a list of passages [{{\"text\": ...}}, ...] (got "
                         f"{got})")
    out = []
    for i, item in enumerate(reply[:k]):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise ValueError(f"passage {i + 1} of the reply has no \"text\" string (got "
                             f"{json.dumps(item, default=str)[:120]})")
        try:
            out.append(Passage(item["text"], _ident(item.get("id")), _number(item.get("score"))))
        except ValueError as exc:
            raise ValueError(f"passage {i + 1} of the reply: {exc}") from None
    return out


def _import(path: str) -> Any:
    """The object `module:attr` names, the current folder on the import path (as `python -m`
    has it); ValueError naming the path."""
    module, _, attr = path.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        obj: Any = importlib.import_module(module)
    except Exception as exc:  # the user's module: any error on import is theirs
        raise ValueError(f"cannot import {module} for import_path {path} ({type(exc).__name__}: "
                         f"{exc}); the module is looked for in the current folder and on "
                         "PYTHONPATH"[:400]) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"import_path {path}: {module} has no attribute {attr}")
        obj = getattr(obj, part)
    return obj


def _instance(obj: Any, base: type, what: str, path: str) -> Any:
    """`obj`, or what calling it returns, when it is a `base`; ValueError otherwise."""
    if not isinstance(obj, base) and callable(obj) and not isinstance(obj, type):
        try:
            obj = obj()
        except Exception as exc:  # the user's factory
            raise ValueError(f"import_path {path}: calling it failed ({type(exc).__name__}: "
                             f"{exc})"[:400]) from None
    if not isinstance(obj, base):
        hint = " (a vector store? use its .as_retriever())" if hasattr(obj, "as_retriever") \
            else ""
        raise ValueError(f"import_path {path} is neither a {what} nor a function returning one "
                         f"(got {type(obj).__name__}){hint}")
    return obj


def _langchain(spec: CustomRetrieverSpec) -> Search:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    path = str(spec.import_path)
    retriever = _instance(_import(path), BaseRetriever, "LangChain BaseRetriever", path)

    def search(question: str) -> list[Passage]:
        docs = retriever.invoke(question)
        if not isinstance(docs, list):
            raise ValueError(f"invoke() returned {type(docs).__name__}, not a list of Documents")
        out = []
        for i, d in enumerate(docs[: spec.k]):
            if not isinstance(d, Document) or not isinstance(d.page_content, str):
                raise ValueError(f"result {i + 1} is not a Document with page_content "
                                 f"(got {type(d).__name__})")
            meta = d.metadata or {}
            ident = getattr(d, "id", None) or meta.get("id")
            score = meta.get("score", meta.get("relevance_score"))
            out.append(Passage(d.page_content, _ident(ident), _number(score)))
        return out

    return search


def _llamaindex(spec: CustomRetrieverSpec) -> Search:
    try:
        from llama_index.core.base.base_retriever import BaseRetriever
        from llama_index.core.schema import NodeWithScore
    except ImportError:
        raise ValueError("kind llamaindex needs the llama-index-core package installed") \
            from None
    path = str(spec.import_path)
    retriever = _instance(_import(path), BaseRetriever, "LlamaIndex BaseRetriever", path)

    def search(question: str) -> list[Passage]:
        nodes = retriever.retrieve(question)
        out = []
        for i, n in enumerate(list(nodes)[: spec.k]):
            if not isinstance(n, NodeWithScore):
                raise ValueError(f"result {i + 1} is not a NodeWithScore (got "
                                 f"{type(n).__name__})")
            text = n.node.get_content()
            if not isinstance(text, str):
                raise ValueError(f"result {i + 1} has no text content")
            out.append(Passage(text, _ident(n.node.node_id), _number(n.score)))
        return out

    return search


def _http(spec: CustomRetrieverSpec, environ: Mapping[str, str] | None = None) -> Search:
    from ragdash.retrieval import http

    url = str(spec.url)
    http.check_host(url, environ)
    key = http.api_key(spec.api_key_env, environ)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    bounds = http.Bounds(float(spec.timeout_s), int(float(spec.max_reply_mb) * 2**20))

    def search(question: str) -> list[Passage]:
        reply = http.with_retries(
            lambda: http.post_json(url, {"question": question, "k": spec.k}, bounds, headers),
            spec.retries)
        return passages_of_reply(reply, spec.k)

    return search


def open_search(spec: CustomRetrieverSpec, environ: Mapping[str, str] | None = None) -> Search:
    """The live retriever `spec` describes, ready to ask (the host checked, the key read, the
    Python object imported and built); ValueError when it cannot be."""
    if spec.kind == "http":
        return _http(spec, environ)
    return _langchain(spec) if spec.kind == "langchain" else _llamaindex(spec)


def cache_key(spec: CustomRetrieverSpec, questions: Sequence[str] = ()) -> str:
    """16 hex of a hash of what shapes the replies (`key_fields`) and the questions asked."""
    blob = json.dumps({"retriever": spec.key_fields(), "questions": list(questions)},
                      sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _read_checkpoint(path: Path) -> dict[str, list[Passage]]:
    """The questions answered in a checkpoint (a line cut by a kill is skipped)."""
    done: dict[str, list[Passage]] = {}
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
            done[row["question"]] = [Passage(*p) for p in row["passages"]]
        except (ValueError, KeyError, TypeError):
            continue
    return done


def ask_all(name: str, spec: CustomRetrieverSpec, qids: Sequence[str],
            questions: Sequence[str], checkpoint: Path, search: Callable[[], Search],
            progress: Callable[[str, int, int], None] | None = None) -> list[list[Passage]]:
    """Every question's passages, asked `spec.workers` at a time; each answer is appended to
    `checkpoint` (JSON lines) as it arrives and those already there are not asked again.
    `search` opens the retriever, called only when a question is left to ask. When some
    questions fail, the others are kept and LiveRetrieverError names the failed ones (id,
    question, why)."""
    done = _read_checkpoint(checkpoint)
    todo = list(dict.fromkeys(q for q in questions if q not in done))
    first = {q: i for i, q in reversed(list(enumerate(questions)))}
    failed: list[tuple[str, str]] = []
    if todo:
        try:
            ask = search()
        except ValueError as exc:
            raise LiveRetrieverError(f"live retriever {name}: {exc}") from None
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        lock, count = threading.Lock(), [len(questions) - len(todo)]

        def one(question: str) -> None:
            try:
                found = ask(question)
            except Exception as exc:  # the user's system: every failure is that question's
                with lock:
                    failed.append((question, str(exc) or type(exc).__name__))
                return
            line = json.dumps({"question": question, "passages": [list(p) for p in found]},
                              ensure_ascii=False)
            with lock:
                with open(checkpoint, "a", encoding="utf-8") as fh:
                    fh.write(line + "\n")
                done[question] = found
                count[0] += 1
                if progress:
                    progress(f"asking {name}", count[0], len(questions))

        with ThreadPoolExecutor(max_workers=min(spec.workers, len(todo))) as pool:
            list(pool.map(one, todo))
    if failed:
        failed.sort(key=lambda f: first[f[0]])
        shown = "; ".join(f"question {qids[first[q]]} ({q[:60]!r}): {why}"
                          for q, why in failed[:MAX_ERRORS_SHOWN])
        more = f"; and {len(failed) - MAX_ERRORS_SHOWN} more" \
            if len(failed) > MAX_ERRORS_SHOWN else ""
        raise LiveRetrieverError(
            f"live retriever {name} failed for {len(failed)} of {len(set(questions))} "
            f"question{'s' if len(failed) > 1 else ''}: {shown}{more}. The "
            f"{len(done)} answered are kept; running again asks only the failed ones")
    return [done[q] for q in questions]


def retrieve(name: str, spec: CustomRetrieverSpec, qids: Sequence[str],
             questions: Sequence[str], cache_dir: Path, parts_dir: Path,
             progress: Callable[[str, int, int], None] | None = None,
             environ: Mapping[str, str] | None = None) -> tuple[Any, Any]:
    """A live retriever's results for the run's questions: (retrieved rows: qid, retriever,
    rank, chunk_id, score; passages: `ragdash.retrieval.passages.COLUMNS`). Cached by content
    key under `cache_dir` (`cached_build`); an interrupted ask resumes from its checkpoint in
    `parts_dir`."""
    import pandas as pd

    from ragdash.retrieval.base import cached_build
    from ragdash.retrieval.passages import frame, passage_id

    questions = [str(q) for q in questions]
    checkpoint = Path(parts_dir) / f"live-{name}-{cache_key(spec)}.jsonl"

    def build(tmp: Path) -> None:
        found = ask_all(name, spec, qids, questions, checkpoint,
                        lambda: open_search(spec, environ), progress)
        (tmp / "results.json").write_text(json.dumps([[list(p) for p in ps] for ps in found],
                                                     ensure_ascii=False), encoding="utf-8")

    folder = cached_build(Path(cache_dir), f"live-{cache_key(spec, questions)}", build)
    found = [[Passage(*p) for p in ps]
             for ps in json.loads((folder / "results.json").read_text(encoding="utf-8"))]
    if len(found) != len(questions):
        raise LiveRetrieverError(f"live retriever {name}: the cached results in {folder} do "
                                 "not match the questions; remove that folder")
    rows, passages = [], []
    for qid, ps in zip(qids, found, strict=True):
        for rank, p in enumerate(ps):
            cid = passage_id(name, p.text)
            rows.append((str(qid), name, rank, cid, math.nan if p.score is None else p.score))
            passages.append({"chunk_id": cid, "title": p.id or "", "text": p.text,
                             "retriever": name})
    retrieved = pd.DataFrame(rows, columns=["qid", "retriever", "rank", "chunk_id", "score"])
    return retrieved.astype({"rank": int, "score": float}), frame(passages)
