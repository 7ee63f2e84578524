"""Evidence for answers written in other words (`ragdash.evidence.align`): a paraphrase, a
two-sentence answer drawing on two documents, a fact found nowhere, the verbatim path unchanged,
the LLM's support check (a scripted server, broken replies included) and the records."""

from __future__ import annotations

import pytest
from fakes.llm_server import FakeLLMServer, Reply

from ragdash.data.schema import Document, Example
from ragdash.evidence import output
from ragdash.evidence.align import (
    ALIGNED,
    ALIGNED_LLM,
    FLOOR,
    Aligner,
    alignable,
    answer_sentences,
    parse_choice,
)
from ragdash.evidence.finder import NOT_IN_CORPUS, find_evidence
from ragdash.evidence.locate import Corpus
from ragdash.evidence.rank import Lexical, Vectors, minilm
from ragdash.evidence.records import EvidenceResult
from ragdash.evidence.settings import EvidenceSettings


def doc(doc_id: str, text: str) -> Document:
    return Document(doc_id, doc_id.title(), text)


LIGHTHOUSE = doc("lighthouse", "The Harbour Lighthouse was built in 1872 by the engineer Thomas "
                               "Gray. Its lamp burned whale oil until 1901, when it was converted "
                               "to electricity. The tower stands 42 metres tall on a granite "
                               "cliff. Visitors can climb its 210 steps in summer.")
GRAY = doc("gray", "Thomas Gray was a Scottish engineer born in Aberdeen in 1831. He designed "
                   "bridges and harbours along the east coast. He died in Edinburgh in 1899.")
FILLER = [
    doc("bakery", "The village bakery opens at six every morning. Its sourdough is baked in a "
                  "wood-fired oven. On Sundays it sells only croissants. The owner trained in "
                  "Lyon."),
    doc("chess", "Chess is played on a board of sixty-four squares. Each player starts with "
                 "sixteen pieces. The queen is the most powerful piece. A game can end in a "
                 "draw by repetition."),
    doc("volcano", "Mount Etna is an active volcano on the east coast of Sicily. It erupts "
                   "several times a year. Its soil is rich and grows excellent wine grapes. "
                   "Etna is the tallest active volcano in Europe."),
    doc("python", "Pythons are large snakes that kill their prey by constriction. They are not "
                  "venomous. Some species grow longer than six metres. They lay eggs and guard "
                  "them until they hatch."),
    doc("tea", "Green tea is made from leaves that are not oxidised. Black tea is fully "
               "oxidised. Tea was first drunk in China. Britain imports most of its tea from "
               "Kenya."),
    doc("jazz", "Jazz began in New Orleans in the early twentieth century. Louis Armstrong was "
                "one of its first stars. Improvisation is central to the music. Bebop arose in "
                "the 1940s."),
    doc("glacier", "Glaciers form where snow builds up faster than it melts. They move slowly "
                   "downhill under their own weight. Many glaciers are shrinking. Their meltwater "
                   "feeds large rivers."),
    doc("bees", "Honey bees live in colonies ruled by a single queen. Worker bees collect "
                "nectar and pollen. A colony may hold fifty thousand bees. Bees communicate by "
                "dancing."),
]
CORPUS = [LIGHTHOUSE, GRAY, *FILLER]
SETTINGS = EvidenceSettings(passages=2)


def ex(qid: str, question: str, answer: str) -> Example:
    return Example(qid, question, answer, [])


def find(examples, docs=CORPUS, settings=SETTINGS, **kw):
    return find_evidence(examples, docs, settings, **kw)


def verbatim(result: EvidenceResult, docs=CORPUS) -> None:
    """Every part is the document's own text at its offsets."""
    by_id = {d.doc_id: d for d in docs}
    for q in result.found:
        for p in q.parts:
            assert by_id[p.doc_id].text[p.start:p.end] == p.text


def test_a_paraphrase_finds_the_sentence_it_rests_on():
    answer = "The light stopped running on whale oil and switched to electric power in 1901."
    result = find([ex("p", "When did the lighthouse get electric light?", answer)])
    q = result.questions[0]
    assert q.found and q.unsupported == []
    assert [p.text for p in q.parts] == ["Its lamp burned whale oil until 1901, when it was "
                                         "converted to electricity."]
    part = q.parts[0]
    assert part.method == ALIGNED and part.supports == answer
    assert 0 < part.confidence <= 1 and part.cosine > part.question_cosine - 1
    assert 0 < part.lexical <= 1
    verbatim(result)
    row = output.dataset_rows(result)[0]
    assert (row["parts_source"], row["parts_method"]) == ("auto", ALIGNED)


