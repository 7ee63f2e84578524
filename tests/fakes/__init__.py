"""Test doubles (a scripted OpenAI- and Ollama-compatible HTTP server)."""
