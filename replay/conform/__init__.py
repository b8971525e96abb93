"""`schedlog conform`: drive an implementation in any language through the conformance
protocol (invariant.conformance), compare its answers with schedlog's and shrink what differs.

Imports `invariant` and `replay.lines` only: it judges no log."""
