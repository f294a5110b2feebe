"""The invitations list gives an expiry only to a pending invitation: a revoked or used one does not
read "revoked ... until <date>"."""

from __future__ import annotations

import pytest

from accounts.roles import REVIEWER
from accounts.services import invitation_create, invitation_revoke

pytestmark = pytest.mark.django_db


def test_it_shows_no_expiry_for_a_revoked_invitation(admin_user, client_for):
    pending = invitation_create(email="p@example.org", roles=[REVIEWER], send=False).invitation
    revoked = invitation_create(email="r@example.org", roles=[REVIEWER], send=False).invitation
    invitation_revoke(invitation=revoked, by=admin_user)
    page = client_for(admin_user).get("/review/invitations/").content.decode()
    rows = {email: page.split(email, 1)[1].split("</tr>", 1)[0] for email in ("p@example.org", "r@example.org")}
    assert pending.expires_at.strftime("%Y-%m-%d") in rows["p@example.org"]
    assert revoked.expires_at.strftime("%Y-%m-%d") not in rows["r@example.org"] and "revoked" in rows["r@example.org"]
