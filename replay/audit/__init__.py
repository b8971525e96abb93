"""Judging session logs: one verdict per session (verify), a candidate event (check), a cron rule."""
