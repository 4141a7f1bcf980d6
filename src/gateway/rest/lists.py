"""Keyset paging over a read-model table, newest first, by the `position` column."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from litestar import Request

from gateway.rest.auth import principal_of
from gateway.rest.pagination import bad_token, check_per_page, page_response

if TYPE_CHECKING:
    from runtime.container import Container


def container_of(request: Request[Any, Any, Any]) -> Container:
    container: Container = request.app.state["container"]
    return container


def origin_of(request: Request[Any, Any, Any]) -> str:
    """`PARTNER_API_PUBLIC_URL` when set (a proxy in front), else scheme and host as the client
    called us."""
    public_url: str | None = container_of(request).settings.public_url
    return public_url or f"{request.url.scheme}://{request.url.netloc}"


def list_page(
    request: Request[Any, Any, Any],
    *,
    table: str,
    where: Sequence[tuple[str, Any]],
    filters: Mapping[str, Any],
    per_page: int | None,
    page_token: str | None,
    render: Callable[[dict[str, Any]], Any],
    columns: str = "*",
) -> dict[str, Any]:
    """`where` holds (sql condition with one `?`, value) pairs; None values are skipped."""
    container = container_of(request)
    tenant = principal_of(request).tenant
    size = check_per_page(per_page)
    path = request.url.path
    tokens = container.extras["page_tokens"]
    clauses = [c for c, v in where if v is not None]
    params = [v for c, v in where if v is not None]
    if page_token:
        after = tokens.decode(page_token, path, filters, tenant)
        if not isinstance(after, int):
            raise ValueError("bad page position")
        clauses.append("position < ?")
        params.append(after)
    sql = f"SELECT {columns} FROM {table}"
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    sql += " ORDER BY position DESC LIMIT ?"
    with container.read_db.read() as cur:
        rows = cur.execute(sql, (*params, size + 1)).fetchall()
    more = len(rows) > size
    rows = rows[:size]
    next_token = tokens.encode(rows[-1]["position"], path, filters, tenant) if more else None
    return page_response(
        items=[render(row) for row in rows],
        per_page=size,
        path=path,
        filters=filters,
        next_token=next_token,
        origin=origin_of(request),
    )


def memory_page(
    request: Request[Any, Any, Any],
    keyed: Sequence[tuple[int, Any]],
    per_page: int | None,
    page_token: str | None,
) -> dict[str, Any]:
    """A page of an in-memory list given in the order shown, each item with a strictly
    decreasing key (as `list_page` pages a table by `position` DESC). The token holds the last
    key shown, so items added in front between two pages never shift the next one."""
    size = check_per_page(per_page)
    tokens = container_of(request).extras["page_tokens"]
    path, tenant = request.url.path, principal_of(request).tenant
    if page_token:
        after = tokens.decode(page_token, path, {}, tenant)
        if not isinstance(after, int):
            raise bad_token()
        keyed = [(key, item) for key, item in keyed if key < after]
    page = keyed[:size]
    next_token = tokens.encode(page[-1][0], path, {}, tenant) if len(keyed) > size else None
    return page_response(
        items=[item for _, item in page],
        per_page=size,
        path=path,
        filters={},
        next_token=next_token,
        origin=origin_of(request),
    )
