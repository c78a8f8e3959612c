"""A plaintext HTTP/2 server (h2c, as a gRPC client speaks to a proxy
without TLS) that answers every request as a stock proxy answers a host it
routes nowhere or a backend that is down: an HTTP error page, not gRPC.

Python's standard library has no HTTP/2 server, and the tests take no
dependency beyond grpcio and protobuf, so this speaks the little of
HTTP/2 the answer needs: the connection preface and SETTINGS both ways,
PING acknowledged, and for each request stream a HEADERS frame (":status"
and "content-type", HPACK literals without indexing) and a DATA frame that
ends the stream."""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
from http import HTTPStatus

_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
_DATA, _HEADERS, _SETTINGS, _PING, _GOAWAY = 0x0, 0x1, 0x4, 0x6, 0x7
_END_STREAM, _ACK, _END_HEADERS = 0x1, 0x1, 0x4
# HPACK static table indexes of the header names.
_STATUS_NAME, _CONTENT_TYPE_NAME = 8, 31


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _hpack_int(value: int, prefix_bits: int, first: int = 0) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out, value = [first | limit], value - limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes(out + [value])


def _literal(name_index: int, value: str) -> bytes:
    """A literal header field without indexing, its name from the static
    table, its value not Huffman-coded."""
    v = value.encode("ascii")
    return _hpack_int(name_index, 4) + _hpack_int(len(v), 7) + v


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        page: ProxyPage = self.server.page  # type: ignore[attr-defined]
        try:
            if self._read(sock, len(_PREFACE)) != _PREFACE:
                return
            sock.sendall(_frame(_SETTINGS, 0, 0))
            while True:
                head = self._read(sock, 9)
                length = int.from_bytes(head[:3], "big")
                kind, flags = head[3], head[4]
                stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
                payload = self._read(sock, length)
                if kind == _SETTINGS and not flags & _ACK:
                    sock.sendall(_frame(_SETTINGS, _ACK, 0))
                elif kind == _PING and not flags & _ACK:
                    sock.sendall(_frame(_PING, _ACK, 0, payload))
                elif kind == _HEADERS:
                    page._hit()
                    body = f"default backend - {HTTPStatus(page.status).phrase}".encode()
                    headers = _literal(_STATUS_NAME, str(page.status)) + _literal(_CONTENT_TYPE_NAME, "text/plain")
                    sock.sendall(_frame(_HEADERS, _END_HEADERS, stream, headers) + _frame(_DATA, _END_STREAM, stream, body))
                elif kind == _GOAWAY:
                    return
        except (ConnectionError, OSError):
            return

    @staticmethod
    def _read(sock: socket.socket, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("closed")
            buf += chunk
        return buf


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class ProxyPage:
    """Answers every request on 127.0.0.1 (addr) with the HTTP status
    status; hits() counts the requests. stop() closes it."""

    def __init__(self, status: int):
        self.status = status
        self._hits = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.page = self  # type: ignore[attr-defined]
        self.addr = "127.0.0.1:%d" % self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _hit(self) -> None:
        with self._lock:
            self._hits += 1

    def hits(self) -> int:
        with self._lock:
            return self._hits

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
