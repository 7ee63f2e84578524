"""Jobs: a pipeline run, a sweep or a task (question generation, finding evidence) started by
the dashboard, run as a `ragdash job` process.

The dashboard does not run stages in its own process: `spawn` starts `python -m ragdash.cli job
--run-dir R` in a session of its own (a restart of the dashboard does not end it; stdout and
stderr go to `R/job.log`), and the process reports its progress in the run's manifest, under
`job` (a sweep's, in `<sweep root>/sweep.json`; a task's, in `<job folder>/task.json` beside
the task itself): state, the current step with done/total and an
ETA, a short log, its pid and times. Anyone can then follow it from disk (`status`), after a
restart of the dashboard too, and `cancel` it (SIGTERM to its process group, SIGKILL after a
grace period): the running stage is recorded as interrupted, finished stages and LLM replies
are kept, and starting again resumes.

The run's lock (`rundir.lock`) is taken before the process starts and handed over to it, so
that two starts of one run, from two users or a user and the CLI, cannot both go on.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragdash.config import SPEC_VERSION
from ragdash.exit_watch import reported
from ragdash.llm import keys
from ragdash.retrieval.custom import key_variables as live_key_variables
from ragdash.rundir import MANIFEST, Run, write_json
from ragdash.rundir import lock as run_lock
from ragdash.rundir.manifest import MAX_MANIFEST_BYTES, ManifestError, load_json
from ragdash.rundir.run import MANIFEST_LOCK, error_text, now
from ragdash.stages import REGISTRY
from ragdash.terminal import safe

KEY = "job"
SWEEP = "sweep.json"
TASK = "task.json"
"""The record of a task job (`TASKS`): the task as queued under `task`, the job under `job`."""
LOG = "job.log"
API_KEY_ENV = "RAGDASH_JOB_API_KEY"
"""The environment variable that hands the dashboard's API key to the job process (never argv,
which `ps` shows to every user, never a file)."""
KINDS = ("build", "llm", "sweep", "synth", "evidence")
TASKS = ("synth", "evidence")
"""The kinds whose work is a task of its own (`ragdash.synth.task`, `ragdash.evidence.task`),
not a run's stages."""
ACTIVE = ("starting", "running")
NICE = 10
"""The job process's CPU niceness (absolute, never added to what it inherited): a long job
yields the CPU to the pages of every user, and one started from a server that is itself
niced stays at this level instead of sinking to 19."""
JOB_ENV_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR",
    "TEMP", "TMP", "PWD", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "CI", "OLLAMA_HOST",
    "OPENAI_BASE_URL", "TOKENIZERS_PARALLELISM", "SSL_CERT_FILE", "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "JAVA_HOME", "SENTENCE_TRANSFORMERS_HOME",
    "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"})
JOB_ENV_PREFIXES = ("RAGDASH_", "LC_", "PYTHON", "XDG_", "HF_", "TRANSFORMERS_", "TORCH",
                    "OMP_", "MKL_", "OPENBLAS_", "NUMEXPR_", "RAY_", "CUDA", "COVERAGE_")
"""The variables a job process inherits from the dashboard (what Python, the models and the
executors read), besides the key variables its LLM sections may use (`keys.needed_variables`)."""
INTERRUPTED_SHOWN = 24 * 3600
"""How long (seconds since its last report) the dashboard lists an interrupted job, waiting to
be resumed."""


def kept(kind: object) -> str:
    """What a stopped job keeps, said in its record: a task keeps its finished LLM calls (the
    reply cache), a run its finished stages too."""
    return "finished LLM replies are kept" if kind in TASKS else \
        "finished stages and LLM replies are kept"


def record_file(home: Path | str) -> Path:
    """Where the job of `home` reports: a sweep root's sweep.json, a task's task.json, else the
    run's manifest."""
    home = Path(home)
    for name in (SWEEP, TASK):
        if (home / name).exists():
            return home / name
    return home / MANIFEST


