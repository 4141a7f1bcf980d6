"""Schema names a client generator can build on.

Generators name a class after its component (or its `title`): two shapes with one title make
them drop the operations that use either (`openapi-python-client`: "Endpoint will not be
generated" for `POST /orders`). So every request body is a component named for its operation
(`CreateOrderRequest`), every component's title is its own name, and nothing is left that no
operation reaches.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

REF_PREFIX = "#/components/schemas/"
# Kept though no partner operation points to them: the `webhooks` section and the envelope
# every error status answers reach them through references added after naming.
ALWAYS_KEPT = frozenset({"ErrorEnvelope", "WebhookEvent"})


def operations(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for item in document.get("paths", {}).values():
        yield from (op for op in item.values() if isinstance(op, dict) and "responses" in op)


def request_name(operation_id: str) -> str:
    """`createOrder` -> `CreateOrderRequest`."""
    return operation_id[:1].upper() + operation_id[1:] + "Request"


def name_request_bodies(document: dict[str, Any]) -> None:
    """Each JSON body becomes its own component `<OperationId>Request`: a struct two operations
    share (`POST /orders` and `POST /quotes`) is copied, an inline schema is lifted."""
    schemas: dict[str, Any] = document["components"]["schemas"]
    for operation in operations(document):
        media = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if media is None or "operationId" not in operation:
            continue
        name = request_name(operation["operationId"])
        pointer = _body_reference(media["schema"])
        if pointer is None:  # an inline schema
            schemas[name] = media["schema"]
            media["schema"] = {"$ref": REF_PREFIX + name}
        else:  # `Body` or `Body | None`: the struct's component, under the operation's name
            schemas[name] = copy.deepcopy(schemas[ref_name(pointer)])
            pointer["$ref"] = REF_PREFIX + name


def _body_reference(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The `{"$ref": ...}` node naming the body's struct, itself or its one referenced choice."""
    if "$ref" in schema:
        return schema
    choices = [c for c in schema.get("oneOf", schema.get("anyOf", [])) if "$ref" in c]
    return choices[0] if len(choices) == 1 else None


def ref_name(schema: dict[str, Any]) -> str:
    return str(schema["$ref"]).removeprefix(REF_PREFIX)


def merge_components(
    schemas: dict[str, Any], rendered: dict[str, Any], top: str, suffix: str = "Input"
) -> dict[str, str]:
    """Adds components rendered apart (msgspec's, of a body decoded by hand) to `schemas`: one
    equal to a component of the same name is that component; one that differs gets `suffix`
    (the request `Destination` is not the answered one). Returns the old name -> new name."""
    renamed: dict[str, str] = {}
    for name, schema in rendered.items():
        new = name
        if name != top and name in schemas and _shape(schemas[name]) != _shape(schema):
            new = name + suffix
        renamed[name] = new
    for name, schema in rendered.items():
        schemas[renamed[name]] = _rename_refs(schema, renamed)
    return renamed


def _shape(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema less what the two renderings word apart for one struct: msgspec writes the
    title and `additionalProperties: false` (added to Litestar's later, `_shape_inputs`)."""
    return {k: v for k, v in schema.items() if k not in ("title", "additionalProperties")}


def _rename_refs(node: Any, renamed: dict[str, str]) -> Any:
    if isinstance(node, list):
        return [_rename_refs(item, renamed) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _rename_refs(value, renamed) for key, value in node.items()}
    if isinstance(out.get("$ref"), str):
        name = ref_name(out)
        out["$ref"] = REF_PREFIX + renamed.get(name, name)
    return out


def collapse_single_choices(node: Any) -> None:
    """`T | UNSET` renders as a `oneOf` of one branch: that branch is the schema (an empty
    choice says nothing and trips linters). The node's own keywords win over the branch's."""
    if isinstance(node, list):
        for item in node:
            collapse_single_choices(item)
        return
    if not isinstance(node, dict):
        return
    for keyword in ("oneOf", "anyOf"):
        choices = node.get(keyword)
        if isinstance(choices, list) and len(choices) == 1:
            (branch,) = node.pop(keyword)
            own = dict(node)
            node.clear()
            node.update({**branch, **own})
    for value in node.values():
        collapse_single_choices(value)


def drop_unreached(document: dict[str, Any]) -> None:
    """Components no operation, webhook or other reached component refers to are dropped;
    every kept one is titled by its own name, so no two share a title."""
    schemas: dict[str, Any] = document["components"]["schemas"]
    reached: set[str] = set(ALWAYS_KEPT & schemas.keys())
    todo: list[Any] = [document.get("paths", {}), document.get("webhooks", {})]
    todo += [schemas[name] for name in reached]
    while todo:
        node = todo.pop()
        if isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, dict):
            if isinstance(node.get("$ref"), str) and node["$ref"].startswith(REF_PREFIX):
                name = ref_name(node)
                if name not in reached and name in schemas:
                    reached.add(name)
                    todo.append(schemas[name])
            todo.extend(node.values())
    for name in list(schemas):
        if name in reached:
            schemas[name]["title"] = name
            # Litestar gives a struct's docstring as its description in some builds of a
            # process and not in others (seen with `SwapOut`): none, so the document served and
            # the one `make lint` checks are the same whatever ran before.
            schemas[name].pop("description", None)
        else:
            del schemas[name]


def split_nullable_enums(node: Any) -> None:
    """`Literal[...] | None` renders as one schema typed `["null", "string"]` with `null` in
    its enum; generators read that as three unions. A choice of the enumeration or null says
    the same in the form they map to `Enum | None`."""
    if isinstance(node, list):
        for item in node:
            split_nullable_enums(item)
        return
    if not isinstance(node, dict):
        return
    kinds, values = node.get("type"), node.get("enum")
    if isinstance(kinds, list) and "null" in kinds and isinstance(values, list) and None in values:
        (kind,) = [k for k in kinds if k != "null"]
        enumeration = {"type": kind, "enum": [v for v in values if v is not None]}
        del node["type"], node["enum"]
        node["oneOf"] = [enumeration, {"type": "null"}]
    for value in node.values():
        split_nullable_enums(value)
