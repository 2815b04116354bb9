"""The LLM coder: asks a model to rewrite a kernel into a parameterized template, or to repair a
failed one, and returns a Variant the search can tune.

The prompt has PRAGMA's five parts (current code, error diagnosis, compendium entries, current
profile, historical best with its profile) plus the conductor's guidance and the user's spec;
the templates are `templates/prompts/coder_system.j2` and `coder_user.j2`. A reply is parsed and
checked statically (`reply.parse_reply`), then by the injected `check` (the loop builds the
variant's spec and compiles it at its defaults). A refused reply goes back to the model with the
reason, up to `max_attempts` replies; no answer at all (`LLMUnavailable`) ends the proposal,
and an endpoint that cannot be reached says so (`CoderResult.unreachable`), for the loop to go
on without it.
Every request becomes one `LLMCall` for the trace; neither the key nor the endpoint appears in
a message, a call or an error.
"""

from __future__ import annotations

import logging
import re
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from pragma_ncu.coder.reply import (
    ParsedReply,
    ReplyError,
    explain_check_error,
    first_sentence,
    parse_reply,
)
from pragma_ncu.coder.variant import Variant
from pragma_ncu.infra import sources
from pragma_ncu.infra.errors import LLMBadReply, LLMUnavailable, PragmaError
from pragma_ncu.infra.llm import LLMClient, LLMText, Message
from pragma_ncu.infra.resources import data_path
from pragma_ncu.measure.records import Citation, KernelState, LLMCall
from pragma_ncu.spec.file import toml_text
from pragma_ncu.spec.model import rules_of

KINDS = ("rewrite", "repair")
ROLE = "coder"
MAX_FEEDBACK_CHARS = 4000  # of a compile log sent back: its first errors are the ones that count
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CoderRequest:
    """What the loop asks of the coder: the code to change and the evidence for the change."""

    kind: str  # "rewrite" or "repair"
    kernel_name: str
    spec_text: str  # the user's spec TOML (args, launch, shapes): context for the model
    current: Variant  # the historical best (rewrite) or the failed candidate (repair)
    current_params: dict[str, Any]  # its best parameter values
    diagnosis: str  # repair: the failure (compile log tail, verification failure); rewrite: notes
    guidance: tuple[str, ...]  # the conductor's structural guidance
    compendium: tuple[Citation, ...]  # entries for the metrics involved
    profile: dict[str, Any]  # {"classification": str, "metrics": {name: value}, "findings": [...]}
    best: KernelState | None  # the historical best's measurements and profile summary
    best_source: str = ""  # the historical best's source (when not `current`)
    target: str = "cuda"  # the spec's target ("cpu": a C/C++ function, the system compiler)
    moves_tried: tuple[str, ...] = ()  # the source moves tried so far and what they measured


@dataclass(frozen=True)
class CoderResult:
    """The proposal: a variant, or None with the reason; the LLM requests it took either way."""

    variant: Variant | None
    calls: tuple[LLMCall, ...]
    error: str = ""
    unreachable: str = ""  # the endpoint could not be reached: the error (without the URL)


