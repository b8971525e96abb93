"""The conformance protocol's transport: JSON lines over an implementation's stdin and stdout.

One request per line, one answer per line, the request's `tag` echoed back. Lines are ASCII
JSON (a lone surrogate in a prompt travels as its `\\ud800` escape) and read as JavaScript's
`JSON.parse` reads them. `serve` answers with schedlog's own implementation; `Implementation`
drives another one and turns a crash, a silence or a malformed answer into `ProtocolError`.
"""

from __future__ import annotations

import json
import math
import os
import select
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import IO, Any

from invariant.conformance import Answer, answer
from invariant.jsvalue import json_type
from replay.lines.jsonline import JsonLineError, parse_header_line, parse_json_line

SEP = (",", ":")
"""Compact JSON, as JavaScript's JSON.stringify writes it."""
STDERR_LINES = 20
STDERR_CHARS = 500
"""What a protocol error quotes of the implementation's stderr: its last lines, each cut."""
INTERNAL_ERROR = "internal_error"
"""The code of a request schedlog itself failed to answer (a bug to report, never a traceback)."""


def request_line(request: Mapping[str, Any], tag: object = None) -> str:
    """The request as one protocol line (tag first, ASCII, no newline)."""
    return json.dumps({"tag": tag, **request} if tag is not None else dict(request), ensure_ascii=True, separators=SEP)


def safe_answer(request: object) -> Answer:
    """schedlog's answer; an exception of its own becomes an `internal_error` answer."""
    try:
        return answer(request)
    except Exception as err:  # the server must answer every line; the error names the bug
        return {"ok": False, "code": INTERNAL_ERROR, "message": f"{type(err).__name__}: {err}"}


READ_PIECE = 1 << 20
"""The most read of an implementation's answers at a time."""
MAX_LINE = 64 << 20
"""The longest request or answer line read (64 MiB, far beyond any case's): a longer one is
refused as a whole (`bad_request`, or a protocol error from an implementation), never held."""


def _refusal(tag: str | None, code: str, message: str) -> str:
    return json.dumps({"tag": tag, "ok": False, "code": code, "message": message}, ensure_ascii=True, separators=SEP)


