"""The LLM results page's launcher as data: what its form holds and the run specification it
starts (generation, judging and calibration switched on), built without Streamlit so the form's
meaning is tested apart from its widgets.

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
