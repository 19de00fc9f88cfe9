"""Which tables `onceflow-ops analytics rebuild --tables` names, and how a fold's columns combine
with the recompute (pure: no database)."""

import pytest
from sqlalchemy import BigInteger, DateTime

from onceflow import recompute
from onceflow.schema import metadata
from services.ops.analytics_rebuild import COMBINE, RebuildError, _counted, parse_tables


def test_no_tables_means_all_four_in_their_order() -> None:
    assert parse_tables(None) == list(recompute.TABLES)
    assert parse_tables([]) == list(recompute.TABLES)


def test_tables_repeat_or_separate_with_commas_each_once() -> None:
    named = parse_tables(["product_sales, daily_sales", "daily_sales"])
    assert named == ["daily_sales", "product_sales"]


@pytest.mark.parametrize("value", ["customers", "daily_sales,analytics.daily_sales", "freshness"])
def test_an_unknown_table_is_a_sentence_naming_the_known_ones(value: str) -> None:
    with pytest.raises(RebuildError, match=r"unknown table .*: a rebuild recomputes daily_sales"):
        parse_tables([value])


@pytest.mark.parametrize("table", recompute.TABLES)
def test_every_column_is_a_key_a_count_or_a_combined_timestamp(table: str) -> None:
    """The rebuild adds what the folds added since its snapshot to every column but the key and
    COMBINE's: each must be a count or sum (bigint), each of COMBINE's a timestamp."""
    columns = metadata.tables[f"analytics.{table}"].columns
    for name in _counted(table):
        assert isinstance(columns[name].type, BigInteger), name
    for name in set(COMBINE) & set(recompute.names(table)):
        assert isinstance(columns[name].type, DateTime), name
    assert set(recompute.key(table)) | set(COMBINE) | set(_counted(table)) >= set(
        recompute.names(table)
    )
