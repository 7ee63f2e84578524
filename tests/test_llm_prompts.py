"""The paper's generation and judge prompts: layout, reference quirks, rubric."""

from __future__ import annotations

from ragdash.llm.prompts import (
    RUBRIC,
    correction_message,
    generation_messages,
    generation_prompt,
    judge_prompt,
    judge_schema,
)


def test_rag_prompt_layout():
    p = generation_prompt("Who wrote Hamlet?", "Hamlet is a play by Shakespeare.")
    lines = p.split("\n")
    assert "using only these documents" in lines[0] and "one-sentence" in lines[0]
    assert lines[1:] == ["", "Query:", "Who wrote Hamlet?", "", "Documents:",
                         "Hamlet is a play by Shakespeare.", "", "Answer:"]


def test_llm_only_prompt_is_one_instruction_and_the_query():
    p = generation_prompt("Who wrote Hamlet?")
    instruction, query = p.split("\n")
    assert instruction.startswith("Respond") and "one-sentence" in instruction
    assert query == "Query: Who wrote Hamlet?"


def test_reference_prompts_keep_the_indentation_and_spelling():
    rag = generation_prompt("Q?", "doc line one\ndoc line two", reference=True)
    lines = rag.split("\n")
    assert not lines[0].startswith(" ")
    assert "one sentence explanation" in lines[0]
    template_lines = [ln for ln in lines[1:] if ln != "doc line two"]
    assert all(ln.startswith(" " * 8) for ln in template_lines)
    assert "        Query:" in lines and lines[-1] == "        Answer:"
    assert "doc line two" in lines  # inserted text is not re-indented
    only = generation_prompt("Q?", reference=True)
    assert only.startswith("Responde ") and only.endswith("\n        Query: Q?")


def test_prompt_text_with_braces_is_inserted_verbatim():
    p = generation_prompt("What is {x}?", "set {a, b}")
    assert "What is {x}?" in p and "set {a, b}" in p


def test_generation_messages_are_one_user_message():
    msgs = generation_messages("Q?", None)
    assert len(msgs) == 1 and msgs[0]["role"] == "user"


def test_judge_prompt_has_question_answer_quoted_references_candidates_and_rubric():
    p = judge_prompt("Who?", "Ann", ["Ann did it.", "She was there."], ["Ann.", "Bob."])
    lines = p.split("\n")
    assert 'Question: "Who?"' in lines and 'True Answer: "Ann"' in lines
    i = lines.index("References:")
    assert lines[i + 1: i + 3] == ['"Ann did it."', '"She was there."']
    j = lines.index("Candidate answers:")
    assert lines[j + 1: j + 3] == ['candidate answer 1: "Ann."', 'candidate answer 2: "Bob."']
    for score, text in RUBRIC.items():
        assert f"{score}: {text}" in lines
    assert "enough information" in RUBRIC[1]
    assert "incorrect" in RUBRIC[2] and "incomplete" in RUBRIC[3]
    assert "fully incorrect" in RUBRIC[4] and "fully correct" in RUBRIC[5]
    assert "separated by commas" in lines[0]
    assert "JSON" in judge_prompt("Q", "A", [], ["x"], json_output=True).split("\n")[0]
    assert "Candidate's Answers:" in judge_prompt("Q", "A", [], ["x"], reference=True)


def test_judge_schema_fixes_the_count_and_range():
    s = judge_schema(6)["properties"]["scores"]
    assert s["minItems"] == s["maxItems"] == 6
    assert s["items"]["enum"] == [1, 2, 3, 4, 5]


def test_correction_names_the_problem_and_the_count():
    m = correction_message(6, "expected 6 scores, found 4")
    assert m["role"] == "user" and "found 4" in m["content"] and "exactly 6" in m["content"]
