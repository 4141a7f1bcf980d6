"""partnerapi.v1, deprecated: the services of partnerapi.v2 under their first names, for
callers built against v1 until they move.

v1 answered some RPCs with a bare resource (`Organization`, `IssuedApiKey`, `OperatorReport`,
a streamed `StoredEvent` or `WorkItem`) where v2 wraps it in the RPC's own response message.
Every v1 request and resource encodes exactly as its v2 namesake, so each v1 RPC decodes its
request as the v2 one, runs the v2 servicer and sends the resource the v2 response wraps (or
the whole response where v1 already had one of that layout).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, TypeAlias

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message
from grpc.aio import ServicerContext

from partnerapi.v1 import admin_pb2 as admin_v1
from partnerapi.v1 import audit_pb2 as audit_v1
from partnerapi.v1 import fulfillment_pb2 as fulfillment_v1

V1_SERVICES: tuple[ServiceDescriptor, ...] = tuple(
    module.DESCRIPTOR.services_by_name[name]
    for module, name in (
        (admin_v1, "AdminService"),
        (audit_v1, "AuditService"),
        (fulfillment_v1, "FulfillmentService"),
    )
)
V1_SERVICE_NAMES = tuple(service.full_name for service in V1_SERVICES)


def _unwrap_field(v1: MethodDescriptor, v2: MethodDescriptor) -> str:
    """The field of the v2 response holding what v1 sent whole; "" when v1 sent it all."""
    wanted = v1.output_type.name
    for field in v2.output_type.fields:
        if field.message_type is not None and field.message_type.name == wanted:
            return str(field.name)
    return ""


Context: TypeAlias = "ServicerContext[Message, Message]"


def _serialize(message: Message) -> bytes:
    return bytes(message.SerializeToString())


def _handler(
    method: Callable[..., Any], v1: MethodDescriptor, v2: MethodDescriptor
) -> grpc.RpcMethodHandler:
    """`method`: the v2 servicer's (found by name, so untyped), unary or server streaming."""
    unwrap = _unwrap_field(v1, v2)
    request_class = message_factory.GetMessageClass(v2.input_type)

    def v1_response(response: Message) -> Message:
        return getattr(response, unwrap) if unwrap else response

    if v2.server_streaming:

        async def stream(request: Message, context: Context) -> AsyncIterator[Message]:
            async for response in method(request, context):
                yield v1_response(response)

        return grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=request_class.FromString, response_serializer=_serialize
        )

    async def unary(request: Message, context: Context) -> Message:
        return v1_response(await method(request, context))

    return grpc.unary_unary_rpc_method_handler(
        unary, request_deserializer=request_class.FromString, response_serializer=_serialize
    )


def v1_handlers(
    servicers: Mapping[str, object], v2_services: Mapping[str, ServiceDescriptor]
) -> list[grpc.GenericRpcHandler]:
    """Generic handlers answering every v1 RPC through the v2 servicer of the same service
    name (`servicers` and `v2_services` keyed by the short name, e.g. "AdminService")."""
    handlers = []
    for service in V1_SERVICES:
        servicer, v2_service = servicers[service.name], v2_services[service.name]
        methods = {
            v1.name: _handler(getattr(servicer, v1.name), v1, v2_service.methods_by_name[v1.name])
            for v1 in service.methods
        }
        handlers.append(grpc.method_handlers_generic_handler(service.full_name, methods))
    return handlers
