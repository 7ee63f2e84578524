"""The run directory, the interface between the pipeline and the dashboard.

- `files`: every file of a run, declared once (name, writing stage, required columns);
- `io`: atomic writes;
- `calibration`: calibration.json's records (`Calibration`, `ThresholdFit`), typed;
- `manifest`: run.json read in one place (bounded, parsed, its fields' types checked), and the
  config it keeps migrated to today's shape (`spec_version`, the migrations; its typed view is
  `ragdash.run_spec`, above the specification);
- `reader`: how a run's files are read (plain, or the dashboard's cached reader), and `Memo`,
  results kept while the files they read are unchanged;
- `records`: the stages' records in run.json, typed, and the stage table;
- `root`: `RunsRoot`, the runs root and the places its runs share (caches, uploads, datasets);
- `run`: `Run` (manifest, schema-checked reads and writes, typed accessors, stage records)
  and `list_runs`;
- `manage`: renaming and deleting runs safely;
- `lock`: one process at a time runs stages in a run directory (`RunLocked` otherwise).
"""

from ragdash.rundir.files import FILES, MANIFEST, RunFile
from ragdash.rundir.io import atomic_path, read_table, write_json, write_table
from ragdash.rundir.reader import Memo, Reader
from ragdash.rundir.records import StageRecord, stage_table
from ragdash.rundir.run import Run, list_runs

__all__ = ["FILES", "MANIFEST", "Memo", "Reader", "Run", "RunFile", "StageRecord",
           "atomic_path", "list_runs", "read_table", "stage_table", "write_json", "write_table"]
