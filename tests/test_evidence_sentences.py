"""Evidence in whole sentences (issue 33, section 2): the splitter keeps initials, abbreviations
and numbers inside their sentence; a title or heading is never a part on its own; a part found
in two copies of one document is kept once; `max_parts` holds however parts are found."""

from __future__ import annotations

import json

import pytest

from ragdash.cli import main
from ragdash.data.layout import Heading
from ragdash.data.schema import Document, Example
from ragdash.evidence.align import answer_sentences
from ragdash.evidence.finder import find_evidence
from ragdash.evidence.locate import unit_spans
from ragdash.evidence.output import agreement
from ragdash.evidence.settings import EvidenceSettings

KEPT_WHOLE = [
    "During the war Robert E. Lee's Army of Northern Virginia won at Fredericksburg.",
    "In 1944 U.S. forces landed on the beaches of Normandy.",
    "Some fruits, e.g. this one, are sweet.",
    "The city had 3.5 million people in 2010 vs. 2.1 million in 1990.",
    "It was written by Thompson , William M. in 1890 .",
    'He said "Stop." ',
]


def units(text: str) -> list[str]:
    return [text[s:e] for s, e in unit_spans(text)]


@pytest.mark.parametrize("sentence", KEPT_WHOLE)
def test_the_splitter_keeps_initials_abbreviations_and_numbers_in_their_sentence(sentence):
    text = f"{sentence} The next sentence starts here."
    assert units(text) == [sentence.strip(), "The next sentence starts here."]
    answer = f"{sentence} It is a second sentence."
    assert answer_sentences(answer) == [sentence.strip(), "It is a second sentence."]


def test_a_tokenised_apostrophe_does_not_join_sentences():
    """Natural Questions text splits clitics off ("show 's"); a stray quotation mark before one
    must not make the sentences between them one."""
    text = ("The cast negotiated together , despite Warner Bros . ' preference for individual "
            "deals . Their pay rose every year . The show 's profits grew .")
    assert units(text) == ["The cast negotiated together , despite Warner Bros . ' preference "
                           "for individual deals .", "Their pay rose every year .",
                           "The show 's profits grew ."]


def test_two_parts_share_a_sentence_only_when_the_whole_sentence_is_shared():
    """'Robert E.' is no sentence: two parts that share only it do not overlap."""
    found = {"q": ["Robert E. Lee's Army of Northern Virginia won."]}
    gold = {"q": ["Robert E. Lee commanded the army."]}
    assert agreement(found, gold)["overlap"] == 0


SONG = ("`` Be Careful '' is a song recorded by the American rapper Cardi B for her debut "
        "album. It was released in 2018 by Atlantic Records.")
ISLANDS = ("Tahiti is the largest island of French Polynesia in the southern Pacific Ocean. "
           "Its capital is Papeete.")
TITLED = [  # each document starts with its title or heading, in the ways files carry one
    Document("songs/be-careful.txt", "be-careful", f"Be Careful (Cardi B song)\n\n{SONG}\n"),
    Document("islands/tahiti.md", "tahiti", f"# French Polynesia\n\n{ISLANDS}\n"),
    Document("kettle.html", "kettle", "Be careful with the kettle\n\nThe kettle boils water in "
             "three minutes. Unplug the kettle before cleaning.",
             headings=(Heading(0, 1, "Be careful with the kettle"),)),
    Document("Volcanoes", "Volcanoes of Sicily", "Volcanoes of Sicily\nMount Etna is the "
             "tallest active volcano in Europe. It stands on the east coast of Sicily."),
]
TITLES = {"Be Careful (Cardi B song)", "# French Polynesia", "Be careful with the kettle",
          "Volcanoes of Sicily"}


def _find(examples, docs, **settings):
    return find_evidence(examples, docs, EvidenceSettings(**settings))


def _parts(result) -> dict[str, list[str]]:
    return {q.qid: [p.text for p in q.parts] for q in result.questions}


