"""Secret and prompt-injection scanner for memory text.

``scan`` runs at compile time on every memory and sits on the hook path, so
it is stdlib only and cheap on ordinary prose: each detector is gated by
literal triggers looked up in the lower-cased text, and the costly checks
(value plausibility, Shannon entropy) only run on regex candidates. Labels
name the kind of finding, never the matched text, so a ``SKIPPED`` line can
not leak the secret it reports.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from os import PathLike


@dataclass(frozen=True, slots=True)
class _Detector:
    label: str
    triggers: tuple[str, ...]  # lower-case literals; the detector runs only if one occurs
    matches: Callable[[str], bool]


def _regex(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    return _found(re.compile(pattern, flags))


def _found(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda text: pattern.search(text) is not None


def _has_classes(value: str) -> tuple[bool, bool, bool]:
    """(has upper, has lower, has digit) for ASCII letters and digits."""
    return (
        any("A" <= c <= "Z" for c in value),
        any("a" <= c <= "z" for c in value),
        any("0" <= c <= "9" for c in value),
    )


def _shannon_entropy(value: str) -> float:
    length = len(value)
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / length * math.log2(n / length) for n in counts.values())


# --- provider tokens -------------------------------------------------------

# Anthropic and OpenAI keys share the `sk-` prefix; a real tail mixes upper,
# lower and digits, which words such as `sk-learn-compatible-v2` do not.
_SK_KEY = re.compile(r"(?<![A-Za-z0-9_-])sk-(ant-)?(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})")


def _sk_key_kind(text: str) -> str | None:
    for match in _SK_KEY.finditer(text):
        if all(_has_classes(match.group(2))):
            return "anthropic" if match.group(1) else "openai"
    return None


_PROVIDER_TOKENS = (
    _Detector(
        "secret: private key",
        ("private key",),
        # The header alone is often quoted in prose; a key block has a base64 body.
        _regex(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----\s*"
            r"(?:[A-Za-z-]+:[^\n]*\n\s*)*[A-Za-z0-9+/=]{16,}"
        ),
    ),
    _Detector("secret: aws access key", ("akia", "asia"), _regex(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    _Detector(
        "secret: github token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _regex(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ),
    _Detector("secret: gitlab token", ("glpat-",), _regex(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    _Detector(
        "secret: slack token",
        ("xoxb-", "xoxp-", "xoxa-", "xapp-"),
        _regex(r"\b(?:xox[bpa]-\d{6,}-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{20,})"),
    ),
    _Detector("secret: anthropic key", ("sk-ant-",), lambda text: _sk_key_kind(text) == "anthropic"),
    _Detector("secret: openai key", ("sk-",), lambda text: _sk_key_kind(text) == "openai"),
    _Detector("secret: google api key", ("aiza",), _regex(r"\bAIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])")),
    _Detector("secret: stripe key", ("sk_live_", "rk_live_"), _regex(r"\b[sr]k_live_[A-Za-z0-9]{20,}")),
    _Detector("secret: npm token", ("npm_",), _regex(r"\bnpm_[A-Za-z0-9]{36}\b")),
    _Detector(
        "secret: jwt",
        ("eyj",),
        _regex(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{8,}"),
    ),
)

# --- assigned values ---------------------------------------------------------

# Values that stand for a secret rather than being one.
_PLACEHOLDER = re.compile(
    r"""^[<\[{$%@&*]|^![a-z_]+$|\$\{|\{\{|%\(  # template, variable, YAML tag or alias
    |\.\.\.|xxx|\*\*\*|^(.)\1*$  # elided or masked
    |change[_-]?me|replace[_-]?me|example|placeholder|redacted|dummy|sample|your
    |://|^arn:  # a reference to a secret store, not the secret
    |password|^test  # test data such as Password123 or Test@123
    |^(?:passwd|secret|token|none|null|nil|undefined|true|false|required|optional)$""",
    re.I | re.X,
)
# Unquoted values that are code, not literals: attribute chains, calls,
# subscripts (form.password.data, os.environ["X"], getenv("X"), process.env.X).
_CODE_EXPRESSION = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|.*[(\[]")
_PATH_LIKE = re.compile(r"^(?:/|~|\./|\.\./)")


def _looks_like_real_value(value: str, quoted: bool) -> bool:
    """A literal that could be a live password or key, not a stand-in or an expression."""
    if len(value) < 6 or any(c.isspace() for c in value) or value.isdigit():
        return False
    if _PLACEHOLDER.search(value) or _PATH_LIKE.match(value):
        return False
    if not quoted and _CODE_EXPRESSION.match(value):
        return False
    _, _, has_digit = _has_classes(value)
    has_symbol = any(not (c.isalnum() or c in "_-.") for c in value)
    if has_digit or has_symbol:
        return True
    # Bare words are type hints and variables (str, SecretStr, user_password);
    # a long single quoted run is a passphrase.
    return quoted and value.isalpha() and len(value) >= 12


_ASSIGNMENT = re.compile(
    r"""(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key
        |private[_-]?key|secret[_-]?key|auth[_-]?key|credentials?)
    ['"]?[ \t]*(?::=|=>|[:=])[ \t]*
    (?:[bBrRuU]?"([^"\n]*)"|[bBrRuU]?'([^'\n]*)'|([^\s,;'"`)\]}]+))""",
    re.I | re.X,
)


def _has_password_assignment(text: str) -> bool:
    for match in _ASSIGNMENT.finditer(text):
        double, single, bare = match.groups()
        if bare is not None:
            # A trailing ! or ? is a type or non-null marker (String!, process.env.X!).
            real = _looks_like_real_value(bare.rstrip("!?"), quoted=False)
        else:
            real = _looks_like_real_value(double if double is not None else single, quoted=True)
        if real:
            return True
    return False


_URL_CREDENTIALS = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]*:([^\s/@]+)@", re.I)


def _has_url_credentials(text: str) -> bool:
    return any(_looks_like_real_value(m.group(1), quoted=True) for m in _URL_CREDENTIALS.finditer(text))


# --- high-entropy values next to key-like names ----------------------------

# A key-like name, then `:`/`=` or up to three short words ("token for CI is"),
# then the value.
_KEY_NEAR_VALUE = re.compile(
    r"""(?:key|secret|token|credential|auth|bearer|passw)[\w.-]*
    (?:['"]?[ \t]*(?::=|=>|[:=])[ \t]*|(?:[ \t]+[A-Za-z]{1,12}){0,3}[ \t]+)
    ['"]?(?:bearer[ \t]+|basic[ \t]+)?([A-Za-z0-9+/_=-]{20,})""",
    re.I | re.X,
)
_HEX_LIKE = re.compile(r"[0-9a-fA-F-]+")  # digests, git SHAs and UUIDs are not secrets here
_DIGEST_PREFIXES = ("sha1-", "sha256-", "sha384-", "sha512-")
_MIN_ENTROPY = 3.5


def _looks_random(token: str) -> bool:
    if _HEX_LIKE.fullmatch(token) or token.lower().startswith(_DIGEST_PREFIXES):
        return False
    has_upper, has_lower, has_digit = _has_classes(token)
    if not has_digit or not (has_upper or has_lower):
        return False
    alnum = [c for c in token if c.isalnum()]
    if has_upper and has_lower:
        # Random mixed case is about half upper; camelCase names are mostly lower.
        letters = [c for c in alnum if c.isalpha()]
        upper_share = sum(c.isupper() for c in letters) / len(letters)
        if not 0.25 <= upper_share <= 0.75:
            return False
    else:
        # Single-case tokens (paths, snake_case names) need digits throughout.
        digit_share = sum(c.isdigit() for c in alnum) / len(alnum)
        if digit_share < 0.15:
            return False
    return _shannon_entropy(token) >= _MIN_ENTROPY


def _has_high_entropy_value(text: str) -> bool:
    return any(_looks_random(m.group(1)) for m in _KEY_NEAR_VALUE.finditer(text))


_ASSIGNED_SECRETS = (
    _Detector("secret: url credentials", ("://",), _has_url_credentials),
    _Detector(
        "secret: password assignment",
        ("pass", "secret", "token", "key", "credential"),
        _has_password_assignment,
    ),
    _Detector(
        "secret: high-entropy value",
        ("key", "secret", "token", "credential", "auth", "bearer", "passw"),
        _has_high_entropy_value,
    ),
)

# --- prompt injection ---------------------------------------------------------

# Markdown decoration allowed before a line-start marker: quotes, bullets,
# numbers, headings, checkboxes, bold.
_LINE_START = r"^[ \t]*(?:(?:[>*+-]|\d+[.)]|\#{1,6}|\[[ xX]\])[ \t]*)*(?:\*\*)?"

_OVERRIDE = re.compile(
    r"""\b(?:ignore|disregard|forget|override|bypass)\s+(?:
        (?:(?:all|any|every|each|of|the|these|those|your|my)\s+){0,3}
            (?:previous|prior|above|earlier|preceding|foregoing|former)\s+(?:\w+\s+)?
            (?:instructions?|prompts?|directions|directives|guidelines)
        |(?:all|any|every)\s+(?:of\s+)?(?:the\s+|your\s+|these\s+)?
            (?:instructions?|prompts?|directions|directives)
        |(?:the\s+|your\s+|any\s+|all\s+)?(?:system|developer)\s+(?:prompt|message|instructions)
        |(?:all\s+(?:of\s+)?)?your\s+(?:\w+\s+)?
            (?:rules|guidelines|instructions|programming|training|restrictions|guardrails)
        |everything\s+(?:above|before|you\s+(?:were|have\s+been)\s+told)
    )\b""",
    re.I | re.X,
)
_PERSONA = re.compile(
    r"""(?:^|[.!?:]\s+)[ \t>*#-]*
    (?:you\s+are\s+now|from\s+now\s+on,?\s+you\s+are)\s+
        (?:an?\s|the\s|my\s|no\s+longer\b|free\b|unrestricted|unfiltered|jailbroken|dan\b
        |in\s+\w+\s+mode\b|called\b|named\b)
    |from\s+now\s+on,?\s+you\s+will\s+(?:act|behave|roleplay|pretend)\b""",
    re.I | re.X | re.M,
)
_NEW_INSTRUCTIONS = re.compile(
    _LINE_START + r"(?:new|updated|revised|real|actual|true|hidden|secret)\s+(?:system\s+)?instructions?"
    r"(?:\*\*)?\s*:"
    r"|\byour\s+(?:new|real|true|actual)\s+(?:instructions|purpose|role|directive)\s+(?:is|are)\b",
    re.I | re.M,
)
_ROLE_TOKEN = re.compile(
    r"<\|(?:im_start|im_end|im_sep|system|user|assistant|endoftext|begin_of_text"
    r"|start_header_id|end_header_id|eot_id)\|>"
    r"|\[/?INST\]|<</?SYS>>|</?system(?:[-_](?:prompt|message|reminder))?\s*>",
    re.I,
)
_DIRECTIVE_START = (
    r"(?:you\b|your\b|ignore|disregard|forget|always\b|never\b|do\s+not|don'?t|must\b|from\s+now"
    r"|respond|reply|answer|act\b|pretend|override|reveal|only\b|as\s+an?\s+ai|the\s+(?:assistant|ai|model))"
)
_ROLE_LINE = re.compile(
    _LINE_START + r"(?:system|developer)(?:\s+(?:prompt|message|instructions?|override))?"
    r"(?:\*\*)?\s*:(?:\*\*)?\s*" + _DIRECTIVE_START,
    re.I | re.M,
)
_TURN_MARKER = re.compile(_LINE_START + r"(?:Human|Assistant|HUMAN|ASSISTANT)(?:\*\*)?:(?:\*\*)?(?:\s|$)", re.M)


def _has_role_token(text: str) -> bool:
    # A marker written as inline code (`<|im_start|>`) documents a prompt format.
    for match in _ROLE_TOKEN.finditer(text):
        start, end = match.span()
        if not (text[start - 1 : start] == "`" and text[end : end + 1] == "`"):
            return True
    return False


def _has_role_marker(text: str) -> bool:
    return _has_role_token(text) or bool(_ROLE_LINE.search(text)) or bool(_TURN_MARKER.search(text))


_INJECTIONS = (
    _Detector(
        "injection: override instruction",
        ("ignore", "disregard", "forget", "override", "bypass"),
        _found(_OVERRIDE),
    ),
    _Detector("injection: persona switch", ("you are now", "from now on"), _found(_PERSONA)),
    _Detector(
        "injection: new instructions",
        ("instruction", "purpose", "role", "directive"),
        _found(_NEW_INSTRUCTIONS),
    ),
    _Detector(
        "injection: role marker",
        ("<|", "[inst]", "[/inst]", "<<sys", "system", "human", "assistant", "developer"),
        _has_role_marker,
    ),
)

_DETECTORS = _PROVIDER_TOKENS + _ASSIGNED_SECRETS + _INJECTIONS


def scan(text: str) -> str | None:
    """Return a short label for the first secret or prompt-injection found in text, else None."""
    lowered = text.lower()
    for detector in _DETECTORS:
        if any(trigger in lowered for trigger in detector.triggers) and detector.matches(text):
            return detector.label
    return None


def evaluate(path: str | PathLike[str]) -> dict[str, float | int]:
    """Precision and recall of ``scan`` on a labelled JSONL set.

    Each line is ``{"text": ..., "label": "secret" | "injection" | null}``. A
    hit counts as a true positive only when its kind matches the label; a hit
    of the wrong kind is both a false positive and a false negative.
    """
    import json  # only the test and docs need this; keep it off the hook path

    true_positive = false_positive = false_negative = lines = 0
    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            lines += 1
            case = json.loads(raw)
            found = scan(case["text"])
            predicted = found.split(":", 1)[0] if found else None
            expected = case["label"]
            if predicted is not None and predicted == expected:
                true_positive += 1
                continue
            false_positive += predicted is not None
            false_negative += expected is not None
    flagged = true_positive + false_positive
    relevant = true_positive + false_negative
    return {
        "precision": true_positive / flagged if flagged else 1.0,
        "recall": true_positive / relevant if relevant else 1.0,
        "true_positive": true_positive,
        "false_positive": false_positive,
        "false_negative": false_negative,
        "lines": lines,
    }
