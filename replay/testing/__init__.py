"""For Python hosts' test suites (the `testing` extra: pytest and hypothesis).

`strategies`: Hypothesis strategies for valid logs, corrupt logs with the rule they break, and
candidate events with their verdict. `plugin`: a pytest plugin (entry point `schedlog`) that
collects the session logs a project names in its pytest configuration as test items.

Imports the judge (to verify a log, loaded only then) and below.
"""
