"""The LLM stages over a run directory: generate -> judge -> calibrate, and `estimate`.

Every LLM call goes through the persistent cache (`<runs_root>/_llm_cache.sqlite`), which
commits each finished call at once: an interrupted stage re-run repeats no finished call.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ragdash import judge_audit
from ragdash.budget import cuts_from_ends, get_tokenizer, reference_prefixes
from ragdash.runs import Run, write_json, write_table

LLM_ONLY = "llm_only"


def cache_path(cfg: dict) -> Path:
    return Path(cfg["runs_root"]) / "_llm_cache.sqlite"


def budget_contexts(run: Run, cfg: dict, budget: int) -> pd.DataFrame:
    """C_N of every (qid, retriever) at one budget: qid, retriever, text."""
    from ragdash.pipeline import contexts

    ctx = contexts(run)
    tok = cfg["tokenizer"]
    if cfg["scoring"]["mode"] == "reference":
        texts = [reference_prefixes(c, [budget], tok)[0][0] for c in ctx["context"]]
    else:  # one batched tokenisation, cut as the score stage does
        contexts_ = ctx["context"].tolist()
        ends = get_tokenizer(tok).token_ends(contexts_)
        texts = [c[: cuts_from_ends(e, [budget], len(c))[0]]
                 for c, e in zip(contexts_, ends, strict=True)]
    return ctx.assign(text=texts)[["qid", "retriever", "text"]]


def generation_requests(run: Run, cfg: dict) -> list[tuple]:
    """(qid, system, budget, question, context) for LLM-only and every retriever (or a sweep)."""
    g = cfg["generation"]
    examples = run.read("examples")
    questions = dict(zip(examples["qid"].astype(str), examples["question"], strict=True))
    qids = list(questions)[: g.get("limit") or None]  # generation.limit: the first N only
    sweep = g.get("sweep")
    plan = ([(sweep["retriever"], b) for b in sweep["budgets"]] if sweep
            else [(r, g["budget"]) for r in cfg["retrievers"]["use"]])
    requests = [(q, LLM_ONLY, None, questions[q], None) for q in qids] if g["llm_only"] else []
    by_budget: dict[int, dict] = {}
    for retriever, budget in plan:
        if budget not in by_budget:
            ctx = budget_contexts(run, cfg, budget)
            by_budget[budget] = {(q, r): t for q, r, t in ctx.itertuples(index=False)}
        texts = by_budget[budget]
        requests += [(q, retriever, budget, questions[q], texts[(q, retriever)]) for q in qids
                     if (q, retriever) in texts]
    return requests


def generator_settings(cfg: dict):
    """The generator: `generation.llm` when set, else the run's `llm` (which MLQ uses too)."""
    from ragdash.llm import LLMSettings

    return LLMSettings.from_config(cfg["generation"].get("llm") or cfg["llm"])


def generate_stage(run: Run, cfg: dict, key: str, progress=None) -> dict:
    from ragdash.llm import generate

    settings = generator_settings(cfg)
    requests = generation_requests(run, cfg)
    answers = generate(requests, settings, cache=cache_path(cfg),
                       reference_prompts=cfg["generation"].get("reference_prompts", False),
                       prompt=cfg["generation"].get("prompt", "paper"),
                       progress=(lambda d, t: progress("generating answers", d, t))
                       if progress else None)
    run.write("answers", answers)
    run.update(llm={**run.manifest.get("llm", {}), "generator": settings.to_manifest()})
    return {"answers": len(answers), "errors": int(answers["error"].notna().sum()),
            "mean_latency_s": round(float(answers["latency_s"].mean()), 2)
            if answers["latency_s"].notna().any() else None}


def judge_settings(cfg: dict):
    from ragdash.llm import LLMSettings

    return LLMSettings.from_config(cfg["judge"].get("llm") or cfg["llm"])


def judge_stage(run: Run, cfg: dict, key: str, progress=None) -> dict:
    from ragdash.llm import judge_answers
    from ragdash.llm.refusal import RefusalRule

    j = cfg["judge"]
    settings = judge_settings(cfg)
    answers = run.read("answers")
    judgments = judge_answers(
        answers, run.read("examples"), settings, cache=cache_path(cfg), mode=j["mode"],
        shuffle=j["shuffle"], seed=j["seed"],
        reference_prompts=j.get("reference_prompts", False),
        refusal=RefusalRule.from_config(j.get("refusal")),
        progress=(lambda d, t: progress("judging answers", d, t)) if progress else None)
    run.write("judgments", judgments)
    checks = judge_audit.audit(judgments, answers, run.read("examples"))
    run.update(llm={**run.manifest.get("llm", {}), "judge": settings.to_manifest()},
               judge_audit=judge_audit.summary(checks))
    scored = judgments["score"].dropna()
    return {"judgments": len(judgments), "errors": int(judgments["score"].isna().sum()),
            "refusals_by_rule": int(judgments["rule"].notna().sum()),
            "distribution": {str(int(s)): int(n) for s, n in scored.value_counts()
                             .sort_index().items()},
            "audit_warnings": [f"{c.title}: {c.finding}" for c in checks if c.status == "warn"]}


