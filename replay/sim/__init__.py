"""The live-owner simulator on a virtual clock, its scenarios, and the fuzzer that drives it."""
