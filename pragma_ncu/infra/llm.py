"""A thin client for any OpenAI-compatible chat endpoint, used by `knowledge build` and the coder.

It adds what the callers need and the bare `openai` client leaves to them: one config value built
from the settings, bounded retries with backoff on 429/5xx/timeouts (honouring Retry-After), the
reply's text (`complete_text`, for the coder's code blocks) or a JSON object extracted from it
(`complete_json`, ```json fences tolerated, checked against a schema hint), usage and latency on
the result, and two typed errors: `LLMUnavailable` (no answer) and `LLMBadReply` (an answer that
is not what was asked). `openai` is imported lazily, so everything else works without it.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pragma_ncu.infra.errors import LLMBadReply, LLMUnavailable
from pragma_ncu.infra.settings import Settings

Message = Mapping[str, str]  # {"role": "system"|"user"|"assistant", "content": "..."}
SchemaHint = Mapping[str, type | tuple[type, ...]]  # required key -> allowed Python type(s)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
log = logging.getLogger(__name__)
_KEYLIKE = re.compile(r"\bsk-[\w*.-]{4,}")  # OpenAI-style keys, masked or not


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to ask. `api_key` may be empty for local servers that take none."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 3  # retries after the first attempt, on 429, 5xx, timeouts, lost connections
    backoff_s: float = 2.0  # first wait; doubles per retry
    max_backoff_s: float = 60.0
    temperature: float = 0.0
    max_tokens: int = 2048

    def __repr__(self) -> str:  # the key stays out of logs and tracebacks
        return (f"LLMConfig(model={self.model!r}, base_url={self.base_url!r}, "
                f"timeout_s={self.timeout_s}, max_retries={self.max_retries})")

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> LLMConfig | None:
        """The config the settings describe, or None when no LLM is configured (no model, or
        neither an endpoint nor a key)."""
        if not settings.llm_model or not (settings.llm_base_url or settings.llm_api_key):
            return None
        return cls(model=settings.llm_model, base_url=settings.llm_base_url,
                   api_key=settings.llm_api_key, **overrides)

    @property
    def label(self) -> str:
        """Model and endpoint, for summaries and cache keys."""
        return f"{self.model}@{self.base_url or 'default'}"


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


class LLMNoAnswer(LLMUnavailable):
    """LLMUnavailable raised by a request: `attempts` is how many times it was sent, so a trace
    can record what the failed request cost; `unreachable` when no attempt reached the
    endpoint (nothing listens there, no route, a name that does not resolve): asking again
    later in the same run would fail the same way. `error` is the last failure alone (the
    message adds the model and the endpoint)."""

    def __init__(self, message: str, attempts: int, unreachable: bool = False,
                 error: str = "") -> None:
        self.attempts = attempts
        self.unreachable = unreachable
        self.error = error or message
        super().__init__(message)


@dataclass(frozen=True)
class LLMText:
    """One answered request: the reply's text (never empty) and what it cost."""

    text: str
    model: str
    usage: Usage
    latency_s: float  # wall time of all attempts, waits included
    attempts: int


@dataclass(frozen=True)
class LLMReply(LLMText):
    """One answered request read as JSON: the object (`data`) beside the raw text and what it
    cost."""

    data: dict[str, Any]


