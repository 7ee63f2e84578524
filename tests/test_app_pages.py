"""Every dashboard page through streamlit's AppTest on a synthetic run, and the pages' models
(issue 48 point 4): each page is rendered once on the demo run (`shown`) and must lay out
without exception and show its model; what it shows (figures, sentences, tables) is tested on
the models in `ragdash.view` (the second half of this file, no Streamlit); AppTest sessions
remain where a widget is the point (a slider, a button, an upload, one budget for every page)
and for runs in other states (no LLM stages, first stages only, no run). The app is pointed at
the fixture runs with RAGDASH_DEMO_RUN / RAGDASH_RUNS_ROOT."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from fixtures.apptest import open_app
from fixtures.make_run import make_run
from fixtures.tables import clipped_headers, widths
from streamlit.testing.v1 import AppTest

from ragdash.ui.table_columns import MADE
from ragdash.view import RunView
from ragdash.view.signal_board import orders_table
from ragdash.viz.colors import label

APP = Path(__file__).resolve().parent.parent / "app.py"
PAGES = ("overview", "retrieval", "browser", "compare", "llm", "thresholds", "report", "data",
         "build")
COMPARED = ["bm25", "sim", "reo"]
"""The retrievers the shared Compare render shows (three: its every-pair table appears)."""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("app")
    demo = make_run(root / "demo", n_questions=30, seed=1)
    make_run(root / "runs" / "no-llm", n_questions=12, seed=2, llm=False)
    old = {k: os.environ.get(k) for k in ("RAGDASH_DEMO_RUN", "RAGDASH_RUNS_ROOT")}
    os.environ["RAGDASH_DEMO_RUN"] = str(demo)
    os.environ["RAGDASH_RUNS_ROOT"] = str(root / "runs")
    yield root
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def shown(runs) -> dict[str, AppTest]:
    """Each page rendered once on the demo run, as its link opens it (Compare on three
    retrievers): the tests that read a page's first render share these and change nothing."""
    return {page: open_page(page, **({"cmp_ret": COMPARED} if page == "compare" else {}))
            for page in PAGES}


@pytest.fixture(scope="module")
def demo(runs) -> RunView:
    """The demo run's view for the model tests, reading and keeping its answers where the
    dashboard's do (`ragdash.ui.state.view`): what the shared renders computed (the facts, the
    thresholds, the signal board) is not computed again, and the reverse."""
    from ragdash.rundir import Run
    from ragdash.ui import state

    return state.view(Run(runs / "demo"))


def open_page(page: str | None = None, **params) -> AppTest:
    return open_app(page, **params)


def texts(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "success", "title",
                                  "header", "subheader", "html") for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def plain(at: AppTest) -> str:
    """`texts` as read: markdown's escapes and bold marks taken out."""
    return re.sub(r"\\(.)", r"\1", texts(at)).replace("**", "")


