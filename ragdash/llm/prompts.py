"""The paper's prompts: answer generation (with and without documents) and the 1–5 judge.

Each prompt is one user message, as in the reference code. The default text keeps the paper's
layout and instructions with its typos fixed; `reference=True` reproduces the reference code's
quirks: every line of a generation prompt after the first carries 8 leading spaces (the template
was indented in the source), the LLM-only instruction says "Responde", and the judge labels the
candidates "Candidate's Answers:".

Also here, so that every prompt lives in one place: the multi-query retriever's sub-question
prompt (`ragdash.llm.decompose`), the evidence finder's quote prompt (`ragdash.evidence.quotes`)
and support prompt (`ragdash.evidence.align`), the synthetic question prompts (`ragdash.synth`)
and RGB's counterfactual robustness prompt (`ragdash.stress.counterfactual`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ragdash.constants import MLQ_MODES
from ragdash.llm.refusal import ABSTAIN_SENTENCE, LLM_ONLY_ABSTAIN_SENTENCE

RAG_INSTRUCTION = ("Given the documents below, your role is to answer the query using only "
                   "these documents. Respond with a precise, one-sentence explanation.")
RAG_INSTRUCTION_REFERENCE = ("Given the documents below, your role is to answer the query using "
                             "only these documents. Respond with a precise, one sentence "
                             "explanation.")
LLM_ONLY_INSTRUCTION = "Respond to the query with a precise, one-sentence explanation."
LLM_ONLY_INSTRUCTION_REFERENCE = "Responde with a one sentence precise explanation to the query."
REFERENCE_INDENT = " " * 8

GENERATION_PROMPTS = ("paper", "abstain")
"""`paper`: the paper's text; `abstain`: answer from the documents in one or two sentences, and
reply with a fixed sentence only when they say nothing about the query, so the rubric's class 1
occurs (LLM only: the paper's instruction plus a fixed reply when the model does not know)."""
ABSTAIN_INSTRUCTION = ("Use the documents below to answer the query. If the documents do not "
                       "mention anything related to the query, reply exactly: "
                       f'"{ABSTAIN_SENTENCE}"')
ABSTAIN_ANSWER = "Answer the query in one or two sentences using the documents."
"""The `abstain` prompt's last line, after the documents and the query: a small model follows
the instruction it read last (issue 33: the 0.5B refused 12 of 20 answers whose context held
the evidence when the prompt ended with the documents)."""
ABSTAIN_INSTRUCTION_LLM_ONLY = ("If you do not know the answer, reply exactly: "
                                f'"{LLM_ONLY_ABSTAIN_SENTENCE}"')
"""No word of documents or a context: the LLM-only prompt has none."""

RUBRIC: dict[int, str] = {
    1: "The candidate says it cannot find enough information in the documents to answer.",
    2: "The answer is partially correct, but some details are incorrect according to the "
       "references.",
    3: "The answer is partially correct, but incomplete: it does not fully answer the question.",
    4: "The answer is fully incorrect.",
    5: "The answer is fully correct.",
}
"""The paper's categorical scale (4 is worse than 2 or 3)."""

_TASK = ("Assess the candidate answers below using the true answer, the references and the "
         "scoring criteria.")
_RETURN_COMMAS = "Return only the scores, one per candidate in order, separated by commas."
_RETURN_JSON = ('Return only a JSON object {"scores": [...]} with one integer score per '
                "candidate, in candidate order.")


def _indent_after_first(text: str, indent: str = REFERENCE_INDENT) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first, *(indent + line for line in rest)])


def generation_prompt(question: str, context: str | None = None, *,
                      reference: bool = False, prompt: str = "paper") -> str:
    """The RAG prompt (context given) or the LLM-only prompt (context None); `prompt` is one of
    GENERATION_PROMPTS."""
    if prompt not in GENERATION_PROMPTS:
        raise ValueError(f"generation prompt must be one of {', '.join(GENERATION_PROMPTS)}, "
                         f"not {prompt!r}")
    if context is None:
        instruction = LLM_ONLY_INSTRUCTION_REFERENCE if reference else LLM_ONLY_INSTRUCTION
        if prompt == "abstain":
            instruction = f"{instruction} {ABSTAIN_INSTRUCTION_LLM_ONLY}"
        template = f"{instruction}\nQuery: {{question}}"
    elif prompt == "abstain":  # the documents first, the query and the answer instruction last
        template = (f"{ABSTAIN_INSTRUCTION}\n\nDocuments:\n{{context}}\n\nQuery: {{question}}"
                    f"\n\n{ABSTAIN_ANSWER}")
    else:
        instruction = RAG_INSTRUCTION_REFERENCE if reference else RAG_INSTRUCTION
        template = f"{instruction}\n\nQuery:\n{{question}}\n\nDocuments:\n{{context}}\n\nAnswer:"
    if reference:  # only the template's own lines are indented, not the inserted text
        template = _indent_after_first(template)
    return template.format(question=question, context=context)