class LLMClient:
    """Ask an OpenAI-compatible endpoint for text or JSON objects.

    `sleep` and `clock` are injected so tests run retries without waiting. The underlying
    `openai.OpenAI` client is made once, with its own retries off (this class does them, so the
    count and the waits are known and bounded).
    """

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._sleep = sleep
        self._clock = clock
        self._client = _make_openai_client(config)

    def complete_text(self, messages: Sequence[Message]) -> LLMText:
        """Send `messages`; return the reply's text with its usage, latency and attempts.

        Raises LLMUnavailable (an LLMNoAnswer, with the attempts) when no answer came after the
        retries, LLMBadReply when the answer is empty.
        """
        start = self._clock()
        self._log_request(messages)
        response, attempts = self._create_with_retries(list(messages))
        latency = self._clock() - start
        text = _reply_text(response)
        usage = getattr(response, "usage", None)
        reply = LLMText(
            text=text, model=str(getattr(response, "model", "") or self.config.model),
            usage=Usage(int(getattr(usage, "prompt_tokens", 0) or 0),
                        int(getattr(usage, "completion_tokens", 0) or 0)),
            latency_s=latency, attempts=attempts)
        log.info("LLM reply from %s: %d characters, %d+%d tokens, %.1f s, %d attempt(s)",
                 reply.model, len(text), reply.usage.prompt_tokens,
                 reply.usage.completion_tokens, latency, attempts)
        log.debug("LLM reply text:\n%s", self._redacted(text))
        return reply

    def _log_request(self, messages: Sequence[Message]) -> None:
        """The request in short at INFO, each message whole at DEBUG (the model, never the
        endpoint or the key: a key pasted into a prompt is cut out too)."""
        log.info("LLM request to %s: %d messages, %d characters", self.config.model,
                 len(messages), sum(len(m.get("content", "")) for m in messages))
        for i, message in enumerate(messages):
            log.debug("LLM message %d (%s):\n%s", i + 1, message.get("role", "?"),
                      self._redacted(message.get("content", "")))

    def _redacted(self, text: str) -> str:
        """`text` without the key, whole or as an endpoint's error shows it ("sk-...abcd")."""
        key = self.config.api_key
        return _KEYLIKE.sub("<key>", text.replace(key, "<key>") if key else text)

    def complete_json(self, messages: Sequence[Message],
                      schema_hint: SchemaHint | None = None) -> LLMReply:
        """Send `messages`; return the reply's JSON object, checked against `schema_hint`.

        Raises LLMUnavailable when no answer came (after the retries), LLMBadReply when the
        answer holds no JSON object or misses a required key or type.
        """
        reply = self.complete_text(messages)
        data = extract_json_object(reply.text)
        check_schema(data, schema_hint or {}, reply.text)
        return LLMReply(**vars(reply), data=data)

    def _create_with_retries(self, messages: list[Message]) -> tuple[Any, int]:
        import openai

        last, connections = "", 0
        for attempt in range(self.config.max_retries + 1):
            try:
                return self._create(messages), attempt + 1
            except openai.APIStatusError as exc:
                if exc.status_code != 429 and exc.status_code < 500:
                    log.info("LLM request refused: HTTP %d: %s", exc.status_code,
                             self._redacted(_short(exc.message)))
                    raise LLMNoAnswer(f"{self.config.label} refused the request: HTTP "
                                      f"{exc.status_code}: {_short(exc.message)}",
                                      attempt + 1) from None
                last = f"HTTP {exc.status_code}: {_short(exc.message)}"
                wait = _retry_after(exc) if exc.status_code == 429 else None
            except openai.APITimeoutError:
                last = f"no answer within {self.config.timeout_s:g} s"
                wait = None
            except openai.APIConnectionError as exc:
                root = _root_cause(exc)
                last = f"connection failed: {_short(str(root))}"
                if isinstance(root, ConnectionRefusedError):  # nothing listens: no retry
                    log.info("LLM request failed: %s", self._redacted(last))
                    raise LLMNoAnswer(f"{self.config.label}: {last}", attempt + 1,
                                      unreachable=True, error=last) from None
                connections += 1
                wait = None
            if attempt < self.config.max_retries:
                pause = self._backoff(attempt, wait)
                log.info("LLM attempt %d of %d failed (%s); retrying in %.1f s", attempt + 1,
                         self.config.max_retries + 1, self._redacted(last), pause)
                self._sleep(pause)
        log.info("LLM request failed after %d attempts: %s", self.config.max_retries + 1,
                 self._redacted(last))
        raise LLMNoAnswer(f"{self.config.label}: {last} "
                          f"(after {self.config.max_retries + 1} attempts)",
                          self.config.max_retries + 1,
                          unreachable=connections == self.config.max_retries + 1, error=last)

    def _create(self, messages: list[Message]) -> Any:
        return self._client.chat.completions.create(
            model=self.config.model, messages=messages, temperature=self.config.temperature,
            max_tokens=self.config.max_tokens, timeout=self.config.timeout_s)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.config.max_backoff_s)
        return min(self.config.backoff_s * 2 ** attempt, self.config.max_backoff_s)


def _make_openai_client(config: LLMConfig) -> Any:
    try:
        import openai
    except ImportError:
        raise LLMUnavailable("the `openai` package is not installed (pip install 'openai>=1.40'); "
                             "without it no LLM is used") from None
    return openai.OpenAI(api_key=config.api_key or "unused", base_url=config.base_url,
                         timeout=config.timeout_s, max_retries=0)


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost cause of a connection error (openai's "Connection error." wraps the
    socket's own: "[Errno 111] Connection refused")."""
    seen = {id(exc)}
    while (inner := exc.__cause__ or exc.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        exc = inner
    return exc


def _reply_text(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise LLMBadReply("the reply has no choices")
    content = getattr(choices[0].message, "content", None)
    if not content or not str(content).strip():
        raise LLMBadReply("the reply is empty")
    return str(content)


def _retry_after(exc: Any) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    value = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        return float(value) if value is not None else None
    except ValueError:  # an HTTP date: not worth parsing, use the backoff
        return None


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text`: the whole text, a ```json fenced block, or the object
    that starts at the first '{'. LLMBadReply when there is none."""
    candidates = [text.strip()] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        start = candidate.find("{")
        while start != -1:
            try:
                value, _ = decoder.raw_decode(candidate, start)
            except json.JSONDecodeError:
                start = candidate.find("{", start + 1)
                continue
            if isinstance(value, dict):
                return value
            start = candidate.find("{", start + 1)
    raise LLMBadReply(f"no JSON object in the reply: {_short(text, 200)!r}", text)


def check_schema(data: Mapping[str, Any], schema_hint: SchemaHint, text: str = "") -> None:
    """LLMBadReply unless every key of `schema_hint` is in `data` with an allowed type."""
    for key, kinds in schema_hint.items():
        if key not in data:
            raise LLMBadReply(f"the reply's JSON object lacks '{key}'", text)
        if not isinstance(data[key], kinds):
            raise LLMBadReply(f"the reply's '{key}' is {type(data[key]).__name__}, expected "
                              f"{_type_names(kinds)}", text)


def _type_names(kinds: type | tuple[type, ...]) -> str:
    if isinstance(kinds, tuple):
        return " or ".join(k.__name__ for k in kinds)
    return kinds.__name__
