"""The provider layer through the real SDKs, with HTTP faked at the transport."""

import pytest

from benchmark.llm import (
    ConfigurationError,
    ContextOverflowError,
    Prices,
    ProviderError,
    complete,
    image_block,
    parse_model,
    text_block,
)

HI = [{"role": "user", "content": "hi"}]


def test_it_parses_model_strings():
    assert parse_model("anthropic:claude-x") == ("anthropic", "claude-x")
    assert parse_model("compat:llama3") == ("compat", "llama3")
    for bad in ("claude", "foo:bar", "openai:"):
        with pytest.raises(ConfigurationError):
            parse_model(bad)


def test_it_calls_anthropic_and_prices_the_reply(fake_llm):
    fake_llm.anthropic("hello", tokens_in=1000, tokens_out=500)
    result = complete(
        model="anthropic:claude-x", system="be brief", messages=HI, temperature=0.0, prices=Prices(3.0, 15.0)
    )
    assert result.text == "hello"
    assert (result.tokens_in, result.tokens_out) == (1000, 500)
    assert result.cost == pytest.approx((1000 * 3 + 500 * 15) / 1e6)
    call = fake_llm.calls[-1]
    assert call["url"] == "https://api.anthropic.com/v1/messages"
    assert call["body"]["system"] == "be brief" and call["body"]["temperature"] == 0.0
    assert "sk-ant-test" in (call["headers"].get("x-api-key") or call["headers"].get("authorization", ""))


def test_it_calls_openai_with_images_and_marks_unknown_prices(fake_llm):
    fake_llm.openai("a chart", tokens_in=10, tokens_out=5)
    result = complete(
        model="openai:some-new-model",
        messages=[{"role": "user", "content": [text_block("describe"), image_block(b"\x89PNG")]}],
    )
    assert result.text == "a chart" and result.priced is False and result.cost == 0.0
    body = fake_llm.calls[-1]["body"]
    assert body["messages"][0]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_it_uses_list_prices_for_known_models(fake_llm):
    fake_llm.openai("x", tokens_in=1_000_000, tokens_out=0)
    assert complete(model="openai:gpt-4o", messages=HI).cost == pytest.approx(2.5)


def test_it_reaches_an_openai_compatible_server_by_base_url(fake_llm):
    fake_llm.openai("ok")
    assert complete(model="compat:llama3", messages=HI, base_url="http://127.0.0.1:11434/v1").text == "ok"
    assert fake_llm.calls[-1]["url"] == "http://127.0.0.1:11434/v1/chat/completions"


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
        complete(model="openai:gpt-4o", messages=HI, max_retries=0)
    fake_llm.error(
        400,
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long: 300000 tokens > 200000 maximum"},
        },
    )
    with pytest.raises(ContextOverflowError):
        complete(model="anthropic:claude-x", messages=HI, max_retries=0)


def test_it_retries_server_errors_then_raises_a_provider_error(fake_llm):
    fake_llm.error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).anthropic(
        "recovered"
    )
    assert complete(model="anthropic:claude-x", messages=HI, max_retries=1).text == "recovered"
    assert len(fake_llm.calls) == 2
    fake_llm.error(500, {"error": {"message": "boom"}})
    with pytest.raises(ProviderError):
        complete(model="openai:gpt-4o", messages=HI, max_retries=0)


def test_it_refuses_calls_without_a_key(settings):
    settings.ANTHROPIC_API_KEY = ""
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        complete(model="anthropic:claude-x", messages=HI)
