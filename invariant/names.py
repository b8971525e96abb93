"""The profile names and the delivery-history bounds, apart from the rules they name: a command
line offers them as choices and ranges without loading the profiles' records or the retention
rules (start-up, issue 65). `invariant.profiles` builds its table in this order and checks it."""

from __future__ import annotations

PROFILE_NAMES = ("calendar", "after-only", "fixed-rate", "fixed-rate-exact")
"""Every profile's name, in the order of `invariant.profiles.PROFILES`."""

DAYS_MAX = 3650
RECORDS_MAX = 10_000
"""The bounds the Host's configuration gives `deliveryHistoryDays` and `deliveryHistoryRecords`."""
