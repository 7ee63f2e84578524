"""Every dashboard page through streamlit's AppTest on a synthetic run: renders without exception,
and the widgets change what is shown. The app is pointed at the fixture runs with
RAGDASH_DEMO_RUN / RAGDASH_RUNS_ROOT."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from fixtures.apptest import open_app
from fixtures.make_run import make_run
from fixtures.tables import clipped_headers, widths
from streamlit.testing.v1 import AppTest

from ragdash.ui.table_columns import MADE

APP = Path(__file__).resolve().parent.parent / "app.py"
PAGES = ("overview", "retrieval", "browser", "compare", "llm", "thresholds", "report", "data",
         "build")


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


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders(runs, page):
    at = open_page(page)
    assert at.title, f"{page} has no title"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_a_run_without_llm_stages(runs, page):
    """A freshly built run (retrieval scored, nothing generated or judged): every page draws
    with no exception (the browser's build path opens the pages a user goes to next)."""
    from ragdash.ui.state import run_key

    at = open_app(page, run=run_key(runs / "runs" / "no-llm"))
    assert at.title, f"{page} has no title"


def test_overview_headline_is_the_area_leader_with_its_sentences(runs):
    """The headline depends on no budget the user never chose: the retriever with the largest
    area under its Score_IR curve, and sentences generated from the same numbers."""
    from ragdash.analysis import area
    from ragdash.rundir import Run
    from ragdash.viz.colors import label

    run = Run(runs / "demo")
    head = area.headline(run.read("ir_scores"))
    at = open_page()
    assert metric(at, "Best retriever over all budgets") == label(head.leader)
    shown = texts(at).replace("\\", "")
    expected = " ".join(area.sentences(head, name=label))
    assert expected.split(":")[0] in shown  # "Over N = …, <leader> has the largest area…"
    assert f"{head.areas['area'].iloc[0]:.3f}" in shown


def test_overview_headline_figures(runs):
    at = open_page()
    assert at.title[0].value == "Run demo"
    assert metric(at, "Questions") == "30"
    assert metric(at, "Retrievers") == "5"
    assert metric(at, "Best retriever") in {"BM25", "SIM", "MMR", "REO", "MLQ"}
    share = re.compile(r"^\d+\.\d %$")  # "41.2 %", its CI in the caption below
    assert share.match(metric(at, "Judged 5 (RAG")), metric(at, "Judged 5 (RAG")
    assert share.match(metric(at, "Estimated by a logistic model"))
    hk = metric(at, "Estimated by the h/k rule")
    assert share.match(hk) or hk == "no estimate"
    cis = [c.value for c in at.caption if c.value.startswith("95 % CI ")]
    assert len(cis) == 3 and all(re.match(r"95 % CI \d+\.\d–\d+\.\d %$", c) for c in cis)
    assert "Does retrieval predict answer quality here?" in texts(at)
    # local models cost no money: the time they took is shown, never dollars
    assert not [m for m in at.metric if m.label.startswith("LLM cost avoided")]
    took = next(m for m in at.metric if m.label.startswith("LLM time avoided"))
    assert re.match(r"^(\d+ h )?\d+ (min|s)$", took.value) and "$" not in took.value
    assert took.delta == f"{30 * 6 + 30:,} LLM calls"
    assert at.selectbox(key="run").value.endswith("demo")


def test_an_unknown_run_in_the_link_is_said_not_found(runs):
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.query_params["run"] = "runs/gone"
    at.run()
    assert not at.exception, at.exception
    # the asked name is a code span: shown literally, never read as Markdown
    assert any("Run `runs/gone` (from the link) was not found" in w.value for w in at.warning)
    assert at.title[0].value == "Run demo"


def test_run_without_llm_files_is_explained(runs):
    at = open_page()
    box = at.selectbox(key="run")
    box.select_index(box.options.index("no-llm")).run()
    assert not at.exception
    assert "no calibration yet" in texts(at)
    assert at.query_params.get("run", "").endswith("no-llm")
    for page, needle in (("llm", "no LLM stage yet"), ("thresholds", "no judgments"),
                         ("browser", "Relevant parts")):
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        assert needle in texts(at), page


def test_overview_of_a_hotpotqa_run_points_to_the_paper_comparison(runs, monkeypatch, tmp_path):
    """Beside Table 3.1 a HotpotQA run shows the paper's table beside ragdash's and what explains
    the difference, from the doc that measures it; a run on other data does not."""
    import json

    doc = "docs/reproducing-the-paper.md"
    assert not [e for e in open_page().expander if "Table 3.1" in e.label]  # the synthetic run
    run = make_run(tmp_path / "hotpot", n_questions=6, seed=7, llm=False)
    manifest = json.loads((run / "run.json").read_text())
    manifest["config"]["dataset"]["path"] = "data/hotpot_dev_distractor_v1_subset1186.json.gz"
    (run / "run.json").write_text(json.dumps(manifest))
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(run))
    at = open_page()
    assert not at.exception
    box = next(e for e in at.expander if "Table 3.1" in e.label)
    shown = "\n".join(m.value for m in box.markdown)
    assert "| N | paper BM25 | paper SIM |" in shown and "| 1000 | 0.62 | 0.52 |" in shown
    assert "What explains the difference, measured" in shown and "TF-IDF distractors" in shown
    assert any(doc in c.value for c in box.caption)


