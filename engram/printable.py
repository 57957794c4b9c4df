"""Text as it is printed: what the output gate (`gate`) removes from every printed string, and
what the safety screen (`safety`) reads, so that a byte the output drops hides nothing from the
screen. Stdlib only."""

from __future__ import annotations

from .lazyre import LazyPattern

# CSI, OSC (up to BEL or ST), and two-character escape sequences; then what is left of C0/C1 and DEL,
# and what a terminal or an agent's context shows as nothing: every format character (Unicode's
# category Cf: zero-width characters, bidi controls, the soft hyphen, the byte-order mark, tag
# characters, Arabic, Kaithi, Egyptian, shorthand and musical format controls) and the other blank
# fillers (the grapheme joiner, Hangul and Khmer fillers, Mongolian selectors, the braille blank).
# A key or an instruction split by one of them reads whole to the model. Variation selectors stay:
# they draw an emoji, and the screen ignores them (`safety.normalise`).
_ESCAPE_SEQUENCE = LazyPattern(
    r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]?"
)
_UNPRINTABLE = LazyPattern(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u2800\u3164\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f]"
)


def text(value: str) -> str:
    """Printed text: escape sequences and control characters removed, line breaks and tabs kept."""
    if _UNPRINTABLE.search(value) is None:  # one scan; nearly every text takes this way
        return value
    return _UNPRINTABLE.sub("", _ESCAPE_SEQUENCE.sub("", value.replace("\r\n", "\n")))


def decoded(value: str) -> str:
    """Text read with undecodable bytes kept as surrogates (an argument, a Latin-1 file name such
    as `café.md`) with each such byte as U+FFFD, which SQLite, JSON and a terminal take."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