def test_a_two_sentence_answer_draws_on_two_documents():
    answer = ("The Harbour Lighthouse was put up in 1872 by Thomas Gray. "
              "Gray was a Scottish engineer who was born in Aberdeen.")
    result = find([ex("t", "Who built the Harbour Lighthouse?", answer)])
    q = result.questions[0]
    assert q.found and not q.unsupported
    by_sentence = {p.supports: (p.doc_id, p.text) for p in q.parts}
    first, second = answer_sentences(answer)
    assert by_sentence[first][0] == "lighthouse" and "1872" in by_sentence[first][1]
    assert by_sentence[second] == ("gray", "Thomas Gray was a Scottish engineer born in "
                                           "Aberdeen in 1831.")
    verbatim(result)


def test_a_fact_found_nowhere_gets_no_part():
    kept = ("The Harbour Lighthouse was built in 1872 by Thomas Gray. "
            "Its keeper once owned a purple parrot named Admiral.")
    left = ("Thomas Gray built the Harbour Lighthouse in 1872. Its keeper owned a purple "
            "parrot named Admiral. The parrot could sing three sea shanties in French.")
    nowhere = "A purple parrot named Admiral could sing three sea shanties in French."
    result = find([ex("k", "Who built the Harbour Lighthouse?", kept),
                   ex("l", "Who built the Harbour Lighthouse?", left),
                   ex("n", "What could the parrot sing?", nowhere)])
    k, left_q, n = result.questions
    # half of the answer is supported: kept, the other sentence listed without a part
    assert k.found and k.unsupported == ["Its keeper once owned a purple parrot named Admiral."]
    assert all(p.supports != k.unsupported[0] for p in k.parts)
    # one of three: left out, with the reason
    assert not left_q.found and len(left_q.unsupported) == 2
    assert left_q.reason == f"{NOT_IN_CORPUS}; only 1 of 3 answer sentences are supported by " \
                            "a corpus sentence"
    assert not n.found and "only 0 of 1" in n.reason
    assert [q.qid for q in result.missing] == ["l", "n"]
    rows = {r["id"]: r for r in output.dataset_rows(result)}
    assert rows["n"]["parts_source"] == "none" and "only 0 of 1" in rows["n"]["parts_note"]


def test_the_verbatim_path_is_unchanged():
    sentence = "The tower stands 42 metres tall on a granite cliff."
    result = find([ex("s", "When was the Harbour Lighthouse built?", "1872"),
                   ex("v", "How tall is the tower?", sentence),
                   ex("x", "Who painted the tower?", "a local artist")])
    s, v, x = result.questions
    assert s.found and s.parts[0].method == "answer" and "1872" in s.parts[0].text
    assert v.found and v.parts[0].method == "answer" and v.parts[0].text == sentence
    assert s.parts[0].supports == "" and s.unsupported == []
    # a short answer found nowhere is a phrase, not a statement: not aligned
    assert not alignable("a local artist") and (x.found, x.reason) == (False, NOT_IN_CORPUS)
    assert not alignable("Yes") and alignable("It was built by the engineer Thomas Gray.")


def test_the_bar_stands_out_from_a_background_or_is_the_floor_in_a_small_corpus():
    settings = EvidenceSettings(passages=1)
    small = Aligner(Corpus([LIGHTHOUSE, GRAY]), Vectors(minilm()), settings)
    assert small.bar("It was built in 1872.", "When?", set()) == FLOOR
    big = Aligner(Corpus(CORPUS), Vectors(minilm()), settings)
    units = big.units("Thomas Gray engineer Aberdeen")
    assert {big.corpus.units[u][0] for u in units} == {1}  # the Gray document only
    bar = big.bar("Gray was born in Aberdeen.", "Who was Gray?", set(units))
    assert 0 < bar < 1
    best = big.align("Who was Gray?", "Gray was an engineer born in Aberdeen.")[0]
    assert best.scored[0].support >= bar and best.kept == [0]


