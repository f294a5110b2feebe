"""Endpoint keys at rest: encrypted under a key derived from SECRET_KEY, bound to their row, and a
wrong SECRET_KEY says so plainly instead of sending garbage."""

from __future__ import annotations

import pytest
from django.db import connection

from benchmark.llm import ConfigurationError, Secret
from benchmark.llm.endpoints import connection_for, key_status
from benchmark.llm.keys import KeyDecryptError, decrypt, encrypt
from benchmark.models import ModelEndpoint

pytestmark = pytest.mark.django_db

KEY = "sk-live-PLAINTEXT-4f9a2c7e1b"


def stored(name: str = "vault", key: str = KEY) -> ModelEndpoint:
    endpoint = ModelEndpoint(name=name, provider="openai", key_source="stored", offers=[{"model": "gpt-4o"}])
    endpoint.set_key(key)
    endpoint.full_clean()
    endpoint.save()
    return endpoint


def test_it_keeps_no_plaintext_in_the_database_row():
    endpoint = stored()
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM benchmark_modelendpoint WHERE id = %s", [endpoint.pk])
        row = " ".join(str(value) for value in cursor.fetchone())
    assert KEY not in row and "PLAINTEXT" not in row
    assert endpoint.key_ciphertext.startswith("v1$") and endpoint.key_saved_at is not None
    assert connection_for(endpoint=endpoint, model="gpt-4o")[0].api_key.reveal() == KEY


def test_it_encrypts_each_save_afresh_and_binds_the_ciphertext_to_its_endpoint():
    first, second = encrypt(KEY, context="a"), encrypt(KEY, context="a")
    assert first != second  # a fresh nonce each time: equal keys are not visible as equal rows
    assert decrypt(first, context="a").reveal() == KEY
    with pytest.raises(KeyDecryptError):
        decrypt(first, context="b")  # copied onto another endpoint's row: does not decrypt
    one, other = stored("one"), stored("other", "sk-other-key-0000")
    ModelEndpoint.objects.filter(pk=other.pk).update(key_ciphertext=one.key_ciphertext)
    other.refresh_from_db()
    with pytest.raises(ConfigurationError, match="cannot be decrypted"):
        connection_for(endpoint=other, model="gpt-4o")


def test_it_says_plainly_that_a_key_saved_under_another_secret_key_cannot_be_decrypted(settings):
    endpoint = stored()
    settings.SECRET_KEY = "a-completely-different-secret-key-of-enough-length"
    ready, words = key_status(endpoint)
    assert not ready and "cannot be decrypted with this server's SECRET_KEY" in words
    assert "Enter the key again" in words and KEY not in words
    with pytest.raises(ConfigurationError, match="saved under another SECRET_KEY"):
        connection_for(endpoint=endpoint, model="gpt-4o")
    with pytest.raises(KeyDecryptError):
        decrypt(endpoint.key_ciphertext, context=str(endpoint.code), secret_key="yet-another-secret-key-long-enough")


def test_it_never_prints_or_pickles_a_secret():
    import pickle

    secret = Secret(KEY)
    assert KEY not in repr(secret) and KEY not in str(secret) and KEY not in f"{secret}"
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(secret)
    assert secret.redact(f"Incorrect API key provided: {KEY}.") == "Incorrect API key provided: [redacted key]."
    assert KEY not in repr(connection_for(endpoint=stored(), model="gpt-4o"))


def test_it_refuses_a_stored_source_without_a_key_and_env_names_of_referees_own_secrets():
    from django.core.exceptions import ValidationError

    empty = ModelEndpoint(name="empty", provider="openai", key_source="stored", offers=[{"model": "gpt-4o"}])
    with pytest.raises(ValidationError, match="enter the key to store"):
        empty.full_clean()
    for name in ("SECRET_KEY", "DATABASE_URL", "EMAIL_HOST_PASSWORD", "DJANGO_SECRET"):
        env = ModelEndpoint(
            name="env", provider="openai", key_source="env", key_env_var=name, offers=[{"model": "gpt-4o"}]
        )
        with pytest.raises(ValidationError, match="one of Referee's own secrets"):
            env.full_clean()