def metric(at: AppTest, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


# --- each page once, as it lays out its model ----------------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders(shown, page):
    assert shown[page].title, f"{page} has no title"


def test_overview_lays_out_its_model(shown, ov):
    """The Overview's tiles are its model's, in order, label and value (what they say:
    `test_overview_model_*`), under the run picker on the demo run."""
    at, page = shown["overview"], ov
    assert at.title[0].value == page.title == "Run demo"
    assert at.selectbox(key="run").value.endswith("demo")
    tiles = [*page.tiles, *page.prediction.tiles]
    assert [(m.label, m.value) for m in at.metric] == [(t.label, t.value) for t in tiles]
    assert next(m for m in at.metric if m.label.startswith("LLM time avoided")).delta == \
        tiles[-1].delta
    captions = [c.value for c in at.caption]
    assert all(t.caption in captions for t in tiles if t.caption)
    shown_text = texts(at).replace("\\", "")
    assert page.curve_sentences.split(":")[0] in shown_text
    assert "Does retrieval predict answer quality here?" in shown_text  # the verdict's box
    stages = next(d.value for d in at.dataframe if "stage" in getattr(d.value, "columns", []))
    assert {"counts", "seconds"} <= set(stages.columns) and "mark" not in stages.columns
    # the synthetic run is no HotpotQA run: no paper's Table 3.1 beside ragdash's
    assert not [e for e in at.expander if "Table 3.1" in e.label]


def test_thresholds_lays_out_its_model(shown, demo):
    """The panel opens at the calibration's N with its evidence box and the fit's table (what
    they say: `test_thresholds_model_*`); "Beyond the paper" below."""
    from ragdash.view import thresholds as model

    at = shown["thresholds"]
    start = model.start(demo)
    assert start.n == 1000 and at.slider(key="thr_k").value == pytest.approx(start.k)
    said = texts(at)
    assert "Does retrieval predict answer quality here? (N = 1000)" in said
    ev = demo.facts(label).evidence
    assert [b.value for b in [*at.success, *at.info, *at.warning] if b.value == ev["verdict"]]
    page = model.panel(demo, start.n, start.h, start.k, name=label)
    assert at.dataframe[0].value["est. correct"].tolist() == \
        page.table["est. correct"].tolist()
    assert page.fit in said and "Beyond the paper" in said


def test_browser_table_shows_every_retrievers_score(shown):
    """The question table's id, question and every Score_IR column fit the main column of a
    1400 px window (the judge columns may scroll under the pinned id and question)."""
    frame = next(d for d in shown["browser"].dataframe
                 if "qid" in getattr(d.value, "columns", []))
    px = widths(frame)
    cols = ["qid", "question", "n_parts", *(c for c in px if c.startswith("ir:"))]
    assert len(cols) >= 6 and None not in [px[c] for c in cols], px
    assert 32 + sum(px[c] for c in cols) <= 920, px  # 32: the row-selection checkbox
    assert clipped_headers(frame) == []


def test_compare_lays_out_its_model(shown, demo):
    """Compare on three retrievers: the signal board, every pair (p-values written out), the
    pair in detail and the largest differences linked to the browser as its model says."""
    from ragdash.analysis import area
    from ragdash.view import compare_retrievers as model

    at = shown["compare"]
    said = texts(at)
    assert "Every pair" in said and "Do the signals rank the retrievers the same way?" in said
    n = area.separating_budget(demo.ir_scores(), "bm25", "sim")
    detail = model.pair(demo, "bm25", "sim", n, name=label)
    assert detail.title in said and detail.verdict.split(".")[0] in said.replace("\\", "")
    assert [(m.label, m.value) for m in at.metric] == [(t.label, t.value) for t in detail.tiles]
    pairs = next(d.value for d in at.dataframe if "Holm p" in d.value.columns)
    # written out: a null cell reads "None" in the browser whatever the Styler's na_rep says
    cells = pairs[["Wilcoxon p", "Holm p"]].to_numpy().ravel().tolist()
    assert all(re.fullmatch(r"—|\d(\.\d+)?(e-\d+)?", v) for v in cells), cells
    # the largest differences and their links to the browser: the model's (what they open:
    # test_compare_model's test_the_largest_differences_*)
    from ragdash.ui.state import run_key

    big = model.largest(detail, run_key(demo.run.path), n, demo.budgets)
    links = next(d.value for d in at.dataframe if "open" in d.value.columns)["open"]
    assert links.tolist() == big.table["open"].tolist()
    assert [p.proto.label for p in at.get("page_link")][-1] == big.top_label
    table = next(d.value for d in at.dataframe if "Score_IR" in d.value.columns)
    assert table["system"].tolist() == ["LLM only", "BM25", "SIM", "REO"]  # the picker's
    line = at.info[0].value.replace("\\", "")
    assert line.startswith("Against the truth (contains a gold answer), 4 systems:")
    # each signal's order with its tau: the model's table (the board the page drew, cached)
    orders = next(d.value for d in at.dataframe if "tau" in d.value.columns)
    board = demo.signal_board(n, ("llm_only", *COMPARED))
    expected = orders_table(board, label, demo.signal_costs(list(board.signals)))
    pd.testing.assert_frame_equal(orders.reset_index(drop=True), expected, check_dtype=False)


def test_compare_model_orders_every_signal_against_the_reference(demo):
    """Each signal's order of the systems, best first, with its Kendall's tau against the
    reference's (first row), the pairs it reverses, and its LLM cost where costs are given."""
    from ragdash.analysis import area

    n = area.separating_budget(demo.ir_scores(), "bm25", "sim")
    board = demo.signal_board(n, ("llm_only", *COMPARED))
    orders = orders_table(board, label)
    assert "cost" not in orders.columns
    assert orders["signal"].iloc[0].endswith("(reference)")
    assert orders["tau"].iloc[0] == "reference" and len(orders) >= 3
    taus = [float(t.split()[0]) for t in orders["tau"].iloc[1:] if t != "–"]
    assert taus and all(-1 <= t <= 1 for t in taus)
    systems = {label(s) for s in ("llm_only", *COMPARED)}
    named = [o for o in orders["order"] if o != "–"]  # – : a signal no system has a value of
    assert named[0] == orders["order"].iloc[0] and len(named) >= 3, orders["order"].tolist()
    assert all(set(re.split(r" [>=] ", o)) <= systems for o in named), named
    pairs = re.compile(r"none reversed|(\d+ of \d+ pairs? reversed|\d+ pairs? tied in one order "
                       r"only|fewer than 2 systems.*|every system tied.*|\d+ of the \d+ "
                       r"systems)(, .+)?")
    assert all(pairs.fullmatch(p) for p in orders["pairs"].iloc[1:]), orders["pairs"].tolist()
    assert "tau" not in " ".join(orders["pairs"])  # the tau has its own column
    costed = orders_table(board, label, demo.signal_costs(list(board.signals)))
    assert costed.drop(columns="cost").equals(orders) and costed["cost"].map(bool).all()


def test_llm_page_lays_out_its_model(shown, demo):
    """Table 3.3, the refusal rule's hits as the model counts them, the judge audit's four
    lines with their badges, the errors apart, the trust section and the signals' captions."""
    from ragdash.analysis import judging
    from ragdash.llm.refusal import RefusalRule
    from ragdash.view import llm as model

    at = shown["llm"]
    said = texts(at)
    t33 = at.dataframe[0].value
    assert list(t33.index) == list(judging.table_3_3(demo.judgments(), demo.order)
                                   .rename(index=label).index)
    assert list(t33.index)[0] == "LLM only" and "Errors (kept apart)" in said
    rule = RefusalRule.from_config(demo.spec.judge.refusal)
    hits = model.refusal_hits(demo.answers(), demo.judgments(), rule, name=label)
    assert hits.sentence() in said
    table = next(d.value for d in at.dataframe if "pattern" in d.value.columns)
    assert table.equals(hits.table)
    assert "Can the judge be trusted?" in said
    audit = next(str(m.value) for m in at.markdown if "**Scores vary**" in str(m.value))
    lines = audit.splitlines()
    assert [ln.split("**")[1] for ln in lines] == [c.title for c in demo.audit()] == [
        "Scores vary", "Same answer, same score", "No position bias",
        "Agrees with the true answer"]
    assert all(ln.startswith(("- :green-badge[passed]", "- :orange-badge[warning]",
                              "- :gray-badge[not applicable]")) for ln in lines)
    assert model.gain_sentence(judging.rag_gain(demo.judgments(), demo.order), "bm25",
                               name=label) in said  # the first retriever, picked by default
    # the trust section (no label yet) and the signals' captions: their models'
    from ragdash.view import trust

    assert trust.NO_LABELS in [i.value for i in at.info]
    captions = [c.value for c in at.caption]
    if (agreement := demo.signal_agreement()) is not None and not agreement[0].empty:
        assert all(c in captions for c in model.agreement_captions(agreement[1]))


def test_retrieval_and_report_lay_out_their_models(shown):
    assert "Distribution over questions at N = 1000" in texts(shown["retrieval"])
    keys = {b.key for b in shown["report"].get("download_button")}
    assert {"rep_html", "rep_csv_table_3_1", "rep_pq_scores_all_budgets"} <= keys
    assert any(k.startswith("rep_fig_") for k in keys)


# --- runs in other states, one session each ------------------------------------------------------


def test_a_run_without_llm_stages_on_every_page_and_its_llm_estimate(runs):
    """A freshly built run (retrieval scored, nothing generated or judged), picked on the
    Overview: every page draws it with no exception and says what is missing; the LLM page
    estimates the cost before Start can be pressed."""
    at = open_page()
    box = at.selectbox(key="run")
    box.select_index(box.options.index("no-llm")).run()
    assert not at.exception
    assert "no calibration yet" in texts(at)
    assert at.query_params.get("run", "").endswith("no-llm")
    needles = {"llm": "no LLM stage yet", "thresholds": "no judgments",
               "browser": "Relevant parts"}
    for page in (*PAGES[1:4], *PAGES[5:], "llm"):  # the LLM page last: its estimate follows
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        assert at.title, f"{page} has no title"
        assert needles.get(page, "") in texts(at), page
    assert at.button(key="llm_start").disabled  # no estimate yet
    at.selectbox(key="llm_judge_backend").set_value("openai")
    at.text_input(key="llm_judge_model").set_value("gpt-4o")
    at.button(key="llm_estimate").click().run()
    assert not at.exception, at.exception
    said = plain(at)
    # the form starts where its model says (stepwise and abstain here, a step of 1 for the 12
    # questions: test_llm_page_model's test_the_form_starts_* and test_the_question_limit_*):
    # one call per answer, 12 questions x (5 retrievers + LLM only)
    from ragdash.config import saved_config
    from ragdash.rundir import Run
    from ragdash.view.llm_launch import form_start

    start = form_start(saved_config(Run(runs / "runs" / "no-llm").manifest), 12)
    assert at.selectbox(key="llm_judge_mode").value == start.mode
    assert at.radio(key="llm_prompt").value == start.prompt
    assert "judge: gpt-4o: 72 calls" in said, said[-600:]
    assert "generation:" in said and "$" in said
    # a local model gets a time before its first call (measured, or assumed from the demos)
    assert re.search(r"generation: [^\n]* calls/min \((assumed from|measured on)", said)
    assert re.search(r"judge: gpt-4o: [^\n]*time unknown", said)
    assert not at.button(key="llm_start").disabled
    # a question limit: the first 5 questions only, 5 x 6 answers to judge
    assert at.number_input(key="llm_limit").step == start.limit_step
    at.number_input(key="llm_limit").set_value(5)
    at.button(key="llm_estimate").click().run()
    assert not at.exception, at.exception
    assert "judge: gpt-4o: 30 calls" in plain(at)
    assert "generation: qwen2.5-coder-1.5b-instruct: 30 calls" in plain(at)


def test_an_unknown_run_in_the_link_is_said_not_found(runs):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["run"] = "runs/gone"
    at.run()
    assert not at.exception, at.exception
    # the asked name is a code span: shown literally, never read as Markdown
    assert any("Run `runs/gone` (from the link) was not found" in w.value for w in at.warning)
    assert at.title[0].value == "Run demo"




@pytest.fixture(scope="module")
def hotpot(tmp_path_factory):
    """A run on the paper's HotpotQA data (as its dataset path says)."""
    import json

    run = make_run(tmp_path_factory.mktemp("hotpot") / "hotpot", n_questions=6, seed=7,
                   llm=False)
    manifest = json.loads((run / "run.json").read_text())
    manifest["config"]["dataset"]["path"] = "data/hotpot_dev_distractor_v1_subset1186.json.gz"
    (run / "run.json").write_text(json.dumps(manifest))
    return run


def test_overview_of_a_hotpotqa_run_points_to_the_paper_comparison(runs, hotpot, monkeypatch):
    """Beside Table 3.1 a HotpotQA run shows the paper's table beside ragdash's and what explains
    the difference, from the doc that measures it (a run on other data does not:
    `test_overview_lays_out_its_model`)."""
    doc = "docs/reproducing-the-paper.md"
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(hotpot))
    at = open_page()
    assert not at.exception
    box = next(e for e in at.expander if "Table 3.1" in e.label)
    said = "\n".join(m.value for m in box.markdown)
    assert "| N | paper BM25 | paper SIM |" in said and "| 1000 | 0.62 | 0.52 |" in said
    assert "What explains the difference, measured" in said and "TF-IDF distractors" in said
    assert any(doc in c.value for c in box.caption)


