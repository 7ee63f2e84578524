"""Which server paths the dashboard may read.

A dashboard user is anyone who can open its URL, so the dashboard reads only under allowed
roots: the runs root (`RAGDASH_RUNS_ROOT`, default `runs/`), the bundled `data/` folder, the
demo runs (`RAGDASH_DEMO_RUN`) and the folders an administrator names in `RAGDASH_DATA_ROOTS`
(joined by `os.pathsep`; none by default). Paths are compared after resolving symlinks, so a
link inside a root that points outside it is refused. The command line reads whatever its user
can read; only the dashboard goes through here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ragdash.config import SAMPLE_DATASET
from ragdash.constants import BUNDLED_RUNS, PROJECT_ROOT

DATA_ROOTS_ENV = "RAGDASH_DATA_ROOTS"


def runs_root() -> Path:
    return Path(os.environ.get("RAGDASH_RUNS_ROOT") or PROJECT_ROOT / "runs")


def demo_paths() -> list[Path]:
    env = os.environ.get("RAGDASH_DEMO_RUN")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [PROJECT_ROOT / d for d in BUNDLED_RUNS]


def allowed_roots() -> list[Path]:
    """The folders the dashboard may read, resolved."""
    extra = [Path(p).expanduser() for p in os.environ.get(DATA_ROOTS_ENV, "").split(os.pathsep)
             if p.strip()]
    return [p.resolve() for p in (runs_root(), PROJECT_ROOT / "data", SAMPLE_DATASET.parent,
                                  *demo_paths(), *extra)]


def inside(path: Path | str, root: Path | str) -> bool:
    """True when `path`, with every symlink resolved, is `root` or lies under it."""
    return Path(path).resolve().is_relative_to(Path(root).resolve())


class OutsideRoots(ValueError):
    """A path the dashboard may not read."""


def readable(path: Path | str) -> Path:
    """`path` resolved, when it lies under an allowed root; raises OutsideRoots otherwise."""
    resolved = Path(path).expanduser().resolve()
    if any(resolved.is_relative_to(r) for r in allowed_roots()):
        return resolved
    raise OutsideRoots(
        f"{path} is outside the folders this dashboard may read (the runs root, the bundled "
        f"data and the folders in {DATA_ROOTS_ENV}, symlinks resolved): upload the file on "
        f"the Data page, or ask whoever runs the dashboard to add its folder to "
        f"{DATA_ROOTS_ENV}")


def refused_inputs(dataset: dict) -> list[str]:
    """Why a run's dataset section may not be read from the dashboard: one message per path
    (`path`, `corpus`) outside the allowed roots."""
    return refused_config({"dataset": dataset})


def _section(cfg: Mapping[str, Any], dotted: str) -> Mapping[str, Any]:
    for part in dotted.split("."):
        cfg = cfg.get(part) if isinstance(cfg, Mapping) else None  # type: ignore[assignment]
    return cfg if isinstance(cfg, Mapping) else {}


def _sections(cfg: Mapping[str, Any], dotted: str) -> list[tuple[str, Mapping[str, Any]]]:
    """(key, section) of each mapping at `dotted` in `cfg`, a `*` part standing for every key
    of the mapping there (`systems.*.llm`)."""
    head, star, tail = dotted.partition(".*")
    if not star:
        return [(dotted, _section(cfg, dotted))]
    return [part for name in _section(cfg, head)
            for part in _sections(cfg, f"{head}.{name}{tail}")]


def named_paths(cfg: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(setting, path) of every setting of a run config (nested, as `config.expand` gives the
    Build page's dotted settings, or a part of one) that names a file or folder of this
    server: the dataset and its corpus, the imported systems' files, a tokenizer.json
    (`tokenizer`, the tokens chunker's), an embedding model directory (the semantic chunker's
    and each dense retriever's `model`) and a local LLM's GGUF file. Names of bundled
    tokenizers and models are no paths."""
    from ragdash.budget import TOKENIZERS
    from ragdash.config import LLM_SECTIONS
    from ragdash.embeddings import bundled
    from ragdash.llm.local.models import named_model

    out: list[tuple[str, str]] = []

    def add(key: str, value: object, named: Callable[[object], bool] = lambda v: False) -> None:
        if isinstance(value, str | os.PathLike) and str(value).strip() and not named(value):
            out.append((key, str(value)))

    def tokenizer(value: object) -> bool:
        return value in TOKENIZERS

    dataset = _section(cfg, "dataset")
    for field in ("path", "corpus"):
        add(f"dataset.{field}", dataset.get(field))
    add("tokenizer", cfg.get("tokenizer"), tokenizer)
    chunker = _section(cfg, "chunker.params")
    add("chunker.params.tokenizer", chunker.get("tokenizer"), tokenizer)
    add("chunker.params.model", chunker.get("model"), bundled)
    for part in ("params", "resolved"):
        for name, params in _section(cfg, f"retrievers.{part}").items():
            if isinstance(params, Mapping):
                add(f"retrievers.{part}.{name}.model", params.get("model"), bundled)
    for name, system in _section(cfg, "systems").items():  # imported systems' files
        if isinstance(system, Mapping):
            add(f"systems.{name}.file", system.get("file"))
    def model_name(value: object) -> bool:
        """A packaged model's name, or a name that is no path (no folder, no .gguf, no file
        of that name): the local backend says it knows no such model, nothing is read."""
        text = str(value).strip()
        return named_model(text) or not (
            "/" in text or "\\" in text or text.lower().endswith(".gguf")
            or text.startswith(("~", ".")) or Path(text).exists())

    for dotted in LLM_SECTIONS:  # every LLM section of the run specification
        for key, llm in _sections(cfg, dotted):
            if (llm.get("backend") or "local") == "local":
                add(f"{key}.model", llm.get("model"), model_name)
    return out


def refused_config(cfg: Mapping[str, Any]) -> list[str]:
    """Why a run config may not be run from the dashboard: one message per path it names
    (`named_paths`) outside the allowed roots, `<first setting naming it>: <why>`, and one per
    live retriever (`retrievers.custom`) that is not exactly one of the server's config file
    (`ragdash.retrieval.custom.refused`: it would run code or call a service a user chose), and
    one per LLM server off the operator's RAGDASH_LLM_HOSTS (`keys.refused_llm_url`)."""
    from ragdash.llm import keys
    from ragdash.retrieval.custom import refused as refused_live

    out: dict[str, str] = {}
    for key, path in named_paths(cfg):
        try:
            readable(path)
        except OutsideRoots as exc:
            out.setdefault(path, f"{key}: {exc}")
    servers = [why for section in keys.llm_sections(cfg)
               if (why := keys.refused_llm_url(section.get("base_url"), confine=True))]
    return [*out.values(), *refused_live(cfg), *dict.fromkeys(servers)]
