"""Where stages run their per-batch work: in this process (`LocalExecutor`, the default) or on a
Ray cluster (`RayExecutor` in `ragdash.executors.ray_data`, the optional `ray` extra).

    executor = make_executor(spec.executor)      # ExecutorSpec(kind="local") or kind="ray"
    out = executor.map_batches(frame, fn, batch_size=256, args=(...))

Stages get theirs from `StageContext.executor`; results are the same either way.
"""

from collections.abc import Mapping
from typing import Any

from ragdash.executors.base import (
    KINDS,
    BatchFn,
    Executor,
    ExecutorSpec,
    LocalExecutor,
    batch_size,
    call_batch,
    check,
)


def make_executor(section: ExecutorSpec | Mapping[str, Any] | None) -> Executor:
    """The executor a run's `executor` section asks for (Ray is imported only for `ray`)."""
    s = check(section)
    if s.kind == "local":
        return LocalExecutor()
    from ragdash.executors.ray_data import RayExecutor

    return RayExecutor(address=s.address, workers=s.workers, runtime_env=s.runtime_env,
                       actors=s.actors)


__all__ = ["KINDS", "BatchFn", "Executor", "ExecutorSpec", "LocalExecutor", "batch_size",
           "call_batch", "check", "make_executor"]
