"""The provider layer through the real SDKs, with HTTP faked at the transport."""

import pytest

from benchmark.llm import (
    ConfigurationError,
    ContextOverflowError,
    Endpoint,
    Prices,
    ProviderError,
    Secret,
    complete,
    image_block,
    parse_model,
    text_block,
)
from benchmark.llm.endpoints import connection_for

HI = [{"role": "user", "content": "hi"}]
ANTHROPIC = Endpoint(provider="anthropic", name="test", api_key=Secret("sk-ant-test"))
OPENAI = Endpoint(provider="openai", name="test", api_key=Secret("sk-test"), prices={"gpt-4o": Prices(2.5, 10.0)})


def test_it_parses_model_strings():
    assert parse_model("anthropic:claude-x") == ("anthropic", "claude-x")
    assert parse_model("compat:llama3") == ("compat", "llama3")
    for bad in ("claude", "foo:bar", "openai:"):
        with pytest.raises(ConfigurationError):
            parse_model(bad)


def test_it_calls_anthropic_and_prices_the_reply(fake_llm):
    fake_llm.anthropic("hello", tokens_in=1000, tokens_out=500)
    result = complete(
        endpoint=ANTHROPIC, model="claude-x", system="be brief", messages=HI, temperature=0.0, prices=Prices(3.0, 15.0)
    )
    assert result.text == "hello" and result.model == "anthropic:claude-x"
    assert (result.tokens_in, result.tokens_out) == (1000, 500)
    assert result.cost == pytest.approx((1000 * 3 + 500 * 15) / 1e6)
    call = fake_llm.calls[-1]
    assert call["url"] == "https://api.anthropic.com/v1/messages"
    assert call["body"]["system"] == "be brief" and call["body"]["temperature"] == 0.0
    assert "sk-ant-test" in (call["headers"].get("x-api-key") or call["headers"].get("authorization", ""))


def test_it_calls_openai_with_images_and_marks_unknown_prices(fake_llm):
    fake_llm.openai("a chart", tokens_in=10, tokens_out=5)
    result = complete(
        endpoint=OPENAI,
        model="some-new-model",
        messages=[{"role": "user", "content": [text_block("describe"), image_block(b"\x89PNG")]}],
    )
    assert result.text == "a chart" and result.priced is False and result.cost == 0.0
    body = fake_llm.calls[-1]["body"]
    assert body["messages"][0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_it_uses_the_endpoints_price_of_the_model(fake_llm):
    fake_llm.openai("x", tokens_in=1_000_000, tokens_out=0)
    assert complete(endpoint=OPENAI, model="openai:gpt-4o", messages=HI).cost == pytest.approx(2.5)


def test_it_reaches_an_openai_compatible_server_at_the_endpoints_url(fake_llm):
    fake_llm.openai("ok")
    local = Endpoint(provider="compat", name="ollama", base_url="http://127.0.0.1:11434/v1")
    assert complete(endpoint=local, model="llama3", messages=HI).text == "ok"
    call = fake_llm.calls[-1]
    assert call["url"] == "http://127.0.0.1:11434/v1/chat/completions"
    assert call["headers"]["authorization"] == "Bearer not-needed"  # no key configured: none of the server's


def test_it_reports_context_overflow(fake_llm):
    fake_llm.error(
        400,
        {
            "error": {
                "message": "maximum context length is 8192 tokens",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    )
    with pytest.raises(ContextOverflowError):
        complete(endpoint=OPENAI, model="gpt-4o", messages=HI, max_retries=0)
    fake_llm.error(
        400,
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long: 300000 tokens > 200000 maximum"},
        },
    )
    with pytest.raises(ContextOverflowError):
        complete(endpoint=ANTHROPIC, model="claude-x", messages=HI, max_retries=0)


def test_it_retries_server_errors_then_raises_a_provider_error_naming_the_url(fake_llm):
    fake_llm.error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).anthropic(
        "recovered"
    )
    assert complete(endpoint=ANTHROPIC, model="claude-x", messages=HI, max_retries=1).text == "recovered"
    assert len(fake_llm.calls) == 2
    fake_llm.error(500, {"error": {"message": "boom"}})
    with pytest.raises(ProviderError, match=r"openai at https://api.openai.com/v1: call failed \(HTTP 500\)") as err:
        complete(endpoint=OPENAI, model="gpt-4o", messages=HI, max_retries=0)
    assert err.value.status == 500 and "boom" in err.value.raw


def test_it_refuses_a_call_without_an_endpoint_or_a_key(fake_llm):
    with pytest.raises(ConfigurationError, match="needs an endpoint"):
        complete(endpoint="https://attacker.example/v1", model="gpt-4o", messages=HI)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        complete(model="anthropic:claude-x", messages=HI, base_url="http://127.0.0.1:9/")  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match="no API key"):
        complete(endpoint=Endpoint(provider="anthropic", name="keyless"), model="claude-x", messages=HI)
    assert fake_llm.calls == []


def test_it_resolves_a_bare_model_string_to_the_default_endpoint_of_its_provider(fake_llm, monkeypatch):
    connection, name = connection_for(endpoint=None, model="anthropic:claude-x")
    assert (connection.name, connection.base_url, name) == ("Anthropic", None, "claude-x")
    assert connection.api_key.reveal() == "sk-ant-test" and "sk-ant-test" not in repr(connection)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigurationError, match=r"not set on this server \(ANTHROPIC_API_KEY\)"):
        connection_for(endpoint=None, model="anthropic:claude-x")
    with pytest.raises(ConfigurationError, match="no model endpoint serves compat:llama3"):
        connection_for(endpoint=None, model="compat:llama3")  # OPENAI_BASE_URL unset: no compat default
