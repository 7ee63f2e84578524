"""The LLM results page's launcher as data: where its form starts (`form_start`, `saved_rule`), what
it holds and the run specification it starts (generation, judging and calibration switched on),
built without Streamlit so the form's meaning is tested apart from its widgets.

    spec = launch_spec(saved_config(run.manifest), form)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragdash.config import RunSpec, load_spec
from ragdash.llm.refusal import RefusalRule
from ragdash.llm.settings import generator_model_for, judge_model_for


@dataclass(frozen=True)
class LaunchForm:
    """What the launcher's widgets hold: the generator's and the judge's backend and model (empty:
    the backend's default), a server URL (empty: none), the judge mode, the generation prompt,
    the contexts' budget N, the first `limit` questions (0: all) and the refusal rule."""

    gen_backend: str
    gen_model: str
    judge_backend: str
    judge_model: str
    base_url: str
    mode: str
    prompt: str
    budget: int
    limit: int
    rule: RefusalRule

    def llm_sections(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The generator's and the judge's `llm` sections; a server named serves its own
        model, so an empty generator model stays empty there."""
        url = self.base_url or None
        gen = {"backend": self.gen_backend, "base_url": url,
               "model": generator_model_for(self.gen_backend, self.gen_model) if not url
               else self.gen_model or None}
        jud = {"backend": self.judge_backend, "base_url": url,
               "model": judge_model_for(self.judge_backend, self.judge_model)}
        return gen, jud


def launch_spec(base: dict, form: LaunchForm) -> RunSpec:
    """The run's saved config with generation, judging and calibration switched on as the form
    says (raises `ConfigError`/`ValueError` for settings that are not valid)."""
    gen, jud = form.llm_sections()
    return load_spec(None, {
        **base,
        "generation": {**base.get("generation", {}), "enabled": True, "budget": int(form.budget),
                       "llm": gen, "prompt": form.prompt, "limit": int(form.limit) or None},
        "judge": {**base.get("judge", {}), "enabled": True, "mode": form.mode, "llm": jud,
                  "refusal": form.rule.to_config()},
        "calibration": {**base.get("calibration", {}), "enabled": True,
                        "budget": int(form.budget)}})


def saved_rule(spec: RunSpec) -> RefusalRule:
    """The refusal rule the run (its specification, `spec`) judged with: the rule's widgets
    start from it."""
    return RefusalRule.from_config(spec.judge.refusal)


@dataclass(frozen=True)
class FormStart:
    """Where the launcher's form starts: the judge mode and generation prompt the run judged
    with (stepwise and abstain when it has not judged), and the question limit's field: its
    largest value, the step its +/- buttons take and its help for a run of `questions`."""

    mode: str
    prompt: str
    questions: int
    limit_max: int
    limit_step: int
    limit_help: str


def form_start(base: dict, questions: int) -> FormStart:
    """The launcher's starting values for a run whose saved config is `base` and which holds
    `questions` questions (the step is one the +/- buttons can take on a small run)."""
    judge = base.get("judge", {})
    ran = judge.get("enabled")
    return FormStart(
        mode=judge.get("mode", "stepwise") if ran else "stepwise",
        prompt=base.get("generation", {}).get("prompt", "abstain") if ran else "abstain",
        questions=questions, limit_max=max(questions, 1),
        limit_step=max(1, min(10, questions // 10)),
        limit_help=f"Generate and judge only the first N of the run's {questions:,} questions: "
                   "a quick, cheap look before the whole run")
