"""Operations: `readiness` (what `/readyz` and the gRPC health service report)."""
