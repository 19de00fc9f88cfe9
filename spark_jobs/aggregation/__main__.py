"""`python -m spark_jobs.aggregation` (streaming) or `... --backfill [--reset]` (rebuild)."""

import typer

from spark_jobs.aggregation.job import run

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@app.command()
def main(
    backfill: bool = typer.Option(
        False, "--backfill", help="Read the topic from the earliest offset once, then exit."
    ),
    reset: bool = typer.Option(
        False, "--reset", help="With --backfill: empty the analytics tables first."
    ),
) -> None:
    """Run the aggregation job (streaming by default)."""
    raise typer.Exit(run(backfill=backfill, reset=reset))


if __name__ == "__main__":
    app()
