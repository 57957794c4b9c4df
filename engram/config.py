"""Configuration: nested JSON, layered defaults < user < global root < workspace root.

Unknown keys are kept when a file is rewritten; a bad value is reported
with its dotted key name and the default is used instead. Stdlib only.
"""

from __future__ import annotations

import json
import os
import re

from .errors import EngramError
from .paths import read_text, write_atomic
from .sources import CONFIG_FILE

DEFAULTS: dict = {
    "load": {"limit": 8, "expand_top": 3, "disclosure": "auto", "budget_tokens": 1600},
    # native: hosts that get rule files without a project link; start_watch: a read starts `engram watch`
    # (autowatch): true, false, or "auto" (where a call walked 1,000 memory files or more, outside CI)
    "hooks": {"path_rules": "native", "native": [], "start_watch": "auto"},
    "roles": [],
    "global_path": None,
    "global_index": None,
    "global_index_key": None,  # base64 ed25519 public key: global_index must carry its signature
    "global_index_sha256": None,  # or the SHA-256 the file must have
    "ignore": {"also": []},
}
LIMIT_RANGE = (1, 32)
MAX_CONFIG_BYTES = 1024 * 1024
_PUBLIC_KEY = re.compile(r"[A-Za-z0-9+/]{43}=")
_SHA256 = re.compile(r"[0-9a-f]{64}")
BUDGET_RANGE = (200, 16000)


def _copy(value):
    """A deep copy of JSON data, without the `copy` module (docs/architecture.md)."""
    return json.loads(json.dumps(value))


class Config:
    def __init__(self, data: dict, problems: list[str]) -> None:
        self.data = data
        self.problems = problems

    def get(self, dotted: str):
        node = self.data
        for part in dotted.split("."):
            node = node[part]
        return node

    def pack_budget(self) -> int | None:
        """The tokens a layered pack holds (`load.budget_tokens`); None when packs are full."""
        return None if self.get("load.disclosure") == "full" else self.get("load.budget_tokens")


class ConfigError(EngramError):
    """A config file engram cannot rewrite without losing what it holds."""


def user_config_dir() -> str:
    return os.environ.get("ENGRAM_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".engram")


def read_json(path: str, problems: list[str]) -> dict:
    try:
        raw = read_text(path, MAX_CONFIG_BYTES)
    except (FileNotFoundError, NotADirectoryError):  # no config there (a global "folder" that is a file is said once)
        return {}
    except UnicodeDecodeError:
        problems.append(f"{path}: cannot read config (not UTF-8 text)")
        return {}
    except OSError as exc:
        problems.append(f"{path}: cannot read config ({exc.strerror or exc})")
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        problems.append(f"{path}: invalid JSON at line {exc.lineno} ({exc.msg})")
        return {}
    except RecursionError:  # the C parser recurses once per level of nesting
        problems.append(f"{path}: config is nested too deeply")
        return {}
    except ValueError:  # a number of more than 4,300 digits, which Python refuses to read
        problems.append(f"{path}: config holds a number too long to read")
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path}: config must be a JSON object")
        return {}
    return data


def _merge(base: dict, over: dict) -> None:
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def load_config(*paths: str, user: bool = True) -> Config:
    """Merge the config files in order (later wins) over the defaults, then validate; ``user``: the
    user's own config first."""
    problems: list[str] = []
    data = _copy(DEFAULTS)
    for path in ((os.path.join(user_config_dir(), CONFIG_FILE),) if user else ()) + paths:
        _merge(data, read_json(path, problems))
    _validate(data, problems)
    return Config(data, problems)


def _int_in(data: dict, dotted: str, low: int, high: int, problems: list[str]) -> None:
    section, key = dotted.split(".")
    value = data[section].get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        problems.append(f"config {dotted}: must be an integer from {low} to {high}")
        data[section][key] = DEFAULTS[section][key]


def _check_choice(
    data: dict, dotted: str, allowed: tuple[str | bool, ...], problems: list[str], shown: str | None = None
) -> None:
    section, key = dotted.split(".")
    value = data[section].get(key)
    # by type too: 1 == True, so 1 would pass for true
    if not any(type(value) is type(choice) and value == choice for choice in allowed):
        problems.append(f"config {dotted}: must be {shown or 'one of ' + ', '.join(map(str, allowed))}")
        data[section][key] = DEFAULTS[section][key]


