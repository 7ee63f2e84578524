"""The share correct in a few sentences and figures, generated from the share section
(`ragdash.labels.findings.share_section`): the Overview's, the LLM page's, the report's and the
CLI's words for the same numbers."""

from __future__ import annotations

from collections.abc import Callable

from ragdash.analysis.sentences import plural
from ragdash.calibration.survey import MIN_SYSTEM_LABELS, TARGET_HALF

RULE_WORDS = {"judge": "stratified by system and the judge's verdict",
              "neyman": "stratified by system and the judge's verdict, Neyman allocation",
              "uniform": "drawn uniformly at random",
              "stratified": "drawn equally per system"}


def _pct(x: float) -> str:
    return f"{x * 100:.0f} %"


def _ci(ci: list[float]) -> str:
    return f"{ci[0] * 100:.0f}–{ci[1] * 100:.0f} %"


def exact(entry: dict) -> bool:
    """Whether `entry`'s interval has no width: every answer of its scope is labelled (a census
    of "these answers"), so its share is the share itself, not an estimate."""
    ci = entry.get("ci")
    return bool(ci) and ci[1] - ci[0] < 1e-9


def interval_words(entry: dict, level: float = 0.95) -> str:
    """"95% interval 40–48 %", or "every answer labelled: exact" where the interval would have
    no width (never "44–44 %")."""
    if exact(entry):
        return "every answer labelled: exact"
    return f"{level:.0%} interval {_ci(entry['ci'])}"


def subject(share: dict, n_answers: int) -> str:
    """What the share is of, in words: "these 360 answers" or "answers to new questions like
    these"."""
    if share["estimand"] == "new questions":
        return "answers to new questions like these"
    return "this answer" if n_answers == 1 else f"these {n_answers:,} answers"


def _with_llm_only(share: dict) -> str:
    """" (LLM-only answers included)" when the share's answers include them: the judge's share
    over every answer is not the "Judged 5 (RAG answers)" of the Overview."""
    from ragdash.constants import LLM_ONLY

    return " (LLM-only answers included)" if LLM_ONLY in share.get("systems", {}) else ""


def planner(entry: dict, scope: str = "the pooled interval") -> str:
    """How many labels in all give ±target points (`survey.labels_for`: the interval the pages
    show, projected), or that the interval shown is within ±target: said only of an interval
    whose half-width is at most the target."""
    need, have = entry.get("to_target"), entry.get("labels", 0)
    half, ci = entry.get("target", TARGET_HALF), entry.get("ci")
    scope_ = f"{scope[0].upper()}{scope[1:]}"
    if exact(entry):  # nothing left to estimate
        return ""
    if ci and (ci[1] - ci[0]) / 2 <= half / 100:
        return f"{scope_} is within ±{half:g} points"
    if need is None:
        return (f"No number of labels brings {scope} within ±{half:g} points"
                if have >= 2 else "")
    if need <= have:  # the interval shown spans the "cannot tell" bounds, or none is shown
        return (f"{scope_} is ±{(ci[1] - ci[0]) * 50:.1f} points: the answers labelled only "
                "\"cannot tell\" widen it" if ci else "")
    return (f"About {need:,} labels in all ({need - have:,} more) bring {scope} to "
            f"±{half:g} points")


def intervals_caption(share: dict) -> str:
    """What the intervals beside the systems are: their level, what they are about, and from
    how many labels a system gets one (or its exact share, every answer labelled)."""
    census = ", or its exact share with every answer labelled" \
        if share.get("estimand") == "these answers" else ""
    return (f"Intervals at {share['level']:.0%} on {share['estimand_text']}; a system's interval "
            f"from {MIN_SYSTEM_LABELS} of its labels on{census}.")


def intervals_now(share: dict, name: Callable[[str], str] = str) -> str:
    """How wide the pooled and each system's interval are now, with the labels each system needs
    for its target and the labels for ±5 points in all: the Label page's line before each
    label."""
    pooled = share["pooled"]
    now = (f"pooled ±{(pooled['ci'][1] - pooled['ci'][0]) * 50:.1f} points" if pooled.get("ci")
           else f"pooled: {pooled.get('reason') or 'no interval yet'}")

    def one(system: str, e: dict) -> str:
        if exact(e):
            return f"{name(system)}: exact (every answer labelled)"
        width = (f"±{(e['ci'][1] - e['ci'][0]) * 50:.0f}" if e.get("ci") else
                 plural(e["labels"], "label"))
        if not e.get("ci") and e.get("answers") is not None and \
                e["answers"] < MIN_SYSTEM_LABELS:  # every label of it would not give one
            whole = (f"; exact once all {e['answers']:,} are labelled"
                     if share.get("estimand") == "these answers" else "")  # a census
            return (f"{name(system)}: {width} ({plural(e['answers'], 'answer')}: no interval "
                    f"below {MIN_SYSTEM_LABELS} labels{whole})")
        need = e.get("to_target")
        if need and not e.get("ci"):  # no interval is shown below MIN_SYSTEM_LABELS
            need = min(max(need, MIN_SYSTEM_LABELS), e.get("answers") or need)
        more = (f" (≈{need:,} for ±{e.get('target', 10):g})"
                if need and need > e["labels"] else "")
        return f"{name(system)}: {width}{more}"

    systems = " · ".join(one(s, e) for s, e in share["systems"].items())
    plan = planner(pooled)
    return f"Intervals now: {now}; {systems}." + (f" {plan}." if plan else "")


