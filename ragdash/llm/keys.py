"""Where an API key from the server's environment may go.

A key a person typed goes where they said. A key read from an environment variable is the
operator's: in a confined process (every job the dashboard starts, or any process with
`RAGDASH_CONFINE_KEYS=1`) it goes only to an endpoint the operator allowed for that variable:
its provider's default (`PROVIDER_ENDPOINTS`; for `OPENAI_API_KEY` also `OPENAI_BASE_URL` when
the operator set it) and the URLs listed in `RAGDASH_KEY_ENDPOINTS`
(`VAR=URL[,URL...]`, several variables separated by `;`). An endpoint allows itself and the
paths under it, on the same scheme, host and port. A variable nobody allowed is never read.
Where the operator lists LLM hosts (`RAGDASH_LLM_HOSTS`), a confined process calls no LLM server
elsewhere, key or not (`refused_llm_url`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

CONFINE_ENV = "RAGDASH_CONFINE_KEYS"
LLM_HOSTS_ENV = "RAGDASH_LLM_HOSTS"
"""The hosts a confined process's LLM servers may be at (`host`, `host:port`, `*.domain`, as
`RAGDASH_RETRIEVER_HOSTS`); unset: any host (the operator sets it on a shared server, so that a
dashboard user cannot make the server call a host of its network)."""
ENDPOINTS_ENV = "RAGDASH_KEY_ENDPOINTS"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
PROVIDER_ENDPOINTS: dict[str, tuple[str, ...]] = {
    "OPENAI_API_KEY": (OPENAI_DEFAULT_URL,),
    "GROQ_API_KEY": ("https://api.groq.com/openai/v1",),
    "MISTRAL_API_KEY": ("https://api.mistral.ai/v1",),
    "TOGETHER_API_KEY": ("https://api.together.xyz/v1",),
    "OPENROUTER_API_KEY": ("https://openrouter.ai/api/v1",),
    "DEEPSEEK_API_KEY": ("https://api.deepseek.com",),
}
"""Each provider's own key variable and the endpoint its key is made for."""
_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


@dataclass(frozen=True)
class Endpoint:
    """A URL reduced to what decides where a request goes."""

    scheme: str
    host: str
    port: int | None
    path: str

    @classmethod
    def parse(cls, url: str) -> Endpoint | None:
        """None for a URL that is not http(s) with a host."""
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError:
            return None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            return None
        port = port or (443 if scheme == "https" else 80)
        return cls(scheme, parts.hostname.lower().rstrip("."), port, parts.path.rstrip("/"))

    def within(self, allowed: Endpoint) -> bool:
        """Whether this endpoint is `allowed` or a path under it."""
        return ((self.scheme, self.host, self.port) == (allowed.scheme, allowed.host,
                                                        allowed.port)
                and (self.path == allowed.path or self.path.startswith(allowed.path + "/")))