def answer_line(line: bytes) -> str:
    """The answer line (with the request's tag) to one request line. The tag must be a string
    (or absent: null); any other is refused with tag null, so that every answer is JSON
    whatever a request holds (a nested or non-finite tag would not be)."""
    try:
        request: object = parse_header_line(line)
    except JsonLineError as err:
        return _refusal(None, "bad_request", f"not JSON: {err}")
    tag = request.get("tag") if isinstance(request, dict) else None
    if tag is not None and not isinstance(tag, str):
        return _refusal(None, "bad_request", f"tag must be a string, got {json_type(tag)}")
    reply = safe_answer(request)
    try:
        return json.dumps({"tag": tag, **reply}, ensure_ascii=True, separators=SEP, allow_nan=False)
    except (ValueError, RecursionError) as err:  # an answer echoing what JSON cannot hold
        return _refusal(tag, INTERNAL_ERROR, f"the answer cannot be written as JSON: {type(err).__name__}")


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer request lines until end of input, each answer flushed as it is written; a line
    longer than MAX_LINE is read past in pieces and refused."""
    while line := stdin.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while (rest := stdin.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            reply = _refusal(None, "bad_request", f"the request line is longer than {MAX_LINE:,} bytes")
        elif not line.strip():
            continue
        else:
            reply = answer_line(line)
        stdout.write(reply.encode("ascii") + b"\n")
        stdout.flush()


class ProtocolError(Exception):
    """The implementation broke the protocol: it exited, fell silent or answered malformed."""


AHEAD = 32
"""Requests written ahead of the answer awaited (`Implementation.answers`): the implementation
reads the next ones while schedlog judges an answer, so neither side sleeps on the other for
every case."""


@dataclass(frozen=True)
class _Asked:
    """A request written or queued and not yet answered: its tag, when it was queued, and where
    its bytes end in everything queued."""

    tag: str
    queued_at: float
    end: int


class Implementation:
    """An implementation under test, started from COMMAND (split as a POSIX shell would).

    The asking thread writes the requests and reads the answers itself, polling each pipe for
    the time left; one thread drains stderr. (A thread per request cost most of a conformance
    run's CPU.) Answers come in the order asked, each within `timeout` of the later of the
    previous answer and its own request."""

    def __init__(self, command: str, timeout: float = 30.0) -> None:
        self.command = command
        self.timeout = timeout
        try:
            argv = shlex.split(command)
        except ValueError as err:
            raise ProtocolError(f"cannot parse the command: {err}") from None
        if not argv:
            raise ProtocolError("the command is empty")
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as err:
            raise ProtocolError(f"cannot start {argv[0]}: {err.strerror or err}") from None
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in, self._out = self.process.stdin.fileno(), self.process.stdout.fileno()
        os.set_blocking(self._in, False)  # our ends only: no write or read blocks past a deadline
        os.set_blocking(self._out, False)
        self._unsent = bytearray()
        """Request bytes queued and not yet written."""
        self._queued = self._written = 0
        """Request bytes queued and written so far."""
        self._input_closed = False
        self._waiting: deque[_Asked] = deque()
        self._early: dict[str, Answer] = {}
        """Answers read before they were asked for (a request asked while others were ahead)."""
        self._last_answer = 0.0
        self._heard = bytearray()
        """Answer bytes read and not yet taken: lines, then the start of one."""
        self._scanned = 0
        """How far `_heard` is known to hold no line end."""
        self._ended = False
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.asked = 0
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        """Keep the last STDERR_LINES lines of stderr, each cut to STDERR_CHARS (read in pieces,
        so that a writer of endless stderr neither blocks nor fills memory)."""
        stderr = self.process.stderr
        assert stderr is not None
        partial = b""
        while piece := os.read(stderr.fileno(), 1 << 16):
            *lines, partial = (partial + piece).split(b"\n")
            for line in lines[-STDERR_LINES:]:
                self.stderr.append(line[:STDERR_CHARS].decode("utf-8", "replace").rstrip())
            partial = partial[: STDERR_CHARS + 1]
        if partial:
            self.stderr.append(partial[:STDERR_CHARS].decode("utf-8", "replace").rstrip())

    def _gone(self, what: str) -> ProtocolError:
        try:
            status = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        tail = "; its last stderr: " + " | ".join(self.stderr) if self.stderr else ""
        exited = f" (exit status {status})" if status is not None else ""
        return ProtocolError(f"{what}{exited}{tail}")

    def ask(self, request: Mapping[str, Any]) -> Answer:
        """Send one request; its answer, or ProtocolError. `timeout` bounds the whole exchange:
        writing the request (an implementation that does not read blocks the pipe) and reading
        all of its answer line."""
        return self._take(self._queue(request))

    def answers(self, requests: Iterable[Mapping[str, Any]]) -> Iterator[Answer]:
        """The answer to each request in turn (ProtocolError at the first that has none), with
        up to AHEAD more requests written while it is awaited. `ask` may be called between two
        answers: the answers to the requests ahead of it are kept."""
        left = iter(requests)
        tags = deque(map(self._queue, islice(left, AHEAD)))
        while tags:
            found = self._take(tags.popleft())
            tags.extend(map(self._queue, islice(left, 1)))
            yield found

    def _queue(self, request: Mapping[str, Any]) -> str:
        self.asked += 1
        tag = str(self.asked)
        data = (request_line(request, tag) + "\n").encode("ascii")
        self._unsent += data
        self._queued += len(data)
        self._waiting.append(_Asked(tag, time.monotonic(), self._queued))
        self._write()
        return tag

    def _take(self, tag: str) -> Answer:
        while (found := self._early.pop(tag, None)) is None:
            self._next_answer()
        return found

    def _next_answer(self) -> None:
        """Read the answer to the first request waiting for one (writing the queued ones
        meanwhile), checked, into `_early`."""
        head = self._waiting[0]
        deadline = max(head.queued_at, self._last_answer) + self.timeout
        while (line := self._line(head)) is None:
            ready = select.poll()
            if self._unsent and not self._input_closed:
                ready.register(self._in, select.POLLOUT)
            ready.register(self._out, select.POLLIN)
            left = deadline - time.monotonic()
            if left <= 0 or not ready.poll(math.ceil(left * 1000)):
                if self._written < head.end:
                    raise ProtocolError(f"the request was not read within {self.timeout:g} s")
                raise ProtocolError(f"no answer within {self.timeout:g} s")
            self._write()
            self._hear()
        self._waiting.popleft()
        self._last_answer = time.monotonic()
        self._early[head.tag] = self._checked(line, head.tag)

    def _write(self) -> None:
        """Write what the pipe takes of the queued requests (their reader gone, none is)."""
        if not self._unsent or self._input_closed:
            return
        try:
            sent = os.write(self._in, self._unsent)
        except BlockingIOError:
            return
        except OSError:  # EPIPE and the like: the answers already written may still be read
            self._input_closed = True
            return
        del self._unsent[:sent]
        self._written += sent

    def _hear(self) -> None:
        """Take what the implementation wrote, if anything (its end of output sets `_ended`)."""
        if self._ended:
            return
        try:
            piece = os.read(self._out, READ_PIECE)
        except BlockingIOError:
            return
        if piece:
            self._heard += piece
        else:
            self._ended = True

    def _line(self, head: _Asked) -> bytes | None:
        """The next answer line heard (the last may end the output without a line end), None
        while it is still to come; one longer than MAX_LINE is an error, never held whole."""
        end = self._heard.find(b"\n", self._scanned)
        if end < 0 and not (self._ended and self._heard):
            self._scanned = len(self._heard)
            if self._scanned > MAX_LINE:
                raise ProtocolError(f"an answer line is longer than {MAX_LINE:,} bytes")
            if self._input_closed and self._written < head.end:
                raise self._gone("the implementation closed its input")
            if self._ended:
                raise self._gone("the implementation exited without answering")
            return None
        end = len(self._heard) - 1 if end < 0 else end
        line = bytes(self._heard[: end + 1])
        del self._heard[: end + 1]
        self._scanned = 0
        return line

    @staticmethod
    def _checked(line: bytes, tag: str) -> Answer:
        try:
            value = parse_json_line(line)
        except JsonLineError as err:
            raise ProtocolError(f"the answer is not JSON ({err}): {line[:200]!r}") from None
        if not isinstance(value, dict):
            raise ProtocolError(f"the answer is not a JSON object: {line[:200]!r}")
        if value.get("tag") != tag:
            raise ProtocolError(f"the answer carries tag {value.get('tag')!r}, not {tag!r}")
        if type(value.get("ok")) is not bool:
            raise ProtocolError("the answer has no boolean `ok`")
        if value["ok"] is False and type(value.get("code")) is not str:
            raise ProtocolError("a refusal has no string `code`")
        return value

    def close(self) -> None:
        """End the implementation's input and wait for it (killed if it lingers, or at once
        when a request is left unanswered: it timed out, broke the protocol or was left)."""
        if self._waiting:  # a request unanswered: it is broken or was left, and not waited for
            self.process.kill()
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> Implementation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
