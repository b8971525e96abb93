"""The benchmarks' corpus of real bodies (bench/realcorpus.py) carries schedule traffic as the
harness's live owner writes it: every dispatch's reminder queued before it and delivered after,
at consistent times, so the valid logs it makes draw no finding at all (a benchmark of them
measures the judge, not the printing of warnings)."""

from __future__ import annotations

import random
import re
import sys
from collections import Counter

from replay.audit.verify import verify_bytes

from .conftest import REAL_LOGS, ROOT, requires_real_logs

sys.path.insert(0, str(ROOT))


@requires_real_logs
def test_a_corpus_of_real_bodies_draws_no_finding_at_two_shares() -> None:
    from bench.realcorpus import bodies, sessions

    sources = bodies(REAL_LOGS)
    for share in (0.0035, 0.11):
        dispatched = delivered = 0
        for name, blob in sessions(random.Random(3), sources, 3_000_000, share):
            report = verify_bytes(name, blob)
            assert report.verdict == "ok" and report.findings == (), (name, report.violation, report.findings[:3])
            dispatched += blob.count(b'"operation":"dispatch"')
            ids = Counter(re.findall(rb'"id":"(reminder-[0-9]+)"', blob))  # each queued, then delivered
            assert set(ids.values()) <= {1, 2}  # (once: a fork child's prefix cut between the two)
            delivered += sum(n == 2 for n in ids.values())
        assert dispatched > 0 and delivered > 0, share
