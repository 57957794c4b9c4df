"""Text as it is printed: what the output gate (`gate`) removes from every printed string, and
what the safety screen (`safety`) reads, so that a byte the output drops hides nothing from the
screen. Stdlib only."""

from __future__ import annotations

from .lazyre import LazyPattern

# CSI, OSC (up to BEL or ST), and two-character escape sequences; then what is left of C0/C1,
# DEL, bidi controls, zero-width characters, the byte-order mark and tag characters.
_ESCAPE_SEQUENCE = LazyPattern(
    r"\x1b\[[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -~]?|\x9b[0-?]*[ -/]*[@-~]?"
)
_UNPRINTABLE = LazyPattern(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\U000e0000-\U000e007f]"
)


def text(value: str) -> str:
    """Printed text: escape sequences and control characters removed, line breaks and tabs kept."""
    if _UNPRINTABLE.search(value) is None:  # one scan; nearly every text takes this way
        return value
    return _UNPRINTABLE.sub("", _ESCAPE_SEQUENCE.sub("", value.replace("\r\n", "\n")))
