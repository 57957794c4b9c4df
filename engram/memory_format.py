"""What the read path needs of the memory format without the parser (stdlib only).

The output gate checks stored rows against the format's closed vocabularies and id rule, and
the renderer finds a body's first line of text past its headings. The parser enforces the same
facts on the way in and imports them from here, so a load or hook process never compiles the
parser's patterns (about 2.5 ms of every start-up).
"""

from __future__ import annotations

import re

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
MAX_ID_CHARS = 128  # gate.MAX_NAME: a longer id could never be printed
TYPES = ("rule", "skill", "knowledge")
AUTHORITIES = ("instruction", "reference")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")  # CommonMark allows 3 spaces of indent
