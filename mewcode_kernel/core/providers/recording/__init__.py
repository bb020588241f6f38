"""Record and replay of model traffic at the HTTP transport, so a replay goes
through the same SDK code as a live call: the cassette format (``cassette``),
the recording and replaying httpx transports (``transports``) and the offline
``ReplayProvider`` (``replay``). The format is described in docs/cassettes.md."""