def test_run_with_only_its_first_stages(runs, monkeypatch, tmp_path):
    partial = make_run(tmp_path / "partial", n_questions=6, seed=4, llm=False)
    for name in ("ir_scores.parquet", "ir_summary.csv", "ir_metrics.csv", "retrieved.parquet",
                 "queries.parquet"):
        (partial / name).unlink()
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(partial))
    at = open_page()
    assert "No retrieval scores yet" in texts(at)
    for page in PAGES[1:]:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])


def test_no_run_at_all(runs, monkeypatch, tmp_path):
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(tmp_path / "none"))
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(tmp_path / "empty"))
    at = open_page()
    assert "no run to show yet" in texts(at)
    at.switch_page("app_pages/thresholds.py").run()
    assert not at.exception


# --- widgets whose effect is the point ------------------------------------------------------------


def test_thresholds_sliders_move_the_panel_back_to_fit_and_the_estimators_compare(runs, demo):
    """k and h moved: the panel is its model's at the sliders' values; "Back to the fit" puts
    them back; the cross-validation button gives its verdict (the figures themselves:
    `test_thresholds_model_k_and_h_move_the_estimates`)."""
    from ragdash.view import thresholds as model

    at = open_page("thresholds")
    fitted = at.slider(key="thr_k").value
    before = at.dataframe[0].value.copy()
    at.slider(key="thr_k").set_value(0.95)
    at.slider(key="thr_h").set_value(0.4).run()
    assert not at.exception
    moved = model.panel(demo, 1000, 0.4, 0.95, name=label)
    after = at.dataframe[0].value
    for col in ("est. correct", "est. lacks info"):
        assert after[col].tolist() == moved.table[col].tolist(), col
    assert metric(at, "Agreement of k") == next(t.value for t in moved.tiles
                                                if t.label == "Agreement of k")
    assert "k = 0.950" in texts(at)
    at.button(key="thr_reset").click().run()
    assert at.slider(key="thr_k").value == pytest.approx(fitted)
    assert at.dataframe[0].value["est. correct"].tolist() == before["est. correct"].tolist()
    at.button(key="thr_cv").click().run()
    assert not at.exception, at.exception
    said = texts(at)
    assert "Verdict." in said and "h/k rule" in said


