"""The HTTP API: decision log queries, "why is this application waiting", live state, health, metrics.

    from pyscheduler.api import ApiServer, ApiSettings, create_app
    app = create_app(store, state_provider, ApiSettings.from_config(cfg))
    server = ApiServer(app, cfg["http.host"], cfg["http.port"]); server.start()

`state_provider` implements pyscheduler.api.provider.StateProvider (the decision service's does:
pyscheduler/service/rmproxy/provider.py). Modules: app (routes), models (bodies), provider (the protocol),
stream (SSE), configcheck, server, roles (read and admin tokens), bodylimits (request body size and depth),
ui and ui_assets/ (the operator's page; its benchmark is pyscheduler/bench/ui.py).
"""

from pyscheduler.api.app import ApiSettings, create_app
from pyscheduler.api.provider import (
    ApplicationView,
    AskView,
    EmptyState,
    NodeView,
    StateProvider,
    StateView,
)
from pyscheduler.api.server import ApiServer

__all__ = [
    "ApiServer",
    "ApiSettings",
    "ApplicationView",
    "AskView",
    "EmptyState",
    "NodeView",
    "StateProvider",
    "StateView",
    "create_app",
]