def test_a_title_or_heading_is_never_a_part_on_its_own():
    # margin 1: every candidate within three is kept, so a title candidate would show
    result = _find([Example("song", "Who recorded Be Careful?", "Cardi B", []),
                    Example("isle", "Where is Tahiti?", "French Polynesia", []),
                    Example("kettle", "What should you be careful with?", "the kettle", []),
                    Example("etna", "Where is Mount Etna?", "Sicily", []),
                    Example("para", "Who recorded the song Be Careful?",
                            "The American rapper Cardi B recorded Be Careful for her first "
                            "album.", [])], TITLED, margin=1.0)
    parts = _parts(result)
    assert all(parts.values()), parts
    for qid, texts in parts.items():
        for text in texts:
            assert text not in TITLES, (qid, text)
            assert "\n" not in text, (qid, text)  # a sentence, no title riding along
    assert parts["isle"] == [ISLANDS.split(". ")[0] + "."]
    assert parts["para"][0].startswith("`` Be Careful '' is a song recorded by")


def test_an_answer_found_only_in_a_title_gets_the_sentence_it_heads():
    doc = Document("a.txt", "a", "Be Careful (Cardi B song)\n\nThe single came out in 2018. "
                   "It reached the charts.")
    result = _find([Example("q", "What is the song called?", "Be Careful", [])], [doc])
    (part,) = result.questions[0].parts
    assert part.text == doc.text[:part.end] and part.text.endswith("came out in 2018.")


KETTLE = ("The kettle switches itself off once the water has boiled. Descale the kettle every "
          "month with white vinegar. Never fill the kettle above the maximum line.")
COPIES = [Document("manual/kettle.txt", "kettle", f"Kettle\n\n{KETTLE}\n"),
          Document("manual/kettle.html", "kettle", KETTLE),
          Document("manual/toaster.txt", "toaster", "The toaster has six browning levels. "
                   "Crumbs collect in a tray that slides out at the back.")]


def test_a_part_found_in_two_copies_of_a_document_is_kept_once():
    result = _find([Example("v", "How often should the kettle be descaled?", "every month", []),
                    Example("a", "How do I descale the kettle?",
                            "You should descale it monthly using white vinegar.", [])],
                   COPIES, margin=1.0)
    for q in result.questions:
        texts = [" ".join(p.text.split()) for p in q.parts]
        assert texts and len(texts) == len(set(texts)), texts
        shown = [" ".join(c.text.split()) for c in q.candidates]
        assert len(shown) == len(set(shown)), shown


GARDEN = Document("garden", "Garden", (
    "The garden opens at nine in the morning. Dogs are allowed on a short lead. "
    "The cafe sells tea and cakes until five. Parking costs two euros for the day. "
    "The rose beds bloom in June."))
RULES = ("The garden opens at nine in the morning. Dogs are welcome when kept on a lead. "
         "Tea and cakes are sold in the cafe until five. Parking costs two euros a day.")


@pytest.mark.parametrize("max_parts", [1, 2, 3])
def test_max_parts_holds_for_an_answer_of_several_sentences(max_parts):
    result = _find([Example("r", "What are the garden's rules?", RULES, [])], [GARDEN],
                   max_parts=max_parts, margin=1.0)
    q = result.questions[0]
    assert q.found and len(q.parts) == max_parts, [p.text for p in q.parts]
    # each kept part supports a different answer sentence: the best of each comes first
    assert len({p.supports for p in q.parts}) == max_parts


def test_the_command_honours_max_parts(tmp_path):
    (tmp_path / "qa.csv").write_text(f'id,question,answer\nr,What are the rules?,"{RULES}"\n',
                                     encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "garden.txt").write_text(GARDEN.text, encoding="utf-8")
    out = tmp_path / "o.jsonl"
    assert main(["evidence", "--dataset", str(tmp_path / "qa.csv"), "--corpus",
                 str(tmp_path / "docs"), "-o", str(out), "--max-parts", "2", "-q"]) == 0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(row["relevant_parts"]) == 2, row