def test_pipeline_table_rounds_its_figures(runs, monkeypatch, tmp_path):
    """Fitted thresholds in a stage's counts read to 3 decimals, never 0.04521276595744681."""
    import json

    run = make_run(tmp_path / "fitted", n_questions=6, seed=5, llm=False)
    manifest = json.loads((run / "run.json").read_text())
    stage = next(iter(manifest["stages"].values()))
    stage["counts"] = {**(stage.get("counts") or {}), "h": 0.04521276595744681}
    stage["seconds"] = 1.23456789
    (run / "run.json").write_text(json.dumps(manifest))
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(run))
    at = open_page()
    table = next(d.value for d in at.dataframe if "stage" in getattr(d.value, "columns", []))
    assert "h: 0.045" in " ".join(table["counts"]) and "0.0452" not in " ".join(table["counts"])
    assert 1.2 in set(table["seconds"])


def test_refusal_table_says_not_judged_with_a_dash(runs, monkeypatch, tmp_path):
    """Half the questions judged: the answers the rule matches but the judge never scored
    show '—' as their score, not 'None'."""
    from ragdash.rundir import Run

    path = make_run(tmp_path / "half", n_questions=12, seed=6)
    run = Run(path)
    j = run.read("judgments")
    run.write("judgments", j[j["qid"].isin(sorted(set(j["qid"]))[:6])])
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(path))
    at = open_page("llm")
    hits = next(d.value for d in at.dataframe if "pattern" in getattr(d.value, "columns", []))
    assert not hits.isna().any().any(), hits
    assert "—" in set(hits["score"]) and {"1", "—"} >= set(hits["score"])


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


def test_thresholds_k_moves_the_estimates_and_back_to_fit(runs):
    at = open_page("thresholds")
    k = at.slider(key="thr_k")
    fitted = k.value
    before = at.dataframe[0].value.copy()
    agreement = metric(at, "Agreement of k")
    k.set_value(0.95).run()
    assert not at.exception
    after = at.dataframe[0].value
    assert after["est. correct"].sum() < before["est. correct"].sum()
    assert metric(at, "Agreement of k") != agreement
    assert "k = 0.950" in texts(at)
    at.slider(key="thr_h").set_value(0.4).run()
    assert at.dataframe[0].value["est. lacks info"].sum() > 0
    at.button(key="thr_reset").click().run()
    assert at.slider(key="thr_k").value == pytest.approx(fitted)
    assert at.dataframe[0].value["est. correct"].tolist() == before["est. correct"].tolist()


def test_thresholds_budget_refits(runs):
    at = open_page("thresholds")
    at.select_slider(key="thr_n").set_value(300).run()
    assert not at.exception
    assert "Fitted at N = 300" in texts(at)


def test_browser_table_shows_every_retrievers_score(runs):
    """The question table's id, question and every Score_IR column fit the main column of a
    1400 px window (the judge columns may scroll under the pinned id and question)."""
    at = open_page("browser")
    frame = next(d for d in at.dataframe if "qid" in getattr(d.value, "columns", []))
    px = widths(frame)
    shown = ["qid", "question", "n_parts", *(c for c in px if c.startswith("ir:"))]
    assert len(shown) >= 6 and None not in [px[c] for c in shown], px
    assert 32 + sum(px[c] for c in shown) <= 920, px  # 32: the row-selection checkbox
    assert clipped_headers(frame) == []


