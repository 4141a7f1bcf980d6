"""Server reflection under both names clients ask for: `grpc.reflection.v1` (the stable name
buf curl, grpcurl and grpcui try first) and `grpc.reflection.v1alpha`.

grpcio-reflection 1.85.1 ships only v1alpha: its servicer, and its reflection.proto in the
descriptor pool. The v1 protocol is the same messages under another package, so one servicer
answers both (v1alpha messages encode exactly as the v1 ones), and the v1 file is added to the
pool, made from the v1alpha one, so that reflection can describe the v1 service too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2

V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"
V1_FILE = "grpc/reflection/v1/reflection.proto"
V1ALPHA_PACKAGE = reflection_pb2.DESCRIPTOR.package


def _v1_type(name: str) -> str:
    return name.replace(f".{V1ALPHA_PACKAGE}.", ".grpc.reflection.v1.", 1)


def _retype(message: descriptor_pb2.DescriptorProto) -> None:
    for field in message.field:
        if field.type_name:
            field.type_name = _v1_type(field.type_name)
    for nested in message.nested_type:
        _retype(nested)


def add_v1_reflection_file(pool: Any = None) -> None:
    """The v1 reflection.proto in the pool, once (the same file under package v1)."""
    pool = pool or descriptor_pool.Default()
    try:
        pool.FindFileByName(V1_FILE)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name, proto.package = V1_FILE, "grpc.reflection.v1"
    proto.options.Clear()  # v1alpha's: its language packages, and deprecated in favour of v1
    for message in proto.message_type:
        _retype(message)
    for method in (m for service in proto.service for m in service.method):
        method.input_type, method.output_type = (
            _v1_type(method.input_type),
            _v1_type(method.output_type),
        )
    pool.AddSerializedFile(proto.SerializeToString())


def enable_reflection(service_names: Sequence[str], server: Any) -> None:
    add_v1_reflection_file()
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
