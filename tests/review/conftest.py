import pytest


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Stored figures go to a per-test folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT
