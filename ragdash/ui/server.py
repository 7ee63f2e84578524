"""What the dashboard server loads or works out once for every user: the upload limit, the
tokenizers, chunk previews, semantic matches and the Build page's LLM estimate (Streamlit
caches)."""

from __future__ import annotations

import streamlit as st

from ragdash import dashboard_settings
from ragdash.analysis import matching
from ragdash.budget import Tokenizer, get_tokenizer
from ragdash.chunking.preview import ChunkPreview, preview
from ragdash.ui.paths import runs_root


def max_upload_mb() -> int:
    """Megabytes one upload may have: `RAGDASH_MAX_UPLOAD_MB`, checked against Streamlit's
    `server.maxUploadSize`; ValueError saying what to set otherwise."""
    return dashboard_settings.max_upload_mb(
        server_limit_mb=int(st.get_option("server.maxUploadSize")))


@st.cache_data(show_spinner="Chunking the first documents of the corpus…", max_entries=8)
def chunk_preview(dataset: tuple, limit: int | None, method: str, params: tuple,
                  max_chars: int | None, k: int) -> ChunkPreview:
    """`ragdash.chunking.preview.preview` of a dataset given as (path, format, corpus,
    corpus format[, sheet, column mapping as sorted (role, column) pairs]); `params` as sorted
    (name, value) pairs."""
    from ragdash.data import load_dataset
    from ragdash.embeddings import embedding_settings

    path, fmt, corpus, corpus_fmt, *table = dataset
    sheet, columns = (table[0], dict(table[1] or ())) if table else (None, None)
    docs = load_dataset(path, fmt, corpus=corpus, corpus_fmt=corpus_fmt, limit=limit,
                        sheet=sheet, columns=columns or None).documents
    with embedding_settings(runs_root()):  # the run built next reads these embeddings back
        return preview(docs, method, dict(params), max_chars, k)


@st.cache_resource(show_spinner="Loading the tokenizer…")
def tokenizer(spec: str) -> Tokenizer:
    """The run's tokenizer (loaded once per server)."""
    return get_tokenizer(spec)


@st.cache_data(show_spinner="Embedding the context's sentences…", max_entries=256)
def semantic_matches(parts: tuple[str, ...], context: str, cut: int
                     ) -> list[matching.SemanticMatch]:
    """Each part's closest sentence window in context[:cut] (loads MiniLM once per server)."""
    return matching.semantic_matches(parts, context, cut)


@st.cache_data(show_spinner="Pricing the LLM calls (reading the questions, no call made)…",
               max_entries=32, ttl=600)
def llm_estimate(overrides_json: str) -> dict:
    """`ragdash.planning.before_run` of the run that the Build page's settings (dotted
    overrides, as JSON) would start: calls, tokens, price and time of its LLM stages."""
    import json

    from ragdash.config import load_spec
    from ragdash.planning import before_run

    return before_run(load_spec(None, json.loads(overrides_json)))
