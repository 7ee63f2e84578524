"""`ragdash` command line: parses arguments and calls the pipeline.

One module per sub-command (`add_parser` registers it, `run` runs it): `run_stages` for
`ragdash run` and the stage commands (their options in `options`), `estimate`, `reference`,
`metrics`, `erag`, `stress`, `job`, `sweep`, `evidence`, `synth`, `label` (`labels`), `cache`,
`llm` and `counterfactual`; `on_run` makes the command of a stage on an existing run that
has no module of its own; `parser` puts them together and sets each one's `run`. Nothing else in
ragdash imports this package (tests/test_architecture.py)."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, TextIO

from ragdash.cli.interrupt import restore, sigterm_interrupts
from ragdash.cli.options import overrides_from
from ragdash.cli.parser import build_parser, renamed
from ragdash.exit_watch import reported
from ragdash.terminal import safe

__all__ = ["build_parser", "main", "overrides_from"]


class TerminalFormatter(logging.Formatter):
    """Log lines with the control characters of the text they quote escaped
    (`ragdash.terminal.safe`)."""

    def format(self, record: logging.LogRecord) -> str:
        return safe(super().format(record))


class TerminalStream:
    """A text stream writing through `ragdash.terminal.safe` (no line cut): what a command
    prints of its runs (system, run and labeller names, file content) drives no terminal."""

    def __init__(self, stream: TextIO):
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(safe(text, line_chars=None))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    handler = logging.StreamHandler()
    handler.setFormatter(TerminalFormatter("%(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    logging.getLogger("ragdash").setLevel(logging.INFO)
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(renamed(argv))
    args.argv = argv
    from ragdash.config import ConfigError
    from ragdash.data import DataError

    previous = sigterm_interrupts()
    stdout = sys.stdout
    sys.stdout = TerminalStream(stdout)  # type: ignore[assignment]
    try:
        return args.run(args)
    except (ConfigError, DataError, FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"ragdash: error: {safe(exc)}", file=sys.stderr, flush=True)
        reported()  # a watcher would say it again if Ray now ended the process
        return 2
    except OSError as exc:  # a run directory that is a file, read-only, a full disk
        where = exc.filename or "the run directory"
        print(f"ragdash: error: {safe(where)}: {safe(exc.strerror or exc)} (check --run-dir "
              "and free space; finished stages are kept)", file=sys.stderr, flush=True)
        reported()
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM
        stage = getattr(exc, "stage", None)
        print(f"ragdash: interrupted{f' during stage {stage}' if stage else ''}; finished work "
              "is kept, run again to resume", file=sys.stderr)
        return 130
    finally:
        if isinstance(sys.stdout, TerminalStream) and sys.stdout.stream is stdout:
            sys.stdout = stdout
        restore(previous)
