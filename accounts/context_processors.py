from django.conf import settings
from django.http import HttpRequest

from accounts.roles import is_admin, is_researcher, is_reviewer


def roles(request: HttpRequest) -> dict[str, bool | int]:
    user = request.user
    return {
        "user_is_admin": is_admin(user),
        "user_is_researcher": is_researcher(user),
        "user_is_reviewer": is_reviewer(user) and not is_researcher(user),
        # Where the page opens its websockets (static/js/socket.js): 0 is the page's own host and port.
        "websocket_port": settings.WEBSOCKET_PORT,
    }
