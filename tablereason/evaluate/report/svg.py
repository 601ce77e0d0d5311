"""Small inline SVG bar charts for reports (no plotting dependency).

Example:
    >>> svg = bar_chart("Accuracy by chain length", [("0", 0.5, 10), ("1", 0.75, 4)])
    >>> svg.startswith("<svg") and "75.0%" in svg
    True
"""

from __future__ import annotations

import html
from collections.abc import Sequence

Bar = tuple[str, float, int]
"""``(label, value in [0, 1], number of examples)``."""


def bar_chart(
    title: str,
    bars: Sequence[Bar],
    *,
    x_label: str = "",
    width: int = 520,
    height: int = 240,
    color: str = "#3b6fc4",
) -> str:
    """A vertical bar chart of values in [0, 1], each bar labelled with its value and n.

    Args:
        title: Chart title.
        bars: ``(label, value, n)`` per bar, drawn left to right.
        x_label: Caption under the axis.
        width: Width in pixels.
        height: Height in pixels.
        color: Bar colour.

    Returns:
        An ``<svg>`` element (with a ``<title>`` for accessibility).
    """
    esc = html.escape
    top, bottom, left, right = 34, 48, 40, 10
    plot_w, plot_h = width - left - right, height - top - bottom
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' class='chart'><title>{esc(title)}</title>",
        f"<text x='{left}' y='18' font-size='14' font-weight='600'>{esc(title)}</text>",
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        parts.append(
            f"<line x1='{left}' x2='{width - right}' y1='{y:.1f}' y2='{y:.1f}' "
            "stroke='#e3e6ec'/>"
            f"<text x='{left - 4}' y='{y + 4:.1f}' font-size='10' text-anchor='end' "
            f"fill='#6b7383'>{int(tick * 100)}%</text>"
        )
    if not bars:
        parts.append(
            f"<text x='{left + plot_w / 2:.1f}' y='{top + plot_h / 2:.1f}' font-size='12' "
            "text-anchor='middle' fill='#6b7383'>no data</text></svg>"
        )
        return "".join(parts)
    slot = plot_w / len(bars)
    bar_w = max(4.0, min(60.0, slot * 0.7))
    for i, (label, value, n) in enumerate(bars):
        value = min(1.0, max(0.0, value))
        x = left + slot * i + (slot - bar_w) / 2
        h = plot_h * value
        y = top + plot_h - h
        cx = x + bar_w / 2
        parts.append(
            f"<rect x='{x:.1f}' y='{y:.1f}' width='{bar_w:.1f}' height='{h:.1f}' "
            f"fill='{color}'><title>{esc(label)}: {100 * value:.1f}% of {n}</title></rect>"
            f"<text x='{cx:.1f}' y='{y - 4:.1f}' font-size='10' text-anchor='middle'>"
            f"{100 * value:.1f}%</text>"
            f"<text x='{cx:.1f}' y='{top + plot_h + 14:.1f}' font-size='11' "
            f"text-anchor='middle'>{esc(label)}</text>"
            f"<text x='{cx:.1f}' y='{top + plot_h + 27:.1f}' font-size='9' "
            f"text-anchor='middle' fill='#6b7383'>n={n}</text>"
        )
    if x_label:
        parts.append(
            f"<text x='{left + plot_w / 2:.1f}' y='{height - 4}' font-size='11' "
            f"text-anchor='middle' fill='#444'>{esc(x_label)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)