def _read_file(path: Path) -> dict:
    """A job file ({} when it cannot be read): a run.json bounded as every reader of it is."""
    try:
        return _existing(path)
    except (OSError, ValueError):  # ManifestError too
        return {}


def _existing(path: Path) -> dict:
    """The job file about to be updated: {} when there is none yet; ManifestError when it exists
    but is no JSON object within the bounds (too large, damaged, a list), so such a run.json is
    refused untouched, never replaced by a job record. A readable object with fields the run's
    reader refuses (a newer spec_version) keeps them and gains the record, which says why the
    job failed."""
    try:
        data = load_json(path, MAX_MANIFEST_BYTES if path.name == MANIFEST else None)
    except FileNotFoundError:
        return {}
    except ManifestError:
        raise
    except (OSError, ValueError) as exc:
        raise ManifestError(f"{path} cannot be read: {exc}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{path} cannot be read: its top level is not an object")
    return data


def record(home: Path | str) -> dict:
    """The job record of `home` as written ({} when it never had a job)."""
    job = _read_file(record_file(home)).get(KEY)
    return job if isinstance(job, dict) else {}


def write(home: Path | str, **fields: object) -> None:
    """Update the job record of `home` (atomically; the manifest's other keys are kept)."""
    path = record_file(home)
    with MANIFEST_LOCK:
        data = _existing(path)
        data[KEY] = {**(data.get(KEY) or {}), **fields}
        write_json(path, data)


@dataclass(frozen=True)
class Status:
    """What the job of a run is doing, read from disk.

    `state`: starting | running | finished | failed | cancelled, or `interrupted` when the
    record says it runs but no process holds the run's lock any more (it was killed, or the
    machine restarted): starting again resumes it."""

    home: Path
    state: str
    kind: str = "build"
    stages: tuple[str, ...] = ()
    runs: tuple[Path, ...] = ()
    message: str = ""
    done: int = 0
    total: int = 0
    eta: float | None = None
    eta_low: float | None = None
    eta_high: float | None = None
    """The range of the time left (`Reporter.time_left`), None in a record written before it."""
    eta_includes: tuple[str, ...] = ()
    """The planned stages after the current one that `eta` counts."""
    log: tuple[str, ...] = ()
    error: str | None = None
    pid: int | None = None
    started: float = 0.0
    ended: float | None = None
    result: Mapping[str, object] | None = None
    """What a finished task job left for the page (`ragdash.synth.task.run_task`)."""

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def elapsed(self) -> float:
        return max(0.0, (self.ended or time.time()) - self.started)


def status(home: Path | str) -> Status | None:
    """The job of `home` (None if it never had one)."""
    home = Path(home)
    rec = record(home)
    if not rec:
        return None
    state = str(rec.get("state", "failed"))
    ended = rec.get("ended_ts")
    if state in ACTIVE and run_lock.holder(home) is None and home not in _killing:
        # a job writes how it ended before it lets the lock go: one that ended between the two
        # reads above has its final record now (read as interrupted, a job that had just failed
        # was shown so)
        rec = record(home) or rec
        state = str(rec.get("state", "failed"))
        ended = rec.get("ended_ts")
        if state in ACTIVE:
            state = "interrupted"  # it ended when it last reported
            ended = rec.get("heartbeat_ts") or rec.get("started_ts")
    try:
        return Status(
            home=home, state=state, kind=str(rec.get("kind", "build")),
            stages=tuple(map(str, rec.get("stages") or ())),
            runs=tuple(Path(p["run_dir"]) for p in rec.get("planned") or ()),
            message=str(rec.get("message", "")), done=int(rec.get("done") or 0),
            total=int(rec.get("total") or 0), eta=_number(rec.get("eta")),
            eta_low=_number(rec.get("eta_low")), eta_high=_number(rec.get("eta_high")),
            eta_includes=tuple(map(str, rec.get("eta_includes") or ())),
            log=tuple(map(str, rec.get("log") or ())), error=_text(rec.get("error")),
            pid=int(rec["pid"]) if rec.get("pid") else None,
            started=_number(rec.get("started_ts")) or 0.0, ended=_number(ended),
            result=rec["result"] if isinstance(rec.get("result"), dict) else None)
    except (TypeError, ValueError, KeyError):  # a record edited by hand, or by another tool
        return Status(home=home, state="failed", error=f"{record_file(home)}: the job record "
                      "is not one ragdash wrote (start the run again)")


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def jobs_under(root: Path | str, seconds: float = 600) -> list[Status]:
    """The jobs of the runs (and sweeps) directly under `root` that are active, or ended in the
    last `seconds` (interrupted ones: in the last `INTERRUPTED_SHOWN`), oldest first."""
    root = Path(root)
    if not root.is_dir():
        return []
    homes = {p.parent for pattern in (f"*/{MANIFEST}", f"*/{SWEEP}") for p in root.glob(pattern)}
    now_ = time.time()
    out = [s for s in map(status, sorted(homes)) if s is not None and (
        s.active or now_ - (s.ended or now_) < (INTERRUPTED_SHOWN if s.state == "interrupted"
                                                 else seconds))]
    return sorted(out, key=lambda s: s.started)


