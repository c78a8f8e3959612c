"""Two agents edit one file through hashlined: the second one's edit is
refused as stale, with the fresh tags, and its retry from them lands.

    hashlined serve &                       (in any directory: the workspace)
    PYTHONPATH=client/python/src python3 client/python/examples/quickstart.py

HASHLINE_TARGET overrides the server address (default 127.0.0.1:7420).
"""

import os

from hashline_client import Client, StaleRefError, edits

target = os.environ.get("HASHLINE_TARGET", "127.0.0.1:7420")
with Client(target, agent="alice") as alice, Client(target, agent="bob") as bob:
    alice.write("quickstart.py", 'def greet(name):\n    return "hello " + name\n')
    seen = bob.read("quickstart.py")  # version, lines (number, hash, content), text
    print(f"quickstart.py, version {seen.version}:\n{seen.text}\n")

    # Alice changes line 2.
    alice.edit("quickstart.py", [edits.replace("2:08", '    return f"hello {name}"')])

    # Bob edits line 2 with the tag he read before Alice's change.
    try:
        bob.edit("quickstart.py", [edits.replace(seen.lines[1], '    return "hi " + name')])
    except StaleRefError as e:  # nothing was written
        print(f"stale, nothing written:\n{e.message}\n")
        fresh = e.refs[0].current_line  # "2:37|...": the tag to retry from
        done = bob.edit("quickstart.py", [edits.replace(fresh, '    return f"hi {name}"')])
        print(f"retried from {fresh.split('|')[0]}, version {done.version}:\n{done.tagged_diff}")
