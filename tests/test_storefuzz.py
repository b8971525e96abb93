"""The SQLite store fuzzer (fuzz/stores.py) on a bounded number of inputs: every mutated store
ends in reports, the same twice, without a file written (the full runs' figures: issue 66's
closing note)."""

from __future__ import annotations

from fuzz.stores import DEFAULT_SEED, TIMEOUT, _work


def test_mutated_stores_end_in_reports_never_in_exceptions() -> None:
    results = _work((DEFAULT_SEED, 0, 300, TIMEOUT))
    failed = [(index, kind, detail, done) for index, kind, detail, done in results if kind != "ok"]
    assert not failed, failed[:5]
    reached = {code for *_, detail, _ in results for code in detail.split()}
    assert {"sqlite.row", "sqlite.tail", "format.unreadable", "verdict:ok"} <= reached
