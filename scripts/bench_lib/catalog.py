"""Every system scripts/bench knows, by name: the single servers (systems.py) and the clusters
(cluster.py). Its own module, so that cluster.py builds on systems.py and nothing points back."""
from __future__ import annotations

from .cluster import cluster_systems
from .systems import PANES_RX_BUFFER, Nchan, Panes, Raw, System, YWebsocket


def all_systems() -> dict[str, System]:
    systems = [Panes(), Raw(), Nchan(), YWebsocket(), Panes("memory"), Raw("libev"),
               Raw(rx_buffer=PANES_RX_BUFFER), Raw("libev", rx_buffer=PANES_RX_BUFFER),
               Panes(loop="libev"), Panes(loop="poll"), Panes("postgres"), Panes(restart="kill"),
               *cluster_systems()]
    return {s.name: s for s in systems}
