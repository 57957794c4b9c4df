"""Fitted weights of the relevance decision (`relevance`): written by `benchmarks/fit.py`, not by hand.

Fitted on 4702 cases of 13 sets; see docs/routing.md.
"""

# fmt: off
CANDIDATE = {
    'bias': -2.4575,
    'bm25': 0.1343,
    'bm25_share': 0.5301,
    'rank': -0.6893,
    'gap': 1.019,
    'name': -0.1363,
    'lead': 1.7244,
    'body': 0.5547,
    'name_max': 1.7976,
    'strong_max': -0.2547,
    'keyword': 0.5914,
    'named': 0.4976,
    'held': 0.4302,
    'coverage': 0.7392,
    'support': -0.0298,
    'words': -0.9678,
    'name_rarity': 1.1227,
    'name_coverage': 0.8833,
    'centrality': 3.5006,
}
QUERY = {
    'bias': -2.9339,
    'best': 3.5286,
    'best_logit': -0.0119,
    'second_share': 0.7155,
    'best_name': -0.2651,
    'best_lead': 0.6905,
    'best_strong': -1.0554,
    'best_bm25': 0.1707,
    'best_support': 2.9688,
    'best_coverage': -0.8932,
    'joint': -0.4232,
    'named': -0.3143,
    'unknown': 4.1688,
    'unknown_folder': -26.2154,
    'folder': 4.2284,
    'strong_words': 7.4146,
    'code': 6.8899,
    'words': -0.3001,
}
THRESHOLDS = {
    'gated_from': 8,
    'on_topic': 0.8,
    'sure': 1.01,
    'select': 0.1,
    'relative': 0.3,
    'body': 0.2205,
    'plausible': 0.0196,
}
# fmt: on
