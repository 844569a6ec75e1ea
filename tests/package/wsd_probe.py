#!/usr/bin/env python3
"""WS-Discovery as Windows does it, on one interface: a multicast Probe for
wsdp:Device to 239.255.255.250:3702 (and a Resolve when the ProbeMatch has no
XAddrs), then a WS-Transfer Get to the XAddr of
the ProbeMatch, whose metadata names the computer (pub:Computer,
"NAME/Workgroup:WORKGROUP"). Prints the ProbeMatch endpoint, the XAddr and
the pub:Computer value; exit 1 if no device answers within the timeout.

usage: wsd_probe.py [--source ADDR] [--timeout SECONDS]
Meant to run in a network namespace the test made: the Probe goes out on
the interface that holds --source (default 127.0.0.1), nowhere else.
"""
import argparse
import re
import socket
import struct
import sys
import time
import urllib.request
import uuid

MCAST = ("239.255.255.250", 3702)
NS = {
    "soap": "http://www.w3.org/2003/05/soap-envelope",
    "wsa": "http://schemas.xmlsoap.org/ws/2004/08/addressing",
    "wsd": "http://schemas.xmlsoap.org/ws/2005/04/discovery",
    "wsdp": "http://schemas.xmlsoap.org/ws/2006/02/devprof",
}
ENVELOPE = ('<?xml version="1.0" encoding="utf-8"?>'
            '<soap:Envelope xmlns:soap="{soap}" xmlns:wsa="{wsa}" xmlns:wsd="{wsd}" xmlns:wsdp="{wsdp}">'
            '<soap:Header><wsa:To>{to}</wsa:To><wsa:Action>{action}</wsa:Action>'
            '<wsa:MessageID>urn:uuid:{mid}</wsa:MessageID>{extra}</soap:Header>'
            '<soap:Body>{body}</soap:Body></soap:Envelope>')


def envelope(to, action, body, extra=""):
    return ENVELOPE.format(to=to, action=action, mid=uuid.uuid4(), body=body, extra=extra, **NS).encode()


def multicast(source, timeout, action, body, answer):
    """Sends a discovery message until a datagram naming ANSWER comes back."""
    msg = envelope("urn:schemas-xmlsoap-org:ws:2005:04:discovery",
                   "http://schemas.xmlsoap.org/ws/2005/04/discovery/" + action, body)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((source, 0))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(source))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, struct.pack("b", 1))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s.sendto(msg, MCAST)
        s.settimeout(1.0)
        try:
            data, _ = s.recvfrom(65536)
        except socket.timeout:
            continue
        text = data.decode("utf-8", "replace")
        if answer in text:
            return text
    return None


def probe(source, timeout):
    return multicast(source, timeout, "Probe", "<wsd:Probe><wsd:Types>wsdp:Device</wsd:Types></wsd:Probe>",
                     "ProbeMatches")


def resolve(source, timeout, endpoint):
    """The XAddrs of ENDPOINT: a ProbeMatch may leave them out (wsdd does)."""
    return multicast(source, timeout, "Resolve",
                     "<wsd:Resolve><wsa:EndpointReference><wsa:Address>%s</wsa:Address>"
                     "</wsa:EndpointReference></wsd:Resolve>" % endpoint, "ResolveMatches")


def tag(text, name):
    m = re.search(r"<[\w]+:%s[^>]*>\s*([^<]*?)\s*</[\w]+:%s>" % (name, name), text)
    return m.group(1) if m else None


def get_metadata(xaddr, endpoint):
    msg = envelope(endpoint, "http://schemas.xmlsoap.org/ws/2004/09/transfer/Get", "",
                   "<wsa:ReplyTo><wsa:Address>http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous"
                   "</wsa:Address></wsa:ReplyTo>")
    req = urllib.request.Request(xaddr, data=msg, headers={"Content-Type": "application/soap+xml"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.read().decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", default="127.0.0.1")
    ap.add_argument("--timeout", type=float, default=15)
    a = ap.parse_args()
    match = probe(a.source, a.timeout)
    if match is None:
        print("no ProbeMatch within %.0f s" % a.timeout)
        return 1
    endpoint = tag(match, "Address")
    xaddr = (tag(match, "XAddrs") or "").split()
    if not xaddr and endpoint:
        xaddr = (tag(resolve(a.source, a.timeout, endpoint) or "", "XAddrs") or "").split()
    print("endpoint:", endpoint)
    print("xaddrs:", " ".join(xaddr))
    if not xaddr:
        return 1
    meta = get_metadata(xaddr[0], endpoint)
    computer = tag(meta, "Computer")
    print("computer:", computer)
    return 0 if computer else 1


if __name__ == "__main__":
    sys.exit(main())