def test_browser_question_shows_its_chunks_and_cut_moves(runs):
    at = open_page("browser", qb_ret=["bm25", "mlq"])
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


def test_browser_filters_and_search(runs):
    at = open_page("browser")
    n_all = len(at.dataframe[0].value)
    at.text_input(key="qb_search").input("Entity 12-a").run()
    assert len(at.dataframe[0].value) == 1
    assert at.selectbox(key="qb_q").value == "q012"
    at.text_input(key="qb_search").input("").run()
    at.multiselect(key="qb_f_type").set_value(["comparison"]).run()
    assert 0 < len(at.dataframe[0].value) < n_all


def test_browser_shows_document_html_as_text(runs):
    at = open_page("browser", qb_q="q000", qb_ret=["bm25", "sim"])
    bodies = [h.value for h in at.html]
    joined = "\n".join(bodies)
    assert "&lt;script&gt;alert(&quot;xss&quot;)&lt;/script&gt;" in joined
    assert "&lt;img src=x onerror=alert(1)&gt;" in joined
    assert "<script" not in joined and "<img" not in joined
    at.selectbox(key="qb_q").set_value("q001").run()
    assert "&lt;b&gt;bold?&lt;/b&gt;" in "\n".join(h.value for h in at.html)


def test_compare_pair(runs):
    at = open_page("compare", cmp_ret=["bm25", "sim", "reo"])
    assert not at.exception
    higher = int(metric(at, "BM25 higher"))
    ties = int(metric(at, "Ties"))
    lower = int(metric(at, "SIM higher"))
    assert higher + ties + lower == 30
    assert "Every pair" in texts(at)
    pairs = next(d.value for d in at.dataframe if "Holm p" in d.value.columns)
    # written out: a null cell reads "None" in the browser whatever the Styler's na_rep says
    shown = pairs[["Wilcoxon p", "Holm p"]].to_numpy().ravel().tolist()
    assert all(re.fullmatch(r"—|\d(\.\d+)?(e-\d+)?", v) for v in shown), shown
    links = next(d.value for d in at.dataframe if "open" in d.value.columns)["open"]
    assert links.str.startswith("browser?").all() and links.str.contains("qb_q=q").all()
    at.selectbox(key="cmp_b").set_value("reo").run()
    assert "BM25 vs REO" in texts(at)


def test_compare_every_signal_per_system_with_its_tau(runs):
    """The chosen retrievers and the LLM-only answers on every signal, 'mean [low–high]', a
    dash where a system has no value, and the rank-agreement line."""
    at = open_page("compare", cmp_ret=["bm25", "sim", "reo"])
    assert "Do the signals rank the retrievers the same way?" in texts(at)
    table = next(d.value for d in at.dataframe if "Score_IR" in d.value.columns)
    assert table["system"].tolist() == ["LLM only", "BM25", "SIM", "REO"]
    assert table.set_index("system").loc["LLM only", "Score_IR"] == "–"
    assert re.fullmatch(r"\d\.\d{3} \[\d\.\d{3}–\d\.\d{3}\]( · n=\d+)?",
                        table.set_index("system").loc["BM25", "LLM judge"])
    line = at.info[0].value.replace("\\", "")
    assert line.startswith("Against the truth (contains a gold answer), 4 systems:")
    assert "tau" in line and "- **Same order as the reference (tau 1.00)**" in line
    orders = next(d.value for d in at.dataframe if "tau" in d.value.columns)
    assert orders["signal"].iloc[0].endswith("(reference)")
    assert orders["tau"].iloc[0] == "reference" and len(orders) >= 3
    taus = [float(t.split()[0]) for t in orders["tau"].iloc[1:] if t != "–"]
    assert taus and all(-1 <= t <= 1 for t in taus)
    at.multiselect(key="cmp_ret").set_value(["bm25", "sim"]).run()
    table = next(d.value for d in at.dataframe if "Score_IR" in d.value.columns)
    assert table["system"].tolist() == ["LLM only", "BM25", "SIM"]  # follows the picker


def test_one_budget_every_page_follows(runs):
    """N chosen on one page is where every other page's budget starts."""
    at = open_page("retrieval")
    at.select_slider(key="ret_n").set_value(300).run()
    for page, key in (("compare", "cmp_n"), ("browser", "qb_n"), ("thresholds", "thr_n"),
                      ("report", "rep_n")):
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.select_slider(key=key).value == 300, page
    at.select_slider(key="rep_n").set_value(500).run()
    at.switch_page("app_pages/retrieval.py").run()
    assert at.select_slider(key="ret_n").value == 500
    assert "Distribution over questions at N = 500" in texts(at)


