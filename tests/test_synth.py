"""Synthetic test sets (`ragdash synth`): the stratified sample, reading messy replies, the
verbatim check, near-duplicates, leakage, multi-hop, the dataset file that `ragdash run` takes,
resuming from the reply cache, and faults. A scripted OpenAI-compatible server supplies the
replies, chosen by the document a prompt shows."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from fakes.llm_server import FakeLLMServer, Reply, fast_settings, prompt_of
from fixtures.synth import GOOD, TEXTS, TWO, reply_json, scripted, title_of

from ragdash.chunking import Chunk, chunk_documents
from ragdash.cli import main
from ragdash.data import load_dataset
from ragdash.data.schema import Document
from ragdash.llm.cache import LLMCache
from ragdash.rundir import Run
from ragdash.synth.dedup import near_duplicates
from ragdash.synth.records import Attempt
from ragdash.synth.reply import Reply as Parsed
from ragdash.synth.reply import parse_reply
from ragdash.synth.sample import eligible, sample, stratified
from ragdash.synth.settings import SynthSettings, check
from ragdash.synth.synthesize import synthesize
from ragdash.synth.verify import Verifier, answer_in, states_answer
from ragdash.synth.write import dataset_rows, rejects_path


def documents() -> list[Document]:
    return [Document(k, k, v) for k, v in TEXTS.items()]


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    for k, v in TEXTS.items():
        (d / f"{k}.txt").write_text(v, encoding="utf-8")
    return d


def _cli(server: FakeLLMServer, folder, out, *extra: str) -> int:
    return main(["synth", "--corpus", str(folder), "-o", str(out), "--llm-backend", "openai",
                 "--llm-model", "fake-model", "--llm-url", server.openai_url, "-q", *extra])


# --- step 1: the sample -------------------------------------------------------------------------

def _long_doc(doc_id: str, sentences: int) -> Document:
    text = " ".join(f"{doc_id.title()} fact number {i} says that item {i} of {doc_id} weighs "
                    f"{i * 7} grams and was made in {1900 + i}." for i in range(sentences))
    return Document(doc_id, doc_id, text)


def test_stratified_sample_gives_no_document_more_than_its_share():
    docs = [_long_doc("big", 120), _long_doc("mid", 40), _long_doc("small", 30),
            _long_doc("tiny", 25)]  # 11, 4, 3 and 3 chunks
    items = sample(docs, SynthSettings(n=8, seed=3))
    chunks = [i.chunks[0] for i in items]
    per_doc = Counter(c.doc_id for c in chunks)
    total = Counter(c.doc_id for c in eligible(chunk_documents(docs, "recursive")))
    assert total["big"] > 3 * total["tiny"]  # a random draw would mostly pick "big"
    assert len(items) == 8 and set(per_doc) == {"big", "mid", "small", "tiny"}
    assert max(per_doc.values()) <= math.ceil(8 / 4)
    assert len({c.chunk_id for c in chunks}) == 8  # no chunk twice
    assert [i.qid for i in items][:2] == ["synth-001", "synth-002"]
    again = sample(docs, SynthSettings(n=8, seed=3))
    assert [i.chunks for i in again] == [i.chunks for i in items]  # seeded
    other = sample(docs, SynthSettings(n=8, seed=4))
    assert [i.chunks for i in other] != [i.chunks for i in items]


def test_a_document_that_runs_out_leaves_its_share_to_the_others():
    chunks = [Chunk(f"{d}#{i}", d, d, "x" * 300, 0, 300) for d, k in (("a", 1), ("b", 9))
              for i in range(k)]
    picked = Counter(c.doc_id for c in stratified(chunks, 6, seed=0))
    assert picked == {"a": 1, "b": 5}
    assert len(stratified(chunks, 50, seed=0)) == 10  # never more than there are


def test_short_chunks_are_left_out_unless_all_are_short():
    short, long = (Chunk("a#0", "a", "a", "Contents", 0, 8),
                   Chunk("a#1", "a", "a", "y " * 150, 9, 309))
    assert eligible([short, long]) == [long]
    assert eligible([short]) == [short]


def test_multihop_pairs_a_chunk_with_the_closest_chunk_of_another_document():
    items = sample(documents(), SynthSettings(n=5, multihop=True))
    for item in items:
        a, b = item.chunks
        assert a.doc_id != b.doc_id
    pairs = {frozenset(c.chunk_id for c in i.chunks) for i in items}
    assert len(pairs) == len(items)  # A with B and then B with A would ask the same twice
    seine = next(i for i in items if i.chunks[0].doc_id == "seine")
    assert seine.chunks[1].doc_id in {"rhine", "danube", "louvre", "eiffel"}
    with pytest.raises(ValueError, match="at least two documents"):
        sample(documents()[:1], SynthSettings(n=2, multihop=True))


def test_settings_are_checked():
    for bad in ({"n": 0}, {"n": True}, {"dedup_threshold": 1.5}, {"dedup_threshold": 0},
                {"chunker": "paragraphs"}):
        with pytest.raises(ValueError, match="synth"):
            check(SynthSettings(**bad))


# --- step 2: reading replies ---------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    '```json\n{"question": "Who?", "answer": "Ada", "span": "Ada wrote it."}\n```',
    "{'question': 'Who?', 'answer': 'Ada', 'span': 'Ada wrote it.',}",  # quotes, comma
    'Sure! Here it is: {"Question": "Who?", "Answer": "Ada", "Span": "Ada wrote it."} Enjoy.',
    '{"question": "Who?", "answer": "Ada", "quote": "Ada wrote it."}',  # a synonym
    "Question: Who?\nAnswer: Ada\nSpan: Ada wrote it.",  # labelled lines, no JSON
    '[{"question": "Who?", "answer": "Ada", "span": "Ada wrote it."}]',
])
def test_messy_replies_are_read(text):
    assert parse_reply(text, 1) == Parsed("Who?", "Ada", ("Ada wrote it.",))


def test_unreadable_and_partial_replies():
    assert parse_reply("I am sorry, I cannot help with that.", 1) is None
    assert parse_reply("", 1) is None and parse_reply("{}", 1) is None
    cut = parse_reply('{"question": "Who?", "answer": "Ada", "span": "Ada wro', 1)
    assert cut is not None and cut.spans == ("Ada wro",)  # cut short: mended, then checked
    assert parse_reply('{"question": "Who?", "answer": 1889}', 1) == Parsed("Who?", "1889", ("",))
    two = parse_reply('{"question": "Q?", "answer": "A", "spans": ["s one", "s two"]}', 2)
    assert two is not None and two.spans == ("s one", "s two")
    assert parse_reply('{"question": "Q?", "answer": "A", "span_1": "x", "span 2": "y"}',
                       2).spans == ("x", "y")


# --- step 3: checks -----------------------------------------------------------------------------

def _attempt(doc: str, reply: Parsed | None) -> Attempt:
    text = TEXTS[doc]
    return Attempt("synth-001", (Chunk(f"{doc}#0", doc, doc, text, 0, len(text)),),
                   raw="...", reply=reply)


@pytest.mark.parametrize("reply, reason", [
    (None, "unparsable"),
    (Parsed("", "1889", ("It was completed in 1889.",)), "empty"),
    (Parsed("When?", "1889", ("",)), "empty"),
    (Parsed("When, in 1889, was it completed?", "1889", ("It was completed in 1889.",)),
     "circular"),
    (Parsed("Was the Eiffel Tower completed in 1889?", "the Eiffel Tower",
            ("It was completed in 1889.",)), "circular"),  # 'the' dropped, words kept whole
    (Parsed("When was it completed?", "1889", ("in 1889",)), "span_too_short"),
    (Parsed("When was it completed?", "1889", ("The tower was finished in 1889 for the fair.",)),
     "span_not_verbatim"),  # invented: close to the text, not in it
    (Parsed("Who built it?", "Gustave Eiffel", ("It was completed in 1889 as the entrance "
                                               "arch to the World's Fair.",)),
     "answer_not_in_span"),
])
def test_checks_reject_with_the_first_reason(reply, reason):
    a = _attempt("eiffel", reply)
    Verifier(documents()).check(a)
    assert not a.kept and a.reason == reason and a.why()


def test_only_an_answer_stated_as_whole_words_makes_a_question_circular():
    assert states_answer("Which river, the Seine, flows through Paris?", "The Seine.")
    assert not states_answer("What happened in 18890?", "1889")  # part of a longer number
    assert not states_answer("Was it finished in 1889?", "yes")  # yes/no answers aside
    assert not states_answer("Who designed it?", "Gustave Eiffel")


def test_a_verbatim_span_is_stored_as_the_documents_own_text_with_offsets():
    a = _attempt("eiffel", Parsed(*GOOD["eiffel"][:2], (GOOD["eiffel"][2],)))
    Verifier(documents()).check(a)
    assert a.kept and a.reason is None
    [part] = a.parts
    expected = "It was completed in 1889 as the entrance arch to the World's Fair"
    assert part.text == expected != GOOD["eiffel"][2]  # case and spacing of the document
    assert TEXTS["eiffel"][part.start:part.end] == expected and part.chunk_id == "eiffel#0"
    stop = _attempt("seine", Parsed("How long is it?", "777 kilometres",
                                    ('"The river is 777 kilometres long!"',)))
    Verifier(documents()).check(stop)  # quotes and a wrong end mark are forgiven
    assert stop.kept and stop.parts[0].text == "The river is 777 kilometres long"


def test_the_occurrence_inside_the_chunk_is_taken_first():
    text = "Paris is big. " * 3 + "The river is long and wide. " + "Paris is big. " * 3
    doc = Document("d", "d", text)
    later = text.rindex("Paris is big.")
    chunk = Chunk("d#1", "d", "d", text[later - 14:], later - 14, len(text))
    a = Attempt("synth-001", (chunk,), reply=Parsed("How is Paris?", "big", ("Paris is big.",)))
    Verifier([doc]).check(a)
    assert a.kept and a.parts[0].start >= chunk.start


def test_answer_consistency():
    assert answer_in("The Danube is 2,850 kilometres long.", "2,850 Kilometres")
    assert answer_in("It flows into the North Sea.", "The North Sea")
    assert answer_in("Gustave Eiffel's company designed the tower.", "Eiffel's company")
    assert not answer_in("It was completed in 1889.", "1930")
    assert not answer_in("It was completed in 1889.", "the")


def test_near_duplicates_name_the_kept_question():
    questions = ["When was the Eiffel Tower completed?", "How long is the Danube?",
                 "In what year was the Eiffel Tower finished?", "Who designed the Eiffel Tower?",
                 "How long is the Danube?"]
    dups = near_duplicates(questions, 0.9)
    assert dups[0] is None and dups[1] is None and dups[3] is None  # same subject, other fact
    assert dups[2][0] == 0 and 0.9 <= dups[2][1] < 1.0
    assert dups[4][0] == 1 and dups[4][1] == pytest.approx(1.0, abs=1e-4)
    assert near_duplicates(questions, 0.999)[2] is None  # the threshold is the setting
    assert near_duplicates([], 0.9) == []


# --- the whole run, against a scripted server -------------------------------------------------

def test_synthesize_keeps_verbatim_pairs_and_says_why_others_are_rejected():
    dup = reply_json("When was the Eiffel Tower completed?", "777 kilometres",
                "The river is 777 kilometres long.")
    with FakeLLMServer(default=scripted(
            louvre=reply_json("When was the Louvre built?", "1850",
                         "The Louvre was built by Napoleon in 1850."),
            seine=dup, rhine="I am sorry, I cannot help with that.",
            danube="```json\n{'question': 'How long is the Danube?', 'answer': '2,850 "
                   "kilometres', 'span': 'The Danube is 2,850 kilometres long.',}\n```"))as srv:
        result = synthesize(documents(), SynthSettings(n=5), fast_settings(srv))
        assert len(srv.chat_requests()) == 5
    by_doc = {a.chunks[0].doc_id: a for a in result.attempts}
    assert by_doc["louvre"].reason == "span_not_verbatim"
    assert by_doc["rhine"].reason == "unparsable" and by_doc["rhine"].raw.startswith("I am")
    assert by_doc["danube"].kept  # messy JSON, still read
    dup_pair = [by_doc["eiffel"], by_doc["seine"]]
    assert sorted(a.reason or "kept" for a in dup_pair) == ["duplicate", "kept"]
    assert "cosine" in next(a for a in dup_pair if a.reason).detail
    s = result.summary()
    assert (s["generated"], s["kept"], s["acceptance"]) == (5, 2, 0.4)
    assert s["reasons"] == {"unparsable": 1, "span_not_verbatim": 1, "duplicate": 1}
    assert s["model"] == "fake-model" and s["prompt_version"]


def test_leakage_check_rejects_what_the_model_answers_without_the_document():
    def closed_book(body: dict) -> str:
        return "It was completed in 1889." if "Eiffel" in prompt_of({"body": body}) else "?"

    responder = scripted()
    with FakeLLMServer(default=lambda b: responder(b) if title_of(b) else closed_book(b)) as srv:
        result = synthesize(documents(), SynthSettings(n=5, check_leakage=True),
                            fast_settings(srv))
        asked = [prompt_of(r) for r in srv.chat_requests()]
    assert len(asked) == 10 and sum(p.startswith("Respond to the query") for p in asked) == 5
    leaked = [a for a in result.attempts if a.reason == "leaked"]
    assert [a.chunks[0].doc_id for a in leaked] == ["eiffel"]
    assert "1889" in leaked[0].detail and len(result.kept) == 4


def test_multihop_questions_have_two_parts_from_two_documents():
    def two(body: dict) -> str:
        t1, t2 = TWO.search(prompt_of({"body": body})).groups()
        first, second = GOOD[t1][2], GOOD[t2][2]
        if t1 == "seine":  # given in the other order: still accepted
            first, second = second, first
        return json.dumps({"question": f"{GOOD[t1][0][:-1]} and {GOOD[t2][0]}",
                           "answer": GOOD[t2][1], "span_1": first, "span_2": second})

    with FakeLLMServer(default=two) as srv:
        result = synthesize(documents(), SynthSettings(n=4, multihop=True), fast_settings(srv))
        assert '"span_2"' in prompt_of(srv.chat_requests()[0])
    assert len(result.kept) == 4
    for row in dataset_rows(result):
        assert row["hops"] == 2 and len(row["relevant_parts"]) == 2
        assert len(set(row["parts_doc_ids"])) == 2
        for part, doc, s, e in zip(row["relevant_parts"], row["parts_doc_ids"],
                                   row["parts_start"], row["parts_end"], strict=True):
            assert TEXTS[doc][s:e] == part


def test_server_errors_are_recorded_not_fatal():
    with FakeLLMServer(default=scripted(louvre=Reply(status=500))) as srv:
        result = synthesize(documents(), SynthSettings(n=5), fast_settings(srv, retries=1))
    failed = [a for a in result.attempts if a.reason == "llm_error"]
    assert [a.chunks[0].doc_id for a in failed] == ["louvre"]
    assert "server error 500" in failed[0].detail and len(result.kept) == 4


def test_cli_writes_a_dataset_that_ragdash_run_scores(folder, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "synth.jsonl"
    reply = reply_json("When was it built?", "1850", "Napoleon built it in 1850.")
    with FakeLLMServer(default=scripted(louvre=reply)) as srv:
        assert _cli(srv, folder, out, "--n", "5") == 0
    printed = capsys.readouterr().out
    assert "at most 1 per document" in printed and "Estimate, questions: 5 calls" in printed
    assert "Kept 4 of 5 generated pairs (80% accepted)" in printed
    assert "span_not_verbatim" in printed and "Evaluate with: ragdash run" in printed
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4 and {r["source"] for r in rows} == {"synth"}
    for r in rows:
        assert {"parts_doc_ids", "parts_start", "parts_end", "synth_chunk_ids", "synth_model",
                "synth_prompt"} <= set(r) and r["synth_model"] == "fake-model"
    rejects = [json.loads(line) for line in rejects_path(out).read_text().splitlines()]
    assert [r["reason"] for r in rejects] == ["span_not_verbatim"]
    assert rejects[0]["spans"] == ["Napoleon built it in 1850."] and rejects[0]["reply"]

    data = load_dataset(out, corpus=folder)  # the generic loader takes it as it is
    assert len(data.examples) == 4 and not data.issues
    assert main(["run", "--dataset", str(out), "--corpus", str(folder), "--retrievers", "bm25",
                 "--chunker", "none", "--budgets", "50,100", "--run-dir", str(tmp_path / "r"),
                 "-q"]) == 0
    run = Run(tmp_path / "r")
    assert sorted(run.read("examples")["qid"]) == sorted(r["id"] for r in rows)
    ir = run.read("ir_scores")
    assert set(ir["qid"]) == {r["id"] for r in rows} and ir["score"].max() == 1.0


def test_an_interrupted_run_resumes_from_the_cache(folder, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "s.jsonl"
    served = []

    def until_refused(body: dict) -> Reply | str:
        served.append(1)
        return scripted()(body) if len(served) <= 2 else Reply(status=401)

    with FakeLLMServer(default=until_refused) as srv:
        assert _cli(srv, folder, out, "--n", "5") == 2  # a refused key stops the run
    assert "run the same command again to resume" in capsys.readouterr().err
    assert not out.exists()
    with LLMCache(tmp_path / "runs" / "_llm_cache.sqlite") as cache:
        finished = len(cache)
    assert finished == 2
    with FakeLLMServer(default=scripted()) as srv:
        assert _cli(srv, folder, out, "--n", "5") == 0
        assert len(srv.chat_requests()) == 5 - finished  # only what was not finished
    first = out.read_text()
    with FakeLLMServer(default=Reply(status=500)) as srv:
        assert _cli(srv, folder, out, "--n", "5") == 0
        assert srv.chat_requests() == []  # everything from the cache
    assert out.read_text() == first


def test_dry_run_and_bad_inputs(folder, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with FakeLLMServer(default=scripted()) as srv:
        assert _cli(srv, folder, tmp_path / "o.jsonl", "--n", "3", "--dry-run",
                    "--check-leakage") == 0
        assert srv.chat_requests() == []
        printed = capsys.readouterr().out
        assert "Estimate, questions: 3 calls" in printed
        assert "Estimate, leakage check (at most): 3 calls" in printed
        assert not (tmp_path / "o.jsonl").exists()
        assert _cli(srv, folder, tmp_path / "o.jsonl", "--n", "0") == 2
        assert "n must be a whole number" in capsys.readouterr().err
        assert _cli(srv, tmp_path / "missing", tmp_path / "o.jsonl") == 2
        one = tmp_path / "one"
        one.mkdir()
        (one / "a.txt").write_text(TEXTS["seine"])
        assert _cli(srv, one, tmp_path / "o.jsonl", "--multihop") == 2
        assert "at least two documents" in capsys.readouterr().err
    with FakeLLMServer(default="no JSON here at all") as srv:
        assert _cli(srv, folder, tmp_path / "none.jsonl", "--n", "2") == 1
    captured = capsys.readouterr()
    assert "no pair was kept" in captured.err and "unparsable" in captured.out


def test_the_command_options_are_made_from_the_settings_declaration(tmp_path, capsys):
    """Issue 48 §3: `ragdash synth`'s options are `SynthSettings`' fields (their defaults
    written once, there); a value it refuses is named before the corpus is read."""
    from ragdash.cli.parser import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices["synth"]
    options = {a.dest: a for a in sub._actions}
    assert set(SynthSettings.model_fields) <= set(options)
    assert all(options[name].default is None for name in SynthSettings.model_fields)
    assert f"(default {SynthSettings().n})" in options["n"].help
    assert main(["synth", "--corpus", str(tmp_path / "none"), "-o", str(tmp_path / "o.jsonl"),
                 "--n", "0"]) == 2
    assert "synth: n must be a whole number from 1 to 100000, not 0" in capsys.readouterr().err
