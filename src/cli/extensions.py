"""Sub-commands contributed by capabilities beyond accounts; each module registers itself."""

from __future__ import annotations

import cli.audit  # noqa: F401
import cli.fulfillment  # noqa: F401
import cli.wallet  # noqa: F401
import cli.webhooks  # noqa: F401
