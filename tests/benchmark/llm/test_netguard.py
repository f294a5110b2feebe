"""The SSRF guard of researcher-supplied endpoints: every spelling of an internal address is refused,
at save time and again at connect time, where a rebinding DNS answer cannot move it."""

from __future__ import annotations

import socket

import pytest

from benchmark.llm import Endpoint, Guard, ProviderError, Secret, complete
from benchmark.llm.netguard import (
    BlockedAddress,
    address_problem,
    checked_addresses,
    override_resolver,
    parse_networks,
    url_check,
)
from tests.benchmark.llm.listener import Listener

HI = [{"role": "user", "content": "hi"}]


def answers(*addresses: str):
    """A DNS server that answers the given addresses for every name (one per call when several are given)."""
    queue = list(addresses)

    def resolver(host, port, type=0, **kwargs):
        address = queue.pop(0) if len(queue) > 1 else queue[0]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

    return resolver


@pytest.mark.parametrize(
    ("address", "category"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.254", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "private"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("100.127.255.254", "shared (carrier-grade NAT)"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("fec0::1", "site-local"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("::ffff:a9fe:a9fe", "link-local"),  # IPv4-mapped 169.254.169.254 in hex
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("::7f00:1", "loopback"),  # IPv4-compatible 127.0.0.1
    ],
)
def test_it_refuses_every_internal_address(address, category):
    problem = address_problem(address)
    assert problem is not None and f"a {category} address" in problem


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "100.128.0.1", "172.32.0.1"])
def test_it_lets_public_addresses_through(address):
    assert address_problem(address) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/v1",
        "http://[::1]:8000/v1",
        "http://[::ffff:127.0.0.1]/v1",
        "http://2130706433/v1",  # decimal
        "http://0x7f000001/v1",  # hex
        "http://0177.0.0.1/v1",  # octal
        "http://017700000001/v1",  # octal, one number
        "http://127.1/v1",  # short form
        "http://0/v1",  # 0.0.0.0
        "http://localhost:11434/v1",  # a name resolving to loopback (/etc/hosts)
        "https://169.254.169.254/latest/meta-data/",
        "http://10.0.0.5/v1",
        "http://172.16.5.4/v1",
        "http://192.168.0.10/v1",
        "http://100.64.1.1/v1",
    ],
)
def test_it_refuses_every_spelling_of_an_internal_url(url):
    with pytest.raises(BlockedAddress, match="endpoints supplied by researchers may reach public addresses only"):
        url_check(url)


def test_it_refuses_dns_names_that_resolve_to_internal_addresses():
    for address in ("127.0.0.1", "10.0.0.7", "169.254.169.254", "::1", "::ffff:192.168.1.1", "100.64.0.9"):
        with (
            override_resolver(answers(address)),
            pytest.raises(BlockedAddress, match="llm.attacker.example resolves to"),
        ):
            url_check("https://llm.attacker.example/v1")

    # One public and one private answer: refused as a whole (which one a client picks is not ours to predict).
    def both(host, port, type=0, **kwargs):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.1", port)),
        ]

    with override_resolver(both), pytest.raises(BlockedAddress, match="10.0.0.1 is a private address"):
        url_check("https://mixed.example/v1")
    with override_resolver(answers("93.184.216.34")):
        url_check("https://llm.example.org/v1")  # public: fine


def test_it_opens_only_the_ranges_an_admin_allows():
    allowed = parse_networks("10.20.0.0/16\n# the lab cluster\nfd00::/8")
    assert address_problem("10.20.3.4", allowed) is None
    assert address_problem("fd00::5", allowed) is None
    assert "private" in address_problem("10.21.0.1", allowed)
    assert "loopback" in address_problem("127.0.0.1", allowed)
    with override_resolver(answers("10.20.3.4")):
        assert checked_addresses("gpu.lab", 8000, allowed) == ["10.20.3.4"]
    with pytest.raises(ValueError, match=r"entry 1 \('10.20.0.0/33'\) is not an IP range"):
        parse_networks("10.20.0.0/33")


def test_it_refuses_malformed_urls_and_credentials_in_them():
    for url, message in [
        ("ftp://example.org/", "http:// or https://"),
        ("http://user:pw@example.org/v1", "must not carry a user name or password"),
        ("http:///v1", "has no host"),
        ("http://example.org:99999/", "not a valid URL"),
    ]:
        with pytest.raises(ValueError, match=message):
            url_check(url)


def _guarded(url: str, allowed: tuple[str, ...] = ()) -> Endpoint:
    return Endpoint(provider="compat", name="theirs", base_url=url, api_key=Secret(""), guard=Guard(allowed=allowed))


def test_it_refuses_a_rebinding_name_at_connect_time_and_nothing_reaches_the_listener(settings):
    """The form saw a public address; the worker's lookup answers 127.0.0.1: the connect is refused."""
    settings.LLM_MAX_RETRIES = 0
    with Listener() as listener:
        rebinding = answers("93.184.216.34", "127.0.0.1")
        with override_resolver(rebinding):
            url_check(f"http://rebind.attacker.example:{listener.port}/v1")  # first answer: public, accepted
            with pytest.raises(ProviderError, match="rebind.attacker.example resolves to 127.0.0.1 is a loopback"):
                complete(
                    endpoint=_guarded(f"http://rebind.attacker.example:{listener.port}/v1"), model="m", messages=HI
                )
        # Literal spellings are refused at connect time too, whatever got them past a form.
        for host in ("127.0.0.1", "2130706433", "0x7f000001", "[::ffff:127.0.0.1]"):
            with pytest.raises(ProviderError, match="refused to connect"):
                complete(endpoint=_guarded(f"http://{host}:{listener.port}/v1"), model="m", messages=HI)
        assert listener.requests == []


def test_it_connects_to_the_checked_address_when_the_admin_allows_its_range(settings):
    """Pinning: the socket goes to the address that was checked, and the Host header stays the name."""
    settings.LLM_MAX_RETRIES = 0
    with Listener(text="hello from the lab") as listener:
        with override_resolver(answers("127.0.0.1")):
            endpoint = _guarded(f"http://llm.lab.example:{listener.port}/v1", allowed=("127.0.0.0/8",))
            assert complete(endpoint=endpoint, model="m", messages=HI).text == "hello from the lab"
        (request,) = listener.requests
        assert request["path"] == "/v1/chat/completions"
        assert request["headers"]["host"] == f"llm.lab.example:{listener.port}"
        assert "authorization" not in request["headers"]  # no key of its own: none at all


def test_it_does_not_follow_a_redirect_into_the_private_network(settings):
    """A public endpoint answering 307 to http://127.0.0.1/ gets an error, not a second request."""
    settings.LLM_MAX_RETRIES = 0
    from benchmark.llm.transport import Response, override_transport

    seen = []

    def redirector(request):
        seen.append(str(request.url))
        return Response(307, headers={"location": "http://127.0.0.1:9/steal"})

    with override_resolver(answers("93.184.216.34")), override_transport(redirector):
        with pytest.raises(ProviderError, match=r"HTTP 307"):
            complete(endpoint=_guarded("https://llm.example.org/v1"), model="m", messages=HI)
    assert seen == ["https://llm.example.org/v1/chat/completions"]
