"""Read-model rows keep the text they always had (`json.dumps`): the audit replay compares the
rows a rebuild writes with those the live store holds, written by earlier versions too."""

from __future__ import annotations

import json

from conftest import RunningService
from test_orders_sandbox import counts, new_workspace, placed


def test_order_and_pending_action_rows_are_json_dumps_text(service: RunningService) -> None:
    with service.partner() as client:
        body = counts(new_workspace(client), a=1, profile_picture_url="http://10.0.0.5/me.png",
                      personas=[{"first_name": "Zoë", "last_name": "Ångström"}])
        order = placed(client, body)
        assert order["status"] == "action_required"
    service.wait_projections()
    with service.container.read_db.read() as cur:
        docs = [row["doc"] for table in ("orders", "pending_actions")
                for row in cur.execute(f"SELECT doc FROM {table}").fetchall()]  # noqa: S608
    assert len(docs) == 2
    for doc in docs:
        assert doc == json.dumps(json.loads(doc))  # spaced, non-ASCII escaped
