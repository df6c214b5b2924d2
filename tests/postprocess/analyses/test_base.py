"""An analysis or digest returns exactly the columns it declares, in order, or the report stops naming it."""

from __future__ import annotations

import pandas as pd
import pytest

from postprocess.analyses.base import Analysis, Digest
from postprocess.settings import ReportSettings

COLUMNS = {"model": "the model", "acc": "accuracy"}


def _analysis(table: pd.DataFrame) -> Analysis:
    return Analysis("demo", "A demo table.", COLUMNS, lambda frame, options: table)


def test_the_declared_columns_pass():
    table = pd.DataFrame({"model": ["m"], "acc": [0.5]})
    assert _analysis(table).run(pd.DataFrame(), ReportSettings()) is table


@pytest.mark.parametrize(
    "columns",
    [["model"], ["acc", "model"], ["model", "acc", "extra"]],
    ids=["a column missing", "columns out of order", "an undeclared column"],
)
def test_other_columns_stop_the_report_naming_the_table(columns):
    table = pd.DataFrame({c: [1] for c in columns})
    with pytest.raises(RuntimeError, match=r"analysis 'demo' returned columns .*declared \['model', 'acc'\]"):
        _analysis(table).run(pd.DataFrame(), ReportSettings())
    digest = Digest("summary_demo", "A demo digest.", COLUMNS, lambda tables, frame, options: table)
    with pytest.raises(RuntimeError, match=r"table 'summary_demo' returned columns"):
        digest.run({}, pd.DataFrame(), ReportSettings())
