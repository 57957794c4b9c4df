"""One way to build a pack from config: the options `load`, the hooks, `graph`, `benchmark`, MCP and the fit share."""

from __future__ import annotations

from . import terms
from .config import Config
from .pack import Fits, Pack, PackOptions, Screen, build_pack, screen_text
from .render import render_text
from .route import Options, Routing, route


def options_from_config(
    config: Config,
    everything: bool = False,
    explain: bool = False,
    fetch_counts: dict | None = None,
    include_low: bool = False,
) -> Options:
    """``everything``: --all; ``explain``: dry-run and JSON; ``include_low``: show low-confidence memories
    (--id does, as --all does)."""
    return Options(
        limit=config.get("load.limit"),
        roles=tuple(config.get("roles")),
        include_low=include_low or everything,
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
    expand_top: int | None = None,
    exclude: frozenset[str] = frozenset(),
) -> PackOptions:
    """``everything``, ``full``, ``disclosure``: the --all, --full and --disclosure flags (the
    configured disclosure where the flag is not given); ``budget``: --budget-tokens, else the
    configured budget of a layered pack; ``expand_top``: bodies at most, else the configured
    number; ``exclude``: keys a hook session holds already."""
    layered = not (everything or full or (disclosure or config.get("load.disclosure")) == "full")
    if budget is None and layered:
        budget = config.get("load.budget_tokens")
    return PackOptions(
        limit=None if everything else config.get("load.limit"),
        expand_top=config.get("load.expand_top") if expand_top is None else expand_top,
        layered=layered,
        budget=budget,
        exclude=exclude,
        screen=screen,
    )


def within_tokens(budget: int | None) -> Fits | None:
    """Whether the pack's text is within ``budget`` tokens; None when there is no budget."""
    if budget is None:
        return None
    return lambda pack: terms.estimate_tokens(render_text(pack)) <= budget


def pack_routing(routing: Routing, options: Options, pack_options: PackOptions, fits: Fits | None = None) -> Pack:
    """The pack of a routing, fitted to ``fits`` (a host's limits) or else to the token budget."""
    return build_pack(routing, options, pack_options, fits or within_tokens(pack_options.budget))


def select_pack(layers: list, query: str, options: Options, pack_options: PackOptions) -> tuple[Routing, Pack]:
    """The routing and the pack `engram load` prints for a task."""
    routing = route(layers, query, options)
    return routing, pack_routing(routing, options, pack_options)
