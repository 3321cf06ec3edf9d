"""The screen as a terminal shows it: each cell's character and the colours a user sees, after
Textual's filters (NO_COLOR) and the terminal's own colour system (16, 256 or truecolor colours,
downgraded as Rich downgrades them on output) and palette; plus WCAG's contrast ratio."""

from __future__ import annotations

from dataclasses import dataclass

from rich.color import Color, ColorSystem, ColorType
from rich.style import Style
from rich.terminal_theme import DEFAULT_TERMINAL_THEME, TerminalTheme
from textual.app import App

XTERM = TerminalTheme(
    (0, 0, 0), (229, 229, 229),
    [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205),
     (0, 205, 205), (229, 229, 229)],
    [(127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255),
     (0, 255, 255), (255, 255, 255)],
)
"""xterm's own palette (its X resources' defaults), on a dark background: TERM=xterm users."""

SYSTEMS = {"standard": ColorSystem.STANDARD, "256": ColorSystem.EIGHT_BIT,
           "truecolor": ColorSystem.TRUECOLOR}

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Cell:
    char: str
    fg: RGB
    bg: RGB
    bold: bool


def _rgb(color: Color | None, system: ColorSystem, palette: TerminalTheme, fg: bool) -> RGB:
    if color is None or color.type is ColorType.DEFAULT:
        c = palette.foreground_color if fg else palette.background_color
        return (c.red, c.green, c.blue)
    if system is not ColorSystem.TRUECOLOR:
        color = color.downgrade(system)
    t = color.get_truecolor(palette, foreground=fg)
    return (t.red, t.green, t.blue)


def seen_style(style: Style, system: str, palette: TerminalTheme) -> tuple[RGB, RGB, bool]:
    """(foreground, background, bold) of a style as the terminal draws it; dim text is drawn
    halfway to its background, as xterm, VTE and kitty do."""
    sysm = SYSTEMS[system]
    fg = _rgb(style.color, sysm, palette, True)
    bg = _rgb(style.bgcolor, sysm, palette, False)
    if style.reverse:
        fg, bg = bg, fg
    if style.dim:
        fg = tuple((a + b) // 2 for a, b in zip(fg, bg, strict=True))  # type: ignore[assignment]
    return fg, bg, bool(style.bold)


def seen_screen(app: App[None], system: str = "truecolor",
                palette: TerminalTheme | None = None) -> list[list[Cell]]:
    """Every cell of the current screen, row by row, as this terminal shows it."""
    palette = palette or (XTERM if system == "standard" else DEFAULT_TERMINAL_THEME)
    update = app.screen._compositor.render_update(full=True)
    rows: list[list[Cell]] = []
    for line in update.strips:  # type: ignore[attr-defined]
        row: list[Cell] = []
        for strip in line:
            for seg in strip:
                if seg.control:
                    continue
                fg, bg, bold = seen_style(seg.style or Style(), system, palette)
                row.extend(Cell(ch, fg, bg, bold) for ch in seg.text)
        rows.append(row)
    return rows


def text_of(row: list[Cell]) -> str:
    return "".join(c.char for c in row)


def find(rows: list[list[Cell]], needle: str) -> list[list[Cell]]:
    """The cells of every occurrence of `needle` on screen."""
    found = []
    for row in rows:
        text = text_of(row)
        start = text.find(needle)
        while start >= 0:
            found.append(row[start:start + len(needle)])
            start = text.find(needle, start + 1)
    return found


def luminance(rgb: RGB) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: RGB, b: RGB) -> float:
    """WCAG 2's contrast ratio, 1 (same colour) to 21 (black on white)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def worst(cells: list[Cell]) -> float:
    """The lowest contrast of the non-blank cells given."""
    return min((contrast(c.fg, c.bg) for c in cells if not c.char.isspace()), default=21.0)