def test_retrieval_budget_and_grouping(runs):
    at = open_page("retrieval")
    assert "Distribution over questions at N = 1000" in texts(at)
    at.select_slider(key="ret_n").set_value(200).run()
    assert "Distribution over questions at N = 200" in texts(at)
    at.multiselect(key="ret_sel").set_value(["bm25", "reo"]).run()
    table = at.dataframe[0].value
    assert list(table.columns) == ["BM25", "REO"]


def test_llm_results_tables(runs):
    at = open_page("llm")
    t33 = at.dataframe[0].value
    assert list(t33.index)[0] == "LLM only"
    assert (t33[["1", "2", "3", "4", "5"]].sum(axis=1).round(6) == 1).all()
    assert "Errors (kept apart)" in texts(at)
    at.selectbox(key="llm_sys").set_value("reo").run()
    assert "With **REO**" in texts(at)


def test_report_downloads(runs):
    at = open_page("report")
    keys = {b.key for b in at.get("download_button")}
    assert {"rep_html", "rep_csv_table_3_1", "rep_pq_scores_all_budgets"} <= keys
    assert any(k.startswith("rep_fig_") for k in keys)


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


def test_llm_page_estimates_cost_before_it_can_start(runs):
    at = open_page()
    box = at.selectbox(key="run")
    box.select_index(box.options.index("no-llm")).run()
    at.switch_page("app_pages/llm.py").run()
    assert not at.exception, at.exception
    assert at.button(key="llm_start").disabled  # no estimate yet
    at.selectbox(key="llm_judge_backend").set_value("openai")
    at.text_input(key="llm_judge_model").set_value("gpt-4o")
    at.button(key="llm_estimate").click().run()
    assert not at.exception, at.exception
    shown = plain(at)
    # stepwise by default (a small local judge scores the paper's rubric by position):
    # one call per answer, 12 questions x (5 retrievers + LLM only)
    assert at.selectbox(key="llm_judge_mode").value == "stepwise"
    assert at.radio(key="llm_prompt").value == "abstain"
    assert "judge: gpt-4o: 72 calls" in shown, shown[-600:]
    assert "generation:" in shown and "$" in shown
    # a local model gets a time before its first call (measured, or assumed from the demos)
    assert re.search(r"generation: [^\n]* calls/min \((assumed from|measured on)", shown)
    assert re.search(r"judge: gpt-4o: [^\n]*time unknown", shown)
    assert not at.button(key="llm_start").disabled
    # a question limit: the first 5 questions only, 5 x 6 answers to judge; its step fits the
    # 12 questions (a step of 10 left the +/- buttons disabled)
    assert at.number_input(key="llm_limit").step == 1
    at.number_input(key="llm_limit").set_value(5)
    at.button(key="llm_estimate").click().run()
    assert not at.exception, at.exception
    assert "judge: gpt-4o: 30 calls" in plain(at)
    assert "generation: qwen2.5-coder-1.5b-instruct: 30 calls" in plain(at)


def test_llm_page_lists_and_edits_the_refusal_rule(runs):
    at = open_page("llm")
    shown = texts(at)
    found = re.search(r"\*\*(\d+) of (\d+) answers \(([\d.]+)%\) match the rule as shown\*\*; "
                      r"the run's judge stage scored (\d+) by the rule", shown)
    assert found, shown[-2000:]
    matched, recorded = int(found.group(1)), int(found.group(4))
    assert matched > 0 and recorded > 0
    table = next(d.value for d in at.dataframe if "pattern" in d.value.columns)
    assert len(table) == matched and set(table["pattern"]) == {"cannot find enough information"}
    at.text_area(key="llm_refusal_patterns").set_value("^Probably").run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "pattern" in d.value.columns)
    assert set(table["pattern"]) == {"^Probably"} and table["answer"].str.startswith(
        "Probably").all()
    at.text_area(key="llm_refusal_patterns").set_value("(unclosed").run()
    assert not at.exception, at.exception
    assert any("not a valid regular expression" in e.value for e in at.error)
    at.toggle(key="llm_refusal_on").set_value(False)
    at.text_area(key="llm_refusal_patterns").set_value("cannot").run()
    assert "**0 of" in texts(at)


