"""Server reflection under both names clients ask for: `grpc.reflection.v1alpha` (what
grpcio-reflection ships) and `grpc.reflection.v1` (the stable name newer clients try first).
The two protocols are the same messages under another package, so one servicer answers both,
its v1alpha messages encoding exactly as the v1 ones would."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"


def enable_reflection(service_names: Sequence[str], server: Any) -> None:
    names = (*service_names, reflection.SERVICE_NAME, V1_SERVICE_NAME)
    servicer = reflection.aio.ReflectionServicer(names)
    reflection.enable_server_reflection(names, server)
    handler = grpc.method_handlers_generic_handler(
        V1_SERVICE_NAME,
        {
            "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                servicer.ServerReflectionInfo,
                request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
                response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
