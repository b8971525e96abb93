"""Following logs as they grow (`schedlog watch`): which logs changed and what their new
lines change in the verdict (follow), and the polling loop over folders, prefixes and stores
(watching).

Imports the judge and below; its saved readings are the judge's own."""
