"""The run directory, the interface between the pipeline and the dashboard.

- `files`: every file of a run, declared once (name, writing stage, required columns);
- `io`: atomic writes;
- `config`: the run's configuration as a frozen typed view;
- `run`: `Run` (manifest, schema-checked reads and writes, typed accessors, stage records)
  and `list_runs`;
- `manage`: renaming and deleting runs safely;
- `lock`: one process at a time runs stages in a run directory (`RunLocked` otherwise).
"""

from ragdash.rundir.config import RunConfig
from ragdash.rundir.files import FILES, MANIFEST, RunFile
from ragdash.rundir.io import atomic_path, read_table, write_json, write_table
from ragdash.rundir.run import Run, list_runs

__all__ = ["FILES", "MANIFEST", "Run", "RunConfig", "RunFile", "atomic_path", "list_runs",
           "read_table", "write_json", "write_table"]
