"""Batch functions on a Ray cluster through Ray Data (the optional `ray` extra).

The frame is cut into batches of `batch_size` rows, one Ray Data block each
(`ray.data.from_items` → `map_batches` → streamed back with `iter_batches`), run `workers` at a
time as Ray tasks (`TaskPoolStrategy`). Each batch travels as the pickled DataFrame itself, so
a batch function sees exactly the frame the local executor would give it (no Arrow round trip
changing dtypes or turning lists into arrays), and the outputs are put back in input order by
batch number. The embedding settings in effect on the driver (precision, the disk cache under
the runs root) are entered on the worker around every call.

A batch class (holding the embedding model or a retriever's index) is built once per worker
process and kept there for its next batches and for later stages (`_built`), so a run loads
MiniLM once per worker, not once per stage. With `actors=True` each stage gets a Ray Data
actor pool instead (`ActorPoolStrategy`), which starts (imports, loads the model) anew for
every stage: 1.6x slower end to end on `configs/paper.yaml --limit 8` here (75 s against 46 s,
retrieval 41 s against 11 s; `benchmarks/bench_ray.py compare --limit 8 --actors`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import math
import os
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pandas as pd

from ragdash import embeddings
from ragdash.executors.base import BatchFn, Progress, call_batch, host_port

log = logging.getLogger("ragdash")
CONNECT_TIMEOUT_S = 10.0
"""How long a Ray head may take to accept a connection before the run stops."""
ANSWER_TIMEOUT_S = 5.0
"""How long a head that accepted the connection may take to answer as one (its GCS), within
CONNECT_TIMEOUT_S in all: a port that accepts connections but is no Ray head stops the run."""
GCS_WAIT_ENV = "RAY_gcs_server_port_wait_time_s"
"""Ray's own budget (seconds, about one attempt each) for reaching the head's GCS in `ray.init`
(20 attempts when unset)."""


class RayExecutor:
    """Runs batch functions on the Ray cluster at `address` (None: a Ray instance started on
    this machine, or the one already initialised in this process), `workers` at a time;
    batch classes on actor pools when `actors`."""

    name = "ray"
    in_process = False

    def __init__(self, address: str | None = None, workers: int | None = None,
                 runtime_env: Mapping[str, Any] | None = None, actors: bool = False):
        if importlib.util.find_spec("ray") is None:
            raise RuntimeError("the ray executor needs Ray: pip install 'ragdash[ray]' "
                               "(or pip install -r requirements-ray.txt)")
        self.address, self.runtime_env = address, dict(runtime_env or {}) or None
        self._workers = workers
        self.actors = actors
        self._started = False  # this executor called ray.init (so it shuts Ray down)

    def _ray(self):
        import ray

        if not ray.is_initialized():
            deadline = time.monotonic() + CONNECT_TIMEOUT_S
            _check_reachable(self.address, CONNECT_TIMEOUT_S)
            try:
                with _gcs_wait(self.address, min(deadline - time.monotonic(),
                                                 ANSWER_TIMEOUT_S)):
                    ray.init(address=self.address, runtime_env=self.runtime_env,
                             include_dashboard=False, log_to_driver=False,
                             logging_level=logging.WARNING)
            except ConnectionError as exc:
                raise RuntimeError(
                    f"cannot reach the Ray cluster at {self.address!r}: the port accepts "
                    f"connections but no Ray head answered within {ANSWER_TIMEOUT_S:g} s "
                    f"({exc}); check the address (the head's GCS port, 6379 unless `ray start "
                    "--port` says otherwise) and that the head node is up") from None
            self._started = True
            log.info("ray: connected (%s CPUs)", ray.cluster_resources().get("CPU"))
        import ray.data  # after connecting: an unreachable head is reported a second sooner

        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False  # the stage's own progress reports batches
        ctx.print_on_execution_start = False
        ctx.raise_original_map_exception = True  # a batch's ValueError reaches the caller
        logging.getLogger("ray.data").setLevel(logging.WARNING)
        # not the notice, at every run, that the progress bars are off
        logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)
        return ray

    def workers(self) -> int:
        """Batches run at once: `workers`, else every CPU of the cluster."""
        if self._workers:
            return self._workers
        return max(1, int(self._ray().cluster_resources().get("CPU", 1)))

    def map_batches(self, frame: pd.DataFrame, fn: BatchFn, *, batch_size: int,
                    args: tuple = (), kwargs: Mapping[str, Any] | None = None,
                    progress: Progress | None = None, label: str = "") -> pd.DataFrame:
        """`fn` over batches of `batch_size` rows on the cluster; the outputs concatenated in
        input order. An empty frame is passed to `fn` here (nothing to spread)."""
        if frame.empty:
            return call_batch(fn, frame, args, kwargs)
        ray = self._ray()
        from ray import cloudpickle

        size = max(1, int(batch_size))
        items = [{"batch": i, "rows": len(part), "frame": cloudpickle.dumps(part)}
                 for i, part in enumerate(frame.iloc[s: s + size]
                                          for s in range(0, len(frame), size))]
        ds = ray.data.from_items(items, override_num_blocks=len(items))
        settings = embeddings.active_settings()
        if settings.cache_dir is not None:  # a worker's working directory is not ours
            settings = embeddings.EmbeddingSettings(settings.precision,
                                                    settings.cache_dir.resolve())
        at_once = min(self.workers(), len(items))
        if isinstance(fn, type) and self.actors:
            ds = ds.map_batches(_OnActor, batch_size=1, batch_format="pandas",
                                fn_constructor_args=(fn, args, kwargs, settings),
                                compute=ray.data.ActorPoolStrategy(size=at_once))
        else:
            ds = ds.map_batches(_on_task, batch_size=1, batch_format="pandas",
                                fn_args=(fn, args, kwargs, settings),
                                compute=ray.data.TaskPoolStrategy(size=at_once))
        results: dict[int, pd.DataFrame] = {}
        done = 0
        for out in ds.iter_batches(batch_size=None, batch_format="pandas"):
            for i, rows, blob in out[["batch", "rows", "frame"]].itertuples(index=False):
                results[int(i)] = cloudpickle.loads(blob)
                done += int(rows)
                if progress:
                    progress(label, done, len(frame))
        missing = set(range(len(items))) - set(results)
        if missing:
            raise RuntimeError(f"ray: {len(missing)} of {len(items)} batches came back empty")
        return concat([results[i] for i in range(len(items))])

    def close(self) -> None:
        """Shut Ray down if this executor started it (a session someone else opened stays)."""
        if self._started:
            import ray

            ray.shutdown()
            self._started = False


def _check_reachable(address: str | None, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """RuntimeError unless a TCP connection to `address` ("host:port" or "ray://host:port")
    opens within `timeout` seconds and what accepts it answers as a Ray head does (gRPC, an
    HTTP/2 server) within ANSWER_TIMEOUT_S: `ray.init` itself retries an unreachable head for
    minutes, and a port that is no Ray head for longer. None and "auto" (this machine's Ray,
    found by Ray itself) are not checked here; with `RAY_USE_TLS` only the connection is."""
    if not address or address == "auto":
        return
    target = host_port(address)
    if target is None:
        raise RuntimeError(f"Ray address {address!r} is not host:port or ray://host:port")
    try:
        sock = socket.create_connection(target, timeout=timeout)
    except OSError as exc:
        raise RuntimeError(f"cannot reach the Ray cluster at {address!r} within {timeout:g} s "
                           f"({exc}); check the address and that the head node is up") from None
    with sock:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return
        answer = _http2_answer(sock, ANSWER_TIMEOUT_S)
    if answer is None:
        raise RuntimeError(f"the Ray head at {address!r} accepted the connection but did not "
                           f"answer within {ANSWER_TIMEOUT_S:g} s; check the address and the "
                           "head node")
    if not answer:
        raise RuntimeError(f"{address!r} accepts connections but is no Ray head (it does not "
                           "answer as one, over gRPC); check the port: the head's GCS port "
                           "(6379 unless `ray start --port` says otherwise), or ray://host:10001 "
                           "for Ray Client")


HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes(3) + b"\x04" + bytes(5)
"""A client's HTTP/2 connection preface and an empty SETTINGS frame: an HTTP/2 server (a Ray
head's gRPC) answers with a SETTINGS frame of its own."""