def generation_messages(question: str, context: str | None = None, *,
                        reference: bool = False, prompt: str = "paper") -> list[dict[str, str]]:
    return [{"role": "user", "content": generation_prompt(question, context,
                                                          reference=reference, prompt=prompt)}]


def judge_prompt(question: str, true_answer: str, references: Sequence[str],
                 candidates: Sequence[str], *, reference: bool = False,
                 json_output: bool = False) -> str:
    """The judge prompt: task, question, true answer, quoted references (one per line),
    numbered candidates and the 1–5 rubric. `json_output` asks for `{"scores": [...]}`."""
    label = "Candidate's Answers:" if reference else "Candidate answers:"
    lines = [f"{_TASK} {_RETURN_JSON if json_output else _RETURN_COMMAS}", "",
             f'Question: "{question}"', "", f'True Answer: "{true_answer}"', "", "References:"]
    lines += [f'"{ref}"' for ref in references]
    lines += ["", label]
    lines += [f'candidate answer {i}: "{c}"' for i, c in enumerate(candidates, 1)]
    lines += ["", "Scoring Criteria:", ""]
    lines += [f"{score}: {text}" for score, text in RUBRIC.items()]
    return "\n".join(lines)


def judge_messages(question: str, true_answer: str, references: Sequence[str],
                   candidates: Sequence[str], *, reference: bool = False,
                   json_output: bool = False) -> list[dict[str, str]]:
    return [{"role": "user", "content": judge_prompt(question, true_answer, references,
                                                     candidates, reference=reference,
                                                     json_output=json_output)}]


def judge_schema(n: int) -> dict:
    """JSON schema of a judge reply: exactly `n` scores, each an integer 1–5."""
    return {"type": "object",
            "properties": {"scores": {"type": "array",
                                      "items": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
                                      "minItems": n, "maxItems": n}},
            "required": ["scores"], "additionalProperties": False}


def correction_message(n: int, problem: str, *, json_output: bool = False) -> dict[str, str]:
    """The follow-up user message after a malformed judge reply."""
    form = 'as a JSON object {"scores": [...]}' if json_output else "separated by commas"
    return {"role": "user",
            "content": f"Your reply could not be used: {problem}. Reply again with exactly {n} "
                       f"integer score{'s' if n != 1 else ''} from 1 to 5, one per candidate "
                       f"answer in order, {form}, and nothing else."}


# --- stepwise judging: the rubric as two short questions (for small local judges) -------------

VERDICTS: dict[str, str] = {
    "correct": "it states the true answer, in any wording; extra details are fine",
    "partially correct": "it states only part of the true answer",
    "incorrect": "it states a different answer, or contradicts the true answer",
    "no answer": "it says it cannot find enough information to answer",
}
"""Step 1 verdicts; "correct" -> 5, "incorrect" -> 4, "no answer" -> 1, "partially correct" ->
step 2 (wrong details: "yes" -> 2, "no" -> 3)."""
VERDICT_SCORES = {"correct": 5, "incorrect": 4, "no answer": 1}
DETAIL_SCORES = {"yes": 2, "no": 3}


def _facts(question: str, true_answer: str, candidate: str,
           references: Sequence[str] = ()) -> list[str]:
    lines = [f'Question: "{question}"', f'True answer: "{true_answer}"']
    if references:
        lines += ["References:", *(f'"{ref}"' for ref in references)]
    return [*lines, f'Candidate answer: "{candidate}"', ""]


def verdict_prompt(question: str, true_answer: str, candidate: str) -> str:
    """Step 1: does the candidate give the true answer, part of it, another one, or none?"""
    options = "\n".join(f'- "{v}": {text}.' for v, text in VERDICTS.items())
    return "\n".join(["You compare a candidate answer with the true answer of a question.", "",
                      *_facts(question, true_answer, candidate),
                      "Which verdict fits the candidate answer?", options,
                      'Return only a JSON object {"verdict": "..."}.'])


