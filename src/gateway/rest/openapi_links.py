"""OpenAPI links: which answer names the resource another operation takes.

A client generator or a stateful tester (schemathesis' stateful phase) follows them from a
creation to the reads and moves of what it created, instead of guessing ids.
"""

from __future__ import annotations

from typing import Any

CREATED_ID = "$response.body#/data/id"
FIRST_LISTED_ID = "$response.body#/data/0/id"

# operationId of the answering operation -> (status, {link name: (target operationId,
# {parameter of the target: runtime expression on the answer})}).
LINKS: dict[str, tuple[str, dict[str, tuple[str, dict[str, str]]]]] = {
    "createWorkspace": (
        "201",
        {
            "GetWorkspace": ("getWorkspace", {"workspace_id": "$response.body#/data/workspace_id"}),
            "UpdateWorkspace": (
                "updateWorkspace",
                {"workspace_id": "$response.body#/data/workspace_id"},
            ),
        },
    ),
    "createBundle": (
        "201",
        {
            "GetBundle": ("getBundle", {"bundle_id": CREATED_ID}),
            "UpdateBundle": ("updateBundle", {"bundle_id": CREATED_ID}),
            "ArchiveBundle": ("archiveBundle", {"bundle_id": CREATED_ID}),
        },
    ),
    "createUser": ("201", {"GetUser": ("getUser", {"user_id": CREATED_ID})}),
    "createOrder": (
        "201",
        {
            "GetOrder": ("getOrder", {"order_id": CREATED_ID}),
            "CancelOrder": ("cancelOrder", {"order_id": CREATED_ID}),
            "ListPendingActions": ("listPendingActions", {"order_id": CREATED_ID}),
        },
    ),
    "purchaseDomains": ("201", {"GetOrder": ("getOrder", {"order_id": CREATED_ID})}),
    "listPendingActions": (
        "200",
        {
            "ResolvePendingAction": ("resolvePendingAction", {"action_id": FIRST_LISTED_ID}),
        },
    ),
    "listDomains": ("200", {"GetDomain": ("getDomain", {"domain_id": FIRST_LISTED_ID})}),
    "listEvents": (
        "200",
        {
            "GetEvent": ("getEvent", {"event_id": FIRST_LISTED_ID}),
            "RedeliverEvent": ("redeliverEvent", {"event_id": FIRST_LISTED_ID}),
        },
    ),
    "submitImportJob": ("201", {"GetImportJob": ("getImportJob", {"job_id": CREATED_ID})}),
    "setDomainForwarding": (
        "201",
        {
            "GetForwardingJob": ("getForwardingJob", {"job_id": CREATED_ID}),
        },
    ),
    "attachPoolDomains": (
        "202",
        {
            "GetPoolReservation": ("getPoolReservation", {"reservation_id": CREATED_ID}),
        },
    ),
    "releasePoolDomains": (
        "202",
        {
            "GetPoolRelease": ("getPoolRelease", {"release_id": CREATED_ID}),
        },
    ),
    "createSwap": ("201", {"GetSwap": ("getSwap", {"swap_id": CREATED_ID})}),
    "renameSwapUserNames": ("201", {"GetSwap": ("getSwap", {"swap_id": CREATED_ID})}),
}


def add_links(operation: dict[str, Any]) -> None:
    """The links of `LINKS` on this operation's answer, in place."""
    status, links = LINKS.get(operation.get("operationId", ""), ("", {}))
    response = operation.get("responses", {}).get(status)
    if response is None:
        return
    response["links"] = {
        name: {"operationId": target, "parameters": parameters}
        for name, (target, parameters) in links.items()
    }
