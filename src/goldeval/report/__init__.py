"""Reports: renderers of a Scorecard (terminal, Markdown, HTML page), which compute nothing.

Public (imported on first use): `render` (the terminal scorecard), `render_stats`, `judged_lines`,
`write_html_report` (one self-contained page), `results_payload` (the page's data), `render_sweep` and
`write_sweep_html` (a sweep's table and page).
"""

from __future__ import annotations

from goldeval._lazy import exports

_LAZY = {
    "render": "goldeval.report.terminal",
    "render_stats": "goldeval.report.sections",
    "judged_lines": "goldeval.report.judged",
    "write_html_report": "goldeval.report.html",
    "results_payload": "goldeval.report.page",
    "render_sweep": "goldeval.report.sweep_terminal",
    "write_sweep_html": "goldeval.report.sweep_html",
}

__all__ = list(_LAZY)
__getattr__ = exports(__name__, _LAZY)
