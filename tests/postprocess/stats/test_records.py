"""Tests for postprocess.stats.records: every result dataclass and its as_dict."""

from __future__ import annotations

import dataclasses

from postprocess.stats import binomial_test, bootstrap_mean, chi2_uniform, fisher, mcnemar, tost_paired, wilson


def test_every_result_has_as_dict_with_its_fields():
    results = [
        wilson(1, 2),
        bootstrap_mean([1.0, 0.0], 10, seed=1),
        mcnemar(3, 1),
        fisher(1, 2, 3, 4),
        tost_paired([1, 0, 1, 1], [0, 0, 1, 0]),
        chi2_uniform([1, 2]),
        binomial_test(1, 2, 0.5),
    ]
    for r in results:
        assert dataclasses.is_dataclass(r)
        assert list(r.as_dict()) == [f.name for f in dataclasses.fields(r)]
