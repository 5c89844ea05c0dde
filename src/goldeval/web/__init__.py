"""The live scorecard in the browser: a localhost server and a self-contained page."""