def confined(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process keeps environment keys to the allowed endpoints."""
    env = os.environ if environ is None else environ
    return env.get(CONFINE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def operator_endpoints(environ: Mapping[str, str] | None = None) -> dict[str, tuple[str, ...]]:
    """The operator's allow-list, `RAGDASH_KEY_ENDPOINTS` parsed. ValueError naming the entry
    that is not `VAR=URL[,URL...]` with http(s) URLs."""
    env = os.environ if environ is None else environ
    out: dict[str, tuple[str, ...]] = {}
    for entry in filter(None, (e.strip() for e in env.get(ENDPOINTS_ENV, "").split(";"))):
        var, sep, urls = entry.partition("=")
        listed = tuple(u.strip() for u in urls.split(",") if u.strip())
        if not sep or not _VAR.fullmatch(var.strip()) or not listed or any(
                Endpoint.parse(u) is None for u in listed):
            raise ValueError(f"{ENDPOINTS_ENV}: {entry!r} is not VAR=URL[,URL...] with http(s) "
                             "URLs")
        out[var.strip()] = out.get(var.strip(), ()) + listed
    return out


def allowed_endpoints(var: str, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The endpoints the key in `var` may go to."""
    env = os.environ if environ is None else environ
    own = PROVIDER_ENDPOINTS.get(var, ())
    if var == DEFAULT_KEY_ENV and env.get("OPENAI_BASE_URL", "").strip():
        own = (*own, env["OPENAI_BASE_URL"].strip())
    return own + operator_endpoints(env).get(var, ())


def default_url(backend: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Where the openai client goes when no `base_url` is set (None for other backends)."""
    env = os.environ if environ is None else environ
    if backend != "openai":
        return None
    return env.get("OPENAI_BASE_URL", "").strip() or OPENAI_DEFAULT_URL


def may_send(var: str, url: str | None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the key in `var` may go to `url` (an unparseable URL never gets one)."""
    target = Endpoint.parse(url) if url else None
    if target is None:
        return False
    return any(target.within(e) for e in filter(None, map(Endpoint.parse,
                                                          allowed_endpoints(var, environ))))


def environment_key(var: str, url: str | None,
                    environ: Mapping[str, str] | None = None) -> str | None:
    """The key in `var` for a request to `url`: None when unset, or when this process is
    confined and the operator did not allow `url` for `var`."""
    env = os.environ if environ is None else environ
    value = env.get(var) or None
    if value is None or (confined(env) and not may_send(var, url, env)):
        return None
    return value


def withheld(var: str, url: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """Why the server's key in `var` is not sent to `url` in a confined process (whether set
    or not: a job is not told of the keys it does not get), or None when it would be."""
    env = os.environ if environ is None else environ
    if not confined(env) or may_send(var, url, env):
        return None
    return (f"the server's {var} is not sent to {url or 'this endpoint'}: the operator "
            f"allows it only to {', '.join(allowed_endpoints(var, env)) or 'no endpoint'} "
            f"({ENDPOINTS_ENV}); type a key for this server")


def llm_sections(cfg: Any) -> Iterator[Mapping[str, Any]]:
    """Every LLM section (a mapping under a key named `llm`) at any depth of a config."""
    if isinstance(cfg, Mapping):
        for key, value in cfg.items():
            if key == "llm" and isinstance(value, Mapping):
                yield value
            yield from llm_sections(value)
    elif isinstance(cfg, list | tuple):
        for value in cfg:
            yield from llm_sections(value)


def needed_variables(configs: Iterable[Any],
                     environ: Mapping[str, str] | None = None) -> set[str]:
    """The key variables a job over `configs` may use: each one an LLM section names (or the
    default), set in the environment and allowed for that section's endpoint."""
    env = os.environ if environ is None else environ
    out = set()
    for cfg in configs:
        sections = list(llm_sections(cfg)) or [{}]
        for section in sections:
            var = section.get("api_key_env") or DEFAULT_KEY_ENV
            backend = str(section.get("backend") or "local")
            url = section.get("base_url") or default_url(backend, env)
            if isinstance(var, str) and env.get(var) and isinstance(url, str | None) \
                    and may_send(var, url, env):
                out.add(var)
    return out


def job_note(backend: str, base_url: str | None, typed_key: bool = False,
             var: str = DEFAULT_KEY_ENV, environ: Mapping[str, str] | None = None) -> str:
    """What a dashboard job will send to an LLM server set as `backend` and `base_url`: the
    sentence a page shows beside the URL and key fields."""
    env = {**(os.environ if environ is None else environ), CONFINE_ENV: "1"}
    if backend == "ollama" or (backend == "local" and not base_url):
        return "No API key is sent to this backend."
    if typed_key:
        return "The key you typed goes to this server only for this job, and is never written."
    url = base_url or default_url(backend, env)
    if reason := withheld(var, url, env):
        return f"No key is sent: {reason}, or leave the URL empty."
    if env.get(var) and may_send(var, url, env):
        return f"The server's {var} is sent to {url} (an endpoint the operator allowed)."
    return f"No key is sent ({var} is not set on the server); type one if the server needs it."


def refused_llm_url(url: str | None, environ: Mapping[str, str] | None = None,
                    confine: bool | None = None) -> str | None:
    """Why an LLM server a config names at `url` (its `base_url`) may not be called here, or
    None: in a confined process (or with `confine`) whose operator set RAGDASH_LLM_HOSTS, a
    URL whose host is not on that list (an `ollama` host without a scheme is read as http)."""
    from ragdash.retrieval.http import HostNotAllowed, check_host

    env = os.environ if environ is None else environ
    if not url or not (confined(env) if confine is None else confine) \
            or not env.get(LLM_HOSTS_ENV, "").strip():
        return None
    text = url.strip() if "://" in url else f"http://{url.strip()}"
    try:
        check_host(text, env, LLM_HOSTS_ENV, "an LLM server")
    except (HostNotAllowed, ValueError) as exc:
        return f"base_url {url}: {exc}"
    return None
