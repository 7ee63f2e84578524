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
from typing import Any, Protocol

import pandas as pd

Progress = Callable[[str, int, int], None]
BatchFn = Callable[..., pd.DataFrame] | type

KINDS = ("local", "ray")
DEFAULTS: dict[str, Any] = {"kind": "local", "address": None, "workers": None,
                            "runtime_env": None, "actors": False}
"""The `executor` config section: `kind` (local or ray), and for Ray the cluster `address`
(None: start a Ray instance on this machine; "auto"; "ray://host:10001"), `workers` (batches
run at once; None: the cluster's CPUs), `runtime_env` (passed to `ray.init`, e.g.
{working_dir: ., env_vars: {...}}) and `actors` (true: a Ray Data actor pool per stage builds
each batch class; false: Ray tasks, each worker process builds it once and keeps it for later
stages). Never part of a stage key: results do not depend on where they were computed."""


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


def check(section: Mapping[str, Any] | None) -> dict[str, Any]:
    """The `executor` section with defaults filled in; ValueError naming the bad key."""
    out = {**DEFAULTS, **(section or {})}
    unknown = set(out) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"executor: unknown key(s) {sorted(unknown)}; known: "
                         f"{', '.join(DEFAULTS)}")
    if out["kind"] not in KINDS:
        raise ValueError(f"executor.kind must be one of {', '.join(KINDS)}, not {out['kind']!r}")
    workers = out["workers"]
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ValueError(f"executor.workers must be a positive whole number, not {workers!r}")
    address = out["address"]
    if address is not None and not (address == "auto" or (isinstance(address, str)
                                                          and host_port(address))):
        raise ValueError(f"executor.address must be 'auto', 'ray://host:port' or "
                         f"'host:port', not {address!r}")
    if out["runtime_env"] is not None and not isinstance(out["runtime_env"], dict):
        raise ValueError("executor.runtime_env must be a mapping (Ray's runtime environment)")
    if not isinstance(out["actors"], bool):
        raise ValueError(f"executor.actors must be true or false, not {out['actors']!r}")
    if out["kind"] == "local" and (address or workers or out["runtime_env"] or out["actors"]):
        raise ValueError("executor.address, workers, runtime_env and actors apply to the ray "
                         "executor only: set executor.kind: ray (or --executor ray)")
    return out


def host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a Ray address "host:port" or "ray://host:port", else None."""
    host, _, port = address.strip().removeprefix("ray://").rpartition(":")
    host = host.strip("[]")  # an IPv6 literal
    return (host, int(port)) if host and port.isdigit() and 0 < int(port) < 65536 else None
