"""The library's nftables table: every rule it makes lives in ONE table, `inet onceflow_faults`,
one chain per fault (hooked on output: on loopback each packet passes it once), so a fault is
removed by deleting its chain and everything by deleting the table. A filter chain drops or
resets packets; a nat chain (priority -100, before the filters) redirects new connections."""

import itertools
import json
import os
import shutil
import subprocess

TABLE = "onceflow_faults"
_ids = itertools.count(1)


class NftError(RuntimeError):
    """nft refused a command (not root, no nf_tables in the kernel, a bad rule)."""


def _nft(*args: str, script: str | None = None) -> str:
    nft = shutil.which("nft") or next(
        (p for p in ("/usr/sbin/nft", "/sbin/nft") if os.access(p, os.X_OK)), None
    )
    if nft is None:
        raise NftError("nft is not installed: run `make up` as root once (it installs nftables)")
    done = subprocess.run(
        [nft, *args], input=script, capture_output=True, text=True, timeout=30, check=False
    )
    if done.returncode != 0:
        raise NftError(f"nft {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


_HOOKS = {
    "filter": "type filter hook output priority 0",
    "nat": "type nat hook output priority -100",
}


def add_chain(kind: str, rules: list[str], *, hook: str = "filter") -> str:
    """A new chain holding `rules` (nft rule statements), all added at once; returns its name."""
    chain = f"{kind}_{os.getpid()}_{next(_ids)}"
    lines = [
        f"add table inet {TABLE}",
        f"add chain inet {TABLE} {chain} {{ {_HOOKS[hook]}; policy accept; }}",
        *(f"add rule inet {TABLE} {chain} {rule}" for rule in rules),
    ]
    _nft("-f", "-", script="\n".join(lines) + "\n")
    return chain


def chains() -> list[str]:
    """The chains of the table now ([] without the table)."""
    listing = json.loads(_nft("-j", "list", "chains", "inet"))
    return [
        item["chain"]["name"]
        for item in listing["nftables"]
        if item.get("chain", {}).get("table") == TABLE
    ]


def delete_chain(chain: str) -> None:
    """Remove one fault (heal() may have removed it already); the table goes with its last
    chain."""
    left = chains()
    if chain in left:
        _nft("delete", "chain", "inet", TABLE, chain)
        left.remove(chain)
    if not left:
        delete_table()


def exists() -> bool:
    return f"table inet {TABLE}" in _nft("list", "tables").splitlines()


def delete_table() -> None:
    """Remove every rule of the library (adding the table first makes this never fail)."""
    _nft("-f", "-", script=f"add table inet {TABLE}\ndelete table inet {TABLE}\n")
