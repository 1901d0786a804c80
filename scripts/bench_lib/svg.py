"""Small charts as hand-written SVG: lines (linear or log axes) and grouped bars.

No plotting library: the benchmark draws its own plots with nothing but
Python, so any machine that runs it can draw them, and the files are small
text that diffs well in git.
"""
from __future__ import annotations

import math
from html import escape
from typing import Optional, Sequence

W, H = 680, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 40, 110  # room for the axis labels and the legend below
PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#78350f", "#ca8a04", "#db2777",
           "#4b5563", "#65a30d"]


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:.3g}"


def _nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks, t = [start], start
    while t < hi - step * 1e-9:  # up to the first tick at or above `hi`
        t += step
        ticks.append(round(t, 12))
    return ticks


def _log_ticks(lo: float, hi: float) -> list[float]:
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    ticks = [10.0 ** k for k in range(a, b + 1)]
    if len(ticks) <= 3:  # a narrow range: 1, 2, 5 per decade
        ticks = sorted({m * 10.0 ** k for k in range(a, b + 1) for m in (1, 2, 5)})
    return [t for t in ticks if lo / 1.0001 <= t <= hi * 1.0001] or [lo, hi]


class _Axis:
    def __init__(self, lo: float, hi: float, log: bool, start: float, end: float):
        self.log = log and lo > 0
        if self.log:
            self.lo, self.hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
            if self.lo == self.hi:
                self.hi *= 10
            self.ticks = _log_ticks(self.lo, self.hi)
        else:
            self.ticks = _nice_ticks(min(0.0, lo), hi)
            self.lo, self.hi = self.ticks[0], self.ticks[-1]
        self.start, self.end = start, end

    def __call__(self, v: float) -> float:
        if self.log:
            v = max(v, self.lo)
            f = (math.log10(v) - math.log10(self.lo)) / (math.log10(self.hi) - math.log10(self.lo))
        else:
            f = (v - self.lo) / ((self.hi - self.lo) or 1)
        return self.start + f * (self.end - self.start)


def _frame(title: str, subtitle: str = "") -> list[str]:
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           'font-family="Helvetica, Arial, sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="#ffffff"/>',
           f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">{escape(title)}</text>']
    if subtitle:
        out.append(f'<text x="{W / 2}" y="32" text-anchor="middle" fill="#555">{escape(subtitle)}</text>')
    return out


