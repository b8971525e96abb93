"""Peak memory of `schedlog verify` over one large object in an S3 store against the same file on
disk (issue 53: never downloaded whole), plain and Zstandard.

    python -m bench.objects [--mb 1000]

A moto S3 server runs in this process on a free local port; the log (bench/corpus.build, as
bench/memory.py builds it) and its Zstandard form are uploaded to it, then each is verified as a
file and as an object. Printed: peak anonymous memory (RssAnon of the process, sampled every 50 ms,
bench.memory.peak_anon) and wall seconds of each, and the object's peak over the file's. The
object store's client (botocore, aiohttp) is a fixed cost of about 65 MB: a run that held the
object whole would add its size.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # (run it with -m: bench/calendar.py is no stdlib)

from bench.corpus import build
from bench.memory import SCHEDLOG, packed, peak_anon

BUCKET = "bench"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1000)
    args = ap.parse_args()
    import boto3
    from boto3.s3.transfer import TransferConfig
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    keys = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}
    os.environ.update(keys, AWS_ENDPOINT_URL=f"http://{host}:{port}")
    try:
        (log,) = build(Path(__file__).resolve().parent / "out" / "big", args.mb, 1)
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        for path in (log, packed(log)):
            s3.upload_file(str(path), BUCKET, path.name, Config=TransferConfig(multipart_threshold=1 << 40))
            file_mb, file_s = peak_anon([str(SCHEDLOG), "verify", "--no-cache", str(path)])
            object_mb, object_s = peak_anon([str(SCHEDLOG), "verify", "--no-cache", f"s3://{BUCKET}/{path.name}"])
            print(f"{path.name} ({path.stat().st_size / 1e6:.0f} MB):")
            print(f"  file:   peak anonymous memory {file_mb:6.0f} MB in {file_s:.1f} s")
            more = object_mb - file_mb
            print(f"  object: peak anonymous memory {object_mb:6.0f} MB in {object_s:.1f} s ({more:+.0f} MB)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
