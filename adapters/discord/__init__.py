"""The Discord front end: ``/ftcost`` with autocomplete, embeds, buttons and thread follow-ups.

Modules, from the bottom up (only :mod:`.client` and :mod:`.runner` touch the network):

* :mod:`.limits`: Discord's published limits (embeds, components, autocomplete).
* :mod:`.ids`: the custom-id codec of the buttons and the card select (≤ 100 characters).
* :mod:`.options`: ``/ftcost``'s structured options merged with its free-text query.
* :mod:`.autocomplete`: fuzzy model and GPU choices from the catalog (≤ 25).
* :mod:`.embeds`: the shared :class:`~bot.service.Reply` rendered as embeds.
* :mod:`.views`: the persistent buttons and select (``discord.ui.DynamicItem``).
* :mod:`.commands`: the application commands (``/ftcost``, ``/ftcost-help``).
* :mod:`.client`: the discord.py client and its thin handlers.
* :mod:`.endpoints`: pointing discord.py at ``DISCORD_API_BASE_URL`` (a stand-in in tests).
* :mod:`.runner`: running the client next to Slack, and ``sync-commands``.

Nothing is imported here, so ``import adapters.discord.ids`` stays cheap.
"""
