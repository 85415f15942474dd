"""More Keras callbacks: `RemoteMonitor`. Layer L5."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import warnings

import numpy as np

from jaxtape._src.keras.callbacks import Callback


def _plain(value):
    """A JSON-ready scalar: NumPy scalars/arrays and Tensors via `.item()`."""
    numpy = getattr(value, "numpy", None)
    if numpy is not None and not isinstance(value, np.ndarray):
        value = numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return value.item()
    return value


class RemoteMonitor(Callback):
    """Keras's `RemoteMonitor`: POSTs `{"epoch": epoch, **logs}` to `root + path`
    at the end of every epoch.

    Without `send_as_json` the JSON string is sent in a form field `field`
    (`application/x-www-form-urlencoded`), as Keras's `requests.post(url,
    {field: json})`; with it the body is the JSON itself. The request goes
    through the standard library (`urllib`), so jaxtape needs no `requests`.
    An unreachable server gives Keras's warning; an HTTP error status is
    ignored, as `requests` ignores it.

    Args:
      root: The root URL of the server.
      path: The path relative to `root` the events are sent to.
      field: The form field holding the JSON (when `send_as_json=False`).
      headers: Optional extra HTTP headers (a dict).
      send_as_json: Send the body as `application/json`.
    """

    def __init__(
        self,
        root="http://localhost:9000",
        path="/publish/epoch/end/",
        field="data",
        headers=None,
        send_as_json=False,
    ):
        super().__init__()
        self.root = root
        self.path = path
        self.field = field
        self.headers = headers
        self.send_as_json = send_as_json

    def on_epoch_end(self, epoch, logs=None):
        send = {"epoch": epoch}
        for key, value in (logs or {}).items():
            send[key] = _plain(value)
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(send).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(
            self.root + self.path, data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except urllib.error.HTTPError:
            pass  # a reply with an error status: `requests` does not raise either
        except (urllib.error.URLError, OSError, ValueError):
            warnings.warn(
                f"Could not reach RemoteMonitor root server at {self.root}",
                stacklevel=2,
            )
