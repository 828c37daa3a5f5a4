"""The teacher's model server: any OpenAI-compatible endpoint through the official client.

Absent (no LLM_BASE_URL) means course-notes mode. Present but unreachable is reported in one
line and the caller falls back to course notes; no stack trace reaches a learner.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from django.conf import settings


class LLMUnavailable(Exception):
    """One line a person can read: why the model server could not answer."""


def llm_configured() -> bool:
    return bool(settings.LLM_BASE_URL)


def model_name() -> str:
    return settings.LLM_MODEL or "default"


def describe_error(exc: BaseException) -> str:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return f"the model server at {settings.LLM_BASE_URL} did not answer within {settings.LLM_TIMEOUT:g} s"
    if isinstance(exc, openai.APIConnectionError):
        return f"the model server at {settings.LLM_BASE_URL} is unreachable"
    if isinstance(exc, openai.APIStatusError):
        return f"the model server answered HTTP {exc.status_code}: {' '.join(str(exc.message).split())[:160]}"
    return f"the model server failed: {' '.join(str(exc).split())[:160] or type(exc).__name__}"


def _async_client():
    import openai  # imported on use: workers and lab nodes need not install the client

    return openai.AsyncOpenAI(
        base_url=settings.LLM_BASE_URL, api_key=settings.LLM_API_KEY, timeout=settings.LLM_TIMEOUT, max_retries=0
    )


def _client():
    import openai

    return openai.OpenAI(
        base_url=settings.LLM_BASE_URL, api_key=settings.LLM_API_KEY, timeout=settings.LLM_TIMEOUT, max_retries=0
    )


async def stream_chat(messages: list[dict]) -> AsyncIterator[str]:
    """Yield the answer's text pieces as the server sends them. Raises LLMUnavailable."""
    import openai

    try:
        stream = await _async_client().chat.completions.create(
            model=model_name(), messages=messages, stream=True, max_tokens=settings.LLM_MAX_TOKENS, temperature=0.3
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content
    except openai.OpenAIError as exc:
        raise LLMUnavailable(describe_error(exc)) from None


def complete(messages: list[dict]) -> str:
    """One whole answer (used for grading). Raises LLMUnavailable."""
    import openai

    try:
        response = _client().chat.completions.create(
            model=model_name(), messages=messages, max_tokens=settings.LLM_MAX_TOKENS, temperature=0.0
        )
    except openai.OpenAIError as exc:
        raise LLMUnavailable(describe_error(exc)) from None
    return (response.choices[0].message.content or "") if response.choices else ""