def _y_axis(out: list[str], y: _Axis, label: str) -> None:
    for t in y.ticks:
        py = y(t)
        out.append(f'<line x1="{LEFT}" y1="{py:.1f}" x2="{W - RIGHT}" y2="{py:.1f}" stroke="#e5e7eb"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    mid = (TOP + H - BOTTOM) / 2
    out.append(f'<text x="16" y="{mid}" text-anchor="middle" transform="rotate(-90 16 {mid})">{escape(label)}</text>')
    out.append(f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{H - BOTTOM}" stroke="#333"/>')
    out.append(f'<line x1="{LEFT}" y1="{H - BOTTOM}" x2="{W - RIGHT}" y2="{H - BOTTOM}" stroke="#333"/>')


def _legend(out: list[str], entries: Sequence[tuple[str, str, bool]]) -> None:
    """Below the plot, in columns: (label, colour, dashed)."""
    cols, col_w, top = 2, (W - LEFT - RIGHT) / 2, H - BOTTOM + 50
    for i, (label, c, dashed) in enumerate(entries[:12]):
        x, y = LEFT + (i % cols) * col_w, top + (i // cols) * 14
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        out.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 22}" y2="{y - 4}" stroke="{c}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{x + 28}" y="{y}">{escape(label)}</text>')


def line_chart(title: str, xlabel: str, ylabel: str,
               series: Sequence[tuple[str, Sequence[tuple[float, float]], str, bool]],
               logx: bool = False, logy: bool = False, subtitle: str = "") -> Optional[str]:
    """series: (label, [(x, y)…], colour, dashed). None if there is nothing to draw."""
    pts = [(x, y) for _, p, _, _ in series for x, y in p if y is not None and (y > 0 or not logy)]
    if not pts:
        return None
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    x = _Axis(min(xs), max(xs) if max(xs) > min(xs) else min(xs) * 10 if logx else min(xs) + 1, logx,
              LEFT + 10, W - RIGHT - 10)
    y = _Axis(min(ys), max(ys) * (1.0 if logy else 1.05), logy, H - BOTTOM, TOP)
    out = _frame(title, subtitle)
    _y_axis(out, y, ylabel)
    for t in x.ticks:
        px = x(t)
        out.append(f'<line x1="{px:.1f}" y1="{H - BOTTOM}" x2="{px:.1f}" y2="{H - BOTTOM + 4}" stroke="#333"/>')
        out.append(f'<text x="{px:.1f}" y="{H - BOTTOM + 16}" text-anchor="middle">{_fmt(t)}</text>')
    out.append(f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - BOTTOM + 30}" text-anchor="middle">{escape(xlabel)}</text>')
    for label, p, c, dashed in series:
        p = sorted((a, b) for a, b in p if b is not None and (b > 0 or not logy))
        if not p:
            continue
        path = " ".join(f"{'M' if i == 0 else 'L'}{x(a):.1f},{y(b):.1f}" for i, (a, b) in enumerate(p))
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        out.append(f'<path d="{path}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        if len(p) <= 40:
            for a, b in p:
                out.append(f'<circle cx="{x(a):.1f}" cy="{y(b):.1f}" r="3" fill="{c}"><title>{escape(label)}: '
                           f'{_fmt(a)} → {_fmt(b)}</title></circle>')
    _legend(out, [(label, c, dashed) for label, _, c, dashed in series])
    out.append("</svg>")
    return "\n".join(out) + "\n"


def bar_chart(title: str, ylabel: str, categories: Sequence[str],
              series: Sequence[tuple[str, Sequence[Optional[float]], str]],
              logy: bool = False, subtitle: str = "", goal: Optional[tuple[float, str]] = None) -> Optional[str]:
    """Grouped bars: one group per category, one bar per series (label, values, colour).

    `goal` = (value, label) draws a dashed horizontal line. None if nothing to draw.
    """
    vals = [v for _, vs, _ in series for v in vs if v is not None and (v > 0 or not logy)]
    if goal:
        vals.append(goal[0])
    if not vals or not categories:
        return None
    y = _Axis(min(vals) if logy else 0.0, max(vals) * (1.0 if logy else 1.08), logy, H - BOTTOM, TOP)
    out = _frame(title, subtitle)
    _y_axis(out, y, ylabel)
    group_w = (W - LEFT - RIGHT) / len(categories)
    bar_w = min(40.0, group_w * 0.8 / max(1, len(series)))
    for g, cat in enumerate(categories):
        gx = LEFT + g * group_w + (group_w - bar_w * len(series)) / 2
        for i, (label, vs, c) in enumerate(series):
            v = vs[g] if g < len(vs) else None
            if v is None or (logy and v <= 0):
                continue
            top, base = y(v), y(y.lo) if logy else y(0)
            bx = gx + i * bar_w
            out.append(f'<rect x="{bx:.1f}" y="{min(top, base):.1f}" width="{bar_w - 2:.1f}" '
                       f'height="{abs(base - top):.1f}" fill="{c}"><title>{escape(label)}, {escape(cat)}: '
                       f'{_fmt(v)}</title></rect>')
            out.append(f'<text x="{bx + (bar_w - 2) / 2:.1f}" y="{min(top, base) - 3:.1f}" text-anchor="middle" '
                       f'font-size="9">{_fmt(v)}</text>')
        for k, part in enumerate(cat.split("\n")):  # a category may take two lines
            out.append(f'<text x="{LEFT + (g + 0.5) * group_w:.1f}" y="{H - BOTTOM + 16 + 13 * k}" '
                       f'text-anchor="middle">{escape(part)}</text>')
    if goal:
        gy = y(goal[0])
        out.append(f'<line x1="{LEFT}" y1="{gy:.1f}" x2="{W - RIGHT}" y2="{gy:.1f}" stroke="#111" '
                   'stroke-dasharray="6,4"/>')
        out.append(f'<text x="{W - RIGHT - 4}" y="{gy - 4:.1f}" text-anchor="end">{escape(goal[1])}</text>')
    _legend(out, [(label, c, False) for label, _, c in series])
    out.append("</svg>")
    return "\n".join(out) + "\n"
