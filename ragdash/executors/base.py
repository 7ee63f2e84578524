"""Where a stage's per-batch work runs: the `Executor` contract, the in-process `LocalExecutor`
(the default: one call over the whole frame, exactly what the stages did before executors) and
the `executor` config section.

A batch function takes a DataFrame and returns one: `fn(batch, *args, progress=None, **kwargs)`,
or a class built once per worker with `cls(*args, **kwargs)` (it holds a model or an index)
whose instances are called `instance(batch, progress=None)`. It must be pure: its output
depends on its batch alone, so the executor may cut the frame anywhere and the results,
reassembled in input order, are those of one call over the whole frame. `progress` is the
stage's (message, done, total) callback where the batch runs in this process, else None.

Nothing here imports Ray: `ragdash.executors.ray_data` (the optional `ray` extra) does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Protocol, get_args

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

Progress = Callable[[str, int, int], None]
BatchFn = Callable[..., pd.DataFrame] | type

class Executor(Protocol):
    """Runs a pure batch function over a frame and returns its output in input order."""

    name: str
    in_process: bool  # batches run in this process (progress and open objects reach them)

    def workers(self) -> int: ...

    def map_batches(self, frame: pd.DataFrame, fn: BatchFn, *, batch_size: int,
                    args: tuple = (), kwargs: Mapping[str, Any] | None = None,
                    progress: Progress | None = None, label: str = "") -> pd.DataFrame: ...

    def close(self) -> None: ...


def call_batch(fn: BatchFn, batch: pd.DataFrame, args: tuple, kwargs: Mapping[str, Any] | None,
               progress: Progress | None = None) -> pd.DataFrame:
    """`fn` on one batch: a function with its arguments, or a class built and then called."""
    if isinstance(fn, type):
        return fn(*args, **(kwargs or {}))(batch, progress=progress)
    return fn(batch, *args, progress=progress, **(kwargs or {}))


class LocalExecutor:
    """The default: the batch function called once, in this process, on the whole frame."""

    name = "local"
    in_process = True

    def workers(self) -> int:
        return 1

    def map_batches(self, frame: pd.DataFrame, fn: BatchFn, *, batch_size: int,
                    args: tuple = (), kwargs: Mapping[str, Any] | None = None,
                    progress: Progress | None = None, label: str = "") -> pd.DataFrame:
        """`fn` over the whole frame (`batch_size` only matters to executors that split)."""
        return call_batch(fn, frame, args, kwargs, progress)

    def close(self) -> None:
        """Nothing to release."""


def batch_size(executor: Executor, rows: int, most: int, per_worker: int = 2) -> int:
    """Rows per batch: `per_worker` batches for every worker (so a slow batch does not leave
    the others idle), at most `most` rows each, at least one row."""
    return max(1, min(most, math.ceil(rows / (per_worker * executor.workers()))))


Kind = Literal["local", "ray"]
MAX_WORKERS = 10_000
"""The most batches a Ray executor runs at once (`executor.workers`); no more run than there
are batches."""
KINDS: tuple[str, ...] = get_args(Kind)


class ExecutorSpec(BaseModel):
    """The `executor` section of the run specification: where stages run, local or on Ray;
    unknown keys refused. Never part of a stage key: results do not depend on where they were
    computed."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True,
                              use_attribute_docstrings=True)

    kind: Kind = "local"
    """local (this process) or ray (a Ray cluster, docs/speed-and-scale.md)."""
    address: str | None = None
    """Ray only: None (a Ray instance on this machine), auto, or ray://host:port."""
    workers: Annotated[int, Field(ge=1, le=MAX_WORKERS)] | None = None
    """Ray only: batches run at once (None: the cluster's CPUs)."""
    runtime_env: dict[str, Any] | None = None
    """Ray only: passed to ray.init, e.g. {working_dir: ., env_vars: {...}}."""
    actors: bool = False
    """Ray only: an actor pool per stage builds each batch class (false: Ray tasks)."""

    @model_validator(mode="after")
    def _check(self) -> ExecutorSpec:
        if self.address is not None and self.address != "auto" and not host_port(self.address):
            raise ValueError(f"executor.address must be 'auto', 'ray://host:port' or "
                             f"'host:port', not {self.address!r}")
        if self.kind == "local" and (self.address or self.workers or self.runtime_env
                                     or self.actors):
            raise ValueError("executor.address, workers, runtime_env and actors apply to the "
                             "ray executor only: set executor.kind: ray (or --executor ray)")
        return self


def check(section: ExecutorSpec | Mapping[str, Any] | None) -> ExecutorSpec:
    """The `executor` section, typed with defaults filled in; ValueError naming the bad key."""
    if isinstance(section, ExecutorSpec):
        return section
    return ExecutorSpec.model_validate({k: v for k, v in (section or {}).items()})


def host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a Ray address "host:port" or "ray://host:port", else None."""
    host, _, port = address.strip().removeprefix("ray://").rpartition(":")
    host = host.strip("[]")  # an IPv6 literal
    return (host, int(port)) if host and port.isdigit() and 0 < int(port) < 65536 else None
