"""`python -m ragdash.cli ...`: the `ragdash` command (the dashboard's jobs spawn it this way)."""

import sys

from ragdash.cli import main

sys.exit(main())
