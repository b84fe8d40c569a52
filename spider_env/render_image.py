"""The table as an image (``render_mode="rgb_array"``) and episodes as animated GIFs.

:func:`render_image` draws a position as an ``(H, W, 3)`` ``uint8`` array: a header (variant,
completed runs, how the game ended; score, moves, deals left; the last action), the stock (backs,
or each pile's top card where the variant shows it), the completed runs per suit, and the
columns, face-down cards as backs and face-up cards with rank and suit (red suits red). It draws
only what a player sees: a face-down card's or a hidden stock card's face is never drawn.

Pillow (the ``render`` extra) does the drawing; it is imported only when an image is drawn.
Same position, same pixels, on every machine: a fixed palette, Pillow's built-in bitmap font
(no system font, no FreeType), suit glyphs drawn from the masks below, no anti-aliasing; the
picture is drawn at 1:1 and scaled up by :data:`SCALE` (nearest pixel). The size depends only on
the variant (:func:`image_shape`), so a video's frames all have one size; a column too long for
the table is drawn with its cards closer together.

:func:`write_gif` writes such frames as an animated GIF, one frame at a time.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from spider_env.core.cards import N_RANKS, card_id, card_str, is_red, suit_of
from spider_env.core.rules import legal_actions
from spider_env.core.state import State
from spider_env.core.variants import Variant
from spider_env.render import column_label

if TYPE_CHECKING:
    from PIL import Image, ImageDraw

PILLOW_MISSING = (
    "render_mode='rgb_array' and GIFs need Pillow, which is not installed: "
    "pip install 'spider-env[render]'"
)
MIN_PILLOW = (10, 1)  # ImageFont.load_default_imagefont: the bitmap font, whatever FreeType does

# The palette: every pixel is one of these colours (index -> RGB).
FELT, FACE, EDGE, INK, RED, BACK, BACK_LINE, TEXT, SLOT, STATUS, LABEL = range(11)
PALETTE = np.array(
    [
        (22, 92, 52),  # FELT: the table
        (250, 250, 244),  # FACE: a face-up card
        (30, 30, 30),  # EDGE: card outlines
        (20, 20, 20),  # INK: black suits
        (200, 16, 32),  # RED: hearts and diamonds
        (36, 64, 150),  # BACK: a face-down card
        (120, 150, 225),  # BACK_LINE: the pattern on a back
        (240, 240, 226),  # TEXT: header text
        (70, 140, 95),  # SLOT: an empty column, dealt pile or foundation
        (255, 214, 64),  # STATUS: won / game over
        (170, 205, 180),  # LABEL: column labels, the last action's caption
    ],
    dtype=np.uint8,
)

SCALE = 2  # each drawn pixel becomes SCALE x SCALE pixels of the image
# Geometry, in drawn pixels (before SCALE).
FONT_W, LINE = 6, 12  # the bitmap font's advance; one text line
TEXT_TOP = 2  # rows above a glyph's cap height in the bitmap font
MARGIN = 4
CARD_W, CARD_H, GAP = 26, 36, 3
PITCH = CARD_W + GAP
DOWN_STEP, UP_STEP = 5, 12  # offset to the next card below a face-down / face-up card
PILE_STEP = 5  # offset between the backs of undealt stock piles
TOP_Y = MARGIN + 3 * LINE  # the stock and completed runs, below three header lines
LABEL_Y = TOP_Y + CARD_H + 4
TABLE_Y = LABEL_Y + LINE
TABLE_H = 256
HEIGHT = TABLE_Y + TABLE_H + MARGIN
MIN_WIDTH = 232  # room for the header lines of 7-column games

# Suit glyphs, 7 x 7 ("#": ink), spades, hearts, diamonds, clubs (card suit order).
SUIT_GLYPHS = (
    ("...#...", "..###..", ".#####.", "#######", "#######", "...#...", "..###.."),
    (".##.##.", "#######", "#######", "#######", ".#####.", "..###..", "...#..."),
    ("...#...", "..###..", ".#####.", "#######", ".#####.", "..###..", "...#..."),
    ("..###..", "..###..", "#######", "#######", "###.###", "...#...", "..###.."),
)
GLYPH = len(SUIT_GLYPHS[0])


def pillow_available() -> bool:
    """Whether Pillow can be imported (checked without importing it)."""
    return importlib.util.find_spec("PIL") is not None


def require_pillow() -> Any:
    """Pillow's ``Image`` module; ``ImportError`` naming the extra if Pillow is missing or older
    than :data:`MIN_PILLOW`."""
    try:
        import PIL
        from PIL import Image, ImageFont
    except ImportError:
        raise ImportError(PILLOW_MISSING) from None
    if not hasattr(ImageFont, "load_default_imagefont"):
        need = ".".join(map(str, MIN_PILLOW))
        raise ImportError(
            f"Pillow {PIL.__version__} is too old to draw the table (needs {need} or later): "
            "pip install 'spider-env[render]'"
        )
    return Image


def image_shape(variant: Variant) -> tuple[int, int, int]:
    """``(H, W, 3)`` of every image of ``variant``'s positions (multiples of 16)."""
    width = max(2 * MARGIN + variant.n_columns * PITCH - GAP, MIN_WIDTH)
    width = -(-width // 8) * 8
    return HEIGHT * SCALE, width * SCALE, 3


def render_image(state: State, *, last_action: str | None = None) -> np.ndarray:
    """The table as an ``(H, W, 3)`` ``uint8`` RGB image (``last_action`` shown in words)."""
    return PALETTE[_draw(state, last_action)].repeat(SCALE, axis=0).repeat(SCALE, axis=1)


# --- drawing ------------------------------------------------------------------------------------


@cache
def _font() -> Any:
    require_pillow()
    from PIL import ImageFont

    return ImageFont.load_default_imagefont()


@cache
def _glyph(suit: int, scale: int) -> Image.Image:
    """The suit's glyph as a ``"1"`` mask, ``scale`` times the size of :data:`SUIT_GLYPHS`."""
    image = require_pillow()
    rows = np.array([[ch == "#" for ch in row] for row in SUIT_GLYPHS[suit]], dtype=np.uint8)
    rows = rows.repeat(scale, axis=0).repeat(scale, axis=1) * 255
    return image.fromarray(rows).convert("1")


def _text(draw: ImageDraw.ImageDraw, x: int, y: int, text: str, fill: int) -> None:
    """Draw ``text`` with its cap height starting at row ``y`` (Latin-1 only: the bitmap font's
    characters; anything else shows as ``?``)."""
    safe = text.encode("latin-1", "replace").decode("latin-1")
    draw.text((x, y - TEXT_TOP), safe, font=_font(), fill=fill)


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` pixels of the font, ending in ``...`` when cut."""
    chars = width // FONT_W
    return text if len(text) <= chars else text[: max(chars - 3, 0)] + "..."


def _slot(draw: ImageDraw.ImageDraw, x: int, y: int) -> None:
    draw.rounded_rectangle((x, y, x + CARD_W - 1, y + CARD_H - 1), radius=2, outline=SLOT)


def _back(draw: ImageDraw.ImageDraw, x: int, y: int) -> None:
    draw.rounded_rectangle(
        (x, y, x + CARD_W - 1, y + CARD_H - 1), radius=2, fill=BACK, outline=EDGE
    )
    draw.rectangle((x + 3, y + 3, x + CARD_W - 4, y + CARD_H - 4), outline=BACK_LINE)


def _face(draw: ImageDraw.ImageDraw, x: int, y: int, card: int, whole: bool = False) -> None:
    """A face-up card: rank and suit in the corner; ``whole`` (nothing covers it): a large suit
    in the middle too."""
    draw.rounded_rectangle(
        (x, y, x + CARD_W - 1, y + CARD_H - 1), radius=2, fill=FACE, outline=EDGE
    )
    ink = RED if is_red(card) else INK
    rank = card_str(card, ascii=False)[:-1]  # "10♠" -> "10"
    _text(draw, x + 2, y + 2, rank, ink)
    draw.bitmap((x + 3 + FONT_W * len(rank), y + 2), _glyph(suit_of(card), 1), fill=ink)
    if whole:
        size = 2 * GLYPH
        cx, cy = x + (CARD_W - size) // 2, y + CARD_H - size - 4
        draw.bitmap((cx, cy), _glyph(suit_of(card), 2), fill=ink)


def _steps(down: int, up: int) -> tuple[int, int]:
    """The offsets below a face-down and a face-up card of a column with ``down`` face-down and
    ``up`` face-up cards: :data:`DOWN_STEP` and :data:`UP_STEP`, or less where the column would
    not fit the table."""
    n = down + up
    n_down = min(down, n - 1)  # the steps after face-down cards (the last card has none)
    n_up = n - 1 - n_down
    room = TABLE_H - CARD_H
    step_down, step_up = DOWN_STEP, UP_STEP
    if n_up and n_down * step_down + n_up * step_up > room:
        step_up = max(1, (room - n_down * step_down) // n_up)
    if n_down and n_down * step_down + n_up * step_up > room:
        step_down = max(1, (room - n_up * step_up) // n_down)
    return step_down, step_up


def _header(draw: ImageDraw.ImageDraw, state: State, last_action: str | None, width: int) -> None:
    v = state.variant
    room = width - 2 * MARGIN
    status = "WON" if state.won else "GAME OVER" if not legal_actions(state) else ""
    if status:
        _text(draw, width - MARGIN - FONT_W * len(status), MARGIN, status, STATUS)
        room -= FONT_W * (len(status) + 2)
    title = f"{v.name}  runs {sum(state.completed)}/{v.runs_to_win}"
    _text(draw, MARGIN, MARGIN, _fit(title, room), TEXT)
    counts = f"score {state.score}  moves {state.moves}  deals left {state.deals_left}"
    _text(draw, MARGIN, MARGIN + LINE, _fit(counts, width - 2 * MARGIN), TEXT)
    caption = "last: "
    _text(draw, MARGIN, MARGIN + 2 * LINE, caption, LABEL)
    words = last_action if last_action is not None else "-"
    x = MARGIN + FONT_W * len(caption)
    _text(draw, x, MARGIN + 2 * LINE, _fit(words, width - MARGIN - x), TEXT)


def _stock(draw: ImageDraw.ImageDraw, state: State) -> None:
    """The stock at the top left: each pile's top card where the variant shows it (a back
    behind it while the pile holds more), else the undealt piles as backs."""
    if state.variant.pile_top_visible:
        for j, pile in enumerate(state.stock):
            x = MARGIN + j * PITCH
            if not pile:
                _slot(draw, x, TOP_Y)
                continue
            if len(pile) > 1:
                _back(draw, x + 2, TOP_Y + 2)
            _face(draw, x, TOP_Y, pile[0])
        return
    piles = state.deals_left
    if not piles:
        _slot(draw, MARGIN, TOP_Y)
    for k in range(piles):
        _back(draw, MARGIN + k * PILE_STEP, TOP_Y)


def _runs(draw: ImageDraw.ImageDraw, state: State, width: int) -> None:
    """The completed runs at the top right, one place per suit of the variant: its King with
    the count, or an empty place marked with the suit."""
    suits = state.variant.suit_ids
    x0 = width - MARGIN - len(suits) * PITCH + GAP
    for i, s in enumerate(suits):
        x = x0 + i * PITCH
        n = state.completed[s]
        if n:
            _face(draw, x, TOP_Y, card_id(s, N_RANKS))  # the King of suit s
            count = f"x{n}"
            _text(draw, x + CARD_W - 2 - FONT_W * len(count), TOP_Y + CARD_H - 11, count, INK)
        else:
            _slot(draw, x, TOP_Y)
            gx, gy = x + (CARD_W - 2 * GLYPH) // 2, TOP_Y + (CARD_H - 2 * GLYPH) // 2
            draw.bitmap((gx, gy), _glyph(s, 2), fill=SLOT)


def _columns(draw: ImageDraw.ImageDraw, state: State) -> None:
    v = state.variant
    for c, (col, down) in enumerate(zip(state.cols, state.down)):
        x = MARGIN + c * PITCH
        label = column_label(v, c)
        _text(draw, x + (CARD_W - FONT_W * len(label)) // 2, LABEL_Y, label, LABEL)
        if not col:
            _slot(draw, x, TABLE_Y)
            continue
        step_down, step_up = _steps(down, len(col) - down)
        y = TABLE_Y
        for i, card in enumerate(col):
            if i < down:
                _back(draw, x, y)  # never the card's face
                y += step_down
            else:
                _face(draw, x, y, card, whole=i == len(col) - 1)
                y += step_up


def _draw(state: State, last_action: str | None) -> np.ndarray:
    """The picture at 1:1, as palette indices ``(H / SCALE, W / SCALE)``."""
    image = require_pillow()
    from PIL import ImageDraw

    height, width, _ = image_shape(state.variant)
    canvas = image.new("P", (width // SCALE, height // SCALE), FELT)
    draw = ImageDraw.Draw(canvas)
    _header(draw, state, last_action, canvas.width)
    _stock(draw, state)
    _runs(draw, state, canvas.width)
    _columns(draw, state)
    return np.asarray(canvas)


# --- GIF ----------------------------------------------------------------------------------------


def write_gif(frames: Iterable[np.ndarray], path: str, *, frame_ms: int, final_ms: int) -> int:
    """Write ``frames`` (images of :func:`render_image`, all one size) to ``path`` as an animated
    GIF that loops: ``frame_ms`` per frame, ``final_ms`` for the last. Returns the number of
    frames. Frames are encoded one at a time, each as the rectangle that changed (memory does
    not grow with the episode); ``ValueError`` for frames of another size or colours."""
    image = require_pillow()
    from PIL import GifImagePlugin

    palette = PALETTE.tobytes()
    keys = _colour_keys(PALETTE)
    order = np.argsort(keys)

    def indexed(pixels: np.ndarray) -> Image.Image:
        im = image.frombytes("P", (pixels.shape[1], pixels.shape[0]), pixels.tobytes())
        im.putpalette(palette)
        return im

    count = 0
    previous: np.ndarray | None = None
    pending: tuple[Image.Image, tuple[int, int], int] | None = None  # frame, offset, repeats
    with open(path, "wb") as fh:

        def flush(last: bool) -> None:
            assert pending is not None
            im, offset, repeats = pending
            ms = (repeats - 1) * frame_ms + (final_ms if last else frame_ms)
            for chunk in GifImagePlugin.getdata(im, offset, duration=ms):
                fh.write(chunk)

        for frame in frames:
            indices = _palette_indices(frame, keys, order)
            count += 1
            if previous is None:
                header, _ = GifImagePlugin.getheader(indexed(indices), info={"loop": 0})
                for chunk in header:
                    fh.write(chunk)
                pending = (indexed(indices), (0, 0), 1)
            else:
                if indices.shape != previous.shape:
                    raise ValueError(
                        f"frame {count - 1} is {indices.shape[1]}x{indices.shape[0]}, the first "
                        f"is {previous.shape[1]}x{previous.shape[0]}: a GIF has one size"
                    )
                changed = indices != previous
                rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(0))
                if not len(rows):
                    assert pending is not None
                    pending = (pending[0], pending[1], pending[2] + 1)
                    continue
                flush(last=False)
                top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
                crop = np.ascontiguousarray(indices[top:bottom, left:right])
                pending = (indexed(crop), (int(left), int(top)), 1)
            previous = indices
        if pending is None:
            raise ValueError("no frames to write")
        flush(last=True)
        fh.write(b";")  # the GIF trailer
    return count


def _colour_keys(rgb: np.ndarray) -> np.ndarray:
    """One int per RGB colour (``r << 16 | g << 8 | b``), over the last axis."""
    rgb = rgb.astype(np.int64)
    return (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]


def _palette_indices(frame: np.ndarray, keys: np.ndarray, order: np.ndarray) -> np.ndarray:
    """An RGB frame of :func:`render_image` as ``uint8`` palette indices (``ValueError`` for a
    colour not in :data:`PALETTE`)."""
    frame = np.asarray(frame)
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 3) uint8 image, got {frame.dtype} {frame.shape}")
    pixels = _colour_keys(frame)
    where = np.searchsorted(keys[order], pixels).clip(0, len(keys) - 1)
    indices = order[where]
    if not np.array_equal(keys[indices], pixels):
        raise ValueError("the frame has colours outside the render palette (not a render_image)")
    return indices.astype(np.uint8)


__all__ = [
    "PALETTE",
    "PILLOW_MISSING",
    "image_shape",
    "pillow_available",
    "render_image",
    "require_pillow",
    "write_gif",
]