def sentences(share: dict, labels: dict, rule: str | None = None) -> list[str]:
    """Markdown sentences on the pooled share correct: the estimate, its interval and what it
    rests on; how far the judge alone is; "cannot tell" bounds; what was left out; the labels
    needed for ±5 points. Without a pooled interval, why not."""
    pooled, level = share["pooled"], share.get("level", 0.95)
    n = pooled["labels"]
    drawn = f", {RULE_WORDS[rule]}" if rule in RULE_WORDS else ""
    out = []
    if pooled.get("ci"):
        about = "" if exact(pooled) else "About "
        out.append(f"**{about}{_pct(pooled['estimate'])} of "
                   f"{subject(share, pooled['answers'])} are correct** "
                   f"({interval_words(pooled, level)}; {plural(n, 'label')}{drawn}).")
    else:
        out.append(f"{plural(n, 'label')} of the sample so far: "
                   f"{pooled.get('reason') or 'no interval yet'}.")
    judge = (share.get("judge") or {}).get("pooled")
    if judge is not None and pooled.get("ci"):
        gap = (judge - pooled["estimate"]) * 100
        lo, hi = pooled["ci"]
        inside = lo <= judge <= hi
        lean = "too lenient" if gap > 0 else "too strict"
        out.append(f"The judge alone gives 5 to {_pct(judge)} of "
                   f"{subject(share, pooled['answers'])}{_with_llm_only(share)}: "
                   + (f"{abs(gap):.0f} points {'above' if gap > 0 else 'below'}"
                      if round(abs(gap)) >= 1 else "the same")
                   + (f": the judge is {lean} here." if exact(pooled) and round(abs(gap)) >= 1
                      else "." if exact(pooled) else ", within the interval." if inside else
                      f", outside the interval: the judge is {lean} here."))
    if pooled.get("bounds") and (pooled["bounds"][1] - pooled["bounds"][0]) > 0.01:
        b = pooled["bounds"]
        one = share["cannot_tell"] == 1
        out.append(f"{plural(share['cannot_tell'], 'sampled answer')} labelled only \"cannot "
                   f"tell\" {'is' if one else 'are'} left out: all wrong "
                   f"{'it gives' if one else 'they give'} {_pct(b[0])}, all correct "
                   f"{_pct(b[1])}; the interval spans both.")
    left = [f"{plural(k, what)}{why}" for k, what, why in
            ((labels.get("outside_sample", 0), "label", " outside the drawn sample (not random)"),
             (labels.get("stale", 0), "stale label", " (answer generated again)")) if k]
    if left:
        out.append("Left out of every estimate: " + " and ".join(left) + ".")
    if k := share.get("strata_changed"):
        out.append(f"The judge's verdict changed on {plural(k, 'answer')} since the sample was "
                   "drawn: every estimate keeps the strata the sample was drawn in.")
    if line := planner(pooled):
        out.append(line + ".")
    return out


def tile(entry: dict) -> tuple[str, str]:
    """(value, caption) of one system's tile: the estimate with its interval and label count,
    or the count and why there is no interval."""
    labels = plural(entry.get("labels", 0), "label")
    if exact(entry):
        return _pct(entry["estimate"]), f"every answer labelled · {labels}"
    if entry.get("ci"):
        return _pct(entry["estimate"]), f"{_ci(entry['ci'])} · {labels}"
    return "—", f"{labels} · too few for an interval"


def status_json(share: dict, labels: dict | None = None) -> dict:
    """What the Overview shows, as `ragdash label status --json` prints it (fractions), with
    what every estimate leaves out (labels outside the sample, stale labels, answers labelled
    only "cannot tell") and the verdicts changed since the draw."""
    def one(e: dict) -> dict:
        return {"estimate": e["estimate"], "ci": e["ci"], "labels": e["labels"],
                "method": e["method"], **({"reason": e["reason"]} if e.get("reason") else {})}

    labels = labels or {}
    return {"estimand": share["estimand"], "pooled": one(share["pooled"]),
            "systems": {s: one(e) for s, e in share["systems"].items()},
            "left_out": {"outside_sample": labels.get("outside_sample", 0),
                         "stale": labels.get("stale", 0),
                         "cannot_tell": share.get("cannot_tell", 0)},
            "strata_changed": share.get("strata_changed", 0)}