def calibrate_stage(run: Run, cfg: dict, key: str, progress=None) -> dict:
    from ragdash.calibrate import calibrate, cross_validate

    c = cfg["calibration"]
    budget = c.get("budget") or cfg["generation"]["budget"]
    ir = run.read("ir_scores")
    judgments = run.read("judgments")
    result = calibrate(ir, judgments, budget=budget, per_retriever=c["per_retriever"],
                       method=c["method"], n_boot=c["n_boot"], seed=c["seed"])
    data = result.to_dict()
    data["generation_budget"] = cfg["generation"]["budget"]
    try:
        table, verdict = cross_validate(ir, judgments, budget=budget, seed=c["seed"])
        write_table(run.path / "estimator_cv.csv", table)
        data["estimators"] = {"verdict": verdict}
    except ValueError as exc:  # too few questions or retrievers to cross-validate
        data["estimators"] = {"verdict": f"not cross-validated: {exc}"}
    write_json(run.path / "calibration.json", data)
    return {"h": data["h"], "k": data["k"], "pairs": data["n"], "excluded": data["n_excluded"]}


def estimate_run(run: Run, calibration: dict, budget: int | None = None,
                 judge_model: str = "gpt-4o", generator_model: str = "llama3:8b") -> dict:
    """Apply saved thresholds to a run with retrieval scores only; write estimate.json."""
    from ragdash.calibrate import calls_avoided, estimate
    from ragdash.llm.cost import estimate as cost_estimate

    budget = budget or calibration.get("budget", 1000)
    ir = run.read("ir_scores")
    if budget not in set(ir["budget"]):
        raise ValueError(f"run {run.path} has no Score_IR at budget {budget} "
                         f"(budgets: {sorted(set(ir['budget']))})")
    table = estimate(ir, calibration["h"], calibration["k"], budget=budget)
    n_q, n_r = ir["qid"].nunique(), ir["retriever"].nunique()
    avoided = calls_avoided(n_q, n_r)
    # typical sizes: a RAG prompt ~1,100 tokens in, 40 out; a 6-candidate judge call ~700/20
    gen = cost_estimate(avoided["generation_calls"], 1100, 40, generator_model)
    jud = cost_estimate(avoided["judge_calls"], 700, 20, judge_model)
    data = {
        "budget": budget, "h": calibration["h"], "k": calibration["k"],
        "estimated_shares": table.to_dict(orient="records"),
        "calls_avoided": avoided,
        "cost_avoided": {"generation": str(gen), "judge": str(jud),
                         "usd": (gen.usd or 0.0) + (jud.usd or 0.0)},
    }
    write_json(run.path / "estimate.json", data)
    return data


def measured_rate(cfg: dict, model: str) -> float | None:
    """Calls per minute of `model` measured from the latencies in the LLM cache, if any."""
    import sqlite3

    path = cache_path(cfg)
    if not path.exists():
        return None
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT AVG(latency_s), COUNT(*) FROM replies WHERE model = ?",
                         (model,)).fetchone()
    return 60.0 / row[0] if row and row[1] and row[0] else None


def model_name(settings) -> str:
    """The model name calls are recorded under (the alias of a local GGUF)."""
    if settings.backend == "local":
        from ragdash.llm.local import model_alias

        return model_alias(settings.model)
    return settings.model


def dry_run(run: Run, cfg: dict) -> dict:
    """What the LLM stages would cost, before any call: calls, tokens, money, time."""
    from ragdash.llm import estimate_prompts
    from ragdash.llm.prompts import generation_messages, judge_messages, verdict_prompt

    gen = generator_settings(cfg)
    requests = generation_requests(run, cfg)
    ref = cfg["generation"].get("reference_prompts", False)
    prompt = cfg["generation"].get("prompt", "paper")
    gen_est = estimate_prompts([generation_messages(q, c, reference=ref, prompt=prompt)
                                for _, _, _, q, c in requests], model_name(gen),
                               tokens_out=40, rate=measured_rate(cfg, model_name(gen)),
                               backend=gen.backend)
    judge = judge_settings(cfg)
    examples = run.read("examples").head(cfg["generation"].get("limit") or None)
    systems = 1 + len(cfg["retrievers"]["use"]) if cfg["generation"]["llm_only"] else len(
        cfg["retrievers"]["use"])
    answer = "a one-sentence answer of about thirty tokens written by the generator model " * 2
    mode = cfg["judge"]["mode"]
    if mode == "stepwise":  # the verdict question per answer; a partial answer asks one more
        prompts = [[{"role": "user", "content": verdict_prompt(r.question, r.answer, answer)}]
                   for r in examples.itertuples(index=False)] * systems
    else:
        per_call = 1 if mode == "single" else systems
        prompts = [judge_messages(r.question, r.answer, list(r.parts), [answer] * per_call,
                                  json_output=True)
                   for r in examples.itertuples(index=False)] * (systems // per_call)
    judge_est = estimate_prompts(prompts, model_name(judge),
                                 tokens_out=25 if mode == "grouped" else 8,
                                 rate=measured_rate(cfg, model_name(judge)),
                                 backend=judge.backend)
    out: dict = {"generation": gen_est, "judge": judge_est}
    if mode == "stepwise":
        out["note"] = "stepwise judging: a lower bound, each partially correct answer asks twice"
    return out
