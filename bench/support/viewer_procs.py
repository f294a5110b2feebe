"""Websocket viewers spread over several processes, each with its own asyncio loop (issue 20).

bench/stream_latency.py used to run every viewer as a thread of the process that also appends the
steps: 500 threads and the appender shared one GIL, so a step's latency included the wait for the
bench's own threads. Here the viewers live in `procs` child processes (spawned, so none inherits
the appender's database connections or threads); each child runs its share as asyncio tasks on
raw RFC 6455 sockets (asyncio protocols), stamps a step the moment its frame's last bytes are read
(decoding it afterwards), and tells the parent when all of its viewers of a run have a step, so
that the appender keeps one step per run in flight, as a run produces them.

Timestamps: `now_ns()` is CLOCK_MONOTONIC, one clock for every process of a Linux machine, so a
child's receipt time minus the parent's append start is an honest latency.
"""

from __future__ import annotations

import asyncio
import base64
import json
import multiprocessing
import os
import struct
import threading
import time
from collections import Counter, defaultdict
from multiprocessing.connection import Connection


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def _frame(data: bytes, opcode: int = 0x1) -> bytes:
    """A masked client frame (clients must mask, RFC 6455 5.3)."""
    mask = os.urandom(4)
    size = len(data)
    head = bytes([0x80 | opcode])
    head += bytes([0x80 | size]) if size < 126 else bytes([0xFE]) + struct.pack(">H", size)
    key = int.from_bytes((mask * (size // 4 + 1))[:size], "big")
    body = (int.from_bytes(data, "big") ^ key).to_bytes(size, "big") if size else b""
    return head + mask + body


LIVE_STEP = b'{"type": "steps", "steps": [{"index": '  # benchmark.runs.progress.steps_frame of one step
CHECK_EVERY = 16


class _Viewer(asyncio.Protocol):
    """One raw RFC 6455 client. A frame is stamped in `data_received`, the moment its last bytes
    are read from the socket, and decoded later (call_soon): this process reads 25-250 sockets,
    and decoding one 6.5 KiB step as JSON before reading the next socket would charge the bench's
    own parsing to the next viewer's latency."""

    def __init__(self, path: str, port: int, cookie: str, on_message) -> None:
        self.request = (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\nSec-WebSocket-Version: 13\r\n"
            f"Origin: http://127.0.0.1\r\nCookie: {cookie}\r\n\r\n"
        ).encode()
        self.on_message = on_message
        self.upgraded: asyncio.Future = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future = asyncio.get_running_loop().create_future()
        self.buffer = bytearray()
        self.parts = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc) -> None:
        for future in (self.upgraded, self.closed):
            if not future.done():
                future.set_exception(ConnectionError(f"connection lost: {exc}"))

    def data_received(self, data: bytes) -> None:
        stamp = now_ns()
        self.buffer += data
        if not self.upgraded.done():
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[: end + 4])
            del self.buffer[: end + 4]
            if not head.startswith(b"HTTP/1.1 101"):
                self.upgraded.set_exception(ConnectionError(f"websocket refused: {head[:80]!r}"))
                return
            self.upgraded.set_result(None)
        loop = asyncio.get_running_loop()
        while len(self.buffer) >= 2:
            first, second = self.buffer[0], self.buffer[1]
            size, offset = second & 0x7F, 2
            if size == 126:
                if len(self.buffer) < 4:
                    return
                (size,), offset = struct.unpack_from(">H", self.buffer, 2), 4
            elif size == 127:
                if len(self.buffer) < 10:
                    return
                (size,), offset = struct.unpack_from(">Q", self.buffer, 2), 10
            if len(self.buffer) < offset + size:
                return
            payload = bytes(self.buffer[offset : offset + size])
            del self.buffer[: offset + size]
            kind = first & 0x0F
            if kind == 0x9:
                self.transport.write(_frame(payload, opcode=0xA))
                continue
            if kind == 0x8:
                if not self.closed.done():
                    self.closed.set_exception(ConnectionError(f"closed by the server: {payload[:80]!r}"))
                continue
            self.parts += payload
            if first & 0x80:
                message, self.parts = self.parts, b""
                loop.call_soon(self.on_message, message, stamp)


async def _child_main(conn: Connection, port: int, cookie: str, assignments: list[tuple[int, str]]) -> None:
    loop = asyncio.get_running_loop()
    per_slot = Counter(slot for slot, _path in assignments)
    counts: dict[tuple[int, int], int] = defaultdict(int)
    received: list[dict[int, int]] = [{} for _ in assignments]
    opened = 0
    # Few handshakes at a time: daphne drops a socket its app has not accepted within 5 s, and on a
    # loaded machine 50 concurrent handshakes (each a session lookup) take longer than that.
    handshakes = asyncio.Semaphore(4)
    transports: list[asyncio.Transport] = []

    def send(*message: object) -> None:
        conn.send(message)

    def handler(n: int, slot: int):
        got = received[n]

        def on_message(raw: bytes, stamp: int) -> None:
            nonlocal opened
            if ready[n] and raw.startswith(LIVE_STEP) and raw.endswith(b"}]}"):
                # A live step (one per frame, "index" its first key): its index is read from the
                # head, and one frame in CHECK_EVERY is decoded in full, so that the bench's own
                # JSON parsing (~50 us per 6.5 KiB step) does not take the CPU the server needs.
                end = raw.find(b",", len(LIVE_STEP))
                index = int(raw[len(LIVE_STEP) : end])
                checked[n] += 1
                if checked[n] % CHECK_EVERY == 0:
                    steps = json.loads(raw)["steps"]
                    if steps[0]["index"] != index:
                        send("error", f"viewer of run {slot}: frame of step {steps[0]['index']} read as {index}")
                    if len(steps) > 1:
                        send("error", f"viewer of run {slot}: {len(steps)} steps in a frame read as one")
                record(index, stamp)
                return
            try:
                message = json.loads(raw)
            except ValueError as exc:
                send("error", f"viewer of run {slot}: not JSON: {exc}")
                return
            if message["type"] == "status":
                if not ready[n]:  # its first status: caught up, relaying live from now on
                    ready[n] = True
                    opened += 1
                    if opened == len(assignments):
                        send("ready")
            elif message["type"] == "steps":
                for step in message["steps"]:
                    record(step["index"], stamp)

        def record(index: int, stamp: int) -> None:
            if index not in got:
                got[index] = stamp
                counts[(slot, index)] += 1
                if counts[(slot, index)] == per_slot[slot]:
                    send("got", slot, index)

        return on_message

    ready = [False] * len(assignments)
    checked = [0] * len(assignments)

    async def view(n: int, slot: int, path: str) -> None:
        try:
            async with handshakes:
                transport, viewer = await loop.create_connection(
                    lambda: _Viewer(path, port, cookie, handler(n, slot)), "127.0.0.1", port
                )
                transports.append(transport)
                await viewer.upgraded
            transport.write(_frame(json.dumps({"after": 0}).encode()))
            await viewer.closed
        except asyncio.CancelledError:
            raise
        except (OSError, ConnectionError, ValueError) as exc:
            send("error", f"viewer of run {slot}: {type(exc).__name__}: {exc}")

    stop = asyncio.Event()
    threading.Thread(target=lambda: (conn.recv(), loop.call_soon_threadsafe(stop.set)), daemon=True).start()
    tasks = [asyncio.create_task(view(n, slot, path)) for n, (slot, path) in enumerate(assignments)]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for transport in transports:
        transport.close()
    send("done", [(slot, received[n]) for n, (slot, _path) in enumerate(assignments)])


def _child(conn: Connection, port: int, cookie: str, assignments: list[tuple[int, str]]) -> None:
    asyncio.run(_child_main(conn, port, cookie, assignments))


class ProcessViewers:
    """`per_run` viewers of each run in `codes`, dealt round-robin over `procs` processes."""

    def __init__(self, *, port: int, cookie: str, codes: list[str], per_run: int, procs: int) -> None:
        procs = max(1, min(procs, len(codes) * per_run))
        shares: list[list[tuple[int, str]]] = [[] for _ in range(procs)]
        for n in range(len(codes) * per_run):
            slot = n // per_run
            shares[n % procs].append((slot, f"/ws/runs/{codes[slot]}/"))
        self.need = Counter(slot for share in shares for slot in {s for s, _ in share})  # processes per run
        self.got: Counter[tuple[int, int]] = Counter()
        self.ready = 0
        self.done: list[list[tuple[int, dict[int, int]]]] = []
        self.errors: list[str] = []
        self.cond = threading.Condition()
        context = multiprocessing.get_context("spawn")
        self.conns, self.procs = [], []
        for share in shares:
            parent, child = context.Pipe()
            proc = context.Process(target=_child, args=(child, port, cookie, share), daemon=True)
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)
            threading.Thread(target=self._listen, args=(parent,), daemon=True).start()

    def _listen(self, conn: Connection) -> None:
        while True:
            try:
                kind, *rest = conn.recv()
            except (EOFError, OSError):
                return
            with self.cond:
                if kind == "got":
                    self.got[(rest[0], rest[1])] += 1
                elif kind == "ready":
                    self.ready += 1
                elif kind == "error":
                    self.errors.append(rest[0])
                    print(f"  ! {rest[0]}", flush=True)
                elif kind == "done":
                    self.done.append(rest[0])
                self.cond.notify_all()
            if kind == "done":
                return

    def wait_ready(self, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.ready == len(self.procs), timeout)

    def wait_for(self, slot: int, index: int, timeout: float = 5) -> bool:
        """True when every viewer of run `slot` has step `index`; False after `timeout` (counted, never hidden)."""
        with self.cond:
            return self.cond.wait_for(lambda: self.got[(slot, index)] >= self.need[slot], timeout)

    def close(self) -> list[tuple[int, dict[int, int]]]:
        """Every viewer's (run slot, {step index: receipt ns})."""
        for conn in self.conns:
            conn.send("stop")
        with self.cond:
            self.cond.wait_for(lambda: len(self.done) == len(self.procs), 60)
        for proc in self.procs:
            proc.join(timeout=10)
        return [viewer for share in self.done for viewer in share]
