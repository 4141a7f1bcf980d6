"""The internal gRPC gateway: admin and audit services for operators."""
