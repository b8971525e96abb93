"""The verdict cache: whether a saved verdict (or a saved reading, resumed) may answer for a
log as it is now (cached), and the SQLite file that keeps the entries (cachestore).

Imports the judge (a miss is judged, and a resumed reading saved) and below."""
