from pathlib import Path

from bench.api_profile import KINDS, kind_of, shares


def test_each_sample_is_charged_to_its_innermost_frame(tmp_path: Path) -> None:
    raw = tmp_path / "samples.txt"
    raw.write_text(
        "process 1;Runner.run (asyncio/runners.py:118) 7\n"
        "process 1;place_order (services/orders/service_layer/services.py:40);"
        "BaseCursor._send_query_prepared (psycopg/_cursor_base.py:480) 5\n"
        "process 1;APIRoute.handle (fastapi/routing.py:90);"
        "require.<locals>.authorized (services/orders/entrypoints/auth.py:30) 3\n"
        "process 1;place_order (services/orders/service_layer/services.py:40);"
        "wait_async (psycopg/waiting.py:200) 2\n"
        "process 1;uuid4 (uuid.py:720) 1\n"
    )
    assert shares(raw) == {
        KINDS[0][0]: 7,
        "libpq: a statement sent to Postgres (C + kernel)": 5,
        "the API's own code": 3,
        "psycopg (Python)": 2,
        "other": 1,
    }


def test_the_first_matching_kind_wins() -> None:
    assert kind_of("RequestResponseCycle.send (uvicorn/protocols/http/httptools_impl.py:1)") == (
        "the HTTP answer written to the socket (C + kernel)"
    )
    assert kind_of("HttpToolsProtocol.data_received (uvicorn/protocols/http/h.py:1)") == (
        "uvicorn (Python)"
    )
