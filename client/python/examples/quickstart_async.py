"""The quickstart with asyncio (hashline_client.aio): Alice writes three
files at once over one client, Bob's edit of one she changed since he read
it is refused as stale with the fresh tags, his retry from them lands, and
Alice's watch saw every change.

    hashlined serve &                       (in any directory: the workspace)
    PYTHONPATH=client/python/src python3 client/python/examples/quickstart_async.py

HASHLINE_TARGET overrides the server address (default 127.0.0.1:7420).
"""

import asyncio
import os

from hashline_client import StaleRefError, WatchEventKind, edits
from hashline_client.aio import AsyncClient


async def main(target: str) -> None:
    async with AsyncClient(target, agent="alice") as alice, AsyncClient(target, agent="bob") as bob:
        watch = alice.watch("async-demo")  # an async iterator of changes
        await watch.wait_ready()

        # Three calls in flight at once on one client.
        names = [f"async-demo/{n}.txt" for n in ("one", "two", "three")]
        await asyncio.gather(*(alice.write(name, f"{name}\n") for name in names))

        seen = await bob.read(names[1])
        mine = await alice.read(names[1])
        await alice.edit(names[1], [edits.replace(mine.lines[0], "two, by alice")])
        try:
            await bob.edit(names[1], [edits.replace(seen.lines[0], "two, by bob")])
        except StaleRefError as e:  # nothing was written
            fresh = e.refs[0].current_line  # the tag to retry from
            print(f"stale, retry from {fresh}")
            await bob.edit(names[1], [edits.replace(fresh, "two, by bob")])

        async for f in bob.grep("two", path="async-demo"):  # one GrepFile per file
            print(f.path, [line.content for line in f.lines])

        changes = []
        async for ev in watch:
            changes.append((ev.path, WatchEventKind.Name(ev.kind), ev.agent))
            if len(changes) == 5:
                watch.cancel()  # ends the loop
        for change in sorted(changes):
            print(*change)


if __name__ == "__main__":
    asyncio.run(main(os.environ.get("HASHLINE_TARGET", "127.0.0.1:7420")))