def details_prompt(question: str, true_answer: str, references: Sequence[str],
                   candidate: str) -> str:
    """Step 2, for a partially correct answer: does it also state something wrong?"""
    return "\n".join(["You check a partially correct candidate answer for wrong details.", "",
                      *_facts(question, true_answer, candidate, references),
                      "Does the candidate answer state something that is wrong according to "
                      "the true answer or the references?",
                      'Return only a JSON object {"wrong_details": "yes"} or '
                      '{"wrong_details": "no"}.'])


def choice_schema(key: str, options: Sequence[str]) -> dict:
    """JSON schema of a reply `{key: one of options}`."""
    return {"type": "object", "properties": {key: {"type": "string", "enum": list(options)}},
            "required": [key], "additionalProperties": False}


def choice_correction(key: str, options: Sequence[str], problem: str) -> dict[str, str]:
    """The follow-up user message after a reply that names none (or several) of the options."""
    shown = " or ".join(f'"{o}"' for o in options)
    return {"role": "user",
            "content": f"Your reply could not be used: {problem}. Reply again with only a JSON "
                       f'object {{"{key}": ...}} whose value is {shown}.'}


# --- prompt versions: part of the stage keys, so a change of prompt text re-runs the stage -----


def _digest(*texts: str) -> str:
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:12]


def generation_prompt_version(prompt: str = "paper") -> str:
    """A hash of the rendered text of the generation prompt `prompt` (with and without
    documents, both spellings): a change of one prompt's text re-runs only the runs that use
    it."""
    return _digest(*(generation_prompt("{q}", ctx, reference=ref, prompt=prompt)
                     for ref in (False, True) for ctx in (None, "{c}")))


def judge_prompt_version() -> str:
    """A hash of every judge prompt's rendered text (rubric, stepwise questions, corrections)."""
    return _digest(*(judge_prompt("{q}", "{a}", ["{r}"], ["{c}"], reference=ref, json_output=j)
                     for ref in (False, True) for j in (False, True)),
                   verdict_prompt("{q}", "{a}", "{c}"), details_prompt("{q}", "{a}", ["{r}"],
                                                                       "{c}"),
                   str(correction_message(2, "{p}")), str(choice_correction("k", ["a"], "{p}")))


# --- multi-query retrieval: the sub-questions of a question (ragdash.llm.decompose) -----------

# Chat-form few-shot prompt: small local models follow turns far better than one long message.
DECOMPOSE_TURNS: list[tuple[str, str]] = [
    ("system", "You split a complex question into the simple factual questions needed to answer "
               "it. Reply with one question per line (at most {max_queries}) and nothing else."),
    ("user", "Which was founded first, the University of Oslo or the University of Helsinki?"),
    ("assistant", "When was the University of Oslo founded?\nWhen was the University of "
                  "Helsinki founded?"),
    ("user", "Who directed the film that won the Academy Award for Best Picture in 1998?"),
    ("assistant", "Which film won the Academy Award for Best Picture in 1998?\nWho directed the "
                  "1998 Best Picture winner?"),
    ("user", "{question}"),
]
# The paper's prompt structure (task, instructions, worked examples, "Your Task"), reworded.
DECOMPOSE_PROMPT_REFERENCE = """You are an expert at decomposing complex questions into simpler \
component questions.

Instructions: Break the complex question into simpler questions. Answering them should give \
all the information needed to answer the original question.

Example 1:
Complex Question: "Which is older, Real Madrid or FC Barcelona?"
Decomposition:

When was Real Madrid founded?
When was FC Barcelona founded?

Example 2:
Complex Question: "Which is longer, the Amazon or the Nile?"
Decomposition:

How long is the Amazon river?
How long is the Nile river?

Example 3:
Complex Question: "Who won more Nobel prizes, Marie Curie or Albert Einstein?"
Decomposition:

How many Nobel prizes did Marie Curie win?
How many Nobel prizes did Albert Einstein win?

Your Task:
Decompose the following complex question: "{question}"
Give only the questions, one per line, with no additional text.
"""


