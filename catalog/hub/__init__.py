"""Any model on the Hugging Face Hub: ``org/name[@revision]`` resolved from its config.

* :mod:`.ref`: ``org/name@rev`` references, and which query words name one;
* :mod:`.families`: ``config.json`` to the engine's architecture, per ``model_type``
  (the older plain-MLP families in :mod:`.families_classic`; typed, bounded field reads
  in :mod:`.config_fields`);
* :mod:`.checkpoint`: parameter counts from safetensors metadata (the cross-check);
* :mod:`.client`: the HTTP requests (aiohttp) and the Hub's error answers;
* :mod:`.resolver`: one resolution, cached; :class:`~.resolver.HubResolver`;
* :mod:`.settings`: endpoint, timeout, cache lifetimes; :mod:`.errors`: ``HubError``.

Resolution happens before the engine runs: the resolved
:class:`~engine.specs.ModelSpec` joins a copy of the catalog
(:meth:`~engine.specs.Catalog.with_models`) and the estimate runs on that copy. This
package's ``__init__`` imports nothing heavy: the terminal front end imports
:mod:`.ref` on every run, and aiohttp only when a query names a Hub model.
"""

from catalog.hub.errors import HubError, HubErrorKind
from catalog.hub.ref import HubRef, hub_ref_for_word, looks_like_hub_id, needs_hub

__all__ = [
    "HubError",
    "HubErrorKind",
    "HubRef",
    "hub_ref_for_word",
    "looks_like_hub_id",
    "needs_hub",
]
