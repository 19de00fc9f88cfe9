"""The OpenAPI document: FastAPI's, plus the problem schema and the configured currencies."""

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from onceflow.settings import ApiSettings
from services.orders.entrypoints.auth import PREFIX, SCHEME, bearer
from services.orders.entrypoints.problems import Problem, auth_responses


def install(app: FastAPI, api: ApiSettings) -> None:
    """Replace `app.openapi` with a builder that completes the generated document once."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            schemas = doc.setdefault("components", {}).setdefault("schemas", {})
            problem = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas.update(problem.pop("$defs", {}))
            schemas["Problem"] = problem
            schemas["OrderIn"]["properties"]["currency"]["enum"] = list(api.api_currencies)
            # The key is checked by the middleware (auth.Authenticator), not by a dependency, so
            # the bearer scheme is declared here, on every operation under PREFIX.
            schemes = doc["components"].setdefault("securitySchemes", {})
            schemes[SCHEME] = bearer.model.model_dump(mode="json", by_alias=True, exclude_none=True)
            for path, item in doc.get("paths", {}).items():
                if path == PREFIX or path.startswith(PREFIX + "/"):
                    for operation in item.values():
                        operation["security"] = [{SCHEME: []}]
                        operation["responses"].update(
                            {str(status): body for status, body in auth_responses().items()}
                        )
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = build  # type: ignore[method-assign]