def _string_list(data: dict, key: str, problems: list[str], section: str | None = None) -> None:
    holder = data[section] if section else data
    value = holder.get(key)
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        name = f"{section}.{key}" if section else key
        problems.append(f"config {name}: must be a list of strings")
        value = []
    holder[key] = value


def _validate(data: dict, problems: list[str]) -> None:
    _misspelt(data, problems)
    for section in ("load", "hooks", "ignore"):
        if not isinstance(data.get(section), dict):
            problems.append(f"config {section}: must be an object")
            data[section] = _copy(DEFAULTS[section])
    _int_in(data, "load.limit", *LIMIT_RANGE, problems)
    _int_in(data, "load.expand_top", 0, 32, problems)
    _int_in(data, "load.budget_tokens", *BUDGET_RANGE, problems)
    _check_choice(data, "load.disclosure", ("auto", "full"), problems)
    _check_choice(data, "hooks.path_rules", ("native", "hook"), problems)
    _check_choice(data, "hooks.start_watch", (True, False, "auto"), problems, shown='true, false or "auto"')
    _rule_hosts(data, problems)
    _string_list(data, "roles", problems)
    data["roles"] = [r.lower() for r in data["roles"]]
    _string_list(data, "also", problems, section="ignore")
    for key in ("global_path", "global_index"):
        if data.get(key) is not None and not (isinstance(data[key], str) and "\0" not in data[key]):
            problems.append(f"config {key}: must be a path string or null")  # a NUL is no path the system takes
            data[key] = None
    _pattern(data, "global_index_key", _PUBLIC_KEY, "the base64 of an ed25519 public key (44 characters)", problems)
    _pattern(data, "global_index_sha256", _SHA256, "64 hexadecimal digits", problems)


def _misspelt(data: dict, problems: list[str]) -> None:
    """A setting that is a near miss of one engram reads (`load.limt`, `hooks.path_rule`): other
    keys are kept as they are, but this one would leave the setting meant at its default unsaid."""
    from .nearmiss import near_miss

    for prefix, section, defaults in [("", data, DEFAULTS)] + [
        (f"{name}.", data[name], DEFAULTS[name])
        for name in ("load", "hooks", "ignore")
        if isinstance(data.get(name), dict)
    ]:
        for key in section:
            if meant := near_miss(key, list(defaults)):
                problems.append(f"config {prefix}{key}: not a setting engram reads; did you mean {prefix}{meant}?")


def _rule_hosts(data: dict, problems: list[str]) -> None:
    """`hooks.native`: names of hosts that read native rule files, each kept once under its own name."""
    _string_list(data, "native", problems, section="hooks")
    named = data["hooks"]["native"]
    if not named:
        return
    from .hosts import HOSTS, host_named  # only here: `load` never imports the host family otherwise

    hosts = [host_named(name.strip().lower()) for name in named]
    if not all(host is not None and host.rules for host in hosts):
        readers = ", ".join(host.name for host in HOSTS.values() if host.rules)
        problems.append(f"config hooks.native: must name hosts that read native rule files ({readers})")
    data["hooks"]["native"] = list(dict.fromkeys(host.name for host in hosts if host is not None and host.rules))


def _pattern(data: dict, key: str, pattern, what: str, problems: list[str]) -> None:
    value = data.get(key)
    if value is not None and not (isinstance(value, str) and pattern.fullmatch(value)):
        # A pin that cannot be read must not fall back to trusting anything: it pins nothing
        # that could match, so the shared index is refused.
        problems.append(f"config {key}: must be {what}; the global index is refused until it is")
        data[key] = "invalid"


def update_config_file(path: str, dotted: str, value) -> None:
    """Set one dotted key in a config file, keeping every other key as it was, in its own text
    (`jsonkeep`); a file a rewrite would change elsewhere (a key given twice, `1e400`) is refused."""
    from . import jsonkeep  # a command that writes config only

    problems: list[str] = []
    data = read_json(path, problems) if os.path.exists(path) else {}
    if problems:
        raise ConfigError(problems[0])
    original = read_text(path, MAX_CONFIG_BYTES) if data else None
    try:
        jsonkeep.strict_loads(original or "{}")
    except jsonkeep.WouldChange as err:
        raise ConfigError(f"{path}: {err}; not changed") from None
    node = data
    *parents, last = dotted.split(".")
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    if value is None:
        node.pop(last, None)
    else:
        node[last] = value
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_atomic(path, jsonkeep.dumps(data, original))
