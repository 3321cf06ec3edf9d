"""Child run in the target interpreter (`python -I _dists_child.py [NAME...]`): one JSON line.

Without names: every installed distribution, name -> version (first on sys.path wins, as for
import). With names: also the absolute paths of each one's files (from its RECORD), for backup.
Imports nothing from tfdoctor: the target may be another Python.
"""

import json
import re
import sys
from importlib import metadata


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def main(names):
    wanted = {canonical(n) for n in names}
    dists, files, broken = {}, {}, []
    for dist in metadata.distributions():
        name = canonical(dist.metadata["Name"] or "")
        if not name or not dist.version:
            # A .dist-info without a name or version (its METADATA not yet written, or lost):
            # pip's resolver dies on it with "TypeError: expected string or bytes-like object".
            broken.append(str(getattr(dist, "_path", "") or name or "?"))
            continue
        if name in dists:
            continue
        dists[name] = dist.version
        if name in wanted:
            paths = [str(dist.locate_file(p)) for p in (dist.files or ())]
            files[name] = {"version": dist.version, "paths": paths}
    print(json.dumps({"dists": dists, "files": files, "broken": broken}))


if __name__ == "__main__":
    main(sys.argv[1:])
