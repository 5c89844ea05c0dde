"""The run history: every evaluation recorded in SQLite, trends on a frozen golden set, what changed between runs."""
