"""The reason enum shared with the proto, and the decoding of statuses."""

from __future__ import annotations

import os
import pickle
import re
import unittest

import grpc
from google.protobuf import any_pb2

from tests.server import REPO_ROOT

from hashline_client import (
    ErrorReason,
    HashlineError,
    StaleRefError,
    StaleRefReason,
    errors_pb,
    from_rpc_error,
    parse_reason,
    pb,
    reason_code,
    reason_name,
    stale_ref_reason,
)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _status(code: int, message: str, details) -> bytes:
    """A google.rpc.Status in its wire form."""
    out = b"\x08" + _varint(code)
    m = message.encode()
    out += b"\x12" + _varint(len(m)) + m
    for d in details:
        a = d if isinstance(d, any_pb2.Any) else any_pb2.Any(type_url="type.googleapis.com/" + d.DESCRIPTOR.full_name, value=d.SerializeToString())
        b = a.SerializeToString()
        out += b"\x1a" + _varint(len(b)) + b
    return out


class _Err(grpc.RpcError):
    def __init__(self, code, details, trailing):
        self._c, self._d, self._t = code, details, trailing

    def code(self):
        return self._c

    def details(self):
        return self._d

    def trailing_metadata(self):
        return self._t


class ReasonTest(unittest.TestCase):
    def test_every_reason_has_a_name_and_a_code_and_round_trips(self):
        values = [v for v in ErrorReason.values() if v != 0]
        self.assertGreater(len(values), 30)
        for v in values:
            name = reason_name(v)
            self.assertTrue(name and not name.startswith("ERROR_REASON_"), v)
            self.assertEqual(parse_reason(name), v)
            self.assertIsInstance(reason_code(v), grpc.StatusCode, name)
        self.assertEqual(reason_name(0), "")
        self.assertEqual(reason_name(10_000), "")
        self.assertEqual(parse_reason("A_REASON_FROM_THE_FUTURE"), 0)
        self.assertEqual(parse_reason("UNSPECIFIED"), 0)
        self.assertIsNone(reason_code(0))
        self.assertIsNone(reason_code(10_000))

    def test_codes_are_the_go_clients(self):
        # client/sentinels.go is generated from the same enum by the Go
        # client's test: each sentinel's comment names its reason and code.
        with open(os.path.join(REPO_ROOT, "client", "sentinels.go"), encoding="utf-8") as f:
            pairs = re.findall(r"matches reason (\w+), which comes with code (\w+)\.", f.read())
        self.assertGreater(len(pairs), 30)
        for reason, code in pairs:
            with self.subTest(reason):
                got = reason_code(parse_reason(reason))
                self.assertIsNotNone(got)
                self.assertEqual(got.name.replace("_", "").lower(), code.lower().replace("canceled", "cancelled"))
        self.assertEqual(len(pairs), len(ErrorReason.values()) - 1)

    def test_stale_ref_reason(self):
        self.assertEqual(stale_ref_reason(errors_pb.StaleRef(reason="CONFLICT")), StaleRefReason.Value("STALE_REF_REASON_CONFLICT"))
        self.assertEqual(stale_ref_reason(errors_pb.StaleRef(reason="NEWER")), 0)
        self.assertEqual(stale_ref_reason(errors_pb.StaleRef()), 0)


class DecodeTest(unittest.TestCase):
    def test_a_stale_ref_status_decodes_to_stale_ref_error(self):
        st = _status(10, "1 line(s) changed", [
            errors_pb.ErrorInfo(reason="STALE_REF", domain="hashline.v1", metadata={"currentVersion": "v2-abc"}),
            errors_pb.StaleRef(ref="2:08", line=2, current_line="2:37|x", fresh=["1:52|a", "2:37|x"], reason="CHANGED"),
            any_pb2.Any(type_url="type.googleapis.com/some.other.Detail", value=b"\x08\x01"),
            errors_pb.RetryInfo(),
        ])
        e = from_rpc_error(_Err(grpc.StatusCode.ABORTED, "1 line(s) changed", (("grpc-status-details-bin", st),)))
        self.assertIsInstance(e, StaleRefError)
        self.assertEqual(e.current_version, "v2-abc")
        self.assertEqual([r.current_line for r in e.refs], ["2:37|x"])
        self.assertEqual(list(e.refs[0].fresh), ["1:52|a", "2:37|x"])
        self.assertEqual(str(e), "hashline: STALE_REF (ABORTED): 1 line(s) changed")

    def test_other_details_and_a_newer_reason(self):
        delay = errors_pb.RetryInfo()
        delay.retry_delay.FromMilliseconds(1500)
        st = _status(8, "slow down", [
            errors_pb.ErrorInfo(reason="A_REASON_FROM_THE_FUTURE"), delay,
            errors_pb.EditError(edit_index=1, reason="INVALID_REF"),
            errors_pb.ChangeError(change_index=2, path="p"),
        ])
        e = from_rpc_error(_Err(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down", (("grpc-status-details-bin", st),)))
        self.assertNotIsInstance(e, StaleRefError)
        self.assertEqual(e.reason, "A_REASON_FROM_THE_FUTURE")
        self.assertEqual(e.reason_value, 0)
        self.assertAlmostEqual(e.retry_delay, 1.5)
        self.assertEqual(e.edits[0].edit_index, 1)
        self.assertEqual(e.changes[0].change_index, 2)

    def test_a_status_without_details_and_garbage_details(self):
        e = from_rpc_error(_Err(grpc.StatusCode.UNAVAILABLE, "connection refused", None))
        self.assertEqual((e.code, e.reason, e.message), (grpc.StatusCode.UNAVAILABLE, "", "connection refused"))
        self.assertEqual(str(e), "hashline: UNAVAILABLE: connection refused")
        e = from_rpc_error(_Err(grpc.StatusCode.INTERNAL, "x", (("grpc-status-details-bin", b"\x1a\xff\xff"),)))
        self.assertEqual((e.code, e.reason), (grpc.StatusCode.INTERNAL, ""))
        self.assertIsInstance(e, HashlineError)


class GeneratedTest(unittest.TestCase):
    def test_messages_name_their_real_module_and_pickle(self):
        # relimports.py rewrote the generated module names: a message class
        # names the module it is in, so pickle finds it.
        r = pb.ReadRequest(path="x", limit=3)
        self.assertEqual(type(r).__module__, pb.__name__)
        self.assertEqual(pickle.loads(pickle.dumps(r)), r)


if __name__ == "__main__":
    unittest.main()