def spawn(home: Path | str, kind: str, cfg: dict | None = None,
          stages: Sequence[str] = (), planned: Sequence = (),
          api_key: str | None = None,
          plan: Mapping[str, Mapping[str, float]] | None = None,
          task: Mapping[str, object] | None = None) -> Status:
    """Start the job of `home` as a `ragdash job` process: `cfg` and `stages` for a run,
    `planned` (`sweep.Planned`) for a sweep whose root is `home`, `task` for a task kind
    (`TASKS`) whose folder is `home`. The lock of `home` is taken here and handed to the
    process; `RunLocked` if another process holds it. `api_key` goes to the process in its
    environment only."""
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    fd = run_lock.acquire(home)
    try:
        queue(home, kind, cfg, stages, planned, plan, task)
        env = job_environment(_configs(cfg, planned, task), api_key)
        with open(home / LOG, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "ragdash.cli", "job", "--run-dir", str(home),
                 "--lock-fd", str(fd)], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=env, pass_fds=(fd,), start_new_session=True)
    except BaseException:
        run_lock.release(home)
        raise
    run_lock.hand_over(home)  # the process holds it now, and writes its pid in the record
    threading.Thread(target=proc.wait, name=f"ragdash-reap-{proc.pid}", daemon=True).start()
    return status(home)  # type: ignore[return-value]