def test_browser_search_picks_the_one_question_and_its_cut_moves(runs):
    """A search that leaves one question opens it; a question picked shows its chunks and MLQ's
    sub-questions and goes to the URL; the cut slider moves Score_IR and the cut marker."""
    at = open_page("browser", qb_ret=["bm25", "mlq"])
    at.text_input(key="qb_search").input("Entity 12-a").run()
    assert len(at.dataframe[0].value) == 1
    assert at.selectbox(key="qb_q").value == "q012"
    at.text_input(key="qb_search").input("").run()
    at.selectbox(key="qb_q").set_value("q007").run()
    assert not at.exception
    page = texts(at)
    assert "d007a#" in page or "d007b#" in page  # its gold chunks are retrieved
    assert "MLQ sub-questions" in page and "What is Entity 7-a?" in page
    assert at.query_params["qb_q"] == "q007"
    scores = [m.value for m in at.metric if m.label.startswith("Score_IR at N")]
    at.slider(key="qb_cut").set_value(20).run()
    low = [m.value for m in at.metric if m.label.startswith("Score_IR at N = 20")]
    assert len(low) == 2 and sum(map(float, low)) <= sum(map(float, scores))
    assert "✂ N = 20" in texts(at)


def test_browser_shows_dataset_text_as_text(runs):
    """Document HTML in a chunk, and a question's metadata, are shown as text: escaped, never
    read as HTML or Markdown."""
    at = open_page("browser", qb_q="q000", qb_ret=["bm25", "sim"])
    joined = "\n".join(h.value for h in at.html)
    assert "&lt;script&gt;alert(&quot;xss&quot;)&lt;/script&gt;" in joined
    assert "&lt;img src=x onerror=alert(1)&gt;" in joined
    assert "<script" not in joined and "<img" not in joined
    at.selectbox(key="qb_q").set_value("q001").run()
    assert not at.exception, at.exception
    assert "&lt;b&gt;bold?&lt;/b&gt;" in "\n".join(h.value for h in at.html)
    meta = next(b for b in (str(h.proto.body) for h in at.html) if "Gold answer" in b)
    assert "source: <b>[wiki](http://evil.example/x)</b>" in meta  # escaped text, no link
    assert "overflow-wrap:anywhere" in meta
    assert not any("evil.example" in str(m.value) for m in [*at.markdown, *at.caption])


def test_one_budget_every_page_follows(runs):
    """N chosen on one page is where every other page's budget starts (and the Retrieval
    page's tables follow its retriever picker)."""
    at = open_page("retrieval")
    at.select_slider(key="ret_n").set_value(300)
    at.multiselect(key="ret_sel").set_value(["bm25", "reo"]).run()
    assert list(at.dataframe[0].value.columns) == ["BM25", "REO"]
    assert "Distribution over questions at N = 300" in texts(at)
    for page, key in (("compare", "cmp_n"), ("browser", "qb_n"), ("thresholds", "thr_n"),
                      ("report", "rep_n")):
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.select_slider(key=key).value == 300, page
    at.select_slider(key="rep_n").set_value(500).run()
    at.switch_page("app_pages/retrieval.py").run()
    assert at.select_slider(key="ret_n").value == 500
    assert "Distribution over questions at N = 500" in texts(at)


