"""Websocket viewers spread over several processes, each with its own asyncio loop (issue 20).

bench/stream_latency.py used to run every viewer as a thread of the process that also appends the
steps: 500 threads and the appender shared one GIL, so a step's latency included the wait for the
bench's own threads. Here the viewers live in `procs` child processes (spawned, so none inherits
the appender's database connections or threads); each child runs its share as asyncio tasks on
raw RFC 6455 sockets, stamps a step the moment its frame is read, and tells the parent when all of
its viewers of a run have a step, so that the appender keeps one step per run in flight, as a run
produces them.

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


async def _connect(port: int, path: str, cookie: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 22)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://127.0.0.1\r\n"
            f"Cookie: {cookie}\r\n\r\n"
        ).encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise ConnectionError(f"websocket refused: {head[:80]!r}")
    return reader, writer


async def _receive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
    """The next text message; answers pings on the way."""
    message, opcode = b"", 0
    while True:
        first, second = await reader.readexactly(2)
        size = second & 0x7F
        if size == 126:
            (size,) = struct.unpack(">H", await reader.readexactly(2))
        elif size == 127:
            (size,) = struct.unpack(">Q", await reader.readexactly(8))
        payload = await reader.readexactly(size)
        kind = first & 0x0F
        if kind == 0x9:
            writer.write(_frame(payload, opcode=0xA))
            continue
        if kind == 0x8:
            raise ConnectionError(f"closed by the server: {payload[:80]!r}")
        opcode = opcode or kind
        message += payload
        if first & 0x80:
            return message


async def _child_main(conn: Connection, port: int, cookie: str, assignments: list[tuple[int, str]]) -> None:
    loop = asyncio.get_running_loop()
    per_slot = Counter(slot for slot, _path in assignments)
    counts: dict[tuple[int, int], int] = defaultdict(int)
    received: list[dict[int, int]] = [{} for _ in assignments]
    opened = 0
    # Few handshakes at a time: daphne drops a socket its app has not accepted within 5 s, and on a
    # loaded machine 50 concurrent handshakes (each a session lookup) take longer than that.
    handshakes = asyncio.Semaphore(4)
    writers: list[asyncio.StreamWriter] = []

    def send(*message: object) -> None:
        conn.send(message)

    async def view(n: int, slot: int, path: str) -> None:
        nonlocal opened
        got = received[n]
        try:
            async with handshakes:
                reader, writer = await _connect(port, path, cookie)
            writers.append(writer)
            writer.write(_frame(json.dumps({"after": 0}).encode()))
            while True:
                raw = await _receive(reader, writer)
                stamp = now_ns()  # before decoding: the JSON parse is the bench's cost, not the server's
                message = json.loads(raw)
                if message["type"] == "status":
                    opened += 1
                    if opened == len(assignments):
                        send("ready")
                elif message["type"] == "steps":
                    for step in message["steps"]:
                        index = step["index"]
                        if index not in got:
                            got[index] = stamp
                            counts[(slot, index)] += 1
                            if counts[(slot, index)] == per_slot[slot]:
                                send("got", slot, index)
        except asyncio.CancelledError:
            raise
        except (OSError, ConnectionError, ValueError, asyncio.IncompleteReadError) as exc:
            send("error", f"viewer of run {slot}: {type(exc).__name__}: {exc}")

    stop = asyncio.Event()
    threading.Thread(target=lambda: (conn.recv(), loop.call_soon_threadsafe(stop.set)), daemon=True).start()
    tasks = [asyncio.create_task(view(n, slot, path)) for n, (slot, path) in enumerate(assignments)]
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for writer in writers:
        writer.close()
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