class LLMCoder:
    """Turns a CoderRequest into a Variant through an LLM, feeding every refusal back.

    `check(variant)` returns None when the variant's spec builds and its defaults compile, else
    the error text; `clock` times requests that got no answer (answered ones carry their own).
    """

    def __init__(self, client: LLMClient, check: Callable[[Variant], str | None], *,
                 max_attempts: int = 3, clock: Callable[[], float] = time.monotonic) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.client = client
        self.check = check
        self.max_attempts = max_attempts
        self._clock = clock

    def propose(self, request: CoderRequest, name: str) -> CoderResult:
        """Ask for a variant named `name`; at most `max_attempts` replies."""
        messages = coder_messages(request)
        spec = _spec_data(request.spec_text)
        calls: list[LLMCall] = []
        error = ""
        for attempt in range(self.max_attempts):
            start = self._clock()
            try:
                reply = self.client.complete_text(messages)
            except LLMUnavailable as exc:
                reason = self._redact(str(exc))
                calls.append(self._call_without_reply(start, getattr(exc, "attempts", 1),
                                                      f"unavailable: {reason}"))
                unreachable = getattr(exc, "unreachable", False)
                return CoderResult(None, tuple(calls), f"LLM unavailable: {reason}",
                                   self._redact(getattr(exc, "error", reason))
                                   if unreachable else "")
            except LLMBadReply as exc:
                error = f"the reply was unusable: {exc}"
                calls.append(self._call_without_reply(start, 1, f"bad reply: {exc}"))
                messages = [*messages, feedback_message(error, attempt + 2, self.max_attempts)]
                continue
            variant, error = self._accept(reply.text, request, name, spec)
            calls.append(_call(reply, "ok" if variant else f"refused: {_one_line(error)}"))
            log.info("coder reply %d of %d: %s", attempt + 1, self.max_attempts,
                     calls[-1].outcome)
            if variant is not None:
                return CoderResult(variant, tuple(calls))
            messages = [*messages, {"role": "assistant", "content": reply.text},
                        feedback_message(error, attempt + 2, self.max_attempts)]
        return CoderResult(None, tuple(calls), f"no usable variant after {self.max_attempts} "
                                               f"replies; the last: {_one_line(error)}")

    def _accept(self, text: str, request: CoderRequest, name: str,
                spec: Mapping[str, Any]) -> tuple[Variant | None, str]:
        """The reply's variant, or None and what is wrong with it (for the model)."""
        try:
            parsed = parse_reply(text, request.kernel_name, spec=spec,
                                 source=request.current.filename)
        except ReplyError as exc:
            return None, str(exc)
        variant = reply_variant(parsed, request.current, name)
        if (variant.source.strip() == request.current.source.strip()
                and variant.overlay == request.current.overlay):
            return None, ("the code and its [params] are unchanged from the current code: "
                          "change them")
        try:
            failure = self.check(variant)
        except PragmaError as exc:  # a check that raises instead of returning its message
            failure = str(exc)
        if failure:
            explained = explain_check_error(_head(failure), parsed.is_jinja)
            return None, f"the kernel did not pass the build check:\n{explained}"
        return variant, ""

    def _call_without_reply(self, start: float, attempts: int, outcome: str) -> LLMCall:
        return LLMCall(ROLE, self.client.config.model, 0, 0, self._clock() - start, attempts,
                       outcome)

    def _redact(self, text: str) -> str:
        """`text` without the endpoint or the key (the client's messages name its endpoint)."""
        config = self.client.config
        for secret, mark in ((config.base_url, "<endpoint>"), (config.api_key, "<key>")):
            if secret:
                text = text.replace(secret, mark)
        return _URL.sub("<endpoint>", text)


def reply_variant(parsed: ParsedReply, current: Variant, name: str) -> Variant:
    """The Variant of a checked reply: the current file's stem, `.cu` or `.cu.j2`."""
    return Variant(name=name, filename=variant_filename(current.filename, parsed.is_jinja),
                   source=parsed.code, overlay=parsed.overlay, origin="llm",
                   note=first_sentence(parsed.rationale))


def variant_filename(current: str, is_jinja: bool) -> str:
    """`silu.cu` or `silu.cu.j2` -> `silu.cu.j2` for a jinja2 reply, `silu.cu` otherwise (a
    C/C++ file keeps its own extension: `conv1d.cpp` -> `conv1d.cpp.j2`)."""
    plain = current.removesuffix(".j2")
    return plain + (".j2" if is_jinja else "")


# --- prompts -------------------------------------------------------------------------------

@cache
def _template(name: str) -> jinja2.Template:
    source = data_path("templates", "prompts", name).read_text(encoding="utf-8")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False,
                             keep_trailing_newline=False)
    env.filters["num"] = format_number
    return env.from_string(source)


