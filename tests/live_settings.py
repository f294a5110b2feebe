"""The settings of the stack `live_url` serves: the platform's own, with two changes for the test
session: its fast password hasher (tests/conftest.py pytest_configure), so that users the tests
create log in through the login form, and the session's media folder (REFEREE_LIVE_MEDIA_ROOT), so
that figures the tests store are the ones the stack serves."""

import os
from pathlib import Path

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
if os.environ.get("REFEREE_LIVE_MEDIA_ROOT"):
    MEDIA_ROOT = Path(os.environ["REFEREE_LIVE_MEDIA_ROOT"])