def decompose_messages(question: str, *, mode: str = "default",
                       max_queries: int = 5) -> list[dict[str, str]]:
    """The sub-question prompt of `question`: the few-shot chat turns asking for at most
    `max_queries` lines, or (`mode="reference"`) the paper's prompt as one user message."""
    if mode not in MLQ_MODES:
        raise ValueError(f"mlq: unknown mode '{mode}' (use default or reference)")
    if mode == "reference":
        return [{"role": "user", "content": DECOMPOSE_PROMPT_REFERENCE.format(question=question)}]
    return [{"role": role, "content": text.format(question=question, max_queries=max_queries)}
            for role, text in DECOMPOSE_TURNS]


DECOMPOSE_PROMPT_V1 = "f4fef4b4b664"
"""`decompose_prompt_version()` of the prompts mlq runs were made with before the version was
hashed: left out of the retrieve stage key at this value, so those runs keep their keys."""


def decompose_prompt_version() -> str:
    """A hash of both sub-question prompts' rendered messages (roles and text)."""
    return _digest(*(f"{m['role']}: {m['content']}" for mode in MLQ_MODES
                     for m in decompose_messages("{q}", mode=mode, max_queries=5)))


# --- evidence: ask the model to quote the supporting sentence (ragdash.evidence.quotes) --------

NO_QUOTE = "NONE"
QUOTE_PROMPT = (
    "Below are a question, its answer and numbered passages. Copy, word for word, the one "
    "sentence of the passages that best supports the answer. Reply with that sentence only, "
    f"without quotation marks. If no passage supports the answer, reply {NO_QUOTE}.\n\n"
    "Question: {question}\nAnswer: {answer}\n\nPassages:\n{passages}\n\nSentence:")


def quote_messages(question: str, answer: str, passages: Sequence[str]) -> list[dict[str, str]]:
    """The quote prompt with the passages numbered, whitespace collapsed."""
    shown = "\n".join(f"[{i + 1}] {' '.join(t.split())}" for i, t in enumerate(passages))
    return [{"role": "user", "content": QUOTE_PROMPT.format(question=question, answer=answer,
                                                            passages=shown)}]


# --- evidence: which candidate sentences support an answer sentence (ragdash.evidence.align) ---

SUPPORT_PROMPT = (
    "Below are a question, one sentence of its answer and numbered sentences from documents. "
    "Which of the numbered sentences state what the answer sentence says (all of it or part "
    "of it)? Reply with their numbers, separated by commas. If none does, reply "
    f"{NO_QUOTE}.\n\nQuestion: {{question}}\nAnswer sentence: {{sentence}}\n\n"
    "Sentences:\n{candidates}\n\nNumbers:")


def support_messages(question: str, sentence: str,
                     candidates: Sequence[str]) -> list[dict[str, str]]:
    """The support (entailment) prompt with the candidates numbered, whitespace collapsed."""
    shown = "\n".join(f"[{i + 1}] {' '.join(t.split())}" for i, t in enumerate(candidates))
    return [{"role": "user", "content": SUPPORT_PROMPT.format(
        question=question, sentence=" ".join(sentence.split()), candidates=shown)}]


# --- synthetic test sets: a question, its answer and the verbatim span (ragdash.synth) ---------

_SYNTH_RULES = (
    "- The answer is short (a name, a number, a date or a few words) and occurs in the {where}.\n"
    "- The question makes sense on its own: it names the person, place or thing it asks about "
    "and never says \"the passage\" or \"the text\".\n")
SYNTH_PROMPT = (
    "Write one question for a reading test on the passage below.\n\nRules:\n"
    + _SYNTH_RULES.format(where="passage")
    + "- The span is the sentence of the passage that holds the answer, copied word for word."
      "\n\nPassage (from \"{title}\"):\n{passage}\n\n"
      'Return only a JSON object: {{"question": "...", "answer": "...", "span": "..."}}')
MULTIHOP_PROMPT = (
    "Write one question for a reading test that needs both passages below: a fact from "
    "passage 1 and a fact from passage 2 must be combined to answer it.\n\nRules:\n"
    + _SYNTH_RULES.format(where="passages")
    + "- span_1 is the sentence of passage 1 that the question needs, copied word for word; "
      "span_2 the same for passage 2.\n\n"
      "Passage 1 (from \"{title_1}\"):\n{passage_1}\n\n"
      "Passage 2 (from \"{title_2}\"):\n{passage_2}\n\n"
      'Return only a JSON object: {{"question": "...", "answer": "...", "span_1": "...", '
      '"span_2": "..."}}')
