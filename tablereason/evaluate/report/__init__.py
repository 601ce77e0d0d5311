"""The run report of a results folder.

``page`` builds the summary page, ``svg`` its bar charts, ``show`` the terminal view of
one result.

Example:
    >>> from tablereason.evaluate.report import page_name
    >>> page_name("nt-1")
    'nt-1.html'
"""

from tablereason.evaluate.report.page import (
    SIZE_BINS,
    build_report,
    page_name,
    render_report,
    summarize,
)

__all__ = ["SIZE_BINS", "build_report", "page_name", "render_report", "summarize"]