def test_data_upload_validation_report(runs, tmp_path):
    import json

    lines = [{"id": "a1", "question": "Who built the tower?", "answer": "Ann",
              "relevant_parts": ["Ann built the tower in 1900."]},
             {"id": "a2", "question": "", "answer": "x", "relevant_parts": ["nothing"]},
             {"id": "a3", "question": "Where is the lake?", "answer": "North",
              "relevant_parts": ["A part found in no document."]}]
    dataset = "\n".join(json.dumps(x) for x in lines).encode()
    corpus = "\n".join(json.dumps(x) for x in [
        {"doc_id": "d1", "title": "Tower", "text": "Ann built the tower in 1900. It is tall."},
        {"doc_id": "d2", "title": "Lake", "text": "The lake is <script>up north</script>."},
    ]).encode()
    at = open_page("data")
    at.file_uploader(key="data_ds").upload("my set.jsonl", dataset, "application/json")
    at.file_uploader(key="data_corpus").upload("docs.jsonl", corpus, "application/json")
    at.run()
    assert not at.exception, at.exception
    assert metric(at, "Questions loaded") == "2"
    assert metric(at, "Records skipped") == "1"
    report = at.dataframe[0].value
    assert {"severity", "file", "record", "field", "message"} <= set(report.columns)
    assert "question" in set(report["field"]) and "relevant_parts" in set(report["field"])
    assert at.session_state["data_upload"]["examples"] == 2
    saved = Path(at.session_state["data_upload"]["dataset"])
    assert saved.name == "my_set.jsonl" and saved.exists()


def test_data_upload_fatal_error_is_named(runs):
    at = open_page("data")
    at.file_uploader(key="data_ds").upload("bad.csv", b"foo,foo\n1,2\n", "text/csv")
    at.run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "bad\\.csv" in errors  # the file name escaped: shown literally
    assert "appear more than once" in errors


def test_data_upload_maps_columns_guessed_from_the_headers(runs):
    at = open_page("data")
    at.file_uploader(key="data_ds").upload(
        "fragen.csv", b"Nr,Frage,Notiz,Antwort\n7,Wo?,x,Hier\n8,Wann?,y,Jetzt\n",
        "text/csv")
    at.file_uploader(key="data_corpus").upload(
        "c.jsonl", b'{"doc_id": "d", "text": "Hier und Jetzt."}\n', "application/jsonl")
    at.run()
    assert not at.exception and not at.error
    boxes = {b.label: b for b in at.selectbox}
    assert boxes["Question column"].value == "Frage"
    assert boxes["Answer column"].value == "Antwort"
    assert boxes["ID column (optional)"].value == "Nr"
    loaded = next(m for m in at.metric if m.label == "Questions loaded")
    assert loaded.value == "2"
    boxes["ID column (optional)"].set_value(MADE).run()  # numbered by the row instead
    upload = at.session_state["data_upload"]
    assert upload["columns"] == {"question": "Frage", "answer": "Antwort"}
    assert [e.qid for e in at.session_state["data_loaded"][1].examples] == ["row-1", "row-2"]


def test_build_page_validates_inputs(runs):
    at = open_page("build")
    at.text_input(key="build_name").input("bad name!").run()
    assert any("run name" in w.value for w in at.warning)
    assert at.button(key="build_start").disabled
    at.text_input(key="build_name").input("ok-run").run()
    at.multiselect(key="build_rets").set_value([]).run()
    assert any("at least one retriever" in w.value for w in at.warning)
    earlier = at.dataframe[-1].value
    assert "no-llm" in set(earlier["run"])




def test_a_constant_judge_is_flagged_and_the_refusal_rule_is_edited_on_the_page(
        runs, monkeypatch, tmp_path):
    """A judge that scores every answer alike: the LLM and Thresholds pages warn (the audit:
    `test_llm_model_a_constant_judge_fails_scores_vary`). On the LLM page the refusal rule's
    widgets drive what it matches (what a rule matches: `test_llm_model_refusal_rule_*`): a
    pattern that is no regular expression is said so; the rule switched off matches nothing."""
    from ragdash.rundir import Run

    const = tmp_path / "constant-judge"
    shutil.copytree(runs / "demo", const)
    run = Run(const)
    j = run.read("judgments")
    run.write("judgments", j.assign(score=j["score"].where(j["score"].isna(), 1)))
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(const))
    at = open_page("thresholds")
    for page in ("thresholds", "llm"):
        if page != "thresholds":
            at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        warning = " ".join(str(w.value) for w in at.warning)
        assert "judge's scores look unreliable" in warning and "scores vary" in warning
    assert re.search(r"\*\*\d+ of \d+ answers \([\d.]+%\) match the rule as shown\*\*",
                     texts(at))
    at.text_area(key="llm_refusal_patterns").set_value("(unclosed").run()
    assert not at.exception, at.exception
    assert any("not a valid regular expression" in e.value for e in at.error)
    at.toggle(key="llm_refusal_on").set_value(False)
    at.text_area(key="llm_refusal_patterns").set_value("cannot").run()
    assert not at.exception, at.exception
    assert "**0 of" in texts(at)


def test_build_page_prices_the_llm_stages_before_start_judging_stepwise_by_default(runs):
    """Issue 33: the Build page gave no estimate before Start (only the LLM page, behind a
    button, once a run exists). The LLM stages switched on judge stepwise with the 1.5B model
    by default."""
    at = open_page("build")
    at.number_input(key="build_limit").set_value(10).run()
    at.toggle(key="build_llm").set_value(True).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="build_judge_mode").value == "stepwise"
    assert at.radio(key="build_prompt").value == "abstain"
    assert "qwen-1.5b" in at.text_input(key="build_judge_model").placeholder
    said = plain(at)
    assert "What the LLM stages would cost" in said
    # 10 questions x (BM25 + LLM only): the default generator and judge, with their time
    assert "generation: qwen2.5-coder-1.5b-instruct: 20 calls" in said, said[-800:]
    assert "judge: qwen2.5-coder-1.5b-instruct: 20 calls" in said
    assert "calls/min (" in said and "upper bound" in said
    assert not at.button(key="build_start").disabled
    at.text_input(key="build_llm_model").set_value("qwen").run()  # a model named: it answers
    assert "generation: qwen2.5-0.5b-instruct: 20 calls" in plain(at)


