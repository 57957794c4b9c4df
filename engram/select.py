"""One way to build a pack from config: the options `load`, `benchmark` and the fit share (stdlib only)."""

from __future__ import annotations

from . import terms
from .config import Config
from .pack import Pack, PackOptions, Screen, build_pack, screen_text
from .render import render_text
from .route import Options, Routing, route


def options_from_config(
    config: Config, everything: bool = False, explain: bool = False, fetch_counts: dict | None = None
) -> Options:
    return Options(
        limit=config.get("load.limit"),
        roles=tuple(config.get("roles")),
        include_low=everything,
        everything=everything,
        explain=explain,
        fetch_counts=fetch_counts,
    )


def pack_options_from_config(
    config: Config,
    everything: bool = False,
    full: bool = False,
    disclosure: str | None = None,
    budget: int | None = None,
    screen: Screen = screen_text,
) -> PackOptions:
    """``everything``, ``full``, ``disclosure``: the --all, --full and --disclosure flags (the
    configured disclosure where the flag is not given); ``budget``: --budget-tokens, else the
    configured budget of a layered pack."""
    layered = not (everything or full or (disclosure or config.get("load.disclosure")) == "full")
    if budget is None and layered:
        budget = config.get("load.budget_tokens")
    limit = None if everything else config.get("load.limit")
    return PackOptions(limit=limit, expand_top=config.get("load.expand_top"), layered=layered, budget=budget, screen=screen)


def select_pack(layers: list, query: str, options: Options, pack_options: PackOptions) -> tuple[Routing, Pack]:
    """The routing and the pack `engram load` prints for a task."""
    routing = route(layers, query, options)
    return routing, build_pack(routing, options, pack_options, lambda p: terms.estimate_tokens(render_text(p)))