def _http2_answer(sock: socket.socket, timeout: float) -> bool | None:
    """Whether the server on `sock` answers the HTTP/2 preface with a SETTINGS frame (frame
    type 4, in the 9-byte frame header); None when it says nothing within `timeout` s."""
    sock.settimeout(timeout)
    head = b""
    try:
        sock.sendall(HTTP2_HELLO)
        while len(head) < 9:
            chunk = sock.recv(9 - len(head))
            if not chunk:
                return False
            head += chunk
    except TimeoutError:
        return None
    except OSError:  # reset: it closed the connection on a greeting it does not speak
        return False
    return head[3] == 4


@contextlib.contextmanager
def _gcs_wait(address: str | None, seconds: float) -> Iterator[None]:
    """Within the block (`ray.init`), Ray's attempts to reach the GCS at a checked `address`
    stop after about `seconds` (one attempt a second, at least one), unless
    `RAY_gcs_server_port_wait_time_s` is set already. None and "auto" (a Ray started or found
    on this machine) keep Ray's own budget: a head starting here may need it."""
    if not address or address == "auto" or GCS_WAIT_ENV in os.environ:
        yield
        return
    os.environ[GCS_WAIT_ENV] = str(max(1, math.floor(seconds)))
    try:
        yield
    finally:
        os.environ.pop(GCS_WAIT_ENV, None)


def concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Batch outputs in order as one frame; empty outputs left out (their all-object columns
    would change the dtypes of the rest), one kept when every output is empty."""
    kept = [f for f in frames if len(f)] or frames[:1]
    return kept[0].reset_index(drop=True) if len(kept) == 1 else \
        pd.concat(kept, ignore_index=True)


def _each(batch: pd.DataFrame, run: Callable[[pd.DataFrame], pd.DataFrame],
          settings: embeddings.EmbeddingSettings) -> pd.DataFrame:
    """On a worker: unpickle each batch of the block, run it, pickle its output."""
    from ray import cloudpickle

    out = []
    with embeddings.embedding_settings(settings.cache_dir, settings.precision):
        for i, rows, blob in batch[["batch", "rows", "frame"]].itertuples(index=False):
            out.append({"batch": int(i), "rows": int(rows),
                        "frame": cloudpickle.dumps(run(cloudpickle.loads(blob)))})
    return pd.DataFrame(out, columns=["batch", "rows", "frame"])


_BUILT: OrderedDict[bytes, Any] = OrderedDict()
"""Batch classes built in this worker process, by class and arguments (the latest few)."""
KEEP_BUILT = 2


def _built(cls: type, args: tuple, kwargs: Mapping[str, Any] | None) -> Any:
    """`cls(*args, **kwargs)`, built once per worker process and kept for its next batches and
    for a later stage asking for the same (at most KEEP_BUILT kept: an index is freed when
    two others were built since)."""
    from ray import cloudpickle

    key = hashlib.sha256(cloudpickle.dumps((cls, args, dict(kwargs or {})))).digest()
    if key in _BUILT:
        _BUILT.move_to_end(key)
        return _BUILT[key]
    while len(_BUILT) >= KEEP_BUILT:
        _BUILT.popitem(last=False)
    _BUILT[key] = instance = cls(*args, **(kwargs or {}))
    return instance


def _on_task(batch: pd.DataFrame, fn: BatchFn, args: tuple, kwargs: Mapping[str, Any] | None,
             settings: embeddings.EmbeddingSettings) -> pd.DataFrame:
    """A Ray task: the batch function (a class: built once in this worker) on the batches of
    one block."""
    if isinstance(fn, type):
        with embeddings.embedding_settings(settings.cache_dir, settings.precision):
            instance = _built(fn, args, kwargs)
        return _each(batch, lambda frame: instance(frame, progress=None), settings)
    return _each(batch, lambda frame: call_batch(fn, frame, args, kwargs), settings)


class _OnActor:
    """A Ray actor: the batch class built once (model or index loaded), then called per batch."""

    def __init__(self, cls: type, args: tuple, kwargs: Mapping[str, Any] | None,
                 settings: embeddings.EmbeddingSettings):
        self.settings = settings
        with embeddings.embedding_settings(settings.cache_dir, settings.precision):
            self.instance = cls(*args, **(kwargs or {}))

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        return _each(batch, lambda frame: self.instance(frame, progress=None), self.settings)
