"""The live-owner simulator on a virtual clock, its scenarios, and the fuzzer that drives it.

Imports `invariant` and replay's shared modules only: its logs are judged by whoever reads them."""
