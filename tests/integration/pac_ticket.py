#!/usr/bin/python3
"""Service tickets with a PAC, made without a domain controller.

impacket's ticketer (python3-impacket's example script) writes a ticket
for SPN sealed with the service's key from a keytab and a PAC with
KERB_VALIDATION_INFO (user RID, domain SID, group RIDs) signed with the
same key: what a Windows DC would hand a domain user, minus the DC. The
ccache lands in OUTDIR as USER.ccache (pac_client.py logs on with it).

usage: pac_ticket.py MODE OUTDIR ticketer-arguments...
MODE  good              a ticket as a DC makes it
      bad-signature     the PAC's server checksum does not verify
      bad-group-count   LOGON_INFO's GroupCount larger than its array (signed anyway)
"""
import os
import sys

TICKETER = "/usr/share/doc/python3-impacket/examples/ticketer.py"
GROUP_COUNT_OFFSET = 16 + 112  # NDR headers + KERB_VALIDATION_INFO.GroupCount


def corrupt_checksums():
    # Every keyed checksum ticketer computes (server and KDC signatures)
    # comes out with its first byte flipped; the ticket's own encryption
    # does not go through these.
    from impacket.krb5 import crypto
    for cls in set(crypto._checksum_table.values()):
        original = cls.checksum

        def flipped(key, keyusage, text, original=original):
            good = original(key, keyusage, text)
            return bytes([good[0] ^ 0xFF]) + good[1:]

        cls.checksum = staticmethod(flipped)


def lying_group_count(ticketer_class):
    # After ticketer's last re-encoding of LOGON_INFO, before it signs.
    from impacket.krb5.pac import PAC_LOGON_INFO
    original = ticketer_class.signEncryptTicket

    def patched(self, kdc_rep, enc_rep_part, enc_ticket_part, infos):
        info = bytearray(infos[PAC_LOGON_INFO])
        info[GROUP_COUNT_OFFSET:GROUP_COUNT_OFFSET + 4] = (0x10000).to_bytes(4, "little")
        infos[PAC_LOGON_INFO] = bytes(info)
        return original(self, kdc_rep, enc_rep_part, enc_ticket_part, infos)

    ticketer_class.signEncryptTicket = patched


def main():
    mode, outdir, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    source = open(TICKETER).read()
    split = source.index("if __name__ == '__main__':")
    ns = {"__name__": "ticketer", "__file__": TICKETER}
    exec(compile(source[:split], TICKETER, "exec"), ns)
    if mode == "bad-signature":
        corrupt_checksums()
    elif mode == "bad-group-count":
        lying_group_count(ns["TICKETER"])
    elif mode != "good":
        sys.exit(f"unknown mode {mode}")
    os.chdir(outdir)
    sys.argv = [TICKETER] + args
    ns["__name__"] = "__main__"
    exec(compile(source[split:], TICKETER, "exec"), ns)
    target = args[-1]
    if not os.path.exists(f"{target}.ccache"):
        sys.exit(f"ticketer wrote no {target}.ccache")


if __name__ == "__main__":
    main()
