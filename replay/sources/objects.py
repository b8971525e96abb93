"""Logs and Host stores in object stores (s3://, gs://, az://, any fsspec URL): found by listing a
prefix as a walk finds files in a folder, and read as a large local file is, in pieces.

- A URL names one object, or a prefix listed as a folder is walked: its logs (`*.jsonl`,
  `*.jsonl.zstd`, `*.jsonl.zst`, the current generation of each session's), and with `stores` its
  `schedule.json` (discover.chosen, the same rules). A listing gives each object's size and
  ETag (or generation), kept for the run (`info`): the verdict cache asks them, not the bodies.
- An object up to READ_CHUNK bytes is read in one request; a larger one in READ_CHUNK ranges
  (`ObjectSource`), never held whole: a Zstandard one is spooled to a temporary file as a large
  local one is (bytesource.FileSource.spooled).
- Whatever a user can get wrong (no credentials, wrong ones, a missing bucket, an endpoint that
  does not answer, a refused object) is an OSError naming the URL and the cause in words
  (`failure`): a listing's ends the run (exit 2, one line), an object's makes that object
  unreadable and the rest are judged. Requests give up in bounded time (`OPTIONS`).
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from replay.sources.bytesource import READ_CHUNK, Data, FileSource
from replay.sources.names import STORE_NAME, Skipped, chosen

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

OPTIONS: dict[str, dict[str, Any]] = {
    "s3": {"config_kwargs": {"connect_timeout": 5, "read_timeout": 60, "retries": {"max_attempts": 3}}},
}
"""What each store's client is given: an endpoint that does not answer is given up on after
three tries of five seconds, not botocore's default of a minute each."""

EXTRAS = {"s3": "s3", "s3a": "s3"}
"""The schedlog extra that installs a protocol's file system (gs://, az:// name theirs: gcsfs, adlfs)."""


@dataclass(frozen=True)
class ObjectInfo:
    """What a listing says of one object: enough to know it again without reading it."""

    url: str
    size: int
    tag: str
    """Its ETag, or its generation where the store has no ETag ("" where it has neither)."""


_KNOWN: dict[str, ObjectInfo] = {}
"""The objects this process has listed or asked about, by URL (a listing's answers, kept for
the run: asking each object again would cost a request a log)."""
_FOLDERS: dict[str, list[str]] = {}
"""The names of the objects under each "folder" (a prefix up to a slash) listed, by its URL."""


def failure(url: str, err: BaseException) -> OSError:
    """`err`, raised asking the store about `url`, as an OSError naming the URL and the cause."""
    name = type(err).__name__
    code = _client_code(err)
    if isinstance(err, ImportError):
        scheme = url.split("://", 1)[0]
        extra = EXTRAS.get(scheme)
        hint = f"pip install 'schedlog[{extra}]'" if extra else f"install the fsspec file system for {scheme}://"
        missing = getattr(errno, "ENOPKG", errno.ENOENT)  # (Linux names it; elsewhere, no such file)
        return OSError(missing, f"reading {scheme}:// needs its file system ({hint}): {err}", url)
    if name in ("NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"):
        return OSError(errno.EACCES, "no credentials for the object store (set AWS_ACCESS_KEY_ID and "
                       "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)", url)  # fmt: skip
    if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidClientTokenId", "ExpiredToken"):
        return OSError(errno.EACCES, f"the object store refused the credentials ({code})", url)
    if code == "NoSuchBucket" or "bucket does not exist" in str(err).lower():
        return OSError(errno.ENOENT, "the bucket does not exist", url)
    if name in ("EndpointConnectionError", "ConnectTimeoutError", "ConnectionClosedError", "ReadTimeoutError"):
        return OSError(errno.EHOSTUNREACH, f"the object store does not answer ({err})", url)
    if isinstance(err, PermissionError) or code in ("AccessDenied", "Forbidden", "403"):
        return OSError(errno.EACCES, "permission denied by the object store", url)
    if isinstance(err, FileNotFoundError) and code in ("", "NoSuchKey"):
        return OSError(errno.ENOENT, "no such object", url)
    if isinstance(err, FileNotFoundError):  # a 404 that names no bucket or key: the endpoint may be no S3 API
        return OSError(
            errno.ENOENT, f"the object store answered {code} Not Found (is AWS_ENDPOINT_URL an S3 API?)", url
        )
    if isinstance(err, OSError):
        return OSError(err.errno or errno.EIO, err.strerror or str(err), url)
    return OSError(errno.EIO, f"the object store failed: {name}: {err}", url)


def _client_code(err: BaseException) -> str:
    """The store's own error code (botocore's ClientError, as raised or as s3fs's cause)."""
    for e in (err, err.__cause__, err.__context__):
        response = getattr(e, "response", None)
        if isinstance(response, dict):
            return str(response.get("Error", {}).get("Code", ""))
    return ""


def file_system(url: str) -> tuple[AbstractFileSystem, str]:
    """The file system that holds `url`, and the path of `url` in it (OSError: `failure`)."""
    try:
        import fsspec

        scheme = url.split("://", 1)[0]
        fs, path = fsspec.core.url_to_fs(url, **OPTIONS.get(scheme, {}))
    except Exception as err:  # an unknown protocol, its package missing, options it refuses
        raise failure(url, err) from None
    return fs, str(path)


