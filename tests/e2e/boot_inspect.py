"""boot_inspect.py DOC: a kiln user data document as YAML sees it (PyYAML's
safe_load): its top-level keys, then each write_files entry in base64 as its
path and the bytes it decodes to (Python's repr). tests/e2e/boot.sh compares
the output exactly: an injected key or a changed byte shows."""
import base64
import sys

import yaml

doc = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
print("keys:", sorted(doc))
for f in doc["write_files"]:
    if f.get("encoding") == "b64":
        print(f["path"], repr(base64.b64decode(f["content"], validate=True)))