def job_environment(configs: Sequence[object], api_key: str | None = None,
                    environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a job process: `JOB_ENV_NAMES` and `JOB_ENV_PREFIXES` of the
    dashboard's, the key variables its `configs` may use (allowed for their endpoints, never a
    variable or URL a dashboard user chose), `api_key` (typed by the user) under `API_KEY_ENV`,
    and `keys.CONFINE_ENV` on, so that the job sends an environment key only where allowed."""
    env = os.environ if environ is None else environ
    out = {k: v for k, v in env.items() if k != API_KEY_ENV and (
        k in JOB_ENV_NAMES or k.startswith(JOB_ENV_PREFIXES))}
    out.update({var: env[var] for var in keys.needed_variables(configs, env)})
    out.update({var: env[var] for var in live_key_variables(configs, env)})  # the server's
    out[keys.CONFINE_ENV] = "1"
    if api_key:
        out[API_KEY_ENV] = api_key
    return out


def _configs(cfg: dict | None, planned: Sequence, task: Mapping[str, object] | None) -> list:
    return [c for c in (cfg, task, *(p.cfg for p in planned)) if c is not None]


def queue(home: Path, kind: str, cfg: dict | None = None, stages: Sequence[str] = (),
          planned: Sequence = (), plan: Mapping[str, Mapping[str, float]] | None = None,
          task: Mapping[str, object] | None = None) -> None:
    """Write the job record that `ragdash job` then runs (the caller holds the run's lock):
    a run's config goes into its manifest, a sweep's runs into `<root>/sweep.json`, a task
    into `<home>/task.json`. `plan`:
    {stage: {calls, seconds}} estimated before the start (`ragdash.planning.stage_plan`), which
    the ETA counts for the stages the job has not reached."""
    if kind not in KINDS:
        raise ValueError(f"unknown job kind '{kind}' (kinds: {', '.join(KINDS)})")
    if kind == "sweep":
        write_json(home / SWEEP, {KEY: {}})
    elif kind in TASKS:
        if task is None:
            raise ValueError(f"a {kind} job needs its task")
        write_json(home / TASK, {KEY: {}, "task": dict(task)})
    elif cfg is None:
        raise ValueError("a run's job needs its config")
    else:
        Run(home).create(cfg, SPEC_VERSION)
    write(home, kind=kind, state="starting", stages=list(stages), pid=None, error=None,
          planned=[{"name": p.name, "run_dir": str(p.run_dir), "values": p.values,
                    "cfg": p.cfg} for p in planned],
          message="starting", done=0, total=0, eta=None, log=[], started=now(),
          started_ts=time.time(), ended_ts=None, plan=dict(plan or {}), eta_includes=[],
          result=None)


def cancellable(s: Status) -> bool:
    """Whether `s` is a job process this module started and can end: active, and its pid holds
    the run's lock and leads its own process group (a `ragdash` command a user typed does not)."""
    if not s.active or not s.pid:
        return False
    try:
        return run_lock.holder(s.home) == s.pid and os.getpgid(s.pid) == s.pid
    except ProcessLookupError:
        return False


_killing: set[Path] = set()
"""The jobs this process is killing (between the SIGKILL and their record saying cancelled)."""


def cancel(home: Path | str, grace: float = 10.0) -> bool:
    """Stop the job of `home`: SIGTERM to its process group (the process records the running
    stage as interrupted and the job as cancelled), SIGKILL after `grace` seconds if it has not
    ended (the record is then marked here). False if there is no job process to stop."""
    s = status(home)
    if s is None or not cancellable(s):
        return False
    pid = int(s.pid)  # type: ignore[arg-type]
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    threading.Thread(target=_kill_after, args=(Path(home), pid, grace),
                     name=f"ragdash-cancel-{pid}", daemon=True).start()
    return True


def _kill_after(home: Path, pid: int, grace: float) -> None:
    """SIGKILL the job's process group if it still holds the run after `grace` seconds, then
    record it cancelled (its running stage interrupted)."""
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if run_lock.holder(home) != pid:
            return
        time.sleep(0.1)
    _killing.add(home)  # read as still running here until recorded as cancelled
    try:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        for _ in range(100):
            if run_lock.holder(home) is None:
                break
            time.sleep(0.05)
        else:
            return
        with run_lock.locked(home):
            if (home / MANIFEST).exists() and not (home / SWEEP).exists():
                run = Run(home)
                for name, s in run.manifest.get("stages", {}).items():
                    if s.get("status") == "running":
                        run.set_stage(name, status="interrupted", error="cancelled")
            write(home, state="cancelled", error="cancelled (killed after it did not stop "
                  f"within {grace:.0f} s): {kept(record(home).get('kind'))}, start again to "
                  "resume", ended_ts=time.time())
    finally:
        _killing.discard(home)


# --- the time left, as a range --------------------------------------------------------------------
# The time left of a job, as a range: the current step's items at the rate measured over its
# last ETA_WINDOW seconds *and* at least ETA_MIN_ITEMS items (a 2-minute window held 2 to 6 slow
# LLM calls on a loaded machine, and the figure swung 21 → 75 → 29 → 63 → 18 minutes), give or
# take twice the standard deviation of the items left's total time; the estimated time per call of a
# priced stage (the dry run's, `ragdash.planning.stage_plan`) weighs as a prior of
# ETA_PRIOR_CALLS items; the stages not reached yet count their estimated time scaled by how much
# slower (or faster) than estimated the priced stages ran so far, a stepwise judge up to twice
# (each partly correct answer asks a second question, which the dry run leaves out).
#
# Pure functions: `Reporter` feeds them (time, done) points and writes what they say to the
# job record.

ETA_WINDOW = 120.0
"""Seconds of recent progress the rate is measured over at least, once a step has run that
long: a step whose first items were fast (replies from the cache, short questions) would
otherwise promise minutes for what takes a quarter of an hour."""
ETA_MIN_ITEMS = 20
"""Items the rate is measured over at least (the window reaches further back until it holds
them, or to the step's start): a mean of 20 calls moves by a twentieth when one leaves it."""
ETA_PRIOR_CALLS = 10
"""How many items' worth of weight the estimated time per call (the job's `plan`) has against
the measured rate of a planned stage: the first call of a local model also starts its server,
and alone it would promise hours."""
SPREAD = 2.0
"""The range is the time left ± this many of its standard deviations."""
STEPWISE_ASKS = 2
"""A stepwise judge asks each answer one question, and a partly correct one a second: its
estimate (of the first questions) is a lower bound, this many times it the upper."""


@dataclass(frozen=True)
class TimeLeft:
    """Seconds left: `low` ≤ `seconds` ≤ `high`, and the planned stages they count."""

    seconds: float
    low: float
    high: float


@dataclass
class Step:
    """One step's progress: (time, done) points at least a second apart, from its start."""

    since: float
    done0: int
    points: list[tuple[float, int]] = field(default_factory=list)

    def add(self, t: float, done: int) -> None:
        if not self.points or t - self.points[-1][0] >= 1.0:
            self.points.append((t, done))
            del self.points[:-2000]

    def window(self, t: float, done: int) -> tuple[float, int, list[float], list[int]]:
        """(seconds, items) of the last ETA_WINDOW seconds holding ETA_MIN_ITEMS items (else
        the whole step), with the time per item of each stretch between points, and its items
        (a stretch without progress counted in the next)."""
        base = (self.since, self.done0)
        for p in reversed(self.points):
            if t - p[0] >= ETA_WINDOW and done - p[1] >= ETA_MIN_ITEMS:
                base = p
                break
        stretches, weights = [], []
        last = base
        for p in [*(p for p in self.points if p[0] > base[0]), (t, done)]:
            if p[1] > last[1]:
                stretches.append((p[0] - last[0]) / (p[1] - last[1]))
                weights.append(p[1] - last[1])
                last = p
        return t - base[0], done - base[1], stretches, weights


def per_item(step: Step, t: float, done: int) -> tuple[float, float, int] | None:
    """The measured seconds per item of the step's window, their standard deviation (items'
    times vary: a call without context is quick) and the window's items; None before an item
    is done."""
    spent, made, stretches, weights = step.window(t, done)
    if made <= 0 or spent <= 0:
        return None
    mean = spent / made
    if len(stretches) < 2:
        return mean, mean, made  # one stretch: as uncertain as the figure itself
    n = sum(weights)
    var = sum(w * (x - mean) ** 2 for x, w in zip(stretches, weights, strict=True)) / n
    return mean, math.sqrt(var), made


def blend(prior: float | None, measured: float | None, n: int) -> float | None:
    """The measured time per item weighed against the estimated one (worth ETA_PRIOR_CALLS
    items)."""
    if prior is None:
        return measured
    if measured is None:
        return prior
    return (ETA_PRIOR_CALLS * prior + n * measured) / (ETA_PRIOR_CALLS + n)


def step_left(left: int, prior: tuple[float, float] | None,
              measured: tuple[float, float, int] | None, n: int) -> TimeLeft | None:
    """The current step's time left: `left` items at the measured time per item (`per_item`)
    blended with the estimated one (`n`: the step's items done). Its range: ± SPREAD standard
    deviations of the sum of `left` items' times, the window mean's own error (sd / √k, for
    every item left) and the items' spread about it (√left · sd) together, and the prior's own
    range (low, high: a stepwise judge's estimate is a lower bound)."""
    mean, sd, k = measured if measured is not None else (None, 0.0, 1)
    lo_prior, hi_prior = prior if prior is not None else (None, None)
    mid = blend(lo_prior, mean, n)
    if mid is None:
        return None
    half = 0.0 if mean is None or left <= 0 else \
        SPREAD * sd * math.sqrt(1 / max(k, 1) + 1 / left)  # per item left
    lo = blend(lo_prior, None if mean is None else max(mean - half, 0.0), n) or 0.0
    hi = blend(hi_prior, None if mean is None else mean + half, n) or 0.0
    return TimeLeft(left * mid, left * min(lo, mid), left * max(hi, mid))


def ahead_left(planned: float, factor: float, stepwise_judge: bool) -> TimeLeft:
    """A stage not reached yet: its estimated `planned` seconds times `factor` (measured over
    estimated time of the priced stages so far); the range from the estimate to the scaled
    figure, a stepwise judge's upper end times STEPWISE_ASKS."""
    mid = planned * factor
    high = max(planned, mid) * (STEPWISE_ASKS if stepwise_judge else 1)
    return TimeLeft(mid, min(planned, mid), high)


def total(parts: list[TimeLeft]) -> TimeLeft:
    return TimeLeft(sum(p.seconds for p in parts), sum(p.low for p in parts),
                    sum(p.high for p in parts))


STAGE_WORDS = {s.name: s.work for s in REGISTRY if s.work}
"""How the ETA names the planned stages it counts ahead of the current one (`Stage.work`)."""
PLANNED_STEPS = {s.name: s.step for s in REGISTRY if s.step}
"""The progress step of each stage whose items are the calls its plan prices (`Stage.step`)."""


class Reporter:
    """The job process's progress callback: writes the current step to the job record, at most
    every `interval` seconds (and at each new step), with a log of the steps and the time left
    as a range (`Reporter.time_left`): the current step's at its measured rate, weighed with the
    estimated time per call when the job's `plan` prices the stage, plus the estimated time of
    the planned stages it has not reached (`eta_includes`), scaled by how the priced stages ran
    against their estimate."""

    def __init__(self, home: Path, interval: float = 1.0):
        self.home, self.interval = home, interval
        self.started = time.time()
        self.message, self.done, self.total = "starting", 0, 0
        self.step = Step(self.started, 0)
        self.written = 0.0
        self.log: list[str] = []
        plan = record(home).get("plan")
        self.plan: dict[str, tuple[int, float]] = {
            str(k): (int(v.get("calls") or 0), float(v.get("seconds") or 0.0))
            for k, v in (plan.items() if isinstance(plan, dict) else ())
            if isinstance(v, dict) and _number(v.get("seconds")) is not None}
        self.stepwise = bool(self.plan) and _judge_mode(home) == "stepwise"
        self.stage: str | None = None  # the stage running now, when the plan prices one
        self.reached: set[str] = set()
        self.ran: list[tuple[float, int]] = []  # (measured / estimated, items) of priced steps
        self._lock = threading.Lock()

    def __call__(self, message: str, done: int, total: int) -> None:
        with self._lock:
            t = time.time()
            new = message != self.message
            if new:
                self.say(message, t)
                self._close(t)
                self.step = Step(t, done)
                self._locate(message)
            else:
                self.step.add(t, done)
            self.message, self.done, self.total = message, done, total
            if new or t - self.written >= self.interval:
                self.flush(t)

    def _locate(self, message: str) -> None:
        """Which planned stage runs now (the manifest's running stage), and which it passed
        (ran, or said to be up to date)."""
        if not self.plan:
            return
        self.reached |= {s for s in self.plan if message.startswith(f"{s}: up to date")}
        stages = Run(self.home).manifest.get("stages", {}) if (self.home / MANIFEST).exists() \
            else {}
        running = [n for n, r in stages.items()
                   if isinstance(r, dict) and r.get("status") == "running"]
        self.stage = running[0] if running else None
        if self.stage:
            self.reached.add(self.stage)

    def say(self, line: str, t: float | None = None) -> None:
        """Add a line to the job's log (sweeps report each run this way)."""
        t = time.time() if t is None else t
        self.log.append(f"{t - self.started:6.1f}s  {line}")
        del self.log[:-40]

    def ahead(self) -> list[str]:
        """The planned stages the job has not reached yet."""
        return [s for s in self.plan if s not in self.reached]

    def _per_call(self) -> float | None:
        """The estimated seconds per call of the step running now, when the plan prices it."""
        if self.stage is None or PLANNED_STEPS.get(self.stage) != self.message:
            return None
        calls, seconds = self.plan[self.stage]
        return seconds / calls if calls and seconds else None

    def _ratio(self, t: float) -> tuple[float, int] | None:
        """(measured / estimated time per call, items) of the priced step running now."""
        prior, measured = self._per_call(), per_item(self.step, t, self.done)
        if prior is None or measured is None:
            return None
        return measured[0] / prior, self.done - self.step.done0

    def _close(self, t: float) -> None:
        """The step ends: keep how it ran against its estimate."""
        if (ratio := self._ratio(t)) is not None:
            self.ran.append(ratio)

    def factor(self, t: float | None = None, current: bool = True) -> float:
        """How much longer than estimated the priced steps take (1: as estimated), the
        estimate weighing as ETA_PRIOR_CALLS items of its own; `current`: the step running
        now counted too."""
        t = time.time() if t is None else t
        ran = [*self.ran, *filter(None, [self._ratio(t) if current else None])]
        n = sum(k for _, k in ran)
        return (ETA_PRIOR_CALLS + sum(r * k for r, k in ran)) / (ETA_PRIOR_CALLS + n)

    def time_left(self, t: float | None = None) -> TimeLeft | None:
        """The time left (`Reporter.time_left`): None before two points unless the plan prices the
        step."""
        t = time.time() if t is None else t
        if not self.total:
            return None
        before = self.factor(t, current=False)  # how the steps before this one ran
        per_call = self._per_call()
        prior = None if per_call is None else (
            per_call * before,
            per_call * max(before, 1.0) * (STEPWISE_ASKS if self.stepwise and
                                           self.stage == "judge" else 1))
        now = step_left(self.total - self.done, prior,
                            per_item(self.step, t, self.done), self.done - self.step.done0)
        if now is None:
            return None
        factor = self.factor(t)
        return total([now, *(ahead_left(self.plan[s][1], factor,
                                                self.stepwise and s == "judge")
                                 for s in self.ahead())])

    def eta(self, t: float | None = None) -> float | None:
        """Seconds left (`time_left`'s middle figure)."""
        left = self.time_left(t)
        return None if left is None else left.seconds

    def flush(self, t: float | None = None) -> None:
        t = time.time() if t is None else t
        self.written = t
        left = self.time_left(t)
        write(self.home, message=self.message, done=self.done, total=self.total,
              eta=None if left is None else left.seconds,
              eta_low=None if left is None else left.low,
              eta_high=None if left is None else left.high, eta_includes=self.ahead(),
              log=list(self.log), heartbeat_ts=t)


def _judge_mode(home: Path) -> str | None:
    """How the run's judge asks (its config's `judge.mode`), None for a job without a run."""
    from ragdash.run_spec import run_spec

    try:
        return run_spec(Run(home)).judge.mode \
            if (home / MANIFEST).exists() else None
    except (ValueError, OSError):
        return None


def run_job(home: Path | str, lock_fd: int | None = None, nice: int = 0) -> int:
    """The body of `ragdash job`: run what the job record of `home` asks for, reporting
    progress there; the exit status (0 finished, 1 failed, 130 cancelled). `lock_fd`: the run's
    lock handed over by the dashboard (else it is taken here: `RunLocked` if held). `nice`:
    the niceness this process runs at (`lower_priority`; the command uses `NICE`)."""
    home = Path(home)
    if nice:
        lower_priority(nice)
    if lock_fd is None:
        run_lock.acquire(home)
    else:
        run_lock.adopt(home, lock_fd)
    try:
        return _run(home, os.environ.pop(API_KEY_ENV, None) or None)
    finally:
        run_lock.release(home)


def lower_priority(level: int) -> int:
    """Set this process's niceness to `level` once, as an absolute value: never raised back
    (a process already nicer keeps its level) and never stacked on an inherited one, as
    `os.nice` would. Returns the niceness it runs at."""
    current = os.getpriority(os.PRIO_PROCESS, 0)
    if level > current:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, min(level, 19))
    return os.getpriority(os.PRIO_PROCESS, 0)


