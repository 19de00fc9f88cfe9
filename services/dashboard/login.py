"""The dashboard's login (contract section 2b): every page, file and API but `/healthz` needs
the ops credential, by HTTP Basic. A browser asks for it once (its own login dialog) and sends
it with every later request of the session; curl takes
`-u "ops:$(cat .stack/secrets/ops-password)"` (docs/security.md).

A pure ASGI middleware, so the static files and unknown paths are covered as well as the routes.
"""

import base64
import binascii
import hmac
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from onceflow.problems import problem_response

# The liveness probe of the stack (it tells nothing about the pipeline).
OPEN_PATHS = frozenset({"/healthz"})
CHALLENGE = {"WWW-Authenticate": 'Basic realm="Onceflow dashboard", charset="UTF-8"'}


@dataclass(frozen=True)
class Login:
    """The one user name and password the dashboard accepts."""

    user: str
    password: str

    def accepts(self, authorization: str | None) -> bool:
        """True when an Authorization header carries exactly this user and password."""
        scheme, _, encoded = (authorization or "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
        user, colon, password = decoded.partition(b":")
        # Both compared in full, in constant time, whatever the first mismatch.
        same_user = hmac.compare_digest(user, self.user.encode())
        same_password = hmac.compare_digest(password, self.password.encode())
        return bool(colon) and same_user and same_password


class RequireLogin:
    """Answer 401 (problem+json, with a Basic challenge) to any HTTP request without the login."""

    def __init__(self, app: ASGIApp, login: Login) -> None:
        self.app = app
        self.login = login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        if self.login.accepts(Headers(scope=scope).get("authorization")):
            await self.app(scope, receive, send)
            return
        detail = "the dashboard needs the ops credential (HTTP Basic; docs/security.md)"
        response = problem_response(401, "login-required", detail, headers=CHALLENGE)
        await response(scope, receive, send)
