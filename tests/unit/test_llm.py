"""The LLM client against the scripted OpenAI-compatible server (no network, no model)."""

from __future__ import annotations

import sys
import time

import pytest

from pragma_ncu.infra.errors import LLMBadReply, LLMUnavailable
from pragma_ncu.infra.llm import (
    LLMClient,
    LLMConfig,
    LLMNoAnswer,
    check_schema,
    extract_json_object,
)
from pragma_ncu.infra.settings import load_settings
from tests.fakes.llm_server import FakeLLMServer, Reply

ASK = [{"role": "system", "content": "answer in JSON"}, {"role": "user", "content": "hello"}]


def client_for(server: FakeLLMServer, sleeps: list[float] | None = None,
               **options: float) -> LLMClient:
    config = LLMConfig(model="fake-model", base_url=server.base_url, api_key="k",
                       **{"timeout_s": 5.0, "max_retries": 2, "backoff_s": 0.01, **options})
    return LLMClient(config, sleep=(sleeps.append if sleeps is not None else time.sleep))


def test_good_reply_gives_the_object_usage_and_latency(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.json({"metrics": [{"name": "dram__bytes"}]})])
    reply = client_for(llm_server).complete_json(ASK, {"metrics": list})
    assert reply.data == {"metrics": [{"name": "dram__bytes"}]}
    assert reply.attempts == 1
    assert reply.model == "fake-model"
    assert reply.usage.completion_tokens > 0 and reply.usage.prompt_tokens > 0
    assert reply.latency_s > 0
    [request] = llm_server.requests
    assert request["model"] == "fake-model"
    assert request["messages"][1] == {"role": "user", "content": "hello"}


def test_complete_text_gives_the_text_as_sent(llm_server: FakeLLMServer) -> None:
    content = "```cuda\n__global__ void k() {}\n```\nNo JSON here."
    llm_server.script([Reply.rate_limited(0), Reply.text(content)])
    reply = client_for(llm_server, []).complete_text(ASK)
    assert reply.text == content
    assert reply.attempts == 2 and reply.model == "fake-model"
    assert reply.usage.completion_tokens == len(content) // 4
    assert reply.usage.prompt_tokens == sum(len(m["content"]) for m in ASK) // 4


def test_complete_text_refuses_an_empty_reply(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.text("   \n")])
    with pytest.raises(LLMBadReply, match="the reply is empty"):
        client_for(llm_server).complete_text(ASK)


def test_no_answer_says_how_many_attempts_it_took(llm_server: FakeLLMServer) -> None:
    llm_server.default = Reply.server_error(502)
    with pytest.raises(LLMNoAnswer) as info:
        client_for(llm_server, [], max_retries=1).complete_text(ASK)
    assert isinstance(info.value, LLMUnavailable) and info.value.attempts == 2
    llm_server.script([Reply(401, None, body={"error": {"message": "bad key"}})])
    with pytest.raises(LLMNoAnswer) as info:
        client_for(llm_server, []).complete_text(ASK)
    assert info.value.attempts == 1


def test_fenced_json_is_accepted(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.json({"a": 1}, fenced=True)])
    assert client_for(llm_server).complete_json(ASK).data == {"a": 1}


def test_rate_limit_is_retried_after_the_servers_delay(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.rate_limited(retry_after=0.25), Reply.json({"ok": True})])
    sleeps: list[float] = []
    reply = client_for(llm_server, sleeps).complete_json(ASK)
    assert reply.data == {"ok": True}
    assert reply.attempts == 2
    assert sleeps == [0.25]
    assert len(llm_server.requests) == 2


def test_server_errors_back_off_exponentially_then_succeed(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.server_error(500), Reply.server_error(503), Reply.json({"x": 1})])
    sleeps: list[float] = []
    reply = client_for(llm_server, sleeps, backoff_s=0.5).complete_json(ASK)
    assert reply.attempts == 3
    assert sleeps == [0.5, 1.0]


def test_retries_are_bounded(llm_server: FakeLLMServer) -> None:
    llm_server.default = Reply.server_error(500)
    sleeps: list[float] = []
    with pytest.raises(LLMUnavailable, match="HTTP 500.*after 3 attempts"):
        client_for(llm_server, sleeps).complete_json(ASK)
    assert len(llm_server.requests) == 3
    assert len(sleeps) == 2