def test_build_page_says_which_key_a_job_sends_and_hands_a_typed_key_to_it(runs, monkeypatch):
    """Issue 46 item 1: the server's key never goes to a URL typed here; a key typed here goes
    to the job (in its environment only) and nowhere else."""
    from ragdash import jobs
    from ragdash.rundir.lock import RunLocked

    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-not-for-typed-urls")
    monkeypatch.delenv("RAGDASH_KEY_ENDPOINTS", raising=False)
    handed: list = []

    def spawn(home, kind, **kwargs):  # the job is not started: what it would get is kept
        handed.append(kwargs.get("api_key"))
        raise RunLocked(home, None)

    monkeypatch.setattr(jobs, "spawn", spawn)
    at = open_page("build")
    at.number_input(key="build_limit").set_value(5).run()
    at.toggle(key="build_llm").set_value(True).run()
    at.selectbox(key="build_llm_backend").set_value("openai").run()
    at.text_input(key="build_llm_url").set_value("http://typed.example:8000/v1").run()
    assert not at.exception, at.exception
    shown = plain(at)
    assert "OPENAI_API_KEY is not sent to http" in shown and "typed.example" in shown
    at.text_input(key="build_api_key").set_value("sk-typed-by-the-user").run()
    assert "The key you typed goes to this server only" in plain(at)
    at.button(key="build_start").click().run()
    assert not at.exception, at.exception
    assert handed == ["sk-typed-by-the-user"]
    assert "sk-typed-by-the-user" not in plain(at)




def test_build_page_explains_every_retriever_and_parameter(runs):
    from ragdash import chunking, retrieval

    at = open_page("build")
    at.multiselect(key="build_rets").set_value(list(retrieval.RETRIEVERS)).run()
    assert not at.exception, at.exception
    captions = texts(at)
    assert all(d in captions for d in retrieval.DESCRIPTIONS.values())
    for name in retrieval.RETRIEVERS:  # every parameter widget has its one-line help
        for param in retrieval.resolve_params(name, "paper"):
            assert param in retrieval.PARAM_HELP, (name, param)
    for method in chunking.CHUNKERS:
        for param in chunking.default_params(method):
            assert param in chunking.PARAM_HELP, (method, param)
    helps = [w.help for w in at.number_input if w.key.startswith("build_r_")]
    assert helps and all(helps)