def test_lexical_share_is_bm25_over_its_ideal():
    texts = ["red apples grow on trees", "green pears grow on trees", "blue cars drive fast",
             "yellow bananas grow in bunches"]
    lex = Lexical(texts)
    scores = lex.scores("red apples")
    assert scores[0] / lex.ideal("red apples") == pytest.approx(1.0, abs=0.25)
    assert scores[2] == 0 and lex.ideal("") == 0
    assert lex.ideal("unseenword") > lex.ideal("grow")  # a word found nowhere weighs most


@pytest.mark.parametrize("reply, expected", [
    ("2", [1]), ("[1], [3]", [0, 2]), ("NONE", []), ("none of them", []),
    ("Sentence 9", None), ("%%% <<garbage>>", None), ("", None),
    ('"Its lamp burned whale oil until 1901"', [1]),
    ("The lamp used oil", None),  # not verbatim: not accepted
])
def test_parse_choice(reply, expected):
    texts = ["The tower stands tall.", "Its lamp burned whale oil until 1901, when it was "
             "converted.", "Visitors climb."]
    assert parse_choice(reply, texts) == expected


ANSWER_LLM = ("The light stopped running on whale oil and switched to electric power in 1901. "
              "Its keeper once owned a purple parrot named Admiral.")


def llm_settings(url):
    from ragdash.llm import LLMSettings

    return LLMSettings(backend="openai", model="fake-model", base_url=url, retries=0)


def scripted(body):
    """Confirms candidate 1 for the whale-oil sentence, NONE for the parrot; garbage for the
    Gray question."""
    prompt = body["messages"][-1]["content"]
    if "Answer sentence: Gray" in prompt:
        return Reply(text="%%% <<garbage>> {")
    if "whale oil" in prompt.split("Sentences:")[0]:
        return Reply(text="1")
    return Reply(text="NONE")


def test_the_llm_confirms_among_the_candidates(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = EvidenceSettings(llm=True, passages=2)
    questions = [ex("c", "When did the lighthouse get electric light?", ANSWER_LLM),
                 ex("g", "Who was Gray?", "Gray was an engineer born in Aberdeen.")]
    with FakeLLMServer(default=scripted) as srv:
        result = find(questions, settings=settings, llm=llm_settings(srv.openai_url),
                      cache=tmp_path / "c.sqlite")
        asked = len(srv.chat_requests())
        find(questions, settings=settings, llm=llm_settings(srv.openai_url),
             cache=tmp_path / "c.sqlite")
        assert len(srv.chat_requests()) == asked == 3  # one per answer sentence; then cached
        prompt = srv.chat_requests()[0]["body"]["messages"][-1]["content"]
    assert "[1] " in prompt and "Reply with their numbers" in prompt
    c, g = result.questions
    assert c.found and [p.method for p in c.parts] == [ALIGNED_LLM]
    assert c.parts[0].text.startswith("Its lamp burned whale oil")
    assert c.unsupported == ["Its keeper once owned a purple parrot named Admiral."]
    # a broken reply leaves the automatic choice
    assert g.found and g.parts[0].method == ALIGNED and g.parts[0].doc_id == "gray"
    verbatim(result)


def test_a_failing_llm_leaves_the_automatic_choice(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeLLMServer(default=Reply(status=500, error="down")) as srv:
        result = find([ex("g", "Who was Gray?", "Gray was an engineer born in Aberdeen.")],
                      settings=EvidenceSettings(llm=True, passages=2),
                      llm=llm_settings(srv.openai_url))
    q = result.questions[0]
    assert q.found and q.parts[0].method == ALIGNED and q.parts[0].doc_id == "gray"


def test_records_round_trip_and_old_records_load():
    result = find([ex("p", "When did the lighthouse get electric light?",
                      "The lamp switched from whale oil to electric power in 1901.")])
    data = result.to_dict()
    again = EvidenceResult.from_dict(data)
    assert again.questions[0].parts == result.questions[0].parts
    assert again.questions[0].parts[0].supports
    for q in data["questions"]:  # a review stored before alignment existed
        q.pop("unsupported")
        for c in q["candidates"]:
            for key in ("supports", "question_cosine", "lexical"):
                c.pop(key)
    old = EvidenceResult.from_dict(data)
    assert old.questions[0].parts[0].supports == "" and old.questions[0].unsupported == []
