"""Reports: the Scorecard data (scorecard.py) and its renderers (terminal, JSON, Markdown, HTML), which compute nothing."""
