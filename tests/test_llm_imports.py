"""The LLM package loads lazily (import cycles: tests/test_architecture.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LLM_DIR = Path(__file__).resolve().parent.parent / "ragdash" / "llm"
HEAVY = ("ragdash.llm.judge", "ragdash.llm.generate", "ragdash.llm.local",
         "ragdash.llm.local.models", "ragdash.llm.local.server", "ragdash.llm.factory")


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=LLM_DIR.parent.parent)
    return set(out.stdout.split())


@pytest.mark.parametrize("statement", ["import ragdash.config", "import ragdash.llm",
                                       "from ragdash.llm.settings import LLMSettings"])
def test_light_imports_load_neither_judge_nor_local_server_nor_generation(statement):
    loaded = _loaded_after(statement)
    assert not loaded & set(HEAVY)
    assert not loaded & {"openai", "ollama", "langchain_core", "llama_cpp"}


def test_public_names_still_import_from_the_package():
    from ragdash.llm import LocalServer, judge_answers, open_chat_model
    from ragdash.llm.judge import judge_answers as defined
    from ragdash.llm.local.server import LocalServer as server_class

    assert judge_answers is defined and LocalServer is server_class and callable(open_chat_model)


def test_every_name_in_all_resolves():
    import ragdash.llm as llm

    for name in llm.__all__:
        assert getattr(llm, name) is not None, name
    assert set(llm.__all__) <= set(dir(llm))

