"""An audit of many inputs at once, what `schedlog verify` prints: each log's report from the
cache or the judge, in input order, with worker processes on any start method (auditrun,
fanout), the Host cross-check run where a task store is among the inputs.

Imports the cache, the judge and below."""
