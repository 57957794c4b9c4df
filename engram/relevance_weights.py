"""Fitted weights of the relevance decision (`relevance`): written by `benchmarks/fit.py`, not by hand.

Fitted on 4702 cases of 13 sets; see docs/routing.md.
"""

# fmt: off
CANDIDATE = {
    'bias': -2.1222,
    'bm25': 1.3308,
    'bm25_share': 0.1795,
    'rank': -0.6951,
    'gap': 1.3362,
    'name': -2.0873,
    'lead': -0.0969,
    'body': -1.1021,
    'name_max': 1.8108,
    'strong_max': -0.4967,
    'keyword': 0.4927,
    'named': 0.9255,
    'held': 0.7248,
    'coverage': -0.6309,
    'support': 0.9226,
    'words': -0.9631,
    'name_rarity': 1.127,
    'name_coverage': 0.1107,
    'centrality': 3.2011,
}
QUERY = {
    'bias': -0.6442,
    'best': 1.5976,
    'best_logit': 0.179,
    'second_share': 0.6522,
    'best_name': 0.1038,
    'best_lead': 1.0248,
    'best_strong': -0.7614,
    'best_bm25': 0.3538,
    'best_support': 2.8439,
    'best_coverage': -1.0579,
    'joint': -0.3498,
    'named': -0.414,
    'unknown': 3.4204,
    'unknown_folder': -25.0089,
    'folder': 4.1525,
    'strong_words': 5.0004,
    'code': 6.8416,
    'words': -0.9552,
}
THRESHOLDS = {
    'on_topic': 0.8,
    'sure': 1.01,
    'select': 0.02,
    'relative': 0.3,
    'gated_from': 8,
    'body': 0.2401,
    'plausible': 0.02,
}
# fmt: on
