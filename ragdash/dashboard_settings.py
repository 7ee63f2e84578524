"""The dashboard's environment variables, parsed and checked in one place (no streamlit here:
`ragdash.ui.state` passes in what it needs from Streamlit's configuration)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

MAX_UPLOAD_ENV = "RAGDASH_MAX_UPLOAD_MB"
DEFAULT_MAX_UPLOAD_MB = 200
UPLOAD_CEILING_MB = 4096
"""The most an upload may be: each one is held in memory while it is checked and hashed."""


def max_upload_mb(environ: Mapping[str, str] | None = None,
                  server_limit_mb: int | None = None) -> int:
    """Megabytes one upload may have: `RAGDASH_MAX_UPLOAD_MB` (unset or blank: 200, or
    Streamlit's `server.maxUploadSize` when that is lower). ValueError naming the variable, its
    value and what is allowed unless it is a whole number from 1 to 4096 and at most
    `server_limit_mb` (Streamlit refuses anything larger before ragdash sees it)."""
    raw = (os.environ if environ is None else environ).get(MAX_UPLOAD_ENV)
    bound = UPLOAD_CEILING_MB if server_limit_mb is None else \
        min(UPLOAD_CEILING_MB, server_limit_mb)
    if raw is None or not raw.strip():
        return min(DEFAULT_MAX_UPLOAD_MB, bound)
    text = raw.strip()
    allowed = f"a whole number of megabytes from 1 to {bound} (unset: {DEFAULT_MAX_UPLOAD_MB})"
    if not re.fullmatch(r"[0-9]+", text) or int(text) < 1:
        raise ValueError(f"{MAX_UPLOAD_ENV}={raw!r} is not a positive whole number: set it to "
                         f"{allowed}")
    value = int(text)
    if value > UPLOAD_CEILING_MB:
        raise ValueError(f"{MAX_UPLOAD_ENV}={raw!r} is above {UPLOAD_CEILING_MB} MB, the most "
                         f"ragdash takes (an upload is held in memory): set it to {allowed}")
    if server_limit_mb is not None and value > server_limit_mb:
        raise ValueError(f"{MAX_UPLOAD_ENV}={raw!r} is above Streamlit's own upload limit, "
                         f"server.maxUploadSize = {server_limit_mb} MB: raise that as well "
                         f"(`streamlit run app.py --server.maxUploadSize {value}`, or "
                         f".streamlit/config.toml) or set {MAX_UPLOAD_ENV} to {allowed}")
    return value
