import pytest


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Personas get passwords; PBKDF2 at production strength costs ~0.35 s per user, which these tests do not test."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
