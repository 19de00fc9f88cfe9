"""`python -m tests.faults`: rehearse a network fault from a shell (docs/operations.md,
"Rehearsing network faults"). The fault holds for --seconds, or until Ctrl-C, and is removed
then, however the command ends; `heal` removes everything the library made, `status` lists it.
Run as root (nftables)."""

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType

import httpx

from stack.waiting import NotReadyError
from tests.faults import network, nft, toxiproxy
from tests.faults.nodes import NotLocalError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tests.faults", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in [
        ("partition", "no packet between A and B, either way"),
        ("isolate", "no packet between NODE and any other address"),
        ("loss", "drop PERCENT of the packets between A and B, either way"),
        ("delay", "answers from B to A come MS later (through a Toxiproxy link)"),
    ]:
        command = commands.add_parser(name, help=help_text)
        command.add_argument("nodes", nargs=1 if name == "isolate" else 2, metavar="NODE")
        if name == "loss":
            command.add_argument("percent", type=float)
        if name == "delay":
            command.add_argument("ms", type=int)
            command.add_argument("--jitter", type=int, default=0)
            command.add_argument("--port", type=int, required=True, help="the link listens here")
            command.add_argument("--upstream", required=True, help="host:port B serves on")
        command.add_argument("--seconds", type=float, help="hold this long (default: Ctrl-C)")
    commands.add_parser("heal", help="remove every rule, toxic and proxy of the library")
    commands.add_parser("status", help="what the library has in force now")
    return parser


@contextmanager
def _delay(a: str, b: str, ms: int, jitter: int, port: int, upstream: str) -> Iterator[None]:
    with network.link(a, b, port=port, upstream=upstream) as listen:
        print(f"point {a} at {listen}: it forwards to {upstream}")
        with network.delay(a, b, ms, jitter):
            yield


def _fault(args: argparse.Namespace) -> AbstractContextManager[None]:
    a, *rest = args.nodes
    if args.command == "partition":
        return network.partition(a, rest[0])
    if args.command == "isolate":
        return network.isolate(a)
    if args.command == "loss":
        return network.loss(a, rest[0], args.percent)
    return _delay(a, rest[0], args.ms, args.jitter, args.port, args.upstream)


def _stop_on_term(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "heal":
            network.clean_up()
        elif args.command == "status":
            print(f"nftables chains (table inet {nft.TABLE}): {nft.chains() or 'none'}")
            print(f"Toxiproxy proxies and their toxics: {toxiproxy.ours() or 'none'}")
        else:
            signal.signal(signal.SIGTERM, _stop_on_term)
            with _fault(args), contextlib.suppress(KeyboardInterrupt):
                print(f"{args.command} {' '.join(args.nodes)}: in force", flush=True)
                threading.Event().wait(args.seconds)  # None: until Ctrl-C or SIGTERM
            print("healed")
    except (NotLocalError, ValueError, nft.NftError, toxiproxy.ToxiproxyError) as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    except (NotReadyError, httpx.HTTPError) as exc:  # Toxiproxy did not start, or went away
        print(f"failed: Toxiproxy: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