SPAN_KEYS = {1: ("span",), 2: ("span_1", "span_2")}
"""The reply's span fields of a question on one passage, and on two."""


def synth_messages(passages: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    """The prompt for one question on one passage, or on two ((title, text) pairs) for a
    multi-hop question; passage whitespace is collapsed."""
    texts = [(title, " ".join(text.split())) for title, text in passages]
    if len(texts) == 1:
        content = SYNTH_PROMPT.format(title=texts[0][0], passage=texts[0][1])
    elif len(texts) == 2:
        content = MULTIHOP_PROMPT.format(title_1=texts[0][0], passage_1=texts[0][1],
                                         title_2=texts[1][0], passage_2=texts[1][1])
    else:
        raise ValueError(f"a synthetic question is written from 1 or 2 passages, not {len(texts)}")
    return [{"role": "user", "content": content}]


def synth_schema(hops: int) -> dict:
    """JSON schema of a synth reply: question, answer and the span field(s) as strings."""
    keys = ["question", "answer", *SPAN_KEYS[hops]]
    return {"type": "object", "properties": {k: {"type": "string"} for k in keys},
            "required": keys, "additionalProperties": False}


def synth_prompt_version() -> str:
    """A hash of the synth prompts' rendered text and of the LLM-only prompt that the leakage
    check asks (recorded with every synthetic question)."""
    return _digest(synth_messages([("{t}", "{p}")])[0]["content"],
                   synth_messages([("{t}", "{p}"), ("{u}", "{q}")])[0]["content"],
                   generation_prompt("{q}"))


# --- RGB's counterfactual robustness test (ragdash.stress.counterfactual) -------------------------
# Chen et al., AAAI 2024: the English system instruction and user template of RGB's
# config/instruction.yaml, word for word (its curly quotes included): the test's phrase rules
# look for the sentences this instruction asks for.

RGB_SYSTEM = (
    "You are an accurate and reliable AI assistant that can answer questions with the help of "
    "external documents. Please note that external documents may contain noisy or factually "
    "incorrect information. If the information in the document contains the correct answer, "
    "you will give an accurate answer. If the information in the document does not contain "
    "the answer, you will generate \u2019I can not answer the question because of the "
    "insufficient information in documents.\u2018. If there are inconsistencies with the facts "
    "in some of the documents, please generate the response 'There are factual errors in the "
    "provided documents.' and provide the correct answer.")
RGB_USER = "Document:\n{docs} \n\nQuestion:\n{query}"
"""The space after the documents is RGB's."""


def rgb_messages(query: str, passages: Sequence[str]) -> list[dict[str, str]]:
    """RGB's chat for a question: its system instruction, then the passages one per line and
    the question (as RGB sends a chat model, e.g. ChatGPT)."""
    return [{"role": "system", "content": RGB_SYSTEM},
            {"role": "user", "content": RGB_USER.format(docs="\n".join(passages), query=query)}]


# RGB's fact_evalue.py: an LLM reads a reply and says whether it points out the factual errors
# (its English instruction and its demonstrations, two of them Chinese, as RGB asks them).
RGB_CHECK = """Please determine whether the model can identify factual errors in the document. \
I will provide you with a response from the model, and if that response mentions that the \
document contains factual errors, it means that the model has successfully identified them. \
Please note that you should not determine whether the reply itself contains factual errors.
Demonstrations:
Response:\u6587\u6863\u4fe1\u606f\u6709\u8bef\uff0c2008\u5e74\u7684\u5965\u8fd0\u4f1a\u5728\
\u5317\u4eac\u4e3e\u529e\u3002
Yes, the model has identified the factual errors.

Response:2014\u5e74\u6fb3\u7f51\u5973\u5355\u51a0\u519b\u662f\u5927\u962a\u76f4\u7f8e\u3002
NO, the model fail to identify the factual errors.

Response: The director of the Silent Hill movie is Justin Kurzel.
NO, the model fail to identify the factual errors.

Response: Harry Potter is written by J. K. Rowling.
NO, the model fail to identify the factual errors.

Response:  There are factual errors in the provided documents. The correct answer is 2023.
Yes, the model has identified the factual errors.

Begin to generate:
Answer: {reply}
    """


def rgb_check_messages(reply: str) -> list[dict[str, str]]:
    """RGB's LLM check of one reply, as one user message."""
    return [{"role": "user", "content": RGB_CHECK.format(reply=reply)}]
