"""`onceflow-ops clients ...`: create, list, update, rotate and revoke API clients, each named
by its name or its id (docs/operations.md)."""

from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import typer

from onceflow import client_keys
from onceflow.settings import get_settings
from services.ops import client_queries, clients
from services.ops.output import JsonFlag, Listing, console, emit_json, readable_errors, stamp

app = typer.Typer(help="API clients and their keys.", no_args_is_help=True)
SCOPES_HELP = "Comma-separated: orders:write, orders:read."
CLIENT_HELP = "The client's name or id (as `clients list` shows them)."
RATE_HELP = "Requests/s (default: the API's)."
KEY_ONCE = "This key is shown only now: store it safely (it cannot be recovered)."
EXPIRES_HELP = "The new key stops working after this long (90s, 30m, 24h, 7d, 2w; default never)."
OVERLAP_HELP = (
    "The older keys keep working this long (e.g. 24h), then stop; without it they work until "
    "`revoke CLIENT --old-keys`."
)


def _duration(text: str | None) -> timedelta | None:
    return None if text is None else clients.parse_duration(text)


def _show(issued: client_keys.Issued, as_json: bool, **until: timedelta | None) -> None:
    """The new key, and when it (`key_expires_at`) or the older keys (`older_keys_expire_by`)
    stop working, if they do."""
    now = datetime.now(UTC)
    ends = {name: now + delta for name, delta in until.items() if delta is not None}
    if as_json:
        emit_json({**asdict(issued), **ends} if ends else issued)
        return
    console.print(f"client {issued.name} ({issued.client_id}), scopes {', '.join(issued.scopes)}")
    typer.echo(issued.key)
    console.print(KEY_ONCE)
    for name, at in ends.items():
        console.print(f"{name.replace('_', ' ')} {stamp(at)}")


@app.command()
def create(
    name: str,
    scopes: str = typer.Option(..., "--scopes", help=SCOPES_HELP),
    rate: float | None = typer.Option(None, "--rate", help=RATE_HELP),
    expires_in: str | None = typer.Option(None, "--expires-in", help=EXPIRES_HELP),
    as_json: JsonFlag = False,
) -> None:
    """Create a client and print its key once (it works at once)."""
    with readable_errors("create"):
        lifetime = _duration(expires_in)
        issued = client_keys.create_client(
            settings=get_settings(),
            name=name,
            scopes=clients.parse_scopes(scopes),
            rate_per_s=rate,
            expires_in=lifetime,
        )
    _show(issued, as_json, key_expires_at=lifetime)


@app.command(name="list")
def list_(as_json: JsonFlag = False) -> None:
    """List every client (never a key)."""
    with readable_errors("list"):
        rows = client_queries.list_clients(settings=get_settings())
    if as_json:
        emit_json(rows)
        return
    columns: dict[str, Callable[[client_queries.ClientRow], object]] = {
        "client id": lambda r: r.id,
        "name": lambda r: r.name,
        "scopes": lambda r: ",".join(r.scopes),
        "rate/s": lambda r: r.rate_per_s or "default",
        "live keys": lambda r: r.live_keys,
        "last used": lambda r: stamp(r.last_used_at, "never"),
        "revoked": lambda r: stamp(r.revoked_at),
    }
    table = Listing(tuple(columns), title="API clients", right=("rate/s", "live keys"))
    for row in rows:
        table.add_row(*(cell(row) for cell in columns.values()))
    table.print()


@app.command()
def update(
    client: str = typer.Argument(..., help=CLIENT_HELP),
    rate: float | None = typer.Option(None, "--rate", help="Requests/s."),
    default_rate: bool = typer.Option(
        False, "--default-rate", help="Use the API's default rate again."
    ),
    as_json: JsonFlag = False,
) -> None:
    """Change a client's rate (every API worker uses it within 1 s)."""
    with readable_errors("update"):
        if (rate is None) == (not default_rate):
            raise client_keys.ClientError("give --rate REQUESTS_PER_S or --default-rate")
        client_keys.check_rate(rate)
        settings = get_settings()
        client_id = clients.resolve(settings=settings, client=client)
        clients.set_rate(settings=settings, client_id=client_id, rate_per_s=rate)
    if as_json:
        emit_json({"client_id": client_id, "rate_per_s": rate})
        return
    console.print(f"client {client_id}: rate {rate or 'the API default'} requests/s")


@app.command()
def rotate(
    client: str = typer.Argument(..., help=CLIENT_HELP),
    overlap: str | None = typer.Option(None, "--overlap", help=OVERLAP_HELP),
    expires_in: str | None = typer.Option(None, "--expires-in", help=EXPIRES_HELP),
    as_json: JsonFlag = False,
) -> None:
    """Issue a new key; older keys stay live for --overlap, or until `revoke CLIENT --old-keys`."""
    with readable_errors("rotate"):
        overlap_for, lifetime = _duration(overlap), _duration(expires_in)
        settings = get_settings()
        client_id = clients.resolve(settings=settings, client=client)
        issued = client_keys.issue_key(
            settings=settings, client_id=client_id, expires_in=lifetime, overlap=overlap_for
        )
    _show(issued, as_json, key_expires_at=lifetime, older_keys_expire_by=overlap_for)


@app.command()
def revoke(
    client: str = typer.Argument(..., help=CLIENT_HELP),
    old_keys: bool = typer.Option(False, "--old-keys", help="Only keys older than the newest."),
    as_json: JsonFlag = False,
) -> None:
    """Revoke a client and all its keys (effective on every API worker within 1 s)."""
    with readable_errors("revoke"):
        settings = get_settings()
        client_id = clients.resolve(settings=settings, client=client)
        count = clients.revoke(settings=settings, client_id=client_id, old_keys_only=old_keys)
    what = "older keys" if old_keys else "client and keys"
    if as_json:
        emit_json({"client_id": client_id, "revoked": what, "keys_stopped": count})
        return
    console.print(f"revoked {client_id}: {what} ({count} key(s) stopped working)")