def listed(url: str, stores: bool = False, skipped: Skipped | None = None) -> list[str]:
    """The objects `url` names: itself where it is one object, else the logs (and with `stores`
    the Host stores) under it as a prefix, as a walk of a folder finds them, in order. Raises
    OSError (`failure`) where the store cannot be listed."""
    fs, root = file_system(url)
    scheme = url.split("://", 1)[0]
    try:
        whole = root.rstrip("/")
        found = cast(dict[str, dict[str, Any]], fs.find(whole, detail=True))
        if not found and not url.endswith("/") and fs.isfile(whole):
            found = {whole: fs.info(whole)}
    except Exception as err:
        raise failure(url, err) from None
    if list(found) == [whole]:  # the URL names one object: read it whatever its name
        return [_known(f"{scheme}://{whole}", found[whole])]
    if not found and not url.endswith("/"):  # no such object: read as a file named that is not there
        return [url]
    under = f"{scheme}://{whole}"
    for stale in [u for u in _KNOWN if u.startswith(under)]:  # (listed again: what is gone is forgotten)
        del _KNOWN[stale]
    by_folder: dict[str, list[str]] = {}
    for name in found:
        folder, _, base = name.rpartition("/")
        by_folder.setdefault(folder, []).append(base)
    urls = []
    for folder, names in by_folder.items():
        _FOLDERS[f"{scheme}://{folder}"] = names
        for base in chosen(f"{scheme}://{folder}", names, stores, skipped, _joined):
            urls.append(_known(f"{scheme}://{folder}/{base}", found[f"{folder}/{base}"]))
    return sorted(urls)  # (as a walk's files are: by the whole path)


def names_beside(url: str) -> list[str]:
    """The names of the objects in the "folder" of the object at `url` (the run's listing of it,
    else asked: one request); [] where it cannot be listed."""
    folder = url.rpartition("/")[0]
    if folder not in _FOLDERS:
        fs, path = file_system(folder)
        try:
            _FOLDERS[folder] = [str(name).rpartition("/")[2] for name in fs.ls(path, detail=False)]
        except Exception:
            return []
    return _FOLDERS[folder]


def _joined(folder: str, name: str) -> str:
    return f"{folder}/{name}"


def _known(url: str, detail: dict[str, Any]) -> str:
    """`url`, its listing's `detail` kept (`info`)."""
    tag = detail.get("ETag") or detail.get("etag") or detail.get("generation") or ""
    _KNOWN[url] = ObjectInfo(url, int(detail.get("size") or 0), str(tag).strip('"'))
    return url


def info(url: str) -> ObjectInfo:
    """What the store says of the object at `url` (from the run's listing where it was listed,
    else asked: no body is read). Raises OSError (`failure`)."""
    if url not in _KNOWN:
        fs, path = file_system(url)
        try:
            _known(url, fs.info(path))
        except Exception as err:
            raise failure(url, err) from None
    return _KNOWN[url]


def once(url: str) -> bytes | OSError | None:
    """The bytes of the object at `url` where it is small (at most READ_CHUNK bytes: one
    request) or is named as a Host store (sniffed and read whole as the Host reads its file);
    None for a larger one (read in pieces, `load`); the OSError asking gave (`failure`)."""
    try:
        known = info(url)
        if known.size > READ_CHUNK and not url.endswith("/" + STORE_NAME):
            return None
        fs, path = file_system(url)
        try:
            return bytes(fs.cat_file(path))
        except Exception as err:
            raise failure(url, err) from None
    except OSError as err:
        return err


def load(url: str) -> bytes | ObjectSource:
    """The object at `url` as the reader takes a file (bytesource.load): small, its bytes; large,
    an ObjectSource read in pieces. Raises OSError (`failure`)."""
    held = once(url)
    if isinstance(held, OSError):
        raise held
    if held is not None:
        return held
    fs, path = file_system(url)
    try:
        f = fs.open(path, "rb", block_size=READ_CHUNK, cache_type="none")
    except Exception as err:
        raise failure(url, err) from None
    return ObjectSource(url, cast(BinaryIO, f), info(url).size)


class ObjectSource(FileSource):
    """A large object read as a large file is (bytesource.FileSource), in ranges of READ_CHUNK
    bytes; a store's failure in the middle is an OSError naming the object."""

    def __init__(self, url: str, f: BinaryIO, size: int) -> None:
        super().__init__(f, size)
        self.url = url

    def _read(self, start: int, n: int) -> bytes:
        try:
            self._file.seek(start)
            return self._file.read(n)
        except Exception as err:
            raise failure(self.url, err) from None

    def head(self, n: int) -> bytes:
        return self._read(0, n)

    def read_at(self, start: int, end: int) -> bytes:
        return self._read(start, end - start)

    def pieces(self, start: int = 0) -> Iterator[bytes]:
        self.read = start
        while self.read < self.size and (piece := self._read(self.read, min(READ_CHUNK, self.size - self.read))):
            self.read += len(piece)
            yield piece

    def whole(self) -> bytes:
        return b"".join(self.pieces())

    def spooled(self) -> Data:
        """Always through the temporary file (`_spool`): held, its pieces and their join would
        count twice what a file read whole counts."""
        return self._spool()