def _run(home: Path, api_key: str | None) -> int:
    """`run_job` once the run's lock is held (the record is written before it is let go, so
    that a finished job never reads as interrupted). A run's config is read as every saved one
    is (`rundir.manifest.migrated_config`: its version checked, then migrated)."""
    from ragdash.rundir.manifest import migrated_config
    from ragdash.stages.runner import run_stages
    from ragdash.sweep import Planned, run_sweep

    rec = record(home)
    report = Reporter(home)
    write(home, state="running", pid=os.getpid(), started_ts=time.time(), error=None)
    try:
        if rec.get("kind") == "sweep":
            planned = [Planned(p["name"], Path(p["run_dir"]), p["values"], p["cfg"])
                       for p in rec.get("planned") or ()]
            run_sweep(planned, progress=report, say=report.say)
        elif rec.get("kind") in TASKS:
            task = _read_file(home / TASK).get("task") or {}
            write(home, result=_run_task(str(rec["kind"]), task, report, api_key))
        else:
            manifest = Run(home).manifest  # ManifestError: the file and the reason
            if "config" not in manifest:
                raise ValueError(f"{home / MANIFEST} has no config to run")
            run_stages(migrated_config(manifest), home, stages=rec.get("stages") or None,
                       progress=report, api_key=api_key)
    except KeyboardInterrupt as exc:  # SIGTERM (cancel) or Ctrl-C
        stage = getattr(exc, "stage", None)
        report.say("cancelled")
        _end(home, report, "cancelled", "cancelled" + (f" during stage {stage}" if stage else "")
             + f": {kept(rec.get('kind'))}, start again to resume")
        return 130
    except BaseException as exc:  # recorded for the dashboard, and said in job.log
        print(f"ragdash: error: {safe(error_text(exc))}", file=sys.stderr, flush=True)
        reported()  # else the run's watcher says it, if Ray ends this process now
        _end(home, report, "failed", error_text(exc))
        return 1
    report.say("finished")
    _end(home, report, "finished", None)
    return 0


def _run_task(kind: str, task: dict, report: Reporter, api_key: str | None) -> dict:
    """The work of a task job; what it leaves for the page."""
    if kind == "synth":
        from ragdash.synth.task import SynthTask
        from ragdash.synth.task import run_task as synth

        return synth(SynthTask.from_dict(task), progress=report, api_key=api_key)
    from ragdash.evidence.task import EvidenceTask
    from ragdash.evidence.task import run_task as evidence

    return evidence(EvidenceTask.from_dict(task), progress=report, api_key=api_key)


def _end(home: Path, report: Reporter, state: str, error: str | None) -> None:
    # a full disk, or a run.json made unreadable meanwhile: the record then reads as interrupted
    with contextlib.suppress(OSError, ManifestError):
        report.flush()
        write(home, state=state, error=error, ended_ts=time.time(), eta=None, eta_low=None,
              eta_high=None)
