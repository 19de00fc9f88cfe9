"""`onceflow-ops clients ...`: create, list, rotate and revoke API clients (docs/operations.md)."""

from collections.abc import Callable
from uuid import UUID

import typer
from rich.table import Table

from onceflow.settings import get_settings
from services.ops import client_queries, clients
from services.ops.output import JsonFlag, console, emit_json, readable_errors

app = typer.Typer(help="API clients and their keys.", no_args_is_help=True)
SCOPES_HELP = "Comma-separated: orders:write, orders:read."
KEY_ONCE = "This key is shown only now: store it safely (it cannot be recovered)."


def _show(issued: clients.Issued, as_json: bool) -> None:
    if as_json:
        emit_json(issued)
        return
    console.print(f"client {issued.name} ({issued.client_id}), scopes {', '.join(issued.scopes)}")
    typer.echo(issued.key)
    console.print(KEY_ONCE)


@app.command()
def create(
    name: str,
    scopes: str = typer.Option(..., "--scopes", help=SCOPES_HELP),
    rate: float | None = typer.Option(None, "--rate", help="Requests/s (default: the API's)."),
    as_json: JsonFlag = False,
) -> None:
    """Create a client and print its key once."""
    with readable_errors("create"):
        issued = clients.create_client(
            settings=get_settings(), name=name, scopes=clients.parse_scopes(scopes), rate_per_s=rate
        )
    _show(issued, as_json)


@app.command(name="list")
def list_(as_json: JsonFlag = False) -> None:
    """List every client (never a key)."""
    with readable_errors("list"):
        rows = client_queries.list_clients(settings=get_settings())
    if as_json:
        emit_json(rows)
        return
    table = Table(title="API clients")
    columns: dict[str, Callable[[client_queries.ClientRow], object]] = {
        "client id": lambda r: r.id,
        "name": lambda r: r.name,
        "scopes": lambda r: ",".join(r.scopes),
        "rate/s": lambda r: r.rate_per_s or "default",
        "live keys": lambda r: r.live_keys,
        "last used": lambda r: r.last_used_at or "never",
        "revoked": lambda r: r.revoked_at or "",
    }
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(str(cell(row)) for cell in columns.values()))
    console.print(table)


@app.command()
def rotate(
    client_id: UUID,
    as_json: JsonFlag = False,
) -> None:
    """Issue a new key; older keys stay live until `revoke CLIENT_ID --old-keys`."""
    with readable_errors("rotate"):
        issued = clients.issue_key(settings=get_settings(), client_id=client_id)
    _show(issued, as_json)


@app.command()
def revoke(
    client_id: UUID,
    old_keys: bool = typer.Option(False, "--old-keys", help="Only keys older than the newest."),
    as_json: JsonFlag = False,
) -> None:
    """Revoke a client and all its keys (effective on every API worker within 1 s)."""
    with readable_errors("revoke"):
        count = clients.revoke(settings=get_settings(), client_id=client_id, old_keys_only=old_keys)
    what = "older keys" if old_keys else "client and keys"
    if as_json:
        emit_json({"client_id": client_id, "revoked": what, "keys_stopped": count})
        return
    console.print(f"revoked {client_id}: {what} ({count} key(s) stopped working)")