def test_slow_reply_times_out(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.slow(5.0), Reply.slow(5.0)])
    start = time.monotonic()
    with pytest.raises(LLMUnavailable, match="no answer within 0.3 s"):
        client_for(llm_server, [], timeout_s=0.3, max_retries=1).complete_json(ASK)
    assert time.monotonic() - start < 4.0
    assert len(llm_server.requests) == 2


def test_client_errors_are_not_retried(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply(400, None, body={"error": {"message": "bad model"}})])
    with pytest.raises(LLMUnavailable, match="HTTP 400"):
        client_for(llm_server, []).complete_json(ASK)
    assert len(llm_server.requests) == 1


def test_malformed_reply_is_a_bad_reply_not_retried(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.text("Sure! The metric means many things.")])
    with pytest.raises(LLMBadReply) as info:
        client_for(llm_server).complete_json(ASK)
    assert "Sure!" in info.value.reply
    assert len(llm_server.requests) == 1


def test_schema_hint_is_enforced(llm_server: FakeLLMServer) -> None:
    llm_server.script([Reply.json({"metrics": "dram__bytes"})])
    with pytest.raises(LLMBadReply, match="'metrics' is str, expected list"):
        client_for(llm_server).complete_json(ASK, {"metrics": list})


def test_unreachable_endpoint_is_unavailable() -> None:
    server = FakeLLMServer().start()
    url = server.base_url
    server.stop()
    config = LLMConfig(model="m", base_url=url, timeout_s=2, max_retries=1, backoff_s=0)
    with pytest.raises(LLMUnavailable, match="connection failed"):
        LLMClient(config, sleep=lambda s: None).complete_json(ASK)


def test_a_refused_connection_is_unreachable_at_once() -> None:
    """Issue 35: nothing listens there, so waiting 2 + 4 + 8 s to ask again is no use."""
    server = FakeLLMServer().start()
    url = server.base_url
    server.stop()
    sleeps: list[float] = []
    config = LLMConfig(model="m", base_url=url, timeout_s=2)  # the defaults: 3 retries
    with pytest.raises(LLMNoAnswer) as info:
        LLMClient(config, sleep=sleeps.append).complete_text(ASK)
    assert info.value.unreachable and info.value.attempts == 1 and sleeps == []
    assert "Connection refused" in info.value.error


@pytest.mark.parametrize("text, expected", [
    ('{"a": [1, 2]}', {"a": [1, 2]}),
    ('Here you go: {"a": {"b": "}"}} — done', {"a": {"b": "}"}}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('```\n{"a": 2}\n```\ntrailing words', {"a": 2}),
    ('[1, 2] and then {"a": 3}', {"a": 3}),
])
def test_extract_json_object(text: str, expected: dict[str, object]) -> None:
    assert extract_json_object(text) == expected


@pytest.mark.parametrize("text", ["", "no json", "[1, 2, 3]", '{"a": 1'])
def test_extract_json_object_refuses(text: str) -> None:
    with pytest.raises(LLMBadReply):
        extract_json_object(text)


def test_check_schema_names_missing_key() -> None:
    with pytest.raises(LLMBadReply, match="lacks 'metrics'"):
        check_schema({"other": 1}, {"metrics": list})


def test_config_from_settings_and_key_stays_hidden() -> None:
    env = {"HOME": "/tmp", "PRAGMA_NCU_LLM_MODEL": "m", "OPENAI_API_KEY": "sk-secret"}
    settings = load_settings(env)
    config = LLMConfig.from_settings(settings, timeout_s=9.0)
    assert config is not None
    assert (config.model, config.api_key, config.timeout_s) == ("m", "sk-secret", 9.0)
    assert "sk-secret" not in repr(config) and "sk-secret" not in repr(settings)
    own_key = load_settings({**env, "PRAGMA_NCU_LLM_API_KEY": "mine"})
    assert own_key.llm_api_key == "mine"
    assert LLMConfig.from_settings(load_settings({"HOME": "/tmp"})) is None
    no_endpoint = load_settings({"HOME": "/tmp", "PRAGMA_NCU_LLM_MODEL": "m"})
    assert LLMConfig.from_settings(no_endpoint) is None


def test_missing_openai_package_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # `import openai` now raises ImportError
    with pytest.raises(LLMUnavailable, match="openai"):
        LLMClient(LLMConfig(model="m", base_url="http://127.0.0.1:9/v1"))
