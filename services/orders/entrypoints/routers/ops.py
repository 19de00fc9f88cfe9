"""Operations endpoints: liveness, readiness (database + replication slot) and metrics."""

from fastapi import APIRouter, Request, Response

from onceflow.problems import problem_response
from onceflow.settings import Settings
from services.orders.entrypoints import metrics
from services.orders.entrypoints.dependencies import PoolDep
from services.orders.entrypoints.problems import problem_responses
from services.orders.entrypoints.schemas import Health

router = APIRouter(tags=["operations"])
SLOT_EXISTS = (
    "SELECT EXISTS (SELECT 1 FROM pg_replication_slots "
    "WHERE slot_name = %s AND database = current_database())"
)


@router.get("/healthz", response_model=Health)
async def healthz() -> Response:
    """The process is alive."""
    return Response(b'{"status":"ok"}', media_type="application/json")


@router.get("/readyz", response_model=Health, responses=problem_responses(503))
async def readyz(pool: PoolDep, request: Request) -> Response:
    """Ready when the database answers and the outbox replication slot exists."""
    settings: Settings = request.app.state.settings
    slot = settings.replication_slot
    async with pool.connection(timeout=2) as conn:
        row = await (await conn.execute(SLOT_EXISTS, (slot,))).fetchone()
    if not (row and row[0]):
        detail = f"replication slot {slot} does not exist: writes could miss Kafka"
        return problem_response(503, "not-ready", detail)
    return Response(b'{"status":"ready"}', media_type="application/json")


@router.get(
    "/metrics",
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
    response_class=Response,
)
async def prometheus() -> Response:
    """Prometheus text exposition."""
    body, content_type = metrics.exposition()
    return Response(body, media_type=content_type)
