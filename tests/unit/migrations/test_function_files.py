"""Every function file in migrations/sql/orders is created by the migrations, in a known order."""

from migrations import functions


def test_every_function_file_is_in_the_creation_order() -> None:
    files = {path.stem for path in functions.FOLDER.glob("*.sql")}
    assert files == set(functions.ORDER)
    assert len(functions.ORDER) == len(set(functions.ORDER))


def test_each_file_defines_the_function_it_is_named_after() -> None:
    for name in functions.ORDER:
        text = (functions.FOLDER / f"{name}.sql").read_text()
        assert f"CREATE FUNCTION orders.{name}(" in text, name
