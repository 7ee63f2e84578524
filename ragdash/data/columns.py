"""Column mapping: which column of a user's table holds the question, the answer, the id (and
the relevant parts or the gold answers), when they are not named as ragdash names them.

Written `question=Frage,answer=Antwort,id=Nr` on the command line (`--columns`) or as a mapping
in the config (`dataset.columns`); the Data page offers `guess` as its first choice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

ROLES = ("question", "answer", "id", "relevant_parts", "answers")
"""What a column can be mapped to (question and answer are needed, the others optional)."""
REQUIRED = ("question", "answer")

_HINTS: dict[str, tuple[str, ...]] = {
    # a header holding one of these words (after lower-casing) is a likely column for the role;
    # the words are those of common Q&A sheets in English, German, French, Spanish and Italian
    "question": ("question", "frage", "query", "prompt", "pregunta", "domanda", "questions",
                 "fragen", "q"),
    "answer": ("answer", "antwort", "reponse", "réponse", "respuesta", "risposta", "response",
               "reply", "ground truth", "ground_truth", "expected", "solution", "lösung",
               "answers", "antworten", "a"),
    "id": ("id", "qid", "nr", "no", "number", "num", "key", "nummer", "numéro", "#", "ticket",
           "case", "item", "identifier", "uid", "uuid", "record", "ref"),
}


def parse_columns(value: object, where: str = "dataset.columns") -> dict[str, str] | None:
    """A mapping {role: column name} from a mapping or a `role=column,...` text; None for
    None/empty. ValueError naming `where` on an unknown role, an empty or a reused column, or a
    missing question/answer."""
    if value is None or (isinstance(value, str | Mapping) and not value):
        return None
    if isinstance(value, str):
        pairs = [p for p in value.split(",") if p.strip()]
        bad = [p for p in pairs if "=" not in p]
        if bad:
            raise ValueError(f"{where}: {bad[0].strip()!r} is not ROLE=COLUMN (e.g. "
                             "question=Frage,answer=Antwort,id=Nr)")
        value = dict(p.split("=", 1) for p in pairs)
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be a mapping or ROLE=COLUMN,... text, not {value!r}")
    out: dict[str, str] = {}
    for role, column in value.items():
        role = str(role).strip()
        if role not in ROLES:
            raise ValueError(f"{where}: unknown role {role!r}; roles: {', '.join(ROLES)}")
        if not isinstance(column, str | int) or isinstance(column, bool) or \
                not str(column).strip():
            raise ValueError(f"{where}.{role} must name a column, not {column!r}")
        out[role] = str(column).strip()
    missing = [r for r in REQUIRED if r not in out]
    if missing:
        raise ValueError(f"{where} must name the {' and the '.join(missing)} column "
                         f"(e.g. question=Frage,answer=Antwort)")
    reused = sorted({c for c in out.values() if list(out.values()).count(c) > 1})
    if reused:
        raise ValueError(f"{where}: column {reused[0]!r} is given for more than one role")
    return out


def describe(mapping: Mapping[str, str]) -> str:
    """The `role=column,...` text of a mapping (what --columns takes)."""
    return ",".join(f"{r}={c}" for r, c in mapping.items())


def _words(name: str) -> set[str]:
    low = name.strip().lower()
    return {low, *re.split(r"[\s_\-./:()]+", low)} - {""}


def guess(columns: Sequence[str]) -> dict[str, str | None]:
    """{question, answer, id: the column whose header names it best, or None}: an exact
    (case-insensitive) hint first, then a header holding a hint of two letters or more as a
    word; no column twice."""
    out: dict[str, str | None] = {}
    taken: set[str] = set()
    for role in ("question", "answer", "id"):
        hints = _HINTS[role]
        free = [c for c in columns if c not in taken]
        exact = [c for c in free if c.strip().lower() in hints]
        word = [c for c in free if _words(c) & {h for h in hints if len(h) > 1}]
        pick = (exact or word or [None])[0]
        out[role] = pick
        if pick is not None:
            taken.add(pick)
    return out
