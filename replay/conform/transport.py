"""The conformance protocol's transport: JSON lines over an implementation's stdin and stdout.

One request per line, one answer per line, the request's `tag` echoed back. Lines are ASCII
JSON (a lone surrogate in a prompt travels as its `\\ud800` escape) and read as JavaScript's
`JSON.parse` reads them. `serve` answers with schedlog's own implementation; `Implementation`
drives another one and turns a crash, a silence or a malformed answer into `ProtocolError`.
"""

from __future__ import annotations

import json
import queue
import shlex
import subprocess
import threading
from collections import deque
from collections.abc import Mapping
from typing import IO, Any

from invariant.conformance import Answer, answer
from replay.logs.jsonline import JsonLineError, parse_header_line, parse_json_line

SEP = (",", ":")
"""Compact JSON, as JavaScript's JSON.stringify writes it."""
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


def answer_line(line: bytes) -> str:
    """The answer line (with the request's tag) to one request line."""
    try:
        request: object = parse_header_line(line)
    except JsonLineError as err:
        refusal = {"tag": None, "ok": False, "code": "bad_request", "message": f"not JSON: {err}"}
        return json.dumps(refusal, ensure_ascii=True, separators=SEP)
    tag = request.get("tag") if isinstance(request, dict) else None
    return json.dumps({"tag": tag, **safe_answer(request)}, ensure_ascii=True, separators=SEP)


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """Answer request lines until end of input, each answer flushed as it is written."""
    for line in stdin:
        if line.strip():
            stdout.write(answer_line(line).encode("ascii") + b"\n")
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
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
            )
        except OSError as err:
            raise ProtocolError(f"cannot start {argv[0]}: {err.strerror or err}") from None
        self.answers: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: deque[str] = deque(maxlen=20)
        self.asked = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.put(line)
        self.answers.put(None)

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line.decode("utf-8", "replace").rstrip())

    def _gone(self, what: str) -> ProtocolError:
        try:
            status = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        tail = "; its last stderr: " + " | ".join(self.stderr) if self.stderr else ""
        exited = f" (exit status {status})" if status is not None else ""
        return ProtocolError(f"{what}{exited}{tail}")

    def ask(self, request: Mapping[str, Any]) -> Answer:
        """Send one request; its answer, or ProtocolError."""
        self.asked += 1
        tag = str(self.asked)
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(request_line(request, tag).encode("ascii") + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._gone("the implementation closed its input") from None
        try:
            line = self.answers.get(timeout=self.timeout)
        except queue.Empty:
            raise ProtocolError(f"no answer within {self.timeout:g} s") from None
        if line is None:
            raise self._gone("the implementation exited without answering")
        return self._checked(line, tag)

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
        """End the implementation's input and wait for it (killed if it lingers)."""
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
