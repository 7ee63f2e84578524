"""`ragdash llm serve`: serve the bundled (or a given) GGUF model as an OpenAI-compatible
server with llama.cpp."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register `llm` and its `serve` on the `ragdash` subparsers."""
    llm = sub.add_parser("llm", help="local LLM server utilities")
    llm_sub = llm.add_subparsers(dest="llm_command", required=True)
    serve = llm_sub.add_parser("serve", help="serve the local GGUF model (OpenAI-compatible)")
    serve.add_argument("--model", help="GGUF path or 'smollm2' (default: bundled Qwen2.5 0.5B)")
    serve.add_argument("--port", type=int, default=8011)
    return llm


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from ragdash.llm.local import serve

    serve(model=args.model, port=args.port)
    return 0
