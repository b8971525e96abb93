"""The conformance protocol's transport: JSON lines over an implementation's stdin and stdout.

One request per line, one answer per line, the request's `tag` echoed back. Lines are ASCII
JSON (a lone surrogate in a prompt travels as its `\\ud800` escape) and read as JavaScript's
`JSON.parse` reads them. `serve` answers with schedlog's own implementation; `Implementation`
drives another one and turns a crash, a silence or a malformed answer into `ProtocolError`.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import IO, Any

from invariant.conformance import Answer, answer
from invariant.jsvalue import json_type
from replay.logs.jsonline import JsonLineError, parse_header_line, parse_json_line

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


class Implementation:
    """An implementation under test, started from COMMAND (split as a POSIX shell would)."""

    def __init__(self, command: str, timeout: float = 30.0) -> None:
        self.command = command
        self.timeout = timeout
        try:
            argv = shlex.split(command)
        except ValueError as err:
            raise ProtocolError(f"cannot parse the command: {err}") from None
        if not argv:
            raise ProtocolError("the command is empty")
        try:  # buffered pipes: an unbuffered one is read a byte per system call (~3 MB/s)
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as err:
            raise ProtocolError(f"cannot start {argv[0]}: {err.strerror or err}") from None
        self.answers: queue.Queue[bytes | ProtocolError | None] = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.asked = 0
        self._writer: threading.Thread | None = None
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        """Answer lines into `answers`; one longer than MAX_LINE is an error, read past."""
        stdout = self.process.stdout
        assert stdout is not None
        while line := stdout.readline(MAX_LINE + 1):
            if len(line) > MAX_LINE and not line.endswith(b"\n"):
                self.answers.put(ProtocolError(f"an answer line is longer than {MAX_LINE:,} bytes"))
                while (rest := stdout.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
            else:
                self.answers.put(line)
        self.answers.put(None)

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
        self.asked += 1
        tag = str(self.asked)
        deadline = time.monotonic() + self.timeout
        sent: list[BaseException | None] = []
        self._writer = threading.Thread(target=self._send, args=(request_line(request, tag), sent), daemon=True)
        self._writer.start()
        self._writer.join(self.timeout)
        if not sent:
            raise ProtocolError(f"the request was not read within {self.timeout:g} s")
        if sent[0] is not None:
            raise self._gone("the implementation closed its input")
        try:
            line = self.answers.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise ProtocolError(f"no answer within {self.timeout:g} s") from None
        if line is None:
            raise self._gone("the implementation exited without answering")
        if isinstance(line, ProtocolError):
            raise line
        return self._checked(line, tag)

    def _send(self, line: str, sent: list[BaseException | None]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode("ascii") + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as err:
            sent.append(err)
            return
        sent.append(None)

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
        when it never read its last request: that write still holds the pipe)."""
        if self._writer is not None and self._writer.is_alive():
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
