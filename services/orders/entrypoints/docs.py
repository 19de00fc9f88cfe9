"""`/docs`: Swagger UI from this machine, never a CDN. `npm ci` in services/orders
(stack/bootstrap.sh) installs the swagger-ui-dist that package-lock.json pins; its files are
served under /docs/assets."""

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse, Response

from onceflow.problems import problem_response

SWAGGER_UI = Path(__file__).resolve().parents[1] / "node_modules" / "swagger-ui-dist"
ASSETS = "/docs/assets"
FILES = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png")


def install(app: FastAPI) -> None:
    """Serve Swagger UI at /docs with its script, stylesheet and icon from /docs/assets."""
    assert app.docs_url is None, "FastAPI's own /docs loads Swagger UI from a CDN"
    app.mount(ASSETS, StaticFiles(directory=SWAGGER_UI, check_dir=False), name="swagger-ui")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> Response:
        if not all((SWAGGER_UI / name).is_file() for name in FILES):
            detail = "Swagger UI is not installed: run `npm ci` in services/orders (make up does)"
            return problem_response(503, "swagger-ui-missing", detail)
        page: HTMLResponse = get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
        )
        return page