def coder_messages(request: CoderRequest) -> list[Message]:
    """The system and first user message for `request`."""
    if request.kind not in KINDS:
        raise ValueError(f"CoderRequest.kind must be one of {KINDS}, got {request.kind!r}")
    rules = rules_of(Path(request.current.filename.removesuffix(".j2")))
    system = _template(system_prompt(request.target)).render(
        kernel_name=request.kernel_name, kernel_words=rules.kernel_words)
    user = sources.printable(  # a source's non-UTF-8 bytes as U+FFFD: the request is JSON
        _template("coder_user.j2").render(part="request", **_request_context(request)))
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def system_prompt(target: str) -> str:
    """The coder's contract for a target's kernels: templates/prompts/coder_system_<target>.j2
    where the target has its own (the CPU's: a C function, the system compiler), else the CUDA
    one (coder_system.j2)."""
    own = f"coder_system_{target}.j2"
    return own if data_path("templates", "prompts", own).is_file() else "coder_system.j2"


def feedback_message(error: str, attempt: int, max_attempts: int) -> Message:
    """The user message that sends a refusal back, asking for a corrected full reply (the
    reply it asks for is number `attempt` of `max_attempts`)."""
    text = _template("coder_user.j2").render(part="feedback", error=error, attempt=attempt,
                                             max_attempts=max_attempts)
    return {"role": "user", "content": text}


def _request_context(request: CoderRequest) -> dict[str, Any]:
    best = request.best
    show_best_source = bool(request.best_source.strip()) and (
        request.best_source.strip() != request.current.source.strip())
    return {
        "kind": request.kind, "kernel_name": request.kernel_name,
        "spec_text": request.spec_text.strip(), "current": request.current,
        "current_lang": _lang(request.current.filename),
        "current_overlay": overlay_toml(request.current.overlay),
        "current_params": request.current_params, "diagnosis": request.diagnosis.strip(),
        "compendium": request.compendium, "profile": _profile_view(request.profile),
        "guidance": request.guidance, "best": best,
        "best_metrics": _metric_rows(best.metrics if best else {}),
        "best_source": request.best_source if show_best_source else "",
        "best_lang": "cuda" if best is None else _best_lang(request.best_source),
        "moves_tried": request.moves_tried,
    }


def _lang(filename: str) -> str:
    if filename.endswith(".j2"):
        return "jinja"
    return "cuda" if filename.endswith(".cu") else "cpp"


def _best_lang(source: str) -> str:
    return "jinja" if "{{" in source or "{%" in source else "cuda"


def _profile_view(profile: Mapping[str, Any]) -> dict[str, Any]:
    """The profile summary with every field present, numbers formatted."""
    findings = [{"bottleneck": str(f.get("bottleneck", "")), "title": str(f.get("title", "")),
                 "summary": str(f.get("summary", ""))}
                for f in profile.get("findings") or () if isinstance(f, Mapping)]
    return {"classification": str(profile.get("classification") or ""),
            "metrics": _metric_rows(profile.get("metrics") or {}), "findings": findings}


def _metric_rows(metrics: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(name, format_number(value)) for name, value in metrics.items()]


def format_number(value: Any) -> str:
    """A number in at most 4 significant digits (integers whole); anything else as text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        return str(int(value))
    return f"{value:.4g}"


def overlay_toml(overlay: Mapping[str, Any]) -> str:
    """A variant's overlay as TOML tables (inline tables and arrays inside), "" when empty."""
    tables = {name: body for name, body in overlay.items() if isinstance(body, Mapping)}
    return toml_text(tables).strip("\n") if tables else ""


# --- small helpers -------------------------------------------------------------------------

def _spec_data(spec_text: str) -> dict[str, Any]:
    """The user's spec as tables, for the reply checks that need it ({} if it does not parse:
    the loop has parsed it already, so that is a caller's test double)."""
    try:
        return tomllib.loads(spec_text)
    except tomllib.TOMLDecodeError:
        return {}


def _call(reply: LLMText, outcome: str) -> LLMCall:
    return LLMCall(ROLE, reply.model, reply.usage.prompt_tokens, reply.usage.completion_tokens,
                   reply.latency_s, reply.attempts, outcome)


def _head(text: str) -> str:
    if len(text) <= MAX_FEEDBACK_CHARS:
        return text
    return text[:MAX_FEEDBACK_CHARS] + f"\n... ({len(text) - MAX_FEEDBACK_CHARS} more characters)"


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."