def test_build_page_shows_jobs_from_disk_and_refuses_a_run_in_use(runs, monkeypatch, tmp_path):
    """Jobs run in processes of their own and report in their run directories: the Build page
    of any server (a restarted one too) shows them from there, a job whose process died as
    interrupted; starting a run that another process holds is refused with a message."""
    import subprocess
    import sys
    import time

    from ragdash import jobs

    root = tmp_path / "runs"
    monkeypatch.setenv("RAGDASH_RUNS_ROOT", str(root))
    for name, state in (("stopped", "cancelled"), ("crashed", "running")):
        jobs.queue(root / name, "build", {"name": name}, ("ingest",))
        jobs.write(root / name, state=state, ended_ts=time.time() if state == "cancelled"
                   else None)
    (root / "busy").mkdir()
    hold = ("import fcntl, os, sys, time\n"
            "fd = os.open(os.path.join(sys.argv[1], '.lock'), os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(600)\n")
    other = subprocess.Popen([sys.executable, "-c", hold, str(root / "busy")],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        at = open_page("build")
        labels = [s.label for s in at.status]
        assert any(lb.startswith("Run stopped cancelled after") for lb in labels), labels
        assert any(lb.startswith("Run crashed was interrupted after") for lb in labels), labels
        assert sum("The run is resumable" in i.value for i in at.info) == 2
        assert {s.state for s in at.status} == {"error"}
        at.text_input(key="build_name").input("busy").run()
        at.button(key="build_start").click().run()
        assert not at.exception, at.exception
        errors = " ".join(e.value for e in at.error)
        assert "is in use" in errors and "busy" in errors, errors
        assert not (root / "busy" / "run.json").exists()
    finally:
        other.kill()
        other.wait()


def test_doc_section_reads_one_heading_up_to_the_next_of_its_level(tmp_path):
    from ragdash.ui.doc_sections import section

    (tmp_path / "d.md").write_text("# T\n\n## A\ntext a\n### A.1\nsub\n## B\ntext b\n")
    assert section("d.md", "A", tmp_path) == "text a\n### A.1\nsub"
    assert section("d.md", "B", tmp_path) == "text b"
    assert section("d.md", "C", tmp_path) is None and section("x.md", "A", tmp_path) is None


# --- the pages' models: what the pages show, without Streamlit -----------------------------------


@pytest.fixture(scope="module")
def ov(demo):
    """The demo run's Overview model."""
    from ragdash.view.overview import overview

    return overview(demo, name=label)


def test_overview_model_headline_is_the_area_leader_with_its_sentences(demo, ov):
    """The headline depends on no budget the user never chose: the retriever with the largest
    area under its Score_IR curve, and sentences generated from the same numbers."""
    from ragdash.analysis import area

    head = area.headline(demo.run.read("ir_scores"))
    best = ov.tiles[3]
    assert best.label.startswith("Best retriever over all budgets")
    assert best.value == label(head.leader)
    expected = " ".join(area.sentences(head, name=label))
    assert expected.split(":")[0] in ov.curve_sentences  # "Over N = …, <leader> has the …"
    assert f"{head.areas['area'].iloc[0]:.3f}" in f"{ov.curve_sentences} {best.caption}"


def test_overview_model_headline_figures(ov):
    assert ov.title == "Run demo"
    tiles = {t.label: t for t in [*ov.tiles, *ov.prediction.tiles]}
    assert tiles["Questions"].value == "30" and tiles["Retrievers"].value == "5"
    assert ov.tiles[3].value in {"BM25", "SIM", "MMR", "REO", "MLQ"}
    share = re.compile(r"^\d+\.\d %$")  # "41.2 %", its CI in the caption below
    assert share.match(tiles["Judged 5 (RAG answers)"].value)
    assert share.match(tiles["Estimated by a logistic model"].value)
    hk = tiles["Estimated by the h/k rule"].value
    assert share.match(hk) or hk == "no estimate"
    cis = [t.caption for t in ov.prediction.tiles if (t.caption or "").startswith("95 % CI ")]
    assert len(cis) == 3 and all(re.match(r"95 % CI \d+\.\d–\d+\.\d %$", c) for c in cis)
    assert ov.prediction.verdict and ov.prediction.verdict["verdict"]  # its box's sentence
    # local models cost no money: the time they took is shown, never dollars
    assert not [t for t in tiles if t.startswith("LLM cost avoided")]
    took = next(t for label_, t in tiles.items() if label_.startswith("LLM time avoided"))
    assert re.match(r"^(\d+ h )?\d+ (min|s)$", took.value) and "$" not in took.value
    assert took.delta == f"{30 * 6 + 30:,} LLM calls"
    assert ov.paper_data is False  # the synthetic run is no HotpotQA run


def test_overview_model_of_a_hotpotqa_run_shows_the_papers_table(hotpot):
    from ragdash.ui.doc_sections import PAPER_DOC, section
    from ragdash.view.overview import overview

    assert overview(RunView(hotpot)).paper_data
    tables = section(PAPER_DOC, "The two tables")
    assert "| N | paper BM25 | paper SIM |" in tables and "| 1000 | 0.62 | 0.52 |" in tables
    assert "TF-IDF distractors" in section(PAPER_DOC, "What explains the difference, measured")


def test_pipeline_table_rounds_its_figures(tmp_path):
    """Fitted thresholds in a stage's counts read to 3 decimals, never 0.04521276595744681."""
    import json

    from ragdash.rundir import Run, stage_table

    run = make_run(tmp_path / "fitted", n_questions=6, seed=5, llm=False)
    manifest = json.loads((run / "run.json").read_text())
    stage = next(iter(manifest["stages"].values()))
    stage["counts"] = {**(stage.get("counts") or {}), "h": 0.04521276595744681}
    stage["seconds"] = 1.23456789
    (run / "run.json").write_text(json.dumps(manifest))
    table = stage_table(Run(run).stages().values())  # the Overview's pipeline table
    assert "h: 0.045" in " ".join(table["counts"]) and "0.0452" not in " ".join(table["counts"])
    assert 1.2 in set(table["seconds"])


def _rule(view: RunView):
    from ragdash.llm.refusal import RefusalRule

    return RefusalRule.from_config(view.spec.judge.refusal)


def test_llm_model_refusal_table_says_not_judged_with_a_dash(runs, tmp_path):
    """Half the questions judged: the answers the rule matches but the judge never scored
    show '—' as their score, not 'None'."""
    from ragdash.rundir import Run
    from ragdash.view import llm as model

    run = Run(shutil.copytree(runs / "demo", tmp_path / "half"))
    j = run.read("judgments")
    run.write("judgments", j[j["qid"].isin(sorted(set(j["qid"]))[:15])])
    view = RunView(run.path)
    hits = model.refusal_hits(view.answers(), view.judgments(), _rule(view), name=label).table
    assert not hits.isna().any().any(), hits
    assert "—" in set(hits["score"]) and {"1", "—"} >= set(hits["score"])


def test_llm_model_refusal_rule_lists_and_edits_its_matches(demo):
    from ragdash.llm.refusal import RefusalPatternError, RefusalRule
    from ragdash.view import llm as model

    answers, judgments = demo.answers(), demo.judgments()
    hits = model.refusal_hits(answers, judgments, _rule(demo), name=label)
    found = re.search(r"\*\*(\d+) of (\d+) answers \(([\d.]+)%\) match the rule as shown\*\*; "
                      r"the run's judge stage scored (\d+) by the rule", hits.sentence())
    assert found, hits.sentence()
    matched, recorded = int(found.group(1)), int(found.group(4))
    assert matched > 0 and recorded > 0
    assert len(hits.table) == matched
    assert set(hits.table["pattern"]) == {"cannot find enough information"}
    table = model.refusal_hits(answers, judgments, RefusalRule(["^Probably"], True)).table
    assert set(table["pattern"]) == {"^Probably"} and table["answer"].str.startswith(
        "Probably").all()
    with pytest.raises(RefusalPatternError, match="not a valid regular expression"):
        RefusalRule(["(unclosed"], True)
    off = model.refusal_hits(answers, judgments, RefusalRule(["cannot"], False))
    assert off.sentence().startswith("**0 of")


def test_llm_model_results_tables(demo):
    from ragdash.analysis import judging
    from ragdash.view import llm as model

    t33 = judging.table_3_3(demo.judgments(), demo.order).rename(index=label)
    assert list(t33.index)[0] == "LLM only"
    assert (t33[["1", "2", "3", "4", "5"]].sum(axis=1).round(6) == 1).all()
    gain = judging.rag_gain(demo.judgments(), demo.order)
    assert model.gain_sentence(gain, "reo", name=label).startswith("With **REO**")


def test_llm_model_a_constant_judge_fails_scores_vary(runs, tmp_path):
    from ragdash.rundir import Run

    run = Run(shutil.copytree(runs / "demo", tmp_path / "constant"))
    j = run.read("judgments")
    run.write("judgments", j.assign(score=j["score"].where(j["score"].isna(), 1)))
    checks = {c.title: c.status for c in RunView(run.path).audit()}
    assert checks["Scores vary"] == "warn"
    assert {c.title: c.status for c in RunView(runs / "demo").audit()}["Scores vary"] != "warn"


def test_thresholds_model_k_and_h_move_the_estimates(demo):
    from ragdash.view import thresholds as model

    s = model.start(demo)
    fit = model.panel(demo, s.n, s.h, s.k, name=label)
    moved = model.panel(demo, s.n, s.h, 0.95, name=label)
    assert moved.table["est. correct"].sum() < fit.table["est. correct"].sum()

    def agreement(p):
        return next(t.value for t in p.tiles if t.label == "Agreement of k")

    assert agreement(moved) != agreement(fit)
    assert "k = 0.950" in moved.fit
    assert model.panel(demo, s.n, 0.4, 0.95, name=label).table["est. lacks info"].sum() > 0


def test_thresholds_model_budget_refits(demo):
    from ragdash.view import thresholds as model

    s = model.start(demo)
    assert model.panel(demo, 300, s.h, s.k, name=label).fit.startswith("Fitted at N = 300")


def test_thresholds_model_evidence_is_the_fixtures_auc(demo):
    """The evidence panel reports the AUC of the fixture's own (Score_IR, judge) pairs."""
    from ragdash.calibration import pairs
    from ragdash.calibration.predictive import auc

    df, _ = pairs(demo.run.read("ir_scores"), demo.run.read("judgments"), 1000)
    known = auc(df["ir"].to_numpy(), df["judge"].to_numpy() == 5)
    facts = demo.facts(label)
    assert facts.budget == 1000  # the panel at N = 1000 shows the run's evidence
    assert f"AUC {known:.2f} [" in facts.evidence["verdict"]
    assert known > 0.6  # the fixture's judge follows Score_IR


def test_compare_model_pair_and_every_pair(demo):
    from ragdash.analysis import area, sentences
    from ragdash.view import compare_retrievers as model

    n = area.separating_budget(demo.ir_scores(), "bm25", "sim")
    detail = model.pair(demo, "bm25", "sim", n, name=label)
    tiles = {t.label: int(t.value) for t in detail.tiles[:3]}
    assert tiles["BM25 higher"] + tiles["Ties"] + tiles["SIM higher"] == 30
    pairs = model.every_pair(demo, COMPARED, n, name=label)
    cells = [sentences.p_text(p) for p in pairs[["Wilcoxon p", "Holm p"]].to_numpy().ravel()]
    assert all(re.fullmatch(r"—|\d(\.\d+)?(e-\d+)?", v) for v in cells), cells
    assert model.pair(demo, "bm25", "reo", n, name=label).title.startswith("BM25 vs REO")


def test_compare_model_every_signal_per_system_with_its_tau(demo):
    """The chosen retrievers and the LLM-only answers on every signal, 'mean [low–high]', a
    dash where a system has no value, and the rank-agreement line."""
    from ragdash.analysis import area
    from ragdash.ui.signal_board import summary_markdown

    n = area.separating_budget(demo.ir_scores(), "bm25", "sim")
    board = demo.signal_board(n, ("llm_only", *COMPARED))
    table = board.table(label)
    assert table["system"].tolist() == ["LLM only", "BM25", "SIM", "REO"]
    assert table.set_index("system").loc["LLM only", "Score_IR"] == "–"
    assert re.fullmatch(r"\d\.\d{3} \[\d\.\d{3}–\d\.\d{3}\]( · n=\d+)?",
                        table.set_index("system").loc["BM25", "LLM judge"])
    line = summary_markdown(board.summary).replace("\\", "")
    assert line.startswith("Against the truth (contains a gold answer), 4 systems:")
    assert "tau" in line and "- **Same order as the reference (tau 1.00)**" in line
    two = demo.signal_board(n, ("llm_only", "bm25", "sim")).table(label)
    assert two["system"].tolist() == ["LLM only", "BM25", "SIM"]  # follows the picker


def test_browser_model_filters_and_search(demo):
    from ragdash.analysis import frames
    from ragdash.view.browser import Filters

    run = demo.run
    examples = run.table("examples")
    table = frames.per_question(examples.assign(qid=examples["qid"].astype(str)),
                                run.table("ir_scores"), 1000, demo.judgments(),
                                demo.retrievers)
    found = Filters("bm25", search="Entity 12-a").apply(table)
    assert found["qid"].tolist() == ["q012"]
    typed = Filters("bm25", metadata={"type": ["comparison"]}).apply(table)
    assert 0 < len(typed) < len(table) == 30


def test_retrieval_model_budget_and_grouping(demo):
    from ragdash.analysis import curves, frames
    from ragdash.view.retrieval import distribution_stats

    ir = demo.ir_scores()
    stats = distribution_stats(frames.at_budget(ir, 200), ["bm25", "reo"], name=label)
    assert list(stats.index) == ["BM25", "REO"] and (stats["questions"] == 30).all()
    table = curves.summary_table(ir[ir["retriever"].isin(["bm25", "reo"])], ["bm25", "reo"])
    assert list(table.rename(columns=label).columns) == ["BM25", "REO"]
