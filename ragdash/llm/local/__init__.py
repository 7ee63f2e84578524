"""The offline local LLMs: GGUF models served by `llama_cpp.server` on 127.0.0.1.

- `ragdash.llm.local.models`: the packaged models (assembled from PyPI part packages, sha256
  checked), `ensure_model`, `model_alias`, `resolve_model`;
- `ragdash.llm.local.server`: `LocalServer` (a server for a `with` block), `serve` (in the
  foreground) and `LazyLocalBackend` (started on the first request that misses the cache).

Loaded only when asked for: `import ragdash.llm` does not load it.
"""

from __future__ import annotations

from ragdash.llm.local.models import (
    PACKAGED,
    QWEN,
    QWEN_1_5B,
    SMOLLM2_ALIAS,
    ModelError,
    PackagedModel,
    ensure_model,
    missing_packages,
    model_alias,
    model_parts,
    models_dir,
    packaged_model,
    resolve_model,
    smollm2_path,
)
from ragdash.llm.local.server import (
    LazyLocalBackend,
    LocalServer,
    free_port,
    serve,
    server_command,
)

__all__ = [
    "PACKAGED", "QWEN", "QWEN_1_5B", "SMOLLM2_ALIAS", "LazyLocalBackend", "LocalServer",
    "ModelError", "PackagedModel", "ensure_model", "free_port", "missing_packages",
    "model_alias", "model_parts", "models_dir", "packaged_model", "resolve_model", "serve",
    "server_command", "smollm2_path",
]
