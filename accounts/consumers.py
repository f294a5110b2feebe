from channels.generic.websocket import AsyncJsonWebsocketConsumer

from accounts.progress import user_group


class UserEventsConsumer(AsyncJsonWebsocketConsumer):
    """Relays a signed-in user's own notifications; anonymous connections are refused."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.group = user_group(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def user_event(self, message: dict) -> None:
        await self.send_json(message["event"])
