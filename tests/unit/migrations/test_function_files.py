"""Every function file in migrations/sql/orders is created by the migrations, in a known order,
and a downgrade finds each function as its revision had it in migrations/sql/history."""

from migrations import functions


def test_every_function_file_is_in_the_creation_order() -> None:
    files = {path.stem for path in functions.FOLDER.glob("*.sql")}
    assert files == set(functions.ORDER)
    assert len(functions.ORDER) == len(set(functions.ORDER))


def test_each_file_defines_the_function_it_is_named_after() -> None:
    for name in functions.ORDER:
        text = (functions.FOLDER / f"{name}.sql").read_text()
        assert f"CREATE FUNCTION orders.{name}(" in text, name


def test_a_downgrade_finds_each_body_its_revision_had() -> None:
    at_0005 = functions.HISTORY / "0005"
    assert functions.definition("place_order", at_0005) == at_0005 / "place_order.sql"
    # emit_event changed first after 0012 (0013): 0005 had the body 0012 kept.
    at_0012 = functions.HISTORY / "0012" / "emit_event.sql"
    assert functions.definition("emit_event", at_0005) == at_0012
    assert functions.definition("iso_utc", at_0005) == functions.FOLDER / "iso_utc.sql"
    assert functions.definition("emit_event") == functions.FOLDER / "emit_event.sql"
    # claim_key changed first after 0021 (0022): every earlier revision had 0021's body.
    at_0021 = functions.HISTORY / "0021" / "claim_key.sql"
    assert functions.definition("claim_key", at_0005) == at_0021
    assert functions.definition("claim_key") == functions.FOLDER / "claim_key.sql"


def test_each_history_file_defines_the_function_it_is_named_after() -> None:
    for file in functions.HISTORY.glob("*/*.sql"):
        if file.stem in functions.ORDER:
            assert f"CREATE FUNCTION orders.{file.stem}(" in file.read_text(), file
