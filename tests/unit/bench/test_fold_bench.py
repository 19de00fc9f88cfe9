"""bench/fold_bench.py's pure parts: the variants' temp tables, the order of runs, statement
names, and the per-batch medians it reports."""

from bench import fold_bench
from bench.fold_bench import Timings
from spark_jobs.aggregation import merge, staging
from spark_jobs.aggregation.statements import sql


def test_the_uuid_variant_changes_only_the_order_id_of_the_tables_holding_one() -> None:
    tables = fold_bench.temp_tables("uuid")
    assert [t.name for t in tables] == [staging.EVENTS.name, merge.NEW.name, staging.REFUNDS.name]
    for table, original in zip(tables, (staging.EVENTS, merge.NEW, staging.REFUNDS), strict=True):
        assert table.names == original.names
        types = {c.name: c.pg_type for c in table.columns}
        assert types["order_id"] == "uuid"
        assert {n: t for n, t in types.items() if n != "order_id"} == {
            c.name: c.pg_type for c in original.columns if c.name != "order_id"
        }
    assert "order_id text" in staging.EVENTS.create()


def test_runs_alternate_so_each_variant_goes_first_in_half_the_rounds() -> None:
    order = [v.name for v in fold_bench.alternate(fold_bench.VARIANTS, 4)]
    a, b = (v.name for v in fold_bench.VARIANTS)
    assert order == [a, b, b, a, a, b, b, a]


def test_a_statement_is_named_by_its_sql_file_else_by_its_first_words() -> None:
    names = {sql("remember"): "remember"}
    assert fold_bench.statement_name(sql("remember"), names) == "remember"
    assert fold_bench.statement_name("ANALYZE  t_new", names) == "ANALYZE t_new"


def test_the_report_gives_each_batchs_medians_and_their_ratio() -> None:
    def timings(wall: float, cpu: float, remember: float) -> Timings:
        return Timings(statements={"remember": remember}, wall=wall, cpu=cpu)

    results = {
        "A": [[timings(4.0, 2.0, 1.0)], [timings(6.0, 3.0, 2.0)], [timings(5.0, 9.0, 3.0)]],
        "B": [[timings(2.0, 1.0, 1.0)], [timings(3.0, 1.5, 1.0)], [timings(9.0, 1.0, 1.0)]],
    }
    median = fold_bench.median_of(results["A"], 0)
    assert (median.wall, median.cpu, median.statements) == (5.0, 3.0, {"remember": 2.0})
    text = fold_bench.report(results)
    assert text.splitlines()[0] == (
        "batch 0: fold wall A 5.00s, B 3.00s (B/A 0.60); backend CPU A 3.00s, B 1.00s (B/A 0.33)"
    )
    assert "remember" in text.splitlines()[1]
    assert text.splitlines()[1].endswith("B/A 0.50")