def test_build_page_judges_stepwise_with_the_1_5b_by_default(runs):
    at = open_page("build")
    at.toggle(key="build_llm").set_value(True).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="build_judge_mode").value == "stepwise"
    assert at.radio(key="build_prompt").value == "abstain"
    assert "qwen-1.5b" in at.text_input(key="build_judge_model").placeholder


def test_build_page_prices_the_llm_stages_before_start(runs):
    """Issue 33: the Build page gave no estimate before Start (only the LLM page, behind a
    button, once a run exists)."""
    at = open_page("build")
    at.number_input(key="build_limit").set_value(10).run()
    at.toggle(key="build_llm").set_value(True).run()
    assert not at.exception, at.exception
    shown = plain(at)
    assert "What the LLM stages would cost" in shown
    # 10 questions x (BM25 + LLM only): the default generator and judge, with their time
    assert "generation: qwen2.5-coder-1.5b-instruct: 20 calls" in shown, shown[-800:]
    assert "judge: qwen2.5-coder-1.5b-instruct: 20 calls" in shown
    assert "calls/min (" in shown and "upper bound" in shown
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


def test_thresholds_page_compares_the_estimators(runs):
    at = open_page("thresholds")
    assert "Beyond the paper" in texts(at)
    at.button(key="thr_cv").click().run()
    assert not at.exception, at.exception
    shown = texts(at)
    assert "Verdict." in shown and "h/k rule" in shown


def test_llm_page_shows_the_judge_audit(runs):
    at = open_page("llm")
    assert "Can the judge be trusted?" in texts(at)
    audit = next(str(m.value) for m in at.markdown if "**Scores vary**" in str(m.value))
    lines = audit.splitlines()
    assert [ln.split("**")[1] for ln in lines] == ["Scores vary", "Same answer, same score",
                                                   "No position bias",
                                                   "Agrees with the true answer"]
    assert all(ln.startswith(("- :green-badge[passed]", "- :orange-badge[warning]",
                              "- :gray-badge[not applicable]")) for ln in lines)


def test_a_constant_judge_is_flagged_on_the_llm_and_thresholds_pages(runs, monkeypatch, tmp_path):
    import shutil

    from ragdash.rundir import Run

    const = tmp_path / "constant-judge"
    shutil.copytree(runs / "demo", const)
    run = Run(const)
    j = run.read("judgments")
    run.write("judgments", j.assign(score=j["score"].where(j["score"].isna(), 1)))
    monkeypatch.setenv("RAGDASH_DEMO_RUN", str(const))
    at = open_page()
    for page in ("llm", "thresholds"):
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, [e.value for e in at.exception]
        warning = " ".join(str(w.value) for w in at.warning)
        assert "judge's scores look unreliable" in warning and "scores vary" in warning


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


def test_question_metadata_is_text_not_markdown(runs):
    at = open_page("browser", qb_q="q001")
    assert not at.exception, at.exception
    shown = [str(h.proto.body) for h in at.html]
    meta = next(b for b in shown if "Gold answer" in b)
    assert "source: <b>[wiki](http://evil.example/x)</b>" in meta  # escaped text, no link
    assert "overflow-wrap:anywhere" in meta
    assert not any("evil.example" in str(m.value) for m in [*at.markdown, *at.caption])


def test_thresholds_panel_shows_the_fixtures_auc(runs):
    """The evidence panel reports the AUC of the fixture's own (Score_IR, judge) pairs."""
    import pandas as pd

    from ragdash.calibration import pairs
    from ragdash.calibration.predictive import auc

    demo = Path(os.environ["RAGDASH_DEMO_RUN"])
    df, _ = pairs(pd.read_parquet(demo / "ir_scores.parquet"),
                  pd.read_parquet(demo / "judgments.parquet"), 1000)
    known = auc(df["ir"].to_numpy(), df["judge"].to_numpy() == 5)
    at = open_page("thresholds", thr_n="1000")
    assert not at.exception, at.exception
    assert "Does retrieval predict answer quality here? (N = 1000)" in texts(at)
    verdict = next(str(b.value) for b in [*at.success, *at.info, *at.warning]
                   if "AUC" in str(b.value))
    assert f"AUC {known:.2f} [" in verdict
    assert known > 0.6  # the fixture's judge follows Score_IR


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
